"""Self-check exercises: ``check_exercise(key, answer)`` says whether an answer is right and
gives a hint when it is not, without ever printing the expected answer. (The exercises in which
the learner writes a function are in :mod:`bertlib.implement`.)

One :class:`Exercise` record per exercise holds how its answer is computed (with bertlib itself,
on PyTorch's ``meta`` device where a model is built: true if the model code changes) and its
hint in both languages; ``tests/test_exercises.py`` checks the answers against counts by hand.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass

import torch

from bertlib.assets import SMALL_BERT_DIR, small_bert_metrics
from bertlib.checkpoint import config_from, read_config
from bertlib.context import BANK_EXAMPLES
from bertlib.data import make_nsp_pairs, pad_bert_inputs
from bertlib.finetune import Accuracy, BERTClassifier, BERTTagger, freeze_layers
from bertlib.i18n import fill, resolve_language, text
from bertlib.inputs import get_tokens_and_segments
from bertlib.masking import mask_tokens
from bertlib.model import (
    BERTConfig,
    BERTEncoder,
    BERTModel,
    MultiHeadAttention,
    TransformerEncoderBlock,
)
from bertlib.rng import own_global_rng
from bertlib.tasks import NUM_TOPICS, TAGS
from bertlib.vocab import Vocab

# The chapter's demo sizes.
DEMO = {"vocab_size": 10000, "num_hiddens": 768, "ffn_num_hiddens": 1024, "num_heads": 4,
        "num_blks": 2, "dropout": 0.2}


def _num_params(*modules: torch.nn.Module | torch.nn.Parameter) -> int:
    return sum(p.numel() for m in modules
               for p in ([m] if isinstance(m, torch.nn.Parameter) else m.parameters()))


def _embedding_params() -> int:
    """02: learnable numbers in the input representation of the demo encoder."""
    with torch.device("meta"):
        enc = BERTEncoder(**DEMO)
    return _num_params(enc.token_embedding, enc.segment_embedding, enc.pos_embedding)


def _block_params(num_heads: int = DEMO["num_heads"]) -> int:
    """03: learnable numbers in one encoder block of the demo encoder."""
    with torch.device("meta"):
        return _num_params(TransformerEncoderBlock(BERTConfig(**DEMO | {"num_heads": num_heads})))


def _demo_encoder() -> BERTEncoder:
    """03: an encoder of the chapter's demo sizes, with weights drawn from a fixed seed, in eval
    mode (no dropout)."""
    with own_global_rng(0):  # nn.Linear and the position table draw their initial weights
        return BERTEncoder(**DEMO).eval()


def _changed_positions(encoder: BERTEncoder, a: torch.Tensor, b: torch.Tensor,
                       valid_lens: torch.Tensor | None = None) -> int:
    """How many (sequence, position) outputs of ``encoder`` differ between the token ids ``a``
    and ``b`` (B, 8): the first four tokens of each sequence in segment 0, the rest in 1."""
    segments = torch.tensor([[0] * 4 + [1] * 4] * a.shape[0])
    with torch.no_grad():
        x, y = encoder(a, segments, valid_lens), encoder(b, segments, valid_lens)
    differs = ~torch.isclose(x, y, rtol=1e-4, atol=1e-5).all(dim=-1)  # (B, T)
    return int(differs.sum())


def _word_order() -> int:
    """03: with the position table set to zero, at how many of 8 positions the output changes
    when the tokens at positions 1 and 2 are swapped."""
    encoder = _demo_encoder()
    with torch.no_grad():
        encoder.pos_embedding.zero_()
    tokens = torch.arange(10, 18)[None]  # (1, 8): eight different tokens
    swapped = tokens[:, [0, 2, 1, 3, 4, 5, 6, 7]]
    return _changed_positions(encoder, tokens, swapped)


def _padding_changes() -> int:
    """03: in a batch of 2 sequences of 8 tokens, the second with 5 real tokens, at how many of
    the 2 x 8 positions the output changes when the padded slots hold other tokens."""
    tokens = torch.arange(10, 26).reshape(2, 8)
    padded, junk = tokens.clone(), tokens.clone()
    padded[1, 5:] = 0  # <pad>
    junk[1, 5:] = torch.tensor([11, 22, 33])
    return _changed_positions(_demo_encoder(), padded, junk, torch.tensor([8, 5]))


def _num_preds(num_words: int) -> Callable[[], int]:
    """04: prediction positions chosen in ``<cls>`` + ``num_words`` words + ``<sep>``."""
    def answer() -> int:
        words = [f"w{i}" for i in range(num_words)]
        vocab = Vocab([words])
        ids = [vocab.cls_id, *vocab[words], vocab.sep_id]
        return len(mask_tokens(ids, vocab, seed=0).positions)
    return answer


def _nsp_pairs() -> int:
    """05: NSP pairs made from paragraphs of 4, 2 and 5 sentences."""
    paragraphs = [[["word"]] * n for n in (4, 2, 5)]
    return len(make_nsp_pairs(paragraphs, max_len=64, seed=0).pairs)


def _small_bert() -> BERTModel:
    """The shipped small BERT's modules, shapes only (on the meta device: no memory)."""
    with torch.device("meta"):
        return BERTModel.from_config(config_from(read_config(SMALL_BERT_DIR)))


