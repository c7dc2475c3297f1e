"""Labelled data for fine-tuning: three small bilingual tasks built from the corpus templates.

The shipped sets (``bertlib/assets/tasks/{en,zh}.jsonl``, written by ``scripts/make_tasks.py``)
hold one sentence of a generated story per line, with its topic, its story, its template and
the character spans of the names, places and times the template filled in. Four tasks follow:

* **topic** (sentence level): which of the 12 story topics a sentence is about;
* **pair** (pair level): do two sentences come from the same story? The wrong partner comes
  from a story about another topic, in the same language;
* **tags** (token level): is each token part of a name, a place, a time, or none of them?
* **spans** (question answering): a question (who? where? when?) paired with the sentence; the
  answer is the span of the sentence's tokens that holds the name, place or time.

:func:`split_by_template` holds out whole templates, so a held-out sentence is never a
training sentence with other names filled in.

Shapes: N = examples, T = sequence length.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from bertlib.assets import TASKS_DIR
from bertlib.inputs import EncodedInput, encode_pair, stack_inputs
from bertlib.support.checks import check_choice, check_int_in
from bertlib.support.files import checked_file, read_text
from bertlib.support.i18n import CORPUS_LANGUAGES, text
from bertlib.support.rng import make_generator
from bertlib.text.tokenizer import WordPieceTokenizer, check_text

NUM_TOPICS = 12
TAGS = ("O", "NAME", "PLACE", "TIME")  # tag ids are positions in this tuple
IGNORE = -100  # the label of positions no loss is computed on (<cls>, <sep>, padding)
SAME_STORY, OTHER_STORY = 1, 0
TASKS = ("topic", "pair", "tags")
# The question asked for each kind of span, in the sentence's language: short, and spelt with
# pieces the small BERT's vocabulary holds (its stories never ask a question).
QUESTIONS = {"en": {"NAME": "who", "PLACE": "where", "TIME": "when"},
             "zh": {"NAME": "哪个人", "PLACE": "哪儿", "TIME": "哪天"}}
# A task file is untrusted input: the shipped sets hold 0.2 MB each.
TASK_FILE_MAX_BYTES = 64 * 2**20
FIELDS = ("text", "topic", "story", "template", "spans")
# The shortest inputs that hold a token of each text: <cls> x <sep>, <cls> a <sep> b <sep>.
MIN_LEN_ONE, MIN_LEN_PAIR = 3, 5


@dataclass(frozen=True)
class TaskSentence:
    """One sentence of one generated story, with everything the three tasks need."""

    text: str
    lang: str
    topic: int
    story: int
    template: str  # "topic.step.wording"
    spans: tuple[tuple[int, int, str], ...]  # character spans of names, places and times

    def __post_init__(self) -> None:
        # Read from a task file, which is untrusted: every field is checked.
        check_text("text", self.text)
        check_int_in("topic", self.topic, 0, NUM_TOPICS - 1)
        check_int_in("story", self.story, 0)
        if not isinstance(self.template, str) or not re.fullmatch(r"\d+\.\d+\.\d+", self.template):
            raise ValueError(f'template must be "topic.step.wording", three integers; got '
                             f"{self.template!r:.80}")
        _check_spans(self.spans, len(self.text))
        object.__setattr__(self, "spans", tuple(tuple(span) for span in self.spans))


def _check_spans(spans, length: int) -> None:
    if isinstance(spans, str) or not isinstance(spans, Sequence):
        raise ValueError(f"spans must be a list of (start, end, kind); got {spans!r:.80}")
    for i, span in enumerate(spans):
        if isinstance(span, str) or not isinstance(span, Sequence) or len(span) != 3:
            raise ValueError(f"spans[{i}] must be (start, end, kind); got {span!r:.80}")
        check_int_in(f"spans[{i}] start", span[0], 0, length - 1, " (a character of the text)")
        check_int_in(f"spans[{i}] end", span[1], span[0] + 1, length, " (after its start)")
        check_choice(f"spans[{i}] kind", span[2], TAGS[1:])


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
        return TaskSentence(row["text"], lang, row["topic"], row["story"], row["template"],
                            row["spans"])
    except ValueError as err:  # json.JSONDecodeError is one
        raise ValueError(f"{where}: {err}") from None
    except RecursionError:  # "[[[[..." nested deeper than Python's stack
        raise ValueError(f"{where}: JSON nested too deep") from None


def class_names(task: str, lang: str | None = None) -> list[str]:
    """The names of a task's classes (or tags) in ``lang``, in label order."""
    check_choice("task", task, TASKS)
    keys = {"topic": [f"topic_{i}" for i in range(NUM_TOPICS)],
            "pair": ["pair_other", "pair_same"],
            "tags": [f"tag_{tag}" for tag in TAGS]}[task]
    return [text(key, lang) for key in keys]


@dataclass
class TemplateSplit:
    """Sentences split by template: no template has sentences on both sides."""

    train: list[TaskSentence]
    held_out: list[TaskSentence]
    held_out_templates: frozenset[tuple[str, str]]  # (language, template)


