import json
import os
import re
import threading
from collections import Counter

import pytest
import torch

from bertlib import load_small_bert
from bertlib.assets import SMALL_CORPUS_DIR
from bertlib.finetuning.tasks import (
    IGNORE,
    NUM_TOPICS,
    OTHER_STORY,
    QUESTIONS,
    SAME_STORY,
    TAGS,
    TaskSentence,
    class_names,
    load_task_sentences,
    pair_data,
    span_data,
    split_by_template,
    tagging_data,
    token_tags,
    topic_data,
)
from bertlib.text.corpus import read_paragraphs


@pytest.fixture(scope="module")
def sentences():
    return load_task_sentences()


@pytest.fixture(scope="module")
def tokenizer():
    return load_small_bert()[1]


def test_the_sets_are_bilingual_cover_every_topic_and_come_from_the_corpus_templates(sentences):
    by_lang = Counter(s.lang for s in sentences)
    assert by_lang == {"en": 1440, "zh": 1440}
    assert {(s.lang, s.topic) for s in sentences} == {(lang, t) for lang in ("en", "zh")
                                                      for t in range(NUM_TOPICS)}
    # Same templates as the pretraining corpus: most task sentences occur in it word for word.
    corpus = {lang: {s for p in read_paragraphs(SMALL_CORPUS_DIR / f"{lang}.txt") for s in p}
              for lang in ("en", "zh")}
    seen = sum(s.text in corpus[s.lang] for s in sentences) / len(sentences)
    assert seen > 0.5
    # Every story is one topic, told in order, one sentence per step.
    steps = Counter((s.lang, s.story) for s in sentences)
    assert set(steps.values()) == {6}


def test_spans_cover_the_names_places_and_times(sentences):
    names = {"Anna", "Tom", "Maria", "David", "Lucy", "Peter", "Emma", "James", "Sara", "Ben",
             "Grace", "Sam", "小明", "小红", "李华", "王芳", "张伟", "陈静", "刘洋", "赵丽", "杨帆",
             "周敏"}
    kinds = Counter()
    for s in sentences:
        for start, end, kind in s.spans:
            kinds[kind] += 1
            piece = s.text[start:end]
            if kind == "NAME":
                assert piece in names, (s.text, piece)
            if kind == "TIME":
                assert re.fullmatch(r"\w+day|星期.|seven|eight|nine|ten|[七八九十]", piece), piece
    assert set(kinds) == {"NAME", "PLACE", "TIME"} and min(kinds.values()) > 50


def test_held_out_templates_are_never_in_training(sentences):
    split = split_by_template(sentences, held_out_steps=3, seed=0)
    train = {(s.lang, s.template) for s in split.train}
    held = {(s.lang, s.template) for s in split.held_out}
    assert train.isdisjoint(held)
    assert held == set(split.held_out_templates)
    assert len(split.train) + len(split.held_out) == len(sentences)
    # Three held-out wordings per topic and language, each of a different step, whose other
    # wording stays in training.
    per_topic = Counter((lang, t.split(".")[0]) for lang, t in held)
    assert set(per_topic.values()) == {3} and len(per_topic) == 2 * NUM_TOPICS
    for lang, template in held:
        topic, step, wording = template.split(".")
        assert (lang, f"{topic}.{step}.{1 - int(wording)}") in train
    # A held-out sentence is never a training sentence: the templates differ in their words.
    assert not {s.text for s in split.held_out} & {s.text for s in split.train}


def test_the_split_depends_on_the_seed_only(sentences):
    a, b = split_by_template(sentences, seed=1), split_by_template(sentences, seed=1)
    assert a.held_out_templates == b.held_out_templates
    assert a.held_out_templates != split_by_template(sentences, seed=2).held_out_templates


def test_topic_data_is_one_padded_sentence_per_example(sentences, tokenizer):
    some = sentences[:7] + sentences[-3:]
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


