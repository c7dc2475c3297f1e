"""Word classes with held-out words: the designed experiment of notebook 10.

Six classes per language: three entity kinds (NAME, PLACE, TIME: the tagger's and question
answering's) and three plain classes (fruit, animal, sport: tagged O). Each class has 12 words.
The first 8 are *seen*: they may occur in labelled data. The last 4 are *held out*: no labelled
training example holds them; they occur only in the unlabelled pretraining corpus.

* ``make_corpus.py`` adds *class paragraphs* to the stories: sentences such as "the peel of
  mangoes", a frame shared by all six classes with one context word of X's class. Only X tells
  which context word fits, so masked-token prediction learns which words go together. A filler
  sentence stands before each class sentence, so that a sentence pair (what MLM and NSP see
  together) holds one class cue only.
* ``make_tasks.py`` writes the labelled sets from *neutral frames* ("The letter was about X."):
  nothing in them tells X's class, so the word is the only evidence. Training frames and test
  frames differ.
"""

from __future__ import annotations

import random
import re
import string

CLASSES = ("NAME", "PLACE", "TIME", "fruit", "animal", "sport")
ENTITY = {"NAME", "PLACE", "TIME"}
SEEN, HELD = slice(0, 8), slice(8, 12)

WORDS = {
    "en": {
        "NAME": ["Anna", "Tom", "Maria", "David", "Lucy", "Peter", "Emma", "James",
                 "Olga", "Victor", "Nina", "Oscar"],
        "PLACE": ["Paris", "London", "Rome", "Berlin", "Madrid", "Vienna", "Prague", "Dublin",
                  "Lisbon", "Oslo", "Cairo", "Warsaw"],
        "TIME": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "January", "February",
                 "March", "Saturday", "Sunday", "April", "August"],
        "fruit": ["apples", "oranges", "bananas", "pears", "grapes", "peaches", "plums",
                  "cherries", "mangoes", "lemons", "melons", "apricots"],
        "animal": ["dogs", "cats", "rabbits", "horses", "goats", "cows", "ducks", "pigs",
                   "foxes", "wolves", "bears", "tigers"],
        "sport": ["football", "tennis", "basketball", "volleyball", "hockey", "cricket", "golf",
                  "rugby", "baseball", "badminton", "cycling", "swimming"],
    },
    "zh": {
        "NAME": ["小明", "小红", "李华", "王芳", "张伟", "陈静", "刘洋", "赵丽",
                 "吴桐", "郑凯", "冯霞", "韩梅"],
        "PLACE": ["北京", "上海", "杭州", "西安", "成都", "广州", "南京", "天津",
                  "重庆", "武汉", "拉萨", "桂林"],
        "TIME": ["星期一", "星期二", "星期三", "星期四", "星期五", "一月", "二月", "三月",
                 "除夕", "黄昏", "凌晨", "端午"],
        "fruit": ["苹果", "香蕉", "橘子", "葡萄", "草莓", "樱桃", "桃子", "西瓜",
                  "柠檬", "菠萝", "荔枝", "榴莲"],
        "animal": ["小狗", "小猫", "兔子", "马", "山羊", "奶牛", "鸭子", "猪",
                   "狐狸", "狼", "熊", "老虎"],
        "sport": ["足球", "篮球", "排球", "网球", "乒乓球", "高尔夫", "冰球", "棒球",
                  "游泳", "摔跤", "拳击", "射箭"],
    },
}

# Class-specific context words: they fill the {c} of the shared frames.
CONTEXT = {
    "en": {
        "NAME": ["sister", "brother", "mother", "father", "smile", "voice", "laugh", "friends"],
        "PLACE": ["streets", "museums", "bridges", "harbour", "parks", "markets", "mayor",
                  "river"],
        "TIME": ["morning", "evening", "night", "afternoon", "end", "start", "weather",
                 "sunrise"],
        "fruit": ["juice", "peel", "seeds", "sweetness", "skin", "taste", "smell", "colour"],
        "animal": ["fur", "tail", "paws", "ears", "claws", "cage", "teeth", "nose"],
        "sport": ["rules", "referee", "players", "goals", "coach", "fans", "matches", "league"],
    },
    "zh": {
        "NAME": ["姐姐", "哥哥", "妈妈", "爸爸", "笑容", "声音", "朋友", "笑声"],
        "PLACE": ["街道", "博物馆", "大桥", "港口", "公园", "市场", "市长", "河流"],
        "TIME": ["早晨", "傍晚", "夜里", "下午", "天气", "开头", "结尾", "日出"],
        "fruit": ["果汁", "果皮", "种子", "甜味", "香味", "颜色", "果肉", "味道"],
        "animal": ["毛", "尾巴", "爪子", "耳朵", "叫声", "笼子", "牙齿", "鼻子"],
        "sport": ["规则", "裁判", "球员", "进球", "教练", "球迷", "比赛", "联赛"],
    },
}

