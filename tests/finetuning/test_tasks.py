import json
import os
import re
import threading
from collections import Counter

import pytest

from bertlib import load_small_bert
from bertlib.assets import SMALL_CORPUS_DIR
from bertlib.finetuning.tasks import (
    IGNORE,
    NUM_TOPICS,
    QUESTIONS,
    TAGS,
    TaskSentence,
    class_names,
    load_task_sentences,
    span_data,
    split_tasks,
    tagging_data,
    token_tags,
    topic_data,
)


@pytest.fixture(scope="module")
def sentences():
    return load_task_sentences()


@pytest.fixture(scope="module")
def tokenizer():
    return load_small_bert()[1]


def test_the_sets_are_bilingual_and_cover_every_class_on_both_sides(sentences):
    split = split_tasks(sentences)
    assert len(split.train) + len(split.seen) + len(split.held_out) == len(sentences)
    for part in (split.train, split.seen, split.held_out):
        assert {(s.lang, s.topic) for s in part if s.topic is not None} == {
            (lang, t) for lang in ("en", "zh") for t in range(NUM_TOPICS)}
    assert all(s.split == "train" and not s.held_out for s in split.train)
    assert all(s.split == "test" and all(h for *_, h in s.words) for s in split.held_out)


def test_no_held_out_word_frame_or_sentence_reaches_training(sentences):
    """The experiment's honesty rule, read from the data files: a held-out word (in Chinese,
    any character of one) occurs in no training sentence, and training and test sentences share
    no frame."""
    for lang in ("en", "zh"):
        mine = [s for s in sentences if s.lang == lang]
        held = {s.text[b:e] for s in mine for b, e, _, h in s.words if h}
        assert len(held) == 24  # 4 of each of the 6 classes
        train = [s.text for s in mine if s.split == "train"]
        for word in held:
            if lang == "en":
                pattern = re.compile(rf"\b{re.escape(word)}\b", re.IGNORECASE)
                assert not any(pattern.search(t) for t in train), word
            else:
                assert not any(ch in t for ch in word for t in train), word

        def frame(s):  # the sentence with its words taken out
            out, last = "", 0
            for b, e, *_ in sorted(s.words):
                out, last = out + s.text[last:b] + "X", e
            return (out + s.text[last:]).lower()

        train_frames = {frame(s) for s in mine if s.split == "train"}
        test_frames = {frame(s) for s in mine if s.split == "test"}
        assert train_frames and test_frames and train_frames.isdisjoint(test_frames)
        assert not {s.text for s in mine if s.split == "test"} & set(train)


def test_held_out_words_are_in_the_pretraining_corpus(sentences):
    """What pretraining can know and labels cannot: every held-out word occurs in the corpus."""
    for lang in ("en", "zh"):
        corpus = (SMALL_CORPUS_DIR / f"{lang}.txt").read_text(encoding="utf-8")
        held = {s.text[b:e] for s in sentences if s.lang == lang for b, e, _, h in s.words if h}
        counts = {word: corpus.count(word) for word in held}
        assert min(counts.values()) >= 20, counts


def test_topic_data_is_one_padded_sentence_per_example(sentences, tokenizer):
    zh_one = [s for s in sentences if s.lang == "zh" and s.topic is not None]
    some = sentences[:7] + zh_one[-3:]
    data = topic_data(some, tokenizer, max_len=64)
    assert data.labels.tolist() == [s.topic for s in some]
    assert data.langs == [s.lang for s in some]
    vocab = tokenizer.vocab
    for i, s in enumerate(some):
        n = int(data.valid_lens[i])
        assert vocab.to_tokens(data.tokens[i, :n].tolist()) == ["<cls>",
                                                                *tokenizer.tokenize(s.text),
                                                                "<sep>"]
        assert (data.tokens[i, n:] == vocab.pad_id).all() and (data.segments[i] == 0).all()
    assert len(data.select("zh")) == 3 and data.select("zh").langs == ["zh"] * 3