def _nsp_head_params() -> int:
    """05: learnable numbers between the encoded ``<cls>`` vector and the two NSP logits, in the
    shipped small BERT."""
    model = _small_bert()
    return _num_params(model.hidden, model.nsp)


def _attention_numbers() -> int:
    """03: numbers in one block's attention weights (B, nh, T, T) with 8 heads, for a batch of
    2 sequences of 8 tokens of the demo encoder."""
    with own_global_rng(0), torch.no_grad():  # nn.Linear draws its initial weights
        attention = MultiHeadAttention(DEMO["num_hiddens"], 8, dropout=0.0)
        _, weights = attention(torch.zeros(2, 8, DEMO["num_hiddens"]), None, need_weights=True)
    return weights.numel()


def _mlm_logits() -> int:
    """06: entries of mlm_Y_hat (B, P, V) for one batch of the shipped model's recipe."""
    config = read_config(SMALL_BERT_DIR)
    recipe = config["metadata"]["recipe"]
    P = pad_bert_inputs([], recipe["max_len"], Vocab()).pred_positions.shape[1]
    return recipe["batch_size"] * P * config["config"]["vocab_size"]


def _small_bert_params() -> int:
    """06: learnable numbers in the shipped small BERT."""
    return _num_params(_small_bert())


def _gpt_context() -> int:
    """01: tokens of sentence B's input ``<cls>`` + sentence B + ``<sep>`` that BERT's "bank"
    can depend on and a left-to-right model's cannot: those right of the word."""
    sentence, word = BANK_EXAMPLES[1]
    tokens, _ = get_tokens_and_segments(sentence.split())
    return len(tokens) - (tokens.index(word) + 1)


def _held_out_nsp() -> Accuracy:
    """07: the shipped small BERT's held-out NSP accuracy, as hits out of pairs."""
    held_out = small_bert_metrics()["held_out"]
    return Accuracy(round(held_out["nsp_accuracy"] * held_out["pairs"]), held_out["pairs"])


def _halve_width() -> int:
    """07: how many times as many held-out pairs, at the same share of hits, halve the width of
    the NSP interval (to the nearest whole number)."""
    first = _held_out_nsp()
    n, (low, high) = first.n, first.interval
    while (interval := Accuracy(round(first.value * n), n).interval)[1] - interval[0] \
            > (high - low) / 2:
        n += 1
    return round(n / first.n)


def _replication() -> int:
    """07: the percentage of repeats in which a second held-out set of the same size lands inside
    the first set's 95% interval, both drawn at the shipped model's NSP accuracy (exact
    binomial probabilities)."""
    first = _held_out_nsp()
    n = first.n
    hits = torch.arange(n + 1, dtype=torch.float64)
    pmf = torch.distributions.Binomial(n, torch.tensor(first.value, dtype=torch.float64)) \
        .log_prob(hits).exp()  # (n + 1,): P(h hits)
    cdf = torch.cat([torch.zeros(1, dtype=torch.float64), pmf.cumsum(0)])  # cdf[k] = P(h < k)
    inside = 0.0
    for h in range(n + 1):
        low, high = Accuracy(h, n).interval  # the first set's interval when it has h hits
        lowest, highest = math.ceil(low * n - 1e-9), math.floor(high * n + 1e-9)
        inside += pmf[h].item() * (cdf[highest + 1] - cdf[lowest]).item()
    return round(100 * inside)


# all-MiniLM-L6-v2, the real BERT of notebook 08 (its config.json).
MINILM = {"vocab_size": 30522, "num_hiddens": 384, "ffn_num_hiddens": 1536, "num_heads": 12,
          "num_blks": 6, "dropout": 0.1, "max_len": 512}


