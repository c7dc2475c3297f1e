"""Grading outside the learner's process (bertlib.classroom.grading): every implement-it
exercise's reference solution passes in the sandbox, as the student's cell holds it; wrong and
cheating cells fail with the reason; the handed-out functions and the modules cross as plain
values. The whole nbgrader loop is tests/classroom/test_assignments.py (`make test-all`)."""

from __future__ import annotations

import functools
import platform
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from bertlib.classroom.grading import (
    grade_answer,
    grade_implementation,
    plain_number,
    run_sandboxed,
)
from bertlib.classroom.implement_cases import IMPLEMENTATIONS
from bertlib.support.i18n import LANGUAGES, text

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import assignments  # noqa: E402

from notebooks import NOTEBOOKS, load_source, sources  # noqa: E402


@functools.cache
def solved_cells(lang: str = "en") -> dict[str, tuple[str, str]]:
    """Each implement-it exercise's cell as a student who solved it would hand it in (the
    instructor's version without nbgrader's markers), and the function's name the check calls."""
    cells = {}
    for src in sources(NOTEBOOKS):
        nb = assignments.assignment(load_source(src), lang, exercises_only=True)
        by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells}
        solutions = assignments.solved(nb)
        for key in IMPLEMENTATIONS:
            if key in by_id:
                called = re.search(r"check_implementation\(\"\w+\", (\w+)",
                                   by_id[f"bertlib-impl-{key}"].source)[1]
                cells[key] = (solutions[key], called)
    return cells


@pytest.mark.parametrize("key", IMPLEMENTATIONS)
def test_every_reference_solution_passes_in_the_sandbox(key: str) -> None:
    source, name = solved_cells()[key]
    assert "raise NotImplementedError" not in source
    ok, message = grade_implementation(key, source, name, "en")
    assert ok, message
    assert message == text("grade_passed", "en")


def _broken(key: str, old: str, new: str) -> tuple[str, str]:
    source, name = solved_cells()[key]
    assert old in source
    return source.replace(old, new), name


@pytest.mark.parametrize("lang", LANGUAGES)
def test_attention_masking_queries_fails_on_a_padded_case(lang: str) -> None:
    # 03 handed a module: its layers cross with their weights, so a mistake shows as in the
    # notebook, by the case that catches it.
    source, name = _broken("03_attention_weights", "real[:, None, None, :]",
                           "real[:, None, :, None]")
    ok, message = grade_implementation("03_attention_weights", source, name, lang, seed=0)
    assert not ok
    padded = IMPLEMENTATIONS["03_attention_weights"].cases(0)[2][0][lang]
    assert padded in message.replace("\n", "")


def test_calling_the_modules_own_forward_is_calling_bertlib() -> None:
    source = ("def attention_weights(attention, X, valid_lens):\n"
              "    return attention(X, None, need_weights=True)[1]\n")
    ok, message = grade_implementation("03_attention_weights", source, "attention_weights", "en")
    assert not ok and message.replace("\n", " ") == text("grade_bertlib", "en")


def test_nsp_pairs_call_bertlibs_handed_out_functions_through_the_grader() -> None:
    # 05's cell calls get_next_sentence with its own generator: the grader runs bertlib's and
    # hands the generator's state back, so the coin flips are the notebook's.
    ok, message = grade_implementation("05_nsp_pair_builder",
                                       *solved_cells()["05_nsp_pair_builder"], "en", seed=0)
    assert ok, message
    # One <sep> counted, not two: pairs one token too long are kept, and the case says so.
    source, name = _broken("05_nsp_pair_builder", "+ 3 > max_len", "+ 2 > max_len")
    ok, message = grade_implementation("05_nsp_pair_builder", source, name, "en", seed=0)
    too_long = IMPLEMENTATIONS["05_nsp_pair_builder"].cases(0)[3][0]["en"]
    assert not ok and too_long in message.replace("\n", " ")


def test_a_handed_out_function_takes_keyword_arguments() -> None:
    source = ("def nsp_pairs(paragraphs, max_len, seed):\n"
              "    g = torch.Generator().manual_seed(seed)\n"
              "    a, b, _ = get_next_sentence(paragraphs[0][0], paragraphs[0][1], paragraphs,\n"
              "                                paragraph_idx=0, g=g)\n"
              "    return [get_tokens_and_segments(a, tokens_b=b), g.initial_seed()]\n")
    answer = run_sandboxed(source, "nsp_pairs", [[[[["a"], ["b"]], [["c"]]], 8, 3]],
                           IMPLEMENTATIONS["05_nsp_pair_builder"].allowed)
    pair, seed = answer["results"][0]
    assert seed == 3
    assert pair[1] == [0, 0, 0, 1, 1]  # <cls> a <sep> b-or-c <sep>


def test_a_handed_out_function_raises_in_the_cell_on_bad_arguments() -> None:
    source = ("def nsp_pairs(paragraphs, max_len, seed):\n"
              "    return [get_tokens_and_segments('not a list of tokens')]\n")
    answer = run_sandboxed(source, "nsp_pairs", [[[["a"]], 5, 0]],
                           IMPLEMENTATIONS["05_nsp_pair_builder"].allowed)
    raised = answer["results"][0]
    assert raised["__raised__"] == "ValueError" and "tokens_a" in raised["message"]


