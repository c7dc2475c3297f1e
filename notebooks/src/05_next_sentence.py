# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] lang="en"
# # 05 · Next sentence prediction
#
# *[中文版](../zh/05_next_sentence.ipynb) · [日本語](../ja/05_next_sentence.ipynb) ·
# [Index](00_index.ipynb)*
#
# Masked language modelling teaches BERT about tokens in context, but not about how two texts
# relate, which matters for tasks such as question answering and natural language inference.
# BERT's second pretraining task, **next sentence prediction** (NSP), is a binary question about
# a pair of sentences: *does B really follow A?* Like MLM, its labels come for free from any
# corpus of paragraphs.
#
# You will:
# 1. sample IsNext / NotNext pairs with `make_nsp_pairs` and check the 50% rate;
# 2. see why the NSP head reads only the `<cls>` vector, after a Linear + Tanh layer;
# 3. compute the NSP loss, and ask a pretrained NSP head about sentence pairs of your own;
# 4. pad a batch of pretraining examples with `pad_bert_inputs`, and run it through a small
#    `BERTModel` and `bert_loss`.

# %% [markdown] lang="zh"
# # 05 · 下一句预测
#
# [English](../en/05_next_sentence.ipynb) · [日本語](../ja/05_next_sentence.ipynb) ·
# [目录](00_index.ipynb)
#
# 掩蔽语言模型让 BERT 学会在上下文中理解词元，却没有教它两个文本之间的关系，而问答、自然语言推断等任
# 务恰恰需要这种关系。BERT 的第二个预训练任务——**下一句预测**（NSP）——针对一对句子提出一个二分类问
# 题：**B 真的紧跟在 A 后面吗？** 与掩蔽语言模型一样，它的标签可以从任何按段落组织的语料库中直接得
# 到，无需人工标注。
#
# 你将会：
# 1. 用 `make_nsp_pairs` 采样“是下一句”和“不是下一句”的句子对，并检验两者各占 50%；
# 2. 看看为什么下一句预测的输出层只读取 `<cls>` 的向量，而且要先经过全连接层 + Tanh；
# 3. 计算下一句预测的损失，并让预训练好的下一句预测输出层判断你自己写的句子对；
# 4. 用 `pad_bert_inputs` 把一批预训练样本填充成批量，再送入小型 `BERTModel` 和 `bert_loss`。

# %% [markdown] lang="ja"
# # 05 · 次文予測
#
# *[English](../en/05_next_sentence.ipynb) · [中文](../zh/05_next_sentence.ipynb) ·
# [目次](00_index.ipynb)*
#
# マスク言語モデルによって、BERT は文脈の中でトークンを理解することを学びます。しかし、2 つのテキス
# トがどう関係しているかは学びません。質問応答や自然言語推論のようなタスクでは、まさにその関係が問わ
# れます。そこで BERT の 2 つ目の事前学習タスクである**次文予測**（NSP）は、文ペアについて「B は本当
# に A の次に来る文か」という 2 値の問いを立てます。マスク言語モデルと同じく、そのラベルは段落ごとに
# まとまったコーパスさえあれば、人手をかけずに手に入ります。
#
# このノートブックでは、次のことを行います。
# 1. `make_nsp_pairs` で「次の文」と「次の文ではない」のペアをサンプリングし、それぞれが 50% になる
#    ことを確かめます。
# 2. 次文予測の出力層が `<cls>` のベクトルだけを読み、しかも全結合層 + Tanh を通す理由を見ます。
# 3. 次文予測の損失を計算し、事前学習済みの出力層に自分で作った文ペアを判定させます。
# 4. `pad_bert_inputs` で事前学習の例をパディングしてバッチにまとめ、小さな `BERTModel` と
#    `bert_loss` に通します。

# %%
import torch
import torch.nn.functional as F

from bertlib import (
    IS_NEXT,
    NOT_NEXT,
    BERTModel,
    NextSentencePred,
    Vocab,
    bert_loss,
    load_small_bert,
    load_small_corpus,
    make_nsp_pairs,
    make_pretrain_examples,
    pad_bert_inputs,
)
from bertlib.assets import small_bert_metrics
from bertlib.classroom.exercises import check_exercise
from bertlib.classroom.implement import check_implementation
from bertlib.data import get_next_sentence
from bertlib.inputs import (
    encode_pair,
    get_tokens_and_segments,  # noqa: F401 (for exercise 7)
    stack_inputs,
)
from bertlib.support.i18n import table, tr
from bertlib.train import init_model
from bertlib.viz import NSPWidget
from bertlib.viz.listing import show_source

# %% [markdown] lang="en"
# ## A corpus you can check by eye
#
# A corpus for NSP is a list of paragraphs, each a list of tokenized sentences. Ours has three
# paragraphs whose "sentences" are runs of letters, numbers and Greek letters, so that you can
# tell at a glance, in any language, whether B continues A.

# %% [markdown] lang="zh"
# ## 一眼就能核对的语料库
#
# 下一句预测的语料库是一组段落，每个段落是一组分好词的句子。我们的语料库有三个段落，其中的“句子”是一
# 串串连续的字母、数字或希腊字母；这样不管读者用哪种语言，都能一眼看出 B 是否接着 A。

# %% [markdown] lang="ja"
# ## 目で確かめられるコーパス
#
# 次文予測のコーパスは段落のリストで、各段落はトークン化済みの文のリストです。ここで使うコーパスには
# 3 つの段落があり、その「文」はアルファベット、数字、ギリシャ文字の連続した並びです。こうしておけ
# ば、どの言語の読者でも B が A の続きかどうかをひと目で判断できます。

# %%
paragraphs = [
    [["a", "b", "c"], ["d", "e"], ["f", "g", "h", "i"], ["j", "k", "l"]],
    [["1", "2"], ["3", "4", "5"], ["6", "7", "8", "9"], ["10", "11"]],
    [["α", "β", "γ", "δ"], ["ε", "ζ"], ["η", "θ", "ι"], ["κ", "λ", "μ"]],
]

# %% [markdown] lang="en"
# ## Sampling pairs
#
# `make_nsp_pairs` walks through every paragraph and makes one pair for each two consecutive
# sentences A, B. With probability 0.5 it keeps the true B (label `IsNext`, 1); otherwise it
# replaces B by a random sentence from *another* paragraph (label `NotNext`, 0). Each pair is
# then wrapped as `<cls>` A `<sep>` B `<sep>` with its segment ids (notebook 02).

# %% [markdown] lang="zh"
# ## 采样句子对
#
# `make_nsp_pairs` 依次遍历每个段落，为每两个相邻的句子 A、B 构造一个句子对。它以 0.5 的概率保留真正
# 的 B，标签为**是下一句**（代码中的 `IsNext`，即 1）；否则把 B 换成**另一个**段落中的随机句子，标签
# 为**不是下一句**（`NotNext`，即 0）。最后把每个句子对包装成 `<cls>` A `<sep>` B `<sep>`，并附上片
# 段索引（见笔记本 02）。

# %% [markdown] lang="ja"
# ## ペアのサンプリング
#
# `make_nsp_pairs` は各段落を順にたどり、隣り合う 2 つの文 A、B ごとにペアを 1 つ作ります。確率 0.5
# で本当の B をそのまま残し、ラベルを **「次の文」**（コード上は `IsNext`、つまり 1）とします。そう
# でなければ B を**別の**段落からランダムに選んだ文に置き換え、ラベルを **「次の文ではない」**
# （`NotNext`、つまり 0）とします。最後に各ペアを `<cls>` A `<sep>` B `<sep>` の形に包み、セグメント
# インデックスを付けます（ノートブック 02）。

# %% [markdown] lang="en"
# The coin toss and the draw of a partner are `get_next_sentence`, the chapter's
# `_get_next_sentence`:

# %% [markdown] lang="zh"
# 掷硬币和抽取替换句由 `get_next_sentence` 完成，它对应本章的 `_get_next_sentence`：

# %% [markdown] lang="ja"
# コインを投げて置き換えの文を引く処理は `get_next_sentence` が受け持ちます。章の
# `_get_next_sentence` に当たる関数です。

# %%
show_source(get_next_sentence)

