"""Pretraining beyond the notebook: any corpus, one process or many, resumable.

    python -m bertlib.scale.pretrain --corpus small --out runs/small              # one process
    torchrun --nproc_per_node=4 -m bertlib.scale.pretrain --corpus wiki.train.tokens --out runs/wt
    torchrun --nnodes=2 --node_rank=0 --nproc_per_node=8 --master_addr=HOST --master_port=29500 \\
        -m bertlib.scale.pretrain --corpus data/ --out runs/big                    # on each node

Under ``torchrun`` each process trains a ``DistributedDataParallel`` replica on its slice of
the same global batch, its MLM loss scaled by the slice's share of the real slots: N processes
make one process's update. Every ``--save-every`` steps ``--out``/checkpoint is written; run
again with the same arguments, it resumes to the same weights as an uninterrupted run.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.distributed as dist
from safetensors import SafetensorError
from torch.nn.parallel import DistributedDataParallel

from bertlib.assets import SMALL_BERT_DIR
from bertlib.data import PretrainBatch, make_pretrain_data
from bertlib.loss import BERTLoss, bert_loss
from bertlib.model import BERTConfig, BERTModel
from bertlib.support.checks import (
    check_divisible,
    check_dropout,
    check_positive_int,
    check_seed,
    check_str,
)
from bertlib.support.files import atomic_write, complete_folder, locked
from bertlib.text.corpus import load_small_corpus, read_folder, read_wikitext, tokenize_paragraphs
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.train import check_lr, init_model, make_optimizer
from bertlib.weights.checkpoint import (
    STATE_FILE,
    load_training_state,
    save_pretrained,
    save_training_state,
)

CHECKPOINT_DIR = "checkpoint"
TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class RunArgs:
    """Everything that decides a run's result; a resumed run must be given the same."""

    corpus: str  # "small", a WikiText-format *.tokens file, or a folder of *.txt files
    out: str
    steps: int = 1000
    batch_size: int = 128  # the global batch: split over the processes
    lr: float = 1e-3
    max_len: int = 64
    vocab_size: int = 8000  # for a tokenizer trained on the corpus ("small" uses the shipped one)
    num_hiddens: int = 128
    ffn_num_hiddens: int = 256
    num_heads: int = 2
    num_blks: int = 2
    dropout: float = 0.1
    rounds: int = 1  # fresh NSP pairs and masks per round
    seed: int = 0
    save_every: int = 200
    log_every: int = 50


def check_run_args(args: RunArgs) -> None:
    for name in ("corpus", "out"):
        check_str(name, getattr(args, name))
        if not getattr(args, name):
            raise ValueError(f"{name} must not be empty")
    check_lr("lr", args.lr)
    check_dropout("dropout", args.dropout)
    check_seed("seed", args.seed)
    for name in ("steps", "batch_size", "max_len", "vocab_size", "num_hiddens", "ffn_num_hiddens",
                 "num_heads", "num_blks", "rounds", "save_every", "log_every"):
        check_positive_int(name, getattr(args, name))
    check_divisible(args.num_hiddens, args.num_heads)


def read_corpus(corpus: str) -> list[list[str]]:
    """Paragraphs of sentence strings: the shipped corpus' training split ("small"), a WikiText
    raw file (``*.tokens``), or a folder's ``*.txt`` files (a sentence a line, paragraphs apart)."""
    if corpus == "small":
        return load_small_corpus().train
    path = Path(corpus)
    if path.is_dir():
        return read_folder(path)
    if path.exists():  # read_wikitext refuses what is not a regular file (/dev/null, a pipe)
        return [[" ".join(s) for s in p] for p in read_wikitext(path)]
    raise ValueError(f"corpus must be 'small', a WikiText *.tokens file or a folder of *.txt "
                     f"files; got {corpus!r}, which does not exist")


def global_batches(n: int, batch_size: int, seed: int, start: int) -> Iterator[torch.Tensor]:
    """The global batches' indices from step ``start`` on, each epoch a permutation seeded by
    ``(seed, epoch)`` less its incomplete last batch: a resumed run finds any step's batch."""
    per_epoch = n // batch_size
    if per_epoch == 0:
        raise ValueError(f"batch_size={batch_size} exceeds the {n} training pairs")
    for step in itertools.count(start):
        epoch, i = divmod(step, per_epoch)
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed * 100003 + epoch))
        yield order[i * batch_size:(i + 1) * batch_size]


def slice_loss(model: torch.nn.Module, batch: list[torch.Tensor],
               batch_weight: torch.Tensor, world: int) -> BERTLoss:
    """The chapter's loss on one slice, the MLM mean taken over the batch's ``batch_weight``
    real slots, so that DDP's average over ``world`` slices is the whole batch's loss."""
    tokens, segments, valid_lens, pred_positions, weights, labels, nsp_labels = batch
    _, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, valid_lens, pred_positions)
    loss = bert_loss(mlm_Y_hat, labels, weights, nsp_Y_hat, nsp_labels)
    mlm = loss.mlm * (weights.sum() / batch_weight * world)
    return BERTLoss(mlm, loss.nsp, mlm + loss.nsp)