def test_tags_follow_the_words_and_ignore_specials_and_padding(sentences, tokenizer):
    en = TaskSentence("Anna took the dogs to Paris.", "en", "train",
                      ((0, 4, "NAME", False), (14, 18, "animal", False), (22, 27, "PLACE", False)))
    tags = token_tags(en, tokenizer)
    assert list(zip(tokenizer.tokenize(en.text), (TAGS[t] for t in tags), strict=True)) == [
        ("anna", "NAME"), ("took", "O"), ("the", "O"), ("dogs", "O"), ("to", "O"),
        ("paris", "PLACE"), (".", "O")]
    # words_only: the frame is IGNOREd, the words keep their tags (an animal's is O).
    assert [TAGS[t] if t >= 0 else None for t in token_tags(en, tokenizer, words_only=True)] == [
        "NAME", None, None, "O", None, "PLACE", None]
    zh = next(s for s in sentences if s.lang == "zh" and any(k == "PLACE" for *_, k in s.spans))
    start, end, _ = next(span for span in zh.spans if span[2] == "PLACE")
    tokens = tokenizer.tokenize(zh.text)
    place = [tok for tok, t in zip(tokens, token_tags(zh, tokenizer), strict=True)
             if TAGS[t] == "PLACE"]
    assert "".join(place) == zh.text[start:end]  # one token per Chinese character
    data = tagging_data([en, zh], tokenizer, max_len=64)
    for i in range(2):
        n = int(data.valid_lens[i])
        assert data.labels[i, 0] == IGNORE and data.labels[i, n - 1] == IGNORE
        assert (data.labels[i, n:] == IGNORE).all() and (data.labels[i, 1:n - 1] >= 0).all()
    short = tagging_data([en], tokenizer, max_len=4)  # <cls> anna took <sep>
    assert short.labels[0].tolist() == [IGNORE, TAGS.index("NAME"), 0, IGNORE]


def test_span_labels_point_at_the_answer_after_the_question(sentences, tokenizer):
    """Every example is <cls> question <sep> sentence <sep>, and its two labels are the first
    and last token of the name, place or time: read back, they spell the span's text."""
    data = span_data(sentences, tokenizer, max_len=64)
    examples = [(s, kind, b, e) for s in sentences for b, e, kind in s.spans
                if [k for *_, k in s.spans].count(kind) == 1]
    assert len(data) == len(examples) > 2000
    for i, (s, kind, b, e) in enumerate(examples):
        n = int(data.valid_lens[i])
        tokens = tokenizer.vocab.to_tokens(data.tokens[i, :n].tolist())
        question = tokenizer.tokenize(QUESTIONS[s.lang][kind])
        assert tokens[:len(question) + 2] == ["<cls>", *question, "<sep>"]
        assert data.segments[i, :n].tolist() == [0] * (len(question) + 2) + [1] * (
            n - len(question) - 2)
        first, last = data.labels[i].tolist()
        answer = tokenizer.backend.decode(data.tokens[i, first:last + 1].tolist())
        assert answer.replace(" ", "") == s.text[b:e].lower().replace(" ", ""), (s.text, answer)
        assert len(question) + 2 <= first <= last < n - 1
    assert Counter(data.langs) == Counter(s.lang for s, *_ in examples)


def test_span_data_skips_ambiguous_and_cut_off_answers(sentences, tokenizer):
    both = TaskSentence("Anna went to Paris on Monday.", "en", "train",
                        ((0, 4, "NAME", False), (13, 18, "PLACE", False), (22, 28, "TIME", False)))
    twice = TaskSentence(both.text, "en", "train", ((13, 18, "TIME", False),
                                                     (22, 28, "TIME", False)))
    with pytest.raises(ValueError, match="none gave an example"):  # "when?" has two answers
        span_data([twice], tokenizer, 64)
    places = span_data([both], tokenizer, max_len=64, kinds=["PLACE"])
    assert len(places) == 1 and tokenizer.vocab.to_tokens(
        places.tokens[0, places.labels[0, 0]].item()) == "paris"
    # <cls> where <sep> anna went to paris <sep>: the place fits, the time is cut off
    assert span_data([both], tokenizer, max_len=8, kinds=["PLACE", "TIME"]).labels.tolist() == [
        [6, 6]]
    with pytest.raises(ValueError, match="kinds must be a list of some of"):
        span_data([both], tokenizer, 64, kinds=["O"])
    for kinds in ([], ()):  # no question to ask: kinds is named, not the sentences
        with pytest.raises(ValueError, match=r"kinds must be a list of some of \['NAME', "
                                             r"'PLACE', 'TIME'\]; got"):
            span_data([both], tokenizer, 64, kinds=kinds)


