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
# # 06 · Putting it together
#
# *[中文版](../zh/06_pretraining.ipynb) · [日本語](../ja/06_pretraining.ipynb) ·
# [Index](00_index.ipynb)*
#
# Notebooks 02–05 built BERT's parts one at a time: the input representation, the encoder, the
# MLM head, the NSP head and a padded pretraining batch. This notebook joins them into one
# model and pretrains it.
#
# You will:
# 1. assemble `BERTModel` and check the shapes of its three outputs;
# 2. follow the chapter's data pipeline: read WikiText-format text with `read_wikitext`, pad
#    the examples into tensors, and cut them into mini-batches with a `DataLoader`;
# 3. add the MLM and NSP losses into the single number that pretraining minimises, and write
#    the weighted MLM loss yourself;
# 4. take one pretraining step, then watch `train_bert` pretrain a small BERT for under a minute,
#    until it tells IsNext from NotNext on held-out pairs better than chance;
# 5. put the shipped small BERT's full run next to the original BERT's four days.
#
# What a run learns, and when, is the subject of notebook 07, which watches the shipped run
# snapshot by snapshot. How well the shipped model learned, and what its numbers do and do not
# mean, is the subject of notebook 08.

# %% [markdown] lang="zh"
# # 06 · 整合与预训练
#
# [English](../en/06_pretraining.ipynb) · [日本語](../ja/06_pretraining.ipynb) ·
# [目录](00_index.ipynb)
#
# 笔记本 02–05 逐一构建了 BERT 的各个部件：输入表示、编码器、掩蔽语言模型的输出层、下一句预测的输出
# 层，以及填充好的预训练批量。本笔记本把它们组装成一个模型并进行预训练。
#
# 你将会：
# 1. 组装 `BERTModel`，并检查它三个输出的形状；
# 2. 沿着本章的数据流水线走一遍：用 `read_wikitext` 读取 WikiText 格式的文本，把样本填充成张量，再用
#    `DataLoader` 把它们切分成小批量；
# 3. 把掩蔽语言模型的损失和下一句预测的损失相加，得到预训练要最小化的总损失，并亲手实现加权的掩蔽语
#    言模型损失；
# 4. 执行一步预训练，再看 `train_bert` 用不到一分钟预训练一个小 BERT，直到它在留出的句子对上区分“是
#    下一句”和“不是下一句”时胜过随机猜测；
# 5. 把项目自带的小 BERT 的完整训练与原始 BERT 四天的训练放在一起比较。
#
# 一次训练学到了什么、何时学到，是笔记本 07 的主题：它借助一个个快照观察自带模型的那次训练。自带模
# 型学得怎么样，它的数字能说明什么、不能说明什么，留到笔记本 08 再讨论。

# %% [markdown] lang="ja"
# # 06 · 組み立てて事前学習する
#
# *[English](../en/06_pretraining.ipynb) · [中文](../zh/06_pretraining.ipynb) ·
# [目次](00_index.ipynb)*
#
# ノートブック 02–05 では、BERT の部品を 1 つずつ作ってきました。入力表現、エンコーダ、マスク言語モ
# デルの出力層、次文予測の出力層、そしてパディングした事前学習のバッチです。このノートブックでは、そ
# れらを 1 つのモデルに組み立てて事前学習します。
#
# このノートブックでは、次のことを行います。
# 1. `BERTModel` を組み立て、3 つの出力の形状を確かめます。
# 2. 章のデータパイプラインをたどります。`read_wikitext` で WikiText 形式のテキストを読み、例をパ
#    ディングしてテンソルにし、`DataLoader` でミニバッチに切り分けます。
# 3. マスク言語モデルの損失と次文予測の損失を足し合わせて、事前学習で最小化する 1 つの数にします。重
#    み付きのマスク言語モデルの損失は自分で書いてみます。
# 4. 事前学習を 1 ステップ実行し、続いて `train_bert` が小さな BERT を 1 分足らず事前学習する様子を
#    見ます。ホールドアウトのペアで「次の文」と「次の文ではない」をチャンスレベルより上手に見分けら
#    れるようになるまでです。
# 5. プロジェクト付属の小さな BERT の学習全体を、元の BERT の 4 日間の学習と並べて比べます。
#
# 学習が何をいつ学ぶのかは、付属モデルの学習をスナップショットごとに追うノートブック 07 で扱います。
# 付属モデルがどれだけうまく学んだか、その数字から何が言えて何が言えないかは、ノートブック 08 で扱い
# ます。

# %%
import math
from dataclasses import fields

import torch
from IPython.display import display

from bertlib import (
    BERTConfig,
    BERTModel,
    bert_loss,
    load_small_bert,
    load_small_corpus,
    make_loader,
    make_pretrain_data,
    read_wikitext,
    tokenize_paragraphs,
    train_bert,
)
from bertlib.assets import WIKITEXT_SAMPLE, small_bert_metrics
from bertlib.classroom.exercises import check_exercise
from bertlib.classroom.implement import check_implementation
from bertlib.data import PretrainBatch, pad_bert_inputs
from bertlib.finetuning.finetune import Accuracy
from bertlib.scale.fast import fast_loss
from bertlib.support.i18n import tr
from bertlib.train import evaluate_pretraining, init_model, train_step
from bertlib.viz import LossPlot, new_figure
from bertlib.viz.listing import show_source

# %%
# One thread: the printed losses then come out the same on any number of cores (the order of
# floating-point sums depends on the thread count), and for models this small it is not slower.
torch.set_num_threads(1)

# %% [markdown] lang="en"
# ## `BERTModel`: one encoder, two heads
#
# `BERTModel` creates a `BERTEncoder`, a `MaskLM` head and a `NextSentencePred` head, plus the
# Linear + Tanh layer on the `<cls>` vector that notebook 05 met (`self.hidden`, the *pooler*).
# Its forward pass is short:

# %% [markdown] lang="zh"
# ## `BERTModel`：一个编码器，两个输出层
#
# `BERTModel` 包含一个 `BERTEncoder`、一个 `MaskLM` 输出层和一个 `NextSentencePred` 输出层，此外还有
# 笔记本 05 中见过的汇聚层（pooler），即作用在 `<cls>` 向量上的全连接层 + Tanh（`self.hidden`）。它
# 的前向传播很简短：

# %% [markdown] lang="ja"
# ## `BERTModel`：1 つのエンコーダと 2 つの出力層
#
# `BERTModel` は `BERTEncoder`、出力層 `MaskLM`、出力層 `NextSentencePred` を持ち、さらにノートブッ
# ク 05 で見た、`<cls>` ベクトルに作用する全結合層 + Tanh（`self.hidden`、プーラー（pooler））を持っ
# ています。順伝播は短いものです。

# %%
show_source(BERTModel.forward)

# %% [markdown] lang="en"
# Here is the chapter's demo model (vocabulary 10000, H = 768, two blocks) with the number of
# learnable parameters in each part, run on a batch of two sequences of 8 tokens with 3
# prediction positions each:

# %% [markdown] lang="zh"
# 下面是本章的演示模型（词表大小 10000，H = 768，两个编码器块）及其各部分可学习的参数个数。我们用它
# 处理一个批量：两个长度为 8 的序列，每个序列有 3 个预测位置。

# %% [markdown] lang="ja"
# 章のデモ用モデル（語彙数 10000、H = 768、2 ブロック）の各部分の学習可能なパラメータ数を示し、長
# さ 8 のシーケンス 2 つ（それぞれ予測位置が 3 つ）からなるバッチを通してみます。

# %%
torch.manual_seed(0)
demo = BERTModel(vocab_size=10000, num_hiddens=768, ffn_num_hiddens=1024, num_heads=4,
                 num_blks=2, dropout=0.2).eval()
for name, part in demo.named_children():
    print(f"{name:<8} {sum(p.numel() for p in part.parameters()):>10,}")

tokens = torch.randint(0, 10000, (2, 8))  # (B, T)
segments = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1],
                         [0, 0, 0, 1, 1, 1, 1, 1]])
pred_positions = torch.tensor([[1, 5, 2],
                               [6, 1, 5]])  # (B, P)
with torch.no_grad():
    encoded_X, mlm_Y_hat, nsp_Y_hat = demo(tokens, segments, pred_positions=pred_positions)
    print("encoded_X", tuple(encoded_X.shape))  # (B, T, H)
    print("mlm_Y_hat", tuple(mlm_Y_hat.shape))  # (B, P, V)
    print("nsp_Y_hat", tuple(nsp_Y_hat.shape))  # (B, 2)
    print(tr("without pred_positions: {value}", value=demo(tokens, segments)[1]))

# %% [markdown] lang="en"
# Three outputs, three uses. `encoded_X` is BERT's representation of every token; it is what
# fine-tuning builds on (the MLM head and the NSP output layer are then dropped). `mlm_Y_hat`
# scores the whole vocabulary at each prediction position, and exists only when you pass
# `pred_positions`. `nsp_Y_hat` holds two logits per sequence, NotNext and IsNext. Note where
# the parameters are: the last layer of the MLM head alone (768 × 10000 weights) is nearly as
# big as the embedding tables.

# %% [markdown] lang="zh"
# 这三个输出各有用途。`encoded_X` 是 BERT 为每个词元给出的表示，微调就是在它的基础上进行的（那时要去
# 掉掩蔽语言模型的输出层和下一句预测的输出层）。`mlm_Y_hat` 在每个预测位置上为整个词表打分，只有传入
# `pred_positions` 时才会计算。`nsp_Y_hat` 是每个序列的两个 logits（未规范化的预测），分别对应“不是
# 下一句”和“是下一句”。再看看参数都分布在哪里：仅掩蔽语言模型输出层的最后一层（768 × 10000 个权重）
# 就和嵌入表差不多大。

