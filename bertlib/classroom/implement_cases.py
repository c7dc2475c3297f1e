"""The implement-it exercises: bertlib's own function, the cases and what gives the answer away;
hints are ``impl_hint_<key>_<stage>`` in strings.json. Each case builder takes a ``seed``: 0 gives
the cases the tests name, and a check draws a fresh one, so that the cases keep their design
(a padded sequence, a piece that needs ##) but not their values, and no table of answers made
in advance fits them."""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

import tokenizers
import torch
import torch.nn.functional as F

from bertlib.assets import SMALL_BERT_DIR
from bertlib.data import get_next_sentence, make_nsp_pairs
from bertlib.finetuning.finetune import best_span, task_loss
from bertlib.finetuning.tasks import IGNORE
from bertlib.inputs import get_tokens_and_segments
from bertlib.loss import bert_loss
from bertlib.model import MaskLM, MultiHeadAttention, key_padding_mask
from bertlib.support.rng import make_generator, own_global_rng
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.text.vocab import SpecialTokens

Case = tuple[dict[str, str], tuple]  # (the case's name per language, the function's arguments)


@dataclass(frozen=True)
class Implementation:
    """An implement-it exercise: bertlib's own function, the cases it is compared on (from a
    seed), the functions of other libraries whose use gives the answer away (a class stands for
    every method of its instances, those of a compiled library such as ``tokenizers``
    included), and the bertlib functions the learner may call (any other is refused)."""

    reference: Callable
    cases: Callable[[int], list[Case]]
    forbidden: tuple[Callable | type, ...] = ()
    allowed: tuple[Callable, ...] = ()


def _named(*rows: tuple[str, str, str, tuple]) -> list[Case]:
    """The cases of rows ``(English name, Chinese name, Japanese name, arguments)``."""
    return [({"en": en, "zh": zh, "ja": ja}, args) for en, zh, ja, args in rows]


# ---------------------------------------------------------------- the cases, in notebook order
def _tokens_and_segments_cases(seed: int = 0) -> list[Case]:
    """02: ``<cls> A <sep> [B <sep>]``; other words of the same lengths for another seed."""
    words = (["this", "movie", "is", "great"], ["the", "cat", "sat"], ["it", "was", "warm"],
             ["我", "去", "银", "行"], ["存", "钱"], ["hi"], ["yo"], ["hello"])
    if seed:
        draw = random.Random(seed)
        english = "a the cat sat it was warm this movie is great hi yo dog ran far".split()
        words = [draw.choices("我去银行存钱大家都在谈论狐狸" if "我" in w or "存" in w else english,
                              k=len(w)) for w in words]
    a1, a2, b2, a3, b3, a4, b4, a5 = words
    return _named(
        ("one text (tokens_b is None)", "单个文本（tokens_b 为 None）",
         "テキストが 1 つ（tokens_b は None）", (a1, None)),
        ("a pair of texts", "一个文本对", "テキストのペア", (a2, b2)),
        ("a pair of Chinese texts", "一对中文文本", "中国語のテキストのペア", (a3, b3)),
        ("one token in each text", "每个文本只有一个词元", "各テキストにトークンが 1 つだけ",
         (a4, b4)),
        ("an empty sentence B ([], not None)", "空的句子 B（是 []，不是 None）",
         "空の文 B（None ではなく []）", (a5, [])),
    )


def wordpiece(word: str, pieces: set[str]) -> list[str]:
    """02: bertlib's tokenizer (BERT's greedy longest match) on one word, over the vocabulary
    ``pieces`` (the reserved tokens are added)."""
    reserved = SpecialTokens().as_list()
    tokenizer = WordPieceTokenizer.from_tokens(reserved + sorted(pieces - set(reserved)))
    return tokenizer.tokenize(word)


