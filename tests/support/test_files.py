"""Writing files so that a crash leaves the old file or the new one: every step of a write is
made to crash in turn, and a reader must then find one or the other, never a mix.

``crash_at`` and ``every_crash`` live in tests/helpers.py."""

import errno
import os
import stat
from pathlib import Path

import pytest
from helpers import every_crash

import bertlib.analysis.snapshots
import bertlib.scale.pretrain
import bertlib.weights.checkpoint
from bertlib.support.files import atomic_write, atomic_write_folder, complete_folder


def test_a_write_crashed_at_any_step_leaves_the_old_file_or_the_new(tmp_path):
    def prepare(k):
        (tmp_path / f"{k}.txt").write_text("old " * 1000)

    def save(k):
        atomic_write(tmp_path / f"{k}.txt", lambda tmp: tmp.write_text("new " * 1000))

    def read(k):
        return (tmp_path / f"{k}.txt").read_text()

    assert every_crash(prepare, save, read, "old " * 1000, "new " * 1000) == {"old", "new"}


def test_the_temporary_file_is_beside_the_target_with_its_suffix_and_usual_mode(tmp_path):
    seen = []

    def write(tmp: Path) -> None:
        seen.append(tmp)
        tmp.write_bytes(b"\x89PNG")

    atomic_write(tmp_path / "figure.png", write)
    assert seen[0].parent == tmp_path and seen[0].suffix == ".png"
    assert os.listdir(tmp_path) == ["figure.png"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "figure.png").stat().st_mode) == 0o666 & ~umask


def test_any_name_the_folder_allows_is_written_and_a_read_only_file_is_kept(tmp_path):
    limit = os.pathconf(tmp_path, "PC_NAME_MAX")
    longest = tmp_path / ("a" * (limit - len(".json")) + ".json")
    atomic_write(longest, lambda tmp: tmp.write_text("{}"))  # tmp's name must fit too
    assert longest.read_text() == "{}"
    with pytest.raises(OSError) as refused:  # a name too long: the rename says so
        atomic_write(longest.with_name("a" + longest.name), lambda tmp: tmp.write_text("{}"))
    assert refused.value.errno == errno.ENAMETOOLONG
    longest.chmod(0o444)  # root could replace it: the mode says it is not to be
    with pytest.raises(PermissionError, match="the file is read-only"):
        atomic_write(longest, lambda tmp: tmp.write_text("new"))
    assert longest.read_text() == "{}" and stat.S_IMODE(longest.stat().st_mode) == 0o444
    assert os.listdir(tmp_path) == [longest.name]


def test_a_writer_that_fails_leaves_the_old_file_and_no_stray_one(tmp_path):
    (tmp_path / "a.json").write_text("{}")

    def fail(tmp: Path) -> None:
        tmp.write_text("{half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        atomic_write(tmp_path / "a.json", fail)
    assert os.listdir(tmp_path) == ["a.json"]
    assert (tmp_path / "a.json").read_text() == "{}"
    (tmp_path / "folder").mkdir()
    with pytest.raises(OSError):
        atomic_write(tmp_path / "folder", lambda tmp: tmp.write_text("x"))
    assert sorted(os.listdir(tmp_path)) == ["a.json", "folder"]


def test_a_folder_write_crashed_at_any_step_leaves_the_old_folder_or_the_new(tmp_path):
    names = ("a.txt", "b.txt", "c.txt")

    def fill(folder: Path, text: str) -> None:
        for name in names:
            atomic_write(folder / name, lambda tmp, text=text: tmp.write_text(text))

    def prepare(k):
        atomic_write_folder(tmp_path / str(k), lambda folder: fill(folder, "old"))

    def save(k):
        atomic_write_folder(tmp_path / str(k), lambda folder: fill(folder, "new"))

    def read(k):
        folder = complete_folder(tmp_path / str(k))
        return tuple((folder / name).read_text() for name in names)

    assert every_crash(prepare, save, read, ("old",) * 3, ("new",) * 3) == {"old", "new"}
    assert complete_folder(tmp_path / "none") is None


def write_a(text: str):
    """A writer of a folder that holds a.txt with ``text``."""
    return lambda folder: atomic_write(folder / "a.txt", lambda tmp: tmp.write_text(text))


def test_a_folder_that_is_a_link_stays_one_and_the_folder_it_names_is_swapped(tmp_path):
    """out/k linked to scratch space (a cluster's usual set-up): each write swaps the folder in
    scratch, beside itself; the link still points to it, and a crash at any step leaves the old
    folder or the new one there."""
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    out.mkdir()
    scratch.mkdir()

    def prepare(k):
        atomic_write_folder(scratch / str(k), write_a("old"))
        if not (out / str(k)).is_symlink():
            (out / str(k)).symlink_to(scratch / str(k))

    def save(k):
        atomic_write_folder(out / str(k), write_a("new"))

    def read(k):
        assert (out / str(k)).is_symlink()
        return (complete_folder(out / str(k)) / "a.txt").read_text()

    assert every_crash(prepare, save, read, "old", "new") == {"old", "new"}
    assert all(os.readlink(out / k) == str(scratch / k) for k in os.listdir(out))
    assert sorted(os.listdir(scratch)) == sorted(os.listdir(out))  # no .old or .partial left


def test_a_stale_partial_link_is_removed_not_the_folder_it_points_to(tmp_path):
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "data.txt").write_text("someone else's")
    (tmp_path / "checkpoint.partial").symlink_to(tmp_path / "other")
    atomic_write_folder(tmp_path / "checkpoint", write_a("new"))
    assert (tmp_path / "checkpoint" / "a.txt").read_text() == "new"
    assert (tmp_path / "other" / "data.txt").read_text() == "someone else's"
    assert sorted(os.listdir(tmp_path)) == ["checkpoint", "other"]


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_read_json_reads_strict_json(tmp_path, constant):
    """Python's json module reads NaN and Infinity, which JSON does not have: a config whose
    size is NaN would pass every comparison. bertlib writes strict JSON and reads it back."""
    path = tmp_path / "config.json"
    path.write_text(f'{{"size": 1, "lr": {constant}}}', encoding="utf-8")
    with pytest.raises(ValueError, match=f"config.json must hold JSON; {constant} is not a "
                                         "JSON number"):
        bertlib.support.files.read_json(path)
    path.write_text('{"size": 1, "lr": 1e-3}', encoding="utf-8")
    assert bertlib.support.files.read_json(path) == {"size": 1, "lr": 1e-3}