def test_topic_data_takes_sentences_of_one_word(sentences, tokenizer):
    both = next(s for s in sentences if s.text == "The news mentioned Paris and Peter.")
    with pytest.raises(ValueError, match=r"sentences must each hold one word for the topic "
                                         r"task; sentences\[1\] holds 2"):
        topic_data([sentences[0], both], tokenizer, 64)


def test_class_names_in_both_languages():
    assert class_names("topic", "en") == ["person", "place", "time", "fruit", "animal", "sport"]
    assert class_names("tags", "zh") == ["其他", "人名", "地点", "时间"]
    with pytest.raises(ValueError, match=r"task must be one of \['tags', 'topic'\]"):
        class_names("ner")


def test_empty_input_is_refused(tokenizer):
    with pytest.raises(ValueError, match="sentences must hold at least one sentence"):
        topic_data([], tokenizer, max_len=16)
    with pytest.raises(ValueError, match=r"max_len must be an integer >= 3 .*; got 0"):
        topic_data(load_task_sentences()[:2], tokenizer, max_len=0)


@pytest.mark.parametrize(("builder", "shortest"), [(topic_data, 3), (tagging_data, 3),
                                                   (span_data, 5)])
def test_max_len_must_hold_the_special_tokens_and_a_token_of_each_text(sentences, tokenizer,
                                                                       builder, shortest):
    kwargs = {}
    for max_len in (1, 2, shortest - 1):  # max_len=1 kept the whole sentence; 2 emptied it
        with pytest.raises(ValueError, match=rf"max_len must be an integer >= {shortest} "
                                             rf".*; got {max_len}"):
            builder(sentences[:40], tokenizer, max_len, **kwargs)
    first = TaskSentence("Paris was on Monday.", "en", "train", ((0, 5, "PLACE", False),))
    data = builder(sentences[:40] if builder is not span_data else [first], tokenizer, shortest,
                   **kwargs)  # <cls> where <sep> paris <sep>
    assert data.tokens.shape[1] == shortest
    # A token of each text: <cls> x <sep>, or <cls> a <sep> b <sep>.
    assert data.segments[0].tolist() == [0, 0, 0, 1, 1][:shortest]


def test_sentences_of_the_wrong_kind_are_named(sentences, tokenizer):
    for builder in (topic_data, tagging_data):
        with pytest.raises(ValueError, match="sentences must hold at least one sentence"):
            builder("a story", tokenizer, 16)
    with pytest.raises(ValueError, match=r"kinds must be a list of some of \['NAME', 'PLACE'"):
        span_data(sentences[:5], tokenizer, 16, kinds="NAME")


@pytest.mark.parametrize(("fields", "message"), [
    ({"text": "\ud800 went home"}, r"text is not valid text: the character '\\ud800' at "
                                    r"position 0"),
    ({"split": "dev"}, r"split must be one of \['test', 'train'\]; got 'dev'"),
    ({"words": ((0, 99, "NAME", False),)}, r"words\[0\] end must be an integer in \[1, 13\]"),
    ({"words": ((0, 3, "BANANA", False),)}, r"words\[0\] class must be one of"),
    ({"words": ((0, 3, "NAME", "no"),)}, r"words\[0\] held out must be true or false; got 'no'"),
    ({"words": ((0, 3, "NAME"),)}, r"words\[0\] must be \(start, end, class, held out\)"),
    ({"words": ()}, r"words must be a list of \(start, end, class, held out\); got \(\)"),
])
def test_a_task_sentence_checks_its_fields(fields, message):
    good = {"text": "Tom went home", "lang": "en", "split": "train",
            "words": ((0, 3, "NAME", False),)}
    TaskSentence(**good)
    with pytest.raises(ValueError, match=message):
        TaskSentence(**(good | fields))


