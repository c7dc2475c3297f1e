"""How much may an input ask for? Sizes are refused from arithmetic before anything is
allocated: a typo such as ``max_len=10**12`` or ``num_classes=10**12`` would otherwise reach the
allocator and fail deep inside torch, or take the machine down with it. Each refusal says how
much memory the request would need and how much is allowed.
"""

from __future__ import annotations


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
