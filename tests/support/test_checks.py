"""Bad input gets a ValueError that names the argument, the value and what is allowed: never a
silent wrong answer, never an error from deep inside torch. One case per family the hardening
review found; tests of each module check the rest."""

import math
import re

import numpy as np
import pytest
import torch

from bertlib import (
    BERTConfig,
    BERTModel,
    MaskLM,
    MultiHeadAttention,
    NextSentencePred,
    bert_loss,
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
     "token_ids must be a 1-D tensor of integer ids"),
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


@pytest.mark.parametrize(("change", "message"), [
    (lambda t, s, v, p: (t.float(), s, v, p), "tokens must hold integers"),
    (lambda t, s, v, p: (t.bool(), s, v, p), "tokens must hold integers"),
    (lambda t, s, v, p: (t, s.float(), v, p), "segments must hold integers"),
    (lambda t, s, v, p: (t, s, torch.tensor([3.5, 6.0]), p), "valid_lens must hold integers"),
    (lambda t, s, v, p: (t, s, torch.tensor([math.nan, 6.0]), p), "valid_lens must hold int"),
    (lambda t, s, v, p: (t, s, v, p.float()), "pred_positions must hold integers"),
    (lambda t, s, v, p: (t, s, v, torch.tensor([[1, 4], [1, 2]])),
     r"pred_positions must point at real tokens.*got 4 in sequence 0, whose valid_lens is 3"),
    (lambda t, s, v, p: (t[:, :0], s[:, :0], None, None),
     r"tokens has seq_len 0 \(shape \(2, 0\)\)"),
])
def test_bad_forward_inputs_are_named(model, change, message):
    tokens, segments = batch()
    args = change(tokens, segments, torch.tensor([3, 6]), torch.tensor([[1, 2], [1, 2]]))
    with pytest.raises(ValueError, match=message):
        model(*args)


@pytest.mark.parametrize(("options", "message"), [
    ({"embedding_norm": "no"}, "embedding_norm must be True or False; got 'no'"),
    ({"tie_mlm_decoder": 1}, "tie_mlm_decoder must be True or False"),
    ({"dropout": "0.1"}, r"dropout must be a number in \[0, 1\)"),
    ({"layer_norm_eps": math.nan}, "layer_norm_eps must be a positive finite number"),
    ({"hidden_act": ["relu"]}, "hidden_act must be one of"),
])
def test_config_options_of_the_wrong_kind_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        BERTConfig(**{**SIZES, **options})