# Frames shared by every class: {X} a class word, {c} a context word of its class, {Name} a
# seen name (the speaker).
CLASS_FRAMES = {
    "en": ["{Name} told us about the {c} of {X}.",
           "We talked about the {c} of {X} for hours.",
           "The {c} of {X} was a surprise to everyone.",
           "Nobody forgot the {c} of {X}.",
           "{Name} still remembers the {c} of {X}.",
           "In the book there was a page on the {c} of {X}."],
    "zh": ["{Name}给我们讲了{X}的{c}。",
           "我们聊了好几个小时{X}的{c}。",
           "{X}的{c}让每个人都很惊讶。",
           "谁也忘不了{X}的{c}。",
           "{Name}一直记得{X}的{c}。",
           "书里有一页专门写{X}的{c}。"],
}

# Neutral frames for the labelled tasks: nothing in them tells X's class.
NEUTRAL_TRAIN = {
    # The word at the start, the middle and the end: with every frame ending in it, a model
    # learns the position before the full stop and fails on test frames where it sits elsewhere.
    "en": ["The letter was about {X}.", "{X} came up again in the news.",
           "The news mentioned {X} twice.", "They asked a question about {X} yesterday.",
           "{X} was the topic of the first chapter.", "I wrote a few words about {X}.",
           "The radio said something about {X} this morning.", "Her message was about {X}.",
           "Nobody asked about {X} at the meeting.", "My friend sent me a note about {X}.",
           "{X} was all anyone could talk about.", "There was a long article on {X}.",
           "We heard a story about {X} last week.", "The teacher mentioned {X} in class.",
           "Have you ever heard of {X}?", "The poster on the wall showed {X}."],
    "zh": ["信里写的是{X}。", "大家一直在谈论{X}。", "新闻里两次提到了{X}。",
           "他们问了一个关于{X}的问题。", "第一章讲的是{X}。", "我写了几句关于{X}的话。",
           "广播里说了一些{X}的事。", "她的短信说的是{X}。",
           "开会时没人问起{X}。", "朋友给我发了一条关于{X}的消息。", "大家都在说{X}。",
           "有一篇很长的文章写的是{X}。", "上周我们听了一个关于{X}的故事。",
           "上课时有人提到了{X}。",
           "你听说过{X}吗？", "墙上的海报画的是{X}。"],
}
NEUTRAL_TEST = {
    "en": ["Nobody had heard of {X} before.", "The last page was about {X}.",
           "We looked for a long time at a picture of {X}."],
    "zh": ["以前谁也没听说过{X}。", "最后一页讲的是{X}。", "我们看了很久一张{X}的照片。"],
}
PAIR_TRAIN = {
    "en": ["The letter was about {A} and {B}.", "The news mentioned {A} and {B}.",
           "They asked about {A} and {B}.", "The first chapter was about {A} and {B}."],
    "zh": ["信里写到了{A}和{B}。", "新闻里提到了{A}和{B}。", "他们问起了{A}和{B}。",
           "第一章讲的是{A}和{B}。"],
}
PAIR_TEST = {
    "en": ["Nobody had heard of {A} or {B} before.", "The last page was about {A} and {B}."],
    "zh": ["以前谁也没听说过{A}和{B}。", "最后一页讲的是{A}和{B}。"],
}