# %% [markdown] lang="ja"
# 3 つの出力には、それぞれ役割があります。`encoded_X` は BERT が各トークンに与える表現で、ファイン
# チューニングはこれの上に組み立てます（そのときマスク言語モデルの出力層と次文予測の出力層は取り除き
# ます）。`mlm_Y_hat` は各予測位置で語彙全体にスコアを付けたもので、`pred_positions` を渡したときに
# だけ計算されます。`nsp_Y_hat` は各シーケンスの 2 つのロジットで、「次の文ではない」と「次の文」に
# 対応します。パラメータがどこにあるかにも注目しましょう。マスク言語モデルの出力層の最後の層だけで
# （768 × 10000 個の重み）、埋め込みのテーブルとほぼ同じ大きさがあります。

# %% [markdown] lang="en"
# ## The chapter's data pipeline
#
# The chapter pretrains on WikiText-2. Its reader takes each line of the raw file as a
# paragraph, skips the title lines (`= Heading =`), lower-cases the text and cuts it into
# sentences at `" . "`; WikiText is already split into words, so a sentence is cut into words
# at spaces. Only paragraphs with at least two sentences are kept, since NSP needs a sentence and
# the one after it. `read_wikitext` does the same (without the chapter's shuffle: the pair
# builder draws its own randomness):

# %% [markdown] lang="zh"
# ## 本章的数据流水线
#
# 本章在 WikiText-2 上进行预训练，其读取函数把原始文件的每一行当作一个段落，跳过标题行
# （`= Heading =`），把文本转成小写，再在 `" . "` 处切分出句子；WikiText 的单词已经切分好了，所以按
# 空格就能把句子切成单词。由于下一句预测需要一个句子及紧随其后的句子，只保留至少含两个句子的段落。
# `read_wikitext` 的做法与此相同（只是不像本章那样打乱段落，因为构造句子对的函数自己会引入随机性）：

# %% [markdown] lang="ja"
# ## 章のデータパイプライン
#
# 章は WikiText-2 で事前学習します。その読み込み関数は、元のファイルの各行を 1 つの段落とみなし、
# 見出しの行（`= Heading =`）を飛ばし、テキストを小文字にして、`" . "` のところで文に切り分けます。
# WikiText はすでに単語に分かれているので、文はスペースで単語に切れます。次文予測には文とその次の文
# が必要なので、文が 2 つ以上ある段落だけを残します。`read_wikitext` も同じことをします（章のよう
# に段落をシャッフルはしません。ペアを作る関数が自分で乱数を使うからです）。

# %%
show_source(read_wikitext)

# %% [markdown] lang="en"
# WikiText-2's download link in d2l no longer works (d2l-en issue #2588), and its licence
# (CC BY-SA) allows shipping it only with attribution and under the same licence, which would
# bind part of `bertlib` to it. `bertlib` ships a few lines written in its raw format instead,
# `WIKITEXT_SAMPLE`. Here is the file, then what `read_wikitext` makes of it:

# %% [markdown] lang="zh"
# d2l 中 WikiText-2 的下载链接已经失效（d2l-en issue #2588），而它的许可证（CC BY-SA）虽然允许再
# 发布，但要求署名并沿用同一许可证（相同方式共享），随 `bertlib` 一起发布就会让 `bertlib` 的一部分受
# 它约束。因此，`bertlib` 只自带了几行按其原始格式写成的文本，即 `WIKITEXT_SAMPLE`。
# 下面先打印这个文件，再打印 `read_wikitext` 从中读出的段落：

# %% [markdown] lang="ja"
# d2l にある WikiText-2 のダウンロードリンクはもう使えません（d2l-en issue #2588）。また、そのライセ
# ンス（CC BY-SA）は再配布を認めていますが、表示と同じライセンスでの配布（継承）が条件なので、同梱す
# れば `bertlib` の一部がその条件に縛られます。そこで `bertlib` には、WikiText の元の
# 形式で書いた数行のテキスト `WIKITEXT_SAMPLE` が付属しています。まずそのファイルを表示し、次に
# `read_wikitext` がそこから読み取った段落を表示します。

# %%
print(WIKITEXT_SAMPLE.read_text(encoding="utf-8"))
for paragraph in read_wikitext(WIKITEXT_SAMPLE):
    print([" ".join(sentence) for sentence in paragraph])

# %% [markdown] lang="en"
# The title lines are gone, and so is the paragraph with a single sentence. Two quirks of
# cutting at `" . "` show: the last sentence of each paragraph keeps its final `.` (the line
# ends there, so no `" . "` follows it), and WikiText's own tokens stay, such as `@.@` for a
# decimal point and `@-@` for a hyphen. Exercise 3 tries other ways of splitting sentences.
#
# For the rest of the notebooks `bertlib` ships a small bilingual corpus of its own, written for
# these notebooks (see `data/README.md`), one sentence per line: 2000 English and 2000 Chinese
# paragraphs of two kinds. In each language, 400 are short everyday stories (a train trip, a
# birthday, moving house, ...) of 5 or 6 sentences; the other 1,600 hold 4 sentences about one
# word of six word classes (names, places, times, fruits, animals, sports), such as "Nobody
# forgot the peel of mangoes.", each after a filler sentence such as the first line printed
# below. Notebook 10 needs them. `load_small_corpus` holds out 10% of each language's paragraphs for
# evaluation. The shipped model's WordPiece tokenizer splits English into words and word pieces
# and Chinese into single characters. The examples of this section use a quarter of the
# training paragraphs, each pair masked once; `max_len` is 64, as for the shipped model.

# %% [markdown] lang="zh"
# 标题行没有了，只有一个句子的段落也没有了。在 `" . "` 处切分句子的两个小毛病也暴露了出来：每个段落
# 最后一个句子末尾的 `.` 留了下来（这一行到此结束，后面没有 `" . "`）；WikiText 自己的词元也留了下
# 来，例如表示小数点的 `@.@` 和表示连字符的 `@-@`。练习 3 会尝试其他切分句子的方法。
#
# 在其余的笔记本中，`bertlib` 使用自带的一个小型双语语料库，专为这些笔记本编写（见
# `data/README.md`），每行一个句子：2000 个英文段落和 2000 个中文段落，分为两类。每种语言中，400 个
# 段落是日常生活中的小故事（坐火车、过生日、搬家……），每段 5 或 6 个句子；其余 1600 个段落每段 4 个
# 句子，讲的是六个词类（人名、地点、时间、水果、动物和运动）中的某一个词，例如“谁也忘不了榴莲的果
# 皮。”，每个这样的句子前面都有一个填充句，例如下面打印的第一行。笔记本 10 要用到这些段落。
# `load_small_corpus` 从每种语言的段落中各留出 10% 用于评估。自带模型的 WordPiece 分词器把英文切分成
# 单词和子词，把中文切分成单个汉字。本节的示例只用四分之一的训练段落，每个句子对只掩蔽一次；
# `max_len` 与自带模型相同，都是 64。

# %% [markdown] lang="ja"
# 見出しの行は消え、文が 1 つしかない段落も消えました。`" . "` で切ることの癖も 2 つ見えます。各段落
# の最後の文は末尾の `.` を残したままです（行がそこで終わるので、後ろに `" . "` がありません）。ま
# た、小数点を表す `@.@` やハイフンを表す `@-@` のような WikiText 独自のトークンもそのまま残ります。
# 演習 3 では、文を切り分ける別の方法を試します。
#
# 以降のノートブックでは、`bertlib` に付属する小さな 2 言語のコーパスを使います。このノートブックの
# ために書かれたもので（`data/README.md` を参照）、1 行に 1 文ずつ、英語 2000 段落と中国語 2000 段落
# からなり、段落は 2 種類あります。各言語のうち 400 段落は短い日常の物語（電車の旅、誕生日、引っ越
# し……）で、1 段落は 5 文か 6 文です。残りの 1600 段落は、6 つの単語クラス（人名、場所、時間、果物、
# 動物、スポーツ）のいずれかの 1 語についての 4 文からなります。"Nobody forgot the peel of mangoes."
# のような文で、その前にはいつも、下に表示される最初の行のような埋め草の文が置かれています。ノートブ
# ック 10 にはこれらの段落が必要です。`load_small_corpus` は、各言語の段落の 10% を評価用に取り分け
# ます。付属モデルの WordPiece トークナイザは、英語を単語とサブワードに、中国語を 1 文字ずつに切り分
# けます。この節の例では学習用の段落の 4 分の 1 を使い、各ペアには 1 回だけマスクをかけます。
# `max_len` は付属モデルと同じ 64 です。

# %%
small_bert, tokenizer = load_small_bert()  # its tokenizer now, the model itself at the end
vocab = tokenizer.vocab
split = load_small_corpus()
paragraphs, langs = split.train + split.held_out, split.train_langs + split.held_out_langs
print(tr("paragraphs: English {en}, Chinese {zh}; {low} to {high} sentences each",
         en=langs.count("en"), zh=langs.count("zh"), low=min(map(len, paragraphs)),
         high=max(map(len, paragraphs))))
print(tr("paragraphs: train {train}  held out {held_out}",
         train=len(split.train), held_out=len(split.held_out)))
print(split.train[0][0], "->", tokenizer.tokenize(split.train[0][0]))
print(split.train[-1][0], "->", tokenizer.tokenize(split.train[-1][0]))

# %% [markdown] lang="en"
# `make_pretrain_data` builds the NSP pairs (notebook 05) and masks them (notebook 04), then
# pads them, as the chapter's `_pad_bert_inputs` does: every example is extended to one fixed
# size, its tokens with `<pad>` ids, its prediction slots with zeros, and each field becomes one
# tensor of shape (number of examples, that size). The weights are 1 exactly on the real
# prediction slots:

# %% [markdown] lang="zh"
# `make_pretrain_data` 先构造下一句预测的句子对（笔记本 05），再做掩蔽（笔记本 04），最后像本章的
# `_pad_bert_inputs` 那样进行填充：每个样本都补齐到同一个固定长度，词元用 `<pad>` 的词元索引补齐，预
# 测位置用 0 补齐，每个字段再拼成一个形状为（样本数, 该长度）的张量。权重只在真实的预测位置上为 1：

