"""bertlib's checkpoints, ``config.json`` plus ``model.safetensors`` (never pickle): loaded as
untrusted input (regular files, a small config, the header matched to it before anything is
allocated), saved file by file whole, a save stopped midway loading as the new one."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import secrets
from collections.abc import Iterator
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from safetensors.torch import save_file, save_model

from bertlib.model import BERTConfig, BERTModel
from bertlib.support.checks import check_path
from bertlib.support.files import atomic_write, atomic_write_folder, checked_file, read_json
from bertlib.support.rng import own_global_rng

CONFIG_FILE = "config.json"
CONFIG_MAX_BYTES = 1 << 20  # a config is a few hundred bytes; anything near this is not one
WEIGHTS_FILE = "model.safetensors"
EMBEDDED_CONFIG, EMBEDDED_ID = "bertlib_config", "bertlib_save_id"  # the weights' metadata
FORMAT = "bertlib"
FLOAT_DTYPES = frozenset({"F16", "BF16", "F32", "F64"})
OPTIMIZER_FILE = "optimizer.safetensors"  # a resumable run's Adam state...
STATE_FILE = "trainer.json"  # ... and its own (the step, the arguments)
ADAM_STATE = ("exp_avg", "exp_avg_sq", "step")  # what Adam keeps per parameter
LIST_MAX = 5  # names shown per list in an error message; a hostile file may differ in millions


def save_pretrained(model: BERTModel, directory: str | Path, **metadata) -> None:
    """Write the model's config (with JSON ``metadata``) and finite weights to ``directory``,
    each file whole, the weights first carrying the config and this save's id: killed between
    the two, the old ``config.json``'s id differs and the weights' config is read instead."""
    if not isinstance(model, BERTModel):
        raise ValueError(f"model must be a bertlib BERTModel; got {model!r:.80}")
    check_path("directory", directory)
    save_id = secrets.token_hex(8)  # from the system's entropy, not torch's or random's
    record = {"format": FORMAT, "save_id": save_id, "config": model.config.to_dict(),
              "metadata": metadata}
    try:  # strict JSON: NaN and infinity are not JSON, other readers refuse them
        text = json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except (TypeError, ValueError, RecursionError) as err:
        raise ValueError(f"metadata must be JSON: str, finite numbers, bool, None, lists and "
                         f"dicts of them; {err!s:.200}") from None
    check_finite_weights(model)
    directory = Path(directory)
    embedded = {EMBEDDED_CONFIG: text, EMBEDDED_ID: save_id}
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # save_model, unlike save_file, copes with the tied MLM decoder (a shared tensor).
        atomic_write(directory / WEIGHTS_FILE,
                     lambda tmp: save_model(model, str(tmp), metadata=embedded))
        atomic_write(directory / CONFIG_FILE, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    except (OSError, SafetensorError) as err:  # a file where the folder should be, no room...
        raise ValueError(f"cannot save into {str(directory)!r}: {err}") from None


def read_config(directory: str | Path) -> dict:
    path = checked_file(directory, CONFIG_FILE, CONFIG_MAX_BYTES)
    return checked_config(read_json(path), str(path))


def checked_config(config: dict, where: str) -> dict:
    if config.get("format") != FORMAT:
        raise ValueError(f"{where} is not a bertlib config (for Hugging Face checkpoints use "
                         "bertlib.load_hf_model)")
    if not isinstance(config.get("config"), dict):
        raise ValueError(f"{where} must hold the model's sizes under \"config\"")
    return config


def saved_config(config: dict, weights: Path, embedded: dict[str, str]) -> dict:
    """``config.json``'s config, unless the weights carry another save's (a save stopped midway)."""
    if EMBEDDED_CONFIG not in embedded or embedded.get(EMBEDDED_ID) == config.get("save_id"):
        return config  # one save wrote both (or the weights predate embedded configs)
    where = f"{weights}'s embedded config"
    try:
        return checked_config(json.loads(embedded[EMBEDDED_CONFIG]), where)
    except (json.JSONDecodeError, RecursionError, AttributeError) as err:
        raise ValueError(f"{where} must be a JSON object; {err!s:.200}") from None


def config_from(config: dict) -> BERTConfig:
    """The :class:`BERTConfig` of a parsed ``config.json``; ValueError for unknown, missing keys."""
    fields = {f.name for f in dataclasses.fields(BERTConfig)}
    unknown = sorted(set(config["config"]) - fields)
    if unknown:
        raise ValueError(f"config.json has keys BERTConfig does not know: {unknown}; known: "
                         f"{sorted(fields)}")
    try:
        return BERTConfig(**config["config"])
    except TypeError as err:  # a required size is missing
        raise ValueError(f"config.json lacks a size: {err}") from None


@contextlib.contextmanager
def opened(path: Path) -> Iterator:
    """``safe_open(path)`` (which checks that the header fits the file), ValueError naming it."""
    try:
        with safe_open(str(path), framework="pt") as f:
            yield f
    except (SafetensorError, OSError) as err:
        raise ValueError(f"{path} is not a safetensors file that fits its header: {err}") from None


def header_shapes(f) -> dict[str, tuple[tuple[int, ...], bool]]:
    """Each tensor's shape and whether it is floating-point, from the header alone."""
    return {name: (tuple(f.get_slice(name).get_shape()), f.get_slice(name).get_dtype()
                   in FLOAT_DTYPES) for name in f.keys()}  # noqa: SIM118 (safe_open is no mapping)


