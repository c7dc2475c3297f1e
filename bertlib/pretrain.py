"""Pretraining beyond the notebook: any corpus, one process or many, resumable.

    python -m bertlib.pretrain --corpus small --out runs/small              # one process
    torchrun --nproc_per_node=4 -m bertlib.pretrain --corpus wiki.train.tokens --out runs/wt
    torchrun --nnodes=2 --node_rank=0 --nproc_per_node=8 --master_addr=HOST --master_port=29500 \\
        -m bertlib.pretrain --corpus data/ --out runs/big                    # on each node

Under ``torchrun`` every process trains a replica wrapped in PyTorch's
``DistributedDataParallel`` (NCCL on GPUs, gloo on CPUs). All processes draw the same global
batch of ``--batch-size`` pairs and each takes its own slice, so N processes compute the same
update as one process with that batch: the MLM loss of each slice is scaled by the slice's share
of the batch's real prediction slots, and DDP averages the gradients.

The run writes ``--out``/checkpoint (model and Adam state in safetensors, the step in JSON)
every ``--save-every`` steps; started again with the same arguments, it resumes from there and
gives the same weights as a run that was never interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import torch.distributed as dist
from safetensors.torch import load_file, save_file
from torch.nn.parallel import DistributedDataParallel

from bertlib.assets import SMALL_BERT_DIR
from bertlib.checkpoint import load_pretrained, save_pretrained
from bertlib.checks import check_positive_int
from bertlib.corpus import load_small_corpus, read_paragraphs, read_wikitext, tokenize_paragraphs
from bertlib.data import PretrainBatch, make_pretrain_data
from bertlib.loss import BERTLoss, bert_loss
from bertlib.model import BERTConfig, BERTModel
from bertlib.tokenizer import WordPieceTokenizer
from bertlib.train import init_model, make_optimizer

CHECKPOINT_DIR = "checkpoint"
OPTIMIZER_FILE = "optimizer.safetensors"
STATE_FILE = "trainer.json"
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


def read_corpus(corpus: str) -> list[list[str]]:
    """Paragraphs of sentence strings: the shipped corpus' training split ("small"), a
    WikiText raw file (``*.tokens``), or every ``*.txt`` file of a folder (one sentence per
    line, a blank line between paragraphs)."""
    if corpus == "small":
        return load_small_corpus().train
    path = Path(corpus)
    if path.is_dir():
        files = sorted(path.glob("*.txt"))
        if not files:
            raise ValueError(f"corpus folder {corpus!r} holds no *.txt file")
        return [p for f in files for p in read_paragraphs(f)]
    if path.is_file():
        return [[" ".join(s) for s in p] for p in read_wikitext(path)]
    raise ValueError(f"corpus must be 'small', a WikiText *.tokens file or a folder of *.txt "
                     f"files; got {corpus!r}, which does not exist")


def global_batches(n: int, batch_size: int, seed: int, start: int) -> Iterator[torch.Tensor]:
    """The indices of the global batches from step ``start`` on: epoch ``e`` visits the ``n``
    pairs in a permutation seeded by ``(seed, e)`` and drops its last incomplete batch, so the
    batch of any step can be found again on resuming."""
    per_epoch = n // batch_size
    if per_epoch == 0:
        raise ValueError(f"batch_size={batch_size} exceeds the {n} training pairs")
    step = start
    while True:
        epoch, i = divmod(step, per_epoch)
        order = torch.randperm(n, generator=torch.Generator().manual_seed(seed * 100003 + epoch))
        yield order[i * batch_size:(i + 1) * batch_size]
        step += 1


def slice_loss(model: torch.nn.Module, batch: list[torch.Tensor],
               batch_weight: torch.Tensor, world: int) -> BERTLoss:
    """The chapter's loss on one process's slice, scaled so that the average over ``world``
    slices (what DDP does to the gradients) is the loss of the whole batch: the MLM mean is
    over the batch's ``batch_weight`` real slots, not the slice's."""
    tokens, segments, valid_lens, pred_positions, weights, labels, nsp_labels = batch
    _, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, valid_lens, pred_positions)
    loss = bert_loss(mlm_Y_hat, labels, weights, nsp_Y_hat, nsp_labels)
    mlm = loss.mlm * (weights.sum() / batch_weight * world)
    return BERTLoss(mlm, loss.nsp, mlm + loss.nsp)


def save_checkpoint(directory: Path, model: torch.nn.Module,
                    optimizer: torch.optim.Optimizer, step: int, args: RunArgs) -> None:
    """Model, Adam state and step, written beside ``directory`` and then moved in place, so an
    interruption while writing leaves the previous checkpoint whole."""
    tmp = directory.with_name(directory.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    save_pretrained(model, tmp)
    state = optimizer.state_dict()
    save_file({f"{i}.{k}": v.contiguous() for i, s in state["state"].items()
               for k, v in s.items()}, str(tmp / OPTIMIZER_FILE))
    (tmp / STATE_FILE).write_text(json.dumps(
        {"step": step, "args": asdict(args), "param_groups": state["param_groups"]}, indent=1),
        encoding="utf-8")
    shutil.rmtree(directory, ignore_errors=True)
    os.replace(tmp, directory)


def load_checkpoint(directory: Path, args: RunArgs) -> tuple[BERTModel, dict, int]:
    """The model, Adam's state dict and the step saved by :func:`save_checkpoint`."""
    saved = json.loads((directory / STATE_FILE).read_text(encoding="utf-8"))
    given = asdict(args)
    if saved["args"] != given:
        changed = {k: (v, given.get(k)) for k, v in saved["args"].items() if given.get(k) != v}
        raise ValueError(f"the checkpoint in {str(directory)!r} was made with other arguments "
                         f"(saved, given): {changed}; resume with the same ones or another --out")
    state: dict[int, dict[str, torch.Tensor]] = {}
    for key, value in load_file(str(directory / OPTIMIZER_FILE)).items():
        i, name = key.split(".", 1)
        state.setdefault(int(i), {})[name] = value
    optimizer_state = {"state": state, "param_groups": saved["param_groups"]}
    return load_pretrained(directory).train(), optimizer_state, saved["step"]