# %% [markdown] lang="ja"
# `make_pretrain_data` は次文予測のペアを作り（ノートブック 05）、マスクをかけ（ノートブック 04）、
# 章の `_pad_bert_inputs` と同じようにパディングします。各例を 1 つの決まった長さまで伸ばし、トー
# クンは `<pad>` の ID で、予測位置は 0 で埋め、各フィールドを形状（例の数、その長さ）の 1 つのテン
# ソルにまとめます。重みは、実在する予測位置でちょうど 1 になります。

# %%
show_source(pad_bert_inputs, region="padding")

# %%
data = make_pretrain_data(tokenize_paragraphs(split.train[::4], tokenizer.tokenize), vocab,
                          max_len=64, seed=0, groups=split.train_langs[::4])
print("len(vocab) =", len(vocab), tr(" pairs: {count}", count=len(data)))
print("tokens", tuple(data.tokens.shape), " pred_positions", tuple(data.pred_positions.shape))
print(tr("real prediction slots: {share:.2f} of all slots", share=data.mlm_weights.mean()))

# %% [markdown] lang="en"
# Fewer than half of the prediction slots are real (0.36): the sentence pairs here are shorter
# than 64 tokens, so they get fewer than the P = 10 prediction positions, and the rest is
# padding. This is why the weights of notebook 04 matter so much.
#
# The chapter wraps its examples in a `torch.utils.data.Dataset` and hands it to a
# `DataLoader`, which cuts it into shuffled mini-batches. The padded data are already tensors,
# so `make_loader` wraps them in a `TensorDataset` (item i is row i of every tensor) and
# shuffles with a seeded generator, so that the same seed always gives the same batches:

# %% [markdown] lang="zh"
# 真实的预测位置还不到一半（0.36）：这里的句子对都不到 64 个词元，分到的预测位置少于 P = 10 个，其余
# 的都是填充。正因为如此，笔记本 04 中的权重才这么重要。
#
# 本章把样本包装成 `torch.utils.data.Dataset`，交给 `DataLoader` 切分成打乱顺序的小批量。填充后的数
# 据已经是张量，所以 `make_loader` 直接把它们包装成 `TensorDataset`（第 i 个样本就是每个张量的第 i
# 行），并用设定了随机种子的生成器打乱顺序，这样同一个随机种子总会给出同样的批量：

# %% [markdown] lang="ja"
# 実在する予測位置は半分に届きません（0.36）。ここの文ペアは 64 トークンより短いので、予測位置が P =
# 10 個より少なくなり、残りはパディングになるからです。ノートブック 04 の重みがこれほど重要なのはこ
# のためです。
#
# 章は例を `torch.utils.data.Dataset` に包んで `DataLoader` に渡し、シャッフルしたミニバッチに切り
# 分けます。パディングしたデータはすでにテンソルなので、`make_loader` はそれを `TensorDataset`（i 番
# 目の要素は各テンソルの i 行目）に包み、乱数シードを設定した生成器でシャッフルします。こうすれば、
# 同じ乱数シードからは必ず同じバッチが得られます。

# %%
show_source(make_loader, region="loader")

# %%
loader = make_loader(data, batch_size=32, seed=0)
print(tr("{pairs} pairs in batches of 32: len(loader) = {batches}",
         pairs=len(data), batches=len(loader)))
batch = next(iter(loader))
for field, tensor in zip(fields(data), batch, strict=True):
    print(f"{field.name:<15}{tuple(tensor.shape)!s:<10} {tensor.dtype}")

# %% [markdown] lang="en"
# Seven tensors per mini-batch, the last one shorter when the data do not divide evenly. This
# tuple is what a training step receives.

# %% [markdown] lang="zh"
# 每个小批量有七个张量；样本数不能被批量大小整除时，最后一个小批量会小一些。训练的每一步接收的就是这
# 个元组。

# %% [markdown] lang="ja"
# ミニバッチ 1 つにつき 7 つのテンソルがあり、データ数がバッチサイズで割り切れないときは最後のミニ
# バッチが小さくなります。学習の各ステップが受け取るのは、このタプルです。

# %% [markdown] lang="en"
# ## The combined loss
#
# Pretraining minimises one number: the MLM loss plus the NSP loss. The chapter calls the final
# loss a linear combination of the two; its training code, like the original BERT, simply adds
# them with equal weights. The MLM part is the weighted loss of notebook 04: the mean
# cross-entropy over the real prediction slots, which padded slots must not touch.
#
# **Implement it (exercise 2).** Before you read `bert_loss`, write that MLM part yourself in the
# cell below: `mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)`, where `mlm_Y_hat` holds the logits
# `(B, P, V)`, `mlm_Y` the token ids to predict `(B, P)` and `mlm_weights` 1 for a real slot and
# 0 for a padded one `(B, P)`, returns the mean cross-entropy over the real slots, a scalar. The
# check runs it against `bertlib`'s on several cases, large logits included, and tells you which
# case fails; add `hint=1` to it for a hint.

# %% [markdown] lang="zh"
# ## 总损失
#
# 预训练要最小化的只有一个数：掩蔽语言模型的损失与下一句预测的损失之和。本章称最终的损失是两者的线性
# 组合；而它的训练代码和原始 BERT 一样，只是把两者等权相加。其中掩蔽语言模型的部分就是笔记本 04 中
# 的加权损失：真实预测位置上交叉熵的平均值，填充的预测位置不能对它有任何影响。
#
# **动手实现（练习 2）。** 先别看 `bert_loss`，在下面的单元格里自己写出掩蔽语言模型的这部分损失：
# `mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)`，其中 `mlm_Y_hat` 是形状为 `(B, P, V)` 的 logits，
# `mlm_Y` 是要预测的词元索引 `(B, P)`，`mlm_weights` 在真实的预测位置上为 1、在填充的预测位置上为 0
# `(B, P)`；它返回真实预测位置上交叉熵的平均值，是一个标量。检查单元格会用多个测试用例（包括很大的
# logits）把它与 `bertlib` 的实现对照，并告诉你哪个测试用例没有通过；需要提示的话，在检查中加上
# `hint=1`。

# %% [markdown] lang="ja"
# ## 損失を合わせる
#
# 事前学習で最小化するのは、マスク言語モデルの損失と次文予測の損失の和という 1 つの数です。章は最
# 終的な損失を 2 つの損失の線形結合と呼んでいますが、その学習コードは元の BERT と同じく、両者を同じ
# 重みで足しているだけです。マスク言語モデルの部分は、ノートブック 04 の重み付きの損失です。つまり、
# 実在する予測位置での交差エントロピーの平均で、パディングした予測位置はこれにまったく影響してはいけ
# ません。
#
# **自分で実装してみましょう（演習 2）。** `bert_loss` を読む前に、マスク言語モデルのこの部分を下の
# セルで書いてください。`mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)` です。`mlm_Y_hat` はロジット `(B,
# P, V)`、`mlm_Y` は予測すべきトークンインデックス `(B, P)`、`mlm_weights` は実在する予測位置で
# 1、パディングした位置で 0 の `(B, P)` で、実在する予測位置での交差エントロピーの平均（スカラー）を
# 返します。チェック用のセルは、大きなロジットを含むいくつかのテストケースで `bertlib` の実装と比
# べ、どのテストケースで食い違うかを教えてくれます。ヒントが欲しいときは、チェックに `hint=1` を加え
# てください。


# %%
def mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights):
    """Exercise 2. mlm_Y_hat: (B, P, V) logits; mlm_Y: (B, P) token ids; mlm_weights: (B, P),
    1 on a real slot and 0 on a padded one. Returns the mean cross-entropy over the real slots
    (a 0-dim tensor)."""
    raise NotImplementedError  # replace this line with your code


check_implementation("06_mlm_loss", mlm_loss)

# %% [markdown] lang="en"
# The heart of `bert_loss`:

# %% [markdown] lang="zh"
# 下面是 `bert_loss` 的核心部分：

# %% [markdown] lang="ja"
# `bert_loss` の中心部分です。

# %%
show_source(bert_loss, region="loss")

# %% [markdown] lang="en"
# Each slot's cross-entropy is multiplied by its weight, and the sum is divided by the sum of the
# weights: a padded slot (weight 0) changes neither. This needs `reduction="none"`. The chapter's
# PyTorch training code computes the MLM part with a mean-reduced loss instead, a single number
# that the weights then cancel out of, so padded slots count as much as real ones (notebook 04,
# d2l-en issue #2582).
#
# We build a model smaller than the shipped one (H = 64 instead of 128) so that the live run
# below takes under a minute, and compute the loss of one batch of 32 pairs. Before
# training, the model is close to guessing uniformly: about $\ln V$ for MLM and $\ln 2$ for NSP.

# %% [markdown] lang="zh"
# 把每个预测位置的交叉熵乘以它的权重，再用乘积之和除以权重之和：填充的预测位置（权重为 0）既不影响分
# 子，也不影响分母。为此需要 `reduction="none"`。本章 PyTorch 版的训练代码则用按均值归约的损失来计算
# 掩蔽语言模型的部分：得到的只是一个数，权重乘上去再除掉，正好相互抵消，于是填充位置和真实位置一样计
# 入损失（见笔记本 04 和 d2l-en issue #2582）。
#
# 我们构建一个比自带模型更小的模型（H = 64，而不是 128），好让下面的现场训练不到一分钟就能完成，然后
# 计算一个批量（32 个句子对）的损失。训练之前，模型的预测接近均匀猜测：掩蔽语言模型的损失约为
# $\ln V$，下一句预测的损失约为 $\ln 2$。