def _wordpiece_cases(seed: int = 0) -> list[Case]:
    """02: words over the shipped small BERT's vocabulary, then small made-up vocabularies
    that tell greedy longest match from its look-alikes (their letters swapped for others by
    another seed: the same design, other strings)."""
    shipped = set(WordPieceTokenizer.from_directory(SMALL_BERT_DIR).vocab.idx_to_token)
    letters = list(string.ascii_lowercase)
    if seed:
        random.Random(seed).shuffle(letters)
    swap = str.maketrans(string.ascii_lowercase, "".join(letters))

    def made_up(en: str, zh: str, ja: str, word: str, pieces: list[str]) -> tuple:
        """A row over a made-up vocabulary, its letters swapped, named by what it holds."""
        word, pieces = word.translate(swap), [p.translate(swap) for p in pieces]
        names = {"w": word, "v": "{" + ", ".join(pieces) + "}"}
        return en.format(**names), zh.format(**names), ja.format(**names), (word, set(pieces))

    return _named(
        ("visited, with the shipped vocabulary", "visited，项目自带的词表",
         "visited、同梱の語彙で", ("visited", shipped)),
        ("unbelievable, with the shipped vocabulary", "unbelievable，项目自带的词表",
         "unbelievable、同梱の語彙で", ("unbelievable", shipped)),
        ("a Chinese character the vocabulary holds (球)", "词表中有的汉字（球）",
         "語彙にある漢字（球）", ("球", shipped)),
        ("a Chinese character it does not hold (咖)", "词表中没有的汉字（咖）",
         "語彙にない漢字（咖）", ("咖", shipped)),
        ("zanzibar: no piece starts with z", "zanzibar：没有以 z 开头的子词",
         "zanzibar：z で始まるサブワードがない", ("zanzibar", shipped)),
        made_up("{w} over {v}: the longest piece first", "词表 {v} 上的 {w}：先取最长的子词",
                "語彙 {v} での {w}：最長のサブワードから",
                "hugs", ["h", "hu", "hug", "##u", "##g", "##s"]),
        made_up("{w} over {v}: no going back", "词表 {v} 上的 {w}：不回头重试",
                "語彙 {v} での {w}：後戻りしない", "abcd", ["a", "ab", "##bc", "##d"]),
        made_up("{w} over {v}: a piece inside a word needs ##",
                "词表 {v} 上的 {w}：词内部的子词需要 ##",
                "語彙 {v} での {w}：語の内部のサブワードには ## が必要", "unable", ["un", "able"]),
    )


def _attention_weights(attention: MultiHeadAttention, X: torch.Tensor,
                       valid_lens: torch.Tensor | None) -> torch.Tensor:
    """03: bertlib's attention weights (B, nh, T, T) on X (B, T, H), padded keys masked."""
    return attention(X, key_padding_mask(valid_lens, X.shape[1]), need_weights=True)[1]


def _attention_cases(seed: int = 0) -> list[Case]:
    """03: one attention module and one batch per case, drawn from ``seed + i``."""
    def case(i: int, num_heads: int, T: int, valid_lens: list[int] | None) -> tuple:
        with own_global_rng(seed + i):  # nn.Linear initialises from torch's global generator
            attention = MultiHeadAttention(8, num_heads, dropout=0.0).eval()
        B = 2 if valid_lens is None else len(valid_lens)
        X = torch.randn(B, T, 8, generator=make_generator(seed=seed + i))
        return attention, X, None if valid_lens is None else torch.tensor(valid_lens)

    return _named(
        ("two sequences, no padding", "两个序列，没有填充", "系列が 2 つ、パディングなし",
         case(0, 2, 5, [5, 5])),
        ("no valid_lens (nothing is masked)", "没有 valid_lens（不做任何掩蔽）",
         "valid_lens なし（何もマスクしない）", case(1, 2, 5, None)),
        ("the second sequence padded (5 real tokens of 8)",
         "第二个序列有填充（8 个位置中 5 个是真实词元）",
         "2 つ目の系列にパディングあり（8 位置のうち実トークンは 5 つ）", case(2, 2, 8, [8, 5])),
        ("a sequence of one real token", "只有一个真实词元的序列", "実トークンが 1 つだけの系列",
         case(3, 2, 6, [1, 4])),
        ("four heads, three sequences of lengths 2, 7 and 4",
         "四个头，三个长度分别为 2、7、4 的序列", "ヘッドが 4 つ、長さ 2、7、4 の系列が 3 つ",
         case(4, 4, 7, [2, 7, 4])),
    )