# %% [markdown] lang="en"
# `make_nsp_pairs` calls it for every two consecutive sentences of every paragraph, as the
# chapter's `_get_nsp_data_from_paragraph` does for one paragraph, then wraps the pair with
# `get_tokens_and_segments`.
#
# **Implement it (exercise 7).** Before you read its loop, write it yourself in the cell below:
# `nsp_pairs(paragraphs, max_len, seed)`, the chapter's `_get_nsp_data_from_paragraph` for every
# paragraph. With one generator seeded with `seed`, call `get_next_sentence` for every two
# consecutive sentences, drop a pair longer than `max_len` (with `<cls>` and two `<sep>`), and
# return a list of `(tokens, segments, is_next)` made with `get_tokens_and_segments`. The check
# compares it with `make_nsp_pairs` (`overflow="drop"`) on several corpora, a paragraph of one
# sentence and pairs exactly at the limit included, and tells you which case fails; add
# `hint=1` to it for a hint.

# %% [markdown] lang="zh"
# `make_nsp_pairs` 对每个段落中每两个相邻的句子调用它（本章的 `_get_nsp_data_from_paragraph` 对一个
# 段落做同样的事），再用 `get_tokens_and_segments` 包装句子对。
#
# **动手实现（练习 7）。** 先别看它的循环，在下面的单元格里自己写出 `nsp_pairs(paragraphs, max_len,
# seed)`，即对每个段落执行本章的 `_get_nsp_data_from_paragraph`：用一个以 `seed` 为随机种子的随机
# 数生成器，对每两个相邻的句子调用 `get_next_sentence`，丢弃连同 `<cls>` 和两个 `<sep>` 超过
# `max_len` 的句子对，返回由 `get_tokens_and_segments` 生成的 `(tokens, segments, is_next)` 列表。检
# 查单元格在几个语料库上把它与 `make_nsp_pairs`（`overflow="drop"`）比对，其中包括只有一个句子的段
# 落和恰好达到长度上限的句子对，并告诉你哪个测试用例没有通过；需要提示的话，在检查中加上
# `hint=1`。

# %% [markdown] lang="ja"
# `make_nsp_pairs` は、すべての段落の隣り合う 2 文ごとにこの関数を呼び（章の
# `_get_nsp_data_from_paragraph` が 1 つの段落に対して行うことです）、`get_tokens_and_segments` でペ
# アを包みます。
#
# **自分で実装してみましょう（演習 7）。** ループを読む前に、下のセルで `nsp_pairs(paragraphs,
# max_len, seed)` を書いてください。章の `_get_nsp_data_from_paragraph`
# をすべての段落に対して行う関数です。`seed` を乱数シードとする生成器を 1 つだけ使い、隣り合う 2 文
# ごとに `get_next_sentence` を呼び、`<cls>` と 2 つの `<sep>` を含めて `max_len` を超えるペアは捨
# て、`get_tokens_and_segments` で作った `(tokens, segments, is_next)` のリストを返します。チェック
# 用のセルは、文が 1 つしかない段落や長さがちょうど上限のペアを含むいくつかのコーパスで、あなたの関
# 数を `make_nsp_pairs`（`overflow="drop"`）と比べ、どのテストケースで食い違うかを教えてくれます。ヒ
# ントが欲しいときは、チェックに `hint=1` を加えてください。


# %%
def nsp_pairs(paragraphs: list[list[list[str]]], max_len: int,
              seed: int) -> list[tuple[list[str], list[int], int]]:
    """Exercise 7. Every (tokens, segments, is_next) pair of the corpus, in order; a pair longer
    than max_len is dropped. Use get_next_sentence and get_tokens_and_segments."""
    raise NotImplementedError  # replace this line with your code


check_implementation("05_nsp_pair_builder", nsp_pairs)

# %% [markdown] lang="en"
# This is the loop of `make_nsp_pairs` (the lines before it check the arguments):

# %% [markdown] lang="zh"
# 下面是 `make_nsp_pairs` 的循环（循环之前的代码负责检查参数）：

# %% [markdown] lang="ja"
# 次が `make_nsp_pairs` のループです（その前の行は引数を検査しています）。

# %%
show_source(make_nsp_pairs, region="pairs")

# %%
nsp = make_nsp_pairs(paragraphs, max_len=16, seed=0)
names = {IS_NEXT: tr("IsNext"), NOT_NEXT: tr("NotNext")}
print(table([names[pair.is_next], " ".join(pair.tokens)] for pair in nsp.pairs))
print(nsp.pairs[0].segments)

# %% [markdown] lang="en"
# Nine pairs are too few to judge a probability, so we sample the corpus with 500 different
# seeds and count: the IsNext share is close to 0.5.

# %% [markdown] lang="zh"
# 只有九个句子对，无法估计概率，所以我们用 500 个不同的随机种子对语料库采样并计数：“是下一句”的比例
# 接近 0.5。

# %% [markdown] lang="ja"
# 9 つのペアだけでは確率を判断できません。そこで 500 通りの乱数シードでコーパスをサンプリングして数
# えてみると、「次の文」の割合は 0.5 に近くなります。

# %%
labels = [pair.is_next for seed in range(500)
          for pair in make_nsp_pairs(paragraphs, max_len=16, seed=seed).pairs]
print("len(labels) =", len(labels), " mean(labels) =", round(sum(labels) / len(labels), 3))

# %% [markdown] lang="en"
# Two details the chapter's code handles differently:
#
# * **Where NotNext sentences come from.** The chapter draws the replacement from the whole
#   corpus, so it can draw the true next sentence and still call the pair NotNext (on this
#   corpus, 1 time in 12). `bertlib` draws from another paragraph only, so every NotNext label
#   is true.
# * **Pairs that are too long.** A pair must fit in `max_len` tokens, `<cls>` and two `<sep>`
#   included. The chapter silently drops pairs that do not fit; `bertlib` truncates the longer
#   sentence (or drops, with `overflow="drop"`) and counts either way, so you know how much data
#   was affected.

# %% [markdown] lang="zh"
# 有两处细节，本章代码的处理方式与此不同：
#
# * **“不是下一句”的句子从哪里来。** 本章从整个语料库中抽取替换句，因此可能恰好抽到真正的下一句，
#   却仍然把这对句子标为“不是下一句”（在这个语料库上，概率是 1/12）。`bertlib` 只从另一个段落中
#   抽取，所以每个“不是下一句”的标签都是对的。
# * **太长的句子对。** 句子对连同 `<cls>` 和两个 `<sep>` 必须能放进 `max_len` 个词元。本章的代码
#   会悄悄丢弃放不下的句子对；`bertlib` 会截断较长的句子（或者在 `overflow="drop"` 时丢弃），并且
#   两种情况都会计数，让你知道有多少数据受到了影响。

# %% [markdown] lang="ja"
# 章のコードとは扱いが異なる点が 2 つあります。
#
# * **「次の文ではない」文をどこから取るか。** 章のコードはコーパス全体から置き換えの文を引くの
#   で、本当の次の文を引いてしまっても「次の文ではない」とラベルを付けることがあります（このコーパス
#   では 12 回に 1 回）。`bertlib` は別の段落からしか引かないので、「次の文ではない」のラベルはすべ
#   て正しくなります。
# * **長すぎるペア。** ペアは `<cls>` と 2 つの `<sep>` を含めて `max_len` 個のトークンに収まらなけ
#   ればなりません。章のコードは収まらないペアを黙って捨てます。`bertlib` は長いほうの文を切り詰め
#   （`overflow="drop"` のときは捨て）、どちらの場合も件数を数えるので、どれだけのデータが影響を受け
#   たかがわかります。

# %%
short = make_nsp_pairs(paragraphs, max_len=8, seed=0)
print(tr("truncated: {truncated} dropped: {dropped}",
         truncated=short.truncated, dropped=short.dropped))
print(" ".join(short.pairs[2].tokens))  # "f g h i" lost its end to fit
dropped = make_nsp_pairs(paragraphs, max_len=8, overflow="drop", seed=0)
print(tr("truncated: {truncated} dropped: {dropped}", truncated=dropped.truncated,
         dropped=dropped.dropped), tr("kept: {kept}", kept=len(dropped.pairs)))

# %% [markdown] lang="en"
# ## The NSP head reads `<cls>`
#
# After the encoder, every position has a vector, `(B, T, H)`. The classifier needs one vector
# per *pair*. BERT takes the vector at position 0, the `<cls>` token: through self-attention it
# has looked at every token of both sentences, and since it is the same token in every input,
# the model learns to use it as a summary. The NSP head then applies a Linear + Tanh layer (the
# original BERT calls it the *pooler*) and a Linear layer to two logits, NotNext and IsNext.
#
# The last Linear layer is `NextSentencePred`, the chapter's class of the same name; it takes
# whatever vector it is given:

