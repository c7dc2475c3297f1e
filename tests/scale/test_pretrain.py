"""Pretraining beyond the notebook: torchrun with several processes, resuming, any corpus."""

import dataclasses
import errno
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import every_crash
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file

import bertlib.scale.pretrain as pretrain_module
import bertlib.weights.checkpoint
from bertlib import BERTConfig, BERTModel
from bertlib.assets import SMALL_BERT_DIR, WIKITEXT_SAMPLE
from bertlib.loss import BERTLoss
from bertlib.scale.pretrain import (
    RunArgs,
    build_tokenizer,
    load_checkpoint,
    parse_args,
    pretrain,
    read_corpus,
    save_checkpoint,
    slice_loss,
)
from bertlib.support.files import complete_folder
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.train import make_optimizer

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
         "-m", "bertlib.scale.pretrain", "--corpus", "small", "--out", str(tmp_path / "two"),
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
    with pytest.raises(ValueError, match=r"corpus folder '.*' must hold \*.txt files .*; it holds "
                                         r"0 bytes in 0 files"):
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
    assert args == (RunArgs(corpus="small", out="o", steps=7, lr=0.01), None)


@pytest.fixture
def texts(tmp_path) -> str:
    """A folder corpus small enough that a run of a few steps takes a fraction of a second."""
    folder = tmp_path / "texts"
    folder.mkdir()
    lines = ["The cat sat.", "It slept.", "A dog ran.", "It barked.", "Rain fell.",
             "We stayed in.", "The sun rose.", "Birds sang."]
    (folder / "a.txt").write_text("\n\n".join("\n".join(lines[i:i + 4]) for i in range(5)),
                                  encoding="utf-8")
    return str(folder)


def fast_args(texts: str, out, **changes) -> RunArgs:
    return RunArgs(corpus=texts, out=str(out), vocab_size=60,
                   **{**TINY, "batch_size": 2, "steps": 2, "save_every": 1} | changes)


def adam_run(seed: int) -> tuple[BERTModel, torch.optim.Optimizer]:
    """A tiny model and its Adam after ``seed`` steps on random gradients."""
    torch.manual_seed(seed)
    model = BERTModel.from_config(BERTConfig(30, 8, 16, 2, 1, 0.0, 8))
    optimizer = make_optimizer(model, 0.01)
    for _ in range(seed):
        for p in model.parameters():
            p.grad = torch.randn_like(p)
        optimizer.step()
    return model, optimizer


def test_a_checkpoint_save_crashed_at_any_step_leaves_the_old_one_or_the_new(tmp_path):
    """The old save removed the checkpoint before it moved the new one in: a kill between the
    two left none."""
    args = RunArgs(corpus="small", out=str(tmp_path), steps=9)
    runs = {"old": adam_run(1), "new": adam_run(2)}
    steps = {"old": 1, "new": 2}

    def save(k, which="new"):
        save_checkpoint(tmp_path / str(k), *runs[which], steps[which], args)

    def read(k):
        folder = complete_folder(tmp_path / str(k))
        if folder is None:
            return "none"
        model, adam, step = load_checkpoint(folder, args)
        for which, (ref, optimizer) in runs.items():
            state = optimizer.state_dict()["state"]
            if step == steps[which] and all(
                    torch.equal(t, ref.state_dict()[k]) for k, t in model.state_dict().items()
            ) and all(torch.equal(adam[i][n], state[i][n]) for i in state for n in state[i]):
                return which
        return "mix"

    assert every_crash(lambda k: save(k, "old"), save, read, "old", "new") == {"old", "new"}


