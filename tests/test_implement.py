"""The implement-it exercises: for each, bertlib's function and one written by hand pass, and
typical wrong versions fail on the case meant to catch them, in the notebook's language."""

import pytest
import torch
import torch.nn.functional as F

from bertlib.finetune import task_loss
from bertlib.i18n import set_language, text
from bertlib.implement import IMPLEMENTATIONS, check_implementation, implementation_problem
from bertlib.tasks import IGNORE


@pytest.fixture(params=["en", "zh"])
def lang(request):
    """The edition's language, set as a notebook's first cell sets it."""
    set_language(request.param)
    return request.param


def test_every_exercise_has_cases_and_a_hint_in_every_language():
    for exercise in IMPLEMENTATIONS.values():
        cases = exercise.cases()
        assert len(cases) >= 3
        assert all(set(names) == {"en", "zh"} for names, _ in cases)
        assert set(exercise.hint) == {"en", "zh"}


# ---------------------------------------------------------------- 08: the tagging loss
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
    for _, args in IMPLEMENTATIONS["08_tagging_loss"].cases():
        assert torch.allclose(task_loss(*args), loss_by_hand(*args), rtol=1e-5)


def test_bertlib_and_a_hand_written_loss_pass(lang, capsys):
    assert implementation_problem("08_tagging_loss", task_loss) is None
    assert implementation_problem("08_tagging_loss", loss_by_hand) is None
    check_implementation("08_tagging_loss", loss_by_hand)
    assert capsys.readouterr().out.strip() == text("ex_impl_correct", lang, count=5)


@pytest.mark.parametrize("wrong, case", [
    (mean_over_all_positions, {"en": "one sentence, no padding", "zh": "一个句子，没有填充"}),
    (mean_per_sentence, {"en": "two sentences, the second padded", "zh": "两个句子，第二个有填充"}),
    (naive_softmax, {"en": "large logits (up to 1000)", "zh": "很大的 logits（可达 1000）"}),
    (summed, {"en": "one sentence, no padding", "zh": "一个句子，没有填充"}),
])
def test_typical_wrong_versions_fail_naming_the_case(wrong, case, lang, capsys):
    check_implementation("08_tagging_loss", wrong)
    out = capsys.readouterr().out
    assert out.startswith("×") and f"“{case[lang]}”" in out
    assert IMPLEMENTATIONS["08_tagging_loss"].hint[lang] in out


def test_errors_shapes_and_unfinished_functions_are_explained(lang, capsys):
    check_implementation("08_tagging_loss", unfinished)
    assert capsys.readouterr().out.strip() == text("ex_impl_missing", lang)
    problem = implementation_problem("08_tagging_loss", lambda Y_hat, labels: Y_hat.sum(-1))
    assert problem.startswith("×") and "()" in problem and "(1, 6)" in problem
    problem = implementation_problem("08_tagging_loss", lambda Y_hat, labels: 1 / 0)
    assert "ZeroDivisionError" in problem
    with pytest.raises(ValueError, match="unknown exercise '08_nope'"):
        check_implementation("08_nope", task_loss)
    with pytest.raises(ValueError, match="function must be a function; got int"):
        check_implementation("08_tagging_loss", 3)


# ---------------------------------------------------------------- how a difference is told
def test_every_kind_of_difference_is_named(lang):
    from bertlib.implement import _difference as diff

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
    assert "0.1" in diff(0.5, 0.6, "r", lang)
    floats = torch.tensor([0.0, float("nan")])
    assert "inf" in diff(torch.zeros(2), floats, "r", lang)


# ---------------------------------------------------------------- 04: the MLM gather
def _named(key, case, lang, capsys):
    """The last check_implementation printed a failure naming ``case`` and the hint."""
    out = capsys.readouterr().out
    assert out.startswith("×") and f"“{case[lang]}”" in out, out
    assert IMPLEMENTATIONS[key].hint[lang] in out


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
    assert implementation_problem("04_mlm_gather", IMPLEMENTATIONS["04_mlm_gather"]
                                  .reference) is None
    assert torch.equal(state, torch.get_rng_state())  # the head's init left no trace
    for right in (gather_by_loop, gather_flat_with_offset):
        check_implementation("04_mlm_gather", right)
        assert capsys.readouterr().out.strip() == text("ex_impl_correct", lang, count=4)


ONE = {"en": "one sequence", "zh": "一个序列"}
TWO = {"en": "two sequences, two positions each", "zh": "两个序列，各有两个预测位置"}
PADDED = {"en": "padded slots (position 0) and a position repeated",
          "zh": "有填充的预测位置（位置 0），还有一个重复的位置"}


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
    assert implementation_problem("05_nsp_pair_builder", IMPLEMENTATIONS["05_nsp_pair_builder"]
                                  .reference) is None
    check_implementation("05_nsp_pair_builder", pairs_by_hand)
    assert capsys.readouterr().out.strip() == text("ex_impl_correct", lang, count=5)
    # The cases hold what they promise: no pair, all kept, all dropped.
    cases = IMPLEMENTATIONS["05_nsp_pair_builder"].cases()
    lengths = [len(pairs_by_hand(*args)) for _, args in cases]
    assert lengths == [9, 7, 4, 0, 16]
    assert {p[2] for _, args in cases for p in pairs_by_hand(*args)} == {0, 1}


@pytest.mark.parametrize("mistake, case", [
    ({"last": 2}, {"en": "three paragraphs of 4 sentences", "zh": "三个段落，各有 4 个句子"}),
    ({"room": 2}, {"en": "every pair one token longer than max_len: all dropped",
                   "zh": "每个句子对都比 max_len 多一个词元：全部丢弃"}),
    ({"drop": False}, {"en": "every pair one token longer than max_len: all dropped",
                       "zh": "每个句子对都比 max_len 多一个词元：全部丢弃"}),
    ({"room": 4}, {"en": "every pair exactly max_len tokens long: all kept",
                   "zh": "每个句子对恰好 max_len 个词元：全部保留"}),
])
def test_nsp_pairs_typical_wrong_versions_fail_naming_the_case(mistake, case, lang, capsys):
    check_implementation("05_nsp_pair_builder", lambda *args: pairs_by_hand(*args, **mistake))
    _named("05_nsp_pair_builder", case, lang, capsys)
