"""Library code on screen, read from the code that runs: a function or class, or its lines
between ``# <listing: NAME>`` and ``# </listing>`` (reformatting never moves what shows)."""

from __future__ import annotations

import inspect
import re
import textwrap

_START = re.compile(r"\s*# <listing: ([\w-]+)>\s*$")
_END = re.compile(r"\s*# </listing>\s*$")


def source(obj, region: str | None = None) -> str:
    """The source of ``obj``, dedented, without markers; with ``region``, only that region."""
    if inspect.ismodule(obj):  # inspect would give the whole file
        raise ValueError(f"obj must be a function, method or class, not a module; got {obj!r}")
    try:
        lines = inspect.getsource(obj).splitlines()
    except (TypeError, OSError) as err:
        raise ValueError(f"obj must be a function, method or class with source code; got "
                         f"{obj!r}") from err
    regions: dict[str, list[str]] = {}
    inside: list[str] | None = None
    kept = []
    for line in lines:
        if (start := _START.match(line)) is not None:
            inside = regions.setdefault(start.group(1), [])
        elif _END.match(line):
            inside = None
        else:
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