def test_tokenizer_json_written_at_any_step_is_whole_or_absent(tmp_path):
    """A run killed while writing tokenizer.json left a part of it that every rerun refused."""
    args = RunArgs(corpus="small", out=str(tmp_path))

    def save(k):
        (tmp_path / str(k)).mkdir(exist_ok=True)
        build_tokenizer(args, [], tmp_path / str(k), rank=0)

    def read(k):
        path = tmp_path / str(k) / "tokenizer.json"
        return len(WordPieceTokenizer.from_file(path).vocab) if path.exists() else None

    shipped = len(WordPieceTokenizer.from_file(SMALL_BERT_DIR / "tokenizer.json").vocab)
    assert every_crash(lambda k: None, save, read, None, shipped) == {"old", "new"}


@pytest.fixture
def finished(texts, tmp_path) -> RunArgs:
    """A finished two-step run with its checkpoint."""
    args = fast_args(texts, tmp_path / "run")
    pretrain(args)
    return args


def resumed(args: RunArgs, tmp_path, name: str) -> tuple[RunArgs, Path]:
    """A copy of the run ``args`` to be resumed for two more steps, and its checkpoint."""
    shutil.copytree(args.out, tmp_path / name)
    copy = dataclasses.replace(args, out=str(tmp_path / name), steps=4)
    return copy, tmp_path / name / "checkpoint"


def test_adam_moments_of_the_wrong_shape_are_refused(finished, tmp_path):
    args, checkpoint = resumed(finished, tmp_path, "shape")
    state = load_file(checkpoint / "optimizer.safetensors")
    state["0.exp_avg"] = torch.zeros(3)
    save_file(state, checkpoint / "optimizer.safetensors")
    with pytest.raises(ValueError, match=r"0.exp_avg has shape \(3,\); parameter 0 needs"):
        pretrain(args)
    args, checkpoint = resumed(finished, tmp_path, "negative")
    state["0.exp_avg"] = -torch.ones(state["0.exp_avg_sq"].shape)
    state["0.exp_avg_sq"] = -torch.ones(state["0.exp_avg_sq"].shape)  # sqrt(-1): NaN weights
    save_file(state, checkpoint / "optimizer.safetensors")
    with pytest.raises(ValueError, match=r"exp_avg_sq >= 0"):
        pretrain(args)


def broken_json(path):
    path.write_text('{"step": 2, "args": {')


def missing_step(path):
    path.write_text(json.dumps({"args": json.loads(path.read_text())["args"]}))


def named_pipe(path):
    path.unlink()
    os.mkfifo(path)  # a read would block forever


def dev_zero(path):
    path.unlink()
    path.symlink_to("/dev/zero")  # a read would never end


def truncated(path):
    path.write_bytes(path.read_bytes()[:200])


@pytest.mark.parametrize(("name", "damage", "message"), [
    ("trainer.json", broken_json, "trainer.json must hold JSON"),
    ("trainer.json", missing_step, r"must hold \"step\", an integer in \[0, steps=4\]"),
    ("trainer.json", named_pipe, "trainer.json must be a regular file"),
    ("trainer.json", dev_zero, "trainer.json must be a regular file; it is a device"),
    ("optimizer.safetensors", truncated, "not a safetensors file that fits its header"),
    ("model.safetensors", truncated, "not a safetensors file that fits its header"),
    ("optimizer.safetensors", named_pipe, "optimizer.safetensors must be a regular file"),
])
def test_a_damaged_resume_folder_is_refused_clearly(finished, tmp_path, name, damage, message):
    args, checkpoint = resumed(finished, tmp_path, "damaged")
    damage(checkpoint / name)
    with pytest.raises(ValueError, match=message):
        pretrain(args)


