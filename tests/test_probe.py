"""The bad-input probe (tools/probe.py) classifies what it sees: checked here on tiny synthetic
targets, each run the way the probe runs a case (a forked process under a time and a memory
cap), with no bertlib fixture built."""

import os
import random
import signal
import sys
from pathlib import Path

import pytest
import torch

TOOLS = Path(__file__).resolve().parent.parent / "tools"
sys.path.insert(0, str(TOOLS))

import probe  # noqa: E402
import probe_cases  # noqa: E402
from probe_cases import OK, Case, Silent  # noqa: E402


class NoFixtures:
    """The shared fixtures, reduced to one object a case may hand over and must not change."""

    def __init__(self):
        self.owned = [1, 2, 3]

    def digests(self) -> dict:
        return {"the caller's list": probe_cases.digest(self.owned)}


def outcome(fn, *, names=("size",), expect="refuse", timeout=20.0, mem_gib=1.0):
    """The probe's outcome and message for one case running ``fn``."""
    case = Case("synthetic", fn.__name__, fn, names, expect, timeout)
    [result] = probe.run_cases([case], NoFixtures(), 1, int(mem_gib * 2**30), verbose=False)
    return result.outcome, result.message


def test_a_refusal_naming_the_argument_is_ok():
    def refuses(F):
        raise ValueError("size must be a positive integer; got -1")
    assert outcome(refuses)[0] == "ok"


def test_a_refusal_naming_neither_argument_nor_value_is_raw():
    def vague(F):
        raise ValueError("bad input")
    got, message = outcome(vague)
    assert got == "raw" and "uninformative" in message


def test_another_exception_is_raw_with_its_type():
    def deep(F):
        return [][1]
    got, message = outcome(deep)
    assert got == "raw" and message.startswith("IndexError")


def test_an_exception_whose_str_fails_is_raw_not_a_crash():
    class Hostile(Exception):
        def __str__(self):
            raise RuntimeError("no")

    def hostile(F):
        raise Hostile()
    got, message = outcome(hostile)
    assert got == "raw" and "str() failed" in message


def test_returning_where_it_must_refuse_is_silent():
    def accepts(F):
        return 42
    got, message = outcome(accepts)
    assert got == "silent" and "42" in message


def test_a_case_may_judge_a_wrong_result_silent_and_a_right_one_ok():
    def wrong(F):
        raise Silent("got 0.17 instead of 3.36")

    def right(F):
        return OK("the same loss")
    assert outcome(wrong) == ("silent", "got 0.17 instead of 3.36")
    assert outcome(right)[0] == "ok"


def test_a_handled_case_needs_something_shown():
    def shown(F):
        return "× Not yet: a hint"

    def nothing(F):
        return ""
    assert outcome(shown, expect="handled")[0] == "ok"
    assert outcome(nothing, expect="handled")[0] == "silent"


def test_an_endless_loop_is_a_hang():
    def loops(F):
        while True:
            pass
    got, message = outcome(loops, timeout=1.0)
    assert got == "hang" and "1.0 s" in message


def test_a_huge_allocation_is_a_blowup():
    def allocates(F):
        return bytearray(8 * 2**30)
    assert outcome(allocates, mem_gib=0.5)[0] == "blowup"


def test_a_huge_torch_allocation_is_a_blowup():
    def allocates(F):
        return torch.ones(2**31)  # 8 GiB of float32
    assert outcome(allocates, mem_gib=0.5)[0] == "blowup"


def test_a_process_killed_by_a_signal_is_a_blowup():
    def killed(F):
        os.kill(os.getpid(), signal.SIGKILL)
    got, message = outcome(killed)
    assert got == "blowup" and "SIGKILL" in message


@pytest.mark.parametrize("change", [
    lambda F: torch.manual_seed(1),
    lambda F: torch.set_num_threads(torch.get_num_threads() + 1),
    lambda F: os.environ.__setitem__("PROBE_TEST_VARIABLE", "1"),
    lambda F: random.seed(3),
    lambda F: __import__("warnings").simplefilter("ignore"),
    lambda F: __import__("matplotlib").rcParams.__setitem__("font.size", 3),
    lambda F: os.chdir("/"),
    lambda F: F.owned.append(4),
], ids=["torch RNG", "threads", "environ", "random", "warnings", "rcParams", "cwd", "object"])
def test_a_change_of_process_state_is_state_even_when_the_call_refused(change):
    def refuses_after_changing(F):
        change(F)
        raise ValueError("size must be positive; got -1")
    got, message = outcome(refuses_after_changing)
    assert got == "state" and "(the call itself: ok" in message