# %% [markdown] lang="zh"
# ## 下一句预测的输出层读取 `<cls>`
#
# 经过编码器后，每个位置都有一个向量，形状为 `(B, T, H)`。分类器需要的却是每个**句子对**一个向量。
# BERT 取的是位置 0 上的向量，也就是 `<cls>` 词元的向量：借助自注意力，它看过两个句子中的每个词元；
# 又因为每个输入里它都是同一个词元，模型便学会用它来概括整个输入。下一句预测的输出层让这个向量先经过
# 全连接层 + Tanh，即原始 BERT 所说的汇聚层（pooler），再经过一个全连接层，输出两个 logits（未规范化
# 的预测），分别对应“不是下一句”和“是下一句”。
#
# 最后那个全连接层就是 `NextSentencePred`，与本章的同名类对应；给它什么向量，它就读什么向量：

# %% [markdown] lang="ja"
# ## 次文予測の出力層は `<cls>` を読む
#
# エンコーダを通ると、各位置にベクトルが 1 つずつでき、形状は `(B, T, H)` になります。しかし分類器に
# 必要なのは**ペア**ごとに 1 つのベクトルです。BERT は位置 0、つまり `<cls>` トークンのベクトルを使
# います。`<cls>` は自己注意を通じて両方の文のすべてのトークンを見ており、しかもどの入力でも同じトー
# クンなので、モデルはこれを入力全体の要約として使うことを学びます。次文予測の出力層は、このベクトル
# にまず全結合層 + Tanh（元の BERT ではプーラー（pooler）と呼ばれる層）を適用し、さらに全結合層で
# 「次の文ではない」と「次の文」に対応する 2 つのロジットを出力します。
#
# 最後の全結合層が `NextSentencePred` で、章の同名のクラスに当たります。渡されたベクトルをそのまま
# 読みます。

# %%
show_source(NextSentencePred)

# %% [markdown] lang="en"
# Here are those pieces inside a `BERTModel` with the chapter's sizes:

# %% [markdown] lang="zh"
# 下面在一个采用本章尺寸的 `BERTModel` 里看看这些部件：

# %% [markdown] lang="ja"
# 章のサイズで作った `BERTModel` の中で、これらの部品を見てみましょう。

# %%
torch.manual_seed(0)
torch.set_grad_enabled(False)  # forward passes only
model = BERTModel(vocab_size=10000, num_hiddens=768, ffn_num_hiddens=1024, num_heads=4,
                  num_blks=2, dropout=0.2).eval()
print(model.hidden)
print(model.nsp)

tokens = torch.randint(0, 10000, (2, 8))  # (B, T)
segments = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1],
                         [0, 0, 0, 1, 1, 1, 1, 1]])
encoded_X = model.encoder(tokens, segments)  # (B, T, H)
cls = encoded_X[:, 0, :]  # (B, H): the <cls> vectors
nsp_Y_hat = model.nsp(model.hidden(cls))  # (B, H) -> (B, H) -> (B, 2)
print(tuple(encoded_X.shape), "->", tuple(cls.shape), "->", tuple(nsp_Y_hat.shape))
print("nsp_Y_hat ≈ model(tokens, segments)[2]:",
      torch.allclose(nsp_Y_hat, model(tokens, segments)[2]))

# %% [markdown] lang="en"
# **The flattened alternative.** In the chapter's stand-alone NSP example, the classifier reads
# the *whole* encoded sequence, flattened to `(B, T·H)`: MXNet's `Dense` layer flattens its input
# by default, and the PyTorch text copies this with `torch.flatten`. Only the final `BERTModel`
# switches to the `<cls>` vector after Linear + Tanh. Flattening works for one fixed T, but the
# output layer then has T times more weights, treats the same word differently at each
# position, reads the padded positions too, and breaks as soon as T changes:

# %% [markdown] lang="zh"
# **另一种做法：展平。** 在本章单独演示下一句预测的例子中，分类器读取的是编码后的**整个**序列，并展
# 平成 `(B, T·H)`：MXNet 的 `Dense` 层默认会展平输入，PyTorch 版的正文用 `torch.flatten` 照搬了这一
# 做法。只有最后的 `BERTModel` 才改用经过全连接层 + Tanh 的 `<cls>` 向量。展平在 T 固定时行得通，但
# 输出层的权重会变成 T 倍，同一个词出现在不同位置时会得到不同的对待，填充位置也会读进来，而且 T 一变
# 就会出错：

# %% [markdown] lang="ja"
# **もう 1 つのやり方：平坦化。** 章で次文予測を単独で示す例では、分類器はエンコードされたシーケン
# ス**全体**を `(B, T·H)` に平坦化して読みます。MXNet の `Dense` 層は既定で入力を平坦化し、
# PyTorch 版の本文はそれを `torch.flatten` でなぞっているからです。`<cls>` のベクトルに全結合層 +
# Tanh を通す方式に切り替わるのは、最後の `BERTModel` になってからです。平坦化は T が固定なら動きま
# すが、出力層の重みが T 倍になり、同じ単語でも位置が違えば別扱いになり、パディングの位置まで読み込
# み、T が変わった途端に動かなくなります。

# %%
flat_nsp = NextSentencePred(num_inputs=8 * 768)  # sized for T = 8
flat = encoded_X.flatten(start_dim=1)  # (B, T * H)
print(tuple(flat.shape), "->", tuple(flat_nsp(flat).shape))
print(tr("parameters: flat_nsp {flat} vs model.nsp {cls}",
         flat=sum(p.numel() for p in flat_nsp.parameters()),
         cls=sum(p.numel() for p in model.nsp.parameters())))

longer = model.encoder(torch.randint(0, 10000, (2, 10)), torch.zeros(2, 10, dtype=torch.long))
try:
    flat_nsp(longer.flatten(start_dim=1))  # T = 10
except RuntimeError as err:
    print(f"RuntimeError: {err}")  # PyTorch's own message: the weights were made for T = 8

# %% [markdown] lang="en"
# ## The NSP loss
#
# NSP is a two-class classification, so its loss is the cross-entropy between the two logits
# and the label (1 = IsNext, 0 = NotNext). An untrained model is near a coin toss, which costs
# $\ln 2 \approx 0.693$.

# %% [markdown] lang="zh"
# ## 下一句预测的损失
#
# 下一句预测是二分类问题，所以它的损失是两个 logits 与标签（1 = 是下一句，0 = 不是下一句）之间的
# 交叉熵。未经训练的模型跟掷硬币差不多，损失约为 $\ln 2 \approx 0.693$。

# %% [markdown] lang="ja"
# ## 次文予測の損失
#
# 次文予測は 2 クラス分類なので、その損失は 2 つのロジットとラベル（1 =「次の文」、0 =「次の文ではな
# い」）の交差エントロピーです。学習前のモデルはコイン投げとほとんど変わらず、損失は $\ln 2 \approx
# 0.693$ 前後になります。

# %%
nsp_labels = torch.tensor([IS_NEXT, NOT_NEXT])  # (B,)
print(nsp_Y_hat.numpy().round(2))
print("F.cross_entropy:", round(F.cross_entropy(nsp_Y_hat, nsp_labels).item(), 2))

# %% [markdown] lang="en"
# ## Try it: a pretrained NSP head
#
# An untrained head tosses a coin; a trained one has learned something about which sentence can
# follow which. The widget below gives a sentence pair to the small BERT pretrained for these
# notebooks (notebook 06 trains it, with MLM and NSP, on a small corpus of English and Chinese
# paragraphs: short everyday stories, and sentences about words of six classes). It
# shows the BERT input sequence with its segment ids, and the head's probabilities for NotNext
# and IsNext: the softmax of its two logits. The default pair is two consecutive sentences of
# one story. Try:
#
# * *Swap A and B*: the same two sentences in the wrong order;
# * for B, a sentence from another story in the same language, such as "Grace threw a ball, and
#   Lucky brought it back." (after a Chinese sentence A:
#   "李华扔出一个球，豆豆很快就把球叼了回来。"). Pretraining never paired sentences of different
#   languages (every NotNext partner came from a paragraph in the same language), so the model's
#   answer for a mixed pair means little;
# * deleting B: NSP needs a pair, and the widget says so.
#
# On held-out pairs this model is right 84.1% of the time (printed below from
# `bertlib/assets/small_bert/metrics.json`): 99.4% of the IsNext pairs and 69.4% of the NotNext
# pairs. So it is not always right: find a pair it gets wrong.

