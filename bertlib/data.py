"""Pretraining data: next-sentence pairs, MLM examples and the padded tensors they fill."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from bertlib.inputs import get_tokens_and_segments, truncate_pair
from bertlib.masking import mask_tokens
from bertlib.support.checks import check_instance, check_int_in, check_positive_int
from bertlib.support.rng import make_generator
from bertlib.support.sizes import check_memory
from bertlib.text.vocab import SpecialTokens, Vocab, check_word_paragraphs

Sentence = list[str]
Paragraph = list[Sentence]

IS_NEXT, NOT_NEXT = 1, 0  # bertlib's NSP labels everywhere (Hugging Face uses 0 for IsNext)
# The padded tensors of one call, with the Python lists they are built from (int64 ids, and
# 8-byte pointers in the lists): refused above this from arithmetic, before anything is made.
DATA_MAX_BYTES = 2 << 30


@dataclass
class NSPPair:
    tokens: list[str]
    segments: list[int]
    is_next: int  # IS_NEXT or NOT_NEXT


@dataclass
class NSPPairs:
    """Pairs built from a corpus, with a count of those that did not fit ``max_len``."""

    pairs: list[NSPPair] = field(default_factory=list)
    truncated: int = 0
    dropped: int = 0


def _randint(high: int, g: torch.Generator) -> int:
    return int(torch.randint(high, (1,), generator=g))


def get_next_sentence(
    sentence: Sentence, next_sentence: Sentence, paragraphs: Sequence[Paragraph],
    paragraph_idx: int, g: torch.Generator,
) -> tuple[Sentence, Sentence, int]:
    """Keep the true next sentence with probability 0.5; otherwise swap in a random sentence
    from a *different* paragraph, so a NotNext pair is never accidentally consecutive."""
    if torch.rand(1, generator=g).item() < 0.5:
        return sentence, next_sentence, IS_NEXT
    other = _randint(len(paragraphs) - 1, g)
    other += other >= paragraph_idx  # skip the current paragraph
    paragraph = paragraphs[other]
    return sentence, paragraph[_randint(len(paragraph), g)], NOT_NEXT


def make_nsp_pairs(paragraphs: Sequence[Paragraph], max_len: int, *, overflow: str = "truncate",
                   specials: SpecialTokens | None = None, generator: torch.Generator | None = None,
                   seed: int | None = None) -> NSPPairs:
    """One pair per consecutive sentence pair of every paragraph, half of them IsNext.

    ``paragraphs``: a list of paragraphs, each a list of tokenized sentences. A pair longer than
    ``max_len`` (with ``<cls>`` and two ``<sep>``) is truncated (``overflow="truncate"``) or
    dropped (``"drop"``); either way it is counted in the result. A pair with an empty sentence
    is skipped. ``specials`` gives the spelling of ``<cls>``/``<sep>`` (default: the chapter's).
    Paragraphs that give no pair at all are refused with the reason.
    """
    if overflow not in ("truncate", "drop"):
        raise ValueError(f"overflow must be 'truncate' or 'drop'; got {overflow!r}")
    check_word_paragraphs("paragraphs", paragraphs)
    check_int_in("max_len", max_len, 5, why=" (<cls> a <sep> b <sep>)")
    if len(paragraphs) < 2 or not all(paragraphs):  # a NotNext partner comes from another one
        raise ValueError("paragraphs must hold at least 2 paragraphs, each with a sentence, so "
                         "that NotNext pairs can take a sentence from another one; got "
                         f"{len(paragraphs)} paragraphs of {[len(p) for p in paragraphs][:20]}")
    g = make_generator(generator, seed)
    specials = specials or SpecialTokens()
    result = NSPPairs()
    # <listing: pairs>
    for p_idx, paragraph in enumerate(paragraphs):
        for i in range(len(paragraph) - 1):
            a, b, is_next = get_next_sentence(paragraph[i], paragraph[i + 1], paragraphs, p_idx, g)
            if not a or not b:
                continue
            if len(a) + len(b) + 3 > max_len:
                if overflow == "drop":
                    result.dropped += 1
                    continue
                a, b = truncate_pair(a, b, max_len - 3)
                result.truncated += 1
            tokens, segments = get_tokens_and_segments(a, b, cls_token=specials.cls,
                                                       sep_token=specials.sep)
            result.pairs.append(NSPPair(tokens, segments, is_next))
    # </listing>
    if not result.pairs:  # say why
        why = "every pair of consecutive sentences holds an empty sentence"
        if all(len(paragraph) < 2 for paragraph in paragraphs):
            why = ("every paragraph has one sentence, and a pair needs two consecutive sentences "
                   "of one paragraph (is the text split into paragraphs by blank lines?)")
        if result.dropped:
            why = (f"all {result.dropped} pairs are longer than max_len and overflow='drop'; "
                   "raise max_len or use overflow='truncate'")
        raise ValueError(f"paragraphs give no NSP pair: {why}")
    return result


@dataclass
class PretrainExample:
    """One sequence ready for MLM + NSP, unpadded."""

    token_ids: list[int]
    segments: list[int]
    pred_positions: list[int]
    mlm_labels: list[int]
    is_next: int


def make_pretrain_examples(pairs: NSPPairs | Sequence[NSPPair], vocab: Vocab, *,
                           mask_ratio: float = 0.15, generator: torch.Generator | None = None,
                           seed: int | None = None) -> list[PretrainExample]:
    """Apply MLM masking to each NSP pair (``pairs``: ``make_nsp_pairs(...)`` or its ``.pairs``)."""
    pairs = pairs.pairs if isinstance(pairs, NSPPairs) else pairs
    g = make_generator(generator, seed)
    examples = []
    for pair in pairs:
        m = mask_tokens(vocab[pair.tokens], vocab, mask_ratio=mask_ratio, generator=g)
        examples.append(PretrainExample(m.masked_ids, pair.segments, m.positions, m.labels,
                                        pair.is_next))
    return examples


@dataclass
class PretrainBatch:
    """Padded tensors for a batch of N sequences (P = prediction slots per sequence)."""

    tokens: torch.Tensor  # (N, max_len) long, padded with <pad>
    segments: torch.Tensor  # (N, max_len) long, padded with 0
    valid_lens: torch.Tensor  # (N,) long
    pred_positions: torch.Tensor  # (N, P) long, padded with 0
    mlm_weights: torch.Tensor  # (N, P) float, 1 for real slots, 0 for padding
    mlm_labels: torch.Tensor  # (N, P) long, padded with 0
    nsp_labels: torch.Tensor  # (N,) long, 1 = IsNext

    def __len__(self) -> int:
        return self.tokens.shape[0]

    def __getitem__(self, idx) -> PretrainBatch:
        """The examples ``idx`` picks (a slice, a list or tensor of indices or of bools)."""
        return PretrainBatch(*(t[idx] for t in self.tensors()))

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return (self.tokens, self.segments, self.valid_lens, self.pred_positions,
                self.mlm_weights, self.mlm_labels, self.nsp_labels)


def padded_bytes(num_examples: int, max_len: int, max_preds: int) -> int:
    """The bytes :func:`pad_bert_inputs` needs: int64 tensors (two of max_len, two of max_preds),
    float32 weights, and the Python lists (8-byte pointers) that fill one tensor at a time."""
    return num_examples * (16 * max_len + 20 * max_preds + 16 + 8 * max_len + 56)


def pad_bert_inputs(examples: Sequence[PretrainExample], max_len: int, vocab: Vocab,
                    max_preds: int | None = None) -> PretrainBatch:
    """Pad every example to ``max_len`` tokens and ``max_preds`` prediction slots
    (default ``round(0.15 * max_len)``)."""
    check_positive_int("max_len", max_len)
    max_preds = max(1, round(0.15 * max_len)) if max_preds is None else max_preds
    check_int_in("max_preds", max_preds, 1, max_len, f" (at most one per token, max_len={max_len})")
    check_memory(f"padding {len(examples):,} examples to max_len={max_len:,} and "
                 f"max_preds={max_preds:,}", padded_bytes(len(examples), max_len, max_preds),
                 DATA_MAX_BYTES, "use fewer examples or a smaller max_len")
    if not examples:  # say so, rather than give tensors of no shape
        raise ValueError("examples must hold at least one PretrainExample; got an empty list")
    for i, ex in enumerate(examples):  # a learner's hand-made example is named
        if len(ex.token_ids) > max_len or len(ex.pred_positions) > max_preds:
            raise ValueError(f"example {i} has {len(ex.token_ids)} tokens and "
                             f"{len(ex.pred_positions)} prediction positions; max_len is "
                             f"{max_len} and max_preds is {max_preds}")
        if len(ex.mlm_labels) != len(ex.pred_positions) or \
                not all(0 <= p < len(ex.token_ids) for p in ex.pred_positions):
            raise ValueError(f"example {i}'s pred_positions must point at its "
                             f"{len(ex.token_ids)} tokens, with one of mlm_labels each; got "
                             f"pred_positions {ex.pred_positions}, mlm_labels {ex.mlm_labels}")
    # <listing: padding>
    def pad(values: list, width: int, fill=0) -> list:
        return list(values) + [fill] * (width - len(values))

    return PretrainBatch(
        tokens=torch.tensor([pad(ex.token_ids, max_len, vocab.pad_id) for ex in examples]),
        segments=torch.tensor([pad(ex.segments, max_len) for ex in examples]),
        valid_lens=torch.tensor([len(ex.token_ids) for ex in examples]),
        pred_positions=torch.tensor([pad(ex.pred_positions, max_preds) for ex in examples]),
        # 1 for a real prediction slot, 0 for padding: padded slots add nothing to the loss.
        mlm_weights=torch.tensor([pad([1.0] * len(ex.pred_positions), max_preds, 0.0)
                                  for ex in examples]),
        mlm_labels=torch.tensor([pad(ex.mlm_labels, max_preds) for ex in examples]),
        nsp_labels=torch.tensor([ex.is_next for ex in examples]),
    )
    # </listing>


def make_pretrain_data(paragraphs: Sequence[list[list[str]]], vocab: Vocab, max_len: int, *,
                       seed: int, rounds: int = 1, max_preds: int | None = None,
                       groups: Sequence[str] | None = None) -> PretrainBatch:
    """NSP pairs + MLM masking over tokenized ``paragraphs``, padded to ``max_len`` (longer
    pairs truncated). ``rounds`` > 1 repeats pairing and masking with fresh draws, so that a
    sentence is seen with other partners and masked positions ("dynamic masking"). ``groups``
    (one label per paragraph, such as its language) draws each NotNext partner from the same
    group: in a bilingual corpus a partner in the other language would let NSP be solved by
    telling languages apart."""
    check_positive_int("rounds", rounds)
    check_word_paragraphs("paragraphs", paragraphs)
    # At most one example per consecutive pair and round: the padded tensors' size is known
    # before any is made (their unpadded lists cost about as much again; see corpus.py).
    most = rounds * sum(max(len(paragraph) - 1, 0) for paragraph in paragraphs)
    check_memory(f"{most:,} examples ({rounds} rounds) of max_len={max_len:,}",
                 padded_bytes(most, max_len, max_preds or max(1, round(0.15 * max_len))),
                 DATA_MAX_BYTES, "use fewer rounds, a smaller max_len or part of the corpus")
    groups = [""] * len(paragraphs) if groups is None else groups
    if isinstance(groups, str) or len(groups) != len(paragraphs):
        raise ValueError(f"groups must give one label per paragraph: {len(paragraphs)} "
                         f"paragraphs; got {groups!r:.80}")
    by_group: dict[str, list[Paragraph]] = {}
    for paragraph, group in zip(paragraphs, groups, strict=True):
        by_group.setdefault(group, []).append(paragraph)
    g = make_generator(seed=seed)
    examples = []
    for _ in range(rounds):
        for group, members in (by_group or {"": []}).items():  # none: make_nsp_pairs says so
            try:
                pairs = make_nsp_pairs(members, max_len, generator=g)
            except ValueError as err:  # say which group, when there are groups
                raise ValueError(f"group {group!r}: {err}" if group else str(err)) from None
            examples += make_pretrain_examples(pairs, vocab, generator=g)
    return pad_bert_inputs(examples, max_len, vocab, max_preds)


def check_nonempty_batch(data: PretrainBatch) -> None:
    check_instance("data", data, PretrainBatch, "a PretrainBatch (from make_pretrain_data or "
                   "pad_bert_inputs)")
    if len(data) == 0:
        raise ValueError("data must hold at least one example; got an empty PretrainBatch")