# Sentences with no class word and no context word, between the class sentences of a class
# paragraph: a sentence pair (what NSP and MLM see together) then holds one class sentence only,
# so a masked context word can be told only from X, never from another context word.
FILLER = {
    "en": ["{Name} opened an old notebook.", "The room was quiet.",
           "Everyone listened carefully.", "{Name} wrote it all down.",
           "Then nobody said anything for a while.", "It was a long conversation."],
    "zh": ["{Name}打开了一个旧本子。", "房间里很安静。", "大家都听得很认真。",
           "{Name}把这些都记了下来。", "接着大家安静了一会儿。", "这次谈话很长。"],
}


def words(lang: str, cls: str, part: str = "all") -> list[str]:
    w = WORDS[lang][cls]
    return {"all": w, "seen": w[SEEN], "held": w[HELD]}[part]


def held_out_words(lang: str) -> set[str]:
    return {w for cls in CLASSES for w in words(lang, cls, "held")}


def class_paragraph(lang: str, rng: random.Random, sentences: int = 2) -> list[str]:
    """``sentences`` class sentences about one word X (each with another context word of X's
    class), a filler sentence before each."""
    cls = rng.choice(CLASSES)
    x = rng.choice(words(lang, cls))
    frames = rng.sample(CLASS_FRAMES[lang], sentences)
    contexts = rng.sample(CONTEXT[lang][cls], sentences)
    out = []
    for frame, c in zip(frames, contexts, strict=True):
        name = rng.choice(words(lang, "NAME", "seen"))
        out.append(rng.choice(FILLER[lang]).format(Name=name))
        s = frame.format(Name=name, c=c, X=x)
        out.append(s[:1].upper() + s[1:])
    return out


# ------------------------------------------------------------------ labelled data
def _fill(frame: str, slots: dict[str, str]) -> tuple[str, list[tuple[int, int, str]]]:
    """The frame filled, and the character span of each slot (start, end, slot name)."""
    out, spans = "", []
    for literal, field, _, _ in string.Formatter().parse(frame):
        out += literal
        if field is None:
            continue
        spans.append((len(out), len(out) + len(slots[field]), field))
        out += slots[field]
    return out, spans


def one_word_items(lang: str, frames: list[str], part: str) -> list[dict]:
    """Every frame x every word of ``part`` (seen/held) of every class."""
    items = []
    for f, frame in enumerate(frames):
        for c, cls in enumerate(CLASSES):
            for w in words(lang, cls, part):
                text, spans = _fill(frame, {"X": w})
                text = text[:1].upper() + text[1:]
                (s, e, _), = spans
                items.append({"text": text, "lang": lang, "cls": c, "frame": f, "word": w,
                              "words": [(s, e, cls, w)]})
    return items


def pair_items(lang: str, frames: list[str], part: str, n: int, seed: int) -> list[dict]:
    """``n`` sentences of two words of two different classes (at least one an entity), in
    random order, from ``part``."""
    rng = random.Random(f"pairs-{seed}-{lang}-{part}")
    items = []
    for i in range(n):
        frame = frames[i % len(frames)]
        a_cls = rng.choice(sorted(ENTITY))
        b_cls = rng.choice([c for c in CLASSES if c != a_cls])
        a, b = rng.choice(words(lang, a_cls, part)), rng.choice(words(lang, b_cls, part))
        if rng.random() < 0.5:
            (a, a_cls), (b, b_cls) = (b, b_cls), (a, a_cls)
        text, spans = _fill(frame, {"A": a, "B": b})
        text = text[:1].upper() + text[1:]
        ws = [(s, e, a_cls if f == "A" else b_cls, a if f == "A" else b) for s, e, f in spans]
        items.append({"text": text, "lang": lang, "cls": -1, "frame": i % len(frames),
                      "word": None, "words": ws})
    return items


def leak_check(lang: str, train_texts: list[str]) -> list[str]:
    """Held-out words (and, for Chinese, their characters) found in labelled training text."""
    found = []
    for w in held_out_words(lang):
        for t in train_texts:
            if lang == "en":
                if re.search(rf"\b{re.escape(w)}\b", t, re.IGNORECASE):
                    found.append(f"{w!r} in {t!r}")
            else:
                for ch in w:
                    if ch in t:
                        found.append(f"{w!r} ({ch}) in {t!r}")
    return found