# %% [markdown] lang="zh"
# ## 动手试试：预训练好的下一句预测输出层
#
# 未经训练的输出层只是在掷硬币；训练过的输出层则多少学到了哪个句子可以接在哪个句子后面。下面的小部件
# 把一个句子对交给项目自带的小 BERT（笔记本 06 用一个中英文段落组成的小语料库，以掩蔽语言模型和下一
# 句预测两个任务训练它；语料库里有日常小故事，也有讲六个词类中某个词的句子）。小部件显示 BERT 输入序
# 列及其片段索引，以及输出层给出的“不是下一句”和“是下一句”的概率，也就是两个 logits 的 softmax。默认
# 的句子对是同一个故事中相邻的两句。可以试试：
#
# * 点击“交换 A 和 B”：同样的两个句子，顺序却是错的；
# * 把 B 换成另一个故事中同一种语言的句子，比如“李华扔出一个球，豆豆很快就把球叼了回来。”（如果句子
#   A 是英文，可以用“Grace threw a ball, and Lucky brought it back.”）。预训练从未把不同语言的句子配
#   成一对（每个“不是下一句”的替换句都取自同一种语言的段落），所以对中英混合的句子对，模型的判断没有
#   什么意义；
# * 删除 B：下一句预测需要一个句子对，小部件会提示这一点。
#
# 在留出的句子对上，这个模型的准确率是 84.1%（下面从 `bertlib/assets/small_bert/metrics.json` 中读出
# 并打印）：“是下一句”的句子对判对了 99.4%，“不是下一句”的句子对判对了 69.4%。可见它并不总是对的：试
# 着找一个它判断错的句子对。

# %% [markdown] lang="ja"
# ## 試してみよう：事前学習済みの次文予測の出力層
#
# 学習前の出力層はコインを投げているだけですが、学習した出力層はどの文がどの文の後に続きうるかをいく
# らか学んでいます。下のウィジェットは、文ペアをプロジェクト付属の小さな BERT に渡します（ノートブッ
# ク 06 で、英語と中国語の段落からなる小さなコーパスを使い、マスク言語モデルと次文予測で学習させるモ
# デルです。コーパスには短い日常の物語と、6 つの単語クラスのどれかの単語についての文があります）。ウ
# ィジェットには BERT 入力シーケンスとそのセグメントインデックス、そして出力層が出す「次の文ではな
# い」と「次の文」の確率（2 つのロジットの softmax）が表示されます。
#
# このモデルとコーパスは英語と中国語だけで作られていて、日本語は学習していません（かなは `<unk>` に
# なります）。そのため、例文は英語のものを用意してあります。中国語の文を入力してもかまいません。最初
# に表示されるのは、同じ物語の中で隣り合う 2 文からなるペアです。次のことを試してみましょう。
#
# * 「A と B を入れ替える」：同じ 2 文を、逆の順序で並べます。
# * B を同じ言語の別の物語の文、たとえば "Grace threw a ball, and Lucky brought it back." に変えます
#   （A が中国語の文なら「李华扔出一个球，豆豆很快就把球叼了回来。」）。事前学習では異なる言語の文を
#   ペアにしたことがありません（「次の文ではない」ペアの相手はすべて同じ言語の段落から取りました）。
#   ですから、英語と中国語が混ざったペアに対するモデルの答えには、あまり意味がありません。
# * B を消します：次文予測には文ペアが必要で、ウィジェットはそのことを知らせます。
#
# このモデルのホールドアウトのペアに対する正解率は 84.1% です（下で
# `bertlib/assets/small_bert/metrics.json` から読み込んで表示します）。内訳は「次の文」のペアで
# 99.4%、「次の文ではない」ペアで 69.4% です。つまり、いつも正しいわけではありません。モデルが間違え
# るペアを探してみましょう。

# %%
pretrained, tokenizer = load_small_bert()  # the small pretrained BERT and its tokenizer
figures = small_bert_metrics()["held_out"]
print(tr("held-out NSP accuracy {all:.1%}: IsNext {is_next:.1%}, NotNext {not_next:.1%}",
         all=figures["nsp_accuracy"], is_next=figures["nsp_accuracy_is_next"],
         not_next=figures["nsp_accuracy_not_next"]))
NSPWidget(pretrained, tokenizer)

# %% [markdown] lang="en"
# **A language the model never saw.** The small BERT and its corpus hold English and Chinese
# only. Give it a Japanese pair and it keeps the kanji, which are Chinese characters too, and
# turns the kana into `<unk>`: below, half of the tokens. The head still answers, and firmly:
# P(IsNext) = 0.01 for a sentence B that does continue A. A probability says what the model
# computed, not that it understood its input.

# %% [markdown] lang="zh"
# **一种模型从未见过的语言。** 自带的小 BERT 和它的语料库只有英文和中文。给它一对日语句子，其中的汉
# 字会保留下来（它们也是中文字符），假名则都变成 `<unk>`：下面有一半的词元是 `<unk>`。输出层照样给出
# 答案，而且毫不犹豫：句子 B 明明接着 A，P(是下一句) 却只有 0.01。概率只说明模型算出了什么，并不说明
# 它读懂了输入。

# %% [markdown] lang="ja"
# **モデルが見たことのない言語。** 付属の小さな BERT とそのコーパスには、英語と中国語しかありませ
# ん。日本語の文ペアを渡すと、漢字は中国語の文字でもあるので残り、かなは `<unk>` になります。下の例
# では、トークンの半分が `<unk>` です。それでも出力層は答えを出し、しかも迷いがありません。B は A
# の続きなのに、P(次の文) は 0.01 です。確率はモデルが何を計算したかを示すだけで、入力を理解したこ
# とを示すものではありません。

# %%
japanese = encode_pair(tokenizer, "猫が魚を食べました。", "それから猫はぐっすり眠りました。",
                       pretrained.config.max_len)
_, _, nsp_Y_hat = pretrained(*stack_inputs([japanese], tokenizer.vocab.pad_id))
print(" ".join(japanese.tokens))
print(tr("<unk>: {unknown} of {n} tokens, P(IsNext) = {p:.2f}", unknown=japanese.unknown,
         n=len(japanese.tokens), p=float(nsp_Y_hat.softmax(-1)[0, IS_NEXT])))

# %% [markdown] lang="en"
# ## How much attention stays inside each sentence?
#
# How does `<cls>` get to compare A with B? One might look for a clue in the attention of the
# small BERT. For every held-out pair of consecutive sentences, take each real token's attention
# in each layer and head and add up the weight it gives to keys **of its own segment**. Two
# baselines say what a share means. A query that spread its attention evenly over all tokens
# would give its own segment the share of the tokens that segment holds. A query that spread it
# evenly over its neighbours only, the tokens within ±k positions, stays in its own segment
# except near the `<sep>` between them: that is what locality alone gives. The last row is the
# same architecture with fresh random weights.

# %% [markdown] lang="zh"
# ## 注意力有多少留在本句之内？
#
# `<cls>` 是怎样比较 A 和 B 的？也许能从自带模型的注意力中找到线索。对留出数据中每一对相邻的句子，在
# 每一层的每个头中，把每个真实词元分给**本片段**各个键的注意力权重加起来。有两条基线告诉我们这个份额
# 意味着什么。如果查询把注意力平均分给所有词元，本片段得到的份额就等于本片段词元所占的比例。如果查询
# 只把注意力平均分给前后 k 个位置以内的邻居，那么除了靠近两句之间的 `<sep>` 的地方，它都留在本片段
# 内：这就是单凭“只看附近”能得到的份额。最后一行是结构相同、权重随机初始化的模型。

# %% [markdown] lang="ja"
# ## アテンションはどれだけ自分の文の中にとどまるか
#
# `<cls>` はどうやって A と B を比べているのでしょうか。付属モデルのアテンションに手がかりがあるかも
# しれません。ホールドアウトデータの隣り合う文ペアそれぞれについて、各層の各ヘッドで、実在する各トー
# クンのアテンションのうち**自分のセグメント**のキーに向かう重みを合計します。その割合が何を意味する
# かは、2 つのベースラインで判断します。すべてのトークンにアテンションを均等に配るクエリなら、自分の
# セグメントが受け取る割合は、そのセグメントが占めるトークンの割合と同じになります。前後 ±k 個以内の
# 近くのトークンにだけ均等に配るクエリなら、2 文のあいだの `<sep>` の近くを除いて自分のセグメントに
# とどまります。これが「近くだけを見る」ことだけで得られる割合です。最後の行は、同じ構造で重みをラン
# ダムに初期化したモデルです。