def build_tokenizer(args: RunArgs, paragraphs: list[list[str]], out: Path,
                    rank: int) -> WordPieceTokenizer:
    """The shipped tokenizer for the shipped corpus; otherwise one trained on the corpus by
    the first process and read by the others."""
    path = out / TOKENIZER_FILE
    if rank == 0 and not path.exists():
        if args.corpus == "small":
            shutil.copy(SMALL_BERT_DIR / TOKENIZER_FILE, path)
        else:
            texts = (s for p in paragraphs for s in p)
            WordPieceTokenizer.train(texts, args.vocab_size).save(path)
    if dist.is_initialized():
        dist.barrier()
    return WordPieceTokenizer.from_file(path)


def pretrain(args: RunArgs, *, on_step: Callable[[int, float, float], None] | None = None
             ) -> torch.nn.Module:
    """Run (or resume) the pretraining described by ``args`` in this process; under
    ``torchrun`` as one of several. ``on_step(step, mlm, nsp)`` runs after every step with the
    whole batch's losses. Returns the trained model (unwrapped)."""
    for name in ("steps", "batch_size", "max_len", "save_every", "log_every", "rounds"):
        check_positive_int(name, getattr(args, name))
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
    out.mkdir(parents=True, exist_ok=True)

    paragraphs = read_corpus(args.corpus)
    tokenizer = build_tokenizer(args, paragraphs, out, rank)
    # Every process builds the same pairs from the same seed (cheap next to training) and
    # reads its own slice of each batch from them.
    data = make_pretrain_data(tokenize_paragraphs(paragraphs, tokenizer.tokenize),
                              tokenizer.vocab, args.max_len, seed=args.seed, rounds=args.rounds)

    checkpoint = out / CHECKPOINT_DIR
    if checkpoint.exists():
        model, optimizer_state, start = load_checkpoint(checkpoint, args)
    else:
        config = BERTConfig(len(tokenizer.vocab), args.num_hiddens, args.ffn_num_hiddens,
                            args.num_heads, args.num_blks, args.dropout, args.max_len)
        model, optimizer_state, start = init_model(config, args.seed).train(), None, 0
    model.to(device)
    optimizer = make_optimizer(model, args.lr)
    if optimizer_state is not None:
        optimizer.load_state_dict(optimizer_state)  # moves the state to the model's device
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
    """Steps ``start + 1`` to ``args.steps``, with checkpoints and progress lines."""
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
        torch.manual_seed(args.seed * 1_000_003 + step * 1009 + rank)
        loss = slice_loss(ddp, batch, data.mlm_weights[rows].sum().to(device), world)
        optimizer.zero_grad(set_to_none=True)
        loss.total.backward()
        optimizer.step()
        losses = torch.stack([loss.mlm.detach(), loss.nsp.detach()])
        if world > 1:
            dist.all_reduce(losses)
            losses /= world
        mlm, nsp = losses.tolist()
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


def parse_args(argv: list[str] | None = None) -> RunArgs:
    parser = argparse.ArgumentParser(prog="python -m bertlib.pretrain",
                                     description=__doc__.splitlines()[0])
    for name, default in asdict(RunArgs(corpus="", out="")).items():
        flag = "--" + name.replace("_", "-")
        if name in ("corpus", "out"):
            parser.add_argument(flag, required=True)
        else:
            parser.add_argument(flag, type=type(default), default=default)
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads per process (default: torch's choice)")
    ns = vars(parser.parse_args(argv))
    threads = ns.pop("threads")
    if threads is not None:
        torch.set_num_threads(threads)
    return RunArgs(**ns)


if __name__ == "__main__":
    pretrain(parse_args())