def save_checkpoint(directory: Path, model: BERTModel, optimizer: torch.optim.Optimizer,
                    step: int, args: RunArgs) -> None:
    """Model, Adam state, step and arguments, swapped in whole; a full disk is a ValueError."""
    try:
        save_training_state(directory, model, optimizer, {"step": step, "args": asdict(args)})
    except (OSError, SafetensorError) as err:
        raise ValueError(f"cannot save the checkpoint of step {step} into {str(directory)!r} "
                         f"(the last one saved stays): {err}") from None


def load_checkpoint(directory: Path, args: RunArgs) -> tuple[BERTModel, dict, int]:
    """The model, Adam's state and the step of a checkpoint made with ``args`` (else refused)."""
    model, adam_state, saved = load_training_state(directory)
    step, saved_args = saved.get("step"), saved.get("args")
    if not isinstance(saved_args, dict) or isinstance(step, bool) or not isinstance(step, int) \
            or not 0 <= step <= args.steps:
        raise ValueError(f"{directory / STATE_FILE} must hold \"step\", an integer in [0, "
                         f"steps={args.steps}], and \"args\", the run's arguments; got "
                         f"{saved!r:.200}")
    given = asdict(args)
    if saved_args != given:
        changed = {k: (saved_args.get(k), v) for k, v in given.items() if saved_args.get(k) != v}
        raise ValueError(f"the checkpoint in {str(directory)!r} was made with other arguments "
                         f"(saved, given): {changed}; resume with the same ones or another --out")
    return model, adam_state, step


def build_tokenizer(args: RunArgs, paragraphs: list[list[str]], out: Path,
                    rank: int) -> WordPieceTokenizer:
    """The shipped tokenizer for the shipped corpus, else one the first process trains; written
    whole, so a run killed meanwhile leaves no part of a file every rerun would refuse."""
    path = out / TOKENIZER_FILE
    if rank == 0 and not os.path.lexists(path):
        if args.corpus == "small":
            atomic_write(path, lambda tmp: shutil.copyfile(SMALL_BERT_DIR / TOKENIZER_FILE, tmp))
        else:
            texts = (s for p in paragraphs for s in p)
            tokenizer = WordPieceTokenizer.train(texts, args.vocab_size)
            atomic_write(path, tokenizer.save)
    if dist.is_initialized():
        dist.barrier()
    return WordPieceTokenizer.from_file(path)


def pretrain(args: RunArgs, *, on_step: Callable[[int, float, float], None] | None = None
             ) -> torch.nn.Module:
    """Run or resume ``args``'s pretraining (under ``torchrun``, one process of several),
    ``on_step(step, mlm, nsp)`` after each step; returns the model. A step whose loss or
    gradients are not finite raises ValueError before it changes any weight."""
    check_run_args(args)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if args.batch_size % world:
        raise ValueError(f"batch_size={args.batch_size} must be a multiple of the number of "
                         f"processes ({world}), so that every process gets an equal slice")
    cuda = torch.cuda.is_available()
    device = torch.device(f"cuda:{local_rank}" if cuda else "cpu")
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if cuda else "gloo")
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:  # a file of that name, no permission...
        raise ValueError(f"out must be a folder bertlib can create or write to; got "
                         f"{args.out!r}: {err.strerror}") from None
    # A second run on out would take this one's checkpoint.partial for a stale leftover.
    with locked("out", out) if rank == 0 else contextlib.nullcontext():
        paragraphs = read_corpus(args.corpus)
        tokenizer = build_tokenizer(args, paragraphs, out, rank)
        # Every process builds the same pairs from the same seed (cheap next to training) and
        # reads its own slice of each batch from them.
        data = make_pretrain_data(tokenize_paragraphs(paragraphs, tokenizer.tokenize),
                                  tokenizer.vocab, args.max_len, seed=args.seed, rounds=args.rounds)

        config = BERTConfig(len(tokenizer.vocab), args.num_hiddens, args.ffn_num_hiddens,
                            args.num_heads, args.num_blks, args.dropout, args.max_len)
        checkpoint = complete_folder(out / CHECKPOINT_DIR)
        if checkpoint is not None:
            model, adam_state, start = load_checkpoint(checkpoint, args)
            if model.config != config:
                raise ValueError(f"the model in {str(checkpoint)!r} is not the one these arguments "
                                 f"and {TOKENIZER_FILE} make: {model.config} vs {config}")
        else:
            model, adam_state, start = init_model(config, args.seed).train(), {}, 0
        model.to(device)
        optimizer = make_optimizer(model, args.lr)
        # The groups (lr, betas...) come from the arguments, which the checkpoint's match.
        optimizer.load_state_dict({"state": adam_state,  # moved to the model's device
                                   "param_groups": optimizer.state_dict()["param_groups"]})
        ddp = DistributedDataParallel(model, device_ids=[local_rank] if cuda else None) \
            if world > 1 else model

        with torch.random.fork_rng(devices=[device] if cuda else []):
            _train(args, ddp, model, optimizer, data, start, world, rank, device, on_step)
        if rank == 0:
            save_pretrained(model, out, recipe=asdict(args))
        if world > 1:
            dist.destroy_process_group()
        return model.eval()


