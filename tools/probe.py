"""The bad-input probe: the mistakes people plausibly make, thrown at bertlib's public doors.

Some 300 inputs a learner, an instructor or a user pretraining on their own data would write,
each in a process of its own under a time and a memory cap, classified by what came back.

    python tools/probe.py [--only TEXT] [-j N] [--cases MODULE] [--list]

A fork server: this process imports torch and bertlib and builds the shared fixtures (the
shipped small BERT, a tiny model, a batch of pretraining data, ...) once, then forks one child
per case. The child caps its address space (``RLIMIT_AS``: what it already maps plus
``--mem-gib``), moves into a fresh empty folder, notes the process state, runs the case and
reports one outcome through a pipe:

    ok      refused with a ValueError (``bertlib.support.checks.InputError`` included) whose
    message names
            the argument or the value, or with jaxtyping's TypeCheckError naming the argument
            (a tensor's shape or dtype, checked by the signature); for a widget or an exercise
            checker, what a case defines as handled (a notice on screen, a verdict printed)
            instead of raising
    raw     any other exception, or a ValueError whose message names neither
    silent  returned normally where it must refuse (or gave a non-finite / wrong result)
    hang    ran past its time cap (killed)
    blowup  ran out of its memory cap (MemoryError, allocator failure, killed by a signal)
    state   the call, whether it raised or not, changed process state: torch's or NumPy's or
            Python's global RNG, torch's thread count, grad mode or default dtype, os.environ,
            warnings.filters, matplotlib.rcParams, the working folder, the profiler, the
            language set by ``set_language``, or one of the caller's own objects (the fixtures,
            and whatever a case hands bertlib and watches)

It prints a table per module, then every case that is not ok with its message, then the totals
in one line, and exits 1 when any case is not ok. The cases are in ``tools/probe_cases.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import resource
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, ROOT)  # this checkout's bertlib, whatever the environment has installed

OUTCOMES = ("ok", "raw", "silent", "hang", "blowup", "state")
MEMORY_WORDS = ("can't allocate memory", "cannot allocate memory", "bad_alloc",
                "out of memory", "not enough memory")


@dataclass
class Result:
    case: object
    outcome: str
    message: str
    seconds: float


def _vm_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def classify_error(err: BaseException, case) -> tuple[str, str]:
    """The outcome of a case that raised ``err``."""
    if getattr(err, "probe_outcome", None):  # the case's own verdict on what came back
        return err.probe_outcome, _safe_str(err)
    message = f"{type(err).__name__}: {_safe_str(err)}"
    if isinstance(err, MemoryError) or any(w in message.lower() for w in MEMORY_WORDS):
        return "blowup", message
    if case.expect == "refuse" and isinstance(err, ValueError):
        text = _safe_str(err).lower()
        if text and any(n.lower() in text for n in case.names):
            return "ok", message
        return "raw", "uninformative: " + message
    if case.expect == "refuse" and type(err).__name__ == "TypeCheckError":
        # jaxtyping's refusal of a tensor's shape or dtype at a public door: clear when the
        # parameter it names is one the case expects (its message shows the actual shape).
        found = re.search(r"parameter '(\w+)'", _safe_str(err))
        if found and found.group(1).lower() in {n.lower() for n in case.names}:
            return "ok", f"TypeCheckError: parameter {found.group(1)!r}"
        return "raw", "uninformative: " + message
    return "raw", message


def _safe_str(err: BaseException) -> str:
    try:
        return str(err)
    except BaseException as inner:  # an exception whose __str__ fails is a finding, not a crash
        return f"<str() failed: {type(inner).__name__}>"


def snapshot(fixtures=None) -> dict:
    """What a library call must leave as it found it, with the fixtures' digests (unless
    ``fixtures`` is None)."""
    import random
    import warnings

    import matplotlib
    import numpy as np
    import torch

    from bertlib.support.i18n import get_language

    return {
        "torch RNG": torch.get_rng_state().numpy().tobytes(),
        "torch threads": torch.get_num_threads(),
        "torch grad mode": torch.is_grad_enabled(),
        "torch default dtype": str(torch.get_default_dtype()),
        "os.environ": dict(os.environ),
        "warnings.filters": list(map(repr, warnings.filters)),
        "matplotlib.rcParams": {k: repr(v) for k, v in matplotlib.rcParams.items()},
        "working folder": os.getcwd(),
        "numpy RNG": repr(np.random.get_state()),
        "python random": repr(random.getstate()),
        "profiler": repr(sys.getprofile()),
        "tracer": repr(sys.gettrace()),
        "language": get_language(),
    } | ({} if fixtures is None else fixtures.digests())


def changes(before: dict, after: dict, fixtures) -> list[str]:
    """The names of what differs between two snapshots (a dict's changed keys named)."""
    changed = []
    for name in before.keys() | after.keys():
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            keys = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
            changed.append(f"{name}[{', '.join(keys[:4])}{', ...' if len(keys) > 4 else ''}]")
        else:
            changed.append(name)
    return sorted(changed)


def run_in_child(case, fixtures, base: dict, work: str, mem_bytes: int, write_fd: int) -> None:
    """The child's side: cap memory, run ``case`` and write its outcome as JSON to ``write_fd``."""
    outcome, message = "raw", "no outcome"
    try:
        resource.setrlimit(resource.RLIMIT_AS, (_vm_bytes() + mem_bytes, resource.RLIM_INFINITY))
        os.mkdir(work)
        os.chdir(work)
        log = os.open(os.path.join(work, ".output"), os.O_WRONLY | os.O_CREAT, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        sys.stdout = io.TextIOWrapper(
            os.fdopen(1, "wb", buffering=0, closefd=False), write_through=True)
        sys.stderr = io.TextIOWrapper(
            os.fdopen(2, "wb", buffering=0, closefd=False), write_through=True)
        # Python's random module reseeds itself in a forked child: the global state is noted
        # here, the fixtures' digests (the slow part) in the server, once.
        before = snapshot() | base
        try:
            got = case.fn(fixtures)
        except BaseException as err:
            outcome, message = classify_error(err, case)
            if os.environ.get("PROBE_TRACE"):
                message += "\n" + "".join(traceback.format_exception(err))
        else:
            outcome, message = case.judge(got)
        changed = changes(before, snapshot(fixtures), fixtures)
        if changed:
            message = f"changed {', '.join(changed)} (the call itself: {outcome}: {message})"
            outcome = "state"
    except BaseException as err:
        outcome, message = classify_error(err, case)
        if outcome != "blowup":
            outcome, message = "raw", "probe harness: " + message
    try:
        os.write(write_fd, json.dumps({"outcome": outcome, "message": message}).encode())
    finally:
        os._exit(0)


def run_cases(cases, fixtures, jobs: int, mem_bytes: int, verbose: bool) -> list[Result]:
    """Fork one child per case, ``jobs`` at a time; the parent enforces each case's time cap.
    Each case works in a folder of its own, removed when it ends."""
    with tempfile.TemporaryDirectory(prefix="probe-cases-") as root:
        return _run_cases(cases, fixtures, jobs, mem_bytes, verbose, root)


def _run_cases(cases, fixtures, jobs: int, mem_bytes: int, verbose: bool,
               root: str) -> list[Result]:
    pending = list(enumerate(cases))
    running: dict[int, tuple] = {}  # pid -> case, fd, start, data, folder
    results = []
    base = fixtures.digests()
    snapshot()  # its first call is slow (imports, caches): paid once here, not per case
    while pending or running:
        while pending and len(running) < jobs:
            number, case = pending.pop(0)
            work = os.path.join(root, f"case-{number}")
            r, w = os.pipe()
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                os.close(r)
                os.setpgid(0, 0)  # its own group: a timeout kills whatever it started too
                run_in_child(case, fixtures, base, work, mem_bytes, w)
            os.close(w)
            running[pid] = (case, r, time.monotonic(), bytearray(), work)
        fds = {v[1]: pid for pid, v in running.items()}
        ready, _, _ = select.select(list(fds), [], [], 0.2)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                running[fds[fd]][3].extend(chunk)
        for pid, (case, fd, start, data, work) in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            elapsed = time.monotonic() - start
            if done == 0 and elapsed <= case.timeout:
                continue
            if done == 0:  # past its cap
                _kill_group(pid)
                os.waitpid(pid, 0)
                result = Result(case, "hang", f"still running after {case.timeout} s", elapsed)
            else:
                data.extend(_drain(fd))
                result = _result_of(case, status, bytes(data), elapsed)
            _kill_group(pid)  # anything the case started and left behind
            os.close(fd)
            shutil.rmtree(work, ignore_errors=True)
            del running[pid]
            results.append(result)
            if verbose:
                print(f"  {result.outcome:7s} {elapsed:5.1f}s {case.module}: {case.name}",
                      flush=True)
    order = {id(c): i for i, c in enumerate(cases)}
    return sorted(results, key=lambda r: order[id(r.case)])


def _drain(fd: int) -> bytes:
    out = bytearray()
    while chunk := os.read(fd, 65536):
        out.extend(chunk)
    return bytes(out)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


def _result_of(case, status: int, data: bytes, elapsed: float) -> Result:
    if os.WIFSIGNALED(status) and not data:
        name = signal.Signals(os.WTERMSIG(status)).name
        return Result(case, "blowup", f"killed by {name}", elapsed)
    try:
        reply = json.loads(data.decode())
    except ValueError:
        return Result(case, "raw", f"the process ended (status {status}) without an outcome",
                      elapsed)
    return Result(case, reply["outcome"], reply["message"], elapsed)


def report(results: list[Result], seconds: float, show_ok: bool = False) -> int:
    by_module: dict[str, Counter] = defaultdict(Counter)
    for r in results:
        by_module[r.case.module][r.outcome] += 1
    width = max(len(m) for m in by_module)
    print(f"{'module':{width}s} " + " ".join(f"{o:>6s}" for o in ("cases", *OUTCOMES)))
    for module, counts in by_module.items():
        print(f"{module:{width}s} {sum(counts.values()):6d} "
              + " ".join(f"{counts[o]:6d}" for o in OUTCOMES))
    if show_ok:
        print("\nok:")
        for r in results:
            if r.outcome == "ok":
                message = " ".join(r.message.split())[:200]
                print(f"  {r.case.module}: {r.case.name}\n      {message}")
    bad = [r for r in results if r.outcome != "ok"]
    if bad:
        print(f"\nnot ok ({len(bad)}):")
        for r in bad:
            message = " ".join(r.message.split())[:200]
            print(f"  [{r.outcome}] {r.case.module}: {r.case.name}\n      {message}")
    totals = Counter(r.outcome for r in results)
    print(f"\nprobe: {len(results)} inputs: {totals['ok']} ok, {totals['raw']} raw, "
          f"{totals['silent']} silent, {totals['hang']} hang, {totals['blowup']} blowup, "
          f"{totals['state']} state ({seconds:.0f} s)")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[],
                        help="run the cases whose 'module: name' holds this text (repeatable)")
    parser.add_argument("-j", "--jobs", type=int, default=3, help="cases at once (default 3)")
    parser.add_argument("--mem-gib", type=float, default=3.0,
                        help="address space a case may add to what the server maps (GiB)")
    parser.add_argument("--list", action="store_true", help="list the cases and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per case as done")
    parser.add_argument("--show-ok", action="store_true",
                        help="also list the cases that are ok, with their messages")
    args = parser.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MPLBACKEND", "Agg")
    import probe_cases

    cases = [c for c in probe_cases.CASES
             if not args.only or any(o in f"{c.module}: {c.name}" for o in args.only)]
    if args.list:
        for c in cases:
            print(f"{c.module}: {c.name}")
        print(f"{len(cases)} cases")
        return 0
    start = time.monotonic()
    fixtures = probe_cases.Fixtures()
    fixtures.build()
    with tempfile.TemporaryDirectory(prefix="probe-server-") as folder:
        if any(c.module == "bertlib.viz" for c in cases):
            fixtures.build_widgets()
        if any(c.module == "bertlib.scale.pretrain" for c in cases):
            fixtures.build_cli(Path(folder))
        results = run_cases(cases, fixtures, args.jobs, int(args.mem_gib * 2**30), args.verbose)
    return report(results, time.monotonic() - start, args.show_ok)


if __name__ == "__main__":
    sys.exit(main())