def _labels(lengths: list[int], T: int, C: int, g: torch.Generator) -> torch.Tensor:
    """Tags for sentences of the given lengths padded to T: IGNORE on <cls>, on <sep> and on
    the padding, a random tag on every word."""
    labels = torch.full((len(lengths), T), IGNORE)
    for i, n in enumerate(lengths):
        labels[i, 1:n - 1] = torch.randint(C, (n - 2,), generator=g)
    return labels


def _tagging_loss_cases(seed: int = 0) -> list[Case]:
    """11: the per-token loss; every case is drawn from ``seed``."""
    g = make_generator(seed=seed)
    C = 4
    single = _labels([6], 6, C, g)
    one_token = torch.full((2, 5), IGNORE)
    one_token[1, 2] = 3
    return _named(
        ("one sentence, no padding", "一个句子，没有填充", "文が 1 つ、パディングなし",
         (torch.randn(1, 6, C, generator=g), single)),
        ("two sentences, the second padded", "两个句子，第二个有填充",
         "文が 2 つ、2 つ目にパディングあり",
         (torch.randn(2, 8, C, generator=g), _labels([8, 5], 8, C, g))),
        ("three sentences of very different lengths", "三个长度相差很大的句子",
         "長さが大きく異なる 3 つの文",
         (torch.randn(3, 12, C, generator=g), _labels([4, 7, 12], 12, C, g))),
        ("a single labelled token in the batch", "整个批量中只有一个带标签的词元",
         "バッチ全体でラベル付きのトークンが 1 つだけ",
         (torch.randn(2, 5, C, generator=g), one_token)),
        ("large logits (up to 1000)", "很大的 logits（可达 1000）", "大きなロジット（最大 1000）",
         (1000 * torch.randn(2, 8, C, generator=g), _labels([8, 6], 8, C, g))),
    )


def _gather_cases(seed: int = 0) -> list[Case]:
    """04: the MLM gather; every entry of X differs, so a row from the wrong place shows."""
    g = make_generator(seed=4 + seed)

    def X(B: int, T: int, H: int) -> torch.Tensor:
        return torch.randn(B, T, H, generator=g)

    return _named(
        ("one sequence", "一个序列", "系列が 1 つ", (X(1, 6, 4), torch.tensor([[1, 4, 2]]))),
        ("two sequences, two positions each", "两个序列，各有两个预测位置",
         "系列が 2 つ、それぞれ予測位置が 2 つ", (X(2, 5, 3), torch.tensor([[1, 3], [4, 2]]))),
        ("padded slots (position 0) and a position repeated",
         "有填充的预测位置（位置 0），还有一个重复的位置",
         "パディングされた予測位置（位置 0）と、繰り返される位置",
         (X(3, 7, 2), torch.tensor([[2, 5, 1, 3], [6, 6, 0, 0], [1, 0, 0, 0]]))),
        ("four sequences, one position each", "四个序列，各有一个预测位置",
         "系列が 4 つ、それぞれ予測位置が 1 つ",
         (X(4, 9, 5), torch.randint(9, (4, 1), generator=g))),
    )


def nsp_pairs(paragraphs: list[list[list[str]]], max_len: int,
              seed: int) -> list[tuple[list[str], list[int], int]]:
    """05: bertlib's :func:`make_nsp_pairs` as the chapter builds its pairs (a pair longer than
    ``max_len`` is dropped), each pair as ``(tokens, segments, is_next)``."""
    pairs = make_nsp_pairs(paragraphs, max_len, overflow="drop", seed=seed).pairs
    return [(pair.tokens, pair.segments, pair.is_next) for pair in pairs]


