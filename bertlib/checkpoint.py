"""bertlib's own checkpoint format: ``config.json`` plus ``model.safetensors`` (never pickle).

Loading treats a checkpoint as untrusted input: only regular files are read, the config must be
small, and the weights file's header must match the config before anything is allocated.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_model, save_model

from bertlib.checks import check_path, checked_file, read_json
from bertlib.model import BERTConfig, BERTModel
from bertlib.rng import own_global_rng

CONFIG_FILE = "config.json"
CONFIG_MAX_BYTES = 1 << 20  # a config is a few hundred bytes; anything near this is not one
WEIGHTS_FILE = "model.safetensors"
FORMAT = "bertlib"
FLOAT_DTYPES = frozenset({"F16", "BF16", "F32", "F64"})
LIST_MAX = 5  # names shown per list in an error message; a hostile file may differ in millions


def save_pretrained(model: BERTModel, directory: str | Path, **metadata) -> None:
    """Write the model's config (plus any JSON-able ``metadata``) and weights to ``directory``.

    Everything is checked before anything is created: a model that :func:`load_pretrained`
    would refuse (NaN weights) is not written.
    """
    if not isinstance(model, BERTModel):
        raise ValueError(f"model must be a bertlib BERTModel; got {model!r:.80}")
    check_path("directory", directory)
    config = {"format": FORMAT, "config": model.config.to_dict(), "metadata": metadata}
    try:  # strict JSON: NaN and infinity are not JSON, other readers refuse them
        text = json.dumps(config, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except (TypeError, ValueError) as err:
        raise ValueError(f"metadata must be JSON: str, finite numbers, bool, None, lists and "
                         f"dicts of them; {err}") from None
    check_finite_weights(model)
    directory = Path(directory)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        (directory / CONFIG_FILE).write_text(text, encoding="utf-8")
        # save_model, unlike save_file, copes with the tied MLM decoder (a shared tensor).
        save_model(model, str(directory / WEIGHTS_FILE))
    except (OSError, SafetensorError) as err:  # a file where the folder should be, no room...
        raise ValueError(f"cannot save into {str(directory)!r}: {err}") from None


def read_config(directory: str | Path) -> dict:
    """The parsed ``config.json`` of a bertlib checkpoint (a small regular file)."""
    path = checked_file(directory, CONFIG_FILE, CONFIG_MAX_BYTES)
    config = read_json(path)
    if config.get("format") != FORMAT:
        raise ValueError(f"{path} is not a bertlib config (for Hugging Face checkpoints use "
                         "bertlib.load_hf_model)")
    if not isinstance(config.get("config"), dict):
        raise ValueError(f"{path} must hold the model's sizes under \"config\"")
    return config


def config_from(config: dict) -> BERTConfig:
    """The :class:`BERTConfig` of a parsed ``config.json``; ValueError for unknown or missing
    keys (and, from BERTConfig itself, for bad values)."""
    fields = {f.name for f in dataclasses.fields(BERTConfig)}
    unknown = sorted(set(config["config"]) - fields)
    if unknown:
        raise ValueError(f"config.json has keys BERTConfig does not know: {unknown}; known: "
                         f"{sorted(fields)}")
    try:
        return BERTConfig(**config["config"])
    except TypeError as err:  # a required size is missing
        raise ValueError(f"config.json lacks a size: {err}") from None


def header_shapes(path: Path) -> dict[str, tuple[tuple[int, ...], str]]:
    """Each tensor's shape and dtype (``"F32"``, ...) from a safetensors header; no tensor data
    is read, and the library checks that the header fits the file."""
    try:
        with safe_open(str(path), framework="pt") as f:
            names = f.keys()  # a method of safe_open, which is not a mapping
            return {name: (tuple(f.get_slice(name).get_shape()), f.get_slice(name).get_dtype())
                    for name in names}
    except (SafetensorError, OSError) as err:
        raise ValueError(f"{path} is not a safetensors file that fits its header: {err}") from None


def expected_shapes(config: BERTConfig) -> tuple[dict[str, tuple[int, ...]], list[set[str]]]:
    """The state-dict shapes of ``BERTModel.from_config(config)``, and the groups of names that
    share one tensor (a tied MLM decoder), worked out from the sizes alone: nothing is built, so
    a hostile config costs nothing (tests/test_checkpoint.py checks them against a real model).
    """
    V, H, F, L = config.vocab_size, config.num_hiddens, config.ffn_num_hiddens, config.max_len
    shapes = {"encoder.pos_embedding": (1, L, H), "encoder.token_embedding.weight": (V, H),
              "encoder.segment_embedding.weight": (2, H)}
    if config.embedding_norm:
        shapes |= {"encoder.embedding_ln.weight": (H,), "encoder.embedding_ln.bias": (H,)}
    block = {f"attention.W_{x}.{kind}": shape for x in "qkvo"
             for kind, shape in (("weight", (H, H)), ("bias", (H,)))}
    block |= {"addnorm1.ln.weight": (H,), "addnorm1.ln.bias": (H,),
              "ffn.dense1.weight": (F, H), "ffn.dense1.bias": (F,),
              "ffn.dense2.weight": (H, F), "ffn.dense2.bias": (H,),
              "addnorm2.ln.weight": (H,), "addnorm2.ln.bias": (H,)}
    for i in range(config.num_blks):
        shapes |= {f"encoder.blks.{i}.{name}": shape for name, shape in block.items()}
    shapes |= {"hidden.0.weight": (H, H), "hidden.0.bias": (H,),
               "mlm.mlp.0.weight": (H, H), "mlm.mlp.0.bias": (H,),
               "mlm.mlp.2.weight": (H,), "mlm.mlp.2.bias": (H,),
               "mlm.mlp.3.weight": (V, H), "mlm.mlp.3.bias": (V,),
               "nsp.output.weight": (2, H), "nsp.output.bias": (2,)}
    tied = {"encoder.token_embedding.weight", "mlm.mlp.3.weight"}
    return shapes, [tied] if config.tie_mlm_decoder else []


def some(names: list[str]) -> str:
    """The first few of ``names`` and how many there are: a message stays short."""
    more = f" and {len(names) - LIST_MAX:,} more" if len(names) > LIST_MAX else ""
    return f"{names[:LIST_MAX]}{more}"


def check_block_count(path: Path, names, prefix: str, num_blks: int, key: str) -> None:
    """The blocks a weights file holds (``{prefix}{i}.``) are 0 .. num_blks - 1: checked before
    any per-block name is listed, since a hostile config may ask for millions of blocks."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)\.")
    found = {int(m.group(1)) for name in names if (m := pattern.match(name))}
    if found != set(range(len(found))) or len(found) != num_blks:
        held = (f"{len(found):,} encoder blocks (numbered up to {max(found)})" if found
                else "no encoder block")
        raise ValueError(f"{path} holds {held}; its config asks for {key}={num_blks:,}, "
                         f"numbered 0 to {num_blks - 1}")