# %%
held_out = load_small_corpus().held_out  # paragraphs the model never trained on
pairs = [(p[i], p[i + 1]) for p in held_out for i in range(len(p) - 1)]
encoded = [encode_pair(tokenizer, a, b, pretrained.config.max_len) for a, b in pairs]
tokens, segments, valid_lens = stack_inputs(encoded, tokenizer.vocab.pad_id)
same_segment = segments[:, :, None] == segments[:, None, :]  # (N, query, key)
real = torch.arange(tokens.shape[1]) < valid_lens[:, None]  # (N, T): queries that are tokens


def share_inside_own_segment(model: BERTModel) -> torch.Tensor:
    """(layers, heads): the mean over real queries of the attention kept in their segment."""
    _, attentions = model.encoder(tokens, segments, valid_lens, return_attention=True)
    attention = torch.stack(attentions, dim=1)  # (N, layers, heads, T, T)
    inside = (attention * same_segment[:, None, None]).sum(-1)  # (N, layers, heads, T)
    return (inside * real[:, None, None]).sum((0, 3)) / real.sum()


def local_share(k: int) -> float:
    """A query that spreads its attention evenly over the real keys within k positions: the
    mean share it keeps in its own segment."""
    position = torch.arange(tokens.shape[1])
    window = ((position[:, None] - position).abs() <= k) & real[:, None, :]  # (N, query, key)
    return ((window & same_segment).sum(-1) / window.sum(-1))[real].mean().item()


even = (same_segment & real[:, None, :]).sum(-1) / valid_lens[:, None]  # (N, T)
print(tr("{n} held-out pairs; spreading evenly: {share:.1%}",
         n=len(pairs), share=even[real].mean().item()))
print(tr("spreading evenly within ±k positions:"),
      "  ".join(tr("k = {k}: {share:.1%}", k=k, share=local_share(k)) for k in (1, 3, 5)))
random_weights = init_model(pretrained.config, seed=0).eval()
for name, model in [(tr("pretrained:"), pretrained), (tr("random weights:"), random_weights)]:
    shares = share_inside_own_segment(model)
    print(name, "  ".join(tr("layer {layer} head {head} {share:.1%}", layer=layer, head=head,
                             share=share)
                          for layer, row in enumerate(shares.tolist())
                          for head, share in enumerate(row)))

# %% [markdown] lang="en"
# Three of the four pretrained heads keep most of each token's attention inside its own sentence
# (82.9% to 94.3%, against 51.5% for even spreading). The fourth, layer 0 head 0, keeps only
# 36.0%: it looks across to the other sentence more than even spreading would. With random
# weights every head stays near the even share (46.6% to 55.8%). The locality baseline decides
# what the high shares mean: a query that looks only at its two neighbours keeps 97.2% in its own
# sentence, one that looks at the tokens within 3 positions 92.9%, within 5 positions 88.5%. The
# three inward heads keep no more than locality alone gives (notebook 03 looks at what the heads
# attend to). Layer 0 head 0 is another matter: attention across the two sentences is what next
# sentence prediction could use, but a share cannot say whether `<cls>` reads it. So these shares
# show that pretraining made most heads local and one head cross the boundary; they do not show
# how `<cls>` compares the two sentences. (Exercise 5 measures `<cls>`'s own attention to
# sentence B.)

# %% [markdown] lang="zh"
# 预训练过的四个头中，有三个把每个词元的大部分注意力留在它所在的句子内（82.9% 到 94.3%，而平均分配
# 只有 51.5%）。第四个，即层 0、头 0，只留下 36.0%：它看向另一个句子的注意力比平均分配时还多。换成随
# 机权重，每个头都接近平均分配的份额（46.6% 到 55.8%）。份额高说明什么，要由“只看附近”这条基线来判
# 断：只看左右两个邻居的查询，留在本句的份额就有 97.2%；只看前后 3 个位置的查询有 92.9%，只看前后 5
# 个位置的有 88.5%。那三个偏向本句的头留在本句的份额并不比单凭“只看附近”得到的多（笔记本 03 考察了
# 各个头关注什么）。层 0、头 0 则不同：跨越两个句子的注意力正是下一句预测可以利用的，但一个份额说明
# 不了 `<cls>` 是否读取了它。所以，这些份额说明预训练让大多数头变得局部化，并让一个头跨过了句子边
# 界；它们说明不了 `<cls>` 怎样比较两个句子。（练习 5 测量 `<cls>` 自己分给句子 B 的注意力。）

# %% [markdown] lang="ja"
# 事前学習済みの 4 つのヘッドのうち 3 つは、各トークンのアテンションの大半を自分の文の中に残します
# （82.9% から 94.3%。均等に配った場合は 51.5%）。4 つめの層 0・ヘッド 0 が残すのは 36.0% だけで、均
# 等に配った場合よりも多くもう一方の文を見ています。重みがランダムなら、どのヘッドも均等な割合の近く
# にとどまります（46.6% から 55.8%）。高い割合が何を意味するかは、局所性のベースラインが決めます。両
# 隣だけを見るクエリは 97.2% を自分の文に残し、前後 3 位置以内を見るクエリは 92.9%、5 位置以内なら
# 88.5% です。内向きの 3 つのヘッドが残す割合は、局所性だけで得られる以上ではありません（各ヘッドが
# 何を見ているかはノートブック 03 で調べました）。層 0・ヘッド 0 は別です。2 つの文にまたがるアテン
# ションは次文予測が使えるものですが、割合だけでは `<cls>` がそれを読んでいるかどうかはわかりませ
# ん。つまりこれらの割合が示すのは、事前学習がほとんどのヘッドを局所的にし、1 つのヘッドに文の境界を
# 越えさせたことであって、`<cls>` が 2 つの文をどう比べるかではありません（演習 5 で `<cls>` 自身の
# 文 B へのアテンションを測ります）。

# %% [markdown] lang="en"
# ## A padded pretraining batch
#
# Now both tasks together. `make_pretrain_examples` masks every pair for MLM (notebook 04), and
# `pad_bert_inputs` turns a list of examples of different lengths into one `PretrainBatch` of
# tensors:
#
# | field | shape | padding |
# | --- | --- | --- |
# | `tokens`, `segments` | `(N, max_len)` | `<pad>` (id 0), segment 0 |
# | `valid_lens` | `(N,)` | the real lengths, for attention (notebook 03) |
# | `pred_positions`, `mlm_labels` | `(N, P)` | position 0, label 0 |
# | `mlm_weights` | `(N, P)` | 1 for a real slot, 0 for padding (notebook 04) |
# | `nsp_labels` | `(N,)` | — |
#
# P is `max_preds`, by default `max(1, round(0.15 * max_len))`: room for the most positions
# `mask_tokens` can choose in a sequence of `max_len` tokens. Here `max_len = 14`, and
# 0.15 × 14 = 2.1 rounds to 2.

# %% [markdown] lang="zh"
# ## 填充好的预训练批量
#
# 现在把两个任务合在一起。`make_pretrain_examples` 对每个句子对做掩蔽（见笔记本 04），
# `pad_bert_inputs` 再把一组长度不一的样本变成由张量组成的 `PretrainBatch`：
#
# | 字段 | 形状 | 填充方式 |
# | --- | --- | --- |
# | `tokens`、`segments` | `(N, max_len)` | `<pad>`（词元索引 0），片段索引 0 |
# | `valid_lens` | `(N,)` | 真实长度，供注意力使用（见笔记本 03） |
# | `pred_positions`、`mlm_labels` | `(N, P)` | 位置 0，标签 0 |
# | `mlm_weights` | `(N, P)` | 真实位置为 1，填充位置为 0（见笔记本 04） |
# | `nsp_labels` | `(N,)` | — |
#
# P 即 `max_preds`，默认是 `max(1, round(0.15 * max_len))`，正好容得下 `mask_tokens` 在长度为
# `max_len` 的序列中最多选出的预测位置。这里 `max_len = 14`，0.15 × 14 = 2.1，舍入后为 2。

# %% [markdown] lang="ja"
# ## パディングした事前学習のバッチ
#
# いよいよ 2 つのタスクを合わせます。`make_pretrain_examples` はすべてのペアにマスク言語モデルのため
# のマスクをかけ（ノートブック 04）、`pad_bert_inputs` は長さの異なる例のリストを、テンソルからなる
# 1 つの `PretrainBatch` にまとめます。
#
# | フィールド | 形状 | パディング |
# | --- | --- | --- |
# | `tokens`、`segments` | `(N, max_len)` | `<pad>`（トークンインデックス 0）、セグメント 0 |
# | `valid_lens` | `(N,)` | 実際の長さ。アテンションで使う（ノートブック 03） |
# | `pred_positions`、`mlm_labels` | `(N, P)` | 位置 0、ラベル 0 |
# | `mlm_weights` | `(N, P)` | 実在する予測位置は 1、パディングは 0（ノートブック 04） |
# | `nsp_labels` | `(N,)` | — |
#
# P は `max_preds` で、既定は `max(1, round(0.15 * max_len))` です。長さ `max_len` のシーケン
# スで `mask_tokens` が選びうる予測位置の最大数がちょうど収まります。ここでは `max_len = 14` なの
# で、0.15 × 14 = 2.1 を丸めて 2 になります。

