import json

import pytest
import torch

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