# %% [markdown] lang="ja"
# 各予測位置の交差エントロピーにその重みを掛け、その和を重みの和で割ります。パディングした予測位置
# （重み 0）は、分子にも分母にも影響しません。そのためには `reduction="none"` が必要です。章の
# PyTorch 版の学習コードは、マスク言語モデルの部分を平均で集約した損失で計算しています。これでは損失
# が 1 つの数になり、重みを掛けても割っても打ち消し合うだけなので、パディングした位置も実在する位置
# と同じだけ損失に数えられてしまいます（ノートブック 04、d2l-en issue #2582）。
#
# 下のその場での学習が 1 分以内に終わるように、付属モデルより小さなモデル（H = 128 ではなく 64）を
# 作り、32 組のペアからなるバッチ 1 つの損失を計算します。学習前のモデルは一様な推測に近く、損失はマ
# スク言語モデルで約 $\ln V$、次文予測で約 $\ln 2$ になります。

# %%
config = BERTConfig(vocab_size=len(vocab), num_hiddens=64, ffn_num_hiddens=128, num_heads=2,
                    num_blks=2, dropout=0.0, max_len=64)
model = init_model(config, seed=0).eval()  # eval mode: no dropout, so no random draws
tokens, segments, valid_lens, pred_positions, mlm_weights, mlm_labels, nsp_labels = batch

_, mlm_Y_hat, nsp_Y_hat = model(tokens, segments, valid_lens, pred_positions)
loss = bert_loss(mlm_Y_hat, mlm_labels, mlm_weights, nsp_Y_hat, nsp_labels)
print(tr("MLM {mlm:.3f}  (ln V = {ln_v:.3f})", mlm=loss.mlm, ln_v=math.log(len(vocab))))
print(tr("NSP {nsp:.3f}  (ln 2 = {ln_2:.3f})", nsp=loss.nsp, ln_2=math.log(2)))
print(tr("total {total:.3f}", total=loss.total))

# %% [markdown] lang="en"
# `mlm_Y_hat` above has B × P × V entries, padding included. `train_bert` uses `fast_loss`
# instead, which sends only the K real slots through the MLM head and fuses its last layer with
# the cross-entropy (it also skips padded tokens inside the encoder; notebook 07 measures what
# that saves). Same numbers, less work:

# %% [markdown] lang="zh"
# 上面的 `mlm_Y_hat` 有 B × P × V 个元素，包括填充位置。`train_bert` 改用 `fast_loss`：它只让
# K 个真实位置经过掩蔽语言模型的输出层，并把输出层的最后一层与交叉熵合并计算（它在编码器里也跳过
# 填充的词元，笔记本 07 会测量这能省下多少计算）。结果相同，计算量更少：

# %% [markdown] lang="ja"
# 上の `mlm_Y_hat` には、パディングを含めて B × P × V 個の要素があります。`train_bert` は代わりに
# `fast_loss` を使います。これは実在する K 個の予測位置だけをマスク言語モデルの出力層に通し、出力層
# の最後の層を交差エントロピーとまとめて計算します（エンコーダの中でもパディングのトークンを飛ばしま
# す。それで何が省けるかはノートブック 07 で測ります）。結果は同じで、計算は少なくて済みます。

# %%
fast = fast_loss(model, *batch)
print("fast_loss:", tr("MLM {mlm:.3f}  NSP {nsp:.3f}  total {total:.3f}",
                       mlm=fast.mlm, nsp=fast.nsp, total=fast.total))
print("B x P =", mlm_weights.numel(), " K =", int(mlm_weights.sum()))

# %% [markdown] lang="en"
# ## One pretraining step
#
# A step is: clear the old gradients, compute the loss, backpropagate, let the optimiser
# (Adam, as in the chapter) update every parameter. `train_step` does exactly that:

# %% [markdown] lang="zh"
# ## 一步预训练
#
# 训练一步要做这几件事：清除旧的梯度、计算损失、反向传播，再由优化器（与本章一样用 Adam）更新所有参
# 数。`train_step` 做的正是这些：

# %% [markdown] lang="ja"
# ## 事前学習の 1 ステップ
#
# 1 ステップでは、古い勾配を消し、損失を計算し、逆伝播し、オプティマイザ（章と同じく Adam）にすべ
# てのパラメータを更新させます。`train_step` が行うのはまさにこれです。

# %%
show_source(train_step)

# %% [markdown] lang="en"
# After one step every parameter tensor has a gradient, and the total loss on the same batch is
# lower; one of its two parts may still go up, since the step follows the gradient of the sum.

# %% [markdown] lang="zh"
# 执行一步之后，每个参数张量都有了梯度，同一个批量上的总损失也降低了；不过两项损失中的某一项仍可能上
# 升，因为这一步是沿着两者之和的梯度走的。

# %% [markdown] lang="ja"
# 1 ステップの後には、すべてのパラメータのテンソルが勾配を持ち、同じバッチでの損失の合計は下がってい
# ます。ただし、2 つの損失の一方は上がることもあります。このステップは両者の和の勾配に沿って進むから
# です。

# %%
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
before = train_step(model, optimizer, batch, fast_loss)  # the losses before the update
with_grad = sum(p.grad is not None for p in model.parameters())
print(tr("parameter tensors with a gradient: {count} of {total}",
         count=with_grad, total=len(list(model.parameters()))))
with torch.no_grad():
    after = fast_loss(model, *batch)
print(tr("before: ") + tr("MLM {mlm:.3f}  NSP {nsp:.3f}  total {total:.3f}",
                          mlm=before.mlm, nsp=before.nsp, total=before.total))
print(tr("after:  ") + tr("MLM {mlm:.3f}  NSP {nsp:.3f}  total {total:.3f}",
                          mlm=after.mlm, nsp=after.nsp, total=after.total))

# %% [markdown] lang="en"
# ## A short live run
#
# `train_bert` repeats that step over mini-batches and reports progress: the bar shows the latest
# losses and the speed in sentence pairs per second. Its `callback` runs after every step: here it
# lets `LossPlot` redraw both losses every 25 steps. Every random draw (initial weights, batch
# order) is seeded, so you get the same losses as printed here. The model is the small one above,
# without dropout: over a run this short dropout only slows learning, and drawing its random masks
# is a sizeable part of a step on a CPU. It trains on every training paragraph, paired and masked
# once (the first lines below), 300 steps of 128 pairs, which takes under a minute on one thread.
# Then we ask it about pairs from the held-out paragraphs, which it has never seen:

# %% [markdown] lang="zh"
# ## 一次简短的现场训练
#
# `train_bert` 在一个个小批量上重复这一步，并报告进度：进度条显示最新的损失和速度（每秒处理的句子对
# 数）。每一步之后都会调用它的 `callback`：这里让 `LossPlot` 每 25 步重画一次两个损失的曲线。所
# 有随机抽样（初始权重、批量顺序）都设定了随机种子，所以你得到的损失与这里打印的相同。模型就是上面那
# 个小模型，但不用 dropout（暂退法）：训练时间这么短，dropout 只会拖慢学习，而且在 CPU 上为它抽取随
# 机掩码，在每一步的用时中占了不小的比重。下面的前几行把全部训练段落构造成句子对并掩蔽一次，模型在这
# 些句子对上训练 300 步，每步 128 个句子对，在一个线程上不到一分钟。然后用留出段落中的句子对来考考
# 它，这些句子对它从未见过：

# %% [markdown] lang="ja"
# ## その場で短く学習させる
#
# `train_bert` はこのステップをミニバッチごとに繰り返し、進み具合を報告します。進捗バーには直近の
# 損失と、1 秒あたりに処理した文ペアの数で表した速さが表示されます。`callback` は各ステップの後に
# 呼ばれます。ここでは `LossPlot` に 25 ステップごとに 2 つの損失を描き直させます。乱数を使う処理
# （初期の重み、バッチの順序）にはすべて乱数シードを設定してあるので、ここに表示されているのと同
# じ損失が得られます。モデルは上の小さなモデルで、ドロップアウトは使いません。これほど短い学習で
# は、ドロップアウトは学習を遅くするだけで、そのランダムなマスクを引く処理が CPU では 1 ステップ
# の時間のかなりの部分を占めるからです。下の最初の数行で学習用の段落をすべてペアにして 1 回マスク
# をかけ、128 組ずつ 300 ステップ学習させます。1 スレッドで 1 分もかかりません。その後、モデルが
# 一度も見ていないホールドアウトの段落のペアについて尋ねてみます。

# %%
def paragraphs_in(lang):
    return [p for p, lang_p in zip(split.train, split.train_langs, strict=True) if lang_p == lang]


# All training paragraphs, paired and masked once, one language after the other.
by_lang = {lang: make_pretrain_data(tokenize_paragraphs(paragraphs_in(lang), tokenizer.tokenize),
                                    vocab, max_len=64, seed=0) for lang in ("en", "zh")}
train_pairs = PretrainBatch(*(torch.cat(t) for t in zip(*(d.tensors() for d in by_lang.values()),
                                                         strict=True)))
model = init_model(config, seed=0)
loss_plot = LossPlot(every=25)  # its update redraws the losses every 25 steps
history = train_bert(model, train_pairs, num_steps=300, batch_size=128, lr=3e-3, seed=0,
                     loss_fn=fast_loss, callback=loss_plot.update)
for name, losses in ((tr("MLM"), history.mlm), (tr("NSP"), history.nsp)):
    print(tr("{name}: mean of steps 1-25 {first:.2f}, of steps 276-300 {last:.2f}",
             name=name, first=sum(losses[:25]) / 25, last=sum(losses[-25:]) / 25))

held_out = make_pretrain_data(tokenize_paragraphs(split.held_out, tokenizer.tokenize), vocab,
                              max_len=64, seed=2, groups=split.held_out_langs)
scores = evaluate_pretraining(model, held_out)
n = scores["pairs"]
print(tr("held-out NSP accuracy ({n} pairs, chance 0.5): {acc}",
         n=n, acc=Accuracy(round(scores["nsp_accuracy"] * n), n)))
print(tr("held-out MLM top-1 accuracy: {acc:.3f} (most frequent token: {baseline:.3f})",
         acc=scores["mlm_accuracy"], baseline=scores["mlm_majority_baseline"]))

