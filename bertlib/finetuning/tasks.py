"""Labelled data for fine-tuning: three small bilingual tasks in which the word is the evidence.

The shipped sets (``bertlib/assets/tasks/{en,zh}.jsonl``, written by ``scripts/make_tasks.py``)
hold one sentence per line: a *neutral frame* ("The letter was about X.") with one or two words
of six word classes filled in, and for each word its character span, its class and whether it is
*held out*. Of the 12 words of each class, 8 are seen in training and 4 are held out: they occur
in no training sentence, only in the unlabelled pretraining corpus and in test sentences.
Training and test sentences also use different frames. Three tasks follow:

* **topic** (sentence level): which class the sentence's one word belongs to: a person, a place,
  a time, a fruit, an animal or a sport;
* **tags** (token level): is each token part of a name, a place, a time, or none of them?
* **spans** (question answering): a question (who? where? when?) paired with a sentence of two
  words; the answer is the span of the sentence's tokens that holds the name, place or time.

Shapes: N = examples, T = sequence length.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from bertlib.assets import TASKS_DIR
from bertlib.inputs import EncodedInput, encode_pair, stack_inputs
from bertlib.support.checks import check_choice, check_int_in
from bertlib.support.files import checked_file, read_text
from bertlib.support.i18n import CORPUS_LANGUAGES, text
from bertlib.text.tokenizer import WordPieceTokenizer, check_text

CLASSES = ("NAME", "PLACE", "TIME", "fruit", "animal", "sport")  # topic ids: positions here
NUM_TOPICS = len(CLASSES)
TAGS = ("O", "NAME", "PLACE", "TIME")  # tag ids: positions here; fruit, animal, sport are O
IGNORE = -100  # the label of positions no loss is computed on (<cls>, <sep>, padding)
TASKS = ("topic", "tags")
SPLITS = ("train", "test")
# The question asked for each kind of span, in the sentence's language: short, and spelt with
# pieces the small BERT's vocabulary holds.
QUESTIONS = {"en": {"NAME": "who", "PLACE": "where", "TIME": "when"},
             "zh": {"NAME": "哪个人", "PLACE": "哪儿", "TIME": "哪天"}}
# A task file is untrusted input: the shipped sets hold 0.2 MB each.
TASK_FILE_MAX_BYTES = 64 * 2**20
FIELDS = ("text", "split", "words")
# The shortest inputs that hold a token of each text: <cls> x <sep>, <cls> a <sep> b <sep>.
MIN_LEN_ONE, MIN_LEN_PAIR = 3, 5


@dataclass(frozen=True)
class TaskSentence:
    """One labelled sentence: its text, its side of the split and its class words."""

    text: str
    lang: str
    split: str  # "train" or "test"
    words: tuple[tuple[int, int, str, bool], ...]  # (start, end, class, held out) per word

    def __post_init__(self) -> None:
        # Read from a task file, which is untrusted: every field is checked.
        check_text("text", self.text)
        check_choice("split", self.split, SPLITS)
        if isinstance(self.words, str) or not isinstance(self.words, Sequence) or not self.words:
            raise ValueError(f"words must be a list of (start, end, class, held out); got "
                             f"{self.words!r:.80}")
        for i, word in enumerate(self.words):
            if isinstance(word, str) or not isinstance(word, Sequence) or len(word) != 4:
                raise ValueError(f"words[{i}] must be (start, end, class, held out); got "
                                 f"{word!r:.80}")
            check_int_in(f"words[{i}] start", word[0], 0, len(self.text) - 1,
                         " (a character of the text)")
            check_int_in(f"words[{i}] end", word[1], word[0] + 1, len(self.text),
                         " (after its start)")
            check_choice(f"words[{i}] class", word[2], CLASSES)
            if not isinstance(word[3], bool):
                raise ValueError(f"words[{i}] held out must be true or false; got {word[3]!r:.80}")
        object.__setattr__(self, "words", tuple(tuple(word) for word in self.words))

    @property
    def topic(self) -> int | None:
        """The class id of the sentence's word; None for a sentence of two words."""
        return CLASSES.index(self.words[0][2]) if len(self.words) == 1 else None

    @property
    def held_out(self) -> bool:
        """Does the sentence hold a held-out word?"""
        return any(held for *_, held in self.words)

    @property
    def spans(self) -> tuple[tuple[int, int, str], ...]:
        """The character spans of its names, places and times: (start, end, tag)."""
        return tuple((start, end, cls) for start, end, cls, _ in self.words if cls in TAGS)


