"""Random draws come from an explicit generator, never torch's global one."""

import pytest
import torch

from bertlib.support.rng import make_generator, own_global_rng


def test_a_seed_gives_a_fresh_generator_with_repeatable_draws():
    a, b = make_generator(seed=3), make_generator(seed=3)
    assert a is not b
    assert torch.equal(torch.rand(5, generator=a), torch.rand(5, generator=b))
    assert not torch.equal(torch.rand(5, generator=make_generator(seed=4)),
                           torch.rand(5, generator=make_generator(seed=3)))


def test_a_generator_is_used_as_it_is():
    g = torch.Generator().manual_seed(0)
    assert make_generator(generator=g) is g


def test_the_global_generator_is_untouched():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    torch.rand(5, generator=make_generator(seed=0))
    assert torch.equal(torch.rand(3), expected)


@pytest.mark.parametrize("kwargs", [{}, {"seed": 0, "generator": torch.Generator()}])
def test_exactly_one_source_is_required(kwargs):
    with pytest.raises(ValueError, match="exactly one of generator="):
        make_generator(**kwargs)


@pytest.mark.parametrize("seed", [1.9, 0.5, "7", True, -1, "abc", float("nan"), 2**63])
def test_a_seed_is_an_integer_in_range(seed):
    """Before, 1.9 silently became seed 1 and '7', True and -1 were taken."""
    with pytest.raises(ValueError, match=r"seed must be an integer in \[0, 2\*\*63 - 1\]"):
        make_generator(seed=seed)


def test_numpy_and_large_seeds_are_integers():
    import numpy as np
    for seed in (np.int64(5), 2**63 - 1):
        assert torch.equal(torch.rand(3, generator=make_generator(seed=seed)),
                           torch.rand(3, generator=torch.Generator().manual_seed(int(seed))))


def test_a_generator_must_be_a_torch_generator():
    with pytest.raises(ValueError, match="generator must be a torch.Generator; got str 'g'"):
        make_generator(generator="g")


def test_own_global_rng_undoes_draws_from_the_global_generator():
    state = torch.get_rng_state()
    with own_global_rng():
        torch.manual_seed(5)
        torch.rand(3)
    assert torch.equal(state, torch.get_rng_state())


def test_a_seeded_block_draws_from_its_seed_and_gives_the_stream_back():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    with own_global_rng(5):
        inside = torch.rand(4)
    assert torch.equal(torch.rand(3), expected)  # the caller's stream goes on as if untouched
    with own_global_rng(5):
        assert torch.equal(torch.rand(4), inside)  # the seed alone decides the draws
    with pytest.raises(ValueError, match="seed must be an integer"), own_global_rng(1.5):
        pass
