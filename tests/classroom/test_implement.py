"""The implement-it exercises: for each, bertlib's function and one written by hand pass, and
typical wrong versions fail on the case meant to catch them, in the notebook's language."""

import functools
import math
import sys

import pytest
import torch
import torch.nn.functional as F
from conftest import unfill

from bertlib.classroom import implement
from bertlib.classroom.implement import (
    IMPLEMENTATIONS,
    check_implementation,
    hints,
    implementation_problem,
)
from bertlib.data import make_nsp_pairs
from bertlib.finetuning.finetune import task_loss
from bertlib.finetuning.tasks import IGNORE
from bertlib.inputs import get_tokens_and_segments
from bertlib.support.i18n import LANGUAGES, set_language, text


@pytest.fixture(autouse=True)
def designed_cases(request, monkeypatch):
    """The cases of seed 0, whose values the tests below name; a check draws a fresh seed
    (tests marked ``fresh_seeds`` keep that)."""
    if request.node.get_closest_marker("fresh_seeds") is None:
        monkeypatch.setattr(implement, "fresh_seed", lambda: 0)


@pytest.fixture(params=LANGUAGES)
def lang(request):
    """The edition's language, set as a notebook's first cell sets it."""
    set_language(request.param)
    return request.param


def quoted(name: str, lang: str) -> str:
    """A case's name as the verdict quotes it: “name” (English, Chinese), 「name」 (Japanese)."""
    return f"「{name}」" if lang == "ja" else f"“{name}”"


def test_every_exercise_has_cases_and_staged_hints_in_every_language():
    for key, exercise in IMPLEMENTATIONS.items():
        cases = exercise.cases()
        assert len(cases) >= 3
        assert all(set(names) == set(LANGUAGES) for names, _ in cases)
        for lang in LANGUAGES:
            staged = hints(key, lang)
            assert len(staged) >= 3 and len(set(staged)) == len(staged)
            # The recipe comes last: the longest, the one that names the most of the code.
            assert len(staged[-1]) == max(map(len, staged))


# ---------------------------------------------------------------- 10: the tagging loss
def loss_by_hand(Y_hat, labels):
    """The right answer written independently of bertlib: log-softmax by hand, then the mean
    over labelled positions."""
    log_p = Y_hat - Y_hat.logsumexp(-1, keepdim=True)
    keep = labels != IGNORE
    picked = log_p[keep].gather(1, labels[keep][:, None])
    return -picked.mean()


def mean_over_all_positions(Y_hat, labels):  # padding and specials counted as class 0
    return F.cross_entropy(Y_hat.reshape(-1, Y_hat.shape[-1]), labels.clamp_min(0).reshape(-1))


def mean_per_sentence(Y_hat, labels):  # every sentence weighs the same, whatever its length
    per_token = F.cross_entropy(Y_hat.transpose(1, 2), labels, ignore_index=IGNORE,
                                reduction="none")
    keep = (labels != IGNORE).float()
    return ((per_token * keep).sum(1) / keep.sum(1)).mean()


def naive_softmax(Y_hat, labels):  # exp overflows for large logits
    p = Y_hat.exp() / Y_hat.exp().sum(-1, keepdim=True)
    keep = labels != IGNORE
    return -p[keep].gather(1, labels[keep][:, None]).log().mean()


def summed(Y_hat, labels):  # a sum, not a mean
    return F.cross_entropy(Y_hat.reshape(-1, Y_hat.shape[-1]), labels.reshape(-1),
                           ignore_index=IGNORE, reduction="sum")


def unfinished(Y_hat, labels):
    raise NotImplementedError


def test_the_cases_agree_with_a_loss_written_by_hand():
    for _, args in IMPLEMENTATIONS["11_tagging_loss"].cases():
        assert torch.allclose(task_loss(*args), loss_by_hand(*args), rtol=1e-5)


def test_bertlib_and_a_hand_written_loss_pass(lang, capsys):
    assert implementation_problem("11_tagging_loss", task_loss) == text(
        "ex_impl_reference", lang, name="task_loss")
    assert implementation_problem("11_tagging_loss", loss_by_hand) is None
    check_implementation("11_tagging_loss", loss_by_hand)
    assert unfill(capsys.readouterr().out).strip() == text("ex_impl_correct", lang, count=5)


@pytest.mark.parametrize("wrong, case", [
    (mean_over_all_positions, {"en": "one sentence, no padding", "zh": "一个句子，没有填充",
        "ja": "文が 1 つ、パディングなし"}),
    (mean_per_sentence, {"en": "two sentences, the second padded", "zh": "两个句子，第二个有填充",
        "ja": "文が 2 つ、2 つ目にパディングあり"}),
    (naive_softmax, {"en": "large logits (up to 1000)", "zh": "很大的 logits（可达 1000）",
        "ja": "大きなロジット（最大 1000）"}),
    (summed, {"en": "one sentence, no padding", "zh": "一个句子，没有填充",
        "ja": "文が 1 つ、パディングなし"}),
])
def test_typical_wrong_versions_fail_naming_the_case(wrong, case, lang, capsys):
    check_implementation("11_tagging_loss", wrong)
    out = unfill(capsys.readouterr().out)
    assert out.startswith("×") and quoted(case[lang], lang) in out
    assert "hint=1" in out and hints("11_tagging_loss", lang)[-1] not in out


