"""Pretraining beyond the notebook: torchrun with several processes, resuming, any corpus."""

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from bertlib.assets import WIKITEXT_SAMPLE
from bertlib.pretrain import RunArgs, parse_args, pretrain, read_corpus

TINY = {"steps": 6, "batch_size": 8, "num_hiddens": 32, "ffn_num_hiddens": 64, "max_len": 48,
        "save_every": 2, "log_every": 1}


def weights(directory: Path) -> dict[str, torch.Tensor]:
    return load_file(str(directory / "model.safetensors"))


def test_two_processes_under_torchrun_make_the_update_of_one(tmp_path):
    """Same global batch, no dropout: two gloo processes, each with half of every batch, end
    where one process does."""
    one = RunArgs(corpus="small", out=str(tmp_path / "one"), dropout=0.0, **TINY)
    pretrain(one)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         "-m", "bertlib.pretrain", "--corpus", "small", "--out", str(tmp_path / "two"),
         "--dropout", "0.0", *(f"--{k.replace('_', '-')}={v}" for k, v in TINY.items())],
        env=env, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "on 2 process(es)" in run.stdout
    a, b = weights(tmp_path / "one"), weights(tmp_path / "two")
    for name in a:
        if name.endswith("attention.W_k.bias"):
            # Its gradient is zero in exact arithmetic (softmax ignores a constant added to a
            # query's scores); Adam turns the rounding noise of either sum into steps of ±lr.
            continue
        torch.testing.assert_close(a[name], b[name], atol=1e-5, rtol=1e-4, msg=name)


def test_an_interrupted_run_resumes_to_the_same_weights(tmp_path):
    whole = RunArgs(corpus="small", out=str(tmp_path / "whole"), **TINY)
    pretrain(whole)

    broken = dataclasses.replace(whole, out=str(tmp_path / "broken"))

    def interrupt(step, mlm, nsp):
        if step == 5:  # after the checkpoint of step 4
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        pretrain(broken, on_step=interrupt)
    losses = []
    pretrain(broken, on_step=lambda step, mlm, nsp: losses.append(step))
    assert losses == [5, 6]  # resumed after step 4
    a, b = weights(tmp_path / "whole"), weights(tmp_path / "broken")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_checkpoint_resumes_only_the_run_that_made_it(tmp_path):
    args = RunArgs(corpus="small", out=str(tmp_path), **{**TINY, "steps": 2})
    pretrain(args)
    with pytest.raises(ValueError, match=r"made with other arguments.*'lr': \(0.001, 0.01\)"):
        pretrain(dataclasses.replace(args, lr=0.01))


def test_any_corpus_wikitext_or_a_folder_of_text_files(tmp_path):
    wiki = read_corpus(str(WIKITEXT_SAMPLE))
    assert wiki[0][0] == "harbour lights is a small lighthouse on the north coast"
    folder = tmp_path / "texts"
    folder.mkdir()
    (folder / "a.txt").write_text("The cat sat.\nIt slept.\n\nA dog ran.\nIt barked.\n",
                                  encoding="utf-8")
    (folder / "b.txt").write_text("Rain fell.\nWe stayed in.\n", encoding="utf-8")
    assert read_corpus(str(folder)) == [["The cat sat.", "It slept."],
                                        ["A dog ran.", "It barked."],
                                        ["Rain fell.", "We stayed in."]]
    model = pretrain(RunArgs(corpus=str(folder), out=str(tmp_path / "run"), vocab_size=60,
                             **{**TINY, "batch_size": 2, "steps": 2}))
    assert (tmp_path / "run" / "tokenizer.json").is_file()
    assert model.config.vocab_size <= 60


def test_bad_corpora_are_named(tmp_path):
    with pytest.raises(ValueError, match=r"corpus must be 'small', a WikiText \*.tokens file"):
        read_corpus(str(tmp_path / "no" / "such" / "place"))
    with pytest.raises(ValueError, match=r"corpus folder '.*' holds no \*.txt file"):
        read_corpus(str(tmp_path))


def test_the_global_batch_must_split_evenly_and_the_caller_rng_is_kept(tmp_path, monkeypatch):
    state = torch.get_rng_state()
    pretrain(RunArgs(corpus="small", out=str(tmp_path), **{**TINY, "steps": 1}))
    assert torch.equal(state, torch.get_rng_state())
    monkeypatch.setenv("WORLD_SIZE", "3")
    with pytest.raises(ValueError, match="batch_size=8 must be a multiple of the number of "
                                         r"processes \(3\)"):
        pretrain(RunArgs(corpus="small", out=str(tmp_path / "x"), **TINY))


def test_the_command_line_gives_every_argument():
    args = parse_args(["--corpus", "small", "--out", "o", "--steps", "7", "--lr", "0.01"])
    assert args == RunArgs(corpus="small", out="o", steps=7, lr=0.01)
