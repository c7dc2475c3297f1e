"""Bad input gets a ValueError that names the argument, the value and what is allowed: never a
silent wrong answer, never an error from deep inside torch. One case per family the hardening
review found; tests of each module check the rest."""

import re

import numpy as np
import pytest
import torch

from bertlib import (
    BERTConfig,
    BERTModel,
    get_tokens_and_segments,
    make_nsp_pairs,
    make_pretrain_data,
    mask_tokens,
)
from bertlib.support import checks
from bertlib.support.checks import check_int_in, check_seed, check_str, number_array
from bertlib.support.files import checked_file, checked_path, read_json, read_text

SIZES = {"vocab_size": 30, "num_hiddens": 8, "ffn_num_hiddens": 16, "num_heads": 2,
         "num_blks": 1, "dropout": 0.0, "max_len": 16}


@pytest.fixture
def model():
    torch.manual_seed(0)
    return BERTModel(**SIZES).eval()


def batch(T=6, B=2):
    return torch.randint(5, 30, (B, T)), torch.zeros(B, T, dtype=torch.long)


@pytest.mark.parametrize(("call", "message"), [
    (lambda vocab: get_tokens_and_segments("the cat sat"), "tokens_a must be a list of token "
                                                           "strings, not a text"),
    (lambda vocab: get_tokens_and_segments(["a"], "b c"), "tokens_b must be a list"),
    (lambda vocab: get_tokens_and_segments(["a", 3]), "tokens_a must be a list of token strings"),
    (lambda vocab: mask_tokens("the cat", vocab, seed=0), "token_ids must be a list of integer"),
    (lambda vocab: mask_tokens([5, 6.5, 7], vocab, seed=0), "token_ids must be a list of integer"),
    (lambda vocab: mask_tokens([5, True, 7], vocab, seed=0), "token_ids must be a list of intege"),
    (lambda vocab: mask_tokens(torch.tensor([5.0, 6.0]), vocab, seed=0),
     "token_ids must be a list of integer ids .*got 5.0 in tensor"),
    (lambda vocab: mask_tokens([5, 6, 7], vocab, mask_ratio="0.15", seed=0), "mask_ratio must"),
    (lambda vocab: make_nsp_pairs(["the cat sat . it ran", "a dog"], 16, seed=0),
     r"paragraphs\[0\] must be a paragraph, a list of tokenized sentences"),
    (lambda vocab: make_nsp_pairs([["the cat sat", "it ran"], [["a"], ["b"]]], 16, seed=0),
     r"paragraphs\[0\]\[0\] must be a list of token strings, not a text"),
    (lambda vocab: make_pretrain_data([["the cat", "it ran"], ["a b", "c"]], vocab, 16, seed=0),
     r"paragraphs\[0\]\[0\] must be a list of token strings, not a text"),
])
def test_texts_where_tokens_belong_are_refused(vocab, call, message):
    with pytest.raises(ValueError, match=message):
        call(vocab)




@pytest.mark.parametrize(("options", "message"), [
    ({"dropout": "0.1"}, r"dropout must be a number in \[0, 1\)"),
    ({"hidden_act": "tanh"}, "hidden_act must be one of"),
])
def test_config_options_of_the_wrong_kind_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        BERTConfig(**{**SIZES, **options})
















@pytest.mark.parametrize(("check", "message"), [
    (lambda: checks.check_seed("seed", 1.0), r"seed must be an integer in \[0, 2\*\*63 - 1\]"),
    (lambda: checks.check_seed("seed", False), "seed must be an integer"),
    (lambda: checks.check_seed("seed", 2**63), "seed must be an integer"),
    (lambda: checks.check_instance("vocab", [1], dict, "a dict"),
     "vocab must be a dict; got list"),
    (lambda: checks.check_str("text", b"x"), "text must be a string; got bytes"),
    (lambda: checks.check_integer_dtype("ids", torch.zeros(2, dtype=torch.uint8)),
     "ids must hold integers of dtype torch.int64 or torch.int32; got dtype torch.uint8"),
])
def test_new_helpers_name_argument_value_and_what_is_allowed(check, message):
    with pytest.raises(ValueError, match=message):
        check()


