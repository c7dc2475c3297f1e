"""bertlib's own checkpoint format: ``config.json`` plus ``model.safetensors`` (never pickle).

Loading treats a checkpoint as untrusted input: only regular files are read, the config must be
small, and the weights file's header must match the config before anything is allocated.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import load_model, save_model

from bertlib.checks import checked_file, read_json
from bertlib.model import BERTConfig, BERTModel

CONFIG_FILE = "config.json"
CONFIG_MAX_BYTES = 1 << 20  # a config is a few hundred bytes; anything near this is not one
WEIGHTS_FILE = "model.safetensors"
FORMAT = "bertlib"
FLOAT_DTYPES = frozenset({"F16", "BF16", "F32", "F64"})


def save_pretrained(model: BERTModel, directory: str | Path, **metadata) -> None:
    """Write the model's config (plus any JSON-able ``metadata``) and weights to ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    config = {"format": FORMAT, "config": model.config.to_dict(), "metadata": metadata}
    (directory / CONFIG_FILE).write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n",
                                         encoding="utf-8")
    # save_model, unlike save_file, copes with the tied MLM decoder (a shared tensor).
    save_model(model, str(directory / WEIGHTS_FILE))


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
    """The shapes of a model built from ``config``, and the groups of names that share one
    tensor (a tied MLM decoder), worked out on PyTorch's meta device: no memory is allocated."""
    with torch.device("meta"):
        model = BERTModel.from_config(config)
    groups: dict[int, set[str]] = {}
    for name, param in model.named_parameters(remove_duplicate=False):
        groups.setdefault(id(param), set()).add(name)
    shapes = {name: tuple(t.shape) for name, t in model.state_dict(keep_vars=True).items()}
    return shapes, [g for g in groups.values() if len(g) > 1]


def check_weights_file(path: Path, config: BERTConfig) -> None:
    """Every tensor a model of ``config`` needs, with its shape and a floating-point dtype,
    before anything is allocated; ValueError naming each difference."""
    found = header_shapes(path)
    shapes, tied = expected_shapes(config)
    stored_once = {name for group in tied for name in group if group & set(found)}
    missing = [name for name in shapes if name not in found and name not in stored_once]
    unexpected = sorted(set(found) - set(shapes))
    wrong = [f"{name}: expected {shapes[name]}, found {shape}"
             for name, (shape, _) in found.items() if name in shapes and shape != shapes[name]]
    wrong += [f"{name}: dtype {dtype}, not floating point" for name, (_, dtype) in found.items()
              if dtype not in FLOAT_DTYPES]
    if missing or unexpected or wrong:
        raise ValueError(f"{path} does not match its config.json: missing tensors {missing}; "
                         f"unexpected tensors {unexpected}; mismatched {wrong}")


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
    model = BERTModel.from_config(config)
    load_model(model, str(weights), strict=False)
    check_finite_weights(model)
    return model.eval()