def test_errors_shapes_and_unfinished_functions_are_explained(lang, capsys):
    check_implementation("11_tagging_loss", unfinished)
    assert unfill(capsys.readouterr().out).strip() == text("ex_impl_missing", lang)
    problem = implementation_problem("11_tagging_loss", lambda Y_hat, labels: Y_hat.sum(-1))
    assert problem.startswith("×") and "()" in problem and "(1, 6)" in problem
    problem = implementation_problem("11_tagging_loss", lambda Y_hat, labels: 1 / 0)
    assert "ZeroDivisionError" in problem
    with pytest.raises(ValueError, match=r"key must be one of \[.*\]; got '10_nope'"):
        check_implementation("10_nope", task_loss)
    with pytest.raises(ValueError, match="function must be a function; got int"):
        check_implementation("11_tagging_loss", 3)


# ---------------------------------------------------------------- how a difference is told
def test_every_kind_of_difference_is_named(lang):
    from bertlib.classroom.implement import _difference as diff

    ints = torch.tensor([[1, 2], [3, 4]])
    assert diff(ints, ints.clone(), "r", lang) is None
    assert diff((ints, [1, "a"]), [ints, (1, "a")], "r", lang) is None  # list or tuple alike
    assert "(2, 2)" in diff(ints, ints[0], "r", lang)
    assert "torch.float32" in diff(ints, ints.float(), "r", lang)
    wrong = ints.clone()
    wrong[1, 0] = 9
    assert diff(ints, wrong, "r", lang) == text("ex_impl_item", lang, where="r[1, 0]",
                                                expected=3, got=9)
    assert "list(len=2)" in diff([1, 2], [1], "r", lang)
    assert "Tensor(shape=(2, 2)" in diff(ints, ints.tolist(), "r", lang)
    assert diff(["<cls>", "a"], ["<cls>", "b"], "r", lang) == text(
        "ex_impl_item", lang, where="r[1]", expected="'a'", got="'b'")
    assert diff(3, True, "r", lang) is not None  # a bool is not a count
    assert diff(0.5, 0.5 + 1e-7, "r", lang) is None
    assert diff(0.5, 0.6, "r", lang) == text("ex_impl_value", lang, where="r", expected=0.5,
                                             got=0.6)
    floats = torch.tensor([0.0, float("nan")])  # NaN is a difference, named where it is
    assert diff(torch.zeros(2), floats, "r", lang) == text("ex_impl_value", lang, where="r[1]",
                                                           expected=0.0, got=float("nan"))


# ---------------------------------------------------------------- 02: <cls> A <sep> B <sep>
def pair_by_hand(tokens_a, tokens_b=None):
    """The right answer written independently of bertlib."""
    tokens, segments = ["<cls>"], [0]
    for segment, text_tokens in enumerate([tokens_a] if tokens_b is None else [tokens_a, tokens_b]):
        tokens += [*text_tokens, "<sep>"]
        segments += [segment] * (len(text_tokens) + 1)
    return tokens, segments


def no_sep_after_b(tokens_a, tokens_b=None):
    tokens, segments = ["<cls>", *tokens_a, "<sep>"], [0] * (len(tokens_a) + 2)
    if tokens_b is not None:
        tokens += tokens_b
        segments += [1] * len(tokens_b)
    return tokens, segments


def b_sep_in_segment_0(tokens_a, tokens_b=None):
    tokens, segments = pair_by_hand(tokens_a, tokens_b)
    return tokens, [*segments[:-1], 0] if tokens_b is not None else segments


def cls_in_segment_1(tokens_a, tokens_b=None):
    tokens, segments = pair_by_hand(tokens_a, tokens_b)
    return tokens, [1, *segments[1:]]


def empty_b_taken_for_none(tokens_a, tokens_b=None):  # `if tokens_b:` instead of `is not None`
    return pair_by_hand(tokens_a, tokens_b or None)


def test_bertlib_and_a_hand_written_pair_builder_pass(lang, capsys):
    assert "get_tokens_and_segments" in implementation_problem("02_tokens_and_segments",
                                                               get_tokens_and_segments)
    check_implementation("02_tokens_and_segments", pair_by_hand)
    assert unfill(capsys.readouterr().out).strip() == text("ex_impl_correct", lang, count=5)


@pytest.mark.parametrize("wrong, case", [
    (no_sep_after_b, {"en": "a pair of texts", "zh": "一个文本对",
        "ja": "テキストのペア"}),
    (b_sep_in_segment_0, {"en": "a pair of texts", "zh": "一个文本对",
        "ja": "テキストのペア"}),
    (cls_in_segment_1, {"en": "one text (tokens_b is None)", "zh": "单个文本（tokens_b 为 None）",
        "ja": "テキストが 1 つ（tokens_b は None）"}),
    (empty_b_taken_for_none, {"en": "an empty sentence B ([], not None)",
                              "zh": "空的句子 B（是 []，不是 None）",
        "ja": "空の文 B（None ではなく []）"}),
])
def test_typical_wrong_pair_builders_fail_naming_the_case(wrong, case, lang, capsys):
    check_implementation("02_tokens_and_segments", wrong)
    out = unfill(capsys.readouterr().out)
    assert out.startswith("×") and quoted(case[lang], lang) in out
    assert "hint=1" in out and hints("02_tokens_and_segments", lang)[-1] not in out


def test_a_wrong_segment_id_is_named_by_its_position(lang):
    problem = implementation_problem("02_tokens_and_segments", b_sep_in_segment_0, lang)
    where = text("ex_impl_result", lang) + "[1][8]"  # the segments, at B's <sep>
    assert text("ex_impl_item", lang, where=where, expected=1, got=0) in problem