@pytest.mark.parametrize("when", ["loss", "gradients"])
def test_training_that_turns_nan_stops_before_the_update(texts, tmp_path, monkeypatch, when):
    """The loop went on with NaN weights and saved them; now it stops at the step and leaves the
    checkpoint of the step before."""
    good = fast_args(texts, tmp_path / "good", steps=2)
    pretrain(good)
    real = pretrain_module.slice_loss

    def nan_at_step_3(model, batch, batch_weight, world):
        loss = real(model, batch, batch_weight, world)
        if torch.initial_seed() != good.seed * 1_000_003 + 3 * 1009:  # the seed of step 3
            return loss
        if when == "loss":
            return BERTLoss(loss.mlm * float("nan"), loss.nsp, loss.total * float("nan"))
        w = next(model.parameters())  # finite value, NaN gradient: sqrt'(0) * 0
        return BERTLoss(loss.mlm, loss.nsp, loss.total + torch.sqrt((w * 0).sum()))

    monkeypatch.setattr(pretrain_module, "slice_loss", nan_at_step_3)
    bad = dataclasses.replace(good, out=str(tmp_path / "bad"), steps=4)
    with pytest.raises(ValueError, match=r"step 3: the loss or its gradients are not finite"):
        pretrain(bad)
    assert not (tmp_path / "bad" / "model.safetensors").exists()  # no final model
    a, b = weights(tmp_path / "good"), weights(tmp_path / "bad" / "checkpoint")
    assert all(torch.equal(a[k], b[k]) for k in a)  # the weights after step 2


