import math
from collections import Counter

import numpy as np
import pytest
import torch
from conftest import unfill

from bertlib.assets import SMALL_BERT_DIR
from bertlib.classroom.exercises import EXERCISES, check_exercise, is_correct
from bertlib.support.i18n import LANGUAGES, STRINGS, set_language, text
from bertlib.text.corpus import load_small_corpus
from bertlib.weights.checkpoint import read_config


@pytest.fixture(params=LANGUAGES)
def lang(request):
    """The edition's language, set as a notebook's first cell sets it."""
    set_language(request.param)
    return request.param


@pytest.mark.parametrize("key", list(EXERCISES))
def test_right_answer_passes_and_wrong_ones_fail(key, lang, capsys):
    expected = EXERCISES[key]()
    assert is_correct(key, expected)
    assert is_correct(key, float(expected))
    assert is_correct(key, np.int64(expected))
    for wrong in (expected + 1, expected - 1, 0, str(expected), True, [expected]):
        assert not is_correct(key, wrong), wrong

    check_exercise(key, expected)
    assert unfill(capsys.readouterr().out).strip() == text("ex_correct", lang)

    check_exercise(key, expected + 1)
    out = unfill(capsys.readouterr().out)
    assert out.startswith("×")
    assert text(f"ex_hint_{key}", lang) in out
    assert str(expected) not in out


def test_missing_answer_asks_for_one(lang, capsys):
    check_exercise("04_num_preds", None)
    assert unfill(capsys.readouterr().out).strip() == text("ex_missing", lang)


@pytest.mark.parametrize("key", list(EXERCISES))
def test_no_message_gives_an_answer_away(key):
    expected = str(EXERCISES[key]())
    for lang in LANGUAGES:
        texts = [STRINGS[k][lang] for k in ("ex_correct", "ex_missing", "ex_wrong")]
        texts.append(text(f"ex_hint_{key}", lang))
        assert not any(expected in t for t in texts)


def test_every_exercise_has_a_hint_in_every_language_and_runs_in_notebook_order():
    for key in EXERCISES:
        assert set(STRINGS[f"ex_hint_{key}"]) == set(LANGUAGES)
        assert all(STRINGS[f"ex_hint_{key}"][lang].strip() for lang in LANGUAGES)
    numbers = [key[:2] for key in EXERCISES]  # keys start with the notebook's number
    assert numbers == sorted(numbers)


def test_unknown_exercise_is_an_error():
    with pytest.raises(ValueError, match=r"key must be one of \[.*\]; got '04_nope'"):
        check_exercise("04_nope", 3)