def _mlm_head_params() -> int:
    """08: learnable numbers of MiniLM's MLM head of its own (its tied decoder weight is the
    token embedding table, counted once, in the encoder)."""
    with torch.device("meta"):
        model = BERTModel.from_config(BERTConfig.original(**MINILM))
    return _num_params(model) - _num_params(model.encoder, model.hidden, model.nsp)


def _topic_classifier() -> BERTClassifier:
    """The shipped small BERT with an output layer for the 12 topics (shapes only)."""
    with torch.device("meta"):
        return BERTClassifier(_small_bert(), NUM_TOPICS)


def _tagger_fewer() -> int:
    """09: how many learnable numbers the tagger has fewer than the topic classifier."""
    with torch.device("meta"):
        tagger = BERTTagger(_small_bert(), len(TAGS))
    return _num_params(_topic_classifier()) - _num_params(tagger)


def _frozen_trainable() -> int:
    """09: learnable numbers still trained with all but the top encoder block frozen."""
    return freeze_layers(_topic_classifier(), trainable_blocks=1)


@dataclass(frozen=True)
class Exercise:
    """A checked exercise: how its answer is computed, and a hint that never gives it away."""

    answer: Callable[[], int]
    hint: dict[str, str]  # per language


# In notebook order.
EXERCISES: dict[str, Exercise] = {
    "01_gpt_context": Exercise(_gpt_context, {
        "en": "BERT's “bank” reads every token of the input, a left-to-right model only the "
              "tokens up to “bank”. Write out sentence B's input with get_tokens_and_segments "
              "and count the tokens to the right of “bank”: <sep> is a token too.",
        "zh": "BERT 中的“bank”能读到输入中的每个词元，从左到右的模型只能读到“bank”及其左边的"
              "词元。用 get_tokens_and_segments 写出句子 B 的输入序列，数一数“bank”右边有几个"
              "词元：<sep> 也是词元。",
        "ja": "BERT の「bank」は入力のすべてのトークンを読めますが、左から右へ読むモデルは「ban"
              "k」までのトークンしか読めません。get_tokens_and_segments で文 B の入力系列を書き"
              "出し、「bank」の右にあるトークンを数えてください。<sep> もトークンです。",
    }),
    "02_embedding_params": Exercise(_embedding_params, {
        "en": "add three tables: one vector per vocabulary entry, one per segment (A and B), one "
              "per position up to max_len = 1000.",
        "zh": "把三张表的参数个数加起来：词表中每个词元一个向量，每个片段（A 和 B）一个向量，每个"
              "位置（直到 max_len = 1000）一个向量。",
        "ja": "3 つの表のパラメータ数を足します。語彙の各トークンに 1 本、各セグメント（A と B"
              "）に 1 本、max_len = 1000 までの各位置に 1 本のベクトルがあります。",
    }),
    "03_block_params": Exercise(_block_params, {
        "en": "count weights and biases: four H×H projections in attention, two layers in the "
              "FFN (H→1024→H), and a scale and a shift per LayerNorm (there are two).",
        "zh": "权重和偏置都要算：注意力中有四个 H×H 的投影，前馈网络有两层（H→1024→H），每个层"
              "规范化各有一个缩放和一个平移（共有两个层规范化）。",
        "ja": "重みとバイアスの両方を数えます。アテンションには H×H の射影が 4 つ、FFN には 2 "
              "層（H→1024→H）、層正規化にはスケールとシフトが 1 つずつあります（層正規化は 2 つ"
              "）。",
    }),
    "03_more_heads": Exercise(_attention_numbers, {
        "en": "the weights hold one (T, T) matrix per sequence and per head: (B, num_heads, T, T). "
              "The number of learnable numbers does not change with num_heads: heads are slices "
              "of H.",
        "zh": "注意力权重为每个序列、每个头各存一个 (T, T) 矩阵：(B, num_heads, T, T)。可学习的参数"
              "个数并不随 num_heads 变化：每个头只是 H 的一段。",
        "ja": "アテンションの重みは系列ごと・ヘッドごとに (T, T) 行列を 1 つ持ちます：(B, num_h"
              "eads, T, T)。学習できるパラメータの数は num_heads によって変わりません。各ヘッド"
              "は H の一部分にすぎないからです。",
    }),
    "03_word_order": Exercise(_word_order, {
        "en": "without positions, a token's input vector is its token and segment rows alone, and "
              "attention weighs the keys as a set: putting the keys in another order changes no "
              "weighted sum. So only an output whose own input vector moved can change. Compare "
              "the two runs position by position with torch.allclose.",
        "zh": "没有位置嵌入时，一个词元的输入向量只由它的词元嵌入和片段嵌入决定，而注意力把各个键"
              "当作一个集合来加权：键的顺序变了，任何加权和都不变。所以只有自身输入向量换了位置的"
              "输出才会变化。用 torch.allclose 逐个位置比较两次运行的结果。",
        "ja": "位置埋め込みがなければ、トークンの入力ベクトルはトークン埋め込みとセグメント埋め"
              "込みだけで決まり、アテンションはキーを集合として重み付けします。キーの順番を変え"
              "ても、どの重み付き和も変わりません。したがって、変わりうるのは自分自身の入力ベク"
              "トルが動いた出力だけです。両方の実行結果を torch.allclose で位置ごとに比べてくだ"
              "さい。",
    }),
    "03_padding_changes": Exercise(_padding_changes, {
        "en": "valid_lens masks the padded keys, not the padded queries: no position reads a "
              "padded token as a key, but the output at a padded position still starts from its "
              "own input vector, through its query and the residual connection. Compare X_junk "
              "and X_pad position by position with torch.allclose.",
        "zh": "valid_lens 掩蔽的是填充位置上的键，而不是填充位置上的查询：没有哪个位置会把填充的词"
              "元当作键来读取，但填充位置上的输出仍然从它自己的输入向量出发，经过它的查询和残差"
              "连接。用 torch.allclose 逐个位置比较 X_junk 和 X_pad。",
        "ja": "valid_lens がマスクするのはパディング位置のキーであって、パディング位置のクエリ"
              "ではありません。どの位置もパディングのトークンをキーとして読みませんが、パディン"
              "グ位置の出力は、自分のクエリと残差接続を通じて、やはり自分の入力ベクトルから計算"
              "されます。X_junk と X_pad を torch.allclose で位置ごとに比べてください。",
    }),
    "04_num_preds": Exercise(_num_preds(126), {
        "en": "take 15% of the length of the whole sequence, <cls> and <sep> included (they are "
              "counted, though never chosen), and round it to the nearest integer. (The original "
              "BERT code makes room for 20 prediction slots in a sequence of 128.)",
        "zh": "取整个序列长度的 15%，<cls> 和 <sep> 也计入长度（它们只是不会被选中），再舍入到最"
              "接近的整数。（原始 BERT 的代码在 128 个词元的序列中预留了 20 个预测位置。）",
        "ja": "系列全体の長さの 15% をとります。<cls> と <sep> も長さに数えます（選ばれることは"
              "ありません）。それを最も近い整数に丸めます。（元の BERT のコードは、128 トークン"
              "の系列に 20 個の予測位置を用意しています。）",
    }),
    "05_nsp_pairs": Exercise(_nsp_pairs, {
        "en": "one pair for every two consecutive sentences of a paragraph; a NotNext pair "
              "replaces the second sentence but is still one pair.",
        "zh": "段落中每两个相邻的句子构成一个句子对；“不是下一句”的句子对只是换掉了第二个句子，"
              "仍然算一对。",
        "ja": "段落の隣り合う 2 文ごとにペアが 1 つできます。「次の文ではない」ペアは 2 つ目の"
              "文を入れ替えただけで、やはり 1 ペアと数えます。",
    }),
    "05_nsp_head_params": Exercise(_nsp_head_params, {
        "en": "read H from pretrained.config (num_hiddens): a Linear H→H (weights and biases) "
              "followed by Tanh, then a Linear H→2.",
        "zh": "从 pretrained.config 中读出 H（num_hiddens）：先是一个 H→H 的全连接层（权重和"
              "偏置）加 Tanh，再是一个 H→2 的全连接层。",
        "ja": "pretrained.config から H（num_hiddens）を読みます。H→H の全結合層（重みとバイア"
              "ス）に Tanh が続き、その後に H→2 の全結合層があります。",
    }),
    "06_mlm_logits": Exercise(_mlm_logits, {
        "en": "mlm_Y_hat has the shape (B, P, V): B is the recipe's batch_size; P, the "
              "prediction slots pad_bert_inputs makes room for, is 15% of max_len rounded to "
              "the nearest integer (a value exactly halfway goes to the even neighbour, "
              "4.5 → 4); V = len(tokenizer.vocab).",
        "zh": "mlm_Y_hat 的形状是 (B, P, V)：B 是训练配置中的 batch_size；P 是 pad_bert_inputs "
              "预留的预测位置个数，即 max_len 的 15% 舍入到最接近的整数（恰好在两个整数中间时取"
              "偶数，如 4.5 → 4）；V = len(tokenizer.vocab)。",
        "ja": "mlm_Y_hat の形は (B, P, V) です。B は学習設定の batch_size、P は pad_bert_inputs"
              " が用意する予測位置の数で、max_len の 15% を最も近い整数に丸めた値です（ちょうど"
              "中間なら偶数の方、4.5 → 4）。V = len(tokenizer.vocab) です。",
    }),
    "06_small_bert_params": Exercise(_small_bert_params, {
        "en": "read the sizes from small_bert.config and add up the encoder (three embedding "
              "tables, then per block four H×H projections, the FFN H→ffn→H and two LayerNorms), "
              "the pooler (H→H), the MLM head (H→H, LayerNorm, H→V) and the NSP head (H→2). "
              "Every Linear layer has biases.",
        "zh": "从 small_bert.config 中读出各个尺寸，再把编码器（三张嵌入表；每个块中四个 H×H 的"
              "投影、前馈网络 H→ffn→H 和两个层规范化）、pooler（H→H）、掩蔽语言模型的输出层（H→"
              "H、层规范化、H→V）以及下一句预测的输出层（H→2）加起来。每个全连接层都有偏置。",
        "ja": "small_bert.config から各サイズを読み、エンコーダ（3 つの埋め込み表、ブロックごと"
              "に H×H の射影 4 つ、FFN H→ffn→H、層正規化 2 つ）、プーラー（H→H）、マスク言語モ"
              "デルの出力層（H→H、層正規化、H→V）、次文予測の出力層（H→2）を足し合わせます。全"
              "結合層にはすべてバイアスがあります。",
    }),
    "07_halve_width": Exercise(_halve_width, {
        "en": "the interval's half-width is close to 1.96·√(p(1 − p)/n): it shrinks like one over "
              "the square root of n. Try Accuracy(round(0.785 * n), n) for larger n and compare "
              "the widths (high − low of .interval).",
        "zh": "置信区间的半宽约为 1.96·√(p(1 − p)/n)：它按 n 的平方根的倒数缩小。对更大的 n 试试 "
              "Accuracy(round(0.785 * n), n)，比较区间的宽度（.interval 的上限减下限）。",
        "ja": "信頼区間の半分の幅はおよそ 1.96·√(p(1 − p)/n) で、n の平方根に反比例して縮みます"
              "。もっと大きな n で Accuracy(round(0.785 * n), n) を試し、幅（.interval の上限 −"
              " 下限）を比べてください。",
    }),
    "07_replication": Exercise(_replication, {
        "en": "each set's accuracy scatters around the true one with the same standard error s, so "
              "their difference scatters with √2·s; the second lands inside the first interval "
              "when the difference is at most 1.96·s. For a standard normal Z that is "
              "P(|Z| ≤ 1.96/√2): compute it with math.erf, or simulate many pairs of draws with "
              "torch.binomial.",
        "zh": "每组留出数据的准确率都以同样的标准误差 s 围绕真实准确率波动，所以两者之差的标准误差"
              "是 √2·s；当这个差不超过 1.96·s 时，第二组的准确率就落在第一组的区间之内。对标准正"
              "态变量 Z，这就是 P(|Z| ≤ 1.96/√2)：用 math.erf 计算，或者用 torch.binomial 模拟许"
              "多对抽样。",
        "ja": "どちらのデータの正解率も同じ標準誤差 s で真の正解率のまわりにばらつくので、2 つ"
              "の差は √2·s でばらつきます。差が 1.96·s 以下なら、2 つ目の正解率は 1 つ目の区間"
              "に入ります。標準正規分布に従う Z では P(|Z| ≤ 1.96/√2) です。math.erf で計算する"
              "か、torch.binomial で多数の組をシミュレーションしてください。",
    }),
    "08_mlm_head_params": Exercise(_mlm_head_params, {
        "en": "the MLM head is a Linear H→H, a LayerNorm (a scale and a shift of H each) and a "
              "decoder H→V whose weight is the token embedding table (not counted again) but "
              "whose bias of V numbers is its own. Take V and H from model.config.",
        "zh": "掩蔽语言模型的输出层由一个 H→H 的全连接层、一个层规范化（缩放和平移各 H 个数）和"
              "一个 H→V 的解码器组成；解码器的权重就是词元嵌入表（不再重复计算），但它的 V 个偏置"
              "是自己的。V 和 H 从 model.config 中读取。",
        "ja": "マスク言語モデルの出力層は、H→H の全結合層、層正規化（スケールとシフトが H 個ず"
              "つ）、H→V のデコーダからなります。デコーダの重みはトークン埋め込みの表そのもの（"
              "二重に数えない）ですが、V 個のバイアスは自分のものです。V と H は model.config "
              "から読みます。",
    }),
    "09_tagger_fewer": Exercise(_tagger_fewer, {
        "en": "the classifier keeps the pooler (the Linear H→H + Tanh on <cls>) and adds a Linear "
              "H→12; the tagger drops the pooler and adds a Linear H→4. H is "
              "small_bert.config.num_hiddens; every Linear layer has biases.",
        "zh": "分类器保留了汇聚层（作用在 <cls> 上的 H→H 全连接层 + Tanh），再加一个 H→12 的全连接"
              "层；标注器没有汇聚层，只加一个 H→4 的全连接层。H 是 small_bert.config.num_hiddens；"
              "每个全连接层都有偏置。",
        "ja": "分類器はプーラー（<cls> に作用する H→H の全結合層 + Tanh）を残し、H→12 の全結合"
              "層を加えます。タグ付け器はプーラーを使わず、H→4 の全結合層だけを加えます。H は s"
              "mall_bert.config.num_hiddens で、全結合層にはすべてバイアスがあります。",
    }),
    "09_frozen_trainable": Exercise(_frozen_trainable, {
        "en": "add up the top encoder block (four H×H projections, the FFN H→ffn→H, two "
              "LayerNorms), the hidden layer (H→H) and the output layer (H→12); every Linear "
              "layer has biases. Read H and ffn from small_bert.config.",
        "zh": "把最上面的一个编码器块（四个 H×H 的投影、前馈网络 H→ffn→H、两个层规范化）、hidden "
              "层（H→H）和输出层（H→12）加起来；每个全连接层都有偏置。H 和 ffn 从 "
              "small_bert.config 中读取。",
        "ja": "一番上のエンコーダブロック（H×H の射影 4 つ、FFN H→ffn→H、層正規化 2 つ）、hidde"
              "n 層（H→H）、出力層（H→12）を足し合わせます。全結合層にはすべてバイアスがありま"
              "す。H と ffn は small_bert.config から読みます。",
    }),
}


