import contextlib
import json
import os
import subprocess
import sys
import time

import pytest
import torch
from helpers import every_crash
from safetensors.torch import save_file, save_model

from bertlib import BERTConfig, BERTModel
from bertlib.assets import load_small_bert
from bertlib.weights.checkpoint import expected_shapes, load_pretrained, save_pretrained


@pytest.mark.parametrize("original", [False, True])
def test_round_trip_gives_identical_outputs(tmp_path, original):
    torch.manual_seed(0)
    sizes = {"vocab_size": 40, "num_hiddens": 16, "ffn_num_hiddens": 32, "num_heads": 2,
             "num_blks": 2, "dropout": 0.1, "max_len": 12}
    cfg = BERTConfig.original(**sizes) if original else BERTConfig(**sizes)
    model = BERTModel.from_config(cfg).eval()
    save_pretrained(model, tmp_path, corpus="test")
    loaded = load_pretrained(tmp_path)
    assert not loaded.training
    assert loaded.config == cfg
    assert json.loads((tmp_path / "config.json").read_text())["metadata"] == {"corpus": "test"}
    tokens = torch.randint(0, 40, (2, 12))
    segments = torch.zeros(2, 12, dtype=torch.long)
    positions = torch.tensor([[1, 2], [3, 4]])
    with torch.no_grad():
        for a, b in zip(model(tokens, segments, None, positions),
                        loaded(tokens, segments, None, positions), strict=True):
            torch.testing.assert_close(a, b, rtol=0, atol=0)
    if original:
        assert loaded.mlm.mlp[-1].weight is loaded.encoder.token_embedding.weight


def test_not_a_bertlib_checkpoint(tmp_path):
    with pytest.raises(ValueError, match="has no config.json"):
        load_pretrained(tmp_path)
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(ValueError, match="not a bertlib config"):
        load_pretrained(tmp_path)


SIZES = {"vocab_size": 40, "num_hiddens": 16, "ffn_num_hiddens": 32, "num_heads": 2,
         "num_blks": 1, "dropout": 0.1, "max_len": 12}


@pytest.fixture
def saved(tmp_path):
    torch.manual_seed(0)
    save_pretrained(BERTModel.from_config(BERTConfig(**SIZES)), tmp_path)
    return tmp_path


def edit_config(directory, **changes) -> None:
    path = directory / "config.json"
    config = json.loads(path.read_text())
    config["config"].update(changes)
    path.write_text(json.dumps(config))


def test_a_hostile_config_is_refused_before_anything_is_allocated(saved):
    """10^10 x 16 float32 embeddings would take 640 GB: building the model first would fail
    with torch's allocation error (or worse), not with a ValueError in a blink."""
    edit_config(saved, vocab_size=10**10)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"vocab_size must be an integer in \[1, 1000000\]"):
        load_pretrained(saved)  # the config's sizes, before the file is opened
    assert time.perf_counter() - start < 2.0
    edit_config(saved, vocab_size=10**6)  # a size that fits, but not the file's tensors
    with pytest.raises(ValueError, match=r"encoder.token_embedding.weight: expected "
                                         r"\(1000000, 16\), found \(40, 16\)"):
        load_pretrained(saved)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize(("changes", "message"), [
    ({"vocab_size": "40"}, "vocab_size must be an integer in"),
    ({"colour": "blue"}, r"keys BERTConfig does not know: \['colour'\]"),
    ({"num_heads": 3}, r"num_hiddens \(16\) must be divisible by num_heads \(3\)"),
])
def test_bad_configs_are_named(saved, changes, message):
    edit_config(saved, **changes)
    with pytest.raises(ValueError, match=message):
        load_pretrained(saved)


def test_config_that_is_not_a_small_regular_json_file(saved):
    (saved / "config.json").unlink()
    (saved / "config.json").symlink_to("/dev/zero")
    with pytest.raises(ValueError, match="must be a regular file; it is a device"):
        load_pretrained(saved)
    (saved / "config.json").unlink()
    os.mkfifo(saved / "config.json")  # a read would block forever
    with pytest.raises(ValueError, match="must be a regular file"):
        load_pretrained(saved)
    (saved / "config.json").unlink()
    (saved / "config.json").write_text(" " * (2 << 20))
    with pytest.raises(ValueError, match="a config.json may have at most 1,048,576"):
        load_pretrained(saved)
    (saved / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="must hold JSON"):
        load_pretrained(saved)
    with pytest.raises(ValueError, match="directory must be an existing folder"):
        load_pretrained(saved / "nowhere")


