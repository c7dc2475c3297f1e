"""Library code on screen: whole objects or marked regions, never a matched line."""

import inspect
import textwrap

import pytest

from bertlib import BERTModel, get_tokens_and_segments, mask_tokens
from bertlib.viz.listing import show_source, source


def test_whole_function_is_its_source_without_markers():
    assert source(get_tokens_and_segments) == inspect.getsource(get_tokens_and_segments).rstrip()
    shown = source(mask_tokens)
    assert "<listing" not in shown and "</listing>" not in shown
    assert shown.startswith("def mask_tokens(") and "return MaskedTokens(" in shown


def test_a_method_is_dedented():
    assert source(BERTModel.forward).startswith("def forward(")


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
    show_source(get_tokens_and_segments)
    assert capsys.readouterr().out == inspect.getsource(get_tokens_and_segments)


def test_a_region_must_be_a_name():
    """Before: TypeError unhashable for a list."""
    with pytest.raises(ValueError, match=r"region must name a marked region.*got \['recipe'\]"):
        source(mask_tokens, region=["recipe"])


def test_a_module_is_not_a_listing():
    import bertlib
    with pytest.raises(ValueError, match="obj must be a function, method or class, not a module"):
        source(bertlib)