def _train(args: RunArgs, ddp: torch.nn.Module, model: BERTModel,
           optimizer: torch.optim.Optimizer, data: PretrainBatch, start: int, world: int,
           rank: int, device: torch.device,
           on_step: Callable[[int, float, float], None] | None) -> None:
    checkpoint = Path(args.out) / CHECKPOINT_DIR
    per_process = args.batch_size // world
    batches = global_batches(len(data), args.batch_size, args.seed, start)
    clock, pairs = time.perf_counter(), 0
    for step in range(start + 1, args.steps + 1):
        rows = next(batches)
        mine = PretrainBatch(*(t[rows[rank * per_process:(rank + 1) * per_process]]
                               for t in data.tensors()))
        batch = [t.to(device) for t in mine.tensors()]
        # Dropout draws depend on the step and process only, so a resumed run draws as the
        # uninterrupted one would have (on the global generator, which pretrain forks and
        # gives back as it was).
        torch.manual_seed(args.seed * 1_000_003 + step * 1009 + rank)  # process-state: fork_rng
        loss = slice_loss(ddp, batch, data.mlm_weights[rows].sum().to(device), world)
        losses = torch.stack([loss.mlm.detach(), loss.nsp.detach()])
        if world > 1:  # before the update, so that every process stops at the same step
            dist.all_reduce(losses)
            losses /= world
        mlm, nsp = losses.tolist()
        optimizer.zero_grad(set_to_none=True)
        if math.isfinite(mlm + nsp):
            loss.total.backward()  # DDP averages the gradients: every process sees the same
        finite = [p.grad.isfinite().all() for p in model.parameters() if p.grad is not None]
        if not (math.isfinite(mlm + nsp) and bool(torch.stack(finite).all())):  # one sync
            raise ValueError(f"step {step}: the loss or its gradients are not finite (mlm "
                             f"{mlm}, nsp {nsp}); stopped before updating the weights, which "
                             f"are those after step {step - 1} (try a smaller --lr than "
                             f"{args.lr})")
        optimizer.step()
        pairs += args.batch_size
        if on_step is not None:
            on_step(step, mlm, nsp)
        if rank == 0 and (step % args.log_every == 0 or step == args.steps):
            rate = pairs / (time.perf_counter() - clock)
            print(f"step {step}/{args.steps}  mlm {mlm:.3f}  nsp {nsp:.3f}  "
                  f"{rate:.0f} pairs/s on {world} process(es)", flush=True)
        if step % args.save_every == 0 or step == args.steps:
            if rank == 0:
                save_checkpoint(checkpoint, model, optimizer, step, args)
            if world > 1:
                dist.barrier()


def parse_args(argv: list[str] | None = None) -> tuple[RunArgs, int | None]:
    """The run and the ``--threads`` the command line asks for; argparse's error for a bad flag."""
    cli = argparse.ArgumentParser(prog="python -m bertlib.scale.pretrain",
                                  description=__doc__.splitlines()[0])
    for name, default in asdict(RunArgs(corpus="", out="")).items():
        cli.add_argument("--" + name.replace("_", "-"), type=type(default), default=default,
                         required=name in ("corpus", "out"))
    cli.add_argument("--threads", type=int, default=None,
                     help="torch threads per process (default: torch's choice)")
    ns = vars(cli.parse_args(argv))
    threads = ns.pop("threads")
    try:
        check_run_args(RunArgs(**ns))
        if threads is not None:
            check_positive_int("threads", threads)
    except ValueError as err:
        cli.error(str(err))
    return RunArgs(**ns), threads


def main(argv: list[str] | None = None) -> None:
    """The command: a refusal or failed write is one line (status 1), Ctrl-C where the last
    checkpoint is (status 130), never a traceback."""
    args, threads = parse_args(argv)
    if threads is not None:
        torch.set_num_threads(threads)  # process-state: opted into with --threads
    try:
        pretrain(args)
    except (ValueError, OSError) as err:
        sys.exit(f"python -m bertlib.scale.pretrain: error: {err}")
    except KeyboardInterrupt:
        checkpoint = complete_folder(Path(args.out) / CHECKPOINT_DIR)
        saved = ("no checkpoint was saved yet" if checkpoint is None else
                 f"the last checkpoint is {str(checkpoint)!r}: run the same command to resume")
        print(f"python -m bertlib.scale.pretrain: stopped; {saved}", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
