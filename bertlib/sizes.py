"""How much may an input ask for? Sizes are refused from arithmetic before anything is
allocated: a typo such as ``max_len=10**12`` or ``num_classes=10**12`` would otherwise reach the
allocator and fail deep inside torch, or take the machine down with it. Each refusal says how
much memory the request would need and how much is allowed.
"""

from __future__ import annotations

import contextlib
import os

import torch

from bertlib.checks import check_positive_int


def check_memory(what: str, need: int, limit: int, advice: str) -> None:
    """Refuse an allocation of ``need`` bytes above ``limit`` before it is attempted, from the
    arithmetic of its sizes, as the attention guard does."""
    if need > limit:
        raise ValueError(f"{what} would need {need / 2**30:,.1f} GiB of memory (at most "
                         f"{limit / 2**30:.0f} GiB): {advice}")


# The most memory one result may need: past this a typo (num_classes=10**12, a 10**6-token
# span search) would reach the allocator and fail there, or take the machine down with it.
RESULT_MAX_BYTES = 2**30


def check_result_size(what: str, numel: int, element_size: int = 4) -> None:
    """Refuse, from arithmetic alone, a tensor of ``numel`` elements past
    :data:`RESULT_MAX_BYTES`; ``what`` names it and the sizes it comes from."""
    check_memory(what, numel * element_size, RESULT_MAX_BYTES, "ask for a smaller one")


# The parameters alone (no gradients, no optimizer state) of what bertlib builds must fit in
# this and in the machine's memory.
PARAMS_MAX_BYTES = 16 * 2**30


def check_num_parameters(what: str, count: int) -> None:
    """Refuse, from arithmetic before anything is allocated, a module of ``count`` parameters
    (in torch's default dtype) larger than PARAMS_MAX_BYTES or the machine's memory."""
    dtype, limit = torch.get_default_dtype(), PARAMS_MAX_BYTES
    with contextlib.suppress(AttributeError, ValueError, OSError):  # no sysconf on Windows
        limit = min(limit, os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    if count * dtype.itemsize > limit:
        raise ValueError(f"{what} would hold {count:,} parameters, "
                         f"{count * dtype.itemsize / 2**30:,.1f} GiB as {dtype}; at most "
                         f"{limit / 2**30:.1f} GiB fits here: ask for a smaller size")


MAX_BLOCKS = 1000  # BERT-large has 24; a million would take hours to build, one at a time


def check_sizes(sizes: dict[str, int]) -> None:
    """Every size a positive integer, and ``num_blks`` (when given) at most MAX_BLOCKS."""
    for name, value in sizes.items():
        check_positive_int(name, value)
    if sizes.get("num_blks", 0) > MAX_BLOCKS:
        raise ValueError(f"num_blks must be at most {MAX_BLOCKS}; got {sizes['num_blks']}")