def split_by_template(sentences: Sequence[TaskSentence], *, held_out_steps: int = 3,
                      seed: int = 0) -> TemplateSplit:
    """Hold out one wording of ``held_out_steps`` story steps per topic and language; the
    other stays in training, so every step is taught but held-out wordings are never labelled:
    held-out accuracy measures generalising, not remembering templates with other names."""
    steps: dict[tuple[str, int], set[int]] = {}
    for s in sentences:
        steps.setdefault((s.lang, s.topic), set()).add(int(s.template.split(".")[1]))
    g = make_generator(seed=seed)
    held = set()
    for (lang, topic), found in sorted(steps.items()):
        order = sorted(found)
        for i in torch.randperm(len(order), generator=g)[:held_out_steps].tolist():
            wording = int(torch.randint(2, (1,), generator=g))
            held.add((lang, f"{topic}.{order[i]}.{wording}"))
    split = TemplateSplit([], [], frozenset(held))
    for s in sentences:
        (split.held_out if (s.lang, s.template) in held else split.train).append(s)
    return split


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
    """``<cls> sentence <sep>`` labelled with its story's topic (0 to 11)."""
    _check_builder_args(sentences, max_len, MIN_LEN_ONE)
    inputs = [encode_pair(tokenizer, s.text, max_len=max_len) for s in sentences]
    return _batch(inputs, torch.tensor([s.topic for s in sentences]),
                  [s.lang for s in sentences], tokenizer)


def pair_data(sentences: Sequence[TaskSentence], tokenizer: WordPieceTokenizer, max_len: int,
              *, seed: int) -> TaskData:
    """``<cls> A <sep> B <sep>`` labelled SAME_STORY (1) or OTHER_STORY (0), half each: every
    sentence with a story-mate in ``sentences`` is an A once; B comes from ``sentences`` only
    (held-out pairs use held-out templates only), a wrong B from another topic, same language."""
    _check_builder_args(sentences, max_len, MIN_LEN_PAIR)
    g = make_generator(seed=seed)
    stories: dict[tuple[str, int], list[int]] = {}
    topics: dict[tuple[str, int], list[int]] = {}
    for i, s in enumerate(sentences):
        stories.setdefault((s.lang, s.story), []).append(i)
        topics.setdefault((s.lang, s.topic), []).append(i)
    # For each language and topic, the wrong partners: the other topics' sentences, in order.
    others = {(lang, topic): sorted(j for (lang2, topic2), members in topics.items()
                                    if lang2 == lang and topic2 != topic for j in members)
              for lang, topic in topics}
    for (lang, topic), wrong in others.items():
        if not wrong:
            raise ValueError(f"sentences must hold at least two topics in each language, for "
                             f"the wrong partners; the {lang} ones are all about topic {topic}")
    inputs, labels, langs = [], [], []
    for i, a in enumerate(sentences):
        mates = [j for j in stories[a.lang, a.story] if j != i]
        if not mates:
            continue
        if float(torch.rand(1, generator=g)) < 0.5:
            b, label = mates[int(torch.randint(len(mates), (1,), generator=g))], SAME_STORY
        else:
            wrong = others[a.lang, a.topic]
            b, label = wrong[int(torch.randint(len(wrong), (1,), generator=g))], OTHER_STORY
        inputs.append(encode_pair(tokenizer, a.text, sentences[b].text, max_len))
        labels.append(label)
        langs.append(a.lang)
    return _batch(inputs, torch.tensor(labels), langs, tokenizer)


def _token_starts(sentence: TaskSentence, tokenizer: WordPieceTokenizer) -> list[int]:
    """The character where each WordPiece token of the sentence starts."""
    return [start for start, _ in tokenizer.backend.encode(sentence.text,
                                                            add_special_tokens=False).offsets]


def token_tags(sentence: TaskSentence, tokenizer: WordPieceTokenizer) -> list[int]:
    """One tag id per WordPiece token of the sentence: the kind of the span the token starts
    in, else ``O``. A word cut into pieces gives every piece the word's tag."""
    tags = []
    for start in _token_starts(sentence, tokenizer):
        kinds = [kind for s, e, kind in sentence.spans if s <= start < e]
        tags.append(TAGS.index(kinds[0]) if kinds else 0)
    return tags


def tagging_data(sentences: Sequence[TaskSentence], tokenizer: WordPieceTokenizer,
                 max_len: int) -> TaskData:
    """``<cls> sentence <sep>`` with one tag per token; ``<cls>``, ``<sep>`` and padding get
    ``IGNORE``, so that no loss and no accuracy is computed there."""
    _check_builder_args(sentences, max_len, MIN_LEN_ONE)
    inputs = [encode_pair(tokenizer, s.text, max_len=max_len) for s in sentences]
    T = max(len(x.ids) for x in inputs) if inputs else 0
    labels = torch.full((len(inputs), T), IGNORE)
    for i, (s, x) in enumerate(zip(sentences, inputs, strict=True)):
        tags = token_tags(s, tokenizer)[: len(x.ids) - 2]  # as encode_pair truncated
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
