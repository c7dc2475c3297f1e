"""What several test files share: crashing a save at every step, and a time limit on a call
that might hang."""

import builtins
import contextlib
import io
import os
import signal

import pytest
import safetensors.torch

import bertlib.analysis.snapshots
import bertlib.scale.pretrain
import bertlib.weights.checkpoint

# The file system operations a save is made of; a crash can come before any of them.
OS_STEPS = ("open", "fsync", "replace", "rename", "unlink", "remove", "rmdir", "mkdir")


class Crash(BaseException):
    """The process dies here: nothing after it runs (not even cleanup), like a kill."""


@contextlib.contextmanager
def crash_at(k: int | None):
    """Count the steps of whatever runs inside (os's file operations, files opened for writing,
    safetensors' writes) and crash at step ``k`` (from 0; None: never) and at every step
    after it. A crash while writing a file leaves half of it, as a kill would. Yields the list
    of the steps taken."""
    steps: list[str] = []
    real_open = io.open

    def step(name: str) -> bool:
        if k is not None and len(steps) >= k:
            return True
        steps.append(name)
        return False

    def os_step(name, real):
        def wrapped(*args, **kwargs):
            if step(name):
                raise Crash(name)
            return real(*args, **kwargs)
        return wrapped

    def writer(name, real, where):
        def wrapped(*args, **kwargs):
            crashed = step(name)
            result = real(*args, **kwargs)
            if crashed:  # a kill in the middle of the write leaves the file's first half
                with real_open(args[where], "rb+") as f:
                    f.truncate(os.path.getsize(args[where]) // 2)
                raise Crash(name)
            return result
        return wrapped

    def opener(file, mode="r", *args, **kwargs):
        if any(c in mode for c in "wax+") and step("open for writing"):
            real_open(file, mode, *args, **kwargs).close()  # created or truncated, not written
            raise Crash("write")
        return real_open(file, mode, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        for name in OS_STEPS:
            patch.setattr(os, name, os_step(name, getattr(os, name)))
        patch.setattr(io, "open", opener)
        patch.setattr(builtins, "open", opener)
        for module in (safetensors.torch, bertlib.weights.checkpoint, bertlib.scale.pretrain,
                       bertlib.analysis.snapshots):
            for name in ("save_file", "save_model"):  # safetensors writes outside Python's io
                if hasattr(module, name):
                    patch.setattr(module, name, writer(name, getattr(module, name), 1))
        yield steps


def every_crash(prepare, save, read, old, new) -> set:
    """Run ``save`` after ``prepare`` with a crash at each of its steps in turn (and once
    without): ``read`` must then give ``old`` or ``new``. Returns what it gave, and checks
    that a second ``save`` after the crash gives ``new``."""
    prepare(0)
    with crash_at(None) as steps:
        save(0)
    assert read(0) == new
    count = len(steps)
    seen = set()
    for k in range(count):
        prepare(k)
        with pytest.raises(Crash), crash_at(k):
            save(k)
        found = read(k)
        assert found in (old, new), f"crash at step {k} of {count} ({steps[k]}): {found!r:.200}"
        seen.add("old" if found == old else "new")
        save(k)  # what a crash left behind does not stop the next save
        assert read(k) == new
    return seen


@contextlib.contextmanager
def within(seconds: int):
    """Fail a call that hangs (an endless iterator read whole) instead of the whole run."""
    def stop(*_):
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
