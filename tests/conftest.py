import pytest
import torch

from bertlib import BERTModel, Vocab


@pytest.fixture
def small_model() -> BERTModel:
    """A small chapter-style model in eval mode, initialised from a fixed seed."""
    torch.manual_seed(0)
    return BERTModel(vocab_size=50, num_hiddens=32, ffn_num_hiddens=64, num_heads=4,
                     num_blks=2, dropout=0.1, max_len=24).eval()


@pytest.fixture
def vocab() -> Vocab:
    words = "the cat sat on a mat and dog ran to park it was sunny day".split()
    return Vocab([words])