# %%
vocab = Vocab([sentence for paragraph in paragraphs for sentence in paragraph])
examples = make_pretrain_examples(nsp.pairs, vocab, seed=0)
batch = pad_bert_inputs(examples[:4], max_len=14, vocab=vocab)
print("0.15 * 14 =", round(0.15 * 14, 2), "-> P =", batch.pred_positions.shape[1])

print(vocab.to_tokens(batch.tokens[0].tolist()))  # first sequence, masked and padded
for name in ("tokens", "segments", "valid_lens", "pred_positions", "mlm_weights", "mlm_labels",
             "nsp_labels"):
    tensor = getattr(batch, name)
    print(f"{name} {tuple(tensor.shape)}\n{tensor}")

# %% [markdown] lang="en"
# This batch is exactly what a BERT pretraining step consumes. A small, untrained `BERTModel`
# and `bert_loss` give the two losses and their sum; notebook 06 trains this for real.

# %% [markdown] lang="zh"
# 这个批量正是 BERT 预训练每一步所需的输入。用一个未经训练的小 `BERTModel` 和 `bert_loss` 可以
# 得到两个损失及其和；笔记本 06 会真正训练这样的模型。

# %% [markdown] lang="ja"
# このバッチが、BERT の事前学習の 1 ステップが受け取る入力そのものです。学習前の小さな `BERTModel`
# と `bert_loss` を使うと、2 つの損失とその和が得られます。ノートブック 06 では、これを実際に学習さ
# せます。

# %%
torch.manual_seed(0)
small = BERTModel(vocab_size=len(vocab), num_hiddens=32, ffn_num_hiddens=64, num_heads=2,
                  num_blks=2, dropout=0.1, max_len=14).eval()
_, mlm_Y_hat, nsp_Y_hat = small(batch.tokens, batch.segments, batch.valid_lens,
                                batch.pred_positions)
loss = bert_loss(mlm_Y_hat, batch.mlm_labels, batch.mlm_weights, nsp_Y_hat, batch.nsp_labels)
print(tuple(mlm_Y_hat.shape), tuple(nsp_Y_hat.shape))  # (N, P, V), (N, 2)
print(tr("MLM {mlm:.2f} + NSP {nsp:.2f} = {total:.2f}",
         mlm=loss.mlm, nsp=loss.nsp, total=loss.total))

# %% [markdown] lang="en"
# ## Summary
#
# * NSP pairs: consecutive sentences (IsNext, 50%) or a sentence from another paragraph
#   (NotNext, 50%), wrapped as `<cls>` A `<sep>` B `<sep>`.
# * The head reads the `<cls>` vector, `(B, H)`, through Linear + Tanh, then Linear → `(B, 2)`;
#   the loss is a two-class cross-entropy.
# * `pad_bert_inputs` gives every tensor a pretraining step needs, with `valid_lens` and
#   `mlm_weights` marking the padding.
#
# ## Exercises
#
# 1. ★ **Count.** How many NSP pairs does `make_nsp_pairs` produce from three paragraphs of 4,
#    2 and 5 sentences (none too long)? Check below.
# 2. ★ RoBERTa pretrains with MLM alone. Which parts of `BERTModel` would then never get a
#    gradient? Check it with `small` and `batch` from the last cells: inside
#    `with torch.enable_grad():`, compute the loss again, call `.mlm.backward()`, and list the
#    parameters whose `.grad` is still None. How many parameter tensors are they? Check below.
# 3. ★★ RoBERTa (Liu et al., 2019) found that removing NSP does not hurt, and ALBERT replaced it by
#    *sentence-order prediction*: NotNext pairs are the two sentences swapped. Why might NSP be
#    too easy? How would you change `make_nsp_pairs` for sentence-order prediction?
# 4. ★★ The chapter's sampler picks a random paragraph of the whole corpus, then a random sentence
#    of it. On this corpus, one NotNext pair in how many then has a sentence B from A's own
#    paragraph (A itself and the true next sentence included): a pair on one topic, which
#    `bertlib`'s sampler never makes? Work it out, check it below, then by sampling as above.
# 5. ★★★ Change `share_inside_own_segment` to measure, for the `<cls>` query only, the share of
#    attention that reaches sentence B, layer by layer. Where does `<cls>` first look across?
# 6. ★ **Predict, then run.** The small BERT never saw two sentences of one paragraph in the wrong
#    order: its NotNext partners all came from other paragraphs. Swap A and B in every held-out pair
#    of consecutive sentences. Does its mean P(IsNext) go up or down? Write `"up"` or `"down"` in
#    the cell below, then run it.
# 7. ★★ **Implement it: the NSP pair builder.** `nsp_pairs(paragraphs, max_len, seed)`, in
#    "Sampling pairs", in the cell before the listing of `make_nsp_pairs` (the listing gives the
#    answer away, so write yours first).

# %% [markdown] lang="zh"
# ## 小结
#
# * 下一句预测的句子对：相邻的两个句子（是下一句，50%），或者来自另一个段落的句子（不是下一句，
#   50%），包装成 `<cls>` A `<sep>` B `<sep>`。
# * 输出层读取 `<cls>` 的向量 `(B, H)`，经过全连接层 + Tanh，再经过全连接层得到 `(B, 2)`；损失是二分
#   类交叉熵。
# * `pad_bert_inputs` 给出预训练每一步需要的全部张量，用 `valid_lens` 和 `mlm_weights` 标出填充。
#
# ## 练习
#
# 1. ★ **数一数。** 三个段落分别含 4、2、5 个句子（没有过长的句子），`make_nsp_pairs` 会从中生成多少
#    个句子对？在下面检查你的答案。
# 2. ★ RoBERTa 只用掩蔽语言模型做预训练。这时 `BERTModel` 的哪些部分永远得不到梯度？用前面单元格
#    中的 `small` 和 `batch` 验证：在 `with torch.enable_grad():` 之内重新计算损失，调用
#    `.mlm.backward()`，再列出 `.grad` 仍为 None 的参数。它们一共是几个参数张量？在下面检查
#    你的答案。
# 3. ★★ RoBERTa（Liu 等人，2019）发现去掉下一句预测并没有坏处；ALBERT 则用**句序预测**代替它：“不是
#    下一句”的句子对就是顺序颠倒的两个句子。为什么下一句预测可能太简单了？要实现句序预测，你会怎样修
#    改 `make_nsp_pairs`？
# 4. ★★ 本章的采样方式是先从整个语料库中随机选一个段落，再从中随机选一个句子。在这个语料库上，“不是
#    下一句”的句子对中，平均每几对就有一对的句子 B 来自 A 所在的段落（包括 A 本身和真正的下一句）？
#    这样的句子对谈的是同一个话题，而 `bertlib` 的采样方式从不产生这样的句子对。先算出来，
#    在下面检查，再像上面那样抽样验证。
# 5. ★★★ 修改 `share_inside_own_segment`，只对 `<cls>` 这一个查询，逐层计算它分给句子 B 的注意力份
#    额。`<cls>` 从哪一层开始关注另一个句子？
# 6. ★ **先预测，再运行。** 自带模型从未见过同一个段落中顺序颠倒的两个句子：它见过的“不是下一句”的句
#    子对，替换句都取自别的段落。把每个留出的相邻句子对中的 A 和 B 交换，它给出的 P(是下一句) 的平均
#    值会升高还是降低？在下面的单元格中写下 `"up"`（升高）或 `"down"`（降低），然后运行。
# 7. ★★ **动手实现：构造下一句预测的句子对。** 即“采样句子对”一节中、`make_nsp_pairs` 源代码之前
#    那个单元格里的 `nsp_pairs(paragraphs, max_len, seed)`（源代码会泄露答案，所以要先写出你自己的
#    版本）。