@pytest.mark.parametrize(("call", "message"), [
    (lambda: check_int_in("n", True, 0, 5), r"n must be an integer in \[0, 5\]; got True"),
    (lambda: check_int_in("n", 1.0, 0, 5), r"n must be an integer in \[0, 5\]; got 1.0"),
    (lambda: check_int_in("n", 6, 0, 5, " (why)"), r"n must be an integer in \[0, 5\] \(why\); "
                                                     "got 6"),
    (lambda: check_int_in("n", -1, 0), "n must be an integer >= 0; got -1"),
    (lambda: check_str("s", b"x"), "s must be a string; got bytes b'x'"),
    (lambda: number_array("a", [True, False]), "a must hold numbers .*dtype bool"),
    (lambda: number_array("a", "12"), "a must hold numbers"),
    (lambda: number_array("a", {1, 2}), "a must hold numbers .*dtype object"),
    (lambda: number_array("a", [[1], [1, 2]]), "a must be a rectangular array of numbers"),
])
def test_general_checks_name_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_number_array_accepts_what_holds_numbers():
    check_int_in("n", np.int64(3), 0, 5)  # numpy integers are integers
    grad = torch.ones(2, requires_grad=True)
    assert number_array("a", grad).dtype == np.float32  # a float dtype is kept
    assert number_array("a", [1, 2]).dtype == np.float64
    assert number_array("a", torch.ones(2, dtype=torch.bfloat16)).tolist() == [1.0, 1.0]


def test_file_helpers_name_the_file(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000)
    with pytest.raises(ValueError, match="deep.json must hold JSON nested at most"):
        read_json(tmp_path / "deep.json")
    (tmp_path / "latin1.txt").write_bytes(b"caf\xe9")
    with pytest.raises(ValueError, match="latin1.txt must be UTF-8 text"):
        read_text(tmp_path / "latin1.txt")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(ValueError, match="loop cannot be read: Too many levels"):
        checked_file(tmp_path, "loop", None)
    with pytest.raises(ValueError, match=r"directory must be a path \(str or pathlib.Path\)"):
        checked_file(None, "x", None)
    with pytest.raises(ValueError, match="p must be the path of a file, not its text"):
        checked_path("p", "line one\nline two", None)
    for bad in (1.5, True, -1, 2**64, "3"):
        with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*63 - 1\]"):
            check_seed("seed", bad)


# The refusal a learner meets on purpose in notebook 02 (an input longer than max_len): raised
# by model.py, which imports nothing of bertlib, and still printed in the edition's language.
def test_the_refusal_a_learner_meets_speaks_every_language(model):
    with pytest.raises(ValueError) as caught:
        model(torch.zeros(1, 17, dtype=torch.long), torch.zeros(1, 17, dtype=torch.long))
    err = caught.value
    assert re.match(r"^sequence length 17 exceeds max_len=16, .* at most 16 tokens$", str(err))
    zh = checks.error_message(err, "zh")
    assert re.match(r"^ValueError: 序列长度 17 超过了 max_len=16，.*至多 16 个词元$", zh)
    assert re.findall(r"[A-Za-z_]{3,}", zh.removeprefix("ValueError: ")) == ["max_len"]
    assert checks.error_message(err, "ja").startswith("ValueError: シーケンス長 17 が max_len=16")
    assert checks.error_message(ValueError("other"), "zh") == "ValueError: other"


def test_error_message_prints_any_other_error_as_raised():
    err = ValueError("lang must be one of ['en', 'zh']")
    assert checks.error_message(err, "zh") == "ValueError: lang must be one of ['en', 'zh']"
