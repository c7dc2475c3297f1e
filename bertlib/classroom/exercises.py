"""Self-check exercises: ``check_exercise(key, answer)`` says whether an answer is right, with a
hint (``ex_hint_<key>`` in ``strings.json``) when not, never the answer. :data:`EXERCISES`
computes each answer with bertlib itself (models on the ``meta`` device), so it stays true when
the model code changes; the tests check them against counts by hand."""

from __future__ import annotations

import functools
import math
import numbers
from collections.abc import Callable

import torch

from bertlib.analysis.context import BANK_EXAMPLES
from bertlib.assets import SMALL_BERT_DIR, small_bert_metrics
from bertlib.data import IS_NEXT, NOT_NEXT, PretrainExample, make_nsp_pairs, pad_bert_inputs
from bertlib.finetuning.finetune import Accuracy, BERTClassifier, freeze_layers
from bertlib.finetuning.tasks import NUM_TOPICS
from bertlib.inputs import get_tokens_and_segments
from bertlib.loss import bert_loss
from bertlib.masking import mask_tokens
from bertlib.model import (
    BERTConfig,
    BERTEncoder,
    BERTModel,
    MultiHeadAttention,
    TransformerEncoderBlock,
)
from bertlib.support.checks import check_choice
from bertlib.support.i18n import fill, resolve_language, text
from bertlib.support.rng import own_global_rng
from bertlib.text.corpus import load_small_corpus
from bertlib.text.vocab import Vocab
from bertlib.weights.checkpoint import config_from, read_config
from bertlib.weights.hf import _to_bertlib

# The chapter's demo sizes.
DEMO = {"vocab_size": 10000, "num_hiddens": 768, "ffn_num_hiddens": 1024, "num_heads": 4,
        "num_blks": 2, "dropout": 0.2}


def _num_params(*modules: torch.nn.Module | torch.nn.Parameter) -> int:
    return sum(p.numel() for m in modules
               for p in ([m] if isinstance(m, torch.nn.Parameter) else m.parameters()))


def _block_params(num_heads: int = DEMO["num_heads"]) -> int:
    """03: learnable numbers in one encoder block of the demo encoder."""
    with torch.device("meta"):
        return _num_params(TransformerEncoderBlock(BERTConfig(**DEMO | {"num_heads": num_heads})))


def _demo_encoder() -> BERTEncoder:
    """03: an encoder of the chapter's demo sizes, weights from a fixed seed, in eval mode."""
    with own_global_rng(0):  # nn.Linear and the position table draw their initial weights
        return BERTEncoder(**DEMO).eval()


def _changed_positions(encoder: BERTEncoder, a: torch.Tensor, b: torch.Tensor,
                       valid_lens: torch.Tensor | None = None) -> int:
    """How many (sequence, position) outputs of ``encoder`` differ between the token ids ``a``
    and ``b`` (B, 8): the first four tokens of each sequence in segment 0, the rest in 1."""
    segments = torch.tensor([[0] * 4 + [1] * 4] * a.shape[0])
    with torch.no_grad():
        x, y = encoder(a, segments, valid_lens), encoder(b, segments, valid_lens)
    differs = ~torch.isclose(x, y, rtol=1e-4, atol=1e-5).all(dim=-1)  # (B, T)
    return int(differs.sum())


def _word_order() -> int:
    """03: with the position table set to zero, at how many of 8 positions the output changes
    when the tokens at positions 1 and 2 are swapped."""
    encoder = _demo_encoder()
    with torch.no_grad():
        encoder.pos_embedding.zero_()
    tokens = torch.arange(10, 18)[None]  # (1, 8): eight different tokens
    swapped = tokens[:, [0, 2, 1, 3, 4, 5, 6, 7]]
    return _changed_positions(encoder, tokens, swapped)


def _padding_changes() -> int:
    """03: in a batch of 2 sequences of 8 tokens, the second with 5 real tokens, at how many of
    the 2 x 8 positions the output changes when the padded slots hold other tokens."""
    tokens = torch.arange(10, 26).reshape(2, 8)
    padded, junk = tokens.clone(), tokens.clone()
    padded[1, 5:] = 0  # <pad>
    junk[1, 5:] = torch.tensor([11, 22, 33])
    return _changed_positions(_demo_encoder(), padded, junk, torch.tensor([8, 5]))


def _num_preds() -> int:
    """04: prediction positions chosen in ``<cls>`` + 126 words + ``<sep>``."""
    words = [f"w{i}" for i in range(126)]
    vocab = Vocab([words])
    return len(mask_tokens([vocab.cls_id, *vocab[words], vocab.sep_id], vocab, seed=0).positions)