def check_weights_file(path: Path, config: BERTConfig) -> None:
    """Every tensor a model of ``config`` needs, with its shape and a floating-point dtype,
    before anything is allocated; ValueError naming each difference."""
    found = header_shapes(path)
    check_block_count(path, found, "encoder.blks.", config.num_blks, "num_blks")
    shapes, tied = expected_shapes(config)
    stored_once = {name for group in tied for name in group if group & set(found)}
    missing = [name for name in shapes if name not in found and name not in stored_once]
    unexpected = sorted(set(found) - set(shapes))
    wrong = [f"{name}: expected {shapes[name]}, found {shape}"
             for name, (shape, _) in found.items() if name in shapes and shape != shapes[name]]
    wrong += [f"{name}: dtype {dtype}, not floating point" for name, (_, dtype) in found.items()
              if dtype not in FLOAT_DTYPES]
    if missing or unexpected or wrong:
        raise ValueError(f"{path} does not match its config.json: missing tensors "
                         f"{some(missing)}; unexpected tensors {some(unexpected)}; mismatched "
                         f"{some(wrong)}")


def check_finite_weights(model: BERTModel) -> None:
    """No NaN or infinite weight: it would silently turn every output into NaN."""
    for name, tensor in model.state_dict().items():
        if not torch.isfinite(tensor).all():
            raise ValueError(f"checkpoint tensor {name} holds NaN or infinite values")


def load_pretrained(directory: str | Path) -> BERTModel:
    """The model saved by :func:`save_pretrained`, in eval mode.

    The config and the weights file's header are checked against each other before the model
    is built, so a hostile or broken checkpoint costs no more than reading its header.
    """
    config = config_from(read_config(directory))
    weights = checked_file(directory, WEIGHTS_FILE, None)
    check_weights_file(weights, config)
    with own_global_rng():  # the initial weights, overwritten next, draw from the global RNG
        model = BERTModel.from_config(config)
    load_model(model, str(weights), strict=False)
    check_finite_weights(model)
    return model.eval()
