"""Snapshots during training: the weights a recorder keeps are those of a run stopped at that
step, and a file written with them reads back whole, or not at all."""

import itertools

import pytest
import torch
from helpers import every_crash
from safetensors.torch import save_file

import bertlib.analysis.snapshots as snapshots_module
from bertlib.analysis.snapshots import (
    SMALL_BERT_STEPS,
    SNAPSHOTS_FILE,
    SnapshotRecorder,
    Snapshots,
    load_snapshots,
    save_snapshots,
)
from bertlib.train import train_bert


def test_a_snapshot_is_the_model_of_a_run_stopped_at_that_step(toy_model, toy_data):
    model = toy_model(seed=0)
    recorder = SnapshotRecorder(model, [0, 2, 3])
    initial = {k: v.clone() for k, v in model.state_dict().items()}
    history = train_bert(model, toy_data, num_steps=3, batch_size=4, seed=0, progress=False,
                         callback=recorder)
    assert sorted(recorder.snapshots) == [0, 2, 3] and len(history.mlm) == 3
    assert all(torch.equal(recorder.snapshots[0][k], v) for k, v in initial.items())
    stopped = toy_model(seed=0)
    train_bert(stopped, toy_data, num_steps=2, batch_size=4, seed=0, progress=False)
    assert all(torch.equal(recorder.snapshots[2][k], v) for k, v in stopped.state_dict().items())
    assert all(torch.equal(recorder.snapshots[3][k], v) for k, v in model.state_dict().items())


def test_snapshots_read_back_in_fp16_with_the_losses(tmp_path, toy_model):
    model = toy_model(seed=1)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    saved = Snapshots({5: state, 0: state}, [2.5, 2.25], [0.75, 0.5])
    save_snapshots(saved, tmp_path / SNAPSHOTS_FILE)
    loaded = load_snapshots(tmp_path)
    assert list(loaded.weights) == [0, 5]  # in step order
    for name, value in state.items():
        assert loaded.weights[5][name].dtype == torch.float32
        assert torch.equal(loaded.weights[5][name], value.half().float())
    assert loaded.mlm_loss == [2.5, 2.25] and loaded.nsp_loss == [0.75, 0.5]
    model.load_state_dict(loaded.weights[0])  # loads into the model it came from


def test_a_save_that_fails_leaves_the_old_file_whole(tmp_path, toy_model, monkeypatch):
    state = toy_model(seed=0).state_dict()
    save_snapshots(Snapshots({0: state}, [1.0], [0.5]), tmp_path / SNAPSHOTS_FILE)
    before = (tmp_path / SNAPSHOTS_FILE).read_bytes()

    def dies_halfway(tensors, path, metadata=None):
        with open(path, "wb") as f:
            f.write(b"\x00" * 100)  # part of a file, then the process is "killed"
        raise OSError("No space left on device")

    monkeypatch.setattr(snapshots_module, "save_file", dies_halfway)
    with pytest.raises(ValueError, match="cannot save the snapshots .* No space left"):
        save_snapshots(Snapshots({0: state, 1: state}, [1.0], [0.5]), tmp_path / SNAPSHOTS_FILE)
    assert (tmp_path / SNAPSHOTS_FILE).read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [SNAPSHOTS_FILE]  # no partial file left


def test_endless_steps_and_other_files_are_refused(tmp_path, toy_model):
    for steps in (itertools.count(), iter([0, 1]), {0, 1}):  # could be endless, or unordered
        with pytest.raises(ValueError, match="steps must be a list of training steps"):
            SnapshotRecorder(toy_model(), steps)
    (tmp_path / SNAPSHOTS_FILE).write_bytes(b"not safetensors")
    with pytest.raises(ValueError, match="is not a safetensors file"):
        load_snapshots(tmp_path)


def test_the_shipped_snapshots_cover_the_run_from_first_to_last_step():
    """Every step of SMALL_BERT_STEPS, the last one the end of the run, under 10 MB, with a
    loss per step; the losses fall, as a run that learns does."""
    shipped = load_snapshots()
    assert tuple(shipped.weights) == SMALL_BERT_STEPS
    assert len(shipped.mlm_loss) == len(shipped.nsp_loss) == SMALL_BERT_STEPS[-1]
    size = (snapshots_module.SMALL_BERT_DIR / SNAPSHOTS_FILE).stat().st_size
    assert size < 10 * 2**20
    assert sum(shipped.mlm_loss[-50:]) < sum(shipped.mlm_loss[:50]) / 2



def test_a_save_crashed_at_any_step_leaves_the_old_file_or_the_new(tmp_path, toy_model):
    states = {"old": toy_model(seed=0).state_dict(), "new": toy_model(seed=1).state_dict()}

    def save(k, which="new"):
        (tmp_path / str(k)).mkdir(exist_ok=True)
        save_snapshots(Snapshots({0: states[which]}, [1.0], [0.5]),
                       tmp_path / str(k) / SNAPSHOTS_FILE)

    def read(k):
        loaded = load_snapshots(tmp_path / str(k)).weights[0]
        return next((which for which, state in states.items() if all(
            torch.equal(loaded[name], value.half().float()) for name, value in state.items())),
            "mix")

    seen = every_crash(lambda k: save(k, "old"), save, read, "old", "new")
    assert seen == {"old", "new"}


@pytest.mark.parametrize("losses", ['"3"', "[1, null]", "[" * 100_000])
def test_losses_in_a_file_must_be_lists_of_numbers(tmp_path, losses):
    save_file({"0/w": torch.zeros(1)}, tmp_path / SNAPSHOTS_FILE,
              metadata={"mlm_loss": losses, "nsp_loss": "[0.5]"})
    with pytest.raises(ValueError, match="mlm_loss|lacks the run's losses"):
        load_snapshots(tmp_path)
