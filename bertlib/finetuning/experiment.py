"""What pretraining buys, under control: notebook 10's designed experiment.

One task, three starting points, the same recipe and the same seeds:

* **pretrained**: the small BERT, its encoder fine-tuned under a new output layer;
* **random**: the same architecture from random weights, fine-tuned the same way;
* **bag**: a baseline that sees each token alone and nothing pretrained.

Each is scored on the test sentences with *seen* words and with *held-out* words, words that no
labelled training sentence holds (``bertlib.finetuning.tasks``). In both BERTs the token
embeddings stay frozen: fine-tuning would move the seen words' embeddings only, away from the
held-out words that pretraining placed beside them.

Shapes: B = batch, T = sequence length, C = classes (or tags), V = vocabulary.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from bertlib.assets import SMALL_BERT_DIR
from bertlib.finetuning.finetune import (
    BagOfWords,
    BERTClassifier,
    BERTQuestionAnswerer,
    BERTTagger,
    evaluate_task,
    fine_tune,
    span_accuracy,
)
from bertlib.finetuning.tasks import (
    CLASSES,
    NUM_TOPICS,
    TAGS,
    TaskData,
    TaskSentence,
    span_data,
    tagging_data,
    topic_data,
)
from bertlib.inputs import encode_pair
from bertlib.model import BERTModel
from bertlib.support.checks import check_choice, check_sized
from bertlib.support.files import checked_file, read_json
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.train import init_model

STARTS = ("pretrained", "random", "bag")
# Fine-tuning steps and learning rate per task, in batches of 32.
RECIPE = {"topic": (300, 7e-4), "tags": (200, 2e-3), "spans": (300, 7e-4)}
SEEDS = (0, 1, 2, 3, 4)
CURVE = (1, 4, 16, 64, 128)  # training sentences per class and language (128: all of them)
# The figures of scripts/what_pretraining_buys.py: RECIPE over SEEDS, and the learning curve.
EXPERIMENT_FILE = "experiment.json"
TASK_NAMES = ("topic", "tags", "spans")
# The 97.5% quantile of Student's t distribution with df degrees of freedom (df = seeds - 1),
# for a 95% interval of a mean over a few seeds; past 30, the normal distribution's 1.96 (at
# most 4% narrower).
T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
         16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074,
         23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045,
         30: 2.042}


@dataclass(frozen=True)
class SeedMean:
    """The mean of one score over fine-tuning seeds, with its 95% t-interval."""

    values: tuple[float, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def interval(self) -> tuple[float, float]:
        if len(self.values) < 2:
            return self.mean, self.mean
        half = T_975.get(len(self.values) - 1, 1.96) * statistics.stdev(self.values) / math.sqrt(
            len(self.values))
        return max(0.0, self.mean - half), min(1.0, self.mean + half)

    def __format__(self, spec: str) -> str:
        low, high = self.interval
        return f"{self.mean:.3f} [{low:.3f}, {high:.3f}]"


class TokenBag(BagOfWords):
    """The bag of words of tagging: a tag from the token's identity alone, no context."""

    def forward(self, tokens: Tensor, segments: Tensor, valid_lens: Tensor | None = None):
        """tokens: (B, T). Returns logits (B, T, C); ``segments``, ``valid_lens`` are ignored."""
        return self.weights(tokens) + self.bias


def data_for(task: str, sentences: Sequence[TaskSentence], tokenizer: WordPieceTokenizer,
             max_len: int, *, words_only: bool = False) -> TaskData:
    """The examples of ``task`` ("topic", "tags" or "spans") that ``sentences`` give: the topic
    task takes the sentences of one word, question answering those of two."""
    check_choice("task", task, TASK_NAMES)
    if task == "topic":
        return topic_data([s for s in sentences if s.topic is not None], tokenizer, max_len)
    if task == "tags":
        return tagging_data(sentences, tokenizer, max_len, words_only=words_only)
    return span_data([s for s in sentences if s.topic is None], tokenizer, max_len)


def new_model(task: str, start: str, bert: BERTModel, seed: int) -> nn.Module:
    """The model of one run: the task's head on ``bert`` or on a random twin of it, token
    embeddings frozen; or the bag-of-words baseline."""
    if start == "bag":
        vocab_size = bert.config.vocab_size
        return (BagOfWords(vocab_size, NUM_TOPICS, seed=seed) if task == "topic"
                else TokenBag(vocab_size, len(TAGS), seed=seed))
    if start == "random":
        bert = init_model(bert.config, seed=100 + seed)
    model = (BERTClassifier(bert, NUM_TOPICS, seed=seed) if task == "topic"
             else BERTTagger(bert, len(TAGS), seed=seed) if task == "tags"
             else BERTQuestionAnswerer(bert, seed=seed))
    model.encoder.token_embedding.weight.requires_grad_(False)
    return model


def score(task: str, model: nn.Module, data: TaskData) -> float:
    """Accuracy: of the topic, of each labelled token's tag, of the answer span (exact)."""
    if task == "spans":
        return span_accuracy(model, data).value
    return evaluate_task(model, data, NUM_TOPICS if task == "topic" else len(TAGS)).overall.value


