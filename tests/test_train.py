"""Training: one step, the loop, and held-out evaluation."""

import dataclasses
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from bertlib import eval_mode, evaluate_pretraining, get_bert_encoding, load_small_bert
from bertlib.batches import make_loader, trim_padding
from bertlib.finetuning.finetune import BagOfWords, BERTClassifier, fine_tune
from bertlib.finetuning.tasks import TaskData
from bertlib.inputs import available_devices
from bertlib.loss import chapter_loss
from bertlib.scale.fast import fast_loss
from bertlib.support.i18n import set_language, text
from bertlib.train import (
    DivergedError,
    default_device,
    init_model,
    make_optimizer,
    train_bert,
    train_step,
)
from bertlib.viz import AttentionWidget, InputRepresentationWidget, NSPWidget


def test_one_training_step_lowers_the_loss_on_a_fixed_batch(toy_data, toy_model):
    batch = toy_data[:16].tensors()
    model = toy_model().eval()
    before = fast_loss(model, *batch).total.item()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.eval()  # no dropout, so the only change between the two losses is the step
    train_step(model, optimizer, batch)
    after = fast_loss(model, *batch).total.item()
    untouched = fast_loss(toy_model().eval(), *batch).total.item()
    assert untouched == pytest.approx(before)
    assert after < before - 0.05


