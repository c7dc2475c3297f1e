"""Pretraining data: next-sentence pairs, MLM examples and the padded tensors they fill."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

from bertlib.inputs import check_segment_ids, get_tokens_and_segments, truncate_pair
from bertlib.masking import mask_tokens
from bertlib.support.checks import (
    check_instance,
    check_int_in,
    check_positions_in_text,
    check_positive_int,
    check_range,
    check_sized,
)
from bertlib.support.rng import make_generator
from bertlib.support.sizes import check_memory
from bertlib.text.vocab import (
    SpecialTokens,
    Vocab,
    check_int_list,
    check_word_paragraphs,
    check_word_tokens,
)

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

    def __post_init__(self) -> None:
        check_word_tokens("tokens", self.tokens)
        _check_label("is_next", self.is_next)
        _check_same_length("segments", self.segments, "tokens", self.tokens)
        check_segment_ids("segments", self.segments)


def _check_label(name: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or value not in (IS_NEXT, NOT_NEXT):
        raise ValueError(f"{name} must be {IS_NEXT} (IsNext) or {NOT_NEXT} (NotNext); got "
                         f"{value!r:.80}")


def _check_same_length(name: str, values, other_name: str, other) -> None:
    """One entry of ``values`` per entry of ``other`` (len() is all it costs)."""
    check_sized(other_name, other, "a list")
    if isinstance(values, str) or not isinstance(values, Sequence) or len(values) != len(other):
        raise ValueError(f"{name} must be a list with one entry per entry of {other_name} "
                         f"({len(other)}); got {values!r:.80}")


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
    check_instance("g", g, torch.Generator, "a torch.Generator (None would draw from torch's "
                   "global one)")
    if torch.rand(1, generator=g).item() < 0.5:
        return sentence, next_sentence, IS_NEXT
    other = _randint(len(paragraphs) - 1, g)
    other += other >= paragraph_idx  # skip the current paragraph
    paragraph = paragraphs[other]
    return sentence, paragraph[_randint(len(paragraph), g)], NOT_NEXT


def make_nsp_pairs(
    paragraphs: Sequence[Paragraph],
    max_len: int,
    *,
    overflow: str = "truncate",
    specials: SpecialTokens | None = None,
    generator: torch.Generator | None = None,
    seed: int | None = None,
) -> NSPPairs:
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
    check_positive_int("max_len", max_len)
    if max_len < 5:
        raise ValueError(f"max_len must be at least 5 (<cls> a <sep> b <sep>); got {max_len}")
    _check_pool(paragraphs)
    if specials is not None:
        check_instance("specials", specials, SpecialTokens, "a bertlib.text.vocab.SpecialTokens")
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
    if not result.pairs:
        raise _no_pair(paragraphs, result.dropped)
    return result


def _check_pool(paragraphs, index: int | None = None) -> None:
    """At least 2 paragraphs, so that a NotNext partner can come from another one, and
    ``index`` one of them; every one with a sentence when ``index`` is None (per pair, a pass
    over all of them would cost more than the pair)."""
    check_sized("paragraphs", paragraphs, "a list of paragraphs")
    if len(paragraphs) < 2:
        raise ValueError(f"paragraphs must hold at least 2 paragraphs, so that NotNext pairs "
                         f"can take a sentence from another one; got {len(paragraphs)}")
    if index is not None:
        return check_int_in("paragraph_idx", index, 0, len(paragraphs) - 1)
    empty = next((p for p, paragraph in enumerate(paragraphs) if not paragraph), None)
    if empty is not None:
        raise ValueError(f"paragraphs[{empty}] has no sentence; every paragraph needs one")


def _no_pair(paragraphs: Sequence[Paragraph], dropped: int) -> ValueError:
    """Why ``paragraphs`` gave no NSP pair."""
    if dropped:
        why = (f"all {dropped} pairs are longer than max_len and overflow='drop'; raise "
               "max_len or use overflow='truncate'")
    elif all(len(paragraph) < 2 for paragraph in paragraphs):
        why = ("every paragraph has one sentence, and a pair needs two consecutive sentences "
               "of one paragraph (is the text split into paragraphs by blank lines?)")
    else:
        why = "every pair of consecutive sentences holds an empty sentence"
    return ValueError(f"paragraphs give no NSP pair: {why}")


@dataclass
class PretrainExample:
    """One sequence ready for MLM + NSP, unpadded."""

    token_ids: list[int]
    segments: list[int]
    pred_positions: list[int]
    mlm_labels: list[int]
    is_next: int

    def __post_init__(self) -> None:
        # Lengths and the label only: the ids' values are checked in one pass per batch by
        # pad_bert_inputs, where the vocabulary and max_len are known.
        _check_same_length("segments", self.segments, "token_ids", self.token_ids)
        _check_same_length("mlm_labels", self.mlm_labels, "pred_positions", self.pred_positions)
        _check_label("is_next", self.is_next)


def make_pretrain_examples(
    pairs: NSPPairs | Sequence[NSPPair], vocab: Vocab, *, mask_ratio: float = 0.15,
    generator: torch.Generator | None = None, seed: int | None = None,
) -> list[PretrainExample]:
    """Apply MLM masking to every NSP pair (``pairs``: the result of :func:`make_nsp_pairs` or
    its ``.pairs``)."""
    pairs = pairs.pairs if isinstance(pairs, NSPPairs) else pairs
    _check_items("pairs", pairs, NSPPair, "NSPPair (from make_nsp_pairs)")
    check_instance("vocab", vocab, Vocab, "a bertlib.text.vocab.Vocab")
    g = make_generator(generator, seed)
    examples = []
    for pair in pairs:
        ids = vocab[pair.tokens]
        m = mask_tokens(ids, vocab, mask_ratio=mask_ratio, generator=g)
        examples.append(
            PretrainExample(m.masked_ids, pair.segments, m.positions, m.labels, pair.is_next)
        )
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
        """The examples ``idx`` picks (an int, a slice, a list or tensor of indices)."""
        try:  # torch's own words name no argument; it reads a str as a list, True as a new axis
            if idx is None or isinstance(idx, (str, bytes, bool, float)):
                raise TypeError(type(idx).__name__)
            return PretrainBatch(*(t[idx] for t in self.tensors()))
        except (TypeError, IndexError) as err:
            raise ValueError(f"a PretrainBatch of {len(self)} examples is indexed by an int, "
                             f"a slice or a list of indices in range; got {idx!r:.80} "
                             f"({err})") from None

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return (self.tokens, self.segments, self.valid_lens, self.pred_positions,
                self.mlm_weights, self.mlm_labels, self.nsp_labels)


def _check_items(name: str, items, cls: type, what: str) -> None:
    if isinstance(items, str) or not isinstance(items, Sequence):
        raise ValueError(f"{name} must be a list of {what}; got {type(items).__name__}")
    for i, item in enumerate(items):
        if not isinstance(item, cls):
            raise ValueError(f"{name}[{i}] must be a {what}; got {type(item).__name__} "
                             f"{item!r:.80}")


def _ids(name: str, rows: list[list[int]], width: int) -> torch.Tensor:
    """``rows`` (one per example, each ``width`` long, integers: see :func:`_check_example`)
    as an (N, width) int64 tensor."""
    try:
        return torch.tensor(rows, dtype=torch.long).reshape(len(rows), width)
    except (ValueError, RuntimeError):  # "Overflow when unpacking long long"
        raise ValueError(f"examples' {name} must be ids in int64's range; one is beyond "
                         "it") from None


def _check_example(i: int, ex: PretrainExample) -> None:
    """Integers where ids belong (a bool would read as 1, a float be cut), and the label."""
    for name in ("token_ids", "segments", "pred_positions", "mlm_labels"):
        check_int_list(f"examples[{i}].{name}", getattr(ex, name))
    _check_label(f"examples[{i}].is_next", ex.is_next)


def padded_bytes(num_examples: int, max_len: int, max_preds: int) -> int:
    """The bytes :func:`pad_bert_inputs` needs: int64 tensors (two of max_len, two of max_preds),
    float32 weights, and the Python lists (8-byte pointers) that fill one tensor at a time."""
    return num_examples * (16 * max_len + 20 * max_preds + 16 + 8 * max_len + 56)


def pad_bert_inputs(
    examples: Sequence[PretrainExample], max_len: int, vocab: Vocab,
    max_preds: int | None = None,
) -> PretrainBatch:
    """Pad every example to ``max_len`` tokens and ``max_preds`` prediction slots
    (default ``round(0.15 * max_len)``)."""
    _check_items("examples", examples, PretrainExample, "PretrainExample")
    check_positive_int("max_len", max_len)
    check_instance("vocab", vocab, Vocab, "a bertlib.text.vocab.Vocab")
    if max_preds is None:
        max_preds = max(1, round(0.15 * max_len))
    check_positive_int("max_preds", max_preds)
    check_int_in("max_preds", max_preds, 1, max_len, f" (at most one per token, max_len={max_len})")
    if not examples:
        raise ValueError("examples must hold at least one PretrainExample; got an empty list")
    check_memory(f"padding {len(examples):,} examples to max_len={max_len:,} and "
                 f"max_preds={max_preds:,}", padded_bytes(len(examples), max_len, max_preds),
                 DATA_MAX_BYTES, "use fewer examples or a smaller max_len")
    for i, ex in enumerate(examples):
        _check_example(i, ex)
        if len(ex.token_ids) > max_len:
            raise ValueError(f"example {i} has {len(ex.token_ids)} tokens; max_len is {max_len}")
        if len(ex.pred_positions) > max_preds:
            raise ValueError(f"example {i} has {len(ex.pred_positions)} prediction positions; "
                             f"max_preds is {max_preds}")
    # <listing: padding>
    def pad(values: list, width: int, fill=0) -> list:
        return list(values) + [fill] * (width - len(values))

    batch = PretrainBatch(
        tokens=_ids("token_ids", [pad(ex.token_ids, max_len, vocab.pad_id) for ex in examples],
                    max_len),
        segments=_ids("segments", [pad(ex.segments, max_len) for ex in examples], max_len),
        valid_lens=torch.tensor([len(ex.token_ids) for ex in examples], dtype=torch.long),
        pred_positions=_ids("pred_positions",
                            [pad(ex.pred_positions, max_preds) for ex in examples], max_preds),
        # 1 for a real prediction slot, 0 for padding: padded slots add nothing to the loss.
        mlm_weights=torch.tensor([pad([1.0] * len(ex.pred_positions), max_preds, 0.0)
                                  for ex in examples]).reshape(len(examples), max_preds),
        mlm_labels=_ids("mlm_labels", [pad(ex.mlm_labels, max_preds) for ex in examples],
                        max_preds),
        nsp_labels=torch.tensor([int(ex.is_next) for ex in examples], dtype=torch.long),
    )
    # </listing>
    check_batch(batch, len(vocab))
    return batch


def check_batch(data: PretrainBatch, vocab_size: int) -> None:
    """Every id of ``data`` in range, in one vectorised pass per tensor: tokens are vocabulary
    ids, segments 0/1, prediction positions on real tokens, labels vocabulary ids."""
    check_instance("data", data, PretrainBatch, "a PretrainBatch (from pad_bert_inputs)")
    check_positive_int("vocab_size", vocab_size)
    if len(data) == 0:
        return
    for name in ("tokens", "mlm_labels"):
        check_range(name, getattr(data, name), 0, vocab_size - 1,
                    f"token ids in [0, {vocab_size - 1}]")
    check_range("segments", data.segments, 0, 1, "0 (sentence A) or 1 (sentence B)")
    check_range("valid_lens", data.valid_lens, 1, data.tokens.shape[1],
                f"in [1, max_len={data.tokens.shape[1]}] (an example needs a token)")
    check_positions_in_text(data.pred_positions, data.valid_lens)


def make_pretrain_data(paragraphs: Sequence[list[list[str]]], vocab: Vocab, max_len: int, *,
                       seed: int, rounds: int = 1, max_preds: int | None = None,
                       groups: Sequence[str] | None = None) -> PretrainBatch:
    """NSP pairs + MLM masking over tokenized ``paragraphs``, padded to ``max_len``.

    ``rounds`` > 1 repeats pairing and masking with fresh draws, so that the same sentence is
    seen with different partners and different masked positions ("dynamic masking"). Pairs
    longer than ``max_len`` are truncated.

    ``groups`` (one label per paragraph, such as its language) draws each NotNext partner from
    a paragraph of the same group. In a bilingual corpus a partner in the other language would
    let NSP be solved by telling the languages apart.
    """
    check_positive_int("rounds", rounds)
    check_word_paragraphs("paragraphs", paragraphs)
    check_positive_int("max_len", max_len)
    check_instance("vocab", vocab, Vocab, "a bertlib.text.vocab.Vocab")
    # At most one example per consecutive pair and round: the padded tensors' size is known
    # before any is made (their unpadded lists cost about as much again; see corpus.py).
    most = rounds * sum(max(len(paragraph) - 1, 0) for paragraph in paragraphs)
    check_memory(f"{most:,} examples ({rounds} rounds) of max_len={max_len:,}",
                 padded_bytes(most, max_len, max_preds or max(1, round(0.15 * max_len))),
                 DATA_MAX_BYTES, "use fewer rounds, a smaller max_len or part of the corpus")
    if groups is None:
        groups = [""] * len(paragraphs)
    if isinstance(groups, str) or not isinstance(groups, Sequence) \
            or not all(isinstance(group, str) for group in groups):
        raise ValueError(f"groups must be a list of strings, one label per paragraph; got "
                         f"{groups!r:.80}")
    if len(groups) != len(paragraphs):
        raise ValueError(f"groups must give one label per paragraph: {len(paragraphs)} "
                         f"paragraphs, {len(groups)} labels")
    by_group: dict[str, list[list[list[str]]]] = {}
    for paragraph, group in zip(paragraphs, groups, strict=True):
        by_group.setdefault(group, []).append(paragraph)
    small = {group: len(members) for group, members in by_group.items() if len(members) < 2}
    if not paragraphs or small:
        raise ValueError(f"every group needs at least 2 paragraphs, so that NotNext partners "
                         f"can come from another one; got {len(paragraphs)} paragraphs"
                         + (f", too few in groups {small}" if small else ""))
    g = make_generator(seed=seed)
    examples = []
    for _ in range(rounds):
        for group, members in by_group.items():
            try:
                pairs = make_nsp_pairs(members, max_len, generator=g).pairs
            except ValueError as err:  # no pair: say which group, when there are groups
                raise ValueError(f"group {group!r}: {err}" if group else str(err)) from None
            examples += make_pretrain_examples(pairs, vocab, generator=g)
    return pad_bert_inputs(examples, max_len, vocab, max_preds)


def check_nonempty_batch(data: PretrainBatch) -> None:
    check_instance("data", data, PretrainBatch, "a PretrainBatch (from make_pretrain_data or "
                   "pad_bert_inputs)")
    if len(data) == 0:
        raise ValueError("data must hold at least one example; got an empty PretrainBatch")