def test_a_lone_surrogate_is_a_value_error_naming_the_text(sentences, tokenizer):
    with pytest.raises(ValueError, match="text is not valid text"):
        topic_data([TaskSentence("\ud800", "en", "train", ((0, 1, "NAME", False),))],
                   tokenizer, 16)


def write_tasks(directory, en_lines, zh_lines=None):
    shipped = load_task_sentences()
    zh = [json.dumps({"text": s.text, "split": s.split, "words": [list(x) for x in s.words]},
                     ensure_ascii=False) for s in shipped if s.lang == "zh"][:3]
    (directory / "en.jsonl").write_text("\n".join(en_lines) + "\n", encoding="utf-8")
    (directory / "zh.jsonl").write_text("\n".join(zh_lines or zh) + "\n", encoding="utf-8")


GOOD_LINE = ('{"text": "Maria went to the market.", "split": "train", '
             '"words": [[0, 5, "NAME", false]]}')


@pytest.mark.parametrize(("line", "message"), [
    ('{"text": "x", "split"', r"en.jsonl, line 2: Expecting ':' delimiter"),
    ('{"text": "x", "words": []}',
     r"en.jsonl, line 2: must be a JSON object with the keys \['text', 'split', 'words'\]"),
    ("[1, 2]", r"en.jsonl, line 2: must be a JSON object"),
    ('{"text": "\\ud800", "split": "train", "words": [[0, 1, "NAME", false]]}',
     r"en.jsonl, line 2: text is not valid text"),
    ('{"text": "x", "split": "train", "words": 5}',
     r"en.jsonl, line 2: words must be a list of \(start, end, class, held out\); got 5"),
    ("[" * 100_000, r"en.jsonl, line 2: JSON nested too deep"),
])
def test_a_broken_task_file_is_named_with_its_line(tmp_path, line, message):
    write_tasks(tmp_path, [GOOD_LINE])
    assert load_task_sentences(tmp_path)[0].words == ((0, 5, "NAME", False),)
    write_tasks(tmp_path, [GOOD_LINE, line])
    with pytest.raises(ValueError, match=message):
        load_task_sentences(tmp_path)


def test_task_files_are_untrusted(tmp_path):
    with pytest.raises(ValueError, match="directory must be a path"):
        load_task_sentences(None)
    with pytest.raises(ValueError, match="has no en.jsonl"):
        load_task_sentences(tmp_path)
    write_tasks(tmp_path, [GOOD_LINE])
    (tmp_path / "en.jsonl").unlink()
    (tmp_path / "en.jsonl").symlink_to("/dev/zero")  # would exhaust memory
    with pytest.raises(ValueError, match="en.jsonl must be a regular file"):
        load_task_sentences(tmp_path)
    (tmp_path / "en.jsonl").unlink()
    os.mkfifo(tmp_path / "en.jsonl")  # would block the read forever
    result = []
    reader = threading.Thread(target=lambda: result.append(_refusal(tmp_path)), daemon=True)
    reader.start()
    reader.join(timeout=30)
    assert result and "en.jsonl must be a regular file" in result[0]
    (tmp_path / "en.jsonl").unlink()
    with open(tmp_path / "en.jsonl", "wb") as f:
        f.truncate(65 * 2**20)  # sparse: larger than any task file, without using the disk
    with pytest.raises(ValueError, match="has 68,157,440 bytes; a en.jsonl may have at most"):
        load_task_sentences(tmp_path)
    (tmp_path / "en.jsonl").write_text("")
    with pytest.raises(ValueError, match="en.jsonl holds no sentence"):
        load_task_sentences(tmp_path)


def _refusal(directory) -> str:
    try:
        load_task_sentences(directory)
    except ValueError as err:
        return str(err)
    return "no error"
