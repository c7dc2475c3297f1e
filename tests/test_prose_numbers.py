"""Every number in the prose of every edition is printed by an output of the same notebook, shown
in its code, or listed in notebooks/facts.toml with the source it comes from.

A number may be written another way than the output prints it: 58.3% for 0.583, 0.58 for a
printed 0.5831 (rounded), 1,633 for 1633, "23 million" or "2300 万" for 23,439,360 (a number with
a scale word is a rounding: within 5%). Small integers (0 to 12, not percentages) are left out:
they count and name things on the page (layer 0, 2 heads, step 3), and a measured claim is
never one. So are issue numbers (#2582), link targets and inline code.
"""

import json
import math
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # the same parser, before it joined the standard library
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
EDITIONS = ("en", "zh", "ja")
FACTS = tomllib.loads((ROOT / "notebooks" / "facts.toml").read_text(encoding="utf-8"))
NOTEBOOKS = sorted(p.relative_to(ROOT / "notebooks").as_posix()
                   for lang in EDITIONS for p in (ROOT / "notebooks" / lang).glob("*.ipynb"))

# 1,633 and 0.583 and 58.3% and −0.2; a scale word after it (million, 万, 亿) multiplies it.
NUMBER = re.compile(
    r"(?<![\w.#/-])(?P<sign>[-−])?(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?P<pct>\s?%)?(?:\s?多?(?P<scale>million|billion|M\b|B\b|万|亿|億))?(?![\w.]*\d)"
)
SCALES = {"million": 1e6, "M": 1e6, "billion": 1e9, "B": 1e9, "万": 1e4, "亿": 1e8, "億": 1e8}
# Link targets, and inline code (`max_len=64`: code the page shows, not a claim of the prose).
NOT_PROSE = re.compile(r"\]\([^)]*\)|https?://\S+|`[^`]*`")
IN_OUTPUT = re.compile(r"[-−]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[-−]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def numbers_in(text: str) -> list[tuple[str, float, int | None, bool, float | None]]:
    """(as written, value, decimals written, a percentage?, scale) for each number in text."""
    found = []
    for m in NUMBER.finditer(NOT_PROSE.sub(" ", text)):
        digits = m["digits"].replace(",", "")
        value = float(digits) * (-1 if m["sign"] else 1)
        decimals = len(digits.split(".")[1]) if "." in digits else None
        scale = SCALES.get(m["scale"]) if m["scale"] else None
        if not m["pct"] and scale is None and decimals is None and abs(value) <= 12:
            continue
        found.append((m.group().strip(), value, decimals, bool(m["pct"]), scale))
    return found


def printed(notebook: dict) -> list[float]:
    """Every number the notebook's outputs print or its code cells show."""
    texts = []
    for cell in notebook["cells"]:
        if cell["cell_type"] != "code":
            continue
        texts.append("".join(cell["source"]))
        for output in cell.get("outputs", []):
            texts.append("".join(output.get("text", "")))
            for mime, data in output.get("data", {}).items():
                if mime.startswith("text/"):
                    texts.append(data if isinstance(data, str) else "".join(data))
    return [float(m.group().replace(",", "").replace("−", "-"))
            for m in IN_OUTPUT.finditer("\n".join(texts))]


def shown(value: float, decimals: int | None, pct: bool, scale: float | None,
          outputs: list[float]) -> bool:
    if scale is not None:
        target = value * scale
        return any(math.isclose(x, target, rel_tol=0.05) for x in outputs)
    # The number as written, and as the other of fraction and percentage (0.583 and 58.3%); a
    # number written with decimals may round a printed one to that many places.
    forms = [(value, decimals)]
    if pct:
        forms.append((value / 100, (decimals or 0) + 2))
    if decimals:
        forms.append((value * 100, max(decimals - 2, 0)))
    return any(x == v if places is None else round(x, places) == round(v, places)
               for x in outputs for v, places in forms)


def value_of(key: str) -> float:
    """A fact's key as the English prose writes it ("15%", "30,000", "110M") as one number."""
    ((_, value, _, _, scale),) = numbers_in(key) or [(key, float(key), None, False, None)]
    return value * (scale or 1)


def sourced(value: float, scale: float | None, facts: list[float]) -> bool:
    return any(math.isclose(value * (scale or 1), fact, rel_tol=0.05 if scale else 1e-12)
               for fact in facts)


@pytest.mark.parametrize("path", NOTEBOOKS)
def test_every_number_in_the_prose_is_printed_or_sourced(path):
    notebook = json.loads((ROOT / "notebooks" / path).read_text(encoding="utf-8"))
    outputs = printed(notebook)
    facts = [value_of(key) for key in FACTS.get(Path(path).stem, {})]
    missing = []
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for written, value, decimals, pct, scale in numbers_in("".join(cell["source"])):
            if sourced(value, scale, facts) or shown(value, decimals, pct, scale, outputs):
                continue
            missing.append(f"cell {index}: {written}")
    assert not missing, (f"{path}: numbers in the prose that no output prints, no code shows "
                         f"and notebooks/facts.toml does not source:\n" + "\n".join(missing))


def test_every_fact_names_its_source_and_is_used():
    """A fact without a source, or one no edition's prose still quotes, is an error."""
    for stem, facts in FACTS.items():
        quoted = []
        for lang in EDITIONS:
            notebook = json.loads((ROOT / "notebooks" / lang / f"{stem}.ipynb")
                                  .read_text(encoding="utf-8"))
            for cell in notebook["cells"]:
                if cell["cell_type"] == "markdown":
                    quoted += [(value, scale) for _, value, _, _, scale
                               in numbers_in("".join(cell["source"]))]
        for key, source in facts.items():
            assert len(source) > 20, f"{stem}: {key} needs its source, not {source!r}"
            assert any(sourced(value, scale, [value_of(key)]) for value, scale in quoted), (
                f"{stem}: {key} is quoted by no edition")


@pytest.mark.parametrize(("text", "outputs", "found"), [
    ("held-out NSP 0.583 [0.547, 0.618]", [0.632, 0.597, 0.666], ["0.583", "0.547", "0.618"]),
    ("accuracy 58.3%", [0.583], []),
    ("accuracy 0.58", [0.5831], []),
    ("accuracy 0.58", [0.5851], ["0.58"]),
    ("1,633 pairs", [1633.0], []),
    ("23 million fewer", [23_439_360.0], []),
    ("2300 多万个参数", [23_439_360.0], []),
    ("`max_len=64`", [], []),
    ("1.1 亿", [110_106_428.0], []),
    ("110M", [133_545_788.0], ["110M"]),
    ("layer 0, head 1, 2 heads", [], []),
    ("costs about $\\ln 10000 \\approx 9.21$", [10000.0, 9.68], ["9.21"]),
    ("see [issue #2582](https://github.com/d2l-ai/d2l-en/issues/2582)", [], []),
])
def test_the_reader_finds_what_is_not_printed(text, outputs, found):
    """The rules above, on examples, including the mismatches that 06 once had."""
    missing = [written for written, value, decimals, pct, scale in numbers_in(text)
               if not shown(value, decimals, pct, scale, outputs)]
    assert missing == found