def _nsp_pairs() -> int:
    """05: NSP pairs made from paragraphs of 4, 2 and 5 sentences."""
    paragraphs = [[["word"]] * n for n in (4, 2, 5)]
    return len(make_nsp_pairs(paragraphs, max_len=64, seed=0).pairs)


def _small_bert() -> BERTModel:
    """The shipped small BERT's modules, shapes only (on the meta device: no memory)."""
    with torch.device("meta"):
        return BERTModel.from_config(config_from(read_config(SMALL_BERT_DIR)))


def _mlm_only_no_grad() -> int:
    """05: parameter tensors of a BERTModel that get no gradient from the MLM loss alone (as in
    RoBERTa's pretraining): those the loss never passes through."""
    with own_global_rng(0):  # nn.Linear draws its initial weights; the tokens are drawn too
        model = BERTModel(vocab_size=20, num_hiddens=8, ffn_num_hiddens=16, num_heads=2,
                          num_blks=2, dropout=0.0, max_len=8)
        tokens = torch.randint(5, 20, (2, 8))
    segments = torch.tensor([[0] * 4 + [1] * 4] * 2)
    positions = torch.tensor([[1, 5], [2, 6]])
    with torch.enable_grad():
        _, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, torch.tensor([8, 8]), positions)
        loss = bert_loss(mlm_Y_hat, tokens.gather(1, positions), torch.ones(2, 2), nsp_Y_hat,
                         torch.tensor([1, 0]))
        loss.mlm.backward()
    return sum(p.grad is None for p in model.parameters())


def _same_paragraph(sizes: tuple[int, ...] = (4, 4, 4)) -> int:
    """05: with the chapter's NotNext sampler (a random paragraph of the whole corpus, then a
    random sentence of it), one NotNext pair in how many takes sentence B from A's own paragraph,
    on a corpus of paragraphs of ``sizes`` sentences (the notebook's: three of four). Exact: the
    mean over every pair's sentence A of the chance that the drawn paragraph is A's own."""
    chances = [1 / len(sizes) for size in sizes for _ in range(size - 1)]
    return round(len(chances) / sum(chances))


def _attention_numbers() -> int:
    """03: numbers in one block's attention weights (B, nh, T, T) with 8 heads, for a batch of
    2 sequences of 8 tokens of the demo encoder."""
    with own_global_rng(0), torch.no_grad():  # nn.Linear draws its initial weights
        attention = MultiHeadAttention(DEMO["num_hiddens"], 8, dropout=0.0)
        _, weights = attention(torch.zeros(2, 8, DEMO["num_hiddens"]), None, need_weights=True)
    return weights.numel()


def _mlm_logits() -> int:
    """06: entries of mlm_Y_hat (B, P, V) for one batch of the shipped model's recipe."""
    config = read_config(SMALL_BERT_DIR)
    recipe = config["metadata"]["recipe"]
    # One short example (<cls> <sep>), padded as the recipe pads every batch.
    example = PretrainExample([2, 3], [0, 0], [], [], 1)
    P = pad_bert_inputs([example], recipe["max_len"], Vocab()).pred_positions.shape[1]
    return recipe["batch_size"] * P * config["config"]["vocab_size"]


@functools.cache  # reads the corpus: once per process
def _word_vocab() -> int:
    """06: entries of the word vocabulary of the English training sentences, split at spaces,
    that keeps the words seen at least 5 times (the chapter's ``min_freq``)."""
    split = load_small_corpus()
    return len(Vocab([s.lower().split() for p, lang in zip(split.train, split.train_langs,
                                                          strict=True) if lang == "en"
                      for s in p], min_freq=5))


def _attention_growth() -> int:
    """07: how many times as many numbers one batch's attention weights (B, nh, T, T) hold at
    max_len 512 as at 64, with BERT-Large's sizes (H = 1024, 16 heads)."""
    with torch.device("meta"):  # shapes only
        attention = MultiHeadAttention(1024, 16, dropout=0.0)
        numbers = [attention(torch.zeros(1, T, 1024), None, need_weights=True)[1].numel()
                   for T in (64, 512)]
    return numbers[1] // numbers[0]


def _gpt_context() -> int:
    """01: tokens of sentence B's input ``<cls>`` + sentence B + ``<sep>`` that BERT's "bank"
    can depend on and a left-to-right model's cannot: those right of the word."""
    sentence, word = BANK_EXAMPLES[1]
    tokens, _ = get_tokens_and_segments(sentence.split())
    return len(tokens) - (tokens.index(word) + 1)


def _held_out_nsp() -> Accuracy:
    """08: the shipped small BERT's held-out NSP accuracy, as hits out of pairs."""
    held_out = small_bert_metrics()["held_out"]
    return Accuracy(round(held_out["nsp_accuracy"] * held_out["pairs"]), held_out["pairs"])