# %% [markdown] lang="ja"
# ## まとめ
#
# * 次文予測のペアは、隣り合う 2 文（「次の文」、50%）か、別の段落から取った文（「次の文ではない」、
#   50%）で、`<cls>` A `<sep>` B `<sep>` の形に包みます。
# * 出力層は `<cls>` のベクトル `(B, H)` を読み、全結合層 + Tanh、さらに全結合層を通して `(B, 2)` を
#   出します。損失は 2 クラスの交差エントロピーです。
# * `pad_bert_inputs` は事前学習の 1 ステップに必要なテンソルをすべて作り、`valid_lens` と
#   `mlm_weights` でパディングを示します。
#
# ## 演習
#
# 1. ★ **数えてみよう。** 文の数がそれぞれ 4、2、5 の 3 つの段落（長すぎる文はない）から、
#    `make_nsp_pairs` はいくつのペアを作りますか。下のセルで確かめましょう。
# 2. ★ RoBERTa はマスク言語モデルだけで事前学習します。そのとき `BERTModel` のどの部分に勾配がまった
#    く届かなくなるでしょうか。前のセルの `small` と `batch` で確かめましょう。`with
#    torch.enable_grad():` の中で損失を計算し直し、`.mlm.backward()` を呼んでから、`.grad` が None
#    のままのパラメータを列挙します。それはいくつのパラメータのテンソルでしょうか。下で確かめ
#    ましょう。
# 3. ★★ RoBERTa（Liu ら、2019）は次文予測を取り除いても性能が落ちないことを示し、ALBERT は次文予測
#    を**文順序予測**に置き換えました。文順序予測では、「次の文ではない」ペアは 2 つの文を入れ替えた
#    ものです。次文予測が簡単すぎるかもしれないのはなぜでしょうか。文順序予測のために
#    `make_nsp_pairs` をどう変えますか。
# 4. ★★ 章のサンプラーは、まずコーパス全体からランダムに段落を選び、次にその中からランダムに文を選
#    びます。このコーパスでは、「次の文ではない」ペアの何組に 1 組が、A 自身の段落の文（A 自身と本当
#    の次の文を含む）を B に持つでしょうか。そのようなペアは同じ話題の 2 文であり、`bertlib` のサン
#    プラーは決して作りません。計算で求めて下で確かめ、上と同じようにサンプリングしても確かめ
#    ましょう。
# 5. ★★★ `share_inside_own_segment` を書き換えて、`<cls>` というクエリだけについて、文 B に届くアテ
#    ンションの割合を層ごとに測りましょう。`<cls>` が初めてもう一方の文を見るのはどの層ですか。
# 6. ★ **予測してから実行しよう。** 付属モデルは、同じ段落の 2 文が逆の順序で並んだペアを見たことが
#    ありません。「次の文ではない」ペアの相手はすべて別の段落から取られていました。ホールドアウト
#    データの隣り合う文ペアすべてで A と B を入れ替えると、P(次の文) の平均は上がるでしょうか、下が
#    るでしょうか。下のセルに `"up"`（上がる）か `"down"`（下がる）を書いてから実行しましょう。
# 7. ★★ **実装してみよう：次文予測のペアを作る関数。**「ペアのサンプリング」の節で、`make_nsp_pairs`
#    のソースコードの前のセルにある `nsp_pairs(paragraphs, max_len, seed)` です（ソースコードを見る
#    と答えがわかってしまうので、先に自分で書きましょう）。

# %%
answer = None  # your answer to exercise 1: an integer
check_exercise("05_nsp_pairs", answer)

# %%
answer = None  # your answer to exercise 2: how many parameter tensors keep .grad None
check_exercise("05_mlm_only_no_grad", answer)

# %%
answer = None  # your answer to exercise 4: one NotNext pair in how many
check_exercise("05_same_paragraph", answer)

# %%
prediction = None  # your answer to exercise 6: "up" or "down"


def mean_is_next(pairs: list[tuple[str, str]]) -> torch.Tensor:
    """(N,): the small BERT's P(IsNext) for each pair (A, B) of texts."""
    encoded = [encode_pair(tokenizer, a, b, pretrained.config.max_len) for a, b in pairs]
    _, _, nsp_Y_hat = pretrained(*stack_inputs(encoded, tokenizer.vocab.pad_id))
    return nsp_Y_hat.softmax(-1)[:, IS_NEXT]


if prediction not in ("up", "down"):
    print(tr("Write your prediction first: prediction = \"up\" or \"down\"."))
else:
    in_order, swapped = mean_is_next(pairs), mean_is_next([(b, a) for a, b in pairs])
    way = "down" if swapped.mean() < in_order.mean() else "up"
    print(tr("mean P(IsNext) over {n} held-out pairs: A B {ab:.3f}, B A {ba:.3f}; it fell for "
             "{fell:.1%} of the pairs.",
             n=len(pairs), ab=in_order.mean().item(), ba=swapped.mean().item(),
             fell=(swapped < in_order).float().mean().item()))
    went = tr("down") if way == "down" else tr("up")
    if prediction == way:
        print(tr("✓ Right: it went {way}.", way=went))
    else:
        print(tr("× Not what the model does: it went {way}. Why might a model trained only on "
                 "NotNext partners from other stories still react to the order?", way=went))

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 3: NSP is too easy; sentence-order prediction</summary>
#
# * Why NSP may be too easy: a NotNext B comes from another paragraph, which is usually about
#   something else. Most pairs can be told apart by topic alone (do A and B talk about the same
#   things?), which the MLM task already teaches; whether B really continues A hardly matters.
#   ALBERT's authors call NSP topic prediction rather than coherence prediction.
# * Sentence-order prediction: keep the IsNext pairs as they are; for a negative, keep the two
#   consecutive sentences and swap them, (B, A), labelled NotNext. In `make_nsp_pairs`, replace the
#   draw of a sentence from another paragraph by the swap. Both sentences now come from one
#   paragraph, on one topic with the same words, and only their order tells the labels apart.
#
# </details>
#
# <details><summary>Exercise 5: Where &lt;cls&gt; looks across</summary>
#
# Keep only query 0, and sum its weights over the keys of segment 1 (sentence B and its `<sep>`),
# with `tokens`, `segments` and `valid_lens` of that section:
#
# ```python
# def cls_share_to_b(model: BERTModel) -> torch.Tensor:
#     """(layers, heads): the mean share of <cls>'s attention that reaches segment 1."""
#     _, attentions = model.encoder(tokens, segments, valid_lens, return_attention=True)
#     attention = torch.stack(attentions, dim=1)  # (N, layers, heads, T, T)
#     to_b = (attention[..., 0, :] * (segments == 1)[:, None, None]).sum(-1)  # (N, layers, heads)
#     return to_b.mean(0)
# ```
#
# Compare with the even share of `<cls>`, B's share of the real tokens, close to half on these
# pairs. In the small BERT `<cls>` looks across at once: in layer 0 both heads put nearly all of
# `<cls>`'s attention on sentence B's tokens (almost none on the last `<sep>`); in layer 1 it is
# back near the even share. With random weights every head stays near the even share. So the first
# block already gathers sentence B into `<cls>`; what the NSP head reads from it, the shares cannot
# say.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 请先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 3：下一句预测太简单；句序预测</summary>
#
# * 为什么下一句预测可能太简单：“不是下一句”的句子 B 来自另一个段落，而那个段落通常讲的是别的事情。
#   大多数句子对单凭话题就能分开（A 和 B 谈的是同样的东西吗？），而这一点掩蔽语言模型已经在教了；B
#   是否真的接着 A，几乎无关紧要。ALBERT 的作者说，下一句预测与其说是连贯性预测，不如说是话题预测。
# * 句序预测：“是下一句”的句子对保持不变；负例则取相邻的两个句子并交换顺序，即 (B, A)，标为“不是下一
#   句”。在 `make_nsp_pairs` 中，把“从另一个段落抽一个句子”换成这种交换。这样两个句子都来自同一个段
#   落，话题相同、用词相同，只有顺序能区分两种标签。
#
# </details>
#
# <details><summary>练习 5：&lt;cls&gt; 从哪一层开始看向另一个句子</summary>
#
# 只保留查询 0，把它分给片段 1（句子 B 及其 `<sep>`）各个键的权重加起来；`tokens`、`segments` 和
# `valid_lens` 用那一节中的：
#
# ```python
# def cls_share_to_b(model: BERTModel) -> torch.Tensor:
#     """(layers, heads): the mean share of <cls>'s attention that reaches segment 1."""
#     _, attentions = model.encoder(tokens, segments, valid_lens, return_attention=True)
#     attention = torch.stack(attentions, dim=1)  # (N, layers, heads, T, T)
#     to_b = (attention[..., 0, :] * (segments == 1)[:, None, None]).sum(-1)  # (N, layers, heads)
#     return to_b.mean(0)
# ```
#
# 与 `<cls>` 的平均分配份额比较，也就是 B 在真实词元中所占的比例，在这些句子对上接近一半。在小 BERT
# 中，`<cls>` 一开始就看向另一个句子：在层 0，两个头都把 `<cls>` 几乎全部的注意力分给了句子 B 的词元
# （几乎没有分给最后的 `<sep>`）；到了层 1，又回到平均分配的份额附近。随机权重下，每个头都接近平均分
# 配的份额。可见第一个编码器块就已经把句子 B 汇集到 `<cls>` 中；下一句预测的输出层从中读取了什么，这
# 些份额说明不了。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# どの演習も、まず自分で解いてから解答を開いてください。
#
# <details><summary>演習 3：次文予測は簡単すぎる；文順序予測</summary>
#
# * 次文予測が簡単すぎるかもしれない理由：「次の文ではない」の B は別の段落から取られ、その段落はた
#   いてい別の話題です。ほとんどのペアは話題だけで見分けられ（A と B は同じことについて話している
#   か？）、それはマスク言語モデルがすでに教えていることです。B が本当に A の続きかどうかはほとんど
#   関係ありません。ALBERT の著者らは、次文予測は一貫性の予測というより話題の予測だと述べています。
# * 文順序予測：「次の文」のペアはそのままにし、負例には隣り合う 2 文を入れ替えたもの (B, A) を使
#   い、「次の文ではない」とラベルを付けます。`make_nsp_pairs` では、別の段落から文を引く代わりに入
#   れ替えを行います。こうすると 2 つの文は同じ段落から来て、話題も単語も同じになり、ラベルを見分け
#   る手がかりは順序だけになります。
#
# </details>
#
# <details><summary>演習 5：&lt;cls&gt; がもう一方の文を見る層</summary>
#
# クエリ 0 だけを残し、セグメント 1（文 B とその `<sep>`）のキーへの重みを合計します。`tokens`、
# `segments`、`valid_lens` はその節のものを使います。
#
# ```python
# def cls_share_to_b(model: BERTModel) -> torch.Tensor:
#     """(layers, heads): the mean share of <cls>'s attention that reaches segment 1."""
#     _, attentions = model.encoder(tokens, segments, valid_lens, return_attention=True)
#     attention = torch.stack(attentions, dim=1)  # (N, layers, heads, T, T)
#     to_b = (attention[..., 0, :] * (segments == 1)[:, None, None]).sum(-1)  # (N, layers, heads)
#     return to_b.mean(0)
# ```
#
# `<cls>` が均等に配った場合の割合、つまり実在するトークンのうち B が占める割合（これらのペアでは半
# 分近く）と比べます。小さな BERT では、`<cls>` はすぐにもう一方の文を見ます。層 0 では 2 つのヘッド
# がどちらも、`<cls>` のアテンションのほぼすべてを文 B のトークンに向けます（最後の `<sep>` にはほと
# んど向けません）。層 1 では均等な割合の近くに戻ります。ランダムな重みでは、どのヘッドも均等な割合
# の近くにとどまります。つまり最初のブロックがすでに文 B を `<cls>` に集めています。次文予測の出力層
# がそこから何を読むかは、割合からはわかりません。
#
# </details>

