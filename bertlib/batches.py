"""Mini-batches: the loader over padded pretraining data, batches grouped by length, and
dynamic padding (each mini-batch cut down to its longest pair).

Shapes: B = mini-batch, T = max_len, P = prediction slots per pair, N = examples.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Protocol

import torch
from jaxtyping import Int
from torch import Tensor
from torch.utils.data import DataLoader, Sampler, TensorDataset

from bertlib.model import checked
from bertlib.support.checks import check_positive_int
from bertlib.support.rng import make_generator


class Tensors(Protocol):
    """Data as equally long tensors: a :class:`PretrainBatch`, or a fine-tuning task's data."""

    def tensors(self) -> tuple[torch.Tensor, ...]: ...


class LengthGroupedSampler(Sampler[list[int]]):
    """Mini-batches of examples of similar length, in random order (Hugging Face's
    ``group_by_length``). Each pass shuffles all examples, cuts the order into chunks of
    ``batch_size * chunk_batches``, sorts each chunk by length and cuts it into batches (the
    last of a chunk may be smaller), then shuffles the batches: a batch pads little to its
    longest pair, while which pairs meet in a batch and the order of the batches stay random."""

    @checked
    def __init__(self, lengths: Int[Tensor, " N"], batch_size: int, *, seed: int,
                 chunk_batches: int = 50):
        check_positive_int("batch_size", batch_size)
        check_positive_int("chunk_batches", chunk_batches)
        self.lengths = lengths
        self.batch_size = batch_size
        self.chunk = batch_size * chunk_batches
        self.generator = make_generator(seed=seed)

    def __len__(self) -> int:
        full, rest = divmod(len(self.lengths), self.chunk)  # a chunk holds whole batches
        return full * (self.chunk // self.batch_size) + math.ceil(rest / self.batch_size)

    def __iter__(self) -> Iterator[list[int]]:
        order = torch.randperm(len(self.lengths), generator=self.generator)
        batches = []
        for chunk in order.split(self.chunk):
            # stable: equal lengths keep their shuffled order
            chunk = chunk[self.lengths[chunk].argsort(stable=True)]
            batches += chunk.split(self.batch_size)
        for i in torch.randperm(len(batches), generator=self.generator).tolist():
            yield batches[i].tolist()


def make_loader(data: Tensors, batch_size: int, *, seed: int, shuffle: bool = True,
                lengths: torch.Tensor | None = None) -> DataLoader:
    """Mini-batches of ``data.tensors()`` (the seven PretrainBatch tensors, say), shuffled by a
    generator seeded with ``seed`` (the same seed, the same batches). With ``lengths`` (one per
    example, such as ``data.valid_lens``) each mini-batch holds shuffled examples of similar
    length (:class:`LengthGroupedSampler`), which is what makes :func:`trim_padding` pay."""
    check_positive_int("batch_size", batch_size)
    if len(data.tensors()[0]) == 0:  # a held-out split that came out empty, say
        raise ValueError(f"data must hold at least one example; got an empty {type(data).__name__}")
    # A DataLoader draws a seed for its workers on every pass, from torch's global generator
    # unless it is given one: with a sampler, the sampler's own draws are not enough.
    if lengths is not None:
        return DataLoader(TensorDataset(*data.tensors()), generator=make_generator(seed=seed),
                          batch_sampler=LengthGroupedSampler(lengths, batch_size, seed=seed))
    # <listing: loader>
    return DataLoader(TensorDataset(*data.tensors()), batch_size=batch_size, shuffle=shuffle,
                      generator=make_generator(seed=seed))
    # </listing>


def trim_padding(batch: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Dynamic padding: a mini-batch's seven tensors cut down to its longest pair and its last
    used prediction slot.

    tokens, segments: (B, T) -> (B, T') with T' = the largest valid length;
    pred_positions, mlm_weights, mlm_labels: (B, P) -> (B, P') with P' = one past the last
    slot with a non-zero weight; valid_lens, nsp_labels: (B,) unchanged.

    The losses do not change: what is cut is padding, which attention masks out and the MLM loss
    weighs 0, and the positions kept keep their position embeddings. Only the work shrinks.
    """
    tokens, segments, valid_lens, pred_positions, weights, labels, nsp_labels = batch
    # <listing: trim>
    T = int(valid_lens.max())
    used = (weights > 0).any(dim=0).nonzero()  # (slots used anywhere in the batch, 1)
    P = int(used.max()) + 1 if len(used) else 1  # keep one slot: the loss needs a column
    return [tokens[:, :T], segments[:, :T], valid_lens, pred_positions[:, :P],
            weights[:, :P], labels[:, :P], nsp_labels]
    # </listing>