@pytest.mark.parametrize("cell, kind", [
    ("import bertlib\ndef f(x):\n    return x\n", "bertlib"),
    # The refusing finder removed and bertlib's folder put on the path: the audit hook, which
    # cannot be removed, refuses to open its files.
    ("import sys\ndef f(x):\n    sys.meta_path[:] = sys.meta_path[1:]\n"
     f"    sys.path.append({str(ROOT)!r})\n    import bertlib\n    return x\n", "bertlib"),
    ("import importlib, sys\ndef f(x):\n    sys.meta_path[:] = sys.meta_path[1:]\n"
     f"    sys.path.append({str(ROOT)!r})\n"
     "    return importlib.import_module('bertlib.finetuning').__name__\n", "bertlib"),
    # Its code read and run as the cell's own.
    (f"def f(x):\n    exec(open({str(ROOT / 'bertlib' / 'loss.py')!r}).read())\n    return x\n",
     "bertlib"),
    ("def f(x):\n    import importlib\n    return importlib.import_module('bert' + 'lib')\n",
     "bertlib"),
    ("def f(x):\n    return x +\n", "crashed"),
    ("def g(x):\n    return x\n", "no_function"),
    ("def f(x):\n    while True:\n        pass\n", "timeout"),
])
def test_the_sandbox_refuses_bertlib_and_names_what_went_wrong(cell: str, kind: str) -> None:
    assert run_sandboxed(cell, "f", [[1]], timeout=20).get("kind") == kind


@pytest.mark.skipif(sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64"),
                    reason="the seccomp filter is Linux's (x86-64, aarch64)")
def test_no_new_program_starts_from_the_sandbox() -> None:
    # A child python would have the site folder, and bertlib with it: execve fails, so neither
    # a subprocess nor a spawned process pool can call bertlib; a forked child keeps the locks.
    cell = ("import os, subprocess, sys, multiprocessing as mp\n"
            "def run(x):\n"
            "    return subprocess.run([sys.executable, '-c', 'import bertlib'])\n"
            "def shell(x):\n    return os.system('true')\n"
            "def forked(x):\n"
            "    with mp.get_context('fork').Pool(1) as pool:\n"
            "        return pool.apply(__import__, ('bert' + 'lib',))\n"
            "def spawned(x):\n"
            "    with mp.get_context('spawn').Pool(1) as pool:\n"
            "        return pool.apply(abs, (x,))\n")
    raised = run_sandboxed(cell, "run", [[0]], timeout=20)["results"][0]
    assert raised["__raised__"] == "PermissionError", raised
    assert run_sandboxed(cell, "shell", [[0]], timeout=20) == {"results": [127 << 8]}
    assert run_sandboxed(cell, "forked", [[0]], timeout=20)["kind"] == "bertlib"
    assert run_sandboxed(cell, "spawned", [[0]], timeout=8) == {"kind": "timeout"}


def test_a_flood_of_prints_does_not_block_the_answer() -> None:
    cell = "def f(x):\n    print('x' * 1_000_000)\n    return x + 1\n"
    assert run_sandboxed(cell, "f", [[1], [2]], timeout=20) == {"results": [2, 3]}


def test_results_cross_as_plain_values_only() -> None:
    cell = ("class Forged(int):\n    def __eq__(self, other):\n        return True\n"
            "class Tensorish(torch.Tensor):\n    pass\n"
            "def f(x):\n"
            "    return [Forged(1), torch.zeros(2).as_subclass(Tensorish), (1.5, 'a', None)]\n")
    results = run_sandboxed(cell, "f", [[0]], timeout=20)["results"][0]
    assert results == [{"__not_plain__": "Forged"}, {"__not_plain__": "Tensorish"},
                       [1.5, "a", None]]


@pytest.mark.parametrize("answer, payload", [
    (3, {"value": 3}), (2.5, {"value": 2.5}), (torch.tensor(7), {"value": 7}),
    (np.int64(4), {"value": 4}), (np.float32(0.5), {"value": 0.5}),
    (None, {"value": None, "type": None}), ("12", {"value": None, "type": "str"}),
    (torch.ones(2), {"value": None, "type": "Tensor"}), (True, {"value": None, "type": "bool"}),
])
def test_a_single_answer_is_reported_as_a_plain_number(answer, payload) -> None:
    assert plain_number(answer) == payload


def test_an_int_subclass_is_named_not_compared() -> None:
    class Forged(int):
        def __eq__(self, other):
            return True

    payload = plain_number(Forged(0))
    assert payload == {"value": None, "type": "test_an_int_subclass_is_named_not_compared."
                                              "<locals>.Forged"}
    ok, message = grade_answer("03_block_params", payload, "en")
    assert not ok and "Forged" in message


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_single_answer_is_graded_against_bertlibs_in_the_graders_process(lang: str) -> None:
    from bertlib.classroom.exercises import EXERCISES
    right = EXERCISES["03_block_params"]()
    assert grade_answer("03_block_params", {"value": right}, lang) == (
        True, text("ex_correct", lang))
    ok, message = grade_answer("03_block_params", {"value": right + 1}, lang)
    assert not ok and text("ex_hint_03_block_params", lang)[:10] in message.replace("\n", "")
    assert str(right) not in message  # the expected answer is never told
    ok, message = grade_answer("03_block_params", None, lang)
    assert not ok