@pytest.mark.parametrize(("flags", "message"), [
    (["--threads", "0"], "error: threads must be a positive integer; got 0"),
    (["--lr", "-1"], r"error: lr must be a number in \(0, 10\]"),
    (["--lr", "1e6"], r"error: lr must be a number in \(0, 10\] .*got 1000000.0"),
    (["--lr", "nan"], r"error: lr must be a number in \(0, 10\] .*got nan"),
    (["--dropout", "-0.1"], r"error: dropout must be a number in \[0, 1\)"),
    (["--seed", "-1"], r"error: seed must be an integer in \[0, 2\*\*63 - 1\]"),
    (["--vocab-size", "0"], "error: vocab_size must be a positive integer"),
    (["--steps", "0"], "error: steps must be a positive integer"),
    (["--batch-size", "two"], "argument --batch-size: invalid int value: 'two'"),
    (["--num-heads", "3"], "num_hiddens must be divisible by num_heads"),
    (["--out", ""], "error: out must not be empty"),
])
def test_bad_flags_are_named_by_the_command_line(flags, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse_args(["--corpus", "small", "--out", "o", *flags])
    assert exit_.value.code == 2
    assert re.search(message, capsys.readouterr().err)


@pytest.mark.parametrize(("change", "message"), [
    ({"lr": 1e6}, r"lr must be a number in \(0, 10\]"),
    ({"dropout": -0.5}, "dropout must be a number"),
    ({"seed": -1}, "seed must be an integer"), ({"vocab_size": 0}, "vocab_size must be"),
    ({"num_blks": 1.5}, "num_blks must be a positive integer"),
])
def test_bad_arguments_are_refused_before_anything_is_written(tmp_path, change, message):
    with pytest.raises(ValueError, match=message):
        pretrain(RunArgs(corpus="small", out=str(tmp_path / "out"), **change))
    assert not (tmp_path / "out").exists()


def test_a_corpus_that_is_not_a_regular_file_is_called_so(tmp_path):
    with pytest.raises(ValueError, match="must be a regular file; it is a device"):
        read_corpus("/dev/null")
    (tmp_path / "out").write_text("a file")
    with pytest.raises(ValueError, match="out must be a folder bertlib can create"):
        pretrain(RunArgs(corpus="small", out=str(tmp_path / "out")))


def test_parsing_changes_no_thread_count_running_the_command_may(monkeypatch, capsys):
    threads = torch.get_num_threads()
    parse_args(["--corpus", "small", "--out", "o", "--threads", str(threads + 1)])
    assert torch.get_num_threads() == threads
    seen = []
    monkeypatch.setattr(pretrain_module, "pretrain", lambda args: seen.append(
        torch.get_num_threads()))
    try:
        pretrain_module.main(["--corpus", "small", "--out", "o", "--threads", str(threads + 1)])
    finally:
        torch.set_num_threads(threads)
    assert seen == [threads + 1]


def test_the_command_prints_a_refusal_as_one_line(tmp_path, capsys):
    with pytest.raises(SystemExit, match="error: .*must be a regular file; it is a device"):
        pretrain_module.main(["--corpus", "/dev/null", "--out", str(tmp_path)])


def command(args: RunArgs) -> list[str]:
    """The command line that asks for ``args``."""
    return [word for name, value in dataclasses.asdict(args).items()
            for word in ("--" + name.replace("_", "-"), str(value))]


def test_ctrl_c_says_in_one_line_where_the_last_checkpoint_is(texts, tmp_path, monkeypatch,
                                                               capsys):
    args = fast_args(texts, tmp_path / "run", steps=4)
    steps = []

    def ctrl_c_at_step_2(*batch):
        steps.append(len(steps) + 1)
        if steps[-1] == 2:
            raise KeyboardInterrupt
        return slice_loss(*batch)

    monkeypatch.setattr(pretrain_module, "slice_loss", ctrl_c_at_step_2)
    with pytest.raises((SystemExit, KeyboardInterrupt)) as stop:  # not let out as a traceback
        pretrain_module.main(command(args))
    assert stop.type is SystemExit and stop.value.code == 130  # 128 + SIGINT, as shells say
    checkpoint = tmp_path / "run" / "checkpoint"
    assert capsys.readouterr().err == (f"python -m bertlib.scale.pretrain: stopped; the last "
                                       f"checkpoint "
                                       f"is '{checkpoint}': run the same command to resume\n")
    assert json.loads((checkpoint / "trainer.json").read_text())["step"] == 1


@pytest.mark.parametrize("full", [
    OSError(errno.ENOSPC, "No space left on device"),
    SafetensorError('Error while serializing: IoError(Os { code: 28, kind: StorageFull, '
                    'message: "No space left on device" })'),
])
def test_a_full_disk_while_saving_a_checkpoint_is_one_line(texts, tmp_path, monkeypatch, full):
    def save_file(*args, **kwargs):  # Adam's state, the checkpoint's largest file
        raise full

    monkeypatch.setattr(bertlib.weights.checkpoint, "save_file", save_file)
    with pytest.raises(SystemExit, match=r"^python -m bertlib.scale.pretrain: error: cannot "
                                         r"save the "
                                         r"checkpoint of step 1 into '.*checkpoint' \(the last "
                                         r"one saved stays\): .*No space left on device\W*$"):
        pretrain_module.main(command(fast_args(texts, tmp_path / "run")))


def test_an_out_folder_that_cannot_be_written_is_one_line(texts, tmp_path):
    readonly = tmp_path / "readonly"
    readonly.mkdir(mode=0o555)
    if os.geteuid() == 0:  # root writes into a folder whatever its mode, not into sysfs
        readonly = Path("/sys/kernel")
    (tmp_path / "out").symlink_to(readonly)
    with pytest.raises(SystemExit, match=r"^python -m bertlib.scale.pretrain: error: out must be a "
                                         r"folder bertlib can write to; got '.*out': "):
        pretrain_module.main(command(fast_args(texts, tmp_path / "out")))


def test_a_second_run_on_the_same_out_is_refused_while_the_first_runs(texts, tmp_path):
    """The second run would remove the first's checkpoint.partial as a stale leftover."""
    args = fast_args(texts, tmp_path / "run")
    out = Path(args.out)
    (out / "checkpoint.partial").mkdir(parents=True)  # the first run's save under way
    first = os.open(out / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(first, fcntl.LOCK_EX)  # as the first run holds it
    with pytest.raises(SystemExit, match=r"^python -m bertlib.scale.pretrain: error: another "
                                         r"run is "
                                         rf"using the folder '{re.escape(str(out))}'"):
        pretrain_module.main(command(args))
    assert (out / "checkpoint.partial").is_dir()
    os.close(first)  # the first run ends: the folder is free again
    pretrain_module.main(command(args))
    assert json.loads((out / "checkpoint" / "trainer.json").read_text())["step"] == 2
