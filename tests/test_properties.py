"""Properties over generated inputs (hypothesis): bad input may only raise ValueError, and valid
input keeps the invariants the chapter relies on."""

import contextlib

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jaxtyping import TypeCheckError

from bertlib import (
    BERTModel,
    Fate,
    Vocab,
    bert_loss,
    get_tokens_and_segments,
    make_nsp_pairs,
    mask_tokens,
)
from bertlib.inputs import truncate_pair

WORDS = [f"w{i}" for i in range(20)]
VOCAB = Vocab([WORDS])
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
tokens = st.lists(st.sampled_from(WORDS), max_size=12)
ids = st.lists(st.integers(0, len(VOCAB) - 1), min_size=1, max_size=40)
ANYTHING = st.one_of(st.none(), st.booleans(), st.integers(-5, 50), st.floats(allow_nan=True),
                     st.text(max_size=8), st.lists(st.integers(-3, 40), max_size=5),
                     st.lists(st.text(max_size=3), max_size=5))


@SETTINGS
@given(a=tokens, b=st.one_of(st.none(), tokens))
def test_input_sequence_structure(a, b):
    seq, segments = get_tokens_and_segments(a, b)
    assert seq[0] == "<cls>" and seq[len(a) + 1] == "<sep>" and seq[1:len(a) + 1] == a
    assert len(seq) == len(segments) == len(a) + 2 + (0 if b is None else len(b) + 1)
    assert segments == sorted(segments) and set(segments) <= {0, 1}
    assert segments.count(0) == len(a) + 2


@SETTINGS
@given(a=tokens, b=tokens, budget=st.integers(0, 30))
def test_truncation_keeps_prefixes_and_fits(a, b, budget):
    ta, tb = truncate_pair(a, b, budget)
    assert ta == a[:len(ta)] and tb == b[:len(tb)]
    assert len(ta) + len(tb) == min(budget, len(a) + len(b))
    assert abs(len(ta) - len(tb)) <= max(1, abs(len(a) - len(b)))


@SETTINGS
@given(token_ids=ids, ratio=st.floats(0.01, 1.0), seed=st.integers(0, 2**31 - 1))
def test_masking_invariants(token_ids, ratio, seed):
    maskable = [i for i, t in enumerate(token_ids) if t not in VOCAB.structural_ids]
    state = torch.get_rng_state()
    try:
        m = mask_tokens(token_ids, VOCAB, mask_ratio=ratio, seed=seed)
    except ValueError:
        assert not maskable  # the one documented refusal for valid ids
        return
    assert torch.equal(torch.get_rng_state(), state)  # the global RNG is untouched
    length = len(token_ids) - token_ids.count(VOCAB.pad_id)  # <cls>, <sep> count too
    assert len(m.positions) == min(len(maskable), max(1, round(ratio * length)))
    assert m.positions == sorted(set(m.positions)) and set(m.positions) <= set(maskable)
    assert m.labels == [token_ids[p] for p in m.positions]
    for p, fate in zip(m.positions, m.fates, strict=True):
        if fate is Fate.MASK:
            assert m.masked_ids[p] == VOCAB.mask_id
        elif fate is Fate.RANDOM:
            assert m.masked_ids[p] in VOCAB.word_ids
        else:
            assert m.masked_ids[p] == token_ids[p]
    untouched = set(range(len(token_ids))) - set(m.positions)
    assert all(m.masked_ids[i] == token_ids[i] for i in untouched)
    assert mask_tokens(token_ids, VOCAB, mask_ratio=ratio, seed=seed) == m


@SETTINGS
@given(token_ids=st.one_of(st.text(max_size=8), st.lists(st.integers(-3, 40), max_size=5),
                          st.lists(st.floats(allow_nan=True), max_size=5),
                          st.lists(st.text(max_size=3), max_size=5)),
       ratio=ANYTHING, seed=st.integers(0, 10))
def test_masking_refuses_anything_else_with_a_value_error(token_ids, ratio, seed):
    """A text, tokens or floats where ids belong, ids out of range, any ratio: named."""
    with contextlib.suppress(ValueError):  # anything else escaping fails the test
        mask_tokens(token_ids, VOCAB, mask_ratio=ratio, seed=seed)


@SETTINGS
@given(paragraphs=st.lists(st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6),
                                    min_size=1, max_size=4), min_size=2, max_size=5),
       max_len=st.integers(5, 16), seed=st.integers(0, 100))