# ---------------------------------------------------------------- 02: WordPiece, one word
def wordpiece_by_hand(word, pieces, *, longest=True, prefix="##", back=False, partial=False):
    """Greedy longest match written independently of bertlib and of tokenizers; the keywords
    make the typical wrong versions: shortest piece first, no "##" inside a word, trying
    another split when the greedy one gets stuck, or <unk> for the rest only."""
    if back:  # any split into known pieces, found by search: not what BERT does
        def splits(start):
            if start == len(word):
                return []
            for end in range(len(word), start, -1):
                piece = (prefix if start else "") + word[start:end]
                if piece in pieces and (rest := splits(end)) is not None:
                    return [piece, *rest]
            return None
        return splits(0) or ["<unk>"]
    out, start = [], 0
    while start < len(word):
        ends = range(len(word), start, -1) if longest else range(start + 1, len(word) + 1)
        piece = next((p for end in ends if (p := (prefix if start else "") + word[start:end])
                      in pieces), None)
        if piece is None:
            return [*out, "<unk>"] if partial else ["<unk>"]
        out.append(piece)
        start += len(piece) - (len(prefix) if start else 0)
    return out


def test_the_wordpiece_cases_agree_with_greedy_longest_match_by_hand():
    """tokenizers' WordPiece and the hand-written greedy match agree on every case, and on the
    made-up vocabularies the answers are the ones worked out on paper."""
    cases = IMPLEMENTATIONS["02_wordpiece"].cases()
    for _, (word, pieces) in cases:
        assert IMPLEMENTATIONS["02_wordpiece"].reference(word, pieces) == wordpiece_by_hand(
            word, pieces)
    by_hand = {"hugs": ["hug", "##s"], "abcd": ["<unk>"], "unable": ["<unk>"],
               "visited": ["visit", "##ed"], "球": ["球"], "咖": ["<unk>"], "zanzibar": ["<unk>"]}
    for _, (word, pieces) in cases:
        if word in by_hand:
            assert wordpiece_by_hand(word, pieces) == by_hand[word], word
    assert {"咖", "球", "zanzibar", "abcd"} <= {word for _, (word, _) in cases}


def test_bertlib_and_a_hand_written_wordpiece_pass(lang, capsys):
    check_implementation("02_wordpiece", wordpiece_by_hand)
    count = len(IMPLEMENTATIONS["02_wordpiece"].cases())
    assert unfill(capsys.readouterr().out).strip() == text("ex_impl_correct", lang, count=count)


@pytest.mark.parametrize("mistake, word", [
    ({"longest": False}, "visited"),  # "v", "##i", ...
    ({"prefix": ""}, "visited"),  # "ed" instead of "##ed"
    ({"back": True}, "abcd"),  # "a", "##bc", "##d": a split BERT never tries
    ({"partial": True}, "abcd"),  # "ab", "<unk>": the whole word must become <unk>
])
def test_typical_wrong_wordpiece_versions_fail_naming_the_case(mistake, word, lang, capsys):
    cases = IMPLEMENTATIONS["02_wordpiece"].cases()
    first_wrong = next(names for names, (w, pieces) in cases
                       if wordpiece_by_hand(w, pieces, **mistake) != wordpiece_by_hand(w, pieces))
    check_implementation("02_wordpiece", lambda w, pieces: wordpiece_by_hand(w, pieces, **mistake))
    _named("02_wordpiece", first_wrong, lang, capsys)
    assert word in first_wrong["en"]


def test_calling_the_tokenizer_or_the_tokenizers_library_is_refused(lang, capsys):
    """The library does the greedy match in compiled code: calling it, through bertlib or
    directly, is refused like bertlib's own functions."""
    from bertlib.text.tokenizer import WordPieceTokenizer

    def through_bertlib(word, pieces):
        return WordPieceTokenizer.from_tokens(["<pad>", "<unk>", "<cls>", "<sep>", "<mask>",
                                               *sorted(pieces)]).tokenize(word)

    def through_tokenizers(word, pieces):
        from tokenizers.models import WordPiece
        model = WordPiece({p: i for i, p in enumerate(["<unk>", *sorted(pieces)])},
                          unk_token="<unk>")
        return [t.value for t in model.tokenize(word)]

    assert implementation_problem("02_wordpiece", through_bertlib, lang) == text(
        "ex_impl_reference", lang, name="WordPieceTokenizer.from_tokens")
    assert implementation_problem("02_wordpiece", through_tokenizers, lang) == text(
        "ex_impl_library", lang, name="WordPiece.tokenize", library="tokenizers")


