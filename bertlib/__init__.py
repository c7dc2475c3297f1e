"""bertlib: the BERT of *Dive into Deep Learning*, built from first principles and tested."""

from bertlib.data import (
    IS_NEXT,
    NOT_NEXT,
    NSPPair,
    NSPPairs,
    PretrainBatch,
    PretrainExample,
    make_nsp_pairs,
    make_pretrain_examples,
    pad_bert_inputs,
)
from bertlib.loss import BERTLoss, bert_loss
from bertlib.masking import Fate, MaskedTokens, mask_tokens
from bertlib.model import (
    BERTConfig,
    BERTEncoder,
    BERTModel,
    MaskLM,
    MultiHeadAttention,
    NextSentencePred,
    get_tokens_and_segments,
)
from bertlib.vocab import HF_SPECIAL_TOKENS, SpecialTokens, Vocab

__all__ = [
    "HF_SPECIAL_TOKENS",
    "IS_NEXT",
    "NOT_NEXT",
    "BERTConfig",
    "BERTEncoder",
    "BERTLoss",
    "BERTModel",
    "Fate",
    "MaskLM",
    "MaskedTokens",
    "MultiHeadAttention",
    "NSPPair",
    "NSPPairs",
    "NextSentencePred",
    "PretrainBatch",
    "PretrainExample",
    "SpecialTokens",
    "Vocab",
    "bert_loss",
    "get_tokens_and_segments",
    "make_nsp_pairs",
    "make_pretrain_examples",
    "mask_tokens",
    "pad_bert_inputs",
]