def load_task_sentences(directory: str | Path = TASKS_DIR) -> list[TaskSentence]:
    """Every sentence of the sets in ``directory`` (``en.jsonl``, ``zh.jsonl``: UTF-8, one
    JSON object per line), English first, in file order."""
    sentences = []
    for lang in CORPUS_LANGUAGES:
        path = checked_file(directory, f"{lang}.jsonl", TASK_FILE_MAX_BYTES)
        lines = read_text(path).splitlines()
        if not lines:
            raise ValueError(f"{path} holds no sentence")
        sentences += [_read_sentence(line, lang, f"{path}, line {number}")
                      for number, line in enumerate(lines, 1)]
    return sentences


def _read_sentence(line: str, lang: str, where: str) -> TaskSentence:
    """One line of a task file; ``where`` (file and line) starts every message."""
    try:
        row = json.loads(line)
        if not isinstance(row, dict) or not set(FIELDS) <= set(row):
            raise ValueError(f"must be a JSON object with the keys {list(FIELDS)}; got "
                             f"{line!r:.80}")
        return TaskSentence(row["text"], lang, row["split"], row["words"])
    except ValueError as err:  # json.JSONDecodeError is one
        raise ValueError(f"{where}: {err}") from None
    except RecursionError:  # "[[[[..." nested deeper than Python's stack
        raise ValueError(f"{where}: JSON nested too deep") from None


def class_names(task: str, lang: str | None = None) -> list[str]:
    """The names of a task's classes (or tags) in ``lang``, in label order."""
    check_choice("task", task, TASKS)
    keys = {"topic": [f"topic_{c}" for c in CLASSES], "tags": [f"tag_{tag}" for tag in TAGS]}
    return [text(key, lang) for key in keys[task]]


@dataclass
class TaskSplit:
    """The training sentences, and the test sentences with seen words and with held-out words."""

    train: list[TaskSentence]
    seen: list[TaskSentence]
    held_out: list[TaskSentence]


def split_tasks(sentences: Sequence[TaskSentence]) -> TaskSplit:
    """The sentences by their side of the split; test sentences by their words."""
    test = [s for s in sentences if s.split == "test"]
    return TaskSplit([s for s in sentences if s.split == "train"],
                     [s for s in test if not s.held_out], [s for s in test if s.held_out])


@dataclass
class TaskData:
    """Padded tensors for N examples of one task, and each example's language."""

    tokens: torch.Tensor  # (N, T) long, padded with <pad>
    segments: torch.Tensor  # (N, T) long
    valid_lens: torch.Tensor  # (N,) long
    labels: torch.Tensor  # (N,) a class per example, or (N, T) a tag per token (IGNORE elsewhere)
    langs: list[str]

    def __len__(self) -> int:
        return self.tokens.shape[0]

    def tensors(self) -> tuple[torch.Tensor, ...]:
        return self.tokens, self.segments, self.valid_lens, self.labels

    def select(self, lang: str) -> TaskData:
        """The examples in one language."""
        rows = torch.tensor([x == lang for x in self.langs])
        return TaskData(*(t[rows] for t in self.tensors()), [lang] * int(rows.sum()))


def _check_builder_args(sentences: Sequence[TaskSentence], max_len: int,
                        shortest: int) -> None:
    if isinstance(sentences, str) or not isinstance(sentences, Sequence) or not sentences:
        raise ValueError(f"sentences must hold at least one sentence, a list of TaskSentence "
                         f"(load_task_sentences() gives them); got {sentences!r:.80}")
    check_int_in("max_len", max_len, shortest, None,
                 " (room for the special tokens and a token of each text)")


def _batch(inputs: list[EncodedInput], labels: torch.Tensor, langs: list[str],
           tokenizer: WordPieceTokenizer) -> TaskData:
    if not inputs:
        raise ValueError("sentences must hold at least one sentence (none gave an example)")
    return TaskData(*stack_inputs(inputs, tokenizer.vocab.pad_id), labels, langs)


