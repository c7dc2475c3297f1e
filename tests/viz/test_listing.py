"""Library code on screen: whole objects or marked regions, never a matched line."""

import inspect
import re
import textwrap

import pytest

from bertlib import BERTModel, MaskLM, get_tokens_and_segments, mask_tokens
from bertlib.model import BERTEncoder, NextSentencePred
from bertlib.viz.listing import show_source, source


@pytest.mark.parametrize("obj", [BERTEncoder, MaskLM, NextSentencePred, BERTModel,
                                 BERTModel.forward, get_tokens_and_segments],
                         ids=lambda o: o.__qualname__)
def test_a_listing_is_the_running_code_without_its_markers(obj):
    real = [line for line in inspect.getsource(obj).splitlines()
            if not re.match(r"\s*# </?listing", line)]
    assert source(obj) == textwrap.dedent("\n".join(real))


def test_the_chapters_classes_read_at_the_chapters_size():
    """d2l's BERTEncoder, MaskLM, NextSentencePred and BERTModel are 24, 21, 9 and 23 lines;
    ours hold no guard besides one value check at each door: the encoder's (token, segment and
    length values) and MaskLM's (prediction positions inside the sequence)."""
    sizes = {cls.__name__: len(source(cls).splitlines())
             for cls in (BERTEncoder, MaskLM, NextSentencePred, BERTModel)}
    assert sizes["MaskLM"] <= 30 and sizes["NextSentencePred"] <= 12, sizes
    assert sizes["BERTEncoder"] <= 50 and sizes["BERTModel"] <= 50, sizes
    for cls in (NextSentencePred, BERTModel):
        assert "raise" not in source(cls) and "check_" not in source(cls)
    assert source(BERTEncoder).count("check_") == 1  # check_token_inputs, once
    assert source(MaskLM).count("check_") == 1 and "raise" not in source(MaskLM)


def test_whole_function_is_its_source_without_markers():
    shown = source(mask_tokens)
    assert "<listing" not in shown and "</listing>" not in shown
    assert shown.startswith("def mask_tokens(") and "return MaskedTokens(" in shown


def test_a_method_is_dedented():
    assert source(BERTModel.forward).startswith("@checked\ndef forward(")


def test_a_region_is_exactly_the_lines_between_its_markers():
    lines = inspect.getsource(mask_tokens).splitlines()
    start = next(i for i, line in enumerate(lines) if "# <listing: recipe>" in line)
    end = next(i for i, line in enumerate(lines) if "# </listing>" in line)
    assert source(mask_tokens, "recipe") == textwrap.dedent("\n".join(lines[start + 1:end]))
    assert source(mask_tokens, "recipe").startswith("length = ")


def test_unknown_region_or_object_is_an_error(capsys):
    with pytest.raises(ValueError, match=r"region must name a marked region of mask_tokens; "
                                         r"got 'nope', the source has \['recipe'\]"):
        source(mask_tokens, "nope")
    with pytest.raises(ValueError, match="obj must be a function, method or class"):
        source(42)
    show_source(BERTModel.forward)
    assert capsys.readouterr().out == source(BERTModel.forward) + "\n"


def test_a_region_must_be_a_name():
    """Before: TypeError unhashable for a list."""
    with pytest.raises(ValueError, match=r"region must name a marked region.*got \['recipe'\]"):
        source(mask_tokens, region=["recipe"])


def test_a_module_is_not_a_listing():
    import bertlib
    with pytest.raises(ValueError, match="obj must be a function, method or class, not a module"):
        source(bertlib)