def test_weights_that_do_not_fit_are_named(saved):
    model = load_pretrained(saved)
    state = {k: v.clone() for k, v in model.state_dict().items()}
    state["extra.weight"] = torch.zeros(2)
    del state["nsp.output.bias"]
    state["hidden.0.weight"] = torch.zeros(3, 3)
    save_file(state, saved / "model.safetensors")
    with pytest.raises(ValueError) as err:
        load_pretrained(saved)
    message = str(err.value)
    assert "missing tensors ['nsp.output.bias']" in message
    assert "unexpected tensors ['extra.weight']" in message
    assert "hidden.0.weight: expected (16, 16), found (3, 3)" in message
    (saved / "model.safetensors").write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(ValueError, match="not a safetensors file that fits its header"):
        load_pretrained(saved)


def test_nan_weights_are_refused(saved):
    model = load_pretrained(saved)
    with torch.no_grad():
        model.encoder.blks[0].ffn.dense1.weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match="encoder.blks.0.ffn.dense1.weight holds NaN"):
        save_pretrained(model, saved / "copy")
    assert not (saved / "copy").exists()
    save_model(model, str(saved / "model.safetensors"))
    with pytest.raises(ValueError, match="encoder.blks.0.ffn.dense1.weight holds NaN"):
        load_pretrained(saved)


@pytest.mark.parametrize("options", [{}, {"embedding_norm": True, "tie_mlm_decoder": True},
                                     {"num_blks": 3, "hidden_act": "gelu"}])
def test_expected_shapes_are_those_of_a_real_model(options):
    config = BERTConfig(**SIZES | options)
    model = BERTModel.from_config(config)
    shapes, tied = expected_shapes(config)
    assert shapes == {name: tuple(t.shape) for name, t in model.state_dict().items()}
    assert list(shapes) == list(model.state_dict())
    shared = model.mlm.mlp[-1].weight is model.encoder.token_embedding.weight
    assert tied == ({"encoder.token_embedding.weight", "mlm.mlp.3.weight"} if shared else set())


def test_a_config_with_many_blocks_is_refused_at_once(saved):
    """900 blocks against a file holding one: refused from the header's block count, with a
    short message, without listing 14,000 missing names."""
    edit_config(saved, num_blks=900)
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"holds 1 encoder blocks .*num_blks=900") as err:
        load_pretrained(saved)
    assert len(str(err.value)) < 400
    edit_config(saved, num_blks=100_000)
    with pytest.raises(ValueError, match=r"holds 1 encoder blocks .*num_blks=100,000"):
        load_pretrained(saved)
    assert time.perf_counter() - start < 2.0


def test_mismatch_lists_are_short(saved):
    edit_config(saved, num_hiddens=8, ffn_num_hiddens=8)
    with pytest.raises(ValueError, match=r"and \d+ more") as err:
        load_pretrained(saved)
    assert len(str(err.value)) < 1500


def rng_state_kept(load, *args) -> None:
    state = torch.get_rng_state()
    with contextlib.suppress(ValueError):  # a refusal too must leave it alone
        load(*args)
    assert torch.equal(state, torch.get_rng_state())


def test_loading_leaves_the_global_rng_alone(saved):
    rng_state_kept(load_pretrained, saved)
    rng_state_kept(load_small_bert)
    model = load_pretrained(saved)
    with torch.no_grad():
        model.nsp.output.bias[0] = float("nan")
    save_model(model, str(saved / "model.safetensors"))
    rng_state_kept(load_pretrained, saved)


def test_loading_changes_no_environment_or_warning_filter(saved):
    """Building a model on the meta device imported torch._inductor, which sets
    TORCHINDUCTOR_CACHE_DIR and a warnings filter: a fresh process shows it."""
    code = ("import os, sys, warnings, bertlib\n"
            "env, filters = dict(os.environ), list(warnings.filters)\n"
            "bertlib.load_pretrained(sys.argv[1])\n"
            "assert dict(os.environ) == env, set(os.environ) - set(env)\n"
            "assert warnings.filters == filters\n")
    subprocess.run([sys.executable, "-c", code, str(saved)], check=True, timeout=120)


@pytest.mark.parametrize(("model", "metadata", "message"), [
    ("model", {}, "model must be a bertlib BERTModel; got 'model'"),
    (None, {"note": torch.zeros(1)}, "metadata must be JSON.*Tensor"),
    (None, {"note": float("nan")}, "metadata must be JSON.*nan"),
])
def test_save_refuses_before_creating_anything(tmp_path, model, metadata, message):
    model = BERTModel.from_config(BERTConfig(**SIZES)) if model is None else model
    with pytest.raises(ValueError, match=message):
        save_pretrained(model, tmp_path / "out", **metadata)
    assert not (tmp_path / "out").exists()