def expected_shapes(config: BERTConfig) -> tuple[dict[str, tuple[int, ...]], set[str]]:
    """The state-dict shapes of ``BERTModel.from_config(config)`` and the tied names (stored
    once), from the sizes alone: a hostile config costs nothing (the tests compare a model)."""
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
    return shapes, tied if config.tie_mlm_decoder else set()


def some(names: list[str]) -> str:
    more = f" and {len(names) - LIST_MAX:,} more" if len(names) > LIST_MAX else ""
    return f"{names[:LIST_MAX]}{more}"


def check_block_count(path: Path, names, prefix: str, num_blks: int, key: str) -> None:
    """The blocks ``{prefix}{i}.`` are 0 .. num_blks - 1: checked before any per-block name is
    listed, since a hostile config may ask for millions."""
    pattern = re.compile(re.escape(prefix) + r"(\d+)\.")
    found = {int(m.group(1)) for name in names if (m := pattern.match(name))}
    if found != set(range(len(found))) or len(found) != num_blks:
        held = (f"{len(found):,} encoder blocks (numbered up to {max(found)})" if found
                else "no encoder block")
        raise ValueError(f"{path} holds {held}; its config asks for {key}={num_blks:,}, "
                         f"numbered 0 to {num_blks - 1}")


def check_shapes(path: Path, found: dict[str, tuple[tuple[int, ...], bool]],
                 expected: dict[str, tuple[int, ...]], optional: set[str] = frozenset()) -> None:
    """The tensors ``found`` (name: shape, is float) are ``expected``'s (name: shape; those in
    ``optional`` may be missing), all floats; ValueError naming each difference."""
    missing = [name for name in expected if name not in found and name not in optional]
    unexpected = sorted(set(found) - set(expected))
    wrong = [f"{name}: expected {expected[name]}, found {shape}" for name, (shape, _)
             in found.items() if name in expected and shape != expected[name]]
    wrong += [f"{name}: not floating point" for name, (_, is_float) in found.items()
              if not is_float]
    if missing or unexpected or wrong:
        raise ValueError(f"{path} does not match its config.json: missing tensors "
                         f"{some(missing)}; unexpected tensors {some(unexpected)}; mismatched "
                         f"{some(wrong)}")


