"""bertlib: the BERT of *Dive into Deep Learning*, built from first principles and tested."""

from bertlib.analysis.context import similarity_table
from bertlib.assets import load_small_bert
from bertlib.batches import LengthGroupedSampler, make_loader, trim_padding
from bertlib.data import (
    IS_NEXT,
    NOT_NEXT,
    NSPPair,
    NSPPairs,
    PretrainBatch,
    PretrainExample,
    make_nsp_pairs,
    make_pretrain_data,
    make_pretrain_examples,
    pad_bert_inputs,
)
from bertlib.finetuning.finetune import (
    BERTClassifier,
    BERTQuestionAnswerer,
    BERTTagger,
    evaluate_task,
    fine_tune,
)
from bertlib.inputs import eval_mode, get_bert_encoding, get_tokens_and_segments
from bertlib.loss import BERTLoss, bert_loss
from bertlib.masking import Fate, MaskedTokens, mask_tokens
from bertlib.model import (
    BERTConfig,
    BERTEncoder,
    BERTModel,
    MaskLM,
    MultiHeadAttention,
    NextSentencePred,
)
from bertlib.text.corpus import load_small_corpus, read_wikitext, tokenize_paragraphs
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.text.vocab import HF_SPECIAL_TOKENS, SpecialTokens, Vocab
from bertlib.train import evaluate_pretraining, train_bert
from bertlib.weights.checkpoint import load_pretrained, save_pretrained
from bertlib.weights.hf import load_hf, load_hf_model

__all__ = [
    "HF_SPECIAL_TOKENS", "IS_NEXT", "NOT_NEXT", "BERTClassifier", "BERTConfig", "BERTEncoder",
    "BERTLoss", "BERTModel", "BERTQuestionAnswerer", "BERTTagger", "Fate",
    "LengthGroupedSampler", "MaskLM", "MaskedTokens", "MultiHeadAttention", "NSPPair",
    "NSPPairs", "NextSentencePred", "PretrainBatch", "PretrainExample", "SpecialTokens",
    "Vocab", "WordPieceTokenizer", "bert_loss", "eval_mode", "evaluate_pretraining",
    "evaluate_task", "fine_tune", "get_bert_encoding", "get_tokens_and_segments", "load_hf",
    "load_hf_model", "load_pretrained", "load_small_bert", "load_small_corpus", "make_loader",
    "make_nsp_pairs", "make_pretrain_data", "make_pretrain_examples", "mask_tokens",
    "pad_bert_inputs", "read_wikitext", "save_pretrained", "similarity_table",
    "tokenize_paragraphs", "train_bert", "trim_padding",
]