def _paragraphs(lengths: list[int], words: int, name: str) -> list[list[list[str]]]:
    """Paragraphs of ``lengths`` sentences, each sentence ``words`` tokens that say where they
    come from (``name``, paragraph, sentence, word): a wrong partner is easy to spot."""
    return [[[f"{name}{p}.{s}.{w}" for w in range(words)] for s in range(n)]
            for p, n in enumerate(lengths)]


def _nsp_pair_cases(seed: int = 0) -> list[Case]:
    """05: the NSP pair builder; the sentences of a paragraph have one length, so a pair fits
    ``max_len`` or not by its paragraph and its partner's. Another seed draws other pairs."""
    return _named(
        ("three paragraphs of 4 sentences", "三个段落，各有 4 个句子", "4 文の段落が 3 つ",
         (_paragraphs([4, 4, 4], 2, "s"), 16, seed)),
        ("paragraphs of 4, 1 and 5 sentences (one gives no pair)",
         "段落分别有 4、1、5 个句子（其中一个段落构不成句子对）",
         "4 文、1 文、5 文の段落（1 つはペアを作れない）",
         (_paragraphs([4, 1, 5], 3, "t"), 16, 1 + seed)),
        ("every pair exactly max_len tokens long: all kept",
         "每个句子对恰好 max_len 个词元：全部保留",
         "どのペアもちょうど max_len トークン：すべて残る",
         (_paragraphs([3, 3], 3, "u"), 9, 2 + seed)),
        # The pairs within the first two paragraphs are one token too long and dropped; a
        # partner from the third is short enough (with none left, bertlib refuses the data).
        ("pairs one token longer than max_len: dropped", "比 max_len 多一个词元的句子对：丢弃",
         "max_len より 1 トークン長いペア：捨てられる",
         (_paragraphs([3, 3], 3, "v") + _paragraphs([2], 1, "w"), 8, 3 + seed)),
        ("six paragraphs, another seed", "六个段落，换一个种子", "段落が 6 つ、別のシード",
         (_paragraphs([2, 5, 3, 2, 4, 6], 2, "w"), 12, 4 + seed)),
    )


def _best_span_cases(seed: int = 0) -> list[Case]:
    """11: span scores drawn from ``seed``, with the pitfalls placed by hand: the best start
    after the best end, the best scores outside the text, spans too long."""
    g = make_generator(seed=9 + seed)

    def scores(B: int, T: int) -> torch.Tensor:
        return torch.randn(B, 2, T, generator=g)

    def text(B: int, T: int, first: int, last: int) -> torch.Tensor:
        allowed = torch.zeros(B, T, dtype=torch.bool)
        allowed[:, first:last + 1] = True
        return allowed

    backwards = scores(1, 8)
    backwards[0, 0, 6], backwards[0, 1, 2] = 5.0, 5.0  # the best start comes after the best end
    outside = scores(2, 9)
    outside[:, :, 1] = 6.0  # the best scores sit on the question, outside the text
    long = scores(1, 10)
    long[0, 0, 2], long[0, 1, 9] = 4.0, 4.0  # the best pair is 8 tokens long
    ragged = text(3, 12, 4, 10)
    ragged[1, 9:] = False  # a shorter text in a padded batch
    ragged[2, 6:] = False
    return _named(
        ("one question, every position allowed", "一个问题，每个位置都可以",
         "質問が 1 つ、どの位置も使える", (scores(1, 6), text(1, 6, 0, 5), 6)),
        ("the best start comes after the best end", "最好的起点在最好的终点之后",
         "最良の開始位置が最良の終了位置より後ろにある", (backwards, text(1, 8, 0, 7), 8)),
        ("the best scores are outside the text", "最高的分数落在文本之外",
         "最高のスコアがテキストの外にある", (outside, text(2, 9, 3, 8), 6)),
        ("answers of at most 3 tokens", "答案最多 3 个词元", "答えは最大 3 トークン",
         (long, text(1, 10, 0, 9), 3)),
        ("answers of exactly 1 token", "答案恰好 1 个词元", "答えはちょうど 1 トークン",
         (scores(2, 7), text(2, 7, 2, 6), 1)),
        ("three texts of different lengths", "三个长度不同的文本", "長さの異なる 3 つのテキスト",
         (scores(3, 12), ragged, 4)),
    )