@pytest.mark.parametrize(("make", "message"), [
    (lambda: MaskLM(30, 8, hidden_act="swish"), r"hidden_act must be one of \['gelu', 'relu'\]"),
    (lambda: MaskLM(0, 8), "vocab_size must be a positive integer; got 0"),
    (lambda: MaskLM(30, 8, layer_norm_eps=0), "layer_norm_eps must be a positive"),
    (lambda: NextSentencePred(0), "num_inputs must be a positive integer; got 0"),
    (lambda: MultiHeadAttention(8, 0, 0.1), "num_heads must be a positive integer; got 0"),
    (lambda: MultiHeadAttention(8, 3, 0.1), "num_hiddens must be divisible by num_heads"),
    (lambda: MultiHeadAttention(8, 2, 1.5), r"dropout must be a number in \[0, 1\)"),
])
def test_bad_head_arguments_are_named(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_bad_head_inputs_are_named():
    X = torch.randn(2, 5, 8)
    with pytest.raises(ValueError, match="X must have num_inputs = 8 features"):
        MaskLM(30, 8)(torch.randn(2, 5, 7), torch.tensor([[1], [2]]))
    with pytest.raises(ValueError, match="pred_positions must hold integers"):
        MaskLM(30, 8)(X, torch.tensor([[1.0], [2.0]]))
    with pytest.raises(ValueError, match=r"X must have shape \(batch, num_inputs\)"):
        NextSentencePred(8)(X)
    with pytest.raises(ValueError, match="X must hold floating-point numbers"):
        NextSentencePred(8)(torch.ones(2, 8, dtype=torch.long))
    with pytest.raises(ValueError, match="mask must be a .* boolean tensor"):
        MultiHeadAttention(8, 2, 0.0)(X, torch.ones(2, 5))


def test_loss_labels_outside_the_classes_are_named():
    logits, nsp = torch.randn(2, 3, 30), torch.randn(2, 2)
    labels, weights = torch.randint(0, 30, (2, 3)), torch.ones(2, 3)
    with pytest.raises(ValueError, match=r"mlm_labels must be class ids in \[0, 29\]; got 30"):
        bert_loss(logits, labels.index_fill(1, torch.tensor([0]), 30), weights, nsp,
                  torch.tensor([0, 1]))
    with pytest.raises(ValueError, match=r"nsp_labels must be class ids in \[0, 1\]; got 2"):
        bert_loss(logits, labels, weights, nsp, torch.tensor([0, 2]))
    with pytest.raises(ValueError, match="mlm_labels must hold integers"):
        bert_loss(logits, labels.float(), weights, nsp, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="mlm_weights must be finite"):
        bert_loss(logits, labels, weights.index_fill(1, torch.tensor([0]), math.nan), nsp,
                  torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="mlm_weights must be weights >= 0"):
        bert_loss(logits, labels, -weights, nsp, torch.tensor([0, 1]))


def test_attention_that_would_not_fit_in_memory_is_refused_up_front():
    model = BERTModel(30, 8, 16, 4, 6, 0.0, max_len=512).eval()
    tokens = torch.randint(5, 30, (64, 512))
    # 6 blocks x 64 sequences x 4 heads x 512 x 512 x 4 bytes = 1.5 GiB
    with pytest.raises(ValueError, match=r"return_attention=True would keep 1.5 GiB of attention "
                                         r"weights for 64 sequences of 512 tokens \(at most 1 "
                                         r"GiB\): ask for fewer or shorter ones$"):
        model.encoder(tokens, torch.zeros_like(tokens), return_attention=True)
    _, attentions = model.encoder(tokens[:2, :64], torch.zeros(2, 64, dtype=torch.long),
                                  return_attention=True)  # a small request still works
    assert attentions[0].shape == (2, 4, 64, 64)


def test_attention_exactly_at_the_memory_limit_is_allowed(monkeypatch):
    model = BERTModel(30, 8, 16, 4, 6, 0.0, max_len=64).eval()
    tokens = torch.randint(5, 30, (2, 64))
    monkeypatch.setattr("bertlib.model.ATTENTION_MAX_BYTES", 6 * 2 * 4 * 64 * 64 * 4)  # the need
    model.encoder(tokens, torch.zeros_like(tokens), return_attention=True)


@pytest.mark.parametrize(("module", "X", "message"), [
    (MultiHeadAttention(8, 2, 0.0), torch.randn(5, 8),
     r"^X must have shape \(batch, seq_len, num_hiddens\); got shape \(5, 8\)$"),
    (MultiHeadAttention(8, 2, 0.0), torch.randn(2, 5, 6),
     r"^X must have num_hiddens = 8 features in its last dimension; got shape \(2, 5, 6\)$"),
    (MultiHeadAttention(8, 2, 0.0), torch.full((2, 5, 8), math.nan),
     "^X must be finite; it holds NaN or infinite values$"),
    (NextSentencePred(8), torch.randn(2, 5, 8),
     r"^X must have shape \(batch, num_inputs\); got shape \(2, 5, 8\)$"),
    (NextSentencePred(8), torch.randn(2, 6),
     r"^X must have num_inputs = 8 features in its last dimension; got shape \(2, 6\)$"),
])
def test_module_messages_name_the_input_and_its_shape_exactly(module, X, message):
    with pytest.raises(ValueError, match=message):
        module(X, None) if isinstance(module, MultiHeadAttention) else module(X)


@pytest.mark.parametrize(("mask", "got"), [
    (torch.ones(2, 5), r"torch.float32 of shape \(2, 5\)"),
    ([[True] * 5] * 2, r"list of shape \(\)"),
    (torch.ones(2, 4, dtype=torch.bool), r"torch.bool of shape \(2, 4\)"),
])
def test_a_bad_key_mask_is_described(mask, got):
    with pytest.raises(ValueError, match=rf"^mask must be a \(batch, seq_len\) = \(2, 5\) boolean "
                                         rf"tensor, True at real keys; got {got}$"):
        MultiHeadAttention(8, 2, 0.0)(torch.randn(2, 5, 8), mask)


@pytest.mark.parametrize(("check", "message"), [
    (lambda: checks.check_seed("seed", 1.0), r"seed must be an integer in \[0, 2\*\*63 - 1\]"),
    (lambda: checks.check_seed("seed", False), "seed must be an integer"),
    (lambda: checks.check_seed("seed", 2**63), "seed must be an integer"),
    (lambda: checks.check_instance("vocab", [1], dict, "a dict"),
     "vocab must be a dict; got list"),
    (lambda: checks.check_str("text", b"x"), "text must be a string; got bytes"),
    (lambda: checks.check_integer_dtype("ids", torch.zeros(2, dtype=torch.uint8)),
     "ids must hold integers of dtype torch.int64 or torch.int32; got dtype torch.uint8"),
    (lambda: checks.check_integer_dtype("labels", torch.zeros(2, dtype=torch.int32),
                                        (torch.int64,)),
     "labels must hold integers of dtype torch.int64; got dtype torch.int32"),
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


# The refusals a learner meets on purpose in the notebooks (02: too long; 05: a flattened NSP
# input of the wrong width) and the shape mismatch of a hand-built batch, in both languages.
@pytest.mark.parametrize(("call", "english", "chinese"), [
    (lambda m: m(torch.zeros(1, 17, dtype=torch.long), torch.zeros(1, 17, dtype=torch.long)),
     r"^sequence length 17 exceeds max_len=16, .* at most 16 tokens$",
     r"^序列长度 17 超过了 max_len=16，.*至多 16 个词元$"),
    (lambda m: m(torch.zeros(2, 5, dtype=torch.long), torch.zeros(2, 4, dtype=torch.long)),
     r"^tokens and segments must have the same shape .* got tokens \(2, 5\) and segments "
     r"\(2, 4\)$",
     r"^tokens 和 segments 的形状必须相同.*tokens 的形状是 \(2, 5\)，segments 的形状是 \(2, 4\)$"),
    (lambda m: NextSentencePred(8)(torch.randn(2, 6)),
     r"^X must have num_inputs = 8 features in its last dimension; got shape \(2, 6\)$",
     r"^X 的最后一维应有 num_inputs = 8 个特征，实际形状却是 \(2, 6\)$"),
])
def test_the_refusals_a_learner_meets_speak_both_languages(model, call, english, chinese):
    with pytest.raises(checks.InputError) as caught:
        call(model)
    err = caught.value
    assert isinstance(err, ValueError)  # caught by `except ValueError`, as every refusal is
    assert re.match(english, str(err)) and re.match(english, err.message("en"))
    assert re.match(chinese, err.message("zh"))
    # Nothing English in the Chinese message but argument names and numbers.
    words = re.findall(r"[A-Za-z_]{3,}", err.message("zh"))
    assert set(words) <= {"max_len", "tokens", "segments", "num_inputs"}, words
    assert checks.error_message(err, "zh") == f"ValueError: {err.message('zh')}"


def test_error_message_prints_any_other_error_as_raised():
    err = ValueError("lang must be one of ['en', 'zh']")
    assert checks.error_message(err, "zh") == "ValueError: lang must be one of ['en', 'zh']"