def _check_key(key: str) -> None:
    if not isinstance(key, str) or key not in EXERCISES:
        raise ValueError(f"unknown exercise {key!r}; known: {list(EXERCISES)}")


def _as_number(answer) -> int | float | None:
    """``answer`` as a Python number when it is one: a Python or NumPy number, or a tensor or
    array of any shape holding one number; else None (a bool, a text, a list, a meta tensor)."""
    try:
        if ((isinstance(answer, torch.Tensor) and answer.numel() == 1)
                or (getattr(answer, "size", None) == 1 and hasattr(answer, "item"))):
            answer = answer.item()  # e.g. p.numel() summed with torch gives a 0-d tensor
        if isinstance(answer, bool) or not isinstance(answer, numbers.Real):
            return None
        return int(answer) if isinstance(answer, numbers.Integral) else float(answer)
    except (Exception, SystemExit):  # an object whose item() or int() fails holds no number
        return None


def is_correct(key: str, answer) -> bool:
    """Whether ``answer`` (a Python or NumPy number, or a one-number tensor or array) is the
    expected answer of exercise ``key``."""
    _check_key(key)
    return (number := _as_number(answer)) is not None and number == EXERCISES[key].answer()


def check_exercise(key: str, answer, lang: str | None = None) -> None:
    """Print ✓ when ``answer`` is right, × and a hint when it is a wrong number, what to give
    when it is no number (a text, a list, a meta tensor); never the expected answer."""
    _check_key(key)
    lang = resolve_language(lang)
    if answer is None:
        print(fill(text("ex_missing", lang)))
    elif _as_number(answer) is None:
        print(fill(text("ex_not_number", lang, got=type(answer).__name__)))
    elif is_correct(key, answer):
        print(text("ex_correct", lang))
    else:
        print(fill(text("ex_wrong", lang, hint=EXERCISES[key].hint[lang])))