def test_train_bert_is_deterministic_for_a_seed_and_learns(toy_data, toy_model):
    def run(seed):
        model = toy_model()
        history = train_bert(model, toy_data, num_steps=20, batch_size=16, lr=1e-2,
                             seed=seed, progress=False)
        return history, model

    (h1, m1), (h2, m2), (h3, _) = run(0), run(0), run(1)
    assert h1.mlm == h2.mlm and h1.nsp == h2.nsp
    assert all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(),
                                                 m2.state_dict().values(), strict=True))
    assert h1.mlm != h3.mlm
    steps_per_epoch = -(-len(toy_data) // 16)
    epochs, rest = divmod(20, steps_per_epoch)
    assert len(h1.mlm) == 20 and h1.pairs == epochs * len(toy_data) + rest * 16
    assert not m1.training
    # 20 steps span several epochs of the toy data; the MLM loss falls from ~log(20).
    assert sum(h1.mlm[-5:]) / 5 < sum(h1.mlm[:5]) / 5 - 0.3


def test_default_device_is_the_first_gpu_when_there_is_one(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert default_device() == torch.device("cuda:0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert default_device() == torch.device("cpu")


def test_train_bert_moves_the_model_to_the_device_asked_for(toy_data, toy_model):
    model = toy_model()
    train_bert(model, toy_data, num_steps=2, batch_size=8, progress=False, device="cpu")
    assert {p.device.type for p in model.parameters()} == {"cpu"}
    with pytest.raises(ValueError, match="device must be a device this machine has"):
        train_bert(model, toy_data, num_steps=1, progress=False, device="no-such-device")


@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="no CUDA GPU on this machine: the CUDA path was NOT run")
def test_everything_follows_a_model_on_cuda(toy_data, toy_model):
    model = toy_model()
    history = train_bert(model, toy_data, num_steps=5, batch_size=8, progress=False)  # default
    assert next(model.parameters()).is_cuda and len(history.mlm) == 5
    assert 0 <= evaluate_pretraining(model, toy_data)["nsp_accuracy"] <= 1
    batch = [t.cuda() for t in toy_data[:8].tensors()]
    with eval_mode(model):
        torch.testing.assert_close(fast_loss(model, *batch).total,
                                   chapter_loss(model, *batch).total)
    small, tokenizer = load_small_bert()
    small.cuda()
    cpu_copy, _ = load_small_bert()
    torch.testing.assert_close(get_bert_encoding(small, tokenizer, "the train").cpu(),
                               get_bert_encoding(cpu_copy, tokenizer, "the train"),
                               rtol=1e-4, atol=1e-4)
    for widget in (AttentionWidget, NSPWidget, InputRepresentationWidget):
        assert widget(small, tokenizer, "en").status.value == ""


def test_init_and_training_leave_the_global_random_state_alone(toy_data, toy_model):
    torch.manual_seed(1234)
    state = torch.get_rng_state()
    model = toy_model(seed=5)
    train_bert(model, toy_data, num_steps=3, batch_size=8, progress=False)
    assert torch.equal(torch.get_rng_state(), state)
    # ... and are still fixed by their own seeds.
    again = toy_model(seed=5)
    torch.rand(7)  # the caller's draws in between change nothing
    assert all(torch.equal(a, b) for a, b in zip(toy_model(seed=5).state_dict().values(),
                                                 again.state_dict().values(), strict=True))


def test_evaluation_baselines_are_the_majority_shares(toy_data, toy_model):
    """Against counts made here: the most frequent NSP label and MLM label of the data."""
    data = toy_data[toy_data.nsp_labels == 1]  # unbalanced: IsNext pairs ...
    data = type(toy_data)(*(torch.cat([a, b[:3]]) for a, b in
                            zip(data.tensors(), toy_data[toy_data.nsp_labels == 0].tensors(),
                                strict=True)))  # ... and three NotNext ones
    n_is, n_not = int((data.nsp_labels == 1).sum()), 3
    metrics = evaluate_pretraining(toy_model(), data)
    assert metrics["nsp_majority_baseline"] == pytest.approx(n_is / (n_is + n_not))
    labels = data.mlm_labels[data.mlm_weights > 0].tolist()
    assert metrics["mlm_majority_baseline"] == pytest.approx(
        max(labels.count(x) for x in set(labels)) / len(labels))
    assert metrics["pairs"] == n_is + n_not and metrics["mlm_slots"] == len(labels)


def test_evaluation_counts_what_the_model_gets_right_and_nothing_else(toy_data, toy_model):
    """Against one forward pass over all the data made here: MLM hits on real slots only, NSP
    hits per class, whatever the batch size; the model's mode is left as it was."""
    model = toy_model(seed=3)
    with torch.no_grad(), eval_mode(model):
        _, mlm_Y_hat, nsp_Y_hat = model(toy_data.tokens, toy_data.segments,
                                        toy_data.valid_lens, toy_data.pred_positions)
    guess, real = mlm_Y_hat.argmax(2), toy_data.mlm_weights > 0
    # The padding slots are labelled with the model's own guess: counting them would show.
    labels = torch.where(real, toy_data.mlm_labels, guess)
    data = dataclasses.replace(toy_data, mlm_labels=labels)
    model.train()
    metrics = evaluate_pretraining(model, data, batch_size=7)
    assert model.training
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        evaluate_pretraining(model, data, batch_size=0)
    assert metrics["mlm_accuracy"] == pytest.approx((guess[real] == labels[real]).double().mean())
    right = nsp_Y_hat.argmax(1) == data.nsp_labels
    assert metrics["nsp_accuracy"] == pytest.approx(right.double().mean())
    for label, key in ((1, "nsp_accuracy_is_next"), (0, "nsp_accuracy_not_next")):
        assert metrics[key] == pytest.approx(right[data.nsp_labels == label].double().mean())
    assert metrics["nsp_chance"] == 0.5
    # One pair of each label: each class's accuracy is that pair's 0 or 1.
    pair = [int((data.nsp_labels == label).nonzero()[0]) for label in (0, 1)]
    assert right[pair].any()  # else a wrong denominator would go unseen
    metrics = evaluate_pretraining(model, data[pair])
    assert [metrics["nsp_accuracy_not_next"], metrics["nsp_accuracy_is_next"]] == \
        right[pair].double().tolist()


@pytest.mark.parametrize("group_by_length", [False, True])
def test_train_bert_is_the_plain_loop_written_out(group_by_length, toy_data, toy_model):
    """train_bert against the loop written here: Adam (fused) at lr 1e-3, batches in make_loader's
    order for the seed (grouped by length if asked), each trimmed to its longest pair, dropout
    drawn after seeding torch with it."""
    model, reference = toy_model(), toy_model()
    train_bert(model, toy_data, num_steps=3, batch_size=16, progress=False,
               group_by_length=group_by_length)

    optimizer = torch.optim.Adam(reference.parameters(), lr=1e-3, fused=True)
    lengths = toy_data.valid_lens if group_by_length else None
    with torch.random.fork_rng():
        torch.manual_seed(0)
        reference.train()
        for _, batch in zip(range(3), make_loader(toy_data, 16, seed=0, lengths=lengths),
                            strict=False):
            train_step(reference, optimizer, trim_padding(batch))  # fast_loss: test_fast.py
    for (name, a), b in zip(model.state_dict().items(), reference.state_dict().values(),
                            strict=True):
        torch.testing.assert_close(a, b, msg=name)


def test_trimmed_training_follows_the_chapter_step_on_full_padding(toy_data, toy_model):
    """Without dropout (whose draws depend on the padded shape), train_bert's trimmed batches
    and fused loss give, step after step, the losses of the chapter's step on batches padded to
    max_len."""
    config = dataclasses.replace(toy_model().config, dropout=0.0)
    model, reference = init_model(config, 0), init_model(config, 0)
    history = train_bert(model, toy_data, num_steps=6, batch_size=16, progress=False)
    optimizer = torch.optim.Adam(reference.parameters(), lr=1e-3)
    reference.train()
    for step, batch in zip(range(6), make_loader(toy_data, 16, seed=0), strict=False):
        assert batch[0].shape[1] == config.max_len
        loss = train_step(reference, optimizer, batch, chapter_loss)
        assert loss.mlm.item() == pytest.approx(history.mlm[step], rel=1e-4)
        assert loss.nsp.item() == pytest.approx(history.nsp[step], rel=1e-4)
    # (Not the weights to float tolerance: Adam's first steps are about lr * sign(gradient), so
    # a gradient that is zero up to rounding moves a weight by +-lr either way.)


def test_history_and_progress_bar_report_each_step(toy_data, toy_model, capsys):
    seen = []
    history = train_bert(toy_model(), toy_data, num_steps=3, batch_size=16, progress=True,
                         callback=lambda h: seen.append((len(h.mlm), h.pairs, h.seconds,
                                                         h.num_steps)))
    assert [s[:2] for s in seen] == [(1, 16), (2, 32), (3, 48)]
    assert all(s[3] == 3 for s in seen)
    seconds = [s[2] for s in seen]
    assert 0 < seconds[0] < seconds[1] < seconds[2] == history.seconds
    assert history.pairs_per_sec == pytest.approx(48 / history.seconds)
    bar = capsys.readouterr().err.split("\r")[-1]
    assert "3/3" in bar and text("progress_pretraining", "en") in bar
    assert f"{text('progress_mlm', 'en')}={history.mlm[-1]:.3f}" in bar
    assert f"{text('progress_nsp', 'en')}={history.nsp[-1]:.3f}" in bar
    train_bert(toy_model(), toy_data, num_steps=3, batch_size=16, progress=False)
    assert capsys.readouterr().err == ""  # no bar at all


def test_progress_bar_speaks_the_editions_language(toy_data, toy_model, capsys):
    """In the Chinese edition every word on the bar is Chinese (the unit symbol s aside)."""
    set_language("zh")
    train_bert(toy_model(), toy_data, num_steps=2, batch_size=16, progress=True)
    bar = capsys.readouterr().err.split("\r")[-1]
    assert text("progress_pretraining", "zh") in bar and text("progress_mlm", "zh") in bar
    assert set(re.findall("[A-Za-z]+", bar)) <= {"s"}, bar


def _changed(data, **tensors):
    return dataclasses.replace(data, **{k: f(getattr(data, k)) for k, f in tensors.items()})


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"lr": "0.1"}, r"lr must be a number in \(0, 10\] .*; got '0.1'"),
    ({"lr": float("nan")}, r"lr must be a number in \(0, 10\] .*; got nan"),
    ({"lr": -1e-3}, r"lr must be a number in \(0, 10\] .*; got -0.001"),
    ({"lr": 1e6}, r"lr must be a number in \(0, 10\] .*got 1000000.0"),
    ({"device": "gpu"}, "device must be a device this machine has"),
    ({"seed": 1.5}, "seed must be an integer"),
    ({"batch_size": 0}, "batch_size must be a positive integer"),
    ({"num_steps": 1.0}, "num_steps must be a positive integer"),
    ({"model": "model"}, "model must be a BERTModel; got str"),
    ({"model": "pair"}, "model must be a BERTModel; got tuple"),
    ({"data": [1, 2]}, "data must be a PretrainBatch"),
    ({"data": lambda d: d[:0]}, "data must hold at least one example"),
])
def test_bad_training_arguments_are_named_before_any_step(kwargs, message, toy_data, toy_model):
    """Before: NaN losses silently, or TypeErrors, some after a whole step."""
    model = toy_model()
    kwargs = dict(kwargs)  # a copy: the parameter is shared by every run of the test
    data = kwargs.pop("data", toy_data)
    if kwargs.get("model") == "pair":  # model, tokenizer = load_small_bert(), without the unpacking
        kwargs["model"] = (model, None)
    args = {"model": model, "data": data(toy_data) if callable(data) else data,
            "num_steps": 1, "progress": False} | kwargs
    with pytest.raises(ValueError, match=message):
        train_bert(args.pop("model"), args.pop("data"), **args)