def topic_data(sentences: Sequence[TaskSentence], tokenizer: WordPieceTokenizer,
               max_len: int) -> TaskData:
    """``<cls> sentence <sep>`` labelled with the class of its word (0 to 5): sentences of one
    word."""
    _check_builder_args(sentences, max_len, MIN_LEN_ONE)
    two = next((i for i, s in enumerate(sentences) if s.topic is None), None)
    if two is not None:
        raise ValueError(f"sentences must each hold one word for the topic task; sentences[{two}] "
                         f"holds {len(sentences[two].words)}: {sentences[two].text!r:.80}")
    inputs = [encode_pair(tokenizer, s.text, max_len=max_len) for s in sentences]
    return _batch(inputs, torch.tensor([s.topic for s in sentences]),
                  [s.lang for s in sentences], tokenizer)


def _token_starts(sentence: TaskSentence, tokenizer: WordPieceTokenizer) -> list[int]:
    """The character where each WordPiece token of the sentence starts."""
    return [start for start, _ in tokenizer.encode(sentence.text).offsets]


def token_tags(sentence: TaskSentence, tokenizer: WordPieceTokenizer,
               words_only: bool = False) -> list[int]:
    """One tag id per WordPiece token of the sentence: the kind of the span the token starts
    in, else ``O`` (``IGNORE`` outside the class words with ``words_only``). A word cut into
    pieces gives every piece its tag (the BERT paper scores the first piece only)."""
    classes = [next((cls for s, e, cls, _ in sentence.words if s <= start < e), None)
               for start in _token_starts(sentence, tokenizer)]
    return [IGNORE if cls is None and words_only else TAGS.index(cls) if cls in TAGS else 0
            for cls in classes]


def tagging_data(sentences: Sequence[TaskSentence], tokenizer: WordPieceTokenizer,
                 max_len: int, *, words_only: bool = False) -> TaskData:
    """``<cls> sentence <sep>`` with one tag per token; ``<cls>``, ``<sep>`` and padding get
    ``IGNORE`` (no loss, no accuracy), and with ``words_only`` the tokens outside the class
    words too: accuracy then measures the words alone, not their frame (``O`` throughout)."""
    _check_builder_args(sentences, max_len, MIN_LEN_ONE)
    inputs = [encode_pair(tokenizer, s.text, max_len=max_len) for s in sentences]
    T = max(len(x.ids) for x in inputs) if inputs else 0
    labels = torch.full((len(inputs), T), IGNORE)
    for i, (s, x) in enumerate(zip(sentences, inputs, strict=True)):
        tags = token_tags(s, tokenizer, words_only)[: len(x.ids) - 2]  # as encode_pair truncated
        labels[i, 1: 1 + len(tags)] = torch.tensor(tags, dtype=torch.long)
    return _batch(inputs, labels, [s.lang for s in sentences], tokenizer)


def span_data(sentences: Sequence[TaskSentence], tokenizer: WordPieceTokenizer, max_len: int,
              kinds: Sequence[str] = TAGS[1:]) -> TaskData:
    """``<cls> question <sep> sentence <sep>`` per name, place or time (of ``kinds``), labelled
    with the answer's first and last token in the input, (N, 2); none where a kind occurs twice
    (an ambiguous question) or ``max_len`` cuts the answer off."""
    _check_builder_args(sentences, max_len, MIN_LEN_PAIR)
    if isinstance(kinds, str) or not kinds or not set(kinds) <= set(TAGS[1:]):
        raise ValueError(f"kinds must be a list of some of {list(TAGS[1:])}; got {kinds!r:.80}")
    inputs, labels, langs = [], [], []
    for s in sentences:
        found = [kind for _, _, kind in s.spans]
        starts = _token_starts(s, tokenizer)
        for begin, end, kind in s.spans:
            if kind not in kinds or found.count(kind) > 1:
                continue
            x = encode_pair(tokenizer, QUESTIONS[s.lang][kind], s.text, max_len)
            inside = [i for i, c in enumerate(starts) if begin <= c < end]
            offset = x.boundary  # the sentence's first token in the input
            last = offset + inside[-1]
            if last >= len(x.ids) - 1:  # cut off (the last token is <sep>)
                continue
            inputs.append(x)
            labels.append([offset + inside[0], last])
            langs.append(s.lang)
    return _batch(inputs, torch.tensor(labels).reshape(-1, 2), langs, tokenizer)
