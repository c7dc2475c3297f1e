"""Random draws come from an explicit generator, never torch's global one."""

import pytest
import torch

from bertlib.rng import make_generator, own_global_rng


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


def test_own_global_rng_undoes_draws_from_the_global_generator():
    state = torch.get_rng_state()
    with own_global_rng():
        torch.manual_seed(5)
        torch.rand(3)
    assert torch.equal(state, torch.get_rng_state())