def test_save_into_a_file_is_refused(tmp_path):
    (tmp_path / "x").write_text("a file")
    with pytest.raises(ValueError, match=r"cannot save into '.*x'"):
        save_pretrained(BERTModel.from_config(BERTConfig(**SIZES)), tmp_path / "x")
    with pytest.raises(ValueError, match="directory must be a path"):
        save_pretrained(BERTModel.from_config(BERTConfig(**SIZES)), 3)


@pytest.mark.parametrize("content", ["[" * 500_000, '{"format": "bertlib", "config": [}'])
def test_a_hostile_config_file_is_a_value_error(tmp_path, content):
    (tmp_path / "config.json").write_text(content)
    with pytest.raises(ValueError, match="config.json must hold JSON"):
        load_pretrained(tmp_path)


def test_a_key_given_twice_in_config_json_is_refused(saved):
    """Python's reader would keep the last num_blks silently (other readers keep the first)."""
    path = saved / "config.json"
    path.write_text(path.read_text().replace('"num_blks": 1', '"num_blks": 1, "num_blks": 24'))
    with pytest.raises(ValueError, match="config.json must hold JSON; the key 'num_blks' "
                                         "appears twice in one object"):
        load_pretrained(saved)


def test_a_symlink_loop_is_a_value_error(tmp_path):
    os.symlink(tmp_path / "config.json", tmp_path / "config.json")
    with pytest.raises(ValueError, match="config.json cannot be read: Too many levels"):
        load_pretrained(tmp_path)


def which(directory, models: dict) -> str:
    """The name of the model in ``models`` that ``directory`` loads as ("mix" for none of them;
    the refusal if it does not load)."""
    try:
        loaded = load_pretrained(directory)
    except ValueError as err:
        return f"refused: {err}"
    for name, model in models.items():
        state = model.state_dict()
        if loaded.config == model.config and all(
                torch.equal(t, state[k]) for k, t in loaded.state_dict().items()):
            return name
    return "mix"


def test_a_save_crashed_at_any_step_leaves_the_old_checkpoint_or_the_new(tmp_path):
    """config.json was replaced first, the weights after: a crash between them left a config
    of 1 block beside weights of 2, which nothing loads. Now the weights go first and carry
    their config."""
    torch.manual_seed(0)
    models = {"old": BERTModel.from_config(BERTConfig(**SIZES)),
              "new": BERTModel.from_config(BERTConfig(**SIZES | {"num_blks": 2}))}
    seen = every_crash(lambda k: save_pretrained(models["old"], tmp_path / str(k)),
                       lambda k: save_pretrained(models["new"], tmp_path / str(k)),
                       lambda k: which(tmp_path / str(k), models), "old", "new")
    assert seen == {"old", "new"}


def test_weights_that_carry_another_saves_config_load_with_it(saved):
    """The state a crash between the two files leaves: new weights, the old config.json."""
    config = json.loads((saved / "config.json").read_text())
    torch.manual_seed(1)
    new = BERTModel.from_config(BERTConfig(**SIZES | {"num_blks": 2, "max_len": 20}))
    save_pretrained(new, saved / "new")
    os.replace(saved / "new" / "model.safetensors", saved / "model.safetensors")
    assert json.loads((saved / "config.json").read_text()) == config  # still the old one
    assert which(saved, {"new": new}) == "new"
    # The weights' own config is checked as config.json is.
    save_model(new, str(saved / "model.safetensors"),
               metadata={"bertlib_config": "{broken", "bertlib_save_id": "other"})
    with pytest.raises(ValueError, match="embedded config must be a JSON object"):
        load_pretrained(saved)
    save_model(new, str(saved / "model.safetensors"),
               metadata={"bertlib_config": '{"format": "hf"}', "bertlib_save_id": "other"})
    with pytest.raises(ValueError, match="embedded config is not a bertlib config"):
        load_pretrained(saved)


def test_deeply_nested_metadata_is_a_value_error(tmp_path):
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ValueError, match="metadata must be JSON"):
        save_pretrained(BERTModel.from_config(BERTConfig(**SIZES)), tmp_path, note=deep)


@pytest.mark.parametrize("keep", [0.99, 0.5, 0.01])
def test_a_truncated_weights_file_is_refused(saved, keep):
    path = saved / "model.safetensors"
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(ValueError, match="not a safetensors file that fits its header"):
        load_pretrained(saved)
