"""Random draws from an explicit ``generator=`` or ``seed=``, never torch's global generator:
a notebook cell draws the same however many cells ran before it."""

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
    """A block whose draws from torch's global generators (CPU and GPUs; weight initialisers
    and dropout use no other) are undone after it, seeded with ``seed`` inside if given."""
    if seed is not None:
        check_seed("seed", seed)
    gpus = list(range(torch.cuda.device_count())) if torch.cuda.is_available() else []
    with torch.random.fork_rng(devices=gpus):
        if seed is not None:
            torch.manual_seed(int(seed))  # process-state: inside fork_rng, undone after
        yield
