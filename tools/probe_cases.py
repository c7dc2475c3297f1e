"""The probe's cases (see ``tools/probe.py``): bad inputs for every public module of bertlib,
written from the public signatures and docstrings.

A case is a function of the shared :class:`Fixtures`. What it must do, by ``expect``:

* ``"refuse"`` (most): raise a ValueError whose message holds one of ``names`` (the argument,
  or the value). Returning normally is ``silent``. A case may also return :class:`OK` where a
  correct answer is as good as a refusal (e.g. int32 labels, accepted or refused clearly), and
  raise :class:`Silent` when what came back is wrong.
* ``"handled"``: a widget or an exercise checker, which must show a notice or print a verdict
  instead of raising: the case returns what was shown (a non-empty text is ok), raises
  :class:`Silent` when nothing was, and any exception that escapes is ``raw``.
* ``"accept"``: a valid call that must simply work and leave the process alone (the state
  cases: wrapping a caller's tokenizer, iterating a loader, ``parse_args --threads``).

Whatever a case hands bertlib that the caller still owns it passes to ``F.watch`` first: a
change to it is a ``state`` outcome.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import hashlib
import io
import itertools
import json
import math
import os
import pickle
import resource
import runpy
import shutil
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import torch

import bertlib
import bertlib.context
import bertlib.evidence
import bertlib.exercises
import bertlib.fast
import bertlib.fill_mask
import bertlib.hf
import bertlib.implement
import bertlib.pretrain
import bertlib.snapshots
import bertlib.timelapse
import bertlib.train
import bertlib.viz
import bertlib.viz.listing
import bertlib.words
from bertlib import assets, checks, corpus, data, files, i18n, inputs, tasks
from bertlib.assets import load_small_bert
from bertlib.finetune import BERTClassifier, BERTTagger
from bertlib.model import BERTConfig, BERTModel
from bertlib.snapshots import load_snapshots
from bertlib.train import init_model

ROOT = Path(__file__).resolve().parent.parent


class Silent(Exception):
    """Raised by a case whose call returned, but wrongly."""

    probe_outcome = "silent"


class StateChanged(Exception):
    """Raised by a case that watched process state itself (in a fresh interpreter)."""

    probe_outcome = "state"


@dataclass
class OK:
    """Returned by a case whose call did the right thing without refusing."""

    message: str


@dataclass
class Case:
    module: str
    name: str
    fn: Callable
    names: tuple[str, ...] = ()
    expect: str = "refuse"
    timeout: float = 30.0

    def __post_init__(self):
        # Training, widgets and the CLI are slow on a busy machine: more time before a hang.
        self.timeout = max(self.timeout, SLOW_MODULES.get(self.module, 0))

    def judge(self, got) -> tuple[str, str]:
        """The outcome of a case that returned ``got``."""
        if isinstance(got, OK):
            return "ok", got.message
        if self.expect == "accept":
            return "ok", "worked"
        if self.expect == "handled":
            if isinstance(got, str) and got.strip():
                return "ok", "shown: " + got.strip()
            return "silent", f"nothing shown (returned {short(got)})"
        return "silent", f"returned {short(got)}"


CASES: list[Case] = []
SLOW_MODULES = {"bertlib.train": 60, "bertlib.finetune": 60, "bertlib.viz": 60,
                "bertlib.pretrain": 90}


def short(value) -> str:
    try:
        text = repr(value)
    except Exception as err:
        text = f"<repr failed: {type(err).__name__}>"
    text = " ".join(text.split())
    return text if len(text) <= 120 else text[:117] + "..."


def case(module: str, name: str, *names: str, expect: str = "refuse", timeout: float = 30.0):
    """Register the decorated function as a case."""
    def register(fn: Callable) -> Callable:
        CASES.append(Case(module, name, fn, names, expect, timeout))
        return fn
    return register


def refuse(module: str, name: str, names, fn: Callable, timeout: float = 30.0) -> None:
    """Register a one-line refusal case: ``fn(F)`` must raise a ValueError naming ``names``."""
    names = (names,) if isinstance(names, str) else tuple(names)
    CASES.append(Case(module, name, fn, names, "refuse", timeout))


# ---------------------------------------------------------------- digests of the caller's objects
def digest(obj) -> str:
    """A fingerprint of everything about ``obj`` a library call must not change."""
    h = hashlib.blake2b(digest_size=16)
    if isinstance(obj, torch.nn.Module):
        for name, t in obj.state_dict().items():
            h.update(name.encode())
            h.update(f"{t.device}{t.dtype}{tuple(t.shape)}".encode())
            if t.device.type != "meta":
                h.update(t.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy())
        for name, m in obj.named_modules():
            h.update(f"{name}{m.training}".encode())
        for name, p in obj.named_parameters():
            h.update(f"{name}{p.requires_grad}".encode())
    elif isinstance(obj, torch.Tensor):
        h.update(f"{obj.device}{obj.dtype}{tuple(obj.shape)}".encode())
        if obj.device.type != "meta" and not obj.is_sparse:
            h.update(obj.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy())
    elif type(obj).__name__ == "Tokenizer":  # tokenizers.Tokenizer: its settings and model
        h.update(obj.to_str().encode())
        h.update(repr((obj.truncation, obj.padding)).encode())
    elif isinstance(obj, bertlib.WordPieceTokenizer):
        h.update(digest(obj.backend).encode())
        h.update(digest(obj.vocab).encode())
    elif isinstance(obj, dict):
        for k, v in obj.items():
            h.update(f"{k!r}={digest(v)}".encode())
    elif isinstance(obj, (list, tuple)) and len(obj) < 10_000:
        h.update(type(obj).__name__.encode())
        for v in obj:
            h.update(digest(v).encode())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        h.update(type(obj).__name__.encode())
        for f in dataclasses.fields(obj):
            h.update(f"{f.name}={digest(getattr(obj, f.name))}".encode())
    elif isinstance(obj, np.ndarray):
        h.update(repr((obj.dtype, obj.shape)).encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    else:
        try:
            h.update(pickle.dumps(obj))
        except Exception:
            h.update(repr(obj).encode())
    return h.hexdigest()


class Fixtures:
    """The shared objects, built once in the fork server; every case sees a copy-on-write copy.
    Their digests are part of the process state a case must leave alone."""

    SHARED = ("model", "tok", "vocab", "tiny", "clf", "tagger", "qa", "paragraphs", "data",
              "sentences", "topic", "tags", "spans", "enc", "masked", "snapshots")

    def __init__(self):
        self._watched: list[tuple[str, object, str]] = []

    def build(self) -> None:
        torch.set_num_threads(1)  # the children fork from here: no thread pool to inherit
        self.model, self.tok = load_small_bert()
        self.vocab = self.tok.vocab
        config = BERTConfig(len(self.vocab), 16, 32, 2, 1, 0.0, max_len=32)
        self.tiny = init_model(config, seed=0).eval()
        self.clf = BERTClassifier(copy.deepcopy(self.tiny), tasks.NUM_TOPICS)
        self.tagger = BERTTagger(copy.deepcopy(self.tiny), len(tasks.TAGS))
        self.qa = bertlib.BERTQuestionAnswerer(copy.deepcopy(self.tiny))
        split = corpus.load_small_corpus()
        self.paragraphs = corpus.tokenize_paragraphs(split.train[:30], self.tok.tokenize)
        self.data = data.make_pretrain_data(self.paragraphs, self.vocab, 32, seed=0)
        sentences = tasks.load_task_sentences()
        self.sentences = sentences[:40] + sentences[-40:]  # both languages
        self.topic = tasks.topic_data(self.sentences, self.tok, 32)
        self.tags = tasks.tagging_data(self.sentences, self.tok, 32)
        self.spans = tasks.span_data(self.sentences, self.tok, 32)
        self.enc = inputs.encode_pair(self.tok, "the cat sat on the mat.", "then it slept.")
        self.masked = bertlib.mask_tokens(self.enc.ids, self.vocab, seed=0)
        self.snapshots = load_snapshots()
        # The first fused Adam of a process imports torch._inductor (half a minute on a busy
        # machine), which sets an environment variable and adds warning filters: done once
        # here, so that no training case pays it; the case "make_optimizer, the first of a
        # fresh process" checks that import's effects in an interpreter of its own.
        bertlib.train.make_optimizer(torch.nn.Linear(2, 2), 1e-3)

    def build_widgets(self) -> None:
        """One widget of each kind (their first drawing warms matplotlib's caches too): a case
        types into its own copy-on-write copy instead of building one, ten times slower."""
        self.widgets = {}
        for name, make in WIDGETS.items():
            try:
                self.widgets[name] = make(self)
            except Exception as err:  # its cases report it (raw), the others still run
                self.widgets[name] = err

    def build_cli(self, folder: Path) -> None:
        """A tiny corpus folder for the CLI cases, and a finished tiny run to resume."""
        global CLI_CORPUS, CLI_RUN
        CLI_CORPUS = folder / "corpus"
        CLI_CORPUS.mkdir()
        paragraphs = corpus.load_small_corpus().train[:80]
        (CLI_CORPUS / "a.txt").write_text("\n\n".join("\n".join(p) for p in paragraphs),
                                          encoding="utf-8")
        CLI_RUN = folder / "out"  # run from its folder: resumed, "--out out" is the same
        here_before = os.getcwd()
        os.chdir(folder)
        try:
            run = cli()
        finally:
            os.chdir(here_before)
        if run.returncode != 0 or not (CLI_RUN / "checkpoint").is_dir():
            raise RuntimeError(f"the tiny CLI run failed: {run.stderr[-2000:]}")

    def watch(self, obj, name: str | None = None):
        """Note ``obj`` (handed to bertlib by a case) as the caller's: it must not change."""
        self._watched.append((name or type(obj).__name__, obj, digest(obj)))
        return obj

    def digests(self) -> dict:
        found = {f"the caller's {name}": digest(getattr(self, name)) for name in self.SHARED}
        # A watched object is noted during the call, after the state before it: only one that
        # changed appears, so that it differs from the state before.
        found.update({f"the caller's {name} (watched)": "changed"
                      for name, obj, d in self._watched if digest(obj) != d})
        return found

    # small helpers shared by the cases
    def batch(self, n: int = 8) -> list[torch.Tensor]:
        """The first ``n`` rows of the pretraining data, as the 7 tensors the losses take."""
        return [t[:n].clone() for t in self.data.tensors()]

    def fresh_tiny(self, training: bool = False) -> BERTModel:
        """A copy of the tiny model (in training mode if asked), watched as the caller's."""
        return self.watch(copy.deepcopy(self.tiny).train(training), "tiny model copy")


def here(name: str) -> Path:
    """A path in the case's own empty working folder."""
    return Path.cwd() / name


def fifo(name: str = "pipe") -> Path:
    path = here(name)
    os.mkfifo(path)
    return path


def zero_link(name: str) -> Path:
    path = here(name)
    path.symlink_to("/dev/zero")
    return path


def copy_dir(src: Path, name: str) -> Path:
    dst = here(name)
    shutil.copytree(src, dst)
    return dst


def printed(fn: Callable) -> str:
    """What ``fn()`` printed (an exercise checker's verdict)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        fn()
    return out.getvalue()


def killed_while(fn: Callable, limit: int) -> None:
    """Run ``fn`` in a process of its own that is killed (SIGXFSZ) when it writes a file past
    ``limit`` bytes: a save interrupted part-way, at a point that depends on ``limit``."""
    pid = os.fork()
    if pid == 0:
        try:
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            with contextlib.redirect_stderr(io.StringIO()):
                fn()
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def built(make: Callable, *args, **kwargs):
    """``make(*args, **kwargs)``, a case's own setup (a model to hand over), drawn on a forked
    global RNG: the draw is the case's, not the call's under test."""
    with torch.random.fork_rng(devices=[]):
        return make(*args, **kwargs)


def endless():
    return itertools.count()


NAN, INF = float("nan"), float("inf")
DROP = object()  # a key to remove from a config


# ================================================================ bertlib.vocab
V = "bertlib.vocab"
refuse(V, "Vocab(min_freq=0)", "min_freq", lambda F: bertlib.Vocab(["a"], min_freq=0))
refuse(V, "Vocab(min_freq=True)", "min_freq", lambda F: bertlib.Vocab(["a"], min_freq=True))
refuse(V, "Vocab(min_freq=1.5)", "min_freq", lambda F: bertlib.Vocab(["a"], min_freq=1.5))
refuse(V, "Vocab(tokens=a str)", "tokens", lambda F: bertlib.Vocab("hello world"))
refuse(V, "Vocab(tokens=[1, 2])", "tokens", lambda F: bertlib.Vocab([1, 2]))
refuse(V, "Vocab(tokens=[None])", "tokens", lambda F: bertlib.Vocab([None]))
refuse(V, "Vocab(tokens=endless iterator)", "tokens",
       lambda F: bertlib.Vocab(map(str, itertools.count())))
refuse(V, "Vocab(specials=a str)", "specials", lambda F: bertlib.Vocab(["a"], specials="<pad>"))
refuse(V, "Vocab.from_list with a duplicate", ("idx_to_token", "'a'"),
       lambda F: bertlib.Vocab.from_list(["<pad>", "<unk>", "<cls>", "<sep>", "<mask>", "a", "a"]))
refuse(V, "Vocab.from_list with a token holding a space", ("idx_to_token", "a b"),
       lambda F: bertlib.Vocab.from_list(["<pad>", "<unk>", "<cls>", "<sep>", "<mask>", "a b"]))
refuse(V, "Vocab.from_list without the specials", ("<pad>", "special"),
       lambda F: bertlib.Vocab.from_list(["a", "b"]))
refuse(V, "SpecialTokens(pad='')", "pad", lambda F: bertlib.SpecialTokens(pad=""))
refuse(V, "SpecialTokens(pad=5)", "pad", lambda F: bertlib.SpecialTokens(pad=5))
refuse(V, "SpecialTokens with pad == unk", ("<x>", "pad", "unk"),
       lambda F: bertlib.SpecialTokens(pad="<x>", unk="<x>"))
refuse(V, "to_tokens(endless iterator)", "indices", lambda F: F.vocab.to_tokens(endless()))
refuse(V, "to_tokens(10**9)", ("indices", "1000000000"), lambda F: F.vocab.to_tokens(10**9))
refuse(V, "to_tokens(-1)", ("indices", "-1"), lambda F: F.vocab.to_tokens(-1))
refuse(V, "to_tokens(True)", ("indices", "True"), lambda F: F.vocab.to_tokens(True))
refuse(V, "to_tokens(1.5)", ("indices", "1.5"), lambda F: F.vocab.to_tokens(1.5))
refuse(V, "to_tokens(float tensor)", ("indices", "float"),
       lambda F: F.vocab.to_tokens(torch.tensor([1.5, 2.0])))
refuse(V, "to_tokens('abc')", ("indices", "abc"), lambda F: F.vocab.to_tokens("abc"))
refuse(V, "vocab[None]", ("tokens", "None"), lambda F: F.vocab[None])
refuse(V, "vocab[['a', 3]]", ("tokens", "3"), lambda F: F.vocab[["a", 3]])


# ================================================================ bertlib.tokenizer
T = "bertlib.tokenizer"
W = bertlib.WordPieceTokenizer


@case(T, "WordPieceTokenizer(caller's Tokenizer) leaves its settings", expect="accept")
def _wrap_backend(F):
    from tokenizers import Tokenizer
    backend = Tokenizer.from_str(F.tok.backend.to_str())
    backend.no_truncation()
    backend.no_padding()
    W(F.watch(backend, "tokenizers.Tokenizer"))


@case(T, "WordPieceTokenizer(caller's Tokenizer with truncation) leaves it", expect="accept")
def _wrap_backend_trunc(F):
    from tokenizers import Tokenizer
    backend = Tokenizer.from_str(F.tok.backend.to_str())
    backend.enable_truncation(7)
    W(F.watch(backend, "tokenizers.Tokenizer"))


refuse(T, "WordPieceTokenizer('not a backend')", "backend", lambda F: W("not a backend"))
refuse(T, "WordPieceTokenizer(backend, specials='x')", "specials",
       lambda F: W(F.tok.backend, specials="x"))


@case(T, "train(vocab_size=10) gives at most 10 tokens", "vocab_size")
def _train_small(F):
    tok = W.train(["the cat sat on the mat", "a dog ran in the park"] * 5, 10)
    if len(tok.vocab) > 10:
        raise Silent(f"asked for at most 10 tokens, got {len(tok.vocab)}")
    return OK(f"{len(tok.vocab)} tokens")


refuse(T, "train('one text', 100)", "texts", lambda F: W.train("one text", 100))
refuse(T, "train([], 100)", "texts", lambda F: W.train([], 100))
refuse(T, "train(texts, 0)", "vocab_size", lambda F: W.train(["a b"], 0))
refuse(T, "train(texts, True)", "vocab_size", lambda F: W.train(["a b"], True))
refuse(T, "train(texts, 100.0)", "vocab_size", lambda F: W.train(["a b"], 100.0))
refuse(T, "train(texts, 100, min_frequency=0)", "min_frequency",
       lambda F: W.train(["a b"], 100, min_frequency=0))
refuse(T, "train(endless iterator, 100)", "texts",
       lambda F: W.train(("the cat" for _ in itertools.count()), 100))
refuse(T, "train([lone surrogate text], 100)", ("texts", "surrogate", "\\ud800"),
       lambda F: W.train(["hello \ud800 world"], 100))
refuse(T, "train([None], 100)", "texts", lambda F: W.train([None], 100))
refuse(T, "tokenize(lone surrogate)", ("text", "surrogate", "\\ud800"),
       lambda F: F.tok.tokenize("a \ud800 b"))
refuse(T, "tokenize(None)", "text", lambda F: F.tok.tokenize(None))
refuse(T, "tokenize(b'bytes')", "text", lambda F: F.tok.tokenize(b"bytes"))
refuse(T, "tokenize(['a', 'list'])", "text", lambda F: F.tok.tokenize(["a", "list"]))


@case(T, "tokenize(control characters and NUL) works", expect="accept")
def _tokenize_controls(F):
    got = F.tok.tokenize("a\x00b\x07c\x1b[31m d\u200b e\ufeff")
    if not all(isinstance(t, str) for t in got):
        raise Silent(f"not a list of str: {got!r}")


refuse(T, "from_file(missing)", ("path", "nope.json"), lambda F: W.from_file(here("nope.json")))
refuse(T, "from_file(named pipe)", ("path", "pipe"), lambda F: W.from_file(fifo()))
refuse(T, "from_file(link to /dev/zero)", ("path", "zero"),
       lambda F: W.from_file(zero_link("zero.json")))
refuse(T, "from_file(a folder)", ("path", "folder"),
       lambda F: W.from_file(here("folder").mkdir() or here("folder")))


@case(T, "from_file(broken JSON)", "path", "tokenizer.json", "json")
def _tok_broken(F):
    here("tokenizer.json").write_text('{"version": "1.0", "model": {', encoding="utf-8")
    return W.from_file(here("tokenizer.json"))


@case(T, "from_file(truncated tokenizer.json)", "path", "tokenizer.json", "json")
def _tok_truncated(F):
    src = (assets.SMALL_BERT_DIR / "tokenizer.json").read_bytes()
    here("tokenizer.json").write_bytes(src[:1000])
    return W.from_file(here("tokenizer.json"))


@case(T, "from_file(JSON that is not a tokenizer)", "path", "tokenizer.json", "model")
def _tok_not(F):
    here("tokenizer.json").write_text('{"hello": [1, 2, 3]}', encoding="utf-8")
    return W.from_file(here("tokenizer.json"))


@case(T, "from_file(invalid UTF-8)", "path", "tokenizer.json", "utf")
def _tok_binary(F):
    here("tokenizer.json").write_bytes(b"\xff\xfe\x00garbage\x80")
    return W.from_file(here("tokenizer.json"))


@case(T, "from_vocab_txt(empty file)", "path", "vocab.txt")
def _vocab_empty(F):
    here("vocab.txt").write_text("", encoding="utf-8")
    return W.from_vocab_txt(here("vocab.txt"))


@case(T, "from_vocab_txt(duplicate lines)", "vocab.txt", "duplicate", "[PAD]", "word")
def _vocab_dup(F):
    here("vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nword\nword\n",
                                 encoding="utf-8")
    return W.from_vocab_txt(here("vocab.txt"))


refuse(T, "from_vocab_txt(named pipe)", ("path", "pipe"), lambda F: W.from_vocab_txt(fifo()))
refuse(T, "from_tokens([])", "tokens", lambda F: W.from_tokens([]))
refuse(T, "from_tokens('abc')", "tokens", lambda F: W.from_tokens("abc"))
refuse(T, "from_tokens(['a', 'a'])", ("tokens", "'a'"), lambda F: W.from_tokens(["a", "a"]))
refuse(T, "from_tokens(lowercase='yes')", "lowercase",
       lambda F: W.from_tokens(["a", "b"], lowercase="yes"))
refuse(T, "from_directory(missing)", ("directory", "nowhere"),
       lambda F: W.from_directory(here("nowhere")))
refuse(T, "save(None)", "path", lambda F: F.tok.save(None))
refuse(T, "save(into a missing folder)", ("path", "missing"),
       lambda F: F.tok.save(here("missing") / "tokenizer.json"))


@case(T, "save killed half-way keeps the old tokenizer.json", "tokenizer.json")
def _tok_save_killed(F):
    path = here("tokenizer.json")
    W.train(["hello world"] * 3, 40).save(path)
    killed_while(lambda: F.tok.save(path), limit=4096)
    got = W.from_file(path)  # old (2 words) or new (the shipped one), never neither
    return OK(f"reads back {len(got.vocab)} tokens")


# ================================================================ bertlib.inputs
INP = "bertlib.inputs"
G = bertlib.get_tokens_and_segments
refuse(INP, "get_tokens_and_segments('a text')", "tokens_a", lambda F: G("a text"))
refuse(INP, "get_tokens_and_segments([token with a space])", ("tokens_a", "a b"),
       lambda F: G(["a b", "c"]))
refuse(INP, "get_tokens_and_segments(['', 'x'])", ("tokens_a", "''", "empty"),
       lambda F: G(["", "x"]))
refuse(INP, "get_tokens_and_segments(tokens_b with a tab)", ("tokens_b", "\\t"),
       lambda F: G(["a"], ["b\tc"]))
refuse(INP, "get_tokens_and_segments([1, 2])", "tokens_a", lambda F: G([1, 2]))
refuse(INP, "get_tokens_and_segments(['a'], 'b')", "tokens_b", lambda F: G(["a"], "b"))
refuse(INP, "get_tokens_and_segments(cls_token=None)", "cls_token",
       lambda F: G(["a"], cls_token=None))
refuse(INP, "get_tokens_and_segments(sep_token='')", "sep_token", lambda F: G(["a"], sep_token=""))
refuse(INP, "get_bert_encoding(lone surrogate)", ("text_a", "surrogate", "\\ud800"),
       lambda F: bertlib.get_bert_encoding(F.model, F.tok, "a \ud800 b"))
refuse(INP, "get_bert_encoding(text_b lone surrogate)", ("text_b", "surrogate", "\\udfff"),
       lambda F: bertlib.get_bert_encoding(F.model, F.tok, "a", "\udfff"))
refuse(INP, "get_bert_encoding(None)", "text_a",
       lambda F: bertlib.get_bert_encoding(F.model, F.tok, None))
refuse(INP, "get_bert_encoding('')", ("text_a", "empty"),
       lambda F: bertlib.get_bert_encoding(F.model, F.tok, ""))
refuse(INP, "get_bert_encoding('   ')", ("text_a", "empty"),
       lambda F: bertlib.get_bert_encoding(F.model, F.tok, "   \n\t"))
refuse(INP, "get_bert_encoding(text_b=5)", "text_b",
       lambda F: bertlib.get_bert_encoding(F.model, F.tok, "a", 5))
refuse(INP, "get_bert_encoding(model='x')", "model",
       lambda F: bertlib.get_bert_encoding("x", F.tok, "a"))
refuse(INP, "get_bert_encoding(tokenizer='x')", "tokenizer",
       lambda F: bertlib.get_bert_encoding(F.model, "x", "a"))
refuse(INP, "get_bert_encoding(model of another vocabulary)", ("vocab", "tokenizer"),
       lambda F: bertlib.get_bert_encoding(built(BERTModel, 50, 16, 32, 2, 1, 0.0), F.tok,
                                                 "hello"))


def _eval_mode_str(F):
    with bertlib.eval_mode("not a module"):
        return None


refuse(INP, "eval_mode('not a module')", "model", _eval_mode_str)
refuse(INP, "encode_pair(max_len=0)", "max_len", lambda F: inputs.encode_pair(F.tok, "a", None, 0))
refuse(INP, "encode_pair(max_len=True)", "max_len",
       lambda F: inputs.encode_pair(F.tok, "a", None, True))
refuse(INP, "encode_pair(max_len=2) (no room for a token)", "max_len",
       lambda F: inputs.encode_pair(F.tok, "hello there", "and you", 2))
refuse(INP, "encode_pair(require_b='yes')", "require_b",
       lambda F: inputs.encode_pair(F.tok, "a", "b", require_b="yes"))
refuse(INP, "EncodedInput.tensors(device='banana')", ("device", "banana"),
       lambda F: F.enc.tensors(device="banana"))
refuse(INP, "EncodedInput.tensors(device='cuda') without CUDA", ("device", "cuda"),
       lambda F: F.enc.tensors(device="cuda"))
refuse(INP, "EncodedInput.tensors(device='mps')", ("device", "mps"),
       lambda F: F.enc.tensors(device="mps"))
refuse(INP, "stack_inputs([])", "inputs", lambda F: inputs.stack_inputs([], 0))
refuse(INP, "stack_inputs(pad_id=-1)", "pad_id", lambda F: inputs.stack_inputs([F.enc], -1))


# ================================================================ bertlib.model
MO = "bertlib.model"
GOOD = {"vocab_size": 100, "num_hiddens": 16, "ffn_num_hiddens": 32, "num_heads": 2,
        "num_blks": 1, "dropout": 0.1}


def config_with(**changes):
    return lambda F: BERTConfig(**(GOOD | changes))


for arg, bad in [("vocab_size", 0), ("vocab_size", True), ("vocab_size", 3.0),
                 ("num_hiddens", -16), ("num_heads", 3), ("num_heads", 0), ("num_blks", None),
                 ("ffn_num_hiddens", 2.5), ("dropout", 1.0), ("dropout", NAN), ("dropout", "0.1"),
                 ("max_len", 0), ("hidden_act", "banana"), ("embedding_norm", "yes"),
                 ("tie_mlm_decoder", 1), ("layer_norm_eps", 0.0), ("layer_norm_eps", INF)]:
    refuse(MO, f"BERTConfig({arg}={bad!r})", arg, config_with(**{arg: bad}))
for arg, bad in [("max_len", 10**12), ("vocab_size", 10**11), ("num_hiddens", 2**20),
                 ("ffn_num_hiddens", 10**11), ("num_blks", 10**6)]:
    refuse(MO, f"BERTModel({arg}={bad}) (cannot fit)", (arg, "GB", "bytes", "memory"),
           lambda F, arg=arg, bad=bad: BERTModel(**(GOOD | {arg: bad})), timeout=60)
refuse(MO, "MultiHeadAttention(16, 3, 0.1)", "num_heads",
       lambda F: bertlib.MultiHeadAttention(16, 3, 0.1))
refuse(MO, "MultiHeadAttention(16, 2, -0.5)", "dropout",
       lambda F: bertlib.MultiHeadAttention(16, 2, -0.5))
refuse(MO, "NextSentencePred(0)", "num_inputs", lambda F: bertlib.NextSentencePred(0))
refuse(MO, "MaskLM(vocab_size=0)", "vocab_size", lambda F: bertlib.MaskLM(0, 16))


def tiny_call(**changes):
    """Call the tiny model on 2 sequences of 6 tokens, with some inputs replaced."""
    def run(F):
        args = {"tokens": torch.tensor([[2, 10, 11, 12, 3, 0], [2, 20, 21, 3, 30, 3]]),
                "segments": torch.tensor([[0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 1]]),
                "valid_lens": torch.tensor([5, 6]),
                "pred_positions": torch.tensor([[1, 2], [1, 4]])}
        args |= {k: v() if callable(v) else v for k, v in changes.items()}
        return F.tiny(**args)
    return run


for arg, value, why in [
        ("tokens", lambda: torch.tensor([[2.0, 10, 11, 12, 3, 0]] * 2), "float tokens"),
        ("tokens", lambda: torch.tensor([[2, 10, 11, 10**6, 3, 0]] * 2), "id past the vocab"),
        ("tokens", lambda: torch.tensor([[2, -10, 11, 12, 3, 0]] * 2), "negative id"),
        ("tokens", lambda: torch.zeros(2, 6, 1, dtype=torch.long), "3-D tokens"),
        ("tokens", lambda: torch.full((2, 40), 5), "longer than max_len"),
        ("tokens", lambda: torch.zeros(2, 6, dtype=torch.long, device="meta"), "on meta"),
        ("segments", lambda: torch.full((2, 6), 2), "segment id 2"),
        ("segments", lambda: torch.zeros(2, 5, dtype=torch.long), "shape differs"),
        ("valid_lens", lambda: torch.tensor([7, 6]), "longer than T"),
        ("valid_lens", lambda: torch.tensor([-1, 6]), "negative"),
        ("valid_lens", lambda: torch.tensor([NAN, 6.0]), "NaN"),
        ("valid_lens", lambda: torch.tensor([5, 6, 6]), "3 for 2 sequences"),
        ("pred_positions", lambda: torch.tensor([[1, 9], [1, 4]]), "past T"),
        ("pred_positions", lambda: torch.tensor([[1.0, 2.0], [1.0, 4.0]]), "float"),
        ("pred_positions", lambda: torch.tensor([[-7, 2], [1, 4]]), "negative")]:
    refuse(MO, f"BERTModel({arg}: {why})", arg, tiny_call(**{arg: value}))


def _head_input(dtype):
    def run(F):
        mha = built(bertlib.MultiHeadAttention, 16, 2, 0.0)
        return mha(torch.randn(2, 5, 16, generator=torch.Generator().manual_seed(0),
                               dtype=torch.float32).to(dtype), None)
    return run


refuse(MO, "MultiHeadAttention(X float64 into a float32 module)", ("X", "dtype", "float64"),
       _head_input(torch.float64))
refuse(MO, "MultiHeadAttention(X float16 into a float32 module)", ("X", "dtype", "float16"),
       _head_input(torch.float16))
refuse(MO, "MultiHeadAttention(X int64)", ("X", "dtype", "int64"), _head_input(torch.int64))
refuse(MO, "MultiHeadAttention(X of width 8 for 16)", ("X", "16", "8"),
       lambda F: built(bertlib.MultiHeadAttention, 16, 2, 0.0)(torch.zeros(2, 5, 8), None))
refuse(MO, "MaskLM(X float64)", ("X", "dtype", "float64"),
       lambda F: built(bertlib.MaskLM, 100, 16)(torch.zeros(2, 5, 16, dtype=torch.float64),
                                         torch.tensor([[1], [2]])))
refuse(MO, "NextSentencePred(X float16)", ("X", "dtype", "float16"),
       lambda F: built(bertlib.NextSentencePred, 16)(torch.zeros(2, 16, dtype=torch.float16)))


# ================================================================ bertlib.masking
MA = "bertlib.masking"
IDS = [2, 10, 11, 12, 13, 14, 15, 3]


def mask(**kw):
    ids = kw.pop("ids", IDS)
    return lambda F: bertlib.mask_tokens(ids, F.vocab, **({"seed": 0} | kw))


for arg, bad in [("mask_ratio", 0.0), ("mask_ratio", 1.5), ("mask_ratio", NAN),
                 ("mask_ratio", -0.1), ("mask_ratio", True), ("mask_ratio", "0.15"),
                 ("seed", -1), ("seed", "x"), ("seed", 1.5), ("generator", "g")]:
    refuse(MA, f"mask_tokens({arg}={bad!r})", arg, mask(**{arg: bad}))
refuse(MA, "mask_tokens(generator and seed)", ("generator", "seed"),
       mask(generator=torch.Generator(), seed=1))
refuse(MA, "mask_tokens('a text')", "token_ids", mask(ids="hello"))
refuse(MA, "mask_tokens([]) ", ("token_ids", "empty"), mask(ids=[]))
refuse(MA, "mask_tokens(id past the vocab)", ("token_ids", "1000000"), mask(ids=[2, 10**6, 3]))
refuse(MA, "mask_tokens(negative id)", ("token_ids", "-5"), mask(ids=[2, -5, 3]))
refuse(MA, "mask_tokens(float ids)", "token_ids", mask(ids=[2.0, 10.5, 3.0]))
refuse(MA, "mask_tokens(True as an id)", ("token_ids", "True"), mask(ids=[2, True, 3]))
refuse(MA, "mask_tokens(words of another length)", "words", mask(words=[None, 0, 1]))
refuse(MA, "mask_tokens(words=['a'...])", "words", mask(words=["a"] * len(IDS)))
refuse(MA, "mask_tokens(vocab of specials only)", ("vocab", "word", "replacement"),
       lambda F: bertlib.mask_tokens([2, 1, 3], bertlib.Vocab([]), seed=0))
refuse(MA, "mask_tokens(vocab='x')", "vocab", lambda F: bertlib.mask_tokens(IDS, "x", seed=0))


# ================================================================ bertlib.data
D = "bertlib.data"
PARAS = [[["the", "cat", "sat"], ["it", "slept"], ["then", "woke"]],
         [["a", "dog", "ran"], ["it", "barked"]], [["birds", "sing"], ["they", "fly"]]]


@case(D, "make_nsp_pairs([]) (no pair possible)", "paragraphs", "pair")
def _nsp_empty(F):
    pairs = bertlib.make_nsp_pairs([], 32, seed=0)
    raise Silent(f"{len(pairs.pairs)} pairs, no error")


@case(D, "make_nsp_pairs(one-sentence paragraphs) (no pair possible)", "paragraphs", "pair",
      "sentence")
def _nsp_single(F):
    pairs = bertlib.make_nsp_pairs([[["a", "b"]], [["c", "d"]]], 32, seed=0)
    raise Silent(f"{len(pairs.pairs)} pairs, no error")


@case(D, "make_pretrain_data(one-sentence paragraphs) (no pair possible)", "paragraphs", "pair")
def _data_single(F):
    got = bertlib.make_pretrain_data([[["a", "b"]], [["c", "d"]]], F.vocab, 32, seed=0)
    raise Silent(f"a data set of {len(got)} pairs, no error")


for arg, bad in [("max_len", 0), ("max_len", 3), ("max_len", True), ("max_len", 32.0),
                 ("overflow", "banana"), ("specials", "x"), ("seed", -1)]:
    refuse(D, f"make_nsp_pairs({arg}={bad!r})", arg,
           lambda F, arg=arg, bad=bad: bertlib.make_nsp_pairs(
               PARAS, **({"max_len": 32, "seed": 0} | {arg: bad})))
refuse(D, "make_nsp_pairs(generator and seed)", ("generator", "seed"),
       lambda F: bertlib.make_nsp_pairs(PARAS, 32, generator=torch.Generator(), seed=0))
refuse(D, "make_nsp_pairs('a text')", "paragraphs", lambda F: bertlib.make_nsp_pairs("abc", 32))
refuse(D, "make_nsp_pairs(sentences as strings)", "paragraphs",
       lambda F: bertlib.make_nsp_pairs([["the cat sat", "it slept"]] * 2, 32, seed=0))
refuse(D, "make_nsp_pairs(empty sentence)", "paragraphs",
       lambda F: bertlib.make_nsp_pairs([[[], ["a"]], [["b"], ["c"]]], 32, seed=0))
refuse(D, "make_pretrain_examples(mask_ratio=2)", "mask_ratio",
       lambda F: bertlib.make_pretrain_examples(bertlib.make_nsp_pairs(PARAS, 32, seed=0),
                                                F.vocab, mask_ratio=2.0, seed=0))
refuse(D, "make_pretrain_examples('x')", "pairs",
       lambda F: bertlib.make_pretrain_examples("x", F.vocab, seed=0))
refuse(D, "make_pretrain_examples(vocab=None)", "vocab",
       lambda F: bertlib.make_pretrain_examples(bertlib.make_nsp_pairs(PARAS, 32, seed=0), None,
                                                seed=0))
refuse(D, "make_pretrain_examples(pair with segments 7)", ("segments", "7"),
       lambda F: bertlib.make_pretrain_examples(
           [bertlib.NSPPair(["<cls>", "a", "<sep>"], [0, 7, 0], 1)], F.vocab, seed=0))


def example(**changes):
    base = {"token_ids": [2, 10, 11, 3], "segments": [0, 0, 0, 0], "pred_positions": [1],
            "mlm_labels": [10], "is_next": 1}
    return bertlib.PretrainExample(**(base | changes))


def pad(*changes, max_len=8, max_preds=None):
    """A case padding examples built inside it (PretrainExample checks some fields itself)."""
    return lambda F: bertlib.pad_bert_inputs([example(**c) for c in changes], max_len, F.vocab,
                                             max_preds)


refuse(D, "pad_bert_inputs(True as a token id)", ("token_ids", "True"),
       pad(dict(token_ids=[2, True, 11, 3])))
refuse(D, "pad_bert_inputs(is_next=2)", ("is_next", "2"), pad(dict(is_next=2)))
refuse(D, "pad_bert_inputs(is_next=None)", ("is_next", "None"), pad(dict(is_next=None)))
refuse(D, "pad_bert_inputs(token id None)", ("token_ids", "None"),
       pad(dict(token_ids=[2, None, 11, 3])))
refuse(D, "pad_bert_inputs(segments shorter than tokens)", "segments",
       pad(dict(segments=[0, 0])))
refuse(D, "pad_bert_inputs(position past the tokens)", "pred_positions",
       pad(dict(pred_positions=[6])))
refuse(D, "pad_bert_inputs(labels and positions differ)", ("mlm_labels", "pred_positions"),
       pad(dict(mlm_labels=[10, 11])))
refuse(D, "pad_bert_inputs([])", "examples", pad())
refuse(D, "pad_bert_inputs(max_len shorter than an example)", ("max_len", "4"),
       pad({}, max_len=3))
refuse(D, "pad_bert_inputs(max_len=10**12)", ("max_len", "GB", "bytes", "memory"),
       pad({}, max_len=10**12))
refuse(D, "pad_bert_inputs(max_preds=0)", "max_preds", pad({}, max_preds=0))
refuse(D, "pad_bert_inputs(max_preds=10**12)", ("max_preds", "GB", "bytes", "memory"),
       pad({}, max_preds=10**12))
refuse(D, "make_pretrain_data(max_len=10**12)", ("max_len", "GB", "bytes", "memory"),
       lambda F: bertlib.make_pretrain_data(F.paragraphs, F.vocab, 10**12, seed=0), timeout=60)
refuse(D, "make_pretrain_data(rounds=10**9)", ("rounds", "GB", "bytes", "memory"),
       lambda F: bertlib.make_pretrain_data(F.paragraphs, F.vocab, 32, seed=0, rounds=10**9),
       timeout=60)
refuse(D, "make_pretrain_data(rounds=0)", "rounds",
       lambda F: bertlib.make_pretrain_data(PARAS, F.vocab, 32, seed=0, rounds=0))
refuse(D, "make_pretrain_data(seed=None)", "seed",
       lambda F: bertlib.make_pretrain_data(PARAS, F.vocab, 32, seed=None))
refuse(D, "make_pretrain_data(groups of another length)", "groups",
       lambda F: bertlib.make_pretrain_data(PARAS, F.vocab, 32, seed=0, groups=["en"]))
refuse(D, "make_pretrain_data(max_preds=0)", "max_preds",
       lambda F: bertlib.make_pretrain_data(PARAS, F.vocab, 32, seed=0, max_preds=0))


# ================================================================ bertlib.batches
B = "bertlib.batches"


@case(B, "iterating a loader leaves torch's global RNG", expect="accept")
def _loader_rng(F):
    loader = bertlib.make_loader(F.data, 4, seed=0)
    for _ in zip(range(3), loader, strict=False):
        pass


@case(B, "iterating a length-grouped loader leaves torch's global RNG", expect="accept")
def _loader_rng_grouped(F):
    loader = bertlib.make_loader(F.data, 4, seed=0, lengths=F.data.valid_lens)
    for _ in zip(range(3), loader, strict=False):
        pass


for arg, bad in [("batch_size", 0), ("batch_size", True), ("batch_size", 4.0), ("seed", None),
                 ("seed", -3), ("shuffle", "yes"), ("lengths", torch.ones(3)),
                 ("lengths", "abc")]:
    refuse(B, f"make_loader({arg}={short(bad)})", arg,
           lambda F, arg=arg, bad=bad: bertlib.make_loader(
               F.data, **({"batch_size": 4, "seed": 0} | {arg: bad})))
refuse(B, "make_loader(data='x')", "data", lambda F: bertlib.make_loader("x", 4, seed=0))
refuse(B, "make_loader(empty data set)", ("data", "empty"),
       lambda F: bertlib.make_loader(bertlib.PretrainBatch(*(t[:0] for t in F.data.tensors())),
                                     4, seed=0))
for arg, bad in [("lengths", torch.ones(4, 2)), ("lengths", torch.tensor([1.5, 2.0])),
                 ("lengths", torch.tensor([-1, 3])), ("batch_size", 0), ("chunk_batches", 0),
                 ("seed", "x")]:
    refuse(B, f"LengthGroupedSampler({arg}={short(bad)})", arg,
           lambda F, arg=arg, bad=bad: bertlib.LengthGroupedSampler(
               **({"lengths": torch.tensor([3, 4, 5, 6]), "batch_size": 2, "seed": 0}
                  | {arg: bad})))
refuse(B, "trim_padding([])", "batch", lambda F: bertlib.trim_padding([]))
refuse(B, "trim_padding(3 tensors)", "batch", lambda F: bertlib.trim_padding(F.batch()[:3]))
refuse(B, "trim_padding(valid_lens past T)", "valid_lens",
       lambda F: bertlib.trim_padding([*F.batch()[:2], torch.full((8,), 99), *F.batch()[3:]]))


# ================================================================ bertlib.loss, bertlib.fast
L = "bertlib.loss"
FA = "bertlib.fast"


def heads(F, n: int = 8):
    """The tiny model's outputs on the first ``n`` pairs, and those pairs' targets."""
    tokens, segments, valid_lens, positions, weights, labels, nsp = F.batch(n)
    with torch.no_grad():
        _, mlm_Y_hat, nsp_Y_hat = F.tiny(tokens, segments, valid_lens, positions)
    return {"mlm_Y_hat": mlm_Y_hat, "mlm_labels": labels, "mlm_weights": weights,
            "nsp_Y_hat": nsp_Y_hat, "nsp_labels": nsp}


def fast_args(F, n: int = 8):
    names = ("tokens", "segments", "valid_lens", "pred_positions", "mlm_weights", "mlm_labels",
             "nsp_labels")
    return dict(zip(names, F.batch(n), strict=True))


def scaled_weights(loss_fn: Callable, args: Callable, scale: float):
    """A case: every weight times ``scale`` must give the same loss (a weighted mean), or be
    refused; the weights of the first 8 pairs of the fixture's data."""
    def run(F):
        a = args(F)
        with torch.no_grad():
            want = loss_fn(F, a).mlm.item()
            got = loss_fn(F, a | {"mlm_weights": a["mlm_weights"] * scale}).mlm.item()
        if not math.isclose(got, want, rel_tol=1e-4):
            raise Silent(f"weights x {scale:g}: MLM loss {got:.4g} instead of {want:.4g}")
        return OK(f"MLM loss {got:.4g}, as with the weights unscaled")
    return run


def call_bert_loss(F, a):
    return bertlib.bert_loss(**a)


def call_fast_loss(F, a):
    return bertlib.fast.fast_loss(F.tiny, **a)


def call_chapter_loss(F, a):
    return bertlib.loss.chapter_loss(F.tiny, **a)


for scale in (1e-40, 3e38, 1e-30, 1e30):
    refuse(L, f"bert_loss(weights x {scale:g})", "mlm_weights",
           scaled_weights(call_bert_loss, heads, scale))
    refuse(FA, f"fast_loss(weights x {scale:g})", "mlm_weights",
           scaled_weights(call_fast_loss, fast_args, scale))
refuse(L, "chapter_loss(weights x 1e-40)", "mlm_weights",
       scaled_weights(call_chapter_loss, fast_args, 1e-40))


def changed(args: Callable, loss_fn: Callable, **changes):
    """A case: ``loss_fn`` on ``args`` with some replaced (a function of the original value)."""
    def run(F):
        a = args(F)
        a |= {k: f(a[k]) for k, f in changes.items()}
        got = loss_fn(F, a)
        if not all(torch.isfinite(t).all() for t in (got.mlm, got.nsp)):
            raise Silent(f"non-finite loss: mlm={got.mlm.item()}, nsp={got.nsp.item()}")
        return got
    return run


def nan_at(t, value=NAN):
    t = t.clone()
    t.view(-1)[0] = value
    return t


def label_dtype(dtype, loss_fn=call_bert_loss, args=heads):
    """A case: int32 (or other) labels give the int64 loss, or are refused clearly."""
    def run(F):
        a = args(F)
        with torch.no_grad():
            want = loss_fn(F, a).total.item()
            got = loss_fn(F, a | {"mlm_labels": a["mlm_labels"].to(dtype),
                                  "nsp_labels": a["nsp_labels"].to(dtype)}).total.item()
        if not math.isclose(got, want, rel_tol=1e-5):
            raise Silent(f"{dtype} labels: {got} instead of {want}")
        return OK(f"{dtype} labels accepted, same loss")
    return run


refuse(L, "bert_loss(int32 labels)", ("mlm_labels", "int32", "dtype"), label_dtype(torch.int32))
refuse(L, "bert_loss(uint8 labels)", ("mlm_labels", "uint8", "dtype"), label_dtype(torch.uint8))
refuse(FA, "fast_loss(int32 labels)", ("mlm_labels", "int32", "dtype"),
       label_dtype(torch.int32, call_fast_loss, fast_args))
for arg, why, f in [
        ("mlm_Y_hat", "a NaN", nan_at), ("nsp_Y_hat", "a NaN", nan_at),
        ("mlm_Y_hat", "an inf", lambda t: nan_at(t, INF)), ("mlm_weights", "a NaN", nan_at),
        ("mlm_weights", "a -1", lambda t: nan_at(t, -1.0)),
        ("mlm_weights", "all 0", torch.zeros_like),
        ("mlm_labels", "10**6 past the vocab", lambda t: nan_at(t, 10**6)),
        ("mlm_labels", "a -3", lambda t: nan_at(t, -3)),
        ("mlm_labels", "float", lambda t: t.float()),
        ("nsp_labels", "a 2", lambda t: nan_at(t, 2)),
        ("mlm_weights", "one column short", lambda t: t[:, :-1]),
        ("mlm_weights", "bool", lambda t: t.bool()), ("nsp_labels", "one short", lambda t: t[:-1])]:
    refuse(L, f"bert_loss({arg}: {why})", arg, changed(heads, call_bert_loss, **{arg: f}))
for arg, why, f in [
        ("mlm_weights", "a NaN", nan_at), ("mlm_weights", "an inf", lambda t: nan_at(t, INF)),
        ("mlm_weights", "a -1", lambda t: nan_at(t, -1.0)),
        ("mlm_weights", "all 0", torch.zeros_like),
        ("mlm_labels", "10**6 past the vocab", lambda t: nan_at(t, 10**6)),
        ("nsp_labels", "a 5", lambda t: nan_at(t, 5)), ("tokens", "float", lambda t: t.float()),
        ("tokens", "10**6 past the vocab", lambda t: nan_at(t, 10**6)),
        ("valid_lens", "99 past T", lambda t: nan_at(t, 99)),
        ("valid_lens", "a 0", lambda t: nan_at(t, 0)),
        ("pred_positions", "99 past T", lambda t: nan_at(t, 99))]:
    refuse(FA, f"fast_loss({arg}: {why})", arg, changed(fast_args, call_fast_loss, **{arg: f}))


def lce(**changes):
    def run(F):
        g = torch.Generator().manual_seed(0)
        a = {"X": torch.randn(6, 16, generator=g), "W": torch.randn(50, 16, generator=g),
             "b": torch.zeros(50), "labels": torch.arange(6), "weights": torch.ones(6)}
        a |= {k: f(a[k]) for k, f in changes.items()}
        got = bertlib.fast.linear_cross_entropy(**a)
        if not torch.isfinite(got).all():
            raise Silent(f"non-finite result {got}")
        return got
    return run


for arg, f, why in [("X", nan_at, "NaN"), ("X", lambda t: t.double(), "float64"),
                    ("W", lambda t: t[:, :8], "8 columns for 16"),
                    ("labels", lambda t: nan_at(t, 50), "label 50 of 50"),
                    ("labels", lambda t: t.float(), "float labels"),
                    ("weights", nan_at, "NaN"),
                    ("b", lambda t: t[:3], "3 biases for 50")]:
    refuse(FA, f"linear_cross_entropy({arg}: {why})", arg, lce(**{arg: f}))


@case(FA, "linear_cross_entropy(weights x 1e-40) is the unscaled loss", expect="accept")
def _lce_scaled(F):
    """A weighted mean: weights scaled by 1e-40 (subnormal in float32) change nothing."""
    want, got = lce()(F), lce(weights=lambda t: t * 1e-40)(F)
    if not torch.allclose(got, want, rtol=1e-5):
        raise Silent(f"{got.item():.4f} with weights x 1e-40, {want.item():.4f} unscaled")
    return OK(f"{got.item():.4f} = {want.item():.4f}")


refuse(FA, "dropout(p=1.0)", "p", lambda F: bertlib.fast.dropout(torch.ones(3), 1.0))
refuse(FA, "dropout(p=-0.1)", "p", lambda F: bertlib.fast.dropout(torch.ones(3), -0.1))
refuse(FA, "dropout(p=nan)", "p", lambda F: bertlib.fast.dropout(torch.ones(3), NAN))
refuse(FA, "dropout(training='yes')", "training",
       lambda F: bertlib.fast.dropout(torch.ones(3), 0.1, training="yes"))
refuse(FA, "unpadded_encode(valid_lens past T)", "valid_lens",
       lambda F: bertlib.fast.unpadded_encode(F.tiny.encoder, *F.batch()[:2],
                                              torch.full((8,), 99)))
refuse(FA, "unpadded_encode(encoder='x')", "encoder",
       lambda F: bertlib.fast.unpadded_encode("x", *F.batch()[:3]))


# ================================================================ bertlib.train
TR = "bertlib.train"


def train(**changes):
    def run(F):
        model = changes.pop("model", None)
        model = F.fresh_tiny(training=True) if model is None else model(F)
        data_ = changes.pop("data", F.data)
        return bertlib.train_bert(model, data_, **({"num_steps": 2, "batch_size": 8,
                                                    "progress": False} | changes))
    return run


for arg, bad in [("num_steps", 0), ("num_steps", True), ("num_steps", 2.0), ("batch_size", 0),
                 ("lr", 100.0), ("lr", NAN), ("lr", -1.0), ("lr", INF), ("seed", "x"),
                 ("progress", "no"), ("callback", 5), ("loss_fn", "fast"),
                 ("group_by_length", "yes")]:
    refuse(TR, f"train_bert({arg}={bad!r})", arg, train(**{arg: bad}))
for dev in ("banana", "cuda", "mps", "cuda:7", "meta"):
    refuse(TR, f"train_bert(device={dev!r})", ("device", dev), train(device=dev))


def _poisoned(F):
    """A copy of the tiny model whose first loss is not finite (one embedding row at 1e38)."""
    model = copy.deepcopy(F.tiny).train()
    with torch.no_grad():
        model.encoder.token_embedding.weight[F.data.tokens[0, 1]] = 3e38
    return F.watch(model, "poisoned model")


@case(TR, "train_bert whose loss turns non-finite", "step", "loss", "finite", "nan")
def _train_nan(F):
    model = _poisoned(F)
    history = bertlib.train_bert(model, F.data, num_steps=3, batch_size=8, progress=False)
    bad = [n for n, p in model.named_parameters() if not torch.isfinite(p).all()]
    raise Silent(f"returned (mlm losses {history.mlm}); non-finite weights: {bad[:3]}")


@case(TR, "train_bert(model on the meta device)", "model", "meta", "device")
def _train_meta(F):
    with torch.device("meta"):
        model = built(BERTModel, len(F.vocab), 16, 32, 2, 1, 0.0, max_len=32)
    F.watch(model, "meta model")
    return bertlib.train_bert(model, F.data, num_steps=1, batch_size=8, progress=False)


refuse(TR, "train_bert(model='x')", "model", train(model=lambda F: "x"))
refuse(TR, "train_bert(data='x')", "data", train(data="x"))
refuse(TR, "train_bert(model of a smaller vocabulary)", ("vocab", "token"),
       train(model=lambda F: F.watch(built(BERTModel, 50, 16, 32, 2, 1, 0.0, max_len=32), "model")))
refuse(TR, "train_bert(model with max_len 8 < data's 32)", ("max_len", "32", "8"),
       train(model=lambda F: F.watch(built(BERTModel, len(F.vocab), 16, 32, 2, 1, 0.0, max_len=8),
                                     "model")))


@case(TR, "train_bert stopped by KeyboardInterrupt in its callback leaves the process",
      expect="accept")
def _train_cb(F):
    model = F.fresh_tiny(training=True)

    def callback(history):
        raise KeyboardInterrupt  # a learner's Stop button during training

    with contextlib.suppress(KeyboardInterrupt):
        bertlib.train_bert(model, F.data, num_steps=2, batch_size=8, progress=False,
                           callback=callback)
    F._watched.clear()  # stopping after a step legitimately changed the weights


refuse(TR, "evaluate_pretraining(batch_size=0)", "batch_size",
       lambda F: bertlib.evaluate_pretraining(F.tiny, F.data, batch_size=0))
refuse(TR, "evaluate_pretraining(empty data)", ("data", "empty"),
       lambda F: bertlib.evaluate_pretraining(
           F.tiny, bertlib.PretrainBatch(*(t[:0] for t in F.data.tensors()))))
refuse(TR, "evaluate_pretraining(model='x')", "model",
       lambda F: bertlib.evaluate_pretraining("x", F.data))
refuse(TR, "make_optimizer(lr=-1)", "lr",
       lambda F: bertlib.train.make_optimizer(F.fresh_tiny(), -1.0))
refuse(TR, "make_optimizer(lr=nan)", "lr",
       lambda F: bertlib.train.make_optimizer(F.fresh_tiny(), NAN))
refuse(TR, "make_optimizer(model='x')", "model", lambda F: bertlib.train.make_optimizer("x", 0.1))


FRESH_OPTIMIZER = """
import json, os, warnings
import torch
import bertlib.train
env, filters = dict(os.environ), list(map(repr, warnings.filters))
bertlib.train.make_optimizer(torch.nn.Linear(2, 2), 1e-3)
print(json.dumps({"os.environ": sorted(k for k in env.keys() | os.environ.keys()
                                       if env.get(k) != os.environ.get(k)),
                  "warnings.filters": [f for f in map(repr, warnings.filters)
                                       if f not in filters]}))
"""


@case(TR, "make_optimizer, the first of a fresh process, leaves env and warnings",
      expect="accept", timeout=150)
def _optimizer_fresh(F):
    run = subprocess.run([sys.executable, "-c", FRESH_OPTIMIZER], capture_output=True,
                         text=True, timeout=140, check=True,
                         env=os.environ | {"PYTHONPATH": str(ROOT)})
    changed = {k: v for k, v in json.loads(run.stdout.splitlines()[-1]).items() if v}
    # PyTorch's first optimizer of a process imports torch._inductor, which sets its cache
    # folder and filters SymPy's deprecation warnings; bertlib.train.make_optimizer documents
    # it (issue 30 asks for that where it cannot be avoided). Anything else is a change.
    torchs = {"os.environ": ["TORCHINDUCTOR_CACHE_DIR"]}
    others = {k: [x for x in v if x not in torchs.get(k, []) and "sympy" not in x.lower()]
              for k, v in changed.items()}
    if any(others.values()):
        raise StateChanged(f"changed {others}"[:400])
    if changed and "torch._inductor" not in (bertlib.train.make_optimizer.__doc__ or ""):
        raise StateChanged(f"changed {changed}, and make_optimizer does not say so"[:400])
    return OK(f"only torch's own documented import: {changed}"[:200])


@case(TR, "one train_step leaves the process state", expect="accept", timeout=60)
def _step_state(F):
    model = copy.deepcopy(F.tiny).train()
    optimizer = bertlib.train.make_optimizer(model, 1e-3)
    bertlib.train.train_step(model, optimizer, F.batch())


refuse(TR, "init_model(config='x')", "config", lambda F: init_model("x", 0))
refuse(TR, "init_model(seed=-1)", "seed",
       lambda F: init_model(BERTConfig(**GOOD), -1))


# ================================================================ bertlib.finetune
FT = "bertlib.finetune"


def tune(model=None, data=None, **kw):
    def run(F):
        m = F.watch(copy.deepcopy(F.clf), "classifier") if model is None else model(F)
        return bertlib.fine_tune(m, F.topic if data is None else data(F),
                                 **({"num_steps": 2, "batch_size": 8, "progress": False} | kw))
    return run


refuse(FT, "BERTClassifier('str', 2)", "bert", lambda F: BERTClassifier("str", 2))
refuse(FT, "BERTClassifier(model, 0)", "num_classes", lambda F: BERTClassifier(F.tiny, 0))
refuse(FT, "BERTClassifier(model, True)", "num_classes", lambda F: BERTClassifier(F.tiny, True))
refuse(FT, "BERTClassifier(model, 2, seed='x')", "seed",
       lambda F: BERTClassifier(F.tiny, 2, seed="x"))
refuse(FT, "BERTTagger(model, 0)", "num_tags", lambda F: BERTTagger(F.tiny, 0))
refuse(FT, "BERTTagger(None, 5)", "bert", lambda F: BERTTagger(None, 5))
refuse(FT, "BERTQuestionAnswerer('x')", "bert", lambda F: bertlib.BERTQuestionAnswerer("x"))
refuse(FT, "BagOfWords(0, 2)", "vocab_size", lambda F: bertlib.finetune.BagOfWords(0, 2))
refuse(FT, "fine_tune(12-class labels, num_classes=2)", ("labels", "num_classes", "class"),
       tune(model=lambda F: F.watch(built(BERTClassifier, copy.deepcopy(F.tiny), 2), "classifier")))
for arg, bad in [("num_steps", 0), ("num_steps", True), ("batch_size", 0), ("lr", NAN),
                 ("lr", -1.0), ("lr", 1e6), ("seed", -1), ("progress", "no"), ("lang", "xx"),
                 ("device", "banana"), ("device", "cuda"), ("device", "mps")]:
    refuse(FT, f"fine_tune({arg}={bad!r})", (arg, str(bad)), tune(**{arg: bad}))


@case(FT, "fine_tune whose loss turns non-finite", "step", "loss", "finite", "nan")
def _tune_nan(F):
    model = copy.deepcopy(F.clf).train()
    with torch.no_grad():  # finite weights whose logits overflow: tanh(100) = 1, H x 1e38
        model.hidden[0].bias.fill_(100.0)
        model.output.weight.fill_(1e38)
    F.watch(model, "classifier")
    bertlib.fine_tune(model, F.topic, num_steps=3, batch_size=8, progress=False, lr=1e-3)
    bad = [n for n, p in model.named_parameters() if not torch.isfinite(p).all()]
    raise Silent(f"returned; non-finite weights: {bad[:3]}")


refuse(FT, "fine_tune(model='x')", "model", tune(model=lambda F: "x"))
refuse(FT, "fine_tune(data='x')", "data", tune(data=lambda F: "x"))
refuse(FT, "fine_tune(tagger on topic data)", ("labels", "data", "shape"),
       tune(model=lambda F: F.watch(copy.deepcopy(F.tagger), "tagger")))
refuse(FT, "fine_tune(empty data)", ("data", "empty"),
       tune(data=lambda F: tasks.TaskData(*(t[:0] for t in F.topic.tensors()), [])))


@case(FT, "evaluate_task(12-class data, num_classes=2)", "num_classes", "labels", "class")
def _eval_classes(F):
    clf = built(BERTClassifier, copy.deepcopy(F.tiny), 2)
    score = bertlib.evaluate_task(clf, F.topic, 2)
    raise Silent(f"reported {len(score.per_class)} classes on 12-class data")


refuse(FT, "evaluate_task(num_classes=0)", "num_classes",
       lambda F: bertlib.evaluate_task(F.clf, F.topic, 0))
refuse(FT, "evaluate_task(batch_size=0)", "batch_size",
       lambda F: bertlib.evaluate_task(F.clf, F.topic, 12, batch_size=0))
refuse(FT, "predict(batch_size=-1)", "batch_size",
       lambda F: bertlib.finetune.predict(F.clf, F.topic, batch_size=-1))
refuse(FT, "predict(data='x')", "data", lambda F: bertlib.finetune.predict(F.clf, "x"))
refuse(FT, "best_span(max_answer_len=0)", "max_answer_len",
       lambda F: bertlib.finetune.best_span(torch.zeros(2, 2, 6), torch.ones(2, 6).bool(), 0))
refuse(FT, "best_span(NaN scores)", "scores",
       lambda F: bertlib.finetune.best_span(torch.full((2, 2, 6), NAN),
                                            torch.ones(2, 6).bool(), 3))
refuse(FT, "best_span(allowed of another shape)", "allowed",
       lambda F: bertlib.finetune.best_span(torch.zeros(2, 2, 6), torch.ones(2, 5).bool(), 3))
refuse(FT, "best_span(nothing allowed)", "allowed",
       lambda F: bertlib.finetune.best_span(torch.zeros(2, 2, 6), torch.zeros(2, 6).bool(), 3))
refuse(FT, "predict_spans(max_answer_len=-1)", "max_answer_len",
       lambda F: bertlib.finetune.predict_spans(F.qa, F.spans, max_answer_len=-1))
refuse(FT, "span_accuracy(max_answer_len=True)", "max_answer_len",
       lambda F: bertlib.finetune.span_accuracy(F.qa, F.spans, max_answer_len=True))
refuse(FT, "span_accuracy(topic data)", ("data", "labels", "span"),
       lambda F: bertlib.finetune.span_accuracy(F.qa, F.topic))
refuse(FT, "freeze_layers(trainable_blocks=-1)", "trainable_blocks",
       lambda F: bertlib.finetune.freeze_layers(F.watch(copy.deepcopy(F.clf)), trainable_blocks=-1))
refuse(FT, "freeze_layers(trainable_blocks=99)", ("trainable_blocks", "99"),
       lambda F: bertlib.finetune.freeze_layers(F.watch(copy.deepcopy(F.clf)), trainable_blocks=99))
refuse(FT, "freeze_layers(model='x')", "model",
       lambda F: bertlib.finetune.freeze_layers("x", trainable_blocks=1))
refuse(FT, "task_loss(NaN logits)", "Y_hat",
       lambda F: bertlib.finetune.task_loss(torch.full((4, 3), NAN), torch.tensor([0, 1, 2, 0])))
refuse(FT, "task_loss(label 3 of 3 classes)", "labels",
       lambda F: bertlib.finetune.task_loss(torch.zeros(4, 3), torch.tensor([0, 1, 3, 0])))
refuse(FT, "task_loss(float labels)", "labels",
       lambda F: bertlib.finetune.task_loss(torch.zeros(4, 3), torch.tensor([0.0, 1, 2, 0])))


# ================================================================ bertlib.tasks
TA = "bertlib.tasks"
ROW = {"text": "On Monday, Maria went to the market.", "topic": 0, "story": 0,
       "template": "0.0.0", "spans": [[3, 9, "TIME"], [11, 16, "NAME"]]}


def task_dir(en_lines=None, zh_lines=None, *, en_path: Callable | None = None) -> Path:
    """A tasks folder; its files hold the given JSON lines (the shipped ones by default)."""
    folder = here("tasks")
    folder.mkdir()
    for lang, lines in (("en", en_lines), ("zh", zh_lines)):
        target = folder / f"{lang}.jsonl"
        if lang == "en" and en_path is not None:
            en_path(target)
        elif lines is None:
            shutil.copy(assets.TASKS_DIR / target.name, target)
        else:
            target.write_text("\n".join(lines), encoding="utf-8")
    return folder


def load_tasks(**kw):
    return lambda F: tasks.load_task_sentences(task_dir(**kw))


refuse(TA, "load_task_sentences(missing folder)", ("directory", "nowhere"),
       lambda F: tasks.load_task_sentences(here("nowhere")))
refuse(TA, "load_task_sentences(broken JSON line)", ("en.jsonl", "line", "json"),
       load_tasks(en_lines=[json.dumps(ROW), '{"text": "x", "topic":']))
refuse(TA, "load_task_sentences(row without 'topic')", ("topic", "en.jsonl"),
       load_tasks(en_lines=[json.dumps({k: v for k, v in ROW.items() if k != "topic"})]))
refuse(TA, "load_task_sentences(topic 99)", ("topic", "99"),
       load_tasks(en_lines=[json.dumps(ROW | {"topic": 99})]))
refuse(TA, "load_task_sentences(topic '0')", ("topic", "'0'"),
       load_tasks(en_lines=[json.dumps(ROW | {"topic": "0"})]))
refuse(TA, "load_task_sentences(span past the text)", ("span", "500"),
       load_tasks(en_lines=[json.dumps(ROW | {"spans": [[3, 500, "TIME"]]})]))
refuse(TA, "load_task_sentences(span kind BANANA)", ("span", "BANANA"),
       load_tasks(en_lines=[json.dumps(ROW | {"spans": [[3, 9, "BANANA"]]})]))
refuse(TA, "load_task_sentences(a row that is a list)", ("en.jsonl", "row", "line"),
       load_tasks(en_lines=["[1, 2, 3]"]))
refuse(TA, "load_task_sentences(empty files)", ("sentences", "empty", "en.jsonl"),
       load_tasks(en_lines=[], zh_lines=[]))
refuse(TA, "load_task_sentences(en.jsonl a named pipe)", ("en.jsonl", "pipe", "file"),
       load_tasks(en_path=lambda p: os.mkfifo(p)))
refuse(TA, "load_task_sentences(en.jsonl links to /dev/zero)", ("en.jsonl", "file", "size"),
       load_tasks(en_path=lambda p: p.symlink_to("/dev/zero")))
refuse(TA, "load_task_sentences(en.jsonl a folder)", ("en.jsonl", "file"),
       load_tasks(en_path=lambda p: p.mkdir()))
refuse(TA, "load_task_sentences(invalid UTF-8)", ("en.jsonl", "utf"),
       load_tasks(en_path=lambda p: p.write_bytes(b'{"text": "\xff\xfe"}')))
refuse(TA, "class_names('banana')", "task", lambda F: tasks.class_names("banana"))
refuse(TA, "class_names('topic', lang='xx')", ("lang", "xx"),
       lambda F: tasks.class_names("topic", lang="xx"))
refuse(TA, "split_by_template([])", "sentences", lambda F: tasks.split_by_template([]))
refuse(TA, "split_by_template(held_out_steps=0)", "held_out_steps",
       lambda F: tasks.split_by_template(F.sentences, held_out_steps=0))
refuse(TA, "split_by_template(held_out_steps=10**9)", "held_out_steps",
       lambda F: tasks.split_by_template(F.sentences, held_out_steps=10**9))
refuse(TA, "split_by_template(seed=None)", "seed",
       lambda F: tasks.split_by_template(F.sentences, seed=None))
for fn in ("topic_data", "tagging_data", "span_data"):
    for bad in (1, 0, True):
        refuse(TA, f"{fn}(max_len={bad})", ("max_len", "GB", "bytes"),
               lambda F, fn=fn, bad=bad: getattr(tasks, fn)(F.sentences, F.tok, bad), timeout=60)
refuse(TA, "pair_data(max_len=2)", "max_len",
       lambda F: tasks.pair_data(F.sentences, F.tok, 2, seed=0))
refuse(TA, "pair_data(seed=None)", "seed",
       lambda F: tasks.pair_data(F.sentences, F.tok, 32, seed=None))
refuse(TA, "pair_data(one sentence, no pair)", ("sentences", "pair"),
       lambda F: tasks.pair_data(F.sentences[:1], F.tok, 32, seed=0))
refuse(TA, "topic_data([])", "sentences", lambda F: tasks.topic_data([], F.tok, 32))
refuse(TA, "topic_data('a text')", "sentences", lambda F: tasks.topic_data("text", F.tok, 32))
refuse(TA, "topic_data(tokenizer='x')", "tokenizer",
       lambda F: tasks.topic_data(F.sentences, "x", 32))
refuse(TA, "span_data(kinds=['BANANA'])", ("kinds", "BANANA"),
       lambda F: tasks.span_data(F.sentences, F.tok, 32, kinds=["BANANA"]))
refuse(TA, "span_data(kinds=[])", "kinds",
       lambda F: tasks.span_data(F.sentences, F.tok, 32, kinds=[]))
refuse(TA, "token_tags(span past the text)", ("span", "sentence"),
       lambda F: tasks.token_tags(tasks.TaskSentence("a b", "en", 0, 0, "0.0.0",
                                                     ((0, 99, "NAME"),)), F.tok))
refuse(TA, "TaskData.select('xx')", ("lang", "xx"), lambda F: F.topic.select("xx"))


# ================================================================ bertlib.fill_mask
FM = "bertlib.fill_mask"


def fill(k=5, masked=None, model=None, vocab=None, enc=None):
    from bertlib.fill_mask import fill_mask
    return lambda F: fill_mask(F.model if model is None else model(F),
                               F.vocab if vocab is None else vocab(F),
                               F.enc if enc is None else enc(F),
                               F.masked if masked is None else masked(F), k)


for bad in (0, -1, True, 2.5, 10**9):
    refuse(FM, f"fill_mask(k={bad!r})", ("k", str(bad)), fill(k=bad))
refuse(FM, "fill_mask(model='x')", "model", fill(model=lambda F: "x"))
refuse(FM, "fill_mask(vocab of another size)", ("vocab", "vocab_size"),
       fill(vocab=lambda F: bertlib.Vocab(["a", "b"])))
refuse(FM, "fill_mask(position past the input)", ("position", "99"),
       fill(masked=lambda F: bertlib.MaskedTokens(list(F.enc.ids), [99], [10],
                                                  [bertlib.Fate.MASK], 5)))
refuse(FM, "fill_mask(enc='x')", "enc", fill(enc=lambda F: "x"))
refuse(FM, "fill_mask(masked ids of another length)", ("masked", "length"),
       fill(masked=lambda F: bertlib.MaskedTokens([2, 3], [1], [10], [bertlib.Fate.MASK], 5)))


# ================================================================ bertlib.evidence
EV = "bertlib.evidence"


def ev_inputs(F):
    tokens, segments, valid_lens, positions, weights, labels, _ = F.batch(2)
    return tokens, segments, valid_lens, positions, weights, labels


def _switched(keep):
    def run(F):
        model = F.watch(copy.deepcopy(F.model), "model")
        with bertlib.evidence.heads_switched_off(model, keep(F)):
            pass
    return run


refuse(EV, "heads_switched_off(keep of the wrong shape)", "keep",
       _switched(lambda F: torch.ones(5, 5)))
refuse(EV, "heads_switched_off(keep with NaN)", "keep",
       _switched(lambda F: torch.full((2, 2), NAN)))
refuse(EV, "heads_switched_off(keep 'all')", "keep", _switched(lambda F: "all"))
def effects(positions, targets):
    def run(F):
        tokens, segments = (t[:1] for t in ev_inputs(F)[:2])
        return bertlib.evidence.head_effects(F.model, tokens, segments, torch.tensor(positions),
                                             torch.tensor(targets))
    return run


refuse(EV, "head_effects(position past T)", "pred_positions", effects([99], [10]))
refuse(EV, "head_effects(position -1)", "pred_positions", effects([-1], [10]))
refuse(EV, "head_effects(target past the vocab)", "targets", effects([1], [10**6]))
refuse(EV, "head_effects(targets of another length)", "targets", effects([1, 2], [10]))
refuse(EV, "attention_norms(float tokens)", "tokens",
       lambda F: bertlib.evidence.attention_norms(F.model, ev_inputs(F)[0].float(),
                                                  ev_inputs(F)[1]))
refuse(EV, "attention_norms(model='x')", "model",
       lambda F: bertlib.evidence.attention_norms("x", *ev_inputs(F)[:2]))
refuse(EV, "attention_rollout(3-D weights)", "weights",
       lambda F: bertlib.evidence.attention_rollout(torch.ones(2, 4, 4)))
refuse(EV, "attention_rollout(NaN weights)", "weights",
       lambda F: bertlib.evidence.attention_rollout(torch.full((1, 2, 1, 4, 4), NAN)))
refuse(EV, "attention_rollout(negative weights)", "weights",
       lambda F: bertlib.evidence.attention_rollout(-torch.ones(1, 2, 1, 4, 4)))
refuse(EV, "attention_on_neighbours(position past T)", "pred_positions",
       lambda F: bertlib.evidence.attention_on_neighbours(
           torch.full((2, 1, 2, 4, 4), 0.25), torch.tensor([[9], [1]]), torch.ones(2, 1)))
refuse(EV, "attention_on_neighbours(weights of another shape)", "mlm_weights",
       lambda F: bertlib.evidence.attention_on_neighbours(
           torch.full((2, 1, 2, 4, 4), 0.25), torch.tensor([[1], [1]]), torch.ones(3, 5)))


# ================================================================ bertlib.timelapse, snapshots
TL = "bertlib.timelapse"
SN = "bertlib.snapshots"


def outputs(**kw):
    def run(F):
        a = {"model": F.model, "weights": {s: F.snapshots.weights[s]
                                           for s in list(F.snapshots.weights)[:2]},
             "enc": F.enc, "positions": [2], "vocab": F.vocab, "k": 3}
        a |= {k: v(F) if callable(v) else v for k, v in kw.items()}
        return bertlib.timelapse.snapshot_outputs(**a)
    return run


refuse(TL, "snapshot_outputs(weights={})", "weights", outputs(weights={}))
refuse(TL, "snapshot_outputs(position past the input)", ("positions", "99"),
       outputs(positions=[99]))
refuse(TL, "snapshot_outputs(positions=[-1])", ("positions", "-1"), outputs(positions=[-1]))
refuse(TL, "snapshot_outputs(k=0)", "k", outputs(k=0))
refuse(TL, "snapshot_outputs(k=10**9)", ("k", "1000000000"), outputs(k=10**9))
refuse(TL, "snapshot_outputs(weights of another model)", ("weights", "shape", "size"),
       outputs(weights=lambda F: {0: F.tiny.state_dict()}))
refuse(TL, "snapshot_outputs(weights with NaN)", ("weights", "finite", "nan"),
       outputs(weights=lambda F: {0: {k: torch.full_like(v, NAN) if v.is_floating_point()
                                      else v for k, v in F.model.state_dict().items()}}))
refuse(TL, "snapshot_outputs(vocab of another size)", "vocab",
       outputs(vocab=lambda F: bertlib.Vocab(["a"])))
refuse(TL, "snapshot_stats(sep_id=-1)", "sep_id",
       lambda F: bertlib.timelapse.snapshot_stats(F.model, F.data, -1))
refuse(TL, "snapshot_stats(sep_id=10**9)", "sep_id",
       lambda F: bertlib.timelapse.snapshot_stats(F.model, F.data, 10**9))
refuse(TL, "snapshot_stats(batch_size=0)", "batch_size",
       lambda F: bertlib.timelapse.snapshot_stats(F.model, F.data, 3, batch_size=0))
refuse(TL, "snapshot_stats(data='x')", "data",
       lambda F: bertlib.timelapse.snapshot_stats(F.model, "x", 3))

SR = bertlib.snapshots.SnapshotRecorder
refuse(SN, "SnapshotRecorder(steps=[-1])", ("steps", "-1"), lambda F: SR(F.fresh_tiny(), [-1]))
refuse(SN, "SnapshotRecorder(steps='abc')", "steps", lambda F: SR(F.fresh_tiny(), "abc"))
refuse(SN, "SnapshotRecorder(steps=endless)", "steps", lambda F: SR(F.fresh_tiny(), endless()))
refuse(SN, "SnapshotRecorder(steps=[1.5])", "steps", lambda F: SR(F.fresh_tiny(), [1.5]))
refuse(SN, "SnapshotRecorder(model='x')", "model", lambda F: SR("x", [0, 1]))
refuse(SN, "save_snapshots('x', path)", "snapshots",
       lambda F: bertlib.snapshots.save_snapshots("x", here("s.safetensors")))
refuse(SN, "save_snapshots(into a missing folder)", ("path", "missing"),
       lambda F: bertlib.snapshots.save_snapshots(F.snapshots, here("missing") / "s.safetensors"))
refuse(SN, "load_snapshots(missing folder)", ("directory", "nowhere", "snapshots"),
       lambda F: bertlib.snapshots.load_snapshots(here("nowhere")))


def snap_dir(make: Callable) -> Callable:
    def run(F):
        folder = here("snaps")
        folder.mkdir()
        make(folder / "snapshots.safetensors")
        return bertlib.snapshots.load_snapshots(folder)
    return run


SNAPS = assets.SMALL_BERT_DIR / "snapshots.safetensors"
refuse(SN, "load_snapshots(truncated file)", ("snapshots.safetensors", "truncated", "path"),
       snap_dir(lambda p: p.write_bytes(SNAPS.read_bytes()[:5000])))
refuse(SN, "load_snapshots(a named pipe)", ("snapshots.safetensors", "file"),
       snap_dir(os.mkfifo))
refuse(SN, "load_snapshots(link to /dev/zero)", ("snapshots.safetensors", "file", "size"),
       snap_dir(lambda p: p.symlink_to("/dev/zero")))
refuse(SN, "load_snapshots(header claims 10**15 bytes)", ("snapshots.safetensors", "header"),
       snap_dir(lambda p: p.write_bytes((10**15).to_bytes(8, "little") + b"{}")))


@case(SN, "save_snapshots killed half-way keeps the old file", "snapshots")
def _snap_killed(F):
    path = here("snapshots.safetensors")
    small = bertlib.snapshots.Snapshots({0: F.tiny.state_dict()}, [1.0], [1.0])
    bertlib.snapshots.save_snapshots(small, path)
    killed_while(lambda: bertlib.snapshots.save_snapshots(F.snapshots, path), limit=100_000)
    got = bertlib.snapshots.load_snapshots(Path.cwd())
    return OK(f"reads back {len(got.weights)} snapshots")


# ================================================================ bertlib.checkpoint
CK = "bertlib.checkpoint"


def ckpt(edit: Callable) -> Callable:
    """A case: save the tiny model, spoil the folder with ``edit(folder)``, load it."""
    def run(F):
        folder = here("ckpt")
        bertlib.save_pretrained(F.tiny, folder)
        edit(folder)
        return bertlib.load_pretrained(folder)
    return run


def edit_config(**changes):
    """An edit of a bertlib checkpoint's sizes (``config.json``'s "config")."""
    def edit(folder):
        path = folder / "config.json"
        saved = json.loads(path.read_text(encoding="utf-8"))
        saved["config"] = {k: v for k, v in (saved["config"] | changes).items() if v is not DROP}
        path.write_text(json.dumps(saved), encoding="utf-8")
    return edit


def replace_file(name, make):
    def edit(folder):
        (folder / name).unlink()
        make(folder / name)
    return edit


WEIGHTS = "model.safetensors"
refuse(CK, "load_pretrained(missing folder)", ("directory", "nowhere"),
       lambda F: bertlib.load_pretrained(here("nowhere")))
refuse(CK, "load_pretrained(broken config.json)", ("config.json", "json"),
       ckpt(lambda f: (f / "config.json").write_text('{"vocab_size": ', encoding="utf-8")))
refuse(CK, "load_pretrained(config without num_blks)", ("num_blks", "config.json"),
       ckpt(edit_config(num_blks=DROP)))
refuse(CK, "load_pretrained(config num_blks 2, weights 1)", ("num_blks", "block"),
       ckpt(edit_config(num_blks=2)))
refuse(CK, "load_pretrained(config vocab_size=10**9)", ("vocab_size", "GB", "bytes"),
       ckpt(edit_config(vocab_size=10**9)))
refuse(CK, "load_pretrained(config max_len=10**12)", ("max_len", "GB", "bytes"),
       ckpt(edit_config(max_len=10**12)))
refuse(CK, "load_pretrained(config dropout='x')", "dropout", ckpt(edit_config(dropout="x")))
refuse(CK, "load_pretrained(config a list)",
       ("config.json", "object"),
       ckpt(lambda f: (f / "config.json").write_text("[1, 2]", encoding="utf-8")))
refuse(CK, "load_pretrained(truncated weights)", (WEIGHTS, "truncated", "path"),
       ckpt(lambda f: (f / WEIGHTS).write_bytes((f / WEIGHTS).read_bytes()[:3000])))
refuse(CK, "load_pretrained(weights a named pipe)", (WEIGHTS, "file"),
       ckpt(replace_file(WEIGHTS, os.mkfifo)))
refuse(CK, "load_pretrained(weights link to /dev/zero)", (WEIGHTS, "file", "size"),
       ckpt(replace_file(WEIGHTS, lambda p: p.symlink_to("/dev/zero"))))
refuse(CK, "load_pretrained(config.json a named pipe)", ("config.json", "file"),
       ckpt(replace_file("config.json", os.mkfifo)))
refuse(CK, "load_pretrained(config.json a folder)", ("config.json", "file"),
       ckpt(replace_file("config.json", lambda p: p.mkdir())))


@case(CK, "load_pretrained(NaN weights)", "finite", "nan", WEIGHTS)
def _ckpt_nan(F):
    model = copy.deepcopy(F.tiny)
    with torch.no_grad():
        model.encoder.token_embedding.weight[3, 0] = NAN
    bertlib.save_pretrained(model, here("ckpt"))
    return bertlib.load_pretrained(here("ckpt"))


refuse(CK, "save_pretrained('x', folder)", "model",
       lambda F: bertlib.save_pretrained("x", here("ckpt")))
refuse(CK, "save_pretrained(metadata=object())", ("metadata", "note", "json"),
       lambda F: bertlib.save_pretrained(F.tiny, here("ckpt"), note=object()))
refuse(CK, "save_pretrained(metadata NaN)", ("metadata", "note", "nan"),
       lambda F: bertlib.save_pretrained(F.tiny, here("ckpt"), note=NAN))
refuse(CK, "save_pretrained(directory a file)", ("directory", "file", "ckpt"),
       lambda F: bertlib.save_pretrained(F.tiny, here("ckpt").write_text("x") and here("ckpt")))
refuse(CK, "save_pretrained(model on meta)", ("model", "meta"),
       lambda F: bertlib.save_pretrained(built(BERTModel, 50, 16, 32, 2, 1, 0.0).to("meta"),
                                         here("ckpt")))


def killed_save(limit: int):
    """A case: a 1-block checkpoint, then a 2-block save into the same folder killed when a
    file passes ``limit`` bytes; the folder must load as one of the two."""
    def run(F):
        folder = here("ckpt")
        bertlib.save_pretrained(F.tiny, folder)
        bigger = built(BERTModel, len(F.vocab), 16, 32, 2, 2, 0.0, max_len=32)
        killed_while(lambda: bertlib.save_pretrained(bigger, folder), limit)
        try:
            got = bertlib.load_pretrained(folder)
        except ValueError as err:
            raise Silent(f"data loss: neither checkpoint loads: {err}") from None
        return OK(f"loads a {got.config.num_blks}-block model")
    return run


for limit in (0, 200, 5_000, 100_000):
    refuse(CK, f"save_pretrained killed at {limit} bytes keeps a loadable checkpoint",
           "checkpoint", killed_save(limit))


# ================================================================ bertlib.hf
HF = "bertlib.hf"


def hf_dir(edit: Callable | None = None, config: dict | None = None) -> Path:
    """A copy of MiniLM's folder (the weights linked, not copied), edited."""
    src = bertlib.hf.minilm_directory()
    folder = here("hf")
    folder.mkdir()
    for name in ("config.json", "vocab.txt", "tokenizer.json"):
        shutil.copy(src / name, folder / name)
    (folder / "model.safetensors").symlink_to(src / "model.safetensors")
    if config is not None:
        old = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        new = {k: v for k, v in (old | config).items() if v is not DROP}
        (folder / "config.json").write_text(json.dumps(new), encoding="utf-8")
    if edit is not None:
        edit(folder)
    return folder



def hf_load(fn=None, **config):
    fn = fn or bertlib.load_hf_model
    return lambda F: fn(hf_dir(config=config or None))


refuse(HF, "load_hf_model(missing folder)", ("directory", "nowhere"),
       lambda F: bertlib.load_hf_model(here("nowhere")))
for key, bad in [("hidden_act", "banana"), ("vocab_size", 10**9), ("vocab_size", "x"),
                 ("num_hidden_layers", 0), ("num_attention_heads", 5), ("hidden_size", 10**6),
                 ("max_position_embeddings", 10**12), ("layer_norm_eps", -1.0),
                 ("model_type", "gpt2"), ("num_hidden_layers", DROP),
                 ("hidden_dropout_prob", 2.0), ("type_vocab_size", 7)]:
    refuse(HF, f"load_hf_model(config {key}={'dropped' if bad is DROP else repr(bad)})",
           (key, "config.json"), hf_load(**{key: bad}), timeout=60)
refuse(HF, "load_hf_model(truncated weights)", ("model.safetensors", "truncated", "path"),
       lambda F: bertlib.load_hf_model(hf_dir(lambda f: (
           (f / "model.safetensors").unlink(),
           (f / "model.safetensors").write_bytes(
               (bertlib.hf.minilm_directory() / "model.safetensors").read_bytes()[:20000])))))
refuse(HF, "load_hf_model(weights a named pipe)", ("model.safetensors", "file"),
       lambda F: bertlib.load_hf_model(hf_dir(lambda f: (
           (f / "model.safetensors").unlink(), os.mkfifo(f / "model.safetensors")))))
refuse(HF, "load_hf_model(broken config.json)", ("config.json", "json"),
       lambda F: bertlib.load_hf_model(hf_dir(lambda f: (f / "config.json").write_text("{,"))))
refuse(HF, "load_hf(no vocabulary files)", ("vocab.txt", "tokenizer.json", "tokenizer"),
       lambda F: bertlib.load_hf(hf_dir(lambda f: ((f / "vocab.txt").unlink(),
                                                    (f / "tokenizer.json").unlink()))))
refuse(HF, "config_from_hf([])", "config.json", lambda F: bertlib.hf.config_from_hf([]))
refuse(HF, "config_from_hf({'vocab_size': -3})", "vocab_size",
       lambda F: bertlib.hf.config_from_hf({"vocab_size": -3}))
refuse(HF, "config_from_hf({'hidden_size': True})", "hidden_size",
       lambda F: bertlib.hf.config_from_hf({"hidden_size": True}))


# ================================================================ bertlib.corpus
CO = "bertlib.corpus"
for fn in ("read_paragraphs", "read_wikitext"):
    read = getattr(corpus, fn)
    refuse(CO, f"{fn}(missing file)", ("path", "nope"),
           lambda F, read=read: read(here("nope.txt")))
    refuse(CO, f"{fn}(a named pipe)", ("path", "pipe"), lambda F, read=read: read(fifo()))
    refuse(CO, f"{fn}(link to /dev/zero)", ("path", "zero", "size"),
           lambda F, read=read: read(zero_link("zero.txt")))
    refuse(CO, f"{fn}(a folder)", ("path", "folder"),
           lambda F, read=read: read(here("folder").mkdir() or here("folder")))
    refuse(CO, f"{fn}(invalid UTF-8)", ("path", "utf", "bin.txt"),
           lambda F, read=read: read(here("bin.txt").write_bytes(b"\xff\xfe\x00\x80 x\n") and
                                     here("bin.txt")))
    refuse(CO, f"{fn}(None)", "path", lambda F, read=read: read(None))


@case(CO, "read_paragraphs(a 240 MB corpus, inside the 256 MB limit)", "path", "MB", "bytes",
      timeout=120)
def _big_corpus(F):
    path = here("big.txt")
    line = ("the quick brown fox jumps over the lazy dog again and again today. " * 2)[:-1]
    block = ((line + "\n") * 4 + "\n").encode()
    with path.open("wb") as f:
        for _ in range(240 * 2**20 // (len(block) * 1000)):
            f.write(block * 1000)
    got = corpus.read_paragraphs(path)
    return OK(f"read {len(got)} paragraphs within the memory cap")


for arg, bad in [("held_out", 1.5), ("held_out", -0.1), ("held_out", NAN), ("held_out", 1.0),
                 ("seed", None), ("seed", -1), ("held_out", "0.1")]:
    refuse(CO, f"load_small_corpus({arg}={bad!r})", arg,
           lambda F, arg=arg, bad=bad: corpus.load_small_corpus(**{arg: bad}))
refuse(CO, "load_small_corpus(missing folder)", ("directory", "nowhere"),
       lambda F: corpus.load_small_corpus(here("nowhere")))
refuse(CO, "load_small_corpus(folder without en.txt)", ("en.txt", "directory"),
       lambda F: corpus.load_small_corpus(here("empty").mkdir() or here("empty")))
refuse(CO, "tokenize_paragraphs(tokenize=None)", "tokenize",
       lambda F: corpus.tokenize_paragraphs([["a b"]], None))
refuse(CO, "tokenize_paragraphs('a text')", "paragraphs",
       lambda F: corpus.tokenize_paragraphs("a text", str.split))
refuse(CO, "tokenize_paragraphs(tokenize returning 5)", ("tokenize", "5"),
       lambda F: corpus.tokenize_paragraphs([["a b"]], lambda s: 5))
refuse(CO, "tokenize_paragraphs(tokenize returning a str)", "tokenize",
       lambda F: corpus.tokenize_paragraphs([["a b"]], lambda s: s))
refuse(CO, "tokenize_paragraphs(a paragraph of numbers)", "paragraphs",
       lambda F: corpus.tokenize_paragraphs([[1, 2]], str.split))


# ================================================================ bertlib.words
WO = "bertlib.words"
refuse(WO, "segment(None)", "text", lambda F: bertlib.words.segment(None))
refuse(WO, "segment(lone surrogate)", ("text", "surrogate", "\\ud800"),
       lambda F: bertlib.words.segment("猫\ud800狗"))
refuse(WO, "segment(b'bytes')", "text", lambda F: bertlib.words.segment(b"bytes"))
refuse(WO, "word_ids(words not giving the text)", "words",
       lambda F: bertlib.words.word_ids(F.tok, "the cat", ["the", "dog"]))
refuse(WO, "word_ids(text=None)", "text", lambda F: bertlib.words.word_ids(F.tok, None))
refuse(WO, "word_ids(tokenizer='x')", "tokenizer",
       lambda F: bertlib.words.word_ids("x", "the cat"))
refuse(WO, "word_ids(lone surrogate)", ("text", "surrogate", "\\ud800"),
       lambda F: bertlib.words.word_ids(F.tok, "the \ud800 cat"))
refuse(WO, "word_ids(words=[1, 2])", "words",
       lambda F: bertlib.words.word_ids(F.tok, "ab", [1, 2]))


# ================================================================ bertlib.i18n
IN = "bertlib.i18n"
refuse(IN, "set_language('xx')", ("lang", "xx"), lambda F: i18n.set_language("xx"))
refuse(IN, "set_language(5)", ("lang", "5"), lambda F: i18n.set_language(5))
refuse(IN, "set_language('EN ')", ("lang", "EN"), lambda F: i18n.set_language("EN "))
refuse(IN, "resolve_language('klingon')", ("lang", "klingon"),
       lambda F: i18n.resolve_language("klingon"))
refuse(IN, "text('no_such_key')", ("key", "no_such_key"), lambda F: i18n.text("no_such_key"))
refuse(IN, "text('saved') without its placeholder", ("path", "saved"),
       lambda F: i18n.text("saved"))
refuse(IN, "tr(5)", "message", lambda F: i18n.tr(5))
refuse(IN, "tr('{x}') without x", ("x", "message"), lambda F: i18n.tr("held {x} out"))
refuse(IN, "table('abc')", "rows", lambda F: i18n.table("abc"))
refuse(IN, "table(rows, gap=-1)", "gap", lambda F: i18n.table([["a", "b"]], gap=-1))
refuse(IN, "table(endless rows)", "rows", lambda F: i18n.table([1, 2] for _ in endless()))
refuse(IN, "fill('x', width=0)", "width", lambda F: i18n.fill("some words here", width=0))
refuse(IN, "fill(None)", "message", lambda F: i18n.fill(None))


# ================================================================ bertlib.checks
CH = "bertlib.checks"
refuse(CH, "InputError('no_such_key')", ("key", "no_such_key"),
       lambda F: checks.InputError("no_such_key"))
refuse(CH, "number_array('answer', 'abc')", ("answer", "abc"),
       lambda F: checks.number_array("answer", "abc"))
@case(CH, "number_array('answer', [nan]) converts, and check_exercise answers it")
def _number_nan(F):
    """NaN is a number: number_array converts it (figures check their data finite), and a
    learner's NaN answer gets a verdict, never an exception."""
    assert np.isnan(checks.number_array("answer", [NAN])).all()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bertlib.exercises.check_exercise("04_num_preds", NAN)
    return OK(f"converted; check_exercise said {out.getvalue().strip()[:80]!r}")
# The readers of untrusted files live in bertlib.files.
FI = "bertlib.files"
refuse(FI, "checked_file(missing folder)", ("nowhere", "directory"),
       lambda F: files.checked_file(here("nowhere"), "x.json", 100))
refuse(FI, "checked_path(a named pipe)", ("path", "pipe"),
       lambda F: files.checked_path("path", fifo(), 100))
refuse(FI, "read_json(a JSON list)", ("json", "object", "x.json"),
       lambda F: files.read_json(here("x.json").write_text("[1]") and here("x.json")))
refuse(FI, "read_json(NaN in JSON)", ("json", "nan", "x.json"),
       lambda F: files.read_json(here("x.json").write_text('{"a": NaN}') and here("x.json")))
refuse(CH, "check_seed('seed', 2**64)", ("seed", str(2**64)),
       lambda F: checks.check_seed("seed", 2**64) or raise_silent("accepted 2**64"))


def raise_silent(message):
    raise Silent(message)


# ================================================================ bertlib (the package)
PK = "bertlib"
refuse(PK, "load_small_bert(missing folder)", ("directory", "nowhere"),
       lambda F: bertlib.load_small_bert(here("nowhere")))
refuse(PK, "similarity_table(word not in its sentence)", ("bank", "word", "sentence"),
       lambda F: bertlib.similarity_table(F.model, F.tok, [("bank", "the cat sat."),
                                                           ("cat", "the cat sat.")]))
refuse(PK, "similarity_table([])", "occurrences",
       lambda F: bertlib.similarity_table(F.model, F.tok, []))
refuse(PK, "similarity_table(contextual='yes')", "contextual",
       lambda F: bertlib.similarity_table(F.model, F.tok, [("cat", "the cat sat.")] * 2,
                                          contextual="yes"))
refuse(PK, "similarity_table(occurrences of 3-tuples)", "occurrences",
       lambda F: bertlib.similarity_table(F.model, F.tok, [("cat", "the cat", 1)] * 2))
refuse(PK, "similarity_table(lone surrogate)", ("sentence", "surrogate", "\\ud800"),
       lambda F: bertlib.similarity_table(F.model, F.tok, [("cat", "the cat \ud800.")] * 2))
refuse(PK, "context.find_word(occurrence=5)", ("occurrence", "5"),
       lambda F: bertlib.context.find_word(F.tok, "the cat sat", "cat", occurrence=5))
refuse(PK, "context.find_word(occurrence=-1)", ("occurrence", "-1"),
       lambda F: bertlib.context.find_word(F.tok, "the cat sat", "cat", occurrence=-1))
refuse(PK, "assets.small_bert_metrics(a named pipe)", ("metrics.json", "file"),
       lambda F: assets.small_bert_metrics(
           here("m").mkdir() or os.mkfifo(here("m") / "metrics.json") or here("m")))


# ================================================================ bertlib.exercises
EX = "bertlib.exercises"
KEY = "02_embedding_params"


class Hostile:
    """An answer whose every comparison and conversion fails."""

    def __eq__(self, other):
        raise RuntimeError("no comparing me")

    __ne__ = __lt__ = __gt__ = __le__ = __ge__ = __eq__

    def __str__(self):
        raise RuntimeError("no printing me")

    __repr__ = __format__ = __float__ = __int__ = __index__ = __bool__ = __str__


def verdict(answer: Callable, key: str = KEY):
    def run(F):
        return printed(lambda: bertlib.exercises.check_exercise(key, answer()))
    return run


def handled(module: str, name: str, fn: Callable, timeout: float = 30.0) -> None:
    CASES.append(Case(module, name, fn, (), "handled", timeout))


@case(EX, "check_exercise(a one-number array, as documented)", expect="handled")
def _one_number(F):
    right = bertlib.exercises.EXERCISES[KEY].answer()
    return printed(lambda: bertlib.exercises.check_exercise(KEY, np.array([right])))


for why, answer in [("sparse tensor", lambda: torch.tensor([5.0]).to_sparse()),
                    ("meta tensor", lambda: torch.empty((), device="meta")),
                    ("NaN", lambda: NAN), ("inf", lambda: INF), ("'12'", lambda: "12"),
                    ("[1, 2]", lambda: [1, 2]), ("True", lambda: True),
                    ("a comparison-hostile object", Hostile),
                    ("complex 3+0j", lambda: 3 + 0j), ("Ellipsis", lambda: ...),
                    ("10**400", lambda: 10**400),
                    ("a 1000x1000 array", lambda: np.ones((1000, 1000))),
                    ("a function", lambda: print)]:
    handled(EX, f"check_exercise(answer={why})", verdict(answer))
refuse(EX, "check_exercise('no_such_key', 1)", ("key", "no_such_key"),
       lambda F: bertlib.exercises.check_exercise("no_such_key", 1))
refuse(EX, "check_exercise(key, 1, lang='xx')", ("lang", "xx"),
       lambda F: bertlib.exercises.check_exercise(KEY, 1, lang="xx"))
refuse(EX, "is_correct(None, 1)", ("key", "None"), lambda F: bertlib.exercises.is_correct(None, 1))


# ================================================================ bertlib.implement
IM = "bertlib.implement"
IKEY = "02_tokens_and_segments"


def impl(fn: Callable, key: str = IKEY):
    return lambda F: printed(lambda: bertlib.implement.check_implementation(key, fn))


class BadStr(Exception):
    def __str__(self):
        raise RuntimeError("no printing me")


def _loop(*args):
    while True:
        pass


def _raise_badstr(*args):
    raise BadStr()


def _recurse(*args):
    return _recurse(*args)


def _allocate(*args):
    return torch.empty(10**12)


def _exit(*args):
    sys.exit(3)


def _sparse(*args):
    return torch.ones(3).to_sparse()


def _meta(*args):
    return torch.empty(3, device="meta")


def _hostile(*args):
    return Hostile()


def _generator(*args):
    yield from args


def _sleep_print(*args):
    print("\ud800")
    return None


handled(IM, "check_implementation(a learner's endless loop)", impl(_loop), timeout=150)
for name, fn in [("sys.exit", _exit), ("an exception whose str() fails", _raise_badstr),
                 ("endless recursion", _recurse), ("a 4 TB allocation", _allocate),
                 ("a sparse tensor", _sparse), ("a meta tensor", _meta),
                 ("a comparison-hostile object", _hostile), ("a generator", _generator),
                 ("printing a lone surrogate", _sleep_print),
                 ("a function of no arguments", lambda: None)]:
    handled(IM, f"check_implementation(a learner's {name})", impl(fn))
for key in ("03_attention_weights", "04_mlm_gather", "09_best_span", "06_mlm_loss"):
    handled(IM, f"check_implementation({key}: sparse result)", impl(_sparse, key))
    handled(IM, f"check_implementation({key}: meta result)", impl(_meta, key))
refuse(IM, "check_implementation(function=5)", "function",
       lambda F: bertlib.implement.check_implementation(IKEY, 5))
refuse(IM, "check_implementation(hint=-1)", "hint",
       lambda F: bertlib.implement.check_implementation(IKEY, lambda *a: None, hint=-1))
refuse(IM, "check_implementation(hint=True)", "hint",
       lambda F: bertlib.implement.check_implementation(IKEY, lambda *a: None, hint=True))
refuse(IM, "check_implementation('no_key', f)", ("key", "no_key"),
       lambda F: bertlib.implement.check_implementation("no_key", lambda *a: None))
refuse(IM, "hints('02_wordpiece', lang='xx')", ("lang", "xx"),
       lambda F: bertlib.implement.hints("02_wordpiece", lang="xx"))


# ================================================================ bertlib.viz
VZ = "bertlib.viz"


def _viz():
    import bertlib.viz as viz
    return viz


WIDGETS: dict[str, Callable] = {
    "AttentionWidget": lambda F: _viz().AttentionWidget(F.model, F.tok),
    "InputRepresentationWidget": lambda F: _viz().InputRepresentationWidget(F.model, F.tok),
    "MaskingWidget": lambda F: _viz().MaskingWidget(F.tok, model=F.model),
    "NSPWidget": lambda F: _viz().NSPWidget(F.model, F.tok),
    "TimeLapseWidget": lambda F: _viz().TimeLapseWidget(F.model, F.tok, F.snapshots),
    "FineTuneWidget": lambda F: _viz().FineTuneWidget(
        {"tiny": _viz().ScoredClassifier(F.clf, F.tok, {"en": bertlib.finetune.Accuracy(3, 10)})},
        F.tagger, F.tok,
        tasks.class_names("topic")),
}


def typed(make: Callable, text_: str, box: str = "text_a"):
    """A case: type ``text_`` into a widget's box; what the widget shows is the outcome."""
    def run(F):
        w = make(F)
        getattr(w, box).value = text_
        return w.message
    return run


def typed_ok(make: Callable, text_: str):
    """A case: a text the widget must simply show (no error notice)."""
    def run(F):
        w = make(F)
        w.text_a.value = text_
        if w.status.value and "#8B0000" in w.status.value:  # the error style
            raise Silent(f"shown as an error: {w.message}")
    return run


def save_fails(make: Callable):
    """A case: Save PNG when the file cannot be written (a folder has its name)."""
    def run(F):
        w = make(F)
        here(f"{w.name}.png").mkdir()
        before = w.message
        w.save_buttons["png"].click()
        return "" if w.message == before else w.message
    return run


def save_killed(make: Callable):
    """A case: a widget's Save killed part-way must leave the PNG saved before whole."""
    def run(F):
        from PIL import Image
        w = make(F)
        path = here("saved.png")
        w.save(path)
        killed_while(lambda: w.save(path), limit=3000)
        try:
            with Image.open(path) as im:
                im.load()
        except Exception as err:
            raise Silent(f"data loss: the PNG saved before no longer reads: {err}") from None
        return OK("the earlier PNG still reads")
    return run


def server_widget(name: str) -> Callable:
    """The server's widget ``name``; each case has its own copy, by fork."""
    def widget(F):
        if isinstance(F.widgets[name], Exception):
            raise F.widgets[name]
        return F.widgets[name]
    return widget


for wname in WIDGETS:
    make = server_widget(wname)
    handled(VZ, f"{wname}: lone surrogate typed", typed(make, "a \ud800 b"), timeout=60)
    handled(VZ, f"{wname}: only spaces typed", typed(make, "   \t "), timeout=60)
    handled(VZ, f"{wname}: 20,000 words typed", typed(make, "word " * 20000), timeout=60)
    CASES.append(Case(VZ, f"{wname}: control characters typed", typed_ok(make, "a\x00b\x1b[1m c"),
                      (), "accept", 60))
    handled(VZ, f"{wname}: Save PNG where the file cannot be written", save_fails(make),
            timeout=60)
    refuse(VZ, f"{wname}: save('x.banana')", ("path", ".banana", "banana"),
           lambda F, make=make: make(F).save(here("x.banana")), timeout=60)
    refuse(VZ, f"{wname}: save(dpi=0)", "dpi",
           lambda F, make=make: make(F).save(here("x.png"), dpi=0), timeout=60)
    refuse(VZ, f"{wname}: save(dpi=10**5)", "dpi",
           lambda F, make=make: make(F).save(here("x.png"), dpi=10**5), timeout=60)
    refuse(VZ, f"{wname}: save killed part-way", "png", save_killed(make), timeout=60)
handled(VZ, "NSPWidget: lone surrogate typed in sentence B",
        typed(server_widget("NSPWidget"), "\udfff", box="text_b"), timeout=60)
refuse(VZ, "AttentionWidget(text_a=5)", "text_a",
       lambda F: _viz().AttentionWidget(F.model, F.tok, text_a=5))
refuse(VZ, "AttentionWidget(model='x')", "model", lambda F: _viz().AttentionWidget("x", F.tok))
refuse(VZ, "MaskingWidget(max_len=0)", "max_len",
       lambda F: _viz().MaskingWidget(F.tok, max_len=0))
refuse(VZ, "MaskingWidget(top_k=0)", "top_k",
       lambda F: _viz().MaskingWidget(F.tok, model=F.model, top_k=0))
refuse(VZ, "MaskingWidget(seed=-1)", "seed", lambda F: _viz().MaskingWidget(F.tok, seed=-1))
refuse(VZ, "TimeLapseWidget(snapshots='x')", "snapshots",
       lambda F: _viz().TimeLapseWidget(F.model, F.tok, "x"))
refuse(VZ, "AttentionWidget(lang='xx')", ("lang", "xx"),
       lambda F: _viz().AttentionWidget(F.model, F.tok, lang="xx"))


@case(VZ, "plot_model_view(12 layers x 12 heads) at most 100 inches", "attentions", "100",
      timeout=90)
def _model_view_tall(F):
    fig = _viz().plot_model_view(np.full((12, 12, 6, 6), 1 / 6), list("abcdef"))
    w, h = fig.get_size_inches()
    if max(w, h) > 100:
        raise Silent(f"a figure {w:.0f} x {h:.0f} inches")
    return OK(f"{w:.0f} x {h:.0f} inches")


refuse(VZ, "plot_similarity(1000 x 1000)", ("matrix", "1000"),
       lambda F: _viz().plot_similarity(np.zeros((1000, 1000)), [f"r{i}" for i in range(1000)],
                                        [f"c{i}" for i in range(1000)]), timeout=60)


@case(VZ, "a NUL in a token saves well-formed SVG", "tokens", "\\x00")
def _svg_nul(F):
    import xml.etree.ElementTree as ET
    plot = _viz().AttentionPlot()
    plot.update(_viz().AttentionView(np.full((3, 3), 1 / 3), ["a\x00b", "c\x01", "d"]))
    path = plot.save(here("x.svg"))
    try:
        ET.parse(path)
    except ET.ParseError as err:
        raise Silent(f"the SVG is not well-formed XML: {err}") from None
    return OK("well-formed")


def view(weights, tokens, **kw):
    return lambda F: _viz().plot_attention(_viz().AttentionView(np.asarray(weights), tokens, **kw))


refuse(VZ, "plot_attention(NaN weights)", "weights", view(np.full((3, 3), NAN), list("abc")))
refuse(VZ, "plot_attention(3 tokens for 4x4)", ("tokens", "weights"),
       view(np.full((4, 4), 0.25), list("abc")))
refuse(VZ, "plot_attention(query=9)", "query", view(np.full((3, 3), 1 / 3), list("abc"), query=9))
refuse(VZ, "plot_attention(boundary=-2)", "boundary",
       view(np.full((3, 3), 1 / 3), list("abc"), boundary=-2))
refuse(VZ, "plot_attention(weights 'abc')", "weights", view("abc", list("abc")))
refuse(VZ, "plot_all_heads(4-D weights)", "weights",
       lambda F: _viz().plot_all_heads(np.full((2, 2, 3, 3), 1 / 3), list("abc"), 0))
refuse(VZ, "plot_all_heads(layer=-1)", "layer",
       lambda F: _viz().plot_all_heads(np.full((2, 3, 3), 1 / 3), list("abc"), -1))
refuse(VZ, "plot_all_heads(rows summing to 3)", "weights",
       lambda F: _viz().plot_all_heads(np.ones((2, 3, 3)), list("abc"), 0))
refuse(VZ, "plot_all_heads(weights of 10**4 heads)", ("weights", "heads"),
       lambda F: _viz().plot_all_heads(np.full((10**4, 2, 2), 0.5), list("ab"), 0),
       timeout=60)
refuse(VZ, "plot_model_view(head=99)", "head",
       lambda F: _viz().plot_model_view(np.full((2, 2, 3, 3), 1 / 3), list("abc"), head=99))
refuse(VZ, "plot_model_view(tokens of another length)", "tokens",
       lambda F: _viz().plot_model_view(np.full((2, 2, 3, 3), 1 / 3), list("ab")))
refuse(VZ, "plot_nsp([0.5])", "probabilities", lambda F: _viz().plot_nsp([0.5]))
refuse(VZ, "plot_nsp([nan, 0.5])", "probabilities", lambda F: _viz().plot_nsp([NAN, 0.5]))
refuse(VZ, "plot_nsp([0.7, 0.7])", "probabilities", lambda F: _viz().plot_nsp([0.7, 0.7]))
refuse(VZ, "plot_nsp('ab')", "probabilities", lambda F: _viz().plot_nsp("ab"))
refuse(VZ, "plot_mask_chips(shown of another length)", "shown",
       lambda F: _viz().plot_mask_chips(list("abc"), list("ab"), [None] * 3))
refuse(VZ, "plot_mask_chips(fates 'xyz')", "fates",
       lambda F: _viz().plot_mask_chips(list("abc"), list("abc"), list("xyz")))
refuse(VZ, "plot_similarity(NaN)", "matrix",
       lambda F: _viz().plot_similarity([[NAN, 0.5], [0.5, 1.0]], ["a", "b"], ["a", "b"]))
refuse(VZ, "plot_similarity(3 labels for 2 rows)", ("row_labels", "row labels"),
       lambda F: _viz().plot_similarity(np.eye(2), ["a", "b", "c"], ["a", "b"]))
refuse(VZ, "plot_similarity('abc')", "matrix",
       lambda F: _viz().plot_similarity("abc", ["a"], ["b"]))
refuse(VZ, "plot_similarity(title=5)", "title",
       lambda F: _viz().plot_similarity(np.eye(2), ["a", "b"], ["a", "b"], title=5))
refuse(VZ, "new_figure(0, 3)", "width", lambda F: _viz().new_figure(0, 3))
refuse(VZ, "new_figure(1e6, 1e6)", ("width", "height", "inches"),
       lambda F: _viz().new_figure(1e6, 1e6).savefig(here("x.png")))
refuse(VZ, "new_figure(nan, 3)", "width", lambda F: _viz().new_figure(NAN, 3))
refuse(VZ, "LossPlot(every=0)", "every", lambda F: _viz().LossPlot(every=0))
refuse(VZ, "TimeLapsePlot(top_k=0)", "top_k", lambda F: _viz().TimeLapsePlot(top_k=0))
refuse(VZ, "AllHeadsPlot(num_heads=0)", "num_heads", lambda F: _viz().AllHeadsPlot(0))
refuse(VZ, "tally_masks(mask_ratio=2)", "mask_ratio",
       lambda F: _viz().tally_masks(F.enc, F.vocab, 2.0, 10, 0))
refuse(VZ, "tally_masks(samples=0)", "samples",
       lambda F: _viz().tally_masks(F.enc, F.vocab, 0.15, 0, 0))
refuse(VZ, "tally_masks(samples=10**9)", "samples",
       lambda F: _viz().tally_masks(F.enc, F.vocab, 0.15, 10**9, 0))
refuse(VZ, "tally_masks(seed=-1)", "seed",
       lambda F: _viz().tally_masks(F.enc, F.vocab, 0.15, 10, -1))


def qk(**kw):
    def run(F):
        mha = F.model.encoder.blks[0].attention if hasattr(F.model.encoder, "blks") else None
        a = {"attention": mha, "X": torch.zeros(4, 128), "tokens": list("abcd"), "head": 0,
             "query": 0}
        a |= {k: v(a) if callable(v) else v for k, v in kw.items()}
        return _viz().query_key_steps(**a)
    return run


refuse(VZ, "query_key_steps(X float64)", ("X", "dtype", "float64"), qk(X=lambda a: a["X"].double()))
refuse(VZ, "query_key_steps(X float16)", ("X", "dtype", "float16"), qk(X=lambda a: a["X"].half()))
refuse(VZ, "query_key_steps(head=5)", "head", qk(head=5))
refuse(VZ, "query_key_steps(X of 3 dimensions)", "X", qk(X=lambda a: a["X"][None]))
refuse(VZ, "query_key_steps(query=99)", "query", qk(query=99))
refuse(VZ, "query_key_steps(temperature=0)", "temperature", qk(temperature=0.0))
refuse(VZ, "query_key_steps(temperature=nan)", "temperature", qk(temperature=NAN))
refuse(VZ, "query_key_steps(valid_len=0)", "valid_len", qk(valid_len=0))
refuse(VZ, "query_key_steps(3 tokens for 4)", "tokens", qk(tokens=list("abc")))
refuse(VZ, "listing.source(region='nope')", "region",
       lambda F: bertlib.viz.listing.source(bertlib.mask_tokens, region="nope"))
refuse(VZ, "listing.source(5)", "obj", lambda F: bertlib.viz.listing.source(5))


# ================================================================ bertlib.pretrain
PT = "bertlib.pretrain"
TINY_RUN = ["--steps", "2", "--batch-size", "8", "--num-hiddens", "16", "--ffn-num-hiddens",
            "32", "--num-heads", "2", "--num-blks", "1", "--max-len", "32", "--vocab-size", "300",
            "--save-every", "1", "--log-every", "1", "--threads", "1"]


def cli(*args: str, corpus: str | None = None, out: str = "out", fsize: int | None = None,
        fresh: bool = False) -> subprocess.CompletedProcess:
    """``python -m bertlib.pretrain`` on the tiny corpus (or ``corpus``) with the tiny recipe,
    ``args`` last (so they win): its exit code and output. ``fsize`` caps the size of any file
    it writes (killed past it, as by a crash while saving). It runs as a forked copy of this
    process, whose torch and bertlib are imported already (a new interpreter spends half a
    minute importing them on a busy machine), or, with ``fresh``, as a new interpreter."""
    argv = ["--corpus", str(CLI_CORPUS) if corpus is None else corpus, "--out", out,
            *TINY_RUN, *args]
    if fresh:
        return subprocess.run([sys.executable, "-m", "bertlib.pretrain", *argv],
                              env=os.environ | {"PYTHONPATH": str(ROOT)}, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, check=False)
    outputs = here(f".cli-{os.getpid()}-out"), here(f".cli-{os.getpid()}-err")
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for fd, path in zip((1, 2), outputs, strict=True):
                os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
            sys.stdout = io.TextIOWrapper(
                os.fdopen(1, "wb", buffering=0, closefd=False), write_through=True)
            sys.stderr = io.TextIOWrapper(
                os.fdopen(2, "wb", buffering=0, closefd=False), write_through=True)
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
                signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            sys.argv = ["python -m bertlib.pretrain", *argv]
            runpy.run_module("bertlib.pretrain", run_name="__main__")
            code = 0
        except SystemExit as exit_:  # as the interpreter would: sys.exit("...") prints it
            code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
            if exit_.code is not None and not isinstance(exit_.code, int):
                print(exit_.code, file=sys.stderr)
        except BaseException:  # as the interpreter would: the traceback, exit code 1
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    out, err = (p.read_text(encoding="utf-8", errors="replace") for p in outputs)
    return subprocess.CompletedProcess(argv, os.waitstatus_to_exitcode(status), out, err)


CLI_CORPUS = Path("/nonexistent")  # set by Fixtures.build_cli: a folder of *.txt
CLI_RUN = Path("/nonexistent")  # a finished tiny run, its checkpoint/ at step 2


def cli_judged(run: subprocess.CompletedProcess, names: tuple[str, ...]):
    """The outcome of a CLI run that must refuse: a non-zero exit whose last line is a
    ValueError or an argparse error naming one of ``names``."""
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else f"(no message; stdout: {run.stdout[-200:]!r})"
    if run.returncode == 0:
        raise Silent(f"exit code 0; last output: {(run.stdout or '').strip()[-150:]!r}")
    if any(w in last.lower() for w in ("memoryerror", "can't allocate", "out of memory")):
        raise MemoryError(last)
    if run.returncode < 0:
        raise RuntimeError(f"killed by signal {-run.returncode}: {last}")
    clear = last.startswith("ValueError:") or "error: argument" in last or ": error:" in last
    if clear and any(n.lower() in last.lower() for n in names):
        return OK(f"exit {run.returncode}: {last}")
    raise RuntimeError(f"exit {run.returncode}: {last}")


def cli_case(name: str, names, *args: str, **kw) -> None:
    names = (names,) if isinstance(names, str) else tuple(names)
    timeout = 170 if kw.get("fresh") else 90
    CASES.append(Case(PT, f"CLI {name}", lambda F: cli_judged(cli(*args, **kw), names), names,
                      "refuse", timeout))


cli_case("--threads 0", "threads", "--threads", "0")
cli_case("--threads 0 (in a new interpreter)", "threads", "--threads", "0", fresh=True)
cli_case("--threads -2", "threads", "--threads", "-2")
cli_case("--lr -1", "lr", "--lr", "-1")
cli_case("--lr nan", "lr", "--lr", "nan")
cli_case("--lr 1e6 (the loss turns NaN)", ("step", "loss", "finite", "lr"), "--lr", "1e6")
cli_case("--steps 0", "steps", "--steps", "0")
cli_case("--batch-size 0", "batch_size", "--batch-size", "0")
cli_case("--max-len 1", "max_len", "--max-len", "1")
cli_case("--max-len 10**12", ("max_len", "GB", "bytes"), "--max-len", str(10**12))
cli_case("--vocab-size 0", "vocab_size", "--vocab-size", "0")
cli_case("--dropout 1.5", "dropout", "--dropout", "1.5")
cli_case("--num-heads 3 with 16 hiddens", "num_heads", "--num-heads", "3")
cli_case("--num-hiddens 10**7", ("num_hiddens", "GB", "bytes"), "--num-hiddens", str(10**7))
cli_case("--seed -1", "seed", "--seed", "-1")
cli_case("--steps abc", "--steps", "--steps", "abc")
cli_case("--corpus in a missing folder", ("corpus", "nowhere"), corpus="nowhere/x.tokens")


@case(PT, "CLI --out an existing file", "out", "taken", timeout=90)
def _cli_out_file(F):
    here("taken").write_text("x")
    return cli_judged(cli(out="taken"), ("out", "taken"))


@case(PT, "CLI --corpus /dev/null (not 'does not exist'; a new interpreter)", "/dev/null",
      timeout=170)
def _cli_dev_null(F):
    run = cli(corpus="/dev/null", fresh=True)
    got = cli_judged(run, ("/dev/null",))
    if "does not exist" in got.message:
        raise RuntimeError(f"says /dev/null does not exist: {got.message}")
    return got


@case(PT, "CLI --corpus a named pipe", "corpus", "pipe", timeout=90)
def _cli_fifo(F):
    return cli_judged(cli(corpus=str(fifo("pipe.tokens"))), ("corpus", "pipe"))


def resumable() -> Path:
    """The finished tiny run, copied here, its checkpoint set back to step 1: rerun with the
    same arguments, it resumes with step 2 (and saves a checkpoint after it)."""
    out = copy_dir(CLI_RUN, "out")
    _trainer(lambda s: s | {"step": 1})(out / "checkpoint")
    return out / "checkpoint"


def resumed(edit: Callable, names):
    """A case: the tiny run's checkpoint spoilt by ``edit(folder)``, then resumed: it must
    refuse, naming ``names``."""
    names = (names,) if isinstance(names, str) else tuple(names)

    def run(F):
        edit(resumable())
        return cli_judged(cli(), names)
    return run


def _truncate(name: str, keep: int = 2000):
    return lambda f: (f / name).write_bytes((f / name).read_bytes()[:keep])


def _trainer(change: Callable):
    def edit(f):
        state = json.loads((f / "trainer.json").read_text(encoding="utf-8"))
        (f / "trainer.json").write_text(json.dumps(change(state)), encoding="utf-8")
    return edit


def _adam_wrong_shape(f):
    from safetensors.torch import load_file, save_file
    state = load_file(str(f / "optimizer.safetensors"))
    state = {k: (torch.zeros(3) if "exp_avg" in k else v) for k, v in state.items()}
    save_file(state, str(f / "optimizer.safetensors"))


for rname, edit, names in [
        ("trainer.json broken JSON", lambda f: (f / "trainer.json").write_text('{"step": 2,'),
         ("trainer.json", "json")),
        ("trainer.json without 'step'", _trainer(lambda s: {k: v for k, v in s.items()
                                                            if k != "step"}),
         ("step", "trainer.json")),
        ("trainer.json step -5", _trainer(lambda s: s | {"step": -5}), ("step", "-5")),
        ("trainer.json step 'two'", _trainer(lambda s: s | {"step": "two"}), ("step", "two")),
        ("trainer.json a list", lambda f: (f / "trainer.json").write_text("[]"),
         ("trainer.json", "object")),
        ("trainer.json a named pipe", lambda f: ((f / "trainer.json").unlink(),
                                                 os.mkfifo(f / "trainer.json")),
         ("trainer.json", "file")),
        ("trainer.json links to /dev/zero", lambda f: ((f / "trainer.json").unlink(),
                                                       (f / "trainer.json").symlink_to(
                                                           "/dev/zero")),
         ("trainer.json", "file", "size")),
        ("truncated optimizer.safetensors", _truncate("optimizer.safetensors"),
         ("optimizer.safetensors", "truncated")),
        ("truncated model.safetensors", _truncate("model.safetensors"),
         ("model.safetensors", "truncated")),
        ("optimizer.safetensors missing", lambda f: (f / "optimizer.safetensors").unlink(),
         ("optimizer.safetensors",)),
        ("Adam's moments of the wrong shape", _adam_wrong_shape,
         ("optimizer", "exp_avg", "shape")),
        ("config.json num_blks 3", lambda f: edit_config(num_blks=3)(f), ("num_blks", "block"))]:
    CASES.append(Case(PT, f"CLI resume: {rname}", resumed(edit, names), names, "refuse", 90))


@case(PT, "CLI killed while writing tokenizer.json, then rerun", "tokenizer", timeout=120)
def _cli_tok_killed(F):
    cli(fsize=1000)  # killed as tokenizer.json passes 1,000 bytes
    return cli_judged_rerun(cli())


@case(PT, "CLI killed while writing a checkpoint, then resumed", "checkpoint", timeout=120)
def _cli_ckpt_killed(F):
    resumable()
    cli(fsize=100_000)  # killed while writing the step-2 checkpoint (the weights, 230 kB)
    return cli_judged_rerun(cli())


def cli_judged_rerun(run: subprocess.CompletedProcess):
    if run.returncode == 0:
        return OK("the rerun finished")
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    raise Silent(f"data loss: the rerun fails: {lines[-1] if lines else run.returncode}")


def parse_refuses(argv: list[str], names: tuple[str, ...]):
    def run(F):
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                got = bertlib.pretrain.parse_args(argv)
        except SystemExit as exit_:
            last = (err.getvalue().strip().splitlines() or [""])[-1]
            if exit_.code and any(n in last for n in names):
                return OK(f"argparse: {last}")
            raise RuntimeError(f"SystemExit({exit_.code}): {last}") from None
        return got
    return run


BASE = ["--corpus", "small", "--out", "out"]
for argv, names in [([*BASE, "--threads", "0"], ("threads",)),
                    ([*BASE, "--threads", "-1"], ("threads",)),
                    ([*BASE, "--steps", "abc"], ("--steps",)),
                    (["--corpus", "small"], ("--out",)),
                    ([*BASE, "--lr", "-1"], ("lr",)), ([*BASE, "--steps", "0"], ("steps",)),
                    ([*BASE, "--dropout", "nan"], ("dropout",))]:
    refuse(PT, f"parse_args({' '.join(argv[4:]) or 'no --out'})", names,
           parse_refuses(argv, names))


@case(PT, "parse_args(--threads 2) leaves torch's threads", expect="accept")
def _parse_threads(F):
    bertlib.pretrain.parse_args([*BASE, "--threads", "2"])


refuse(PT, "pretrain(RunArgs(lr=-1))", "lr",
       lambda F: bertlib.pretrain.pretrain(bertlib.pretrain.RunArgs(
           corpus=str(CLI_CORPUS), out="out", lr=-1.0, steps=1, batch_size=8)), timeout=90)
refuse(PT, "pretrain(RunArgs(steps=True))", "steps",
       lambda F: bertlib.pretrain.pretrain(bertlib.pretrain.RunArgs(
           corpus=str(CLI_CORPUS), out="out", steps=True)), timeout=90)
refuse(PT, "read_corpus(folder without *.txt)", ("corpus", "txt"),
       lambda F: bertlib.pretrain.read_corpus(str(here("empty").mkdir() or here("empty"))))
refuse(PT, "read_corpus(None)", "corpus", lambda F: bertlib.pretrain.read_corpus(None))


# Valid calls whose answer must be right (added after the first run on the merged code: the
# probe had asked these to refuse, but each gives a correct result).
@case(L, "bert_loss(float64 mlm logits, float16 nsp logits) gives the float32 loss",
      expect="accept")
def _loss_dtypes(F):
    """A loss over float64 or float16 logits is the same loss: accepted when it is right."""
    batch = F.batch()
    with torch.no_grad():
        _, mlm, nsp = F.tiny(batch[0], batch[1], batch[2], batch[3])
    want = bertlib.bert_loss(mlm, batch[5], batch[4], nsp, batch[6]).total.item()
    got = bertlib.bert_loss(mlm.double(), batch[5], batch[4], nsp.half(), batch[6]).total.item()
    if not math.isclose(got, want, rel_tol=1e-3):
        raise Silent(f"loss {got} for float64/float16 logits, {want} for float32")
    return OK(f"{got:.4f} = {want:.4f}")


for _fn in ("topic_data", "tagging_data", "span_data"):
    @case(TA, f"{_fn}(max_len=10**12) pads to the longest example", expect="accept",
          timeout=60)
    def _task_cap(F, fn=_fn):
        """max_len is a cap, not a size: the data is padded to its longest example."""
        got = getattr(tasks, fn)(F.sentences, F.tok, 10**12)
        if got.tokens.shape[1] > 1000:
            raise Silent(f"padded to {got.tokens.shape[1]} tokens")
        return OK(f"padded to {got.tokens.shape[1]} tokens")
