"""Self-check exercises: ``check_exercise(key, answer)`` says whether an answer is right and
gives a hint when it is not, without ever printing the expected answer.

The expected answers are not stored: each is computed with bertlib itself, which keeps them
true if the model code changes (models are built on PyTorch's ``meta`` device, which allocates
no memory). Messages live in :mod:`bertlib.i18n` and follow the notebook's language.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable

import torch

from bertlib.checkpoint import read_config
from bertlib.context import BANK_EXAMPLES
from bertlib.data import make_nsp_pairs, pad_bert_inputs
from bertlib.i18n import text
from bertlib.masking import mask_tokens
from bertlib.model import (
    BERTConfig,
    BERTEncoder,
    BERTModel,
    TransformerEncoderBlock,
    get_tokens_and_segments,
)
from bertlib.pretrain import SMALL_BERT_DIR
from bertlib.vocab import Vocab

# The chapter's demo sizes.
DEMO = {"vocab_size": 10000, "num_hiddens": 768, "ffn_num_hiddens": 1024, "num_heads": 4,
        "num_blks": 2, "dropout": 0.2}


def _num_params(*modules: torch.nn.Module | torch.nn.Parameter) -> int:
    return sum(p.numel() for m in modules
               for p in ([m] if isinstance(m, torch.nn.Parameter) else m.parameters()))


def _embedding_params() -> int:
    """02: learnable numbers in the input representation of the demo encoder."""
    with torch.device("meta"):
        enc = BERTEncoder(**DEMO)
    return _num_params(enc.token_embedding, enc.segment_embedding, enc.pos_embedding)


def _block_params() -> int:
    """03: learnable numbers in one encoder block of the demo encoder."""
    with torch.device("meta"):
        return _num_params(TransformerEncoderBlock(BERTConfig(**DEMO)))


def _num_preds() -> int:
    """04: prediction positions chosen in ``<cls>`` + 40 words + ``<sep>``."""
    words = [f"w{i}" for i in range(40)]
    vocab = Vocab([words])
    ids = [vocab.cls_id, *vocab[words], vocab.sep_id]
    return len(mask_tokens(ids, vocab, seed=0).positions)


def _nsp_pairs() -> int:
    """05: NSP pairs made from paragraphs of 4, 2 and 5 sentences."""
    paragraphs = [[["word"]] * n for n in (4, 2, 5)]
    return len(make_nsp_pairs(paragraphs, max_len=64, seed=0).pairs)


def _nsp_head_params() -> int:
    """05: learnable numbers between the encoded ``<cls>`` vector and the two NSP logits."""
    with torch.device("meta"):
        model = BERTModel(**DEMO)
    return _num_params(model.hidden, model.nsp)


def _mlm_logits() -> int:
    """06: entries of mlm_Y_hat (B, P, V) for one batch of the shipped model's recipe."""
    config = read_config(SMALL_BERT_DIR)
    recipe = config["metadata"]["recipe"]
    P = pad_bert_inputs([], recipe["max_len"], Vocab()).pred_positions.shape[1]
    return recipe["batch_size"] * P * config["config"]["vocab_size"]


def _small_bert_params() -> int:
    """06: learnable numbers in the shipped small BERT."""
    with torch.device("meta"):
        model = BERTModel.from_config(BERTConfig(**read_config(SMALL_BERT_DIR)["config"]))
    return _num_params(model)


def _gpt_context() -> int:
    """01: tokens a left-to-right model can use for "bank" in ``<cls>`` + sentence A +
    ``<sep>``, the word itself included."""
    sentence, word = BANK_EXAMPLES[0]
    tokens, _ = get_tokens_and_segments(sentence.split())
    return tokens.index(word) + 1


# all-MiniLM-L6-v2, the real BERT of notebook 07 (its config.json).
MINILM = {"vocab_size": 30522, "num_hiddens": 384, "ffn_num_hiddens": 1536, "num_heads": 12,
          "num_blks": 6, "dropout": 0.1, "max_len": 512}


def _tied_saving() -> int:
    """07: learnable numbers saved in MiniLM by tying the MLM decoder to the token embeddings."""
    tied = BERTConfig.original(**MINILM)
    with torch.device("meta"):
        models = [BERTModel.from_config(c) for c in
                  (dataclasses.replace(tied, tie_mlm_decoder=False), tied)]
    return _num_params(models[0]) - _num_params(models[1])


EXPECTED: dict[str, Callable[[], int]] = {
    "01_gpt_context": _gpt_context,
    "02_embedding_params": _embedding_params,
    "03_block_params": _block_params,
    "04_num_preds": _num_preds,
    "05_nsp_pairs": _nsp_pairs,
    "05_nsp_head_params": _nsp_head_params,
    "06_mlm_logits": _mlm_logits,
    "06_small_bert_params": _small_bert_params,
    "07_tied_saving": _tied_saving,
}


def _check_key(key: str) -> None:
    if key not in EXPECTED:
        raise ValueError(f"unknown exercise {key!r}; known: {sorted(EXPECTED)}")


def is_correct(key: str, answer) -> bool:
    """Whether ``answer`` (a Python or NumPy number) is the expected answer of exercise ``key``."""
    _check_key(key)
    if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
        return False
    return answer == EXPECTED[key]()


def check_exercise(key: str, answer) -> None:
    """Print ✓ when ``answer`` is right, else × and a hint; never the expected answer."""
    _check_key(key)
    if answer is None:
        print(text("ex_missing"))
    elif is_correct(key, answer):
        print(text("ex_correct"))
    else:
        print(text("ex_wrong", hint=text(f"ex_hint_{key}")))