def _halve_width() -> int:
    """08: how many times as many held-out pairs, at the same share of hits, halve the width of
    the NSP interval (to the nearest whole number)."""
    first = _held_out_nsp()
    n, (low, high) = first.n, first.interval
    while (interval := Accuracy(round(first.value * n), n).interval)[1] - interval[0] \
            > (high - low) / 2:
        n += 1
    return round(n / first.n)


def _replication() -> int:
    """08: the percentage of repeats in which a second held-out set of the same size lands inside
    the first set's 95% interval, both drawn at the shipped model's NSP accuracy (exact
    binomial probabilities)."""
    first = _held_out_nsp()
    n = first.n
    hits = torch.arange(n + 1, dtype=torch.float64)
    pmf = torch.distributions.Binomial(n, torch.tensor(first.value, dtype=torch.float64)) \
        .log_prob(hits).exp()  # (n + 1,): P(h hits)
    cdf = torch.cat([torch.zeros(1, dtype=torch.float64), pmf.cumsum(0)])  # cdf[k] = P(h < k)
    inside = 0.0
    for h in range(n + 1):
        low, high = Accuracy(h, n).interval  # the first set's interval when it has h hits
        lowest, highest = math.ceil(low * n - 1e-9), math.floor(high * n + 1e-9)
        inside += pmf[h].item() * (cdf[highest + 1] - cdf[lowest]).item()
    return round(100 * inside)



def _unswapped_nsp() -> int:
    """09: the percentage of pairs that an NSP head in Hugging Face's (Google's) row order,
    right on every pair, gets wrong against bertlib's labels when its two rows are not swapped
    on load."""
    labels = torch.tensor([IS_NEXT, NOT_NEXT])  # one pair of each kind
    right = torch.nn.functional.one_hot(labels, 2).float()  # (pairs, 2): right in bertlib's order
    # The loader's swap turns Hugging Face's rows into bertlib's; it is its own inverse, so it
    # also gives the logits such a checkpoint produces in its own order.
    google = _to_bertlib("nsp.output.bias", right.T).T
    return round(100 * (google.argmax(-1) != labels).float().mean().item())


def _topic_classifier() -> BERTClassifier:
    """The shipped small BERT with an output layer for the 6 topics (shapes only)."""
    with torch.device("meta"):
        return BERTClassifier(_small_bert(), NUM_TOPICS)


def _frozen_trainable() -> int:
    """11: learnable numbers still trained with all but the top encoder block frozen."""
    return freeze_layers(_topic_classifier(), trainable_blocks=1)


# In notebook order: how each answer is computed.
EXERCISES: dict[str, Callable[[], int]] = {
    "01_gpt_context": _gpt_context,
    "03_block_params": _block_params,
    "03_more_heads": _attention_numbers,
    "03_word_order": _word_order,
    "03_padding_changes": _padding_changes,
    "04_num_preds": _num_preds,
    "05_nsp_pairs": _nsp_pairs,
    "05_mlm_only_no_grad": _mlm_only_no_grad,
    "05_same_paragraph": _same_paragraph,
    "06_mlm_logits": _mlm_logits,
    "06_word_vocab": _word_vocab,
    "07_attention_growth": _attention_growth,
    "08_halve_width": _halve_width,
    "08_replication": _replication,
    "09_unswapped_nsp": _unswapped_nsp,
    "11_frozen_trainable": _frozen_trainable,
}


def _as_number(answer) -> int | float | None:
    """``answer`` as a Python number (a number, or a tensor or array holding one), else None."""
    try:
        if ((isinstance(answer, torch.Tensor) and answer.numel() == 1)
                or (getattr(answer, "size", None) == 1 and hasattr(answer, "item"))):
            answer = answer.item()  # e.g. p.numel() summed with torch gives a 0-d tensor
        if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
            return None
        return int(answer) if isinstance(answer, numbers.Integral) else float(answer)
    except (Exception, SystemExit):  # an object whose item() or int() fails holds no number
        return None


def is_correct(key: str, answer) -> bool:
    """Whether ``answer`` (a number, or a one-number tensor or array) is exercise ``key``'s."""
    check_choice("key", key, EXERCISES)
    return (number := _as_number(answer)) is not None and number == EXERCISES[key]()


def check_exercise(key: str, answer, lang: str | None = None) -> None:
    """Print ✓ when ``answer`` is right, × and a hint when it is a wrong number, what to give
    when it is no number; never the expected answer."""
    lang = resolve_language(lang)
    if is_correct(key, answer):
        print(text("ex_correct", lang))
    elif answer is None:
        print(fill(text("ex_missing", lang)))
    elif _as_number(answer) is None:
        print(fill(text("ex_not_number", lang, got=type(answer).__name__)))
    else:
        print(fill(text("ex_wrong", lang, hint=text(f"ex_hint_{key}", lang))))
