"""Files read safely (:func:`checked_file`: only a regular file of bounded size, since a pipe
blocks forever and ``/dev/zero`` never ends) and written beside the target, then renamed over
it (:func:`atomic_write`, :func:`atomic_write_folder`): a crash leaves the old or the new."""

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
    """Replace ``path`` by what ``write(tmp)`` writes to ``tmp`` (beside it, flushed before
    the rename, removed if anything raises); a read-only ``path`` is a ReadOnlyFileError."""
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
        # 0o666 less the umask, as an ordinary new file gets (mkstemp would give 0o600)
        with contextlib.suppress(FileExistsError):
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
    try:
        write(tmp)
        with open(tmp, "rb+") as f:  # Windows commits only a file opened for writing
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:  # KeyboardInterrupt too: leave no stray file behind
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    sync_folder(path.parent)


def sync_folder(folder: str | Path) -> None:
    """The renames in ``folder`` made durable where the system allows (not on Windows)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def aside(folder: Path) -> Path:  # the previous folder, while atomic_write_folder swaps
    return folder.with_name(folder.name + ".old")


def atomic_write_folder(folder: str | Path, write: Callable[[Path], None]) -> None:
    """Replace ``folder`` by what ``write(tmp)`` writes into the empty ``folder.partial``, by
    two renames (old to ``.old``, new in): killed between them, ``.old`` is complete, found by
    :func:`complete_folder` and put back by the next call. A symbolic link stays one."""
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
    """``folder`` removed if there; a link goes, not what it points to."""
    if os.path.islink(folder):
        os.unlink(folder)
    else:
        shutil.rmtree(folder, ignore_errors=True)


def complete_folder(folder: str | Path) -> Path | None:
    """What :func:`atomic_write_folder` last finished as ``folder``: itself, or ``.old`` after a
    swap stopped between its renames; None if neither exists. Changes nothing."""
    folder = linked(Path(folder))
    return next((f for f in (folder, aside(folder)) if os.path.lexists(f)), None)


def linked(folder: Path) -> Path:
    """``folder``, or where it links to (followed to the end, even to a missing folder)."""
    return Path(os.path.realpath(folder)) if folder.is_symlink() else folder


@contextlib.contextmanager
def locked(name: str, folder: Path) -> Iterator[None]:
    """``folder`` for this process alone, by ``folder/.lock`` (freed however the process
    ends); ValueError naming ``name`` if another holds it or ``folder`` is not writable."""
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
    """``directory / name`` when it is (or links to) a regular file of at most ``max_bytes``."""
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
    """``path`` as :func:`checked_file` checks it (and not a text pasted as a path)."""
    check_path(name, path)
    if isinstance(path, str) and "\n" in path:
        raise ValueError(f"{name} must be the path of a file, not its text; got {path!r:.80}")
    path = Path(path)
    return checked_file(path.parent, path.name, max_bytes)


def read_text(path: Path) -> str:
    """The UTF-8 text of a checked file; ValueError naming it."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} must be UTF-8 text; {err}") from None
    except OSError as err:
        raise ValueError(f"{path} cannot be read: {err.strerror}") from None


def read_json(path: Path) -> dict:
    """A JSON object from a checked file, strict: no ``NaN`` or ``Infinity`` (which pass every
    ``>`` check as a size), each key once (readers differ on which of two they keep)."""
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