def check_finite_weights(model: BERTModel) -> None:
    """No NaN or infinite weight (it would turn every output into NaN)."""
    for name, tensor in model.state_dict().items():
        if not torch.isfinite(tensor).all():
            raise ValueError(f"checkpoint tensor {name} holds NaN or infinite values")


def load_pretrained(directory: str | Path) -> BERTModel:
    """The model saved by :func:`save_pretrained`, in eval mode: a hostile checkpoint costs no
    more than its header, and one open file gives header and tensors (no mix with a new save)."""
    config = read_config(directory)
    weights = checked_file(directory, WEIGHTS_FILE, None)
    with opened(weights) as f:
        config = config_from(saved_config(config, weights, f.metadata() or {}))
        found = header_shapes(f)
        check_block_count(weights, found, "encoder.blks.", config.num_blks, "num_blks")
        shapes, tied = expected_shapes(config)
        check_shapes(weights, found, shapes, tied if tied & set(found) else set())
        state = {name: f.get_tensor(name) for name in found}
    with own_global_rng():  # the initial weights, overwritten next, draw from the global RNG
        model = BERTModel.from_config(config)
    model.load_state_dict(state, strict=False)  # every name was checked; a tied one stored once
    check_finite_weights(model)
    return model.eval()


def save_training_state(directory: Path, model: BERTModel, optimizer: torch.optim.Optimizer,
                        state: dict) -> None:
    """A run to resume (the model, Adam's state and the JSON ``state``), swapped in whole: a
    save killed at any moment leaves the previous folder or this one."""
    tensors = {f"{i}.{k}": v.contiguous() for i, s in optimizer.state_dict()["state"].items()
               for k, v in s.items()}
    text = json.dumps(state, indent=1)

    def write(folder: Path) -> None:
        save_pretrained(model, folder)
        atomic_write(folder / OPTIMIZER_FILE, lambda tmp: save_file(tensors, str(tmp)))
        atomic_write(folder / STATE_FILE, lambda tmp: tmp.write_text(text, encoding="utf-8"))

    atomic_write_folder(directory, write)


def load_training_state(directory: Path) -> tuple[BERTModel, dict, dict]:
    """The model (training mode), Adam's ``{index: {name: tensor}}`` and the JSON state saved by
    :func:`save_training_state`, every file checked as untrusted input."""
    state = read_json(checked_file(directory, STATE_FILE, CONFIG_MAX_BYTES))
    model = load_pretrained(directory).train()
    return model, read_adam_state(directory, list(model.parameters())), state


def read_adam_state(directory: Path, params: list[torch.Tensor]) -> dict:
    """Adam's state for ``params``, names and shapes checked from the header, values finite
    floats (a negative second moment would make the next update NaN)."""
    path = checked_file(directory, OPTIMIZER_FILE, None)
    state: dict[int, dict[str, torch.Tensor]] = {}
    with opened(path) as f:
        for key, (shape, _) in header_shapes(f).items():
            i, _, name = key.partition(".")
            if not i.isdigit() or int(i) >= len(params) or name not in ADAM_STATE:
                raise ValueError(f"{path}: {key!r} is not <parameter index>.<one of "
                                 f"{list(ADAM_STATE)}> for the model's {len(params)} "
                                 "parameters")
            want = () if name == "step" else tuple(params[int(i)].shape)
            if shape != want:
                raise ValueError(f"{path}: {key} has shape {shape}; parameter {i} "
                                 f"{'' if want else 'step '}needs {want}")
            state.setdefault(int(i), {})[name] = f.get_tensor(key)
    for i, entry in state.items():
        values = [entry.get(name) for name in ADAM_STATE]
        if any(v is None or not v.is_floating_point() or not torch.isfinite(v).all()
               for v in values) or bool((entry["exp_avg_sq"] < 0).any()):
            raise ValueError(f"{path}: parameter {i} needs {list(ADAM_STATE)}, finite floats "
                             "(exp_avg_sq >= 0)")
    return state