# %% [markdown] lang="en"
# In 300 steps the MLM loss falls from 6.25 to 2.53 and the NSP loss from 0.71 to 0.50 (means of the
# first and the last 25 steps; each point of the plot comes from a single mini-batch, hence the
# noise). On the 1331 held-out pairs the model now tells IsNext from NotNext 0.777 of the time, and
# the 95% interval [0.754, 0.798] lies above chance: in under a minute it has begun to relate the
# two sentences. It fills in 0.489 of the masked tokens, against 0.050 for always guessing the most
# frequent token. The shipped model does better, and far better at MLM (0.841 and 0.880, printed in
# the next section; notebook 07 shows how far its recipe gets when stopped early, in class).

# %% [markdown] lang="zh"
# 在这 300 步里，掩蔽语言模型的损失从 6.25 降到 2.53，下一句预测的损失从 0.71 降到 0.50（分别是最前
# 和最后 25 步的平均值；图中每个点只来自一个小批量，所以曲线有噪声）。在 1331 个留出的句子对上，模型
# 区分“是下一句”和“不是下一句”的准确率已经达到 0.777，95% 置信区间 [0.754, 0.798] 高于随机猜测：训练
# 不到一分钟，它已经开始把两个句子联系起来了。对于被掩蔽的词元，它能填对 0.489，而总猜最常见的词元只
# 能填对 0.050。自带模型更好，掩蔽语言模型尤其好得多（0.841 和 0.880，下一节会打印出来；
# 按同样的训练配置在课堂上提前停下能达到什么水平，见笔记本 07）。

# %% [markdown] lang="ja"
# 300 ステップのあいだに、マスク言語モデルの損失は 6.25 から 2.53 に、次文予測の損失は 0.71 から
# 0.50 に下がりました（最初と最後の 25 ステップの平均。グラフの各点は 1 つのミニバッチだけから計算し
# ているので、ばらつきがあります）。1331 組のホールドアウトのペアで、モデルが「次の文」と「次の文で
# はない」を正しく見分ける割合は 0.777 になり、95% 信頼区間 [0.754, 0.798] はチャンスレベルを上回っ
# ています。1 分足らずの学習で、2 つの文を関連づけ始めたのです。マスクされたトークンは 0.489 を正し
# く埋められ、常に最も頻度の高いトークンを答える場合の 0.050 を上回ります。付属モデルはより優秀で、
# マスク言語モデルではずっと上です（0.841 と 0.880。次の節で表示します。同じ学習
# 設定を授業の中で早めに止めるとどこまで届くかは、ノートブック 07 で示します）。

# %% [markdown] lang="en"
# ## From 12 minutes to four days
#
# `scripts/pretrain_small.py` trains the shipped small BERT with the chapter's pretraining sizes
# (H = 128, FFN 256, 2 heads, 2 blocks) on all training paragraphs, paired and masked afresh 10
# times, and ships the result in `bertlib/assets/small_bert/`, with the losses and the held-out
# evaluation in `metrics.json`. Here is its full run:

# %% [markdown] lang="zh"
# ## 从 12 分钟到四天
#
# `scripts/pretrain_small.py` 负责训练自带的小 BERT：模型尺寸与本章预训练时相同（H = 128，前馈网络
# 256，2 个头，2 个编码器块），使用全部训练段落，重新构造句子对并掩蔽，共 10 遍；训练结果放在
# `bertlib/assets/small_bert/` 中，损失和留出数据上的评估结果记录在 `metrics.json` 里。下面是它完整
# 的训练过程：

# %% [markdown] lang="ja"
# ## 12 分から 4 日へ
#
# `scripts/pretrain_small.py` は、章の事前学習と同じサイズ（H = 128、FFN 256、ヘッド 2、ブロック
# 2）で、付属の小さな BERT を学習させます。学習用の段落をすべて使い、ペアの作成とマスクを 10 回やり
# 直します。結果は `bertlib/assets/small_bert/` に収められ、損失とホールドアウトデータでの評価は
# `metrics.json` に記録されています。その学習全体を見てみましょう。

# %%
metrics = small_bert_metrics()
recipe, run = metrics["recipe"], metrics["training"]
print(", ".join(f"{k}={recipe[k]}" for k in ("num_hiddens", "ffn_num_hiddens", "num_heads",
                                              "num_blks", "batch_size", "lr", "num_steps")))

every = run["loss_every_steps"]
steps = [1 + i * every for i in range(len(run["mlm_loss"]))]
fig = new_figure(6, 3.2)
ax = fig.subplots()
ax.plot(steps, run["mlm_loss"], label=tr("MLM loss"))
ax.plot(steps, run["nsp_loss"], label=tr("NSP loss"))
ax.axhline(math.log(2), color="gray", linestyle="--", linewidth=1, label=tr("ln 2: NSP by coin "
                                                                            "toss"))
ax.set_xlabel(tr("step"))
ax.set_ylabel(tr("loss"))
ax.set_title(tr("The shipped model's full run: {steps} steps, {minutes} min",
                steps=recipe["num_steps"], minutes=round(run["seconds"] / 60)))
