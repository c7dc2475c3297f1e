"""Where random draws come from: an explicit ``torch.Generator``, never torch's global one.

Every function of bertlib that draws takes ``generator=`` or ``seed=``, so a notebook cell gives
the same draw however many other cells ran before it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from bertlib.support.checks import check_instance, check_seed


def make_generator(generator: torch.Generator | None = None,
                   seed: int | None = None) -> torch.Generator:
    """The given generator, or a new one seeded with ``seed``; exactly one must be given."""
    if (generator is None) == (seed is None):
        raise ValueError("pass exactly one of generator= (a torch.Generator) or seed= (an int)")
    if generator is not None:
        check_instance("generator", generator, torch.Generator, "a torch.Generator")
        return generator
    check_seed("seed", seed)
    return torch.Generator().manual_seed(int(seed))


@contextlib.contextmanager
def own_global_rng(seed: int | None = None) -> Iterator[None]:
    """A block whose draws from torch's global generators (CPU and every GPU) are undone after
    it: PyTorch's weight initialisers and dropout can only draw from those, and a library must
    not move the caller's random stream. With ``seed``, the CPU generator is seeded with it
    inside the block, so what the block draws depends on ``seed`` alone."""
    if seed is not None:
        check_seed("seed", seed)
    gpus = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=gpus):
        if seed is not None:
            torch.manual_seed(int(seed))  # process-state: inside fork_rng, undone after
        yield