def most_common_span(train: TaskData, test: TaskData) -> float:
    """The bag of words of question answering: for each question, the span most often its
    answer in training, counted from the sentence's first token. Returns its test accuracy."""
    def answers(data):  # (question tokens, answer counted from the sentence start)
        starts = data.segments.argmax(1, keepdim=True)  # segment 1 starts at the sentence
        for i, (first, last) in enumerate((data.labels - starts).tolist()):
            yield tuple(data.tokens[i, 1:int(starts[i]) - 1].tolist()), (first, last)

    common: dict[tuple, Counter] = {}
    for question, span in answers(train):
        common.setdefault(question, Counter())[span] += 1
    hits = sum(span == common[q].most_common(1)[0][0] for q, span in answers(test) if q in common)
    return hits / len(test)


def compare(task: str, bert: BERTModel, train: TaskData, tests: dict[str, TaskData],
            seeds: Sequence[int], *, num_steps: int, lr: float,
            bag_lr: float = 0.1) -> dict[tuple[str, str], SeedMean]:
    """Fine-tune each start of :data:`STARTS` once per seed on ``train``; score it on each of
    ``tests``. Returns ``{(start, test name): SeedMean}``."""
    check_choice("task", task, TASK_NAMES)
    check_sized("seeds", seeds, "a list of seeds")
    scores: dict[tuple[str, str], list[float]] = {}
    for seed in seeds:
        for start in STARTS:
            if task == "spans" and start == "bag":
                for name, data in tests.items():
                    scores.setdefault((start, name), []).append(most_common_span(train, data))
                continue
            model = new_model(task, start, bert, seed)
            fine_tune(model, train, num_steps=num_steps, lr=bag_lr if start == "bag" else lr,
                      seed=seed, progress=False)
            for name, data in tests.items():
                scores.setdefault((start, name), []).append(score(task, model, data))
    return {key: SeedMean(tuple(values)) for key, values in scores.items()}


def per_class(sentences: Sequence[TaskSentence], n: int, seed: int) -> list[TaskSentence]:
    """``n`` sentences of one word per class and language, drawn with ``seed``."""
    g = torch.Generator().manual_seed(seed)
    chosen = []
    for lang in sorted({s.lang for s in sentences}):
        for topic in range(NUM_TOPICS):
            group = [s for s in sentences if s.lang == lang and s.topic == topic]
            chosen += [group[i] for i in torch.randperm(len(group), generator=g)[:n].tolist()]
    return chosen


@torch.no_grad()
def word_vector(bert: BERTModel, tokenizer: WordPieceTokenizer, sentence: TaskSentence) -> Tensor:
    """The encoder's output (H,) at the sentence's one word: the mean over its pieces."""
    start, end, *_ = sentence.words[0]
    x = encode_pair(tokenizer, sentence.text)
    offsets = tokenizer.backend.encode(sentence.text, add_special_tokens=False).offsets
    pieces = [1 + i for i, (a, _) in enumerate(offsets) if start <= a < end]  # after <cls>
    H = bert.encoder(torch.tensor([x.ids]), torch.tensor([x.segments]))  # (1, T, H)
    return H[0, pieces].mean(0)


def neighbours(bert: BERTModel, tokenizer: WordPieceTokenizer,
               sentences: Sequence[TaskSentence], k: int = 3) -> dict[str, list[str]]:
    """For each held-out word, its ``k`` nearest seen words by cosine similarity of their
    vectors, each word's vector averaged over the test sentences of one word that hold it."""
    vectors: dict[tuple[str, str, bool], list[Tensor]] = {}
    for s in sentences:
        if s.topic is not None:
            start, end, cls, held = s.words[0]
            vectors.setdefault((s.text[start:end], cls, held), []).append(
                word_vector(bert, tokenizer, s))
    words = {key: torch.stack(vs).mean(0) for key, vs in vectors.items()}
    seen = [key for key in words if not key[2]]
    S = torch.nn.functional.normalize(torch.stack([words[key] for key in seen]), dim=1)
    out = {}
    for key in sorted((key for key in words if key[2]), key=lambda w: CLASSES.index(w[1])):
        similar = S @ torch.nn.functional.normalize(words[key], dim=0)
        out[key[0]] = [seen[i][0] for i in similar.topk(k).indices.tolist()]
    return out


def load_experiment(directory=SMALL_BERT_DIR) -> dict:
    """The recorded figures: ``{"tasks": {task: {(start, lang, part): SeedMean}}, "curve":
    {n: {(start, lang, part): SeedMean}}, ...}``, the rest as written."""
    report = read_json(checked_file(directory, EXPERIMENT_FILE, 1 << 20))

    def means(scores: dict) -> dict:
        return {tuple(key.split("|")): SeedMean(tuple(values)) for key, values in scores.items()}

    return {**report, "tasks": {task: means(v) for task, v in report["tasks"].items()},
            "curve": {int(n): means(v) for n, v in report["curve"].items()}}
