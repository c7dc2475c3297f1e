"""Writing a file so that a reader finds either the old complete file or the new complete one.

(A minimal stand-in written by helper "learner" so the widgets' Save runs on this branch; the
lead keeps helper "persist"'s version of this module at merge.)
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` with a temporary path in ``path``'s folder with its suffix, flush it
    to disk, then put it in ``path``'s place in one step; the temporary file is removed if
    ``write`` raises."""
    path = Path(path)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=path.suffix)
    os.close(fd)
    tmp = Path(name)
    try:
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