def test_pairs_are_half_same_story_and_never_mix_languages_or_splits(sentences, tokenizer):
    split = split_by_template(sentences, seed=0)
    data = pair_data(split.held_out, tokenizer, max_len=64, seed=0)
    share = data.labels.float().mean().item()
    assert 0.4 < share < 0.6 and set(data.labels.tolist()) == {SAME_STORY, OTHER_STORY}
    specials = tokenizer.vocab.specials
    for i in range(0, len(data), 7):
        n = int(data.valid_lens[i])
        tokens = tokenizer.vocab.to_tokens(data.tokens[i, :n].tolist())
        sep = tokens.index(specials.sep)
        assert data.segments[i, sep + 1:n].eq(1).all() and data.segments[i, :sep + 1].eq(0).all()
        # Sentences without a name in them occur in many stories: find every one of each.
        a, b = ([s for s in split.held_out if tokenizer.tokenize(s.text) == part]
                for part in (tokens[1:sep], tokens[sep + 1:-1]))
        assert {s.lang for s in a + b} == {data.langs[i]}
        if data.labels[i] == SAME_STORY:
            assert {s.story for s in a} & {s.story for s in b}
        else:
            assert not {s.topic for s in a} & {s.topic for s in b}
    again = pair_data(split.held_out, tokenizer, max_len=64, seed=0)
    assert torch.equal(again.tokens, data.tokens)


def test_tags_follow_the_spans_and_ignore_specials_and_padding(sentences, tokenizer):
    en = next(s for s in sentences if s.text.startswith("On Monday morning, Maria"))
    tags = token_tags(en, tokenizer)
    assert list(zip(tokenizer.tokenize(en.text), (TAGS[t] for t in tags), strict=True))[:4] == [
        ("on", "O"), ("monday", "TIME"), ("morning", "O"), (",", "O")]
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
    short = tagging_data([en], tokenizer, max_len=4)  # <cls> on monday <sep>
    assert short.labels[0].tolist() == [IGNORE, 0, TAGS.index("TIME"), IGNORE]


def test_span_labels_point_at_the_answer_after_the_question(sentences, tokenizer):
    """Every example is <cls> question <sep> sentence <sep>, and its two labels are the first
    and last token of the name, place or time: read back, they spell the span's text."""
    data = span_data(sentences, tokenizer, max_len=64)
    examples = [(s, kind, b, e) for s in sentences for b, e, kind in s.spans
                if [k for *_, k in s.spans].count(kind) == 1]
    assert len(data) == len(examples) > 1000
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
    maria = next(s for s in sentences if s.text.startswith("On Monday morning, Maria"))
    twice = type(maria)(maria.text, "en", 0, 0, "0.0.0", ((3, 9, "TIME"), (19, 24, "TIME")))
    with pytest.raises(ValueError, match="none gave an example"):  # "when?" has two answers
        span_data([twice], tokenizer, 64)
    names = span_data([maria], tokenizer, max_len=64, kinds=["NAME"])
    assert len(names) == 1 and tokenizer.vocab.to_tokens(
        names.tokens[0, names.labels[0, 0]].item()) == "maria"
    # <cls> when <sep> on monday <sep>: the time fits, the name is cut off
    assert span_data([maria], tokenizer, max_len=6).labels.tolist() == [[4, 4]]
    with pytest.raises(ValueError, match="kinds must be a list of some of"):
        span_data([maria], tokenizer, 64, kinds=["O"])
    for kinds in ([], ()):  # no question to ask: kinds is named, not the sentences
        with pytest.raises(ValueError, match=r"kinds must be a list of some of \['NAME', "
                                             r"'PLACE', 'TIME'\]; got"):
            span_data([maria], tokenizer, 64, kinds=kinds)


def test_class_names_in_both_languages():
    assert len(class_names("topic", "en")) == NUM_TOPICS
    assert class_names("tags", "zh") == ["其他", "人名", "地点", "时间"]
    assert class_names("pair", "en")[SAME_STORY] == "same story"
    with pytest.raises(ValueError, match=r"task must be one of \['pair', 'tags', 'topic'\]"):
        class_names("ner")


def test_empty_input_is_refused(tokenizer):
    with pytest.raises(ValueError, match="sentences must hold at least one sentence"):
        topic_data([], tokenizer, max_len=16)
    with pytest.raises(ValueError, match=r"max_len must be an integer >= 3 .*; got 0"):
        topic_data(load_task_sentences()[:2], tokenizer, max_len=0)


