"""Does a model fit a task's data? Its labels must be among the model's outputs.

A classifier with 2 outputs trained on 12 topics would run, and learn nothing about 10 of them;
:func:`output_shape` finds the model's outputs from one example, before anything is trained or
scored, and :func:`check_labels` holds the labels against them.

Shapes: B = batch (or N examples), T = sequence length, C = classes (or tags).
"""

from __future__ import annotations

import torch
from torch import nn

from bertlib.finetuning.tasks import IGNORE, TaskData
from bertlib.inputs import eval_mode, model_device
from bertlib.support.checks import check_instance, check_range


def check_labels(labels: torch.Tensor, output_shape: tuple[int, ...]) -> None:
    """``labels`` fit outputs of ``output_shape``, (B, C) or (B, T, C): shape (B,) or (B, T),
    class ids in [0, C - 1] or ``IGNORE``."""
    if labels.shape != output_shape[:-1]:
        raise ValueError(f"labels must have shape {tuple(output_shape[:-1])} (the outputs' "
                         f"without their last dimension); got {tuple(labels.shape)}")
    C = output_shape[-1]
    check_range("labels", labels[labels != IGNORE], 0, C - 1,
                f"class ids in [0, {C - 1}] (the model has {C} outputs) or IGNORE")


def check_data(data: TaskData) -> None:
    """The door of fine-tuning, prediction and scoring: task data with at least one example
    (``select`` of a language it lacks gives none)."""
    check_instance("data", data, TaskData,
                   "a bertlib.finetuning.tasks.TaskData (topic_data() gives one)")
    if len(data) == 0:
        raise ValueError("data must hold at least one example; got an empty TaskData")


def output_shape(model: nn.Module, data: TaskData) -> torch.Size:
    """The shape of the model's outputs for all of ``data``, from one forward pass on its first
    example (in eval mode, on the model's device), so that labels can be checked against the
    model's classes before anything runs."""
    device = model_device(model)
    with eval_mode(model):
        tokens, segments, valid_lens, _ = (t[:1].to(device) for t in data.tensors())
        Y_hat = model(tokens, segments, valid_lens)
    if not isinstance(Y_hat, torch.Tensor) or Y_hat.dim() not in (2, 3):
        raise ValueError(f"model must give logits (batch, classes) or (batch, seq_len, "
                         f"classes); got {getattr(Y_hat, 'shape', type(Y_hat).__name__)}")
    return torch.Size((len(data), *Y_hat.shape[1:]))


def check_fits(model: nn.Module, data: TaskData) -> torch.Size:
    """A model, non-empty task data, and labels among the model's outputs; returns the shape
    of the outputs for all of ``data`` (see :func:`output_shape`)."""
    check_data(data)
    shape = output_shape(model, data)
    check_labels(data.labels, shape)
    return shape
