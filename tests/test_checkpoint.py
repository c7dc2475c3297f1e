import json
import os
import time

import pytest
import torch
from safetensors.torch import save_file

from bertlib import BERTConfig, BERTModel
from bertlib.checkpoint import load_pretrained, save_pretrained


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
    with pytest.raises(ValueError, match=r"encoder.token_embedding.weight: expected "
                                         r"\(10000000000, 16\), found \(40, 16\)"):
        load_pretrained(saved)
    assert time.perf_counter() - start < 2.0


@pytest.mark.parametrize(("changes", "message"), [
    ({"vocab_size": "40"}, "vocab_size must be a positive integer"),
    ({"colour": "blue"}, r"keys BERTConfig does not know: \['colour'\]"),
    ({"num_heads": 3}, "num_hiddens must be divisible by num_heads"),
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
    save_pretrained(model, saved)
    with pytest.raises(ValueError, match="encoder.blks.0.ffn.dense1.weight holds NaN"):
        load_pretrained(saved)