@pytest.mark.parametrize(("builder", "shortest"), [(topic_data, 3), (tagging_data, 3),
                                                   (pair_data, 5), (span_data, 5)])
def test_max_len_must_hold_the_special_tokens_and_a_token_of_each_text(sentences, tokenizer,
                                                                       builder, shortest):
    kwargs = {"seed": 0} if builder is pair_data else {}
    for max_len in (1, 2, shortest - 1):  # max_len=1 kept the whole sentence; 2 emptied it
        with pytest.raises(ValueError, match=rf"max_len must be an integer >= {shortest} "
                                             rf".*; got {max_len}"):
            builder(sentences[:40], tokenizer, max_len, **kwargs)
    data = builder(sentences[:40], tokenizer, shortest, **kwargs)
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
    ({"topic": 12}, r"topic must be an integer in \[0, 11\]; got 12"),
    ({"topic": "3"}, r"topic must be an integer in \[0, 11\]; got '3'"),
    ({"story": -1}, r"story must be an integer >= 0; got -1"),
    ({"template": "3"}, r'template must be "topic.step.wording"'),
    ({"spans": ((0, 99, "NAME"),)}, r"spans\[0\] end must be an integer in \[1, 13\]"),
    ({"spans": ((0, 3, "ANIMAL"),)}, r"spans\[0\] kind must be one of"),
    ({"spans": ((0, 3),)}, r"spans\[0\] must be \(start, end, kind\)"),
])
def test_a_task_sentence_checks_its_fields(fields, message):
    good = {"text": "Tom went home", "lang": "en", "topic": 0, "story": 0,
            "template": "0.1.0", "spans": ((0, 3, "NAME"),)}
    TaskSentence(**good)
    with pytest.raises(ValueError, match=message):
        TaskSentence(**(good | fields))


def test_a_lone_surrogate_is_a_value_error_naming_the_text(sentences, tokenizer):
    with pytest.raises(ValueError, match="text is not valid text"):
        topic_data([TaskSentence("\ud800", "en", 0, 0, "0.1.0", ())], tokenizer, 16)


def test_pairs_need_a_second_topic_for_their_wrong_partners(sentences, tokenizer):
    one_topic = [s for s in sentences if s.topic == 0 and s.lang == "en"]
    with pytest.raises(ValueError, match="the en ones are all about topic 0"):
        pair_data(one_topic, tokenizer, 32, seed=0)


def write_tasks(directory, en_lines, zh_lines=None):
    shipped = load_task_sentences()
    zh = [json.dumps({"text": s.text, "topic": s.topic, "story": s.story,
                      "template": s.template, "spans": [list(x) for x in s.spans]},
                     ensure_ascii=False) for s in shipped if s.lang == "zh"][:3]
    (directory / "en.jsonl").write_text("\n".join(en_lines) + "\n", encoding="utf-8")
    (directory / "zh.jsonl").write_text("\n".join(zh_lines or zh) + "\n", encoding="utf-8")


GOOD_LINE = ('{"story": 0, "topic": 0, "template": "0.0.0", "text": "Maria went to the market.",'
             ' "spans": [[0, 5, "NAME"]]}')


@pytest.mark.parametrize(("line", "message"), [
    ('{"story": 0, "topic": 0', r"en.jsonl, line 2: Expecting ',' delimiter"),
    ('{"story": 0, "template": "0.0.0", "text": "x", "spans": []}',
     r"en.jsonl, line 2: must be a JSON object with the keys \['text', 'topic', 'story', "),
    ("[1, 2]", r"en.jsonl, line 2: must be a JSON object"),
    ('{"story": 0, "topic": 0, "template": "0.0.0", "text": "\\ud800", "spans": []}',
     r"en.jsonl, line 2: text is not valid text"),
    ('{"story": 0, "topic": 0, "template": "0.0.0", "text": "x", "spans": 5}',
     r"en.jsonl, line 2: spans must be a list of \(start, end, kind\); got 5"),
    ("[" * 100_000, r"en.jsonl, line 2: JSON nested too deep"),
])
def test_a_broken_task_file_is_named_with_its_line(tmp_path, line, message):
    write_tasks(tmp_path, [GOOD_LINE])
    assert load_task_sentences(tmp_path)[0].spans == ((0, 5, "NAME"),)
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