# %% [raw] strings="zh"
# "IsNext"
# "是下一句"
#
# "<unk>: {unknown} of {n} tokens, P(IsNext) = {p:.2f}"
# "<unk>：共 {n} 个词元中有 {unknown} 个，P(是下一句) = {p:.2f}"
#
# "NotNext"
# "不是下一句"
#
# "truncated: {truncated} dropped: {dropped}"
# "截断：{truncated}  丢弃：{dropped}"
#
# "kept: {kept}"
# "保留：{kept}"
#
# "parameters: flat_nsp {flat} vs model.nsp {cls}"
# "参数个数：flat_nsp {flat}，model.nsp {cls}"
#
# "MLM {mlm:.2f} + NSP {nsp:.2f} = {total:.2f}"
# "掩蔽语言模型 {mlm:.2f} + 下一句预测 {nsp:.2f} = {total:.2f}"
#
# "{n} held-out pairs; spreading evenly: {share:.1%}"
# "{n} 个留出的句子对；注意力平均分配时为 {share:.1%}"
#
# "pretrained:"
# "预训练后："
#
# "random weights:"
# "随机权重："
#
# "layer {layer} head {head} {share:.1%}"
# "层 {layer}、头 {head} {share:.1%}"
#
# "held-out NSP accuracy {all:.1%}: IsNext {is_next:.1%}, NotNext {not_next:.1%}"
# "下一句预测在留出数据上的准确率：{all:.1%}（是下一句 {is_next:.1%}，不是下一句 {not_next:.1%}）"
#
# "Write your prediction first: prediction = \"up\" or \"down\"."
# "先写下你的预测：prediction = \"up\"（升高）或 \"down\"（降低）。"
#
# "mean P(IsNext) over {n} held-out pairs: A B {ab:.3f}, B A {ba:.3f}; it fell for {fell:.1%} of the pairs."
# "在 {n} 个留出的句子对上，P(是下一句) 的平均值：A B 为 {ab:.3f}，B A 为 {ba:.3f}；交换后概率降低的句子对占 {fell:.1%}。"
#
# "✓ Right: it went {way}."
# "✓ 对了：概率{way}了。"
#
# "× Not what the model does: it went {way}. Why might a model trained only on NotNext partners from other stories still react to the order?"
# "× 与模型的表现不符：概率{way}了。模型训练时见到的“不是下一句”，第二句都取自别的故事；为什么它仍会对句子的顺序有反应？"
#
# "up"
# "升高"
#
# "down"
# "降低"
#
# "spreading evenly within ±k positions:"
# "只在前后 k 个位置内平均分配："
#
# "k = {k}: {share:.1%}"
# "k = {k}：{share:.1%}"

# %% [raw] strings="ja"
# "IsNext"
# "次の文"
#
# "<unk>: {unknown} of {n} tokens, P(IsNext) = {p:.2f}"
# "<unk>：{n} トークン中 {unknown} 個、P(次の文) = {p:.2f}"
#
# "NotNext"
# "次の文ではない"
#
# "truncated: {truncated} dropped: {dropped}"
# "切り詰め：{truncated}  破棄：{dropped}"
#
# "kept: {kept}"
# "残したペア：{kept}"
#
# "parameters: flat_nsp {flat} vs model.nsp {cls}"
# "パラメータ数：flat_nsp {flat}、model.nsp {cls}"
#
# "MLM {mlm:.2f} + NSP {nsp:.2f} = {total:.2f}"
# "マスク言語モデル {mlm:.2f} + 次文予測 {nsp:.2f} = {total:.2f}"
#
# "{n} held-out pairs; spreading evenly: {share:.1%}"
# "ホールドアウトのペア {n} 組。均等に配った場合は {share:.1%}"
#
# "pretrained:"
# "事前学習後："
#
# "random weights:"
# "ランダムな重み："
#
# "layer {layer} head {head} {share:.1%}"
# "層 {layer}・ヘッド {head} {share:.1%}"
#
# "held-out NSP accuracy {all:.1%}: IsNext {is_next:.1%}, NotNext {not_next:.1%}"
# "ホールドアウトデータでの次文予測の正解率：{all:.1%}（「次の文」{is_next:.1%}、「次の文ではない」{not_next:.1%}）"
#
# "Write your prediction first: prediction = \"up\" or \"down\"."
# "先に予測を書きましょう：prediction = \"up\"（上がる）または \"down\"（下がる）。"
#
# "mean P(IsNext) over {n} held-out pairs: A B {ab:.3f}, B A {ba:.3f}; it fell for {fell:.1%} of the pairs."
# "ホールドアウトのペア {n} 組での P(次の文) の平均：A B の順で {ab:.3f}、B A の順で {ba:.3f}。入れ替えて確率が下がったペアは {fell:.1%} です。"
#
# "✓ Right: it went {way}."
# "✓ 正解です：確率は{way}ました。"
#
# "× Not what the model does: it went {way}. Why might a model trained only on NotNext partners from other stories still react to the order?"
# "× モデルの振る舞いとは違います：確率は{way}ました。別の物語から取った「次の文ではない」ペアだけで学習したモデルが、それでも文の順序に反応するのはなぜでしょうか。"
#
# "up"
# "上がり"
#
# "down"
# "下がり"
#
# "spreading evenly within ±k positions:"
# "前後 k 個の位置の中で均等に配った場合："
#
# "k = {k}: {share:.1%}"
# "k = {k}：{share:.1%}"