def test_a_watched_object_changed_by_the_call_is_state():
    class Fixtures(NoFixtures):
        def __init__(self):
            super().__init__()
            self._watched = []

        watch = probe_cases.Fixtures.watch

        def digests(self):
            return super().digests() | probe_cases.Fixtures.digests(self)

        SHARED = ()

    def mutates(F):
        model = F.watch(torch.nn.Linear(2, 2), "model")
        with torch.no_grad():
            model.weight.zero_()
        raise ValueError("size must be positive; got -1")
    case = Case("synthetic", "mutates", mutates, ("size",), "refuse", 20.0)
    [result] = probe.run_cases([case], Fixtures(), 1, 2**30, verbose=False)
    assert result.outcome == "state" and "model (watched)" in result.message


def test_the_report_counts_every_outcome_and_fails_on_any_not_ok(capsys):
    results = [probe.Result(Case("m", n, None), o, "why", 0.1)
               for n, o in [("a", "ok"), ("b", "raw"), ("c", "silent"), ("d", "hang"),
                            ("e", "blowup"), ("f", "state"), ("g", "ok")]]
    assert probe.report(results, 1.0) == 1
    out = capsys.readouterr().out
    assert "probe: 7 inputs: 2 ok, 1 raw, 1 silent, 1 hang, 1 blowup, 1 state" in out
    assert "[silent] m: c" in out
    assert probe.report(results[:1], 1.0) == 0


def test_a_type_check_error_naming_the_argument_is_ok_and_any_other_is_raw():
    from jaxtyping import Int

    from bertlib.model import checked

    @checked
    def embed(tokens: Int[torch.Tensor, "B T"]) -> None:  # noqa: F722
        pass

    def float_tokens(F):
        embed(torch.zeros(2, 3))
    assert outcome(float_tokens, names=("tokens",))[0] == "ok"
    assert outcome(float_tokens, names=("segments",))[0] == "raw"


def test_the_cases_cover_every_public_module():
    modules = {c.module for c in probe_cases.CASES}
    for name in ("bertlib", "bertlib.viz", "bertlib.weights.checkpoint", "bertlib.scale.pretrain",
                 "bertlib.finetuning.tasks", "bertlib.finetuning.finetune",
                 "bertlib.analysis.fill_mask", "bertlib.classroom.exercises",
                 "bertlib.classroom.implement", "bertlib.analysis.evidence",
                 "bertlib.analysis.timelapse", "bertlib.analysis.snapshots", "bertlib.text.words",
                 "bertlib.text.corpus", "bertlib.weights.hf", "bertlib.text.tokenizer",
                 "bertlib.text.vocab", "bertlib.data", "bertlib.batches", "bertlib.loss",
                 "bertlib.scale.fast", "bertlib.train", "bertlib.model", "bertlib.inputs",
                 "bertlib.masking", "bertlib.support.i18n"):
        assert name in modules
    names = [f"{c.module}: {c.name}" for c in probe_cases.CASES]
    assert len(set(names)) == len(names)  # --only picks each by name


def test_every_case_names_who_would_write_it():
    """A case is an input someone plausibly writes: a comment next to it says who (above it,
    on it, or on its loop's list of values)."""
    import inspect
    import re
    source = inspect.getsource(probe_cases).splitlines()
    registration = re.compile(r"^\s*(refuse|handled|cli_case)\(|^\s*@case\(")
    for number, line in enumerate(source):
        if registration.match(line):
            above = 3 if line.startswith(" ") else 1  # in a loop: the loop's values say
            near = source[max(number - above, 0):number + 1]
            after = source[number + 1] if number + 1 < len(source) else ""
            near.append("" if after.lstrip().startswith("#") else after)  # its own 2nd line
            assert any("#" in n for n in near), f"line {number + 1}: {line.strip()}"