def test_expected_answers_match_counts_by_hand():
    """The answers bertlib computes, against the formulas a student would write down."""
    H, F = 768, 1024  # the chapter's demo encoder
    V, h, f, T = 1927, 128, 256, 64  # the shipped small BERT (checked against its config)
    config = read_config(SMALL_BERT_DIR)["config"]
    assert (config["vocab_size"], config["num_hiddens"], config["ffn_num_hiddens"],
            config["max_len"], config["num_blks"]) == (V, h, f, T, 2)

    def linear(n_in: int, n_out: int) -> int:
        return n_in * n_out + n_out

    def block(d: int, ffn: int) -> int:  # Q, K, V, O; the FFN; two LayerNorms
        return 4 * linear(d, d) + linear(d, ffn) + linear(ffn, d) + 4 * d

    split = load_small_corpus()  # the data the vocabulary exercise counts

    hand = {
        # right of "bank" in <cls> i went to the bank to sit down <sep>
        "01_gpt_context": len(["to", "sit", "down", "<sep>"]),
        "03_block_params": block(H, F),
        "03_more_heads": 2 * 8 * 8 * 8,  # (B, heads, T, T) for 2 sequences of 8 tokens
        # no positions: attention is a weighted sum over the set of keys, so only the two
        # swapped positions, whose own input vectors moved, get other outputs
        "03_word_order": len([1, 2]),
        # the padded positions 5, 6, 7 of the second sequence: their queries are not masked
        "03_padding_changes": 8 - 5,
        "04_num_preds": 19,  # 15% of 126 + 2 tokens is 19.2
        "05_nsp_pairs": 3 + 1 + 4,
        # the MLM loss never reaches the pooler (Linear H->H + Tanh) or the NSP output layer
        # (Linear H->2): a weight and a bias each
        "05_mlm_only_no_grad": len(["hidden.weight", "hidden.bias", "nsp.weight", "nsp.bias"]),
        # the chapter draws a paragraph uniformly from the notebook's three: A's own one time
        # in three, whichever sentence A is
        "05_same_paragraph": len(["abc...", "123...", "αβγ..."]),
        "06_mlm_logits": 128 * round(0.15 * T) * V,
        # the 5 reserved tokens, then every English training word seen at least 5 times
        "06_word_vocab": 5 + sum(count >= 5 for count in Counter(
            word for p, lang in zip(split.train, split.train_langs, strict=True) if lang == "en"
            for sentence in p for word in sentence.lower().split()).values()),
        "07_attention_growth": (512 // 64) ** 2,  # (B, nh, T, T): T twice
        "08_halve_width": 2**2,  # the width shrinks like 1 / sqrt(n)
        # two independent estimates differ by sqrt(2) standard errors of one; the second is
        # inside the first's interval when |Z| <= 1.96 / sqrt(2): erf(1.96 / 2) for a normal Z
        "08_replication": round(100 * math.erf(1.96 / 2)),
        # Hugging Face's row 0 is IsNext, bertlib's label 1: unswapped, every answer flips
        "09_unswapped_nsp": 100,
        # six topics (person, place, time, fruit, animal, sport)
        "11_frozen_trainable": block(h, f) + linear(h, h) + linear(h, 6),
    }
    assert {key: EXERCISES[key]() for key in hand} == hand
    assert set(hand) == set(EXERCISES)


@pytest.mark.parametrize("key", [["04_num_preds"], {"k"}, None])
def test_a_key_that_is_not_a_string_is_unknown(key):
    """Before: TypeError unhashable for a list or a set."""
    with pytest.raises(ValueError, match="key must be one of"):
        check_exercise(key, 6)
    with pytest.raises(ValueError, match="key must be one of"):
        is_correct(key, 6)


def test_a_one_number_tensor_or_array_is_read_as_its_number():
    """Before: a 0-d tensor holding the right answer was judged wrong."""
    right = EXERCISES["04_num_preds"]()
    for answer in (torch.tensor(right), np.array(right), torch.tensor([right])):
        assert is_correct("04_num_preds", answer)
    assert not is_correct("04_num_preds", torch.tensor(right + 1))
    assert not is_correct("04_num_preds", torch.tensor([right, right]))


# ---------------------------------------------------------------- implement-it: the tagging loss


def test_a_one_number_array_of_any_shape_is_its_number_and_no_number_is_said_so(lang, capsys):
    """Before: np.array([n]) (the docstring's one-number array) was judged wrong, and a meta
    tensor raised RuntimeError out of check_exercise instead of a verdict."""
    right = EXERCISES["04_num_preds"]()
    for answer in (np.array([right]), np.array([[right]]), torch.tensor([[right]]),
                   torch.tensor([right]).to_sparse(), np.float32(right)):
        assert is_correct("04_num_preds", answer), answer
        check_exercise("04_num_preds", answer)
        assert unfill(capsys.readouterr().out).strip() == text("ex_correct", lang)

    class Unreadable:
        @property
        def size(self):
            raise RuntimeError("no size")

    for answer, kind in ((torch.tensor(right, device="meta"), "Tensor"), (str(right), "str"),
                         ([right], "list"), (Unreadable(), "Unreadable"), (True, "bool")):
        assert not is_correct("04_num_preds", answer)
        check_exercise("04_num_preds", answer)
        assert unfill(capsys.readouterr().out).strip() == text("ex_not_number", lang, got=kind)
