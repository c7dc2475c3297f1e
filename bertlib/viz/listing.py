"""Library code on screen: a whole function or class, or one marked region of it, without its
input checks.

A region is the lines between ``# <listing: NAME>`` and ``# </listing>`` inside the object's
source. Input checks, size guards and their errors sit between ``# <checks>`` and
``# </checks>``; a listing shows one comment line in their place, so the learner reads the idea
and still sees that something was left out. Markers, not matched lines of code, so reformatting
the code never moves what a notebook shows; an unknown name is an error, never an empty listing.
What is printed is always read from the code that runs (``inspect.getsource``), never a copy.
"""

from __future__ import annotations

import inspect
import re
import textwrap

_START = re.compile(r"\s*# <listing: ([\w-]+)>\s*$")
_END = re.compile(r"\s*# </listing>\s*$")
_CHECKS_START = re.compile(r"(\s*)# <checks>\s*$")
_CHECKS_END = re.compile(r"\s*# </checks>\s*$")


def checks_note(lines: int) -> str:
    """The comment that stands in a listing for ``lines`` lines of input checks."""
    return f"# ... input checks ({lines} line{'s' * (lines != 1)}), not shown"


def source(obj, region: str | None = None) -> str:
    """The source of ``obj`` (a function, method or class), dedented, without the markers and
    with each checks region replaced by :func:`checks_note`; with ``region``, only the lines of
    that marked region."""
    if inspect.ismodule(obj):  # inspect would give the whole file
        raise ValueError(f"obj must be a function, method or class, not a module; got {obj!r}")
    try:
        lines = inspect.getsource(obj).splitlines()
    except (TypeError, OSError) as err:
        raise ValueError(f"obj must be a function, method or class with source code; got "
                         f"{obj!r}") from err
    regions: dict[str, list[str]] = {}
    inside: list[str] | None = None
    checks: tuple[str, int] | None = None  # (indentation, lines so far) inside a checks region
    kept = []
    for line in lines:
        if (start := _START.match(line)) is not None:
            inside = regions.setdefault(start.group(1), [])
            continue
        if _END.match(line):
            inside = None
            continue
        if (opened := _CHECKS_START.match(line)) is not None:
            checks = (opened.group(1), 0)
            continue
        if checks is not None:
            if not _CHECKS_END.match(line):
                checks = (checks[0], checks[1] + 1)
                continue
            line = checks[0] + checks_note(checks[1])
            checks = None
        kept.append(line)
        if inside is not None:
            inside.append(line)
    if region is None:
        return textwrap.dedent("\n".join(kept))
    if not isinstance(region, str) or region not in regions:
        raise ValueError(f"region must name a marked region of {obj.__qualname__}; got "
                         f"{region!r}, the source has {sorted(regions) or 'none'}")
    return textwrap.dedent("\n".join(regions[region]))


def show_source(obj, region: str | None = None) -> None:
    """Print :func:`source` of ``obj`` (and ``region``)."""
    print(source(obj, region))
