"""How is a file read safely, and written so that a crash leaves the old file or the new one?

A file read is untrusted input: :func:`checked_file` lets through only a regular file of
bounded size (a named pipe would block a read forever, a link to ``/dev/zero`` never ends).
:func:`atomic_write` and :func:`atomic_write_folder` write beside the target and rename over it
(``os.replace`` is atomic on one file system): a crash leaves the old file or the new one.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from bertlib.support.checks import check_path

try:
    import fcntl
except ImportError:  # Windows: folders are not locked
    fcntl = None


class ReadOnlyFileError(PermissionError):
    """A read-only file, which :func:`atomic_write` does not replace (as an editor would not)."""


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> None:
    """Replace ``path`` by what ``write(tmp)`` writes to ``tmp``, all at once.

    ``tmp``, in ``path``'s folder with ``path``'s suffix and a short name, is flushed to disk
    before the rename, and the folder after it; if anything raises, ``tmp`` is removed. A
    read-only file at ``path`` (mode 0444, which root would override) is a
    :class:`ReadOnlyFileError` before anything is written.
    """
    path = Path(path)
    try:
        mode = path.stat().st_mode
    except OSError:  # nothing there yet (a missing folder is said when tmp is created)
        mode = 0
    if stat.S_ISREG(mode) and not mode & 0o222:
        raise ReadOnlyFileError(errno.EACCES, f"the file is read-only (mode "
                                f"{stat.S_IMODE(mode):o}); it is not replaced", str(path))
    while True:  # a fresh name: two writers of one path must not share a temporary file
        tmp = path.with_name(f".tmp-{secrets.token_hex(4)}{path.suffix}")
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
    """Make the renames in ``folder`` durable, where the system allows (not on Windows, nor
    where a file system refuses fsync on a folder: the rename itself is done)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def aside(folder: Path) -> Path:
    """Where :func:`atomic_write_folder` keeps the previous ``folder`` while it swaps."""
    return folder.with_name(folder.name + ".old")


def atomic_write_folder(folder: str | Path, write: Callable[[Path], None]) -> None:
    """Replace ``folder`` by what ``write(tmp)`` writes into the new empty folder ``tmp``.

    ``tmp`` (``folder.partial``, each file written by :func:`atomic_write`) is swapped in by
    two renames: the old folder to ``.old``, ``tmp`` to ``folder``. Killed between them, this
    leaves ``.old`` complete: :func:`complete_folder` finds it, and the next call puts it back.
    A ``folder`` that is a symbolic link stays one: the folder it points to is swapped.
    """
    folder = linked(Path(folder))
    old, tmp = aside(folder), folder.with_name(folder.name + ".partial")
    if not os.path.lexists(folder) and os.path.lexists(old):  # stopped between the renames
        os.replace(old, folder)
    for stale in (old, tmp):  # left by a call stopped after its renames, or while writing
        remove(stale)
    tmp.mkdir()
    write(tmp)
    sync_folder(tmp)
    if os.path.lexists(folder):
        os.replace(folder, old)
    os.replace(tmp, folder)
    sync_folder(folder.parent)
    remove(old)


def remove(folder: Path) -> None:
    """Remove ``folder`` if it is there; a link to a folder goes, not what it points to."""
    if os.path.islink(folder):
        os.unlink(folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)


def complete_folder(folder: str | Path) -> Path | None:
    """The folder that :func:`atomic_write_folder` last finished writing as ``folder``:
    ``folder`` itself, or ``.old`` when a swap was stopped between its renames; None if
    neither exists. It changes nothing, so any number of readers may call it."""
    folder = linked(Path(folder))
    return next((f for f in (folder, aside(folder)) if os.path.lexists(f)), None)


def linked(folder: Path) -> Path:
    """The folder that ``folder`` names: itself, or where it links to (links followed to the
    end, even to a folder that is missing now)."""
    return Path(os.path.realpath(folder)) if folder.is_symlink() else folder


@contextlib.contextmanager
def locked(name: str, folder: Path) -> Iterator[None]:
    """``folder`` for this process alone while it holds ``folder/.lock`` (a lock the system
    lets go however the process ends); ValueError naming ``name`` if another holds it, or if
    ``folder`` cannot be written."""
    try:
        fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as err:  # a read-only folder...
        raise ValueError(f"{name} must be a folder bertlib can write to; got {str(folder)!r}: "
                         f"{err.strerror}") from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ValueError(f"another run is using the folder {str(folder)!r}: wait for "
                                 f"it to end, or give another {name}") from None
        yield
    finally:
        os.close(fd)  # and with it the lock


def checked_file(directory: str | Path, name: str, max_bytes: int | None) -> Path:
    """``directory / name`` when it is a regular file of at most ``max_bytes`` (None: any
    size); links are followed, since what matters is what would be read."""
    check_path("directory", directory)
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"directory must be an existing folder; got {str(directory)!r}")
    path = directory / name
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ValueError(f"{directory} has no {name}") from None
    except OSError as err:  # a loop of symbolic links, a name too long, no permission...
        raise ValueError(f"{path} cannot be read: {err.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path} must be a regular file; it is a "
                         f"{'folder' if stat.S_ISDIR(info.st_mode) else 'device, pipe or socket'}")
    if max_bytes is not None and info.st_size > max_bytes:
        raise ValueError(f"{path} has {info.st_size:,} bytes; a {name} may have at most "
                         f"{max_bytes:,}")
    return path


def checked_path(name: str, path, max_bytes: int | None) -> Path:
    """``path`` when it names a regular file of at most ``max_bytes``; see :func:`checked_file`."""
    check_path(name, path)
    if isinstance(path, str) and "\n" in path:
        raise ValueError(f"{name} must be the path of a file, not its text; got {path!r:.80}")
    path = Path(path)
    return checked_file(path.parent, path.name, max_bytes)


def read_text(path: Path) -> str:
    """The UTF-8 text of a file that :func:`checked_file` let through; ValueError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} must be UTF-8 text; {err}") from None
    except OSError as err:
        raise ValueError(f"{path} cannot be read: {err.strerror}") from None


def read_json(path: Path) -> dict:
    """A JSON object from a file that :func:`checked_file` let through: strict JSON, as
    bertlib writes it (``NaN`` and ``Infinity``, which Python's reader takes, would pass every
    ``>`` check as a size), each key of an object given once (of ``{"layers": 2, "layers":
    12}`` Python's reader keeps the last silently, other readers the first)."""
    try:
        value = json.loads(read_text(path), parse_constant=_not_json,
                           object_pairs_hook=_unique_keys)
    except ValueError as err:  # json.JSONDecodeError, _not_json or _unique_keys
        raise ValueError(f"{path} must hold JSON; {err}") from None
    except RecursionError:  # "[[[[..." nested deeper than Python's stack
        raise ValueError(f"{path} must hold JSON nested at most ~1000 levels deep") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path} must hold a JSON object; got {type(value).__name__}")
    return value


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    value = dict(pairs)
    if len(value) < len(pairs):
        seen: set[str] = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"the key {key!r} appears twice in one object (each key must be "
                         "given once)")
    return value


def _not_json(constant: str):
    raise ValueError(f"{constant} is not a JSON number")
