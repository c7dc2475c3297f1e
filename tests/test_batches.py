"""Mini-batches: the seeded loader, batches grouped by length, dynamic padding."""

from collections import Counter

import pytest
import torch
from jaxtyping import TypeCheckError

from bertlib.batches import LengthGroupedSampler, make_loader, trim_padding
from bertlib.loss import chapter_loss

MAX_LEN = 16  # conftest's toy_data is padded to this


def test_loader_batches_cover_the_data_once_per_epoch_in_seeded_order(toy_data):
    def batches(seed):
        return list(make_loader(toy_data, 8, seed=seed))

    a, b, c = batches(1), batches(1), batches(2)
    assert [t.shape for t in a[0]] == [(8, MAX_LEN), (8, MAX_LEN), (8,), (8, 2), (8, 2), (8, 2),
                                       (8,)]
    assert all(torch.equal(x, y) for bx, by in zip(a, b, strict=True)
               for x, y in zip(bx, by, strict=True))
    assert not torch.equal(a[0][0], c[0][0])
    rows = Counter(tuple(r) for batch in a for r in batch[0].tolist())
    assert rows == Counter(tuple(r) for r in toy_data.tokens.tolist())


def _lengths(n, seed=0):
    return torch.randint(3, 65, (n,), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize(("n", "batch_size", "chunk"), [(1000, 32, 4), (1000, 7, 50), (5, 8, 2)])
def test_length_grouped_batches_cover_every_example_once_per_pass(n, batch_size, chunk):
    sampler = LengthGroupedSampler(_lengths(n), batch_size, seed=0, chunk_batches=chunk)
    for _ in range(2):  # each pass is a fresh permutation of all n examples
        batches = list(sampler)
        assert len(batches) == len(sampler)
        assert sorted(i for b in batches for i in b) == list(range(n))
        assert all(1 <= len(b) <= batch_size for b in batches)


def test_length_grouped_batches_pad_little_and_stay_random():
    lengths = _lengths(6400)
    grouped = list(LengthGroupedSampler(lengths, 64, seed=0))
    shuffled = torch.randperm(6400, generator=torch.Generator().manual_seed(0)).split(64)

    def padding(batches):  # the share of a batch padded to its longest example
        return sum(float(1 - lengths[b].float().mean() / lengths[b].max()) for b in batches) \
            / len(batches)

    assert padding(shuffled) > 0.3  # uniform lengths in [3, 64]: about half is padding
    assert padding(grouped) < 0.05
    # The order of the batches is not the order of their lengths (neither way round) ...
    longest = [int(lengths[b].max()) for b in grouped]
    assert longest != sorted(longest) and longest != sorted(longest, reverse=True)
    # ... and batches of the same length band still hold different examples on every pass.
    again = list(LengthGroupedSampler(lengths, 64, seed=0))
    other = list(LengthGroupedSampler(lengths, 64, seed=1))
    assert again == grouped and other != grouped


def test_a_chunk_is_fifty_batches_by_default():
    """Hugging Face's megabatch: sorting 50 batches' worth at a time."""
    assert LengthGroupedSampler(_lengths(10), 8, seed=0).chunk == 50 * 8
    assert LengthGroupedSampler(_lengths(10), 8, seed=0, chunk_batches=3).chunk == 3 * 8


def test_length_grouped_batches_check_their_arguments():
    for lengths in ([3, 4], torch.tensor([1.5, 2.0]), torch.tensor([[3, 4]])):
        with pytest.raises(TypeCheckError, match="parameter 'lengths'"):
            LengthGroupedSampler(lengths, 2, seed=0)
    with pytest.raises(ValueError, match="^batch_size must be"):
        LengthGroupedSampler(_lengths(4), 0, seed=0)
    with pytest.raises(ValueError, match="^chunk_batches must be"):
        LengthGroupedSampler(_lengths(4), 2, seed=0, chunk_batches=0)


def test_loader_with_lengths_groups_the_batches(toy_data):
    batches = list(make_loader(toy_data, 8, seed=0, lengths=toy_data.valid_lens))
    sizes = [len(b) for b in LengthGroupedSampler(toy_data.valid_lens, 8, seed=0)]
    assert [len(batch[0]) for batch in batches] == sizes and max(sizes) == 8
    rows = Counter(tuple(r) for batch in batches for r in batch[0].tolist())
    assert rows == Counter(tuple(r) for r in toy_data.tokens.tolist())
    spread = [int(b[2].max() - b[2].min()) for b in batches]
    assert sum(spread) < sum(int(b[2].max() - b[2].min())
                             for b in make_loader(toy_data, 8, seed=0))


def test_trimmed_batches_cut_only_padding(toy_data):
    for batch in make_loader(toy_data, 8, seed=0):
        tokens, _, valid_lens, _, weights, _, nsp = batch
        cut = trim_padding(batch)
        T, P = cut[0].shape[1], cut[3].shape[1]
        assert int(valid_lens.max()) == T and cut[1].shape == (len(tokens), T)
        assert max(i + 1 for i in range(weights.shape[1]) if weights[:, i].any()) == P
        assert torch.equal(cut[0], tokens[:, :T]) and (tokens[:, T:] == 0).all()
        assert (weights[:, P:] == 0).all() and torch.equal(cut[4], weights[:, :P])
        assert cut[2] is valid_lens and cut[6] is nsp


def test_trimmed_batches_give_the_losses_of_full_padding(toy_data, toy_model):
    model = toy_model().eval()
    for batch in make_loader(toy_data, 8, seed=0):
        full, cut = chapter_loss(model, *batch), chapter_loss(model, *trim_padding(batch))
        torch.testing.assert_close(cut.total, full.total)
        torch.testing.assert_close(cut.mlm, full.mlm)


def test_unused_prediction_slots_are_cut_whatever_the_batch_size():
    # 3 pairs, 10 tokens, 6 slots of which the first 2 are used: P' = 2, not 3 (the rows)
    weights = torch.tensor([[1.0, 1, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0], [1, 1, 0, 0, 0, 0]])
    batch = [torch.ones(3, 10, dtype=torch.long), torch.zeros(3, 10, dtype=torch.long),
             torch.tensor([7, 5, 9]), torch.ones(3, 6, dtype=torch.long), weights,
             torch.ones(3, 6, dtype=torch.long), torch.ones(3, dtype=torch.long)]
    cut = trim_padding(batch)
    assert [tuple(t.shape) for t in cut] == [(3, 9), (3, 9), (3,), (3, 2), (3, 2), (3, 2), (3,)]


def test_a_batch_with_no_prediction_keeps_one_slot(toy_data):
    batch = [t[:4].clone() for t in toy_data.tensors()]
    batch[4].zero_()
    assert trim_padding(batch)[3].shape == (4, 1)


def test_a_bad_batch_size_or_empty_data_is_named(toy_data):
    with pytest.raises(ValueError, match="^batch_size must be a positive integer; got 0"):
        make_loader(toy_data, 0, seed=0)
    with pytest.raises(ValueError, match="^data must hold at least one example; got an empty "
                                         "PretrainBatch$"):  # before: "num_samples ... 0"
        make_loader(toy_data[:0], 2, seed=0)


@pytest.mark.parametrize("kwargs", [{}, {"shuffle": False}, {"lengths": "valid_lens"}])
def test_iterating_a_loader_leaves_the_global_random_state_alone(kwargs, toy_data):
    """Before: a loader grouped by length drew its workers' seed from torch's global generator
    on every pass, so a notebook cell's draws depended on how many loaders ran before it."""
    if "lengths" in kwargs:
        kwargs = {"lengths": toy_data.valid_lens}
    loader = make_loader(toy_data, 8, seed=3, **kwargs)
    state = torch.get_rng_state()
    first = [batch[0].tolist() for batch in loader]
    assert torch.equal(torch.get_rng_state(), state)
    again = make_loader(toy_data, 8, seed=3, **kwargs)
    torch.manual_seed(123)  # another global state: the same batches
    assert [batch[0].tolist() for batch in again] == first