def _mlm_loss(mlm_Y_hat: torch.Tensor, mlm_Y: torch.Tensor,
              mlm_weights: torch.Tensor) -> torch.Tensor:
    """06: bertlib's weighted MLM loss (the ``mlm`` part of ``bert_loss``; the NSP inputs are
    placeholders it needs, whose loss is dropped)."""
    B = mlm_Y_hat.shape[0]
    return bert_loss(mlm_Y_hat, mlm_Y, mlm_weights, torch.zeros(B, 2),
                     torch.zeros(B, dtype=torch.long)).mlm


def _slots(real: list[int], P: int, V: int, g: torch.Generator) -> tuple[torch.Tensor, ...]:
    """Labels (B, P) and weights (B, P) for sequences with ``real[i]`` real prediction slots
    each, padded to P: as the data pipeline pads them, label 0 and weight 0."""
    labels = torch.zeros(len(real), P, dtype=torch.long)
    weights = torch.zeros(len(real), P)
    for i, n in enumerate(real):
        labels[i, :n] = torch.randint(V, (n,), generator=g)
        weights[i, :n] = 1.0
    return labels, weights


def _mlm_loss_cases(seed: int = 0) -> list[Case]:
    """06: the weighted MLM loss; every case is drawn from ``seed``."""
    g = make_generator(seed=seed)
    V = 7
    return _named(
        ("one sequence, every slot real", "一个序列，每个预测位置都是真实的",
         "系列が 1 つ、予測位置はすべて実トークン",
         (torch.randn(1, 4, V, generator=g), *_slots([4], 4, V, g))),
        ("two sequences, the second with padded slots", "两个序列，第二个有填充的预测位置",
         "系列が 2 つ、2 つ目にパディングされた予測位置あり",
         (torch.randn(2, 5, V, generator=g), *_slots([5, 2], 5, V, g))),
        ("three sequences, one with a single real slot", "三个序列，其中一个只有一个真实的预测位置",
         "系列が 3 つ、そのうち 1 つは実際の予測位置が 1 つだけ",
         (torch.randn(3, 6, V, generator=g), *_slots([1, 6, 3], 6, V, g))),
        ("large logits (up to 1000)", "很大的 logits（可达 1000）", "大きなロジット（最大 1000）",
         (1000 * torch.randn(2, 4, V, generator=g), *_slots([4, 3], 4, V, g))),
    )


IMPLEMENTATIONS: dict[str, Implementation] = {
    "02_tokens_and_segments": Implementation(get_tokens_and_segments, _tokens_and_segments_cases),
    "02_wordpiece": Implementation(
        wordpiece, _wordpiece_cases, (tokenizers.Tokenizer, tokenizers.models.Model)),
    "03_attention_weights": Implementation(
        _attention_weights, _attention_cases,
        (F.multi_head_attention_forward, torch._native_multi_head_attention)),
    "04_mlm_gather": Implementation(MaskLM.gather, _gather_cases),
    "05_nsp_pair_builder": Implementation(nsp_pairs, _nsp_pair_cases,
                                          allowed=(get_next_sentence, get_tokens_and_segments)),
    "06_mlm_loss": Implementation(_mlm_loss, _mlm_loss_cases),
    "11_tagging_loss": Implementation(task_loss, _tagging_loss_cases),
    "11_best_span": Implementation(best_span, _best_span_cases),
}
