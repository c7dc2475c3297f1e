"""How is a file written so that a crash leaves the old file or the new one, never a mix?

:func:`atomic_write` lets a writer fill a temporary file beside the target, makes it durable
and renames it over the target in one step (``os.replace`` is atomic on one file system): a
process killed at any moment leaves ``path`` as it was or as the writer finished it.
:func:`atomic_write_folder` does the same for a folder of files that belong together.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> None:
    """Replace ``path`` by what ``write(tmp)`` writes to ``tmp``, all at once.

    ``tmp`` is a new empty file in ``path``'s folder (so the rename stays on one disk) with
    ``path``'s suffix (writers that choose a format by the extension still work). The file is
    flushed to disk before the rename, and the folder after it where the system allows; if
    ``write`` (or anything after it) raises, ``tmp`` is removed and the error raised again.
    """
    path = Path(path)
    while True:  # a fresh name: two writers of one path must not share a temporary file
        tmp = path.with_name(f".{path.stem}.{secrets.token_hex(6)}.tmp{path.suffix}")
        try:  # 0o666 less the umask, as an ordinary new file gets (mkstemp would give 0o600)
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            continue
    try:
        write(tmp)
        fd = os.open(tmp, os.O_RDWR)  # Windows commits only a file opened for writing
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:  # KeyboardInterrupt too: leave no stray file behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    sync_folder(path.parent)


def sync_folder(folder: str | Path) -> None:
    """Make the renames in ``folder`` durable; a no-op where folders cannot be opened (Windows)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a folder; the rename itself is done
        pass
    finally:
        os.close(fd)


def aside(folder: Path) -> Path:
    """Where :func:`atomic_write_folder` keeps the previous ``folder`` while it swaps."""
    return folder.with_name(folder.name + ".old")


def atomic_write_folder(folder: str | Path, write: Callable[[Path], None]) -> None:
    """Replace ``folder`` by what ``write(tmp)`` writes into the new empty folder ``tmp``.

    ``tmp`` (``folder`` + ``.partial``) is filled whole (``write`` should write each file with
    :func:`atomic_write`, which makes it durable), then two renames swap it in: the old folder
    to ``.old``, ``tmp`` to ``folder``. Killed at any moment, this leaves ``folder`` complete
    (old or new) or, between the renames, ``.old`` complete: :func:`complete_folder` finds it,
    and the next call puts it back before it starts.
    """
    folder = Path(folder)
    old, tmp = aside(folder), folder.with_name(folder.name + ".partial")
    if not os.path.lexists(folder) and os.path.lexists(old):  # stopped between the renames
        os.replace(old, folder)
    for stale in (old, tmp):  # left by a call stopped after its renames, or while writing
        shutil.rmtree(stale, ignore_errors=True)
    tmp.mkdir()
    write(tmp)
    sync_folder(tmp)
    if os.path.lexists(folder):
        os.replace(folder, old)
    os.replace(tmp, folder)
    sync_folder(folder.parent)
    shutil.rmtree(old, ignore_errors=True)


def complete_folder(folder: str | Path) -> Path | None:
    """The folder that :func:`atomic_write_folder` last finished writing as ``folder``:
    ``folder`` itself, or ``.old`` when a swap was stopped between its renames; None if
    neither exists. It changes nothing, so any number of readers may call it."""
    folder = Path(folder)
    return next((f for f in (folder, aside(folder)) if os.path.lexists(f)), None)
