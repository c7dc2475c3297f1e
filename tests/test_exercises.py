import numpy as np
import pytest

from bertlib.exercises import EXPECTED, check_exercise, is_correct
from bertlib.i18n import LANGUAGES, STRINGS, text


@pytest.fixture(params=["en", "zh"])
def lang(request, tmp_path, monkeypatch):
    """Run in a folder named like a notebook edition, as the notebooks do."""
    folder = tmp_path / request.param
    folder.mkdir()
    monkeypatch.chdir(folder)
    return request.param


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_right_answer_passes_and_wrong_ones_fail(key, lang, capsys):
    expected = EXPECTED[key]()
    assert is_correct(key, expected)
    assert is_correct(key, float(expected))
    assert is_correct(key, np.int64(expected))
    for wrong in (expected + 1, expected - 1, 0, str(expected), True, [expected]):
        assert not is_correct(key, wrong), wrong

    check_exercise(key, expected)
    assert capsys.readouterr().out.strip() == text("ex_correct", lang)

    check_exercise(key, expected + 1)
    out = capsys.readouterr().out
    assert out.startswith("×")
    assert text(f"ex_hint_{key}", lang) in out
    assert str(expected) not in out


def test_missing_answer_asks_for_one(lang, capsys):
    check_exercise("04_num_preds", None)
    assert capsys.readouterr().out.strip() == text("ex_missing", lang)


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_no_message_gives_an_answer_away(key):
    expected = str(EXPECTED[key]())
    for lang in LANGUAGES:
        texts = [STRINGS[k][lang] for k in ("ex_correct", "ex_missing", "ex_wrong")]
        texts.append(STRINGS[f"ex_hint_{key}"][lang])
        assert not any(expected in t for t in texts)


def test_every_exercise_has_a_hint_and_every_hint_an_exercise():
    hints = {k.removeprefix("ex_hint_") for k in STRINGS if k.startswith("ex_hint_")}
    assert hints == set(EXPECTED)


def test_unknown_exercise_is_an_error():
    with pytest.raises(ValueError, match="unknown exercise '04_nope'"):
        check_exercise("04_nope", 3)
