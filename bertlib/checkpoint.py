"""bertlib's own checkpoint format: ``config.json`` plus ``model.safetensors`` (never pickle)."""

from __future__ import annotations

import json
from pathlib import Path

from safetensors.torch import load_model, save_model

from bertlib.model import BERTConfig, BERTModel

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"
FORMAT = "bertlib"


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
    path = Path(directory) / CONFIG_FILE
    if not path.exists():
        raise ValueError(f"{directory} has no {CONFIG_FILE}; is it a bertlib checkpoint?")
    config = json.loads(path.read_text(encoding="utf-8"))
    if config.get("format") != FORMAT:
        raise ValueError(f"{path} is not a bertlib config (for Hugging Face checkpoints use "
                         "bertlib.load_hf_model)")
    return config


def load_pretrained(directory: str | Path) -> BERTModel:
    """The model saved by :func:`save_pretrained`, in eval mode."""
    config = read_config(directory)
    model = BERTModel.from_config(BERTConfig(**config["config"]))
    missing, unexpected = load_model(model, str(Path(directory) / WEIGHTS_FILE), strict=False)
    if missing or unexpected:
        raise ValueError(f"checkpoint does not match its config: missing tensors {missing}, "
                         f"unexpected tensors {unexpected}")
    return model.eval()