@pytest.mark.parametrize("device", ["cuda", "cuda:0", 0, torch.device("cuda", 1), "mps",
                                    "mps:0", "banana", "meta", "cpu:1", True, 1.5, -1, ""])
def test_a_device_this_machine_lacks_is_named_with_the_ones_it_has(device, toy_data, toy_model,
                                                                   monkeypatch):
    """Before: raw torch errors ("Expected one of cpu, cuda, ...", "Torch not compiled with
    CUDA enabled", "invalid combination of arguments"), some only at the first tensor."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    model = toy_model()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    message = (r"^device must be a device this machine has, one of \['cpu'\] .*got "
               f"{re.escape(repr(device))}$")
    with pytest.raises(ValueError, match=message):
        train_bert(model, toy_data, num_steps=1, progress=False, device=device)
    with pytest.raises(ValueError, match=message):
        default_device(device)
    assert all(torch.equal(v, model.state_dict()[k]) for k, v in before.items())


def test_the_devices_a_machine_has_are_accepted_by_every_name(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: True)
    assert available_devices() == ["cpu", "cuda:0", "cuda:1", "mps"]
    for name, expected in [("cpu", "cpu"), ("cpu:0", "cpu:0"), (torch.device("cpu"), "cpu"),
                           ("cuda", "cuda"), ("cuda:1", "cuda:1"), (1, "cuda:1"),
                           (torch.device("cuda", 0), "cuda:0"), ("mps", "mps")]:
        assert default_device(name) == torch.device(expected)
    with pytest.raises(ValueError, match=r"one of \['cpu', 'cuda:0', 'cuda:1', 'mps'\] .*got 2"):
        default_device(2)


def test_evaluation_refuses_data_it_cannot_score(toy_data, toy_model):
    """Before: ZeroDivisionError."""
    with pytest.raises(ValueError, match="data must hold at least one example"):
        evaluate_pretraining(toy_model(), toy_data[:0])


# --- A run that diverges stops before the step that would spoil the weights ---

def _nan_at_call(n: int, kind: str):
    """fast_loss, except that its ``n``-th call gives a NaN loss, or (``kind="gradient"``) a
    finite loss whose gradient is NaN: sqrt(0 * b) is 0, its derivative 0 * inf = NaN."""
    calls = [0]

    def loss_fn(model, *batch):
        calls[0] += 1
        loss = fast_loss(model, *batch)
        if calls[0] != n:
            return loss
        bias = model.nsp.output.bias[0]
        extra = torch.sqrt(bias * 0.0) if kind == "gradient" else bias * math.nan
        return loss._replace(total=loss.total + extra)

    return loss_fn


@pytest.mark.parametrize("kind", ["loss", "gradient"])
def test_a_run_whose_step_goes_non_finite_stops_there_with_the_weights_before_it(
        kind, toy_data, toy_model):
    """Before: the run went on and returned a model whose weights were all NaN."""
    reference = toy_model()  # what 2 steps give: the weights the failed run must keep
    train_bert(reference, toy_data, num_steps=2, batch_size=16, lr=1e-2, progress=False,
               loss_fn=fast_loss)
    model = toy_model()
    rng = torch.get_rng_state()
    with pytest.raises(DivergedError, match=r"^training diverged at step 3 of 10: .*NaN or "
                                            r"infinite.*keeps its weights after step 2") as err:
        train_bert(model, toy_data, num_steps=10, batch_size=16, lr=1e-2, progress=False,
                   loss_fn=_nan_at_call(3, kind))
    assert err.value.step == 3 and isinstance(err.value, ValueError)
    assert all(torch.equal(v, reference.state_dict()[k]) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters()) and model.training  # the caller's
    assert torch.equal(torch.get_rng_state(), rng)
    # the guard is gone once the run is over: a NaN gradient outside it is the caller's business
    fast_loss(model, *toy_data[:4].tensors()).total.mul(math.nan).backward()


class _BlowsUp(nn.Module):
    """A bag-of-words classifier whose logits become infinite from the ``n``-th call on."""

    def __init__(self, vocab_size: int, n: int):
        super().__init__()
        self.inner, self.n, self.calls = BagOfWords(vocab_size, 2), n, 0

    def forward(self, tokens, segments, valid_lens):
        self.calls += 1
        return self.inner(tokens, segments, valid_lens) * (math.inf if self.calls >= self.n else 1)


def test_fine_tuning_stops_at_the_first_non_finite_step_too(toy_model):
    """fine_tune shares run_steps: before, its NaN loss went on for every step."""
    task = TaskData(*toy_data_task(), ["en"] * 64)
    reference, model = _BlowsUp(20, 99), _BlowsUp(20, 4)
    # The 4th call of the model is its 3rd step: fine_tune runs it once first, on one example,
    # to check the labels against its outputs.
    fine_tune(reference, task, num_steps=2, batch_size=16, lr=1e-2, progress=False)
    with pytest.raises(DivergedError, match=r"diverged at step 3 of 6: the loss must be finite"):
        fine_tune(model, task, num_steps=6, batch_size=16, lr=1e-2, progress=False)
    assert all(torch.equal(v, reference.state_dict()[k]) for k, v in model.state_dict().items())


def toy_data_task(n: int = 64, T: int = 8) -> tuple[torch.Tensor, ...]:
    """tokens, segments, valid_lens and labels of ``n`` random 2-class examples."""
    g = torch.Generator().manual_seed(0)
    tokens = torch.randint(5, 20, (n, T), generator=g)
    labels = torch.randint(2, (n,), generator=g)
    return tokens, torch.zeros_like(tokens), torch.full((n,), T), labels


def test_fine_tuning_with_a_huge_lr_never_returns_non_finite_weights(toy_model):
    """Before: lr=1e6 was accepted and every weight came back NaN. Now it is refused, or (where
    fine_tune does not take make_optimizer's lr check) the run stops at its first NaN."""
    clf = BERTClassifier(toy_model(), 2)
    with pytest.raises(ValueError, match=r"lr must be a number in \(0, 10\]|diverged at step"):
        fine_tune(clf, TaskData(*toy_data_task(), ["en"] * 64), num_steps=20, batch_size=16,
                  lr=1e6, progress=False)
    assert all(bool(torch.isfinite(p).all()) for p in clf.parameters())


@pytest.mark.parametrize("lr", [1e6, 10.5, 0.0, -1.0, math.nan, math.inf, "1e-3", True])
def test_every_optimizer_bertlib_makes_takes_the_same_learning_rates(lr, toy_model):
    """Before: train_bert refused lr > 10 while make_optimizer (the CLI's) took 1e6."""
    with pytest.raises(ValueError, match=rf"^lr must be a number in \(0, 10\] .*; got "
                                         rf"{re.escape(repr(lr))}$"):
        make_optimizer(toy_model(), lr)
    assert make_optimizer(toy_model(), 10).param_groups[0]["lr"] == 10


def test_make_optimizer_takes_only_the_trainable_parameters(toy_model):
    model = toy_model()
    model.encoder.requires_grad_(False)
    groups = make_optimizer(model, 1e-3).param_groups
    optimized = {id(p) for group in groups for p in group["params"]}
    assert optimized == {id(p) for p in model.parameters() if p.requires_grad} != set()


# --- What a training run changes in the process ---

FIRST_OPTIMIZER = """
import os, warnings, torch
from bertlib import BERTConfig
from bertlib.train import init_model, make_optimizer, train_step
def state():
    return dict(os.environ), [str(f) for f in warnings.filters], torch.get_num_threads()
before = state()
torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)  # torch's own first optimizer
after_torch = state()
changed = sorted(k for k in after_torch[0] if before[0].get(k) != after_torch[0][k])
print(changed, len(after_torch[1]) - len(before[1]))
model = init_model(BERTConfig(20, 8, 16, 2, 1, 0.1, 8), 0)
t = torch.tensor([[2, 5, 3]])
batch = [t, t * 0, torch.tensor([3]), torch.tensor([[1]]), torch.ones(1, 1), torch.tensor([[7]]),
         torch.tensor([1])]
train_step(model, make_optimizer(model, 1e-3), batch)
print(state() == after_torch)
"""


def test_bertlib_adds_nothing_to_what_the_first_torch_optimizer_of_a_process_changes():
    """The first torch optimizer of a process imports torch._inductor, which sets an
    environment variable and adds a warnings filter (make_optimizer's docstring says so);
    bertlib's optimizer and training step change nothing more."""
    # a fresh process, as a kernel starts: not with what this one's optimizers set already
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    out = subprocess.run([sys.executable, "-c", FIRST_OPTIMIZER], capture_output=True,
                         text=True, timeout=300, env=env,
                         cwd=Path(__file__).resolve().parents[1])  # this checkout's bertlib
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["['TORCHINDUCTOR_CACHE_DIR'] 1", "True"]


def test_int32_labels_train_and_evaluate_like_int64_ones(toy_data, toy_model):
    """Before: token ids could be int32, but labels had to be int64 (refused in the loss)."""
    int32 = _changed(toy_data, mlm_labels=torch.Tensor.int, nsp_labels=torch.Tensor.int)
    runs = []
    for data in (toy_data, int32):
        model = toy_model()
        history = train_bert(model, data, num_steps=3, batch_size=16, progress=False)
        runs.append((history.mlm, history.nsp, evaluate_pretraining(model, data)))
    assert runs[0] == runs[1]


def test_a_model_too_short_for_the_data_is_refused_before_it_is_touched(toy_data, toy_model):
    """The encoder's forward refuses the first long batch, before any step; the caller's model
    keeps its weights and its mode."""
    short = init_model(dataclasses.replace(toy_model().config, max_len=4), seed=0).train()
    before = {k: v.clone() for k, v in short.state_dict().items()}
    message = r"sequence length \d+ exceeds max_len=4, the number of learned position embeddings"
    for run in (lambda: train_bert(short, toy_data, num_steps=1, progress=False),
                lambda: evaluate_pretraining(short, toy_data)):
        with pytest.raises(ValueError, match=message):
            run()
        assert short.training
        assert all(torch.equal(v, short.state_dict()[k]) for k, v in before.items())


def test_a_run_that_diverges_leaves_the_callers_mode(toy_data, toy_model):
    """Before: the failed run put the caller's training-mode model in eval mode."""
    model = toy_model().train()
    with torch.no_grad():
        model.encoder.token_embedding.weight[int(toy_data.tokens[0, 1])] = 3e38
    with pytest.raises(DivergedError, match="diverged at step 1 of 2"):
        train_bert(model, toy_data, num_steps=2, batch_size=len(toy_data), progress=False)
    assert model.training
    model.eval()
    with pytest.raises(DivergedError, match="diverged at step 1 of 2"):
        train_bert(model, toy_data, num_steps=2, batch_size=len(toy_data), progress=False)
    assert not model.training