def test_nsp_pairs_fit_and_are_well_formed(paragraphs, max_len, seed):
    if all(len(p) == 1 for p in paragraphs):  # no two consecutive sentences: no pair
        with pytest.raises(ValueError, match="every paragraph has one sentence"):
            make_nsp_pairs(paragraphs, max_len, seed=seed)
        return
    result = make_nsp_pairs(paragraphs, max_len, seed=seed)
    assert len(result.pairs) == sum(len(p) - 1 for p in paragraphs)
    for pair in result.pairs:
        assert len(pair.tokens) <= max_len and pair.tokens[0] == "<cls>"
        assert pair.tokens.count("<sep>") == 2 and pair.tokens[-1] == "<sep>"
        assert pair.is_next in (0, 1) and len(pair.segments) == len(pair.tokens)
    assert make_nsp_pairs(paragraphs, max_len, seed=seed) == result


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return BERTModel(len(VOCAB), 8, 16, 2, 2, 0.0, max_len=10).eval()


@SETTINGS
@given(data=st.data())
def test_padding_never_changes_the_real_positions(model, data):
    B = data.draw(st.integers(1, 3))
    T = data.draw(st.integers(2, 10))
    valid = data.draw(st.lists(st.integers(1, T), min_size=B, max_size=B))
    seed = data.draw(st.integers(0, 1000))
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(0, len(VOCAB), (B, T), generator=g)
    segments = torch.randint(0, 2, (B, T), generator=g)
    valid_lens = torch.tensor(valid)
    noise = torch.randint(0, len(VOCAB), (B, T), generator=g)
    padding = torch.arange(T) >= valid_lens[:, None]
    with torch.no_grad():
        X, attentions = model.encoder(tokens, segments, valid_lens, return_attention=True)
        Y = model.encoder(torch.where(padding, noise, tokens), segments, valid_lens)
    for b, n in enumerate(valid):
        torch.testing.assert_close(X[b, :n], Y[b, :n], rtol=1e-5, atol=1e-5)
    for weights in attentions:
        torch.testing.assert_close(weights.sum(-1), torch.ones(B, 2, T))
        assert bool((weights.masked_select(padding[:, None, None, :]) == 0).all())


TENSORS = st.builds(
    lambda shape, dtype, fill: torch.full(shape, fill).to(dtype),
    st.lists(st.integers(1, 4), min_size=0, max_size=3).map(tuple),
    st.sampled_from([torch.long, torch.int32, torch.float32, torch.bool]),
    st.sampled_from([0, 1, 3, -1, 99, float("nan")]),
)


@SETTINGS
@given(tokens=TENSORS, segments=TENSORS, valid_lens=st.one_of(st.none(), TENSORS))
def test_any_bad_forward_input_is_named(model, tokens, segments, valid_lens):
    """A wrong shape or dtype is jaxtyping's TypeCheckError, a wrong value a ValueError."""
    with contextlib.suppress(ValueError, TypeCheckError), torch.no_grad():  # nothing else
        model(tokens, segments, valid_lens)


@SETTINGS
@given(scale=st.floats(0.01, 100.0), seed=st.integers(0, 1000))
def test_the_mlm_loss_is_a_weighted_mean(scale, seed):
    g = torch.Generator().manual_seed(seed)
    logits, nsp = torch.randn(3, 4, 7, generator=g), torch.randn(3, 2, generator=g)
    labels, nsp_labels = torch.randint(0, 7, (3, 4), generator=g), torch.tensor([0, 1, 1])
    weights = (torch.rand(3, 4, generator=g) < 0.5).float()
    weights[0, 0] = 1.0
    base = bert_loss(logits, labels, weights, nsp, nsp_labels)
    scaled = bert_loss(logits, labels, weights * scale, nsp, nsp_labels)
    torch.testing.assert_close(scaled.mlm, base.mlm)  # only the weights' proportions count
    noisy = torch.where(weights[..., None] > 0, logits, torch.randn(3, 4, 7, generator=g) * 50)
    torch.testing.assert_close(bert_loss(noisy, labels, weights, nsp, nsp_labels).mlm, base.mlm)


@SETTINGS
@given(a=ANYTHING, b=ANYTHING, indices=ANYTHING)
def test_text_and_id_functions_refuse_anything_else_with_a_value_error(a, b, indices):
    """The functions a learner calls with text or ids: anything else is named."""
    for call in (lambda: get_tokens_and_segments(a, b),
                 lambda: VOCAB.to_tokens(indices), lambda: Vocab([a, b]),
                 lambda: make_nsp_pairs([[a, b], [b, a]], 8, seed=0)):
        with contextlib.suppress(ValueError):  # anything else escaping fails the test
            call()