# ---------------------------------------------------------------- 03: the key padding mask
def weights_by_hand(attention, X, valid_lens):
    """The right answer written independently of bertlib: per-head scores with einsum, the
    softmax over real keys only."""
    B, T, H = X.shape
    nh = attention.num_heads
    q, k = (W(X).reshape(B, T, nh, H // nh) for W in (attention.W_q, attention.W_k))
    scores = torch.einsum("bihd,bjhd->bhij", q, k) / (H // nh) ** 0.5
    real = torch.ones(B, T, dtype=torch.bool)
    if valid_lens is not None:
        real = torch.stack([torch.arange(T) < n for n in valid_lens.tolist()])
    e = torch.where(real[:, None, None, :], (scores - scores.amax(-1, keepdim=True)).exp(), 0.0)
    return e / e.sum(-1, keepdim=True)


def masked_weights(attention, X, valid_lens, *, keys=True, strict=True, fill=float("-inf")):
    """A version whose mask can be put on the queries, be off by one, or fill with 0."""
    B, T, H = X.shape
    nh = attention.num_heads
    q, k = (W(X).view(B, T, nh, H // nh).transpose(1, 2) for W in (attention.W_q, attention.W_k))
    scores = q @ k.transpose(-2, -1) / math.sqrt(H // nh)
    if valid_lens is not None:
        positions = torch.arange(T)
        real = positions < valid_lens[:, None] if strict else positions <= valid_lens[:, None]
        shape = (B, 1, 1, T) if keys else (B, 1, T, 1)
        scores = scores.masked_fill(~real.view(shape), fill)
    return scores.softmax(-1)


def test_bertlib_and_hand_written_attention_weights_pass(lang, capsys):
    assert implementation_problem("03_attention_weights", masked_weights) is None
    assert "MultiHeadAttention.forward" in implementation_problem(
        "03_attention_weights", lambda attention, X, valid_lens: attention(
            X, None if valid_lens is None else torch.arange(X.shape[1]) < valid_lens[:, None],
            need_weights=True)[1])
    check_implementation("03_attention_weights", weights_by_hand)
    assert unfill(capsys.readouterr().out).strip() == text("ex_impl_correct", lang, count=5)
    for _, args in IMPLEMENTATIONS["03_attention_weights"].cases():
        weights = IMPLEMENTATIONS["03_attention_weights"].reference(*args)
        if args[2] is not None:  # padded keys get exactly 0
            T = args[1].shape[1]
            padded = torch.arange(T) >= args[2][:, None]
            assert (weights.detach().permute(0, 2, 3, 1)[padded[:, None, :].expand(-1, T, -1)]
                    == 0).all()


PADDED = {"en": "the second sequence padded (5 real tokens of 8)",
          "zh": "第二个序列有填充（8 个位置中 5 个是真实词元）",
        "ja": "2 つ目の系列にパディングあり（8 位置のうち実トークンは 5 つ）"}


@pytest.mark.parametrize("wrong, case", [
    (functools.partial(masked_weights, keys=False), PADDED),  # masks queries: NaN rows
    (functools.partial(masked_weights, strict=False), PADDED),  # <= keeps one padded key
    (functools.partial(masked_weights, fill=0.0), PADDED),  # a score of 0 is not no weight
    (lambda attention, X, valid_lens: masked_weights(attention, X, None), PADDED),
    (lambda attention, X, valid_lens: masked_weights(attention, X, valid_lens)[:, 0], PADDED
     | {"en": "two sequences, no padding", "zh": "两个序列，没有填充",
        "ja": "系列が 2 つ、パディングなし"}),  # one head only
])
def test_typical_wrong_masks_fail_naming_the_case(wrong, case, lang, capsys):
    check_implementation("03_attention_weights", wrong)
    out = unfill(capsys.readouterr().out)
    assert out.startswith("×") and quoted(case[lang], lang) in out
    assert "hint=1" in out and hints("03_attention_weights", lang)[-1] not in out


# ---------------------------------------------------------------- 06: the weighted MLM loss
def mlm_loss_by_hand(mlm_Y_hat, mlm_Y, mlm_weights):
    """The right answer written independently of bertlib: log-softmax by hand, each slot's
    negative log-likelihood weighted, the sum divided by the sum of the weights."""
    log_p = mlm_Y_hat - mlm_Y_hat.logsumexp(-1, keepdim=True)
    nll = -log_p.gather(2, mlm_Y[..., None]).squeeze(2)  # (B, P)
    return (nll * mlm_weights).sum() / mlm_weights.sum()


def _per_slot(mlm_Y_hat, mlm_Y):
    return F.cross_entropy(mlm_Y_hat.reshape(-1, mlm_Y_hat.shape[-1]), mlm_Y.reshape(-1),
                           reduction="none")


def mlm_mean_over_all_slots(mlm_Y_hat, mlm_Y, mlm_weights):  # padded slots count in the mean
    return (_per_slot(mlm_Y_hat, mlm_Y) * mlm_weights.reshape(-1)).mean()


def mlm_weights_ignored(mlm_Y_hat, mlm_Y, mlm_weights):  # padded slots predicted as token 0
    return _per_slot(mlm_Y_hat, mlm_Y).mean()


def mlm_chapter_mean_reduced(mlm_Y_hat, mlm_Y, mlm_weights):
    """The chapter's PyTorch code: a mean-reduced loss is a scalar, so the weights cancel out."""
    loss = F.cross_entropy(mlm_Y_hat.reshape(-1, mlm_Y_hat.shape[-1]), mlm_Y.reshape(-1))
    w = mlm_weights.reshape(-1)
    return (loss * w).sum() / (w.sum() + 1e-8)


def mlm_summed(mlm_Y_hat, mlm_Y, mlm_weights):  # a sum, not a mean
    return (_per_slot(mlm_Y_hat, mlm_Y) * mlm_weights.reshape(-1)).sum()


def mlm_naive_softmax(mlm_Y_hat, mlm_Y, mlm_weights):  # exp overflows for large logits
    p = mlm_Y_hat.exp() / mlm_Y_hat.exp().sum(-1, keepdim=True)
    nll = -p.gather(2, mlm_Y[..., None]).squeeze(2).log()
    return (nll * mlm_weights).sum() / mlm_weights.sum()


def test_the_mlm_cases_agree_with_a_loss_written_by_hand():
    reference = IMPLEMENTATIONS["06_mlm_loss"].reference
    for _, args in IMPLEMENTATIONS["06_mlm_loss"].cases():
        assert torch.allclose(reference(*args), mlm_loss_by_hand(*args), rtol=1e-5)


def test_bertlib_and_a_hand_written_mlm_loss_pass(lang, capsys):
    assert "_mlm_loss" in implementation_problem("06_mlm_loss",
                                                 IMPLEMENTATIONS["06_mlm_loss"].reference)
    assert implementation_problem("06_mlm_loss", mlm_loss_by_hand) is None
    check_implementation("06_mlm_loss", mlm_loss_by_hand)
    assert unfill(capsys.readouterr().out).strip() == text("ex_impl_correct", lang, count=4)


NO_PADDING = {"en": "one sequence, every slot real", "zh": "一个序列，每个预测位置都是真实的",
        "ja": "系列が 1 つ、予測位置はすべて実トークン"}
PADDED = {"en": "two sequences, the second with padded slots",
          "zh": "两个序列，第二个有填充的预测位置",
        "ja": "系列が 2 つ、2 つ目にパディングされた予測位置あり"}


@pytest.mark.parametrize("wrong, case", [
    (mlm_mean_over_all_slots, PADDED),
    (mlm_weights_ignored, PADDED),
    (mlm_chapter_mean_reduced, PADDED),
    (mlm_summed, NO_PADDING),
    (mlm_naive_softmax, {"en": "large logits (up to 1000)", "zh": "很大的 logits（可达 1000）",
        "ja": "大きなロジット（最大 1000）"}),
])
def test_typical_wrong_mlm_losses_fail_naming_the_case(wrong, case, lang, capsys):
    check_implementation("06_mlm_loss", wrong)
    out = unfill(capsys.readouterr().out)
    assert out.startswith("×") and quoted(case[lang], lang) in out
    assert "hint=1" in out and hints("06_mlm_loss", lang)[-1] not in out


# ---------------------------------------------------------------- 04: the MLM gather
def _named(key, case, lang, capsys):
    """The last check_implementation printed a failure naming ``case``, pointing to the
    hints without giving the recipe away."""
    out = unfill(capsys.readouterr().out)
    assert out.startswith("×") and quoted(case[lang], lang) in out, out
    assert "hint=1" in out and hints(key, lang)[-1] not in out


def gather_by_loop(X, pred_positions):
    """The right answer, one row at a time."""
    B, P = pred_positions.shape
    return torch.stack([torch.stack([X[b, pred_positions[b, p]] for p in range(P)])
                        for b in range(B)])


def gather_flat_with_offset(X, pred_positions):
    """The right answer the chapter's way: flat indices, each sequence offset by b * T."""
    B, T, H = X.shape
    flat = (pred_positions + T * torch.arange(B)[:, None]).reshape(-1)
    return X.reshape(B * T, H)[flat].reshape(B, -1, H)


def gather_every_sequence(X, pred_positions):  # (B, B, P, H): all positions on all sequences
    return X[:, pred_positions]


def gather_flat_without_offset(X, pred_positions):  # every row taken from sequence 0
    B, T, H = X.shape
    return X.reshape(B * T, H)[pred_positions.reshape(-1)].reshape(B, -1, H)


def gather_batch_on_the_wrong_axis(X, pred_positions):  # arange(B) broadcasts along P
    return X[torch.arange(X.shape[0]), pred_positions]


def gather_zeroing_padded_slots(X, pred_positions):  # padding is the weights' job, not this
    out = X[torch.arange(X.shape[0])[:, None], pred_positions]
    out[pred_positions == 0] = 0
    return out


def test_gather_bertlib_and_hand_written_versions_pass(lang, capsys):
    """The reference is what MaskLM itself gathers; a loop written here agrees on every case."""
    for _, (X, positions) in IMPLEMENTATIONS["04_mlm_gather"].cases():
        assert torch.equal(gather_by_loop(X, positions), IMPLEMENTATIONS["04_mlm_gather"]
                           .reference(X, positions))
    state = torch.get_rng_state()
    assert "MaskLM.gather" in implementation_problem("04_mlm_gather",
                                                     IMPLEMENTATIONS["04_mlm_gather"].reference)
    assert torch.equal(state, torch.get_rng_state())  # the head's init left no trace
    for right in (gather_by_loop, gather_flat_with_offset):
        check_implementation("04_mlm_gather", right)
        assert unfill(capsys.readouterr().out).strip() == text("ex_impl_correct", lang, count=4)


ONE = {"en": "one sequence", "zh": "一个序列",
        "ja": "系列が 1 つ"}
TWO = {"en": "two sequences, two positions each", "zh": "两个序列，各有两个预测位置",
        "ja": "系列が 2 つ、それぞれ予測位置が 2 つ"}
PADDED = {"en": "padded slots (position 0) and a position repeated",
          "zh": "有填充的预测位置（位置 0），还有一个重复的位置",
        "ja": "パディングされた予測位置（位置 0）と、繰り返される位置"}


@pytest.mark.parametrize("wrong, case", [
    (gather_every_sequence, ONE),
    (gather_flat_without_offset, TWO),
    (gather_batch_on_the_wrong_axis, TWO),
    (gather_zeroing_padded_slots, PADDED),
])
def test_gather_typical_wrong_versions_fail_naming_the_case(wrong, case, lang, capsys):
    check_implementation("04_mlm_gather", wrong)
    _named("04_mlm_gather", case, lang, capsys)


# ---------------------------------------------------------------- 05: the NSP pair builder
def pairs_by_hand(paragraphs, max_len, seed, *, last=1, room=3, drop=True):
    """The chapter's _get_nsp_data_from_paragraph over every paragraph, written here; the
    keywords make the typical mistakes: ``last=2`` forgets the last pair of a paragraph,
    ``room=2`` counts one <sep> (``room=4`` one too many), ``drop=False`` keeps pairs that are
    too long."""
    from bertlib import get_tokens_and_segments
    from bertlib.data import get_next_sentence

    g = torch.Generator().manual_seed(seed)
    out = []
    for index, paragraph in enumerate(paragraphs):
        for i in range(len(paragraph) - last):
            a, b, is_next = get_next_sentence(paragraph[i], paragraph[i + 1], paragraphs,
                                              index, g)
            if drop and len(a) + len(b) + room > max_len:
                continue
            tokens, segments = get_tokens_and_segments(a, b)
            out.append((tokens, segments, is_next))
    return out


def test_nsp_pairs_bertlib_and_hand_written_versions_pass(lang, capsys):
    assert "make_nsp_pairs" in implementation_problem(
        "05_nsp_pair_builder", lambda paragraphs, max_len, seed: make_nsp_pairs(
            paragraphs, max_len, overflow="drop", seed=seed))
    check_implementation("05_nsp_pair_builder", pairs_by_hand)
    assert unfill(capsys.readouterr().out).strip() == text("ex_impl_correct", lang, count=5)
    # The cases hold what they promise: no pair, all kept, all but a short NotNext dropped.
    cases = IMPLEMENTATIONS["05_nsp_pair_builder"].cases()
    lengths = [len(pairs_by_hand(*args)) for _, args in cases]
    assert lengths == [9, 7, 4, 1, 16]
    assert {p[2] for _, args in cases for p in pairs_by_hand(*args)} == {0, 1}


@pytest.mark.parametrize("mistake, case", [
    ({"last": 2}, {"en": "three paragraphs of 4 sentences", "zh": "三个段落，各有 4 个句子",
        "ja": "4 文の段落が 3 つ"}),
    ({"room": 2}, {"en": "pairs one token longer than max_len: dropped",
                   "zh": "比 max_len 多一个词元的句子对：丢弃",
        "ja": "max_len より 1 トークン長いペア：捨てられる"}),
    ({"drop": False}, {"en": "pairs one token longer than max_len: dropped",
                       "zh": "比 max_len 多一个词元的句子对：丢弃",
        "ja": "max_len より 1 トークン長いペア：捨てられる"}),
    ({"room": 4}, {"en": "every pair exactly max_len tokens long: all kept",
                   "zh": "每个句子对恰好 max_len 个词元：全部保留",
        "ja": "どのペアもちょうど max_len トークン：すべて残る"}),
])
def test_nsp_pairs_typical_wrong_versions_fail_naming_the_case(mistake, case, lang, capsys):
    check_implementation("05_nsp_pair_builder", lambda *args: pairs_by_hand(*args, **mistake))
    _named("05_nsp_pair_builder", case, lang, capsys)


# ---------------------------------------------------------------- 10: the best answer span
def span_by_loops(scores, allowed, max_answer_len, *, together=True, inside=True, longest=None):
    """Every (i, j) tried in a loop, written independently of bertlib; the keywords make the
    typical wrong versions: start and end chosen each on its own, the text ignored, or the
    length bound off by one."""
    limit = max_answer_len if longest is None else longest
    out = []
    for b in range(scores.shape[0]):
        ok = [i for i in range(scores.shape[2]) if allowed[b, i] or not inside]
        if not together:
            out.append([max(ok, key=lambda i: scores[b, 0, i]),
                        max(ok, key=lambda j: scores[b, 1, j])])
            continue
        best = max((float(scores[b, 0, i] + scores[b, 1, j]), i, j) for i in ok for j in ok
                   if 0 <= j - i < limit)
        out.append([best[1], best[2]])
    return torch.tensor(out)


def test_the_span_cases_agree_with_loops_by_hand():
    for _, args in IMPLEMENTATIONS["11_best_span"].cases():
        assert torch.equal(IMPLEMENTATIONS["11_best_span"].reference(*args), span_by_loops(*args))


def test_bertlib_and_a_hand_written_best_span_pass(lang, capsys):
    check_implementation("11_best_span", span_by_loops)
    count = len(IMPLEMENTATIONS["11_best_span"].cases())
    assert unfill(capsys.readouterr().out).strip() == text("ex_impl_correct", lang, count=count)
    from bertlib.finetuning.finetune import best_span
    assert implementation_problem("11_best_span", best_span, lang) == text(
        "ex_impl_reference", lang, name="best_span")


@pytest.mark.parametrize("mistake, case", [
    ({"together": False}, {"en": "the best start comes after the best end",
                           "zh": "最好的起点在最好的终点之后",
        "ja": "最良の開始位置が最良の終了位置より後ろにある"}),
    ({"inside": False}, {"en": "the best scores are outside the text",
                         "zh": "最高的分数落在文本之外",
        "ja": "最高のスコアがテキストの外にある"}),
    ({"longest": 4}, {"en": "answers of at most 3 tokens", "zh": "答案最多 3 个词元",
        "ja": "答えは最大 3 トークン"}),
])
def test_typical_wrong_best_spans_fail_naming_the_case(mistake, case, lang, capsys):
    check_implementation("11_best_span", lambda *args: span_by_loops(*args, **mistake))
    _named("11_best_span", case, lang, capsys)


# ---------------------------------------------------------------- refusing bertlib's answer
def test_a_function_that_calls_bertlibs_own_is_refused_however_deep(lang, capsys):
    """Calling the function the check compares against passes every case and teaches
    nothing: it is refused, directly, through a wrapper, or through a method that calls it."""
    import sys

    from bertlib import MaskLM, bert_loss

    def wrapper(X, pred_positions):
        return helper(X, pred_positions)

    def helper(X, pred_positions):
        return MaskLM(10, X.shape[-1]).gather(X, pred_positions)

    before = sys.getprofile()
    for function, name in ((MaskLM.gather, "MaskLM.gather"), (wrapper, "MaskLM.__init__")):
        check_implementation("04_mlm_gather", function)
        out = unfill(capsys.readouterr().out).strip()
        assert out == text("ex_impl_reference", lang, name=name)
    assert sys.getprofile() is before  # the check leaves the process's profiler as it was

    def via_bert_loss(mlm_Y_hat, mlm_Y, mlm_weights):
        B = mlm_Y_hat.shape[0]
        return bert_loss(mlm_Y_hat, mlm_Y, mlm_weights, torch.zeros(B, 2),
                         torch.zeros(B, dtype=torch.long)).mlm
    assert implementation_problem("06_mlm_loss", via_bert_loss, lang) == text(
        "ex_impl_reference", lang, name="bert_loss")


def test_a_wrong_value_is_named_by_where_it_first_differs(lang):
    problem = implementation_problem("11_tagging_loss", lambda Y_hat, labels: summed(Y_hat,
                                                                                    labels), lang)
    assert text("ex_impl_result", lang) in problem and "hint=1" in problem
    from bertlib.classroom.implement import _difference
    expected = torch.zeros(2, 3)
    got = expected.clone()
    got[1, 2] = 0.5
    assert _difference(expected, got, "X", lang) == text("ex_impl_value", lang, where="X[1, 2]",
                                                        expected=0.0, got=0.5)


def test_hints_come_in_stages_on_request_the_recipe_last(lang, capsys):
    staged = hints("04_mlm_gather", lang)
    check_implementation("04_mlm_gather", gather_every_sequence)
    first = unfill(capsys.readouterr().out)
    assert not any(h in first for h in staged)  # a failure gives no hint by itself
    for stage in range(1, len(staged) + 1):
        check_implementation("04_mlm_gather", gather_every_sequence, hint=stage)
        out = unfill(capsys.readouterr().out)
        assert staged[stage - 1] in out
        assert [h for h in staged if h in out] == [staged[stage - 1]]  # one stage at a time
        assert ("hint=" + str(stage + 1) in out) == (stage < len(staged))
        assert text("ex_impl_stuck", lang) not in out  # asked for a hint: no "Stuck? Add hint=1"
    for bad in (-1, len(staged) + 1, 1.5, True):
        with pytest.raises(ValueError, match="hint must be an int from 0"):
            check_implementation("04_mlm_gather", gather_every_sequence, hint=bad)


def test_feedback_is_wrapped_at_word_boundaries(lang, capsys):
    check_implementation("03_attention_weights", lambda attention, X, valid_lens: X, hint=3)
    lines = capsys.readouterr().out.strip().split("\n")
    assert len(lines) > 2
    assert all(sum(2 if ord(c) > 0x2E80 else 1 for c in line) <= 88 for line in lines)


# ---------------------------------------------------------------- whatever the function does
class UnprintableError(Exception):
    def __str__(self):
        raise RuntimeError("str() fails too")


def exits(Y_hat, labels):
    sys.exit(3)


def unprintable(Y_hat, labels):
    raise UnprintableError


def test_every_failure_of_the_learners_code_ends_in_a_verdict(lang, capsys):
    """Before: sys.exit escaped as SystemExit, an error whose str() fails raised out of the
    check, and a meta or sparse result raised NotImplementedError from deep inside torch."""
    case = IMPLEMENTATIONS["11_tagging_loss"].cases()[0][0][lang]
    for function, error in ((exits, "SystemExit: 3"), (unprintable, "UnprintableError")):
        check_implementation("11_tagging_loss", function)
        assert unfill(capsys.readouterr().out).strip() == text(
            "ex_impl_raised", lang, case=case, error=error) + implement._SPACE[lang] + text(
            "ex_impl_stuck", lang)
    where = text("ex_impl_result", lang)
    for result, got in ((torch.zeros((), device="meta"), "device=meta"),
                        (torch.zeros(1, 6).to_sparse(), "layout=torch.sparse_coo")):
        problem = implementation_problem("11_tagging_loss", lambda Y_hat, labels, r=result: r)
        assert problem.startswith("× ") and where in problem and got in problem

    def surrogates(Y_hat, labels):
        raise ValueError("\ud800" * 1000)

    problem = implementation_problem("11_tagging_loss", surrogates)
    assert "\\ud800" in problem and len(problem) < 600  # printable, a few lines at most
    problem.encode("utf-8")




# ---------------------------------------------------------------- routes round the work
# Each of these passed every case before (an outside probe): the check now refuses it with a
# named reason, or, for answers made in advance, fails it on the fresh cases.
def _source_copy(function):
    """``function`` rebuilt from its source, as ``exec(inspect.getsource(...))`` makes it."""
    import inspect
    import textwrap

    function = inspect.unwrap(function)
    source = textwrap.dedent(inspect.getsource(function))
    source = "\n".join(line for line in source.splitlines() if not line.startswith("@"))
    namespace = dict(function.__globals__)
    exec(source, namespace)
    return namespace[function.__name__]


def _renamed_copy(function):
    """``function``'s code object under another name, in a new function."""
    import inspect
    import types

    function = inspect.unwrap(function)
    return types.FunctionType(function.__code__.replace(co_name="mine"), function.__globals__)


class _Forged(torch.Tensor):
    """A tensor that says it is close to anything and differs from nothing."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func in (torch.isclose, torch.Tensor.nonzero, torch.Tensor.__invert__):
            return torch.zeros(0, 1, dtype=torch.long) if func is torch.Tensor.nonzero \
                else torch.tensor(True)
        return super().__torch_function__(func, types, args, kwargs or {})


class _AlwaysEqual(int):
    def __ne__(self, other):
        return False

    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def _torch_attention(attention, X, valid_lens):
    """PyTorch's own multi-head attention on bertlib's weights."""
    Xt = X.transpose(0, 1)  # (T, B, H)
    W = [attention.W_q, attention.W_k, attention.W_v]
    return F.multi_head_attention_forward(
        Xt, Xt, Xt, X.shape[-1], attention.num_heads, torch.cat([w.weight for w in W]),
        torch.cat([w.bias for w in W]), None, None, False, 0.0, attention.W_o.weight,
        attention.W_o.bias, need_weights=True, average_attn_weights=False,
        key_padding_mask=None if valid_lens is None
        else torch.arange(X.shape[1]) >= valid_lens[:, None])[1]


def _in_a_thread(Y_hat, labels):
    import threading

    out = []
    thread = threading.Thread(target=lambda: out.append(task_loss(Y_hat, labels)))
    thread.start()
    thread.join()
    return out[0]


_POOL = None


def _in_a_pool(Y_hat, labels):
    return _POOL.submit(task_loss, Y_hat, labels).result()


def _profiler_off(Y_hat, labels):
    sys.setprofile(None)
    return task_loss(Y_hat, labels)


def _source_inside(Y_hat, labels):
    return _source_copy(task_loss)(Y_hat, labels)


def _expected_off_the_frame(Y_hat, labels):
    frame = sys._getframe(1)
    while frame is not None:
        if "expected" in frame.f_locals and isinstance(frame.f_locals["expected"], torch.Tensor):
            return frame.f_locals["expected"]
        frame = frame.f_back
    return torch.tensor(0.0)


def _zeroed_in_place(Y_hat, labels):
    """Zero every case the check holds, then answer for zeros (the loss of equal logits)."""
    frame = sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            if isinstance(value, tuple):
                for item in value:
                    if isinstance(item, torch.Tensor) and item.is_floating_point():
                        item.zero_()
        frame = frame.f_back
    return torch.log(torch.tensor(float(Y_hat.shape[-1])))


@pytest.mark.fresh_seeds
@pytest.mark.parametrize(("key", "cheat", "message", "name"), [
    ("11_tagging_loss", lambda: _source_copy(task_loss), "ex_impl_copy", "task_loss"),
    # still bertlib's code, in bertlib's file, whatever its name
    ("11_tagging_loss", lambda: _renamed_copy(task_loss), "ex_impl_reference", "task_loss"),
    ("11_tagging_loss", lambda: _source_inside, "ex_impl_copy", "inspect.getsource"),
    ("03_attention_weights", lambda: _torch_attention, "ex_impl_library",
     "multi_head_attention_forward"),
    ("06_mlm_loss", lambda: lambda Y_hat, Y, w: task_loss(
        Y_hat.masked_fill(~(w > 0)[..., None], 0.0), torch.where(w > 0, Y, -100)),
     "ex_impl_reference", "task_loss"),
    ("11_tagging_loss", lambda: lambda Y_hat, labels: __import__("bertlib").bert_loss(
        Y_hat, labels.clamp(min=0), (labels >= 0).float(), torch.zeros(len(labels), 2),
        torch.zeros(len(labels), dtype=torch.long)).mlm, "ex_impl_reference", "bert_loss"),
    ("11_tagging_loss", lambda: _in_a_thread, "ex_impl_elsewhere", "Thread.start"),
    ("11_tagging_loss", lambda: _in_a_pool, "ex_impl_elsewhere", "ThreadPoolExecutor.submit"),
    ("11_tagging_loss", lambda: _profiler_off, "ex_impl_unwatch", "sys.setprofile"),
    ("11_tagging_loss", lambda: lambda Y_hat, labels: loss_by_hand(Y_hat, labels).as_subclass(
        _Forged), "ex_impl_plain", "_Forged"),
    ("05_nsp_pair_builder", lambda: lambda paragraphs, max_len, seed: [_AlwaysEqual(0)],
     "ex_impl_plain", "_AlwaysEqual"),
])
def test_every_route_round_the_work_is_refused_by_name(key, cheat, message, name, lang):
    import concurrent.futures

    global _POOL
    with concurrent.futures.ThreadPoolExecutor(1) as _POOL:
        problem = implementation_problem(key, cheat(), lang)
    assert problem is not None and problem.startswith("× ") and name in problem
    assert problem == text(message, lang, name=name if message != "ex_impl_library"
                           else "multi_head_attention_forward", library="torch")


@pytest.mark.fresh_seeds
@pytest.mark.parametrize("cheat", [_expected_off_the_frame, _zeroed_in_place])
def test_the_expected_values_are_out_of_the_learners_reach(cheat, lang):
    problem = implementation_problem("11_tagging_loss", cheat, lang)
    assert problem is not None and problem.startswith("× ")


@pytest.mark.fresh_seeds
def test_answers_made_in_advance_fail_on_the_fresh_cases(lang):
    """A table of bertlib's answers to the cases of seed 0, looked up by the arguments."""
    exercise = IMPLEMENTATIONS["11_tagging_loss"]
    table = {repr(args): exercise.reference(*args) for _, args in exercise.cases(0)}
    assert implementation_problem("11_tagging_loss", lambda *args: table.get(
        repr(args), torch.tensor(0.0)), lang).startswith("× ")
    with pytest.MonkeyPatch.context() as patch:  # the same table at seed 0 would pass
        patch.setattr(implement, "fresh_seed", lambda: 0)
        assert implementation_problem("11_tagging_loss", lambda *args: table[repr(args)]) is None


@pytest.mark.fresh_seeds
@pytest.mark.parametrize(("key", "function"), [
    ("02_tokens_and_segments", pair_by_hand), ("02_wordpiece", wordpiece_by_hand),
    ("03_attention_weights", weights_by_hand), ("04_mlm_gather", gather_by_loop),
    ("05_nsp_pair_builder", pairs_by_hand), ("06_mlm_loss", mlm_loss_by_hand),
    ("11_tagging_loss", loss_by_hand), ("11_best_span", span_by_loops)])
def test_a_right_answer_passes_whatever_the_seed(key, function):
    """The fresh cases keep their design: written by hand, the answer passes on each."""
    seeds = iter([0, 1, 2**31 - 1, implement.fresh_seed()])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(implement, "fresh_seed", lambda: next(seeds))
        for _ in range(4):
            assert implementation_problem(key, function, "en") is None
    assert len({implement.fresh_seed() for _ in range(5)}) > 1
