"""snapshot_outputs refuses snapshots that are not the model's: a missing tensor would silently
keep the model's own weight (the widget's behaviour is tested in tests/viz/test_timelapse.py)."""

import pytest
import torch

from bertlib import load_small_bert
from bertlib.analysis.timelapse import snapshot_outputs
from bertlib.inputs import encode_pair
from bertlib.text.vocab import Vocab


@pytest.fixture(scope="module")
def small():
    return load_small_bert()


def test_snapshots_must_hold_the_models_tensors(small):
    model, tokenizer = small
    enc = encode_pair(tokenizer, "It was raining hard.")
    state = model.state_dict()
    out = snapshot_outputs(model, {0: state}, enc, [1], tokenizer.vocab)
    assert out.steps == (0,)
    name = next(iter(state))
    for weights, message in [
        ({0: {"x": torch.ones(1)}}, r"weights\[0\] must have the model's tensor names; missing"),
        ({0: {k: v for k, v in state.items() if k != name}}, rf"missing \['{name}'\]"),
        ([state], "weights must hold at least one snapshot"),
    ]:
        with pytest.raises(ValueError, match=message):
            snapshot_outputs(model, weights, enc, [1], tokenizer.vocab)


def test_the_other_arguments_are_named(small):
    model, tokenizer = small
    enc = encode_pair(tokenizer, "It was raining hard.")
    weights = {0: model.state_dict()}
    with pytest.raises(ValueError, match=r"positions\[i\] must be an integer in \[0, "):
        snapshot_outputs(model, weights, enc, [99], tokenizer.vocab)


def test_k_and_the_vocab_must_fit_the_model(small):
    model, tokenizer = small
    enc = encode_pair(tokenizer, "It was raining hard.")
    weights, V = {0: model.state_dict()}, len(tokenizer.vocab)
    for k in (0, V + 1, 10**9):  # the model guesses among its vocabulary
        with pytest.raises(ValueError, match=rf"k must be an integer in \[1, {V}\].*got {k}"):
            snapshot_outputs(model, weights, enc, [1], tokenizer.vocab, k=k)
    other = Vocab(["a"])
    with pytest.raises(ValueError, match=rf"vocab has {len(other)} tokens but the model's "
                                         rf"vocab_size is {model.config.vocab_size}; give the "
                                         "model the tokenizer it was trained with"):
        snapshot_outputs(model, weights, enc, [1], other)
