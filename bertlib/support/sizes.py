"""How much may an input ask for? Sizes are refused from arithmetic before anything is
allocated: a typo such as ``max_len=10**12`` would otherwise reach the allocator and fail deep
inside torch, or take the machine down with it.
"""

from __future__ import annotations


def check_memory(what: str, need: int, limit: int, advice: str) -> None:
    """Refuse an allocation of ``need`` bytes above ``limit`` before it is attempted."""
    if need > limit:
        raise ValueError(f"{what} would need {need / 2**30:,.1f} GiB of memory (at most "
                         f"{limit / 2**30:.0f} GiB): {advice}")