ax.legend()
display(fig)
early, late = run["nsp_loss"][:200 // every], run["nsp_loss"][-50 // every:]
print(tr("NSP loss (recorded every {every} steps): mean over steps {a}-{b} {early:.2f}, over "
         "steps {c}-{d} {late:.2f}",
         every=every, a=1, b=200, early=sum(early) / len(early), c=recipe["num_steps"] - 49,
         d=recipe["num_steps"], late=sum(late) / len(late)))
print(tr("shipped model (its own run): NSP {nsp:.3f}, MLM {mlm:.3f}",
         nsp=metrics["held_out"]["nsp_accuracy"], mlm=metrics["held_out"]["mlm_accuracy"]))

# %% [markdown] lang="en"
# The MLM loss falls for all 3000 steps, fast at first, then ever more slowly. The NSP loss stays
# near $\ln 2$ for about the first 200 steps (the line printed with the plot gives their mean),
# then creeps down slowly, to about 0.40 over steps 2951 to 3000. In the chapter's run, and in the
# live run above, the MLM loss stays far above the NSP loss; in this longer run it drops below
# it over the last third of the steps (exercise 5 asks what the comparison of the two losses
# says).
#
# The original BERT was trained the same way, at a far larger scale. The BERT paper (Devlin et
# al., 2018) in full, next to the shipped model:

# %% [markdown] lang="zh"
# 掩蔽语言模型的损失在全部 3000 步中一直在下降，起初很快，之后越来越慢。下一句预测的损失在大约前
# 200 步里一直停留在 $\ln 2$ 附近（随图打印的那一行给出了这段时间的平均值），之后缓慢下降，第
# 2951–3000 步平均约为 0.40。在本章的训练和上面的现场训练中，掩蔽语言模型的损失始终远高于下一句预
# 测的损失；在这次更长的训练中，它在最后三分之一的步数里降到了下一句预测的损失之下（练习 5 会问：
# 比较这两个损失能说明什么？）。
#
# 原始的 BERT 也是这样训练的，只是规模要大得多。下面把 BERT 论文（Devlin 等人，2018）中的完整训练配
# 置与自带模型并列对照：

# %% [markdown] lang="ja"
# マスク言語モデルの損失は 3000 ステップのあいだずっと下がり続けます。はじめは速く、その後はしだい
# にゆっくりになります。次文予測の損失は最初の 200 ステップほど $\ln 2$ の近くにとどまり（グラフと
# ともに表示した行がその平均です）、その後ゆっくり下がって、ステップ 2951–3000 では約 0.40 になりま
# す。章の学習でも上のその場での学習でも、マスク言語モデルの損失は次文予測の損失よりずっと高いま
# まですが、この長い学習では、最後の 3 分の 1 のステップで次文予測の損失を下回ります（2 つの損失を
# 比べて何が言えるのかは、演習 5 で考えます）。
#
# 元の BERT も同じ方法で、ただしはるかに大きな規模で学習されました。BERT 論文（Devlin ら、2018）の学
# 習設定の全体を、付属モデルと並べてみます。

# %% [markdown] lang="en"
# | | BERT paper | shipped model |
# | --- | --- | --- |
# | model | BERT-Base: 12 blocks, H = 768, 12 heads, 110M parameters; BERT-Large: 24 blocks, H = 1024, 16 heads, 340M parameters | 2 blocks, H = 128, 2 heads |
# | pretraining text | BooksCorpus (800M words) and English Wikipedia (2,500M words) | 15,610 sentences, 164,550 WordPiece tokens, English and Chinese |
# | batch | 256 sequences | 128 sentence pairs |
# | steps | 1,000,000, about 40 passes over the text | 3,000, in 10 rounds of fresh pairs and masks |
# | sequence length | 128 tokens for 90% of the steps, then 512 | 64 tokens throughout |
# | optimiser | Adam, learning rate 1e-4, warm-up over the first 10,000 steps, then linear decay | Adam, learning rate 0.002, constant |
# | dropout | 0.1 on every layer | none |
# | time | 4 days, on 16 TPU chips (BERT-Large: 64) | 12 minutes on one CPU thread |
#
# The shipped column, from the model's recipe and its corpus:

# %% [markdown] lang="zh"
# | | BERT 论文 | 自带模型 |
# | --- | --- | --- |
# | 模型 | BERT-Base：12 个编码器块，H = 768，12 个头，1.1 亿个参数；BERT-Large：24 个编码器块，H = 1024，16 个头，3.4 亿个参数 | 2 个编码器块，H = 128，2 个头 |
# | 预训练文本 | 图书语料库（8 亿个词）和英文维基百科（25 亿个词） | 15,610 个句子，164,550 个 WordPiece 词元，英文和中文 |
# | 批量大小 | 256 个序列 | 128 个句子对 |
# | 训练步数 | 1,000,000，约遍历文本 40 次 | 3,000，共 10 轮，每轮重新构造句子对和掩码 |
# | 序列长度 | 前 90% 的训练步为 128 个词元，其余为 512 个 | 始终为 64 个词元 |
# | 优化器 | Adam，学习率 1e-4，前 10,000 步预热，之后线性衰减 | Adam，学习率 0.002，全程不变 |
# | dropout | 每一层 0.1 | 不用 |
# | 训练时间 | 在 16 个 TPU 芯片上训练 4 天（BERT-Large：64 个） | 在一个 CPU 线程上训练 12 分钟 |
#
# 自带模型这一列的数字来自它的训练配置和语料库：

# %% [markdown] lang="ja"
# | | BERT 論文 | 付属モデル |
# | --- | --- | --- |
# | モデル | BERT-Base：12 ブロック、H = 768、12 ヘッド、パラメータ 1.1 億。BERT-Large：24 ブロック、H = 1024、16 ヘッド、パラメータ 3.4 億 | 2 ブロック、H = 128、2 ヘッド |
# | 事前学習のテキスト | BooksCorpus（8 億語）と英語版 Wikipedia（25 億語） | 15,610 文、164,550 WordPiece トークン、英語と中国語 |
# | バッチ | 256 シーケンス | 128 組の文ペア |
# | ステップ数 | 1,000,000、テキストを約 40 周 | 3,000、10 ラウンドに分け、ラウンドごとに文ペアとマスクを作り直す |
# | シーケンス長 | ステップの 90% は 128 トークン、残りは 512 | 常に 64 トークン |
# | オプティマイザ | Adam、学習率 1e-4、最初の 10,000 ステップでウォームアップし、その後は線形に減衰 | Adam、学習率 0.002、一定 |
# | ドロップアウト | すべての層で 0.1 | なし |
# | 学習時間 | 16 個の TPU チップで 4 日（BERT-Large は 64 個） | CPU の 1 スレッドで 12 分 |
#
# 付属モデルの列の数字は、学習設定とコーパスから取ったものです：

# %%
sentences = [s for paragraph in split.train for s in paragraph]
print(", ".join(f"{k}={recipe[k]}" for k in ("max_len", "train_rounds", "dropout", "threads")))
print(tr("{sentences:,} sentences, {tokens:,} WordPiece tokens; {minutes} minutes of training",
         sentences=len(sentences), tokens=sum(len(tokenizer.tokenize(s)) for s in sentences),
         minutes=round(run["seconds"] / 60)))

# %% [markdown] lang="en"
# Since attention costs grow with the square of the length, the paper trained on short sequences
# for most steps and used the full 512 only at the end, to learn the position embeddings beyond
# 128. The shipped model keeps the recipe's tasks and optimiser (MLM + NSP, Adam), trains without
# dropout and shrinks every number; notebook 08 asks what it learned all the same.

# %% [markdown] lang="zh"
# 注意力的计算量随序列长度的平方增长，所以论文在大部分步数里用短序列训练，只在最后才用完整的 512 个
# 词元，好让模型学到 128 以后的位置嵌入。自带模型沿用了这套训练配置的任务和优化器（掩蔽语言模型 +
# 下一句预测、Adam），但不用 dropout，并把每个数字都缩小了；尽管缩小了这么多，它究竟学到了什么，是
# 笔记本 08 要探讨的问题。

# %% [markdown] lang="ja"
# アテンションの計算量は長さの 2 乗で増えるので、論文はほとんどのステップを短いシーケンスで学習し、
# 最後にだけ 512 トークンすべてを使って、128 より先の位置埋め込みを学習させました。付属モデルは学習
# 設定のタスクとオプティマイザ（マスク言語モデル + 次文予測、Adam）を受け継ぎ、ドロップアウトは使わ
# ず、数字をすべて小さくしています。それでも何を学んだのかは、ノートブック 08 で問います。

# %% [markdown] lang="en"
# ## Summary
#
# * `BERTModel` = `BERTEncoder` + `MaskLM` + (Linear + Tanh on `<cls>`) + `NextSentencePred`; it
#   returns `encoded_X` `(B, T, H)`, `mlm_Y_hat` `(B, P, V)` and `nsp_Y_hat` `(B, 2)`.
# * The data pipeline: paragraphs of sentences (`read_wikitext` reads the chapter's WikiText
#   format), NSP pairs, masking, padding to fixed-size tensors with weights 0 on padded slots,
#   and a seeded `DataLoader` over a `TensorDataset`.
# * The pretraining loss is the weighted MLM cross-entropy plus the NSP cross-entropy.
# * A training step is zero_grad, loss, backward, step; `train_bert` repeats it with seeded
#   batches, and `LossPlot` draws the losses as they come.
# * The original BERT: 110M (base) or 340M (large) parameters, 800M + 2,500M words, 1,000,000
#   steps of 256 sequences, 90% of them at 128 tokens; the shipped model shrinks every number.

# %% [markdown] lang="zh"
# ## 小结
#
# * `BERTModel` = `BERTEncoder` + `MaskLM` +（作用在 `<cls>` 上的全连接层 + Tanh）+
#   `NextSentencePred`；它返回 `encoded_X` `(B, T, H)`、`mlm_Y_hat` `(B, P, V)` 和 `nsp_Y_hat`
#   `(B, 2)`。
# * 数据流水线：由句子组成的段落（`read_wikitext` 读取本章的 WikiText 格式）、下一句预测的句子对、掩
#   蔽、填充成大小固定的张量（填充的预测位置权重为 0），以及基于 `TensorDataset`、设定了随机种子的
#   `DataLoader`。
# * 预训练的损失是加权的掩蔽语言模型交叉熵加上下一句预测的交叉熵。
# * 一步训练就是清零梯度、计算损失、反向传播、更新参数；`train_bert` 用设定了随机种子的批量重复这一
#   步，`LossPlot` 随训练实时画出损失。
# * 原始 BERT：1.1 亿（base）或 3.4 亿（large）个参数，8 亿 + 25 亿个词，每步 256 个序列、共
#   1,000,000 步，其中 90% 的步数用 128 个词元的序列；自带模型把每个数字都缩小了。

# %% [markdown] lang="ja"
# ## まとめ
#
# * `BERTModel` = `BERTEncoder` + `MaskLM` +（`<cls>` に作用する全結合層 + Tanh）+
#   `NextSentencePred` です。`encoded_X` `(B, T, H)`、`mlm_Y_hat` `(B, P, V)`、`nsp_Y_hat` `(B, 2)`
#   を返します。
# * データパイプライン：文からなる段落（`read_wikitext` は章の WikiText 形式を読みます）、次文予測
#   のペア、マスク、決まった大きさのテンソルへのパディング（パディングした予測位置の重みは 0）、そし
#   て `TensorDataset` の上に乱数シードを設定した `DataLoader`。
# * 事前学習の損失は、重み付きのマスク言語モデルの交差エントロピーと次文予測の交差エントロピーの和で
#   す。
# * 学習の 1 ステップは、勾配のクリア、損失の計算、逆伝播、更新です。`train_bert` はこれを乱数シード
#   を設定したバッチで繰り返し、`LossPlot` は損失を学習の進行とともに描きます。
# * 元の BERT：パラメータは 1.1 億（base）または 3.4 億（large）、8 億 + 25 億語、256 シーケンスで
#   1,000,000 ステップ、そのうち 90% は 128 トークン。付属モデルは数字をすべて小さくしています。

# %% [markdown] lang="en"
# ## Exercises
#
# 1. ★ **Count.** In the chapter's training step (`chapter_loss`, every pair padded to `max_len`)
#    with the shipped recipe's batch size 128 and `max_len` 64, how many numbers does `mlm_Y_hat`
#    hold? Check below.
# 2. ★★ **Implement it: the weighted MLM loss.** `mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)`, in
#    "The combined loss", in the cell before the listing of `bert_loss` (the listing gives the
#    answer away, so write yours first).
# 3. ★★ **Splitting sentences.** The chapter cuts sentences at `" . "` only and suggests a real
#    sentence splitter (spaCy or NLTK) instead. Split the lines of `WIKITEXT_SAMPLE` with a rule
#    of your own, for example a regular expression that cuts after `.`, `?` or `!` followed by a
#    space, or with NLTK's `sent_tokenize` if you have it. Compare with `read_wikitext`: where do
#    the sentences differ, and what happens to the final `.` and to `14 @.@ 5`?
# 4. ★★ **Vocabulary size.** The chapter keeps only words seen at least 5 times
#    (`min_freq=5`). Build word vocabularies of the English training sentences,
#    `Vocab([s.lower().split() for p, lang in zip(split.train, split.train_langs) if lang == "en"
#    for s in p], min_freq=k)` (`from bertlib.text.vocab import Vocab`), for k = 1, 2, 5. How many
#    entries does each hold, next to the `len(vocab)` of the WordPiece vocabulary, which also
#    covers Chinese? What happens to a word that is not in a word vocabulary, and to one that is
#    not in the WordPiece vocabulary? Check `len()` of the k = 5 vocabulary below.
# 5. ★★ In the live run, as in the chapter, the MLM loss stays far above the NSP loss. Does MLM
#    learn less? Divide each loss at the end of the live run (`history.mlm[-1]`,
#    `history.nsp[-1]`) by the loss of guessing uniformly: which of the two tasks has the model
#    brought further below its uniform guess, MLM or NSP? Do the same at the end of the shipped
#    run (`run["mlm_loss"][-1]`, `run["nsp_loss"][-1]`), where the MLM loss ends below the NSP
#    loss.

# %% [markdown] lang="zh"
# ## 练习
#
# 1. ★ **数一数。** 按本章的做法训练一步（`chapter_loss`，每个句子对都填充到 `max_len`），批量大小
#    取自带模型训练配置中的 128，`max_len` 为 64，这时 `mlm_Y_hat` 中有多少个数？在下面检查你的答
#    案。
# 2. ★★ **动手实现：加权的掩蔽语言模型损失。** 即“总损失”一节中、`bert_loss` 源代码之前那个单元格
#    里的 `mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)`（源代码会泄露答案，所以要先写出你自己的版本）。
# 3. ★★ **切分句子。** 本章只在 `" . "` 处切分句子，并建议改用真正的分句工具（spaCy 或 NLTK）。用你
#    自己的规则切分 `WIKITEXT_SAMPLE` 中的各行，例如用正则表达式在 `.`、`?` 或 `!` 后面紧跟空格的地
#    方切分；如果装有 NLTK，也可以用它的 `sent_tokenize`。与 `read_wikitext` 比较：哪些句子不同？末
#    尾的 `.` 和 `14 @.@ 5` 又变成了什么样？
# 4. ★★ **词表大小。** 本章只保留至少出现 5 次的词（`min_freq=5`）。用英文训练句子构建单词词表：
#    `Vocab([s.lower().split() for p, lang in zip(split.train, split.train_langs) if lang == "en"
#    for s in p], min_freq=k)`（`from bertlib.text.vocab import Vocab`），k 取 1、2、5。每个词表有
#    多少个条目？与 WordPiece 词表（它还覆盖中文）的 `len(vocab)` 相比如何？不在单词词表中的词会怎
#    样？不在 WordPiece 词表中的词又会怎样？在下面检查 k = 5 的词表的 `len()`。
# 5. ★★ 在现场训练中，和在本章中一样，掩蔽语言模型的损失远高于下一句预测的损失。这说明掩蔽语言模型
#    学到的更少吗？把现场训练结束时的两个损失（`history.mlm[-1]`、`history.nsp[-1]`）分别除以均匀猜
#    测时的损失：两个任务中，哪一个被训练得离均匀猜测更远，掩蔽语言模型还是下一句预测？再对自带模型
#    完整训练结束时的损失（`run["mlm_loss"][-1]`、`run["nsp_loss"][-1]`）做同样的计算，那时掩蔽语言
#    模型的损失已经低于下一句预测的损失。

# %% [markdown] lang="ja"
# ## 演習
#
# 1. ★ **数えてみよう。** 章の学習ステップ（`chapter_loss`、すべてのペアを `max_len` までパディン
#    グ）で、付属の学習設定のバッチサイズ 128、`max_len` 64 のとき、`mlm_Y_hat` にはいくつの数が入っ
#    ていますか。下で確かめましょう。
# 2. ★★ **実装してみよう：重み付きのマスク言語モデルの損失。**「損失を合わせる」の節で、`bert_loss`
#    のソースコードの前のセルにある `mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)` です（ソースコードを見
#    ると答えがわかってしまうので、先に自分で書きましょう）。
# 3. ★★ **文を切り分ける。** 章は `" . "` だけで文を切り、本物の文分割ツール（spaCy や NLTK）を使
#    うことを勧めています。`WIKITEXT_SAMPLE` の各行を自分の規則で切り分けてみましょう。たとえば、
#    `.`、`?`、`!` の後にスペースが続くところで切る正規表現や、NLTK があればその `sent_tokenize` を
#    使います。`read_wikitext` と比べて、どの文が違いますか。末尾の `.` と `14 @.@ 5` はどうなります
#    か。
# 4. ★★ **語彙のサイズ。** 章は 5 回以上現れた単語だけを残します（`min_freq=5`）。英語の学習用の文
#    から単語の語彙を作りましょう。`Vocab([s.lower().split() for p, lang in zip(split.train,
#    split.train_langs) if lang == "en" for s in p], min_freq=k)`（`from bertlib.text.vocab import
#    Vocab`）で、k = 1、2、5 とします。それぞれの語彙の項目はいくつですか。中国語も扱う WordPiece
#    の語彙の `len(vocab)` と比べるとどうでしょうか。単語の語彙にない単語はどうなり、WordPiece の語
#    彙にない単語はどうなりますか。k = 5 の語彙の `len()` を下で確かめましょう。
# 5. ★★ その場での学習では、章と同じく、マスク言語モデルの損失は次文予測の損失よりずっと高いまま
#    です。マスク言語モデルの学ぶことは少ないのでしょうか。その場での学習の最後の損失
#    （`history.mlm[-1]`、`history.nsp[-1]`）を、それぞれ一様な推測の損失で割ってみましょう。モデル
#    が一様な推測からより遠くまで下げたのは、マスク言語モデルと次文予測のどちらですか。付属モデルの
#    学習の最後の損失（`run["mlm_loss"][-1]`、`run["nsp_loss"][-1]`）でも同じ計算をしてみましょう。
#    こちらでは、マスク言語モデルの損失が次文予測の損失より低くなっています。

# %%
answer = None  # your answer to exercise 1: an integer
check_exercise("06_mlm_logits", answer)

# %%
answer = None  # your answer to exercise 4: an integer
check_exercise("06_word_vocab", answer)

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 3: Splitting sentences</summary>
#
# A rule that cuts after `.`, `?` or `!` followed by a space, `re.split(r"(?<=[.?!]) ", line)`,
# finds the same sentences in `WIKITEXT_SAMPLE` as `read_wikitext`, with one difference: every
# sentence keeps its final ` .`, not only the last one of a paragraph. WikiText puts a space
# before each `.`, so the chapter's cut at `" . "` removes the dot wherever another sentence
# follows, and leaves it at the end of the line, where no space follows. `14 @.@ 5` stays whole
# under both rules: its dot is followed by `@`, not by a space. A rule that cut at every `.`
# would break it into `14 @` and `@ 5`; and run over the title lines too, it would cut
# `St . Helens Pier` after `St`, the abbreviation problem that real sentence splitters are
# trained to avoid. Either way, be consistent: a model that sees a final `.` on some sentences
# only learns where paragraphs end.
#
# </details>
#
# <details><summary>Exercise 4: Vocabulary size</summary>
#
# The k = 1 vocabulary is only slightly larger than the k = 5 one: the corpus is built from
# templates, so nearly every English word occurs many times, and `min_freq` removes a few dozen
# rare words. All three hold far fewer entries than the WordPiece vocabulary's 1927, which also
# holds every Chinese character and the word pieces. Splitting at spaces keeps punctuation on
# the words (`conversation.` and `conversation` are two entries), which a real tokenizer would
# split off. A word that is not in a word vocabulary becomes `<unk>`, and everything about it
# is lost; WordPiece splits a word it lacks into pieces it has (`##` marks the inner ones), and
# only a word with a character that no piece covers becomes `<unk>`, as a whole.
#
# </details>
#
# <details><summary>Exercise 5: Which loss fell further?</summary>
#
# Guessing uniformly costs $\ln V$ for MLM ($\ln 1927 = 7.564$, printed before training) and
# $\ln 2 = 0.693$ for NSP. At the end of the live run MLM is near 2.53, about a third of its
# uniform loss, while NSP, near 0.50, is still more than two thirds of its own: MLM has come
# much further. In the shipped run the NSP loss ends near 0.40, more than half of $\ln 2$,
# while the MLM loss ends below it, less than a tenth of $\ln V$. The raw losses cannot be
# compared, because their starting points differ: a guess among 1927 tokens starts far higher
# than a guess between two labels.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 3：切分句子</summary>
#
# 在 `.`、`?` 或 `!` 后面紧跟空格的地方切分，即 `re.split(r"(?<=[.?!]) ", line)`，在
# `WIKITEXT_SAMPLE` 中找到的句子与 `read_wikitext` 相同，只有一点不同：每个句子都保留了末尾的
# ` .`，而不只是段落的最后一句。WikiText 在每个 `.` 前面都加了空格，所以本章在 `" . "` 处切分时，凡
# 是后面还有句子的地方都去掉了句点；行末的句点后面没有空格，就留了下来。`14 @.@ 5` 在两种规则下都
# 保持完整：它的点后面是 `@`，不是空格。如果在每个 `.` 处都切分，它就会被切成 `14 @` 和 `@ 5`；如
# 果把标题行也拿来切分，`St . Helens Pier` 会在 `St` 之后被切开，这正是真正的分句工具要通过训练来
# 避免的缩写问题。无论用哪种规则，都要前后一致：如果只有一部分句子带着末尾的 `.`，模型学到的只是段
# 落在哪里结束。
#
# </details>
#
# <details><summary>练习 4：词表大小</summary>
#
# k = 1 的词表只比 k = 5 的稍大一些：语料库是用模板写成的，几乎每个英文单词都出现了很多次，
# `min_freq` 只去掉了几十个罕见的词。这三个词表的条目都远少于 WordPiece 词表的 1927 个，后者还包含
# 每个汉字和各种子词。按空格切分会让标点符号连在词上（`conversation.` 和 `conversation` 是两个条
# 目），真正的分词器会把它们分开。不在单词词表中的词会变成 `<unk>`，它的信息全部丢失；WordPiece 会
# 把词表中没有的词切成词表中有的子词（`##` 标出词中间的子词），只有含有任何子词都覆盖不了的字符的
# 词，才会整个变成 `<unk>`。
#
# </details>
#
# <details><summary>练习 5：哪个损失降得更多？</summary>
#
# 均匀猜测时，掩蔽语言模型的损失是 $\ln V$（$\ln 1927 = 7.564$，训练前打印过），下一句预测的损失是
# $\ln 2 = 0.693$。现场训练结束时，掩蔽语言模型的损失约为 2.53，大约是其均匀猜测损失的三分之一；下
# 一句预测的损失约为 0.50，仍超过它自己的三分之二：掩蔽语言模型走得远得多。在自带模型的完整训练
# 中，下一句预测的损失最后约为 0.40，超过 $\ln 2$ 的一半；掩蔽语言模型的损失最后比它还低，不到
# $\ln V$ 的十分之一。两个损失的原始数值不能直接比较，因为它们的起点不同：在 1927 个词元中猜一个，
# 起点要比在两个标签中猜一个高得多。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# まず自分で演習に取り組んでから、解答を開きましょう。
#
# <details><summary>演習 3：文を切り分ける</summary>
#
# `.`、`?`、`!` の後にスペースが続くところで切る規則、`re.split(r"(?<=[.?!]) ", line)` は、
# `WIKITEXT_SAMPLE` から `read_wikitext` と同じ文を見つけます。違いは 1 つだけで、段落の最後の文
# だけでなく、どの文も末尾の ` .` を残します。WikiText はどの `.` の前にもスペースを入れているので、
# 章の `" . "` で切る方法では、後ろに文が続くところでは句点が消え、後ろにスペースのない行末では句点
# が残ります。`14 @.@ 5` はどちらの規則でも切れません。その点の後にはスペースではなく `@` が続くか
# らです。`.` のたびに切る規則なら `14 @` と `@ 5` に分かれてしまいます。見出しの行にも使うと、
# `St . Helens Pier` が `St` の後で切れます。本物の文分割ツールが学習によって避けようとする、略語の
# 問題です。どの規則でも一貫させることが大切です。一部の文だけが末尾に `.` を持っていると、モデルは
# 段落の終わりを覚えるだけです。
#
# </details>
#
# <details><summary>演習 4：語彙のサイズ</summary>
#
# k = 1 の語彙は k = 5 の語彙より少し大きいだけです。コーパスはテンプレートから作られているので、
# 英語の単語はほとんどどれも何度も現れ、`min_freq` が取り除くのは数十個のまれな単語だけです。3 つ
# の語彙はどれも、WordPiece の語彙の 1927 個よりずっと少ない項目しか持ちません。WordPiece の語彙
# は漢字の 1 文字 1 文字とサブワードも含んでいます。スペースで切ると句読点が単語にくっついたまま
# 残ります（`conversation.` と `conversation` は別の項目）が、本物のトークナイザなら切り離します。
# 単語の語彙にない単語は `<unk>` になり、その単語の情報はすべて失われます。WordPiece は語彙にない
# 単語を語彙にあるサブワードに分けるので（内側のサブワードには `##` が付きます）、どのサブワード
# でも表せない文字を含む単語だけが、まるごと `<unk>` になります。
#
# </details>
#
# <details><summary>演習 5：どちらの損失がより下がったか</summary>
#
# 一様な推測の損失は、マスク言語モデルでは $\ln V$（$\ln 1927 = 7.564$、学習の前に表示しました）、次
# 文予測では $\ln 2 = 0.693$ です。その場での学習の最後に、マスク言語モデルの損失は 2.53 ほどで、一
# 様な推測の損失の約 3 分の 1 です。次文予測の損失は 0.50 ほどで、まだ自分の一様な推測の 3 分の 2 を
# 超えています。マスク言語モデルのほうがずっと先まで進んでいます。付属モデルの学習では、次文予測の損
# 失は最後に 0.40 ほどで $\ln 2$ の半分を超えますが、マスク言語モデルの損失はそれより低く、$\ln V$
# の 10 分の 1 未満です。損失の値そのものは比べられません。出発点が違うからです。1927 個のトークン
# から 1 つを当てる推測は、2 つのラベルから選ぶ推測よりずっと高い損失から始まります。
#
# </details>

# %% [raw] strings="zh"
# "ln 2: NSP by coin toss"
# "ln 2：下一句预测靠掷硬币"
#
# "The shipped model's full run: {steps} steps, {minutes} min"
# "自带模型的完整训练：{steps} 步，{minutes} 分钟"
#
# "without pred_positions: {value}"
# "不传 pred_positions 时：{value}"
#
# "paragraphs: English {en}, Chinese {zh}; {low} to {high} sentences each"
# "段落：英文 {en} 个，中文 {zh} 个；每段 {low} 到 {high} 个句子"
#
# "paragraphs: train {train}  held out {held_out}"
# "段落：训练 {train} 个，留出 {held_out} 个"
#
# " pairs: {count}"
# " 句子对：{count}"
#
# "real prediction slots: {share:.2f} of all slots"
# "真实的预测位置占全部预测位置的 {share:.2f}"
#
# "{pairs} pairs in batches of 32: len(loader) = {batches}"
# "{pairs} 个句子对，每批 32 个：len(loader) = {batches}"
#
# "MLM {mlm:.3f}  NSP {nsp:.3f}  total {total:.3f}"
# "掩蔽语言模型 {mlm:.3f}  下一句预测 {nsp:.3f}  总损失 {total:.3f}"
#
# "MLM {mlm:.3f}  (ln V = {ln_v:.3f})"
# "掩蔽语言模型损失 {mlm:.3f}（ln V = {ln_v:.3f}）"
#
# "NSP {nsp:.3f}  (ln 2 = {ln_2:.3f})"
# "下一句预测损失 {nsp:.3f}（ln 2 = {ln_2:.3f}）"
#
# "total {total:.3f}"
# "总损失 {total:.3f}"
#
# "parameter tensors with a gradient: {count} of {total}"
# "有梯度的参数张量：{count} 个（共 {total} 个）"
#
# "before: "
# "更新前："
#
# "after:  "
# "更新后："
#
# "MLM"
# "掩蔽语言模型"
#
# "NSP"
# "下一句预测"
#
# "{name}: mean of steps 1-25 {first:.2f}, of steps 276-300 {last:.2f}"
# "{name}损失：第 1–25 步平均 {first:.2f}，第 276–300 步平均 {last:.2f}"
#
# "held-out NSP accuracy ({n} pairs, chance 0.5): {acc}"
# "下一句预测在留出数据上的准确率（{n} 个句子对，随机猜测为 0.5）：{acc}"
#
# "held-out MLM top-1 accuracy: {acc:.3f} (most frequent token: {baseline:.3f})"
# "掩蔽语言模型在留出数据上的准确率（只看首选预测）：{acc:.3f}（总猜最常见的词元：{baseline:.3f}）"
#
# "NSP loss (recorded every {every} steps): mean over steps {a}-{b} {early:.2f}, over steps {c}-{d} {late:.2f}"
# "下一句预测损失（每 {every} 步记录一次）：第 {a}–{b} 步平均 {early:.2f}，第 {c}–{d} 步平均 {late:.2f}"
#
# "{sentences:,} sentences, {tokens:,} WordPiece tokens; {minutes} minutes of training"
# "{sentences:,} 个句子，{tokens:,} 个 WordPiece 词元；训练用时 {minutes} 分钟"
#
# "MLM loss"
# "掩蔽语言模型损失"
#
# "NSP loss"
# "下一句预测损失"
#
# "step"
# "训练步数"
#
# "loss"
# "损失"
#
# "shipped model (its own run): NSP {nsp:.3f}, MLM {mlm:.3f}"
# "自带模型（它自己的那次训练）：下一句预测 {nsp:.3f}，掩蔽语言模型 {mlm:.3f}"

# %% [raw] strings="ja"
# "ln 2: NSP by coin toss"
# "ln 2：コイン投げで次文予測した場合"
#
# "The shipped model's full run: {steps} steps, {minutes} min"
# "付属モデルの学習全体：{steps} ステップ、{minutes} 分"
#
# "without pred_positions: {value}"
# "pred_positions を渡さないとき：{value}"
#
# "paragraphs: English {en}, Chinese {zh}; {low} to {high} sentences each"
# "段落：英語 {en}、中国語 {zh}。1 段落あたり {low} から {high} 文"
#
# "paragraphs: train {train}  held out {held_out}"
# "段落：学習用 {train}、ホールドアウト {held_out}"
#
# " pairs: {count}"
# " ペア：{count}"
#
# "real prediction slots: {share:.2f} of all slots"
# "実在する予測位置は全予測位置の {share:.2f}"
#
# "{pairs} pairs in batches of 32: len(loader) = {batches}"
# "{pairs} 組のペアを 32 組ずつのバッチに：len(loader) = {batches}"
#
# "MLM {mlm:.3f}  NSP {nsp:.3f}  total {total:.3f}"
# "マスク言語モデル {mlm:.3f}  次文予測 {nsp:.3f}  合計 {total:.3f}"
#
# "MLM {mlm:.3f}  (ln V = {ln_v:.3f})"
# "マスク言語モデルの損失 {mlm:.3f}（ln V = {ln_v:.3f}）"
#
# "NSP {nsp:.3f}  (ln 2 = {ln_2:.3f})"
# "次文予測の損失 {nsp:.3f}（ln 2 = {ln_2:.3f}）"
#
# "total {total:.3f}"
# "合計 {total:.3f}"
#
# "parameter tensors with a gradient: {count} of {total}"
# "勾配を持つパラメータのテンソル：{total} 個中 {count} 個"
#
# "before: "
# "更新前："
#
# "after:  "
# "更新後："
#
# "MLM"
# "マスク言語モデル"
#
# "NSP"
# "次文予測"
#
# "{name}: mean of steps 1-25 {first:.2f}, of steps 276-300 {last:.2f}"
# "{name}の損失：ステップ 1–25 の平均 {first:.2f}、ステップ 276–300 の平均 {last:.2f}"
#
# "held-out NSP accuracy ({n} pairs, chance 0.5): {acc}"
# "ホールドアウトデータでの次文予測の正解率（{n} 組、チャンスレベル 0.5）：{acc}"
#
# "held-out MLM top-1 accuracy: {acc:.3f} (most frequent token: {baseline:.3f})"
# "ホールドアウトデータでのマスク言語モデルの正解率（第一候補で判定）：{acc:.3f}（常に最も頻度の高いトークンを答えた場合：{baseline:.3f}）"
#
# "NSP loss (recorded every {every} steps): mean over steps {a}-{b} {early:.2f}, over steps {c}-{d} {late:.2f}"
# "次文予測の損失（{every} ステップごとに記録）：ステップ {a}–{b} の平均 {early:.2f}、ステップ {c}–{d} の平均 {late:.2f}"
#
# "{sentences:,} sentences, {tokens:,} WordPiece tokens; {minutes} minutes of training"
# "{sentences:,} 文、{tokens:,} WordPiece トークン。学習時間 {minutes} 分"
#
# "MLM loss"
# "マスク言語モデルの損失"
#
# "NSP loss"
# "次文予測の損失"
#
# "step"
# "ステップ"
#
# "loss"
# "損失"
#
# "shipped model (its own run): NSP {nsp:.3f}, MLM {mlm:.3f}"
# "付属モデル（それ自身の学習）：次文予測 {nsp:.3f}、マスク言語モデル {mlm:.3f}"
