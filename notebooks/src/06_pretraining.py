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
# 5. put the shipped small BERT's full run next to the original BERT's four days;
# 6. watch a run of the shipped recipe learn, snapshot by snapshot: its attention, its guesses
#    at masked tokens and its NSP answer, and when each changes on held-out pairs;
# 7. going further: pad each mini-batch only as far as it needs, see why grouping pairs by
#    length backfires on this corpus, and run the shipped recipe in class, stopped at 900 steps.
#
# How well the shipped model learned, and what its numbers do and do not mean, is the subject
# of notebook 07.

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
# 5. 把项目自带的小 BERT 的完整训练与原始 BERT 四天的训练放在一起比较；
# 6. 借助一个个快照，看着按自带模型的训练配置进行的一次训练如何学习：它的注意力、它对被掩蔽词元的预
#    测和它的下一句预测，以及这些在留出数据上各自何时发生变化；
# 7. 更进一步：让每个小批量只填充到它需要的长度，看看为什么在这个语料库上按长度分组会适得其反，再在
#    课堂上运行自带模型的训练配置，只训练到第 900 步。
#
# 自带模型学得怎么样，它的数字能说明什么、不能说明什么，留到笔记本 07 再讨论。

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
# 6. 付属モデルの学習設定による学習が、スナップショットを追うごとに学んでいく様子を見ます。アテン
#    ション、マスクされたトークンの予測、次文予測の答え、そしてそれぞれがホールドアウトのペアでいつ
#    変わるかです。
# 7. さらに先へ：各ミニバッチを必要な長さまでしかパディングしないようにし、このコーパスでペアを長さ
#    ごとにまとめると逆効果になる理由を見て、付属モデルの学習設定を 900 ステップで打ち切って授業の時
#    間内に実行します。
#
# 付属モデルがどれだけうまく学んだか、その数字から何が言えて何が言えないかは、ノートブック 07 で扱い
# ます。

# %%
import math
from dataclasses import fields

import torch
from IPython.display import display
from torch.utils.flop_counter import FlopCounterMode

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
from bertlib.analysis.snapshots import SnapshotRecorder, load_snapshots
from bertlib.analysis.timelapse import snapshot_stats
from bertlib.assets import WIKITEXT_SAMPLE, small_bert_metrics
from bertlib.batches import LengthGroupedSampler, trim_padding
from bertlib.classroom.exercises import check_exercise
from bertlib.classroom.implement import check_implementation
from bertlib.data import PretrainBatch, pad_bert_inputs
from bertlib.finetuning.finetune import Accuracy
from bertlib.loss import chapter_loss
from bertlib.scale.fast import fast_loss
from bertlib.support.i18n import table, tr
from bertlib.train import evaluate_pretraining, init_model, train_step
from bertlib.viz import LossPlot, TimeLapseWidget, new_figure
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
# decimal point and `@-@` for a hyphen. Exercise 4 tries other ways of splitting sentences.
#
# For the rest of the notebooks `bertlib` ships a small bilingual corpus of its own, written for
# these notebooks (see `data/README.md`), one sentence per line: 2000 English and 2000 Chinese
# paragraphs of two kinds. In each language, 400 are short everyday stories (a train trip, a
# birthday, moving house, ...) of 5 or 6 sentences; the other 1,600 hold 4 sentences about one
# word of six word classes (names, places, times, fruits, animals, sports), such as "Nobody
# forgot the peel of mangoes.", each after a filler sentence such as the first line printed
# below. Notebook 09 needs them. `load_small_corpus` holds out 10% of each language's paragraphs for
# evaluation. The shipped model's WordPiece tokenizer splits English into words and word pieces
# and Chinese into single characters. The examples of this section use a quarter of the
# training paragraphs, each pair masked once; `max_len` is 64, as for the shipped model.

# %% [markdown] lang="zh"
# 标题行没有了，只有一个句子的段落也没有了。在 `" . "` 处切分句子的两个小毛病也暴露了出来：每个段落
# 最后一个句子末尾的 `.` 留了下来（这一行到此结束，后面没有 `" . "`）；WikiText 自己的词元也留了下
# 来，例如表示小数点的 `@.@` 和表示连字符的 `@-@`。练习 4 会尝试其他切分句子的方法。
#
# 在其余的笔记本中，`bertlib` 使用自带的一个小型双语语料库，专为这些笔记本编写（见
# `data/README.md`），每行一个句子：2000 个英文段落和 2000 个中文段落，分为两类。每种语言中，400 个
# 段落是日常生活中的小故事（坐火车、过生日、搬家……），每段 5 或 6 个句子；其余 1600 个段落每段 4 个
# 句子，讲的是六个词类（人名、地点、时间、水果、动物和运动）中的某一个词，例如“谁也忘不了榴莲的果
# 皮。”，每个这样的句子前面都有一个填充句，例如下面打印的第一行。笔记本 09 要用到这些段落。
# `load_small_corpus` 从每种语言的段落中各留出 10% 用于评估。自带模型的 WordPiece 分词器把英文切分成
# 单词和子词，把中文切分成单个汉字。本节的示例只用四分之一的训练段落，每个句子对只掩蔽一次；
# `max_len` 与自带模型相同，都是 64。

# %% [markdown] lang="ja"
# 見出しの行は消え、文が 1 つしかない段落も消えました。`" . "` で切ることの癖も 2 つ見えます。各段落
# の最後の文は末尾の `.` を残したままです（行がそこで終わるので、後ろに `" . "` がありません）。ま
# た、小数点を表す `@.@` やハイフンを表す `@-@` のような WikiText 独自のトークンもそのまま残ります。
# 演習 4 では、文を切り分ける別の方法を試します。
#
# 以降のノートブックでは、`bertlib` に付属する小さな 2 言語のコーパスを使います。このノートブックの
# ために書かれたもので（`data/README.md` を参照）、1 行に 1 文ずつ、英語 2000 段落と中国語 2000 段落
# からなり、段落は 2 種類あります。各言語のうち 400 段落は短い日常の物語（電車の旅、誕生日、引っ越
# し……）で、1 段落は 5 文か 6 文です。残りの 1600 段落は、6 つの単語クラス（人名、場所、時間、果物、
# 動物、スポーツ）のいずれかの 1 語についての 4 文からなります。"Nobody forgot the peel of mangoes."
# のような文で、その前にはいつも、下に表示される最初の行のような埋め草の文が置かれています。ノートブ
# ック 09 にはこれらの段落が必要です。`load_small_corpus` は、各言語の段落の 10% を評価用に取り分け
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
# **Implement it (exercise 3).** Before you read `bert_loss`, write that MLM part yourself in the
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
# **动手实现（练习 3）。** 先别看 `bert_loss`，在下面的单元格里自己写出掩蔽语言模型的这部分损失：
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
# **自分で実装してみましょう（演習 3）。** `bert_loss` を読む前に、マスク言語モデルのこの部分を下の
# セルで書いてください。`mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)` です。`mlm_Y_hat` はロジット `(B,
# P, V)`、`mlm_Y` は予測すべきトークンインデックス `(B, P)`、`mlm_weights` は実在する予測位置で
# 1、パディングした位置で 0 の `(B, P)` で、実在する予測位置での交差エントロピーの平均（スカラー）を
# 返します。チェック用のセルは、大きなロジットを含むいくつかのテストケースで `bertlib` の実装と比
# べ、どのテストケースで食い違うかを教えてくれます。ヒントが欲しいときは、チェックに `hint=1` を加え
# てください。


# %%
def mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights):
    """Exercise 3. mlm_Y_hat: (B, P, V) logits; mlm_Y: (B, P) token ids; mlm_weights: (B, P),
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
# the cross-entropy (it also skips padded tokens inside the encoder; see "Going further"). Same
# numbers, less work:

# %% [markdown] lang="zh"
# 上面的 `mlm_Y_hat` 有 B × P × V 个元素，包括填充位置。`train_bert` 改用 `fast_loss`：它只让
# K 个真实位置经过掩蔽语言模型的输出层，并把输出层的最后一层与交叉熵合并计算（它在编码器里也跳过
# 填充的词元，见“更进一步”）。结果相同，计算量更少：

# %% [markdown] lang="ja"
# 上の `mlm_Y_hat` には、パディングを含めて B × P × V 個の要素があります。`train_bert` は代わりに
# `fast_loss` を使います。これは実在する K 個の予測位置だけをマスク言語モデルの出力層に通し、出力層
# の最後の層を交差エントロピーとまとめて計算します（エンコーダの中でもパディングのトークンを飛ばしま
# す。「さらに先へ」を参照）。結果は同じで、計算は少なくて済みます。

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
# `train_bert` repeats that step over mini-batches and reports progress: the bar shows the
# latest losses and the speed in sentence pairs per second. Its `callback` runs after every
# step: here it lets `LossPlot` redraw both losses every 25 steps, and a `SnapshotRecorder` copy
# the weights at six steps, for a time-lapse of this run further down (copying changes nothing
# in training). Every random draw (initial weights, batch
# order) is seeded, so you get the same losses as printed here. The model is the small one
# above, without dropout: over a run this short dropout only slows learning, and drawing its
# random masks is a sizeable part of a step on a CPU. It trains on every training paragraph,
# paired and masked once (the first lines below), 300 steps of 128 pairs, which takes under a
# minute on one thread. Then we ask it about pairs from the held-out paragraphs, which it has
# never seen:

# %% [markdown] lang="zh"
# ## 一次简短的现场训练
#
# `train_bert` 在一个个小批量上重复这一步，并报告进度：进度条显示最新的损失和速度（每秒处理的句子对
# 数）。每一步之后都会调用它的 `callback`：这里让 `LossPlot` 每 25 步重画一次两个损失的曲线，并让
# `SnapshotRecorder` 在其中六步复制一份权重，供后面给这次训练做延时回放（复制权重不会改变训练）。所
# 有随机抽样（初始权重、批量顺序）都设定了随机种子，所以你得到的损失与这里打印的相同。模型就是上面那
# 个小模型，但不用 dropout（暂退法）：训练时间这么短，dropout 只会拖慢学习，而且在 CPU 上为它抽取随
# 机掩码，在每一步的用时中占了不小的比重。下面的前几行把全部训练段落构造成句子对并掩蔽一次，模型在这
# 些句子对上训练 300 步，每步 128 个句子对，在一个线程上不到一分钟。然后用留出段落中的句子对来考考
# 它，这些句子对它从未见过：

# %% [markdown] lang="ja"
# ## その場で短く学習させる
#
# `train_bert` はこのステップをミニバッチごとに繰り返し、進み具合を報告します。進捗バーには直近の損
# 失と、1 秒あたりに処理した文ペアの数で表した速さが表示されます。`callback` は各ステップの後に呼ば
# れます。ここでは `LossPlot` に 25 ステップごとに 2 つの損失を描き直させ、`SnapshotRecorder` に 6
# つのステップで重みをコピーさせて、後でこの学習をタイムラプスで見返せるようにしています（コピーして
# も学習は何も変わりません）。乱数を使う処理（初期の重み、バッチの順序）にはすべて乱数シードを設定し
# てあるので、ここに表示されているのと同じ損失が得られます。モデルは上の小さなモデルで、ドロップアウ
# トは使いません。これほど短い学習では、ドロップアウトは学習を遅くするだけで、そのランダムなマスクを
# 引く処理が CPU では 1 ステップの時間のかなりの部分を占めるからです。下の最初の数行で学習用の段落を
# すべてペアにして 1 回マスクをかけ、128 組ずつ 300 ステップ学習させます。1 スレッドで 1 分もかかり
# ません。その後、モデルが一度も見ていないホールドアウトの段落のペアについて尋ねてみます。

# %%
def paragraphs_in(lang):
    return [p for p, lang_p in zip(split.train, split.train_langs, strict=True) if lang_p == lang]


# All training paragraphs, paired and masked once, one language after the other.
by_lang = {lang: make_pretrain_data(tokenize_paragraphs(paragraphs_in(lang), tokenizer.tokenize),
                                    vocab, max_len=64, seed=0) for lang in ("en", "zh")}
train_pairs = PretrainBatch(*(torch.cat(t) for t in zip(*(d.tensors() for d in by_lang.values()),
                                                         strict=True)))
model = init_model(config, seed=0)
loss_plot = LossPlot(every=25)
recorder = SnapshotRecorder(model, steps=[0, 25, 50, 100, 200, 300])  # for the time-lapse below


def after_each_step(history):
    loss_plot.update(history)  # redraws every 25 steps
    recorder(history)  # copies the weights at its steps; training goes on untouched


history = train_bert(model, train_pairs, num_steps=300, batch_size=128, lr=3e-3, seed=0,
                     loss_fn=fast_loss, callback=after_each_step)
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
# "Going further" below, whose last part shows how far 900 steps of its recipe get).

# %% [markdown] lang="zh"
# 在这 300 步里，掩蔽语言模型的损失从 6.25 降到 2.53，下一句预测的损失从 0.71 降到 0.50（分别是最前
# 和最后 25 步的平均值；图中每个点只来自一个小批量，所以曲线有噪声）。在 1331 个留出的句子对上，模型
# 区分“是下一句”和“不是下一句”的准确率已经达到 0.777，95% 置信区间 [0.754, 0.798] 高于随机猜测：训练
# 不到一分钟，它已经开始把两个句子联系起来了。对于被掩蔽的词元，它能填对 0.489，而总猜最常见的词元只
# 能填对 0.050。自带模型更好，掩蔽语言模型尤其好得多（0.841 和 0.880，见下文“更进一步”中打印的结果；
# 那里的最后一小节会说明，按同样的训练配置只训练 900 步能达到什么水平）。

# %% [markdown] lang="ja"
# 300 ステップのあいだに、マスク言語モデルの損失は 6.25 から 2.53 に、次文予測の損失は 0.71 から
# 0.50 に下がりました（最初と最後の 25 ステップの平均。グラフの各点は 1 つのミニバッチだけから計算し
# ているので、ばらつきがあります）。1331 組のホールドアウトのペアで、モデルが「次の文」と「次の文で
# はない」を正しく見分ける割合は 0.777 になり、95% 信頼区間 [0.754, 0.798] はチャンスレベルを上回っ
# ています。1 分足らずの学習で、2 つの文を関連づけ始めたのです。マスクされたトークンは 0.489 を正し
# く埋められ、常に最も頻度の高いトークンを答える場合の 0.050 を上回ります。付属モデルはより優秀で、
# マスク言語モデルではずっと上です（0.841 と 0.880。下の「さらに先へ」で表示します。その最後の部分で
# は、同じ学習設定で 900 ステップだけ学習するとどこまで届くかを示します）。

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

# %% [markdown] lang="en"
# The MLM loss falls for all 3000 steps, fast at first, then ever more slowly. The NSP loss stays
# near $\ln 2$ for about the first 200 steps (the line printed with the plot gives their mean),
# then creeps down slowly, to about 0.40 over the last 50 steps. In the chapter's run, and in the
# live run above, the MLM loss stays far above the NSP loss; in this longer run it drops below
# it over the last third of the steps (exercise 6 asks what the comparison of the two losses
# says).
#
# The original BERT was trained the same way, at a far larger scale. The BERT paper (Devlin et
# al., 2018) in full, next to the shipped model:

# %% [markdown] lang="zh"
# 掩蔽语言模型的损失在全部 3000 步中一直在下降，起初很快，之后越来越慢。下一句预测的损失在大约前
# 200 步里一直停留在 $\ln 2$ 附近（随图打印的那一行给出了这段时间的平均值），之后缓慢下降，最后 50
# 步平均约为 0.40。在本章的训练和上面的现场训练中，掩蔽语言模型的损失始终远高于下一句预测的损失；在
# 这次更长的训练中，它在最后三分之一的步数里降到了下一句预测的损失之下（练习 6 会问：比较这两个损失
# 能说明什么？）。
#
# 原始的 BERT 也是这样训练的，只是规模要大得多。下面把 BERT 论文（Devlin 等人，2018）中的完整训练配
# 置与自带模型并列对照：

# %% [markdown] lang="ja"
# マスク言語モデルの損失は 3000 ステップのあいだずっと下がり続けます。はじめは速く、その後はしだい
# にゆっくりになります。次文予測の損失は最初の 200 ステップほど $\ln 2$ の近くにとどまり（グラフと
# ともに表示した行がその平均です）、その後ゆっくり下がって、最後の 50 ステップでは約 0.40 になりま
# す。章の学習でも上のその場での学習でも、マスク言語モデルの損失は次文予測の損失よりずっと高いま
# まですが、この長い学習では、最後の 3 分の 1 のステップで次文予測の損失を下回ります（2 つの損失を
# 比べて何が言えるのかは、演習 6 で考えます）。
#
# 元の BERT も同じ方法で、ただしはるかに大きな規模で学習されました。BERT 論文（Devlin ら、2018）の学
# 習設定の全体を、付属モデルと並べてみます。

# %% [markdown] lang="en"
# | | BERT paper | shipped model |
# | --- | --- | --- |
# | model | BERT-Base: 12 blocks, H = 768, 12 heads, 110M parameters; BERT-Large: 24 blocks, H = 1024, 16 heads, 340M parameters | 2 blocks, H = 128, 2 heads (its parameters: exercise 2) |
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
# | 模型 | BERT-Base：12 个编码器块，H = 768，12 个头，1.1 亿个参数；BERT-Large：24 个编码器块，H = 1024，16 个头，3.4 亿个参数 | 2 个编码器块，H = 128，2 个头（参数个数见练习 2） |
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
# | モデル | BERT-Base：12 ブロック、H = 768、12 ヘッド、パラメータ 1.1 億。BERT-Large：24 ブロック、H = 1024、16 ヘッド、パラメータ 3.4 億 | 2 ブロック、H = 128、2 ヘッド（パラメータ数は演習 2） |
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
# dropout and shrinks every number; notebook 07 asks what it learned all the same.

# %% [markdown] lang="zh"
# 注意力的计算量随序列长度的平方增长，所以论文在大部分步数里用短序列训练，只在最后才用完整的 512 个
# 词元，好让模型学到 128 以后的位置嵌入。自带模型沿用了这套训练配置的任务和优化器（掩蔽语言模型 +
# 下一句预测、Adam），但不用 dropout，并把每个数字都缩小了；尽管缩小了这么多，它究竟学到了什么，是
# 笔记本 07 要探讨的问题。

# %% [markdown] lang="ja"
# アテンションの計算量は長さの 2 乗で増えるので、論文はほとんどのステップを短いシーケンスで学習し、
# 最後にだけ 512 トークンすべてを使って、128 より先の位置埋め込みを学習させました。付属モデルは学習
# 設定のタスクとオプティマイザ（マスク言語モデル + 次文予測、Adam）を受け継ぎ、ドロップアウトは使わ
# ず、数字をすべて小さくしています。それでも何を学んだのかは、ノートブック 07 で問います。

# %% [markdown] lang="en"
# ## A model that learns before your eyes
#
# A loss curve says *that* a model learns, not *what* it learns. `scripts/pretrain_small.py`
# therefore also keeps the weights at six steps of its run, 0, 50, 150, 300, 900 and 3000, dense
# early, where the MLM loss falls fastest (with a `SnapshotRecorder`, as in the live run above).
# They ship with `bertlib` as `snapshots.safetensors` (in half precision, with every step's
# losses), and `load_snapshots` reads them. Below, each snapshot is loaded into a model of
# the shipped architecture and evaluated on the same 1331 held-out pairs as the live run; the
# attention and the guesses are measured on every third of these pairs, which keeps the cell
# short.

# %% [markdown] lang="zh"
# ## 看着模型学习
#
# 损失曲线只能说明模型在学，却说明不了它学到了什么。因此，`scripts/pretrain_small.py` 还在训练中的
# 六步（0、50、150、300、900 和 3000）保存了权重；开头几步取得密一些，因为掩蔽语言模型的损失在开头
# 下降得最快（用的就是上面现场训练中的 `SnapshotRecorder`）。这些快照以半精度存成
# `snapshots.safetensors`（连同每一步的损失）随 `bertlib` 一起提供，用 `load_snapshots` 读取。下面
# 把每个快照载入一个与自带模型结构相同的模型，在现场训练用过的那 1331 个留出的句子对上评估；注意力和
# 预测则只在其中每隔两个取一个的句子对上统计，好让这个单元格快一些。

# %% [markdown] lang="ja"
# ## 目の前で学んでいくモデル
#
# 損失の曲線からわかるのは、モデルが学んでいる**ということ**であって、**何を**学んでいるかではありま
# せん。そこで `scripts/pretrain_small.py` は、学習中の 6 つのステップ、0、50、150、300、900、3000
# で重みも保存しています。マスク言語モデルの損失がいちばん速く下がる序盤に多めに取っています（上のそ
# の場での学習と同じく `SnapshotRecorder` を使います）。これらは `snapshots.safetensors` として
# `bertlib` に付属し（半精度で、各ステップの損失も含みます）、`load_snapshots` で読み込めます。下で
# は、各スナップショットを付属モデルと同じ構造のモデルに読み込み、その場での学習と同じ 1331 組のホー
# ルドアウトのペアで評価します。アテンションと予測は、セルが短い時間で終わるように、そのうち 3 組に
# 1 組だけで測ります。

# %%
snapshots = load_snapshots()  # {step: weights}, and the run's losses at every step
rerun = BERTModel.from_config(small_bert.config)  # the shipped architecture, for each snapshot
sample = held_out[::3]
answers = sample.mlm_labels[sample.mlm_weights > 0]  # what each masked slot should be
frequent = held_out.mlm_labels[held_out.mlm_weights > 0].bincount().topk(10).indices
other = ~torch.isin(answers, frequent)  # slots whose answer is not one of the 10 most frequent

accuracy = [[tr("step"), tr("NSP accuracy"), tr("MLM accuracy")]]
guessing = [[tr("step"), tr("among the 10 most frequent"), tr("different tokens"),
             tr("right where the answer is another token")]]
looking = [["", tr("layer {layer}:", layer=0), "", "", "", tr("layer {layer}:", layer=1)],
           [tr("step"), *[tr("previous"), tr("next"), "<sep>", tr("other")] * 2]]
for step, weights in snapshots.weights.items():
    rerun.load_state_dict(weights)
    scores = evaluate_pretraining(rerun, held_out)
    accuracy.append([step, f"{scores['nsp_accuracy']:.3f}", f"{scores['mlm_accuracy']:.3f}"])
    stats = snapshot_stats(rerun, sample, vocab.sep_id)
    guesses = stats.guesses  # the top guess at each masked slot of the sample
    guessing.append([step, f"{torch.isin(guesses, frequent).float().mean():.3f}",
                     len(guesses.unique()), f"{(guesses == answers)[other].float().mean():.3f}"])
    shares = torch.stack([stats.previous, stats.next, stats.sep, stats.other_segment])
    looking.append([step, *(f"{x:.3f}" for x in shares.mean(dim=-1).T.flatten())])  # over heads

print(tr("The snapshots on the {pairs} held-out pairs:", pairs=len(held_out)))
print(table(accuracy))
print(tr("shipped model (its own run): NSP {nsp:.3f}, MLM {mlm:.3f}",
         nsp=metrics["held_out"]["nsp_accuracy"], mlm=metrics["held_out"]["mlm_accuracy"]))

# %% [markdown] lang="en"
# These snapshots come from the shipped model's own run: the last one is the shipped model
# (held-out NSP 0.841, MLM 0.880). Its MLM accuracy climbs fast up to step 300 (0.549), then more
# slowly (0.739 at step 900); its NSP accuracy is at chance at step 0 (0.491) and climbs from
# step 50 (0.554).
#
# The time-lapse widget shows one sentence pair through the snapshots. Move the slider
# *training step*, or press play to see one snapshot after another. For the step
# chosen it draws one head's attention weights (choose the layer and the head; the colour scale
# stays the same at every step, so the steps compare), the three most probable tokens at the
# token masked in each sentence (*mask in A*, *mask in B*; the right token's bar is green, and
# each title gives its probability), P(IsNext) for the pair, and the run's two losses on a log
# scale, a line at the step. Every snapshot runs once when the text or a masked token changes;
# the slider, the layer and the head only redraw. The model passed in gives the architecture;
# the snapshots bring the weights.

# %% [markdown] lang="zh"
# 这些快照来自自带模型自己的那次训练：最后一个快照就是自带模型（留出数据上下一句预测 0.841，掩蔽语言
# 模型 0.880）。掩蔽语言模型的准确率在第 300 步之前上升得很快（0.549），之后变慢（第 900 步为
# 0.739）；下一句预测的准确率在第 0 步与随机猜测相当（0.491），从第 50 步（0.554）开始上升。
#
# 下面的延时回放小部件让一个句子对依次经过这些快照。拖动滑块“训练步”，或者按下播放键，依次播放各个快
# 照。对所选的训练步，它画出一个头的注意力权重（层和头可以选；颜色刻度在各训练步中保持不变，便于比
# 较）、两个句子中各一个被掩蔽的词元处概率最高的三个词元（“在 A 中掩蔽”“在 B 中掩蔽”；正确词元的柱形
# 为绿色，标题给出它的概率）、这个句子对的 P(是下一句)，以及这次训练的两个损失（对数刻度，竖线标出所
# 选的训练步）。文本或被掩蔽的词元改变时，每个快照各运行一次；拖动滑块、换层或换头只需重画。传入的模
# 型只提供结构，权重来自快照。

# %% [markdown] lang="ja"
# これらのスナップショットは付属モデル自身の学習から取ったもので、最後のものが付属モデルです（ホール
# ドアウトデータで次文予測 0.841、マスク言語モデル 0.880）。マスク言語モデルの正解率はステップ 300
# までは速く上がり（0.549）、その後はゆっくりになります（ステップ 900 で 0.739）。次文予測の正解率は
# ステップ 0 ではチャンスレベル（0.491）で、ステップ 50（0.554）から上がり始めます。
#
# タイムラプスのウィジェットでは、1 組の文ペアがスナップショットを順にたどります。スライダー「学習ス
# テップ」を動かすか、再生ボタンを押して、スナップショットを 1 つずつ見ていきましょう。選んだステッ
# プについて、ウィジェットは次のものを描きます。1 つのヘッドのアテンションの重み（層とヘッドは選べま
# す。カラースケールはどのステップでも同じなので、ステップどうしを比べられます）、各文で 1 つずつマ
# スクしたトークンでの確率上位 3 つのトークン（「A でマスク」「B でマスク」。正しいトークンの棒は緑
# 色で、タイトルにその確率が示されます）、そのペアの P(次の文)、そして学習の 2 つの損失（対数目盛
# で、選んだステップに縦線）です。テキストやマスクするトークンを変えると、各スナップショットが 1 回
# ずつ実行されます。スライダー、層、ヘッドを変えたときは描き直すだけです。渡したモデルは構造だけを与
# え、重みはスナップショットから来ます。

# %%
TimeLapseWidget(small_bert, tokenizer, snapshots)

# %% [markdown] lang="en"
# Play it, and watch the guesses at the two masked tokens and the attention in each layer (head
# by head, and their mean). One pair shows a few tokens; the next cell measures the same things
# on the 444 sampled held-out pairs. Each masked slot's top guess: is it one of the 10 most frequent
# answers, how many different tokens the snapshot guesses, and how often it is right where the
# answer is another token. Then where the heads look: the attention weight each token (as
# query) puts on the token before it, the one after it, the two `<sep>` and the other sentence,
# averaged over the heads of a layer and over every token of the pairs.

# %% [markdown] lang="zh"
# 播放一遍，留意两个被掩蔽词元处的预测，以及每一层的注意力（逐个头看，也看各头平均）。一个句子对只能
# 展示几个词元；下一个单元格在抽出的 444 个留出的句子对上统计同样的东西。先看每个被掩蔽位置的首选预
# 测：它是不是最常见的 10 个答案之一，每个快照一共猜出多少个不同的词元，以及答案为其他词元时它猜对的
# 比例。再看各个头关注哪里：每个词元（作为查询）放在它前一个词元、后一个词元、两个 `<sep>` 和另一个
# 句子上的注意力权重，对同一层的各个头以及这些句子对中的每个词元求平均。

# %% [markdown] lang="ja"
# 再生して、2 つのマスクされたトークンでの予測と、各層のアテンション（ヘッドごと、そしてその平均）を
# 見てみましょう。1 組のペアで見えるのは数個のトークンだけです。次のセルでは、抜き出した 444 組の
# ホールドアウトのペアで同じことを測ります。まず、マスクした各位置の第一候補について、それが最も頻度
# の高い 10 個の答えの 1 つかどうか、スナップショットが全部で何種類のトークンを答えるか、そして答え
# がそれ以外のトークンのときにどれだけ正解するかを見ます。次に、ヘッドがどこを見ているかです。各トー
# クン（クエリとして）が、直前のトークン、直後のトークン、2 つの `<sep>`、もう一方の文に置くアテン
# ションの重みを、層のヘッドとペアのすべてのトークンで平均します。

# %%
print(tr("{pairs} held-out pairs, {slots} masked slots; the 10 most frequent answers {tokens} are "
         "{share:.3f} of them", pairs=len(sample), slots=len(answers),
         tokens=vocab.to_tokens(frequent.tolist()), share=1 - other.float().mean()))
print(tr("The top guess at each masked slot:"))
print(table(guessing))
print(tr("Attention weight on the previous token, the next one, <sep> and the other sentence, "
         "mean over heads and over every token as query:"))
print(table(looking))

# %% [markdown] lang="en"
# **The guesses.** At step 0 the weights are random, and so are the guesses: 179 different
# tokens, never right. By step 50 the model has found the cheapest answer: 0.892 of the top
# guesses are among the 10 most frequent answers, 31 different tokens in all. Then the guesses
# turn into the right ones: where the answer is another token, 0.303 are right at step 150, 0.423
# at step 300, 0.659 at step 900 and 0.849 at step 3000, with 405 different tokens; by then 0.285
# of the guesses are frequent tokens, close to the 0.283 that the frequent answers make up.
#
# **The attention.** At step 0 the weights are nearly uniform: about 0.04 on the previous token
# and on the next, and 0.487 and 0.499 on the other sentence. Layer 1 learns to stay in its own
# sentence: its weight on the other sentence falls to 0.310 by step 150 and 0.124 by step 900.
# Layer 0 does not: it still puts 0.354 on the other sentence at step 3000 (notebook 05 finds
# one of its heads looking across). Layer 0 learns the previous token instead, together with the
# right guesses: from 0.121 at step 300 to 0.336 at step 900 and 0.428 at step 3000. Layer 1's
# weight on its neighbours stays low (0.062 and 0.065 at step 3000). `<sep>` never draws much
# attention: its share is highest at step 0 (0.080 and 0.084, what nearly uniform weights give
# two keys) and ends at 0.035 and 0.065. Heads of the large original BERT put much of their
# weight on `[SEP]` (Clark et al., 2019); this small model, in 3000 steps, does not.

# %% [markdown] lang="zh"
# **猜测。** 第 0 步的权重是随机的，猜测也一样：179 个不同的词元，一个也没猜对。到第 50 步，模型已经
# 找到了最省事的答案：0.892 的首选猜测是 10 个最常见的答案之一，总共只有 31 个不同的词元。之后猜测逐
# 渐变成正确的答案：在答案是其他词元的地方，第 150 步猜对 0.303，第 300 步 0.423，第 900 步 0.659，
# 第 3000 步 0.849，用到 405 个不同的词元；这时首选猜测中常见词元占 0.285，与常见答案所占的 0.283 相
# 当。
#
# **注意力。** 第 0 步的权重几乎是均匀的：前一个和后一个词元上各约 0.04，另一个句子上分别为 0.487 和
# 0.499。层 1 学会了留在自己的句子里：它放在另一个句子上的权重到第 150 步降到 0.310，到第 900 步降到
# 0.124。层 0 却没有：到第 3000 步，它仍把 0.354 放在另一个句子上（笔记本 05 发现它的一个头在看另一
# 个句子）。层 0 学会的是前一个词元，而且与猜对同步：从第 300 步的 0.121 增加到第 900 步的 0.336 和
# 第 3000 步的 0.428。层 1 放在相邻词元上的权重一直很低（第 3000 步为 0.062 和 0.065）。`<sep>` 从来
# 没有吸引多少注意力：它的份额在第 0 步最高（0.080 和 0.084，即几乎均匀的权重分给两个键的份额），最
# 后为 0.035 和 0.065。大型的原始 BERT 有些头会把大量权重放在 `[SEP]` 上（Clark 等人，2019）；这个小
# 模型训练 3000 步之后并没有这样做。

# %% [markdown] lang="ja"
# **予測。** ステップ 0 では重みはランダムで、予測もランダムです。179 種類のトークンで、1 つも当たり
# ません。ステップ 50 までに、モデルは最も手軽な答えを見つけます。首位の予測の 0.892 が最も頻度の高
# い 10 個の答えのどれかで、全部で 31 種類のトークンしかありません。その後、予測は正しい答えに変わっ
# ていきます。答えが別のトークンである位置での正解は、ステップ 150 で 0.303、300 で 0.423、900 で
# 0.659、3000 で 0.849 になり、405 種類のトークンを使います。そのときの首位の予測のうち頻出トークン
# は 0.285 で、頻出の答えが占める 0.283 に近い値です。
#
# **アテンション。** ステップ 0 では重みはほぼ一様で、直前と直後のトークンにそれぞれ約 0.04、もう一
# 方の文に 0.487 と 0.499 です。層 1 は自分の文にとどまることを学び、もう一方の文への重みはステップ
# 150 までに 0.310、ステップ 900 までに 0.124 に下がります。層 0 はそうなりません。ステップ 3000 で
# もまだ 0.354 をもう一方の文に置いています（ノートブック 05 では、そのヘッドの 1 つがもう一方の文を
# 見ていました）。層 0 が学ぶのは代わりに直前のトークンで、正しい予測と歩調を合わせて、ステップ 300
# の 0.121 からステップ 900 の 0.336、ステップ 3000 の 0.428 に増えます。層 1 の隣への重みは低いまま
# です（ステップ 3000 で 0.062 と 0.065）。`<sep>` はあまりアテンションを集めません。その割合はステ
# ップ 0 で最も高く（0.080 と 0.084。ほぼ一様な重みが 2 つのキーに与える割合です）、最後は 0.035 と
# 0.065 です。大きな元の BERT のヘッドは重みの多くを `[SEP]` に置きます（Clark ら、2019）が、この小
# さなモデルは 3000 ステップでもそうなりません。

# %% [markdown] lang="en"
# ### Your own run
#
# The live run above recorded snapshots of its own, at steps 0, 25, 50, 100, 200 and 300: give
# the widget the recorder and the history `train_bert` returned (the losses come from there),
# and the same time-lapse shows the model you trained. The line under it measures its last step
# as above:

# %% [markdown] lang="zh"
# ### 你自己的训练
#
# 上面的现场训练也记录了自己的快照（第 0、25、50、100、200 和 300 步）：把记录器和 `train_bert` 返回
# 的训练历史（损失就来自这里）交给小部件，同样的延时回放就会显示你训练的模型。下面那一行按上面的方法
# 统计它最后一步的情况：

# %% [markdown] lang="ja"
# ### あなた自身の学習
#
# 上のその場での学習も、ステップ 0、25、50、100、200、300 で自分のスナップショットを記録しています。
# 記録器と、`train_bert` が返した学習履歴（損失はここから取ります）をウィジェットに渡すと、同じタイ
# ムラプスであなたが学習させたモデルを見られます。その下の行では、最後のステップを上と同じ方法で測り
# ます。

# %%
display(TimeLapseWidget(model, tokenizer, recorder, history))
stats = snapshot_stats(model, sample, vocab.sep_id)
print(tr("your run at step 300: {frequent:.3f} of the top guesses among the 10 most frequent "
         "answers; layer 0 on the previous token {previous:.3f}, on the other sentence "
         "{other:.3f}", frequent=torch.isin(stats.guesses, frequent).float().mean(),
         previous=stats.previous[0].mean(), other=stats.other_segment[0].mean()))

# %% [markdown] lang="en"
# Your 300 steps took the model about as far as the shipped run's first 300 in its guesses:
# held-out MLM accuracy 0.489 (printed after the live run) against 0.549, 0.425 of its top
# guesses frequent tokens (the snapshot's: 0.423), and layer 0 puts 0.096 on the previous token
# (the snapshot's: 0.121). Its attention took another path, though: its layer 0 puts only 0.136
# on the other sentence, where the shipped run's still puts 0.438. Two runs of one architecture
# need not share their heads. Play its time-lapse, and compare. The in-class recipe at the end of
# this notebook trains 900 steps; record its snapshots the same way to see which path its heads
# take.

# %% [markdown] lang="zh"
# 在猜测上，你的 300 步把模型带到了与自带模型那次训练的前 300 步差不多的地方：留出数据上掩蔽语言模型
# 的准确率为 0.489（打印在现场训练之后），快照为 0.549；首选猜测中有 0.425 是常见词元（快照为
# 0.423）；层 0 放在前一个词元上的权重为 0.096（快照为 0.121）。注意力却走了另一条路：它的层 0 只把
# 0.136 放在另一个句子上，而自带模型那次训练的层 0 仍放着 0.438。同一个架构的两次训练，头不一定相
# 同。播放它的延时回放，比较一下。本笔记本最后的课堂训练配置要训练 900 步；用同样的方法记录它的快
# 照，看看它的头走的是哪条路。

# %% [markdown] lang="ja"
# 予測については、あなたの 300 ステップは、付属モデルの学習の最初の 300 ステップとほぼ同じところまで
# モデルを進めました。ホールドアウトデータでのマスク言語モデルの正解率は 0.489（その場での学習の後に
# 表示）で、スナップショットは 0.549、首位の予測のうち頻出トークンは 0.425（スナップショットは
# 0.423）、層 0 が直前のトークンに置く重みは 0.096（スナップショットは 0.121）です。ただしアテンショ
# ンは別の道をたどりました。層 0 がもう一方の文に置くのは 0.136 だけで、付属モデルの学習の層 0 はま
# だ 0.438 を置いています。同じ構造でも、2 回の学習が同じヘッドを持つとは限りません。タイムラプスを
# 再生して比べてみましょう。このノートブックの最後にある授業用の学習設定は 900 ステップ学習します。
# 同じようにスナップショットを記録して、そのヘッドがどちらの道をたどるかを見てみましょう。

# %% [markdown] lang="en"
# ## Going further
#
# The chapter's path ends here: `BERTModel`, the data, the loss, one step and a run. The first
# section below measures what makes a step cheaper: padding each mini-batch only as far as it
# needs (counted in FLOPs), and grouping pairs by length. The second runs the shipped model's
# recipe within a lesson, stopped at 900 steps, and measures how far short of the shipped model
# it falls.

# %% [markdown] lang="zh"
# ## 更进一步
#
# 本章的主线到这里就结束了：`BERTModel`、数据、损失、一步训练和一次完整的训练。下面第一节测一测怎
# 样让每一步的计算更少：每个小批量只填充到它需要的长度（按 FLOP 计算），以及按长度给句子对分组；第二
# 节在一堂课内运行自带模型的训练配置，只训练到第 900 步，并测一测它离自带模型还差多远。

# %% [markdown] lang="ja"
# ## さらに先へ
#
# 章の道筋はここで終わりです。`BERTModel`、データ、損失、1 ステップ、そして 1 回の学習を見てきまし
# た。下の最初の節では、1 ステップの計算を減らす方法を測ります。各ミニバッチを必要な長さまでしかパデ
# ィングしないこと（FLOP で数えます）と、ペアを長さごとにまとめることです。2 つ目の節では、付属モデ
# ルの学習設定を 900 ステップで打ち切って 1 回の授業の時間内に実行し、付属モデルとの差を測ります。

# %% [markdown] lang="en"
# ### Padding only as far as each mini-batch needs
#
# Every pair above was padded to `max_len` = 64 tokens, as in the chapter. The encoder then
# works on every padded position too: attention masks it out and the loss never looks at it,
# but its embeddings, projections and feed-forward layers are computed all the same. How much of
# the data is padding?

# %% [markdown] lang="zh"
# ### 每个小批量只填充到它需要的长度
#
# 上面的每个句子对都像本章那样填充到了 `max_len` = 64 个词元。编码器在填充位置上也照样计算：注意力会
# 把这些位置掩蔽掉，损失也根本用不到它们，但它们的嵌入、线性变换和前馈网络照样都要算。数据中有多少是
# 填充呢？

# %% [markdown] lang="ja"
# ### 各ミニバッチを必要な長さまでだけパディングする
#
# 上のペアはすべて、章と同じく `max_len` = 64 トークンまでパディングしてあります。するとエンコーダ
# は、パディングの位置でも計算をします。アテンションはそれをマスクし、損失もそこを見ませんが、埋め込
# み、線形変換、フィードフォワード層はやはり計算されます。データのうち、どれだけがパディングなので
# しょうか。

# %%
lengths = data.valid_lens.float()
print(tr("padding: {share:.0%} of all positions (mean length {mean:.1f}, longest {longest}, "
         "max_len 64)",
         share=1 - lengths.sum() / data.tokens.numel(), mean=lengths.mean(),
         longest=int(lengths.max())))

# %% [markdown] lang="en"
# More than half of all positions are padding. A mini-batch only needs to be as long as its
# longest pair: `trim_padding` cuts its tensors down to that length, and cuts the prediction
# slots down to the last one in use. This is called **dynamic padding**; Hugging Face's data
# collators do the same. Nothing that matters is cut: every real token keeps its position (and
# so its position embedding), and what goes was masked out or weighted 0 anyway. `train_bert`
# trims every mini-batch this way.

# %% [markdown] lang="zh"
# 一半以上的位置都是填充。其实一个小批量只需要和其中最长的句子对一样长：`trim_padding` 把小批量的张
# 量截到这个长度，并把预测位置截到最后一个用到的位置。这种做法叫做**动态填充**，Hugging Face 的数据
# 整理器（data collator）也是这么做的。截掉的都是无关紧要的部分：每个真实词元都保留原来的位置（因而
# 也保留了它的位置嵌入），截掉的部分要么本来就会掩蔽掉，要么权重为 0。`train_bert` 对每个小批量都这
# 样截短。

# %% [markdown] lang="ja"
# 全位置の半分以上がパディングです。ミニバッチの長さは、その中で最も長いペアの長さがあれば十分です。
# `trim_padding` はミニバッチのテンソルをその長さまで切り詰め、予測位置も使われている最後の位置まで
# に切り詰めます。これを**動的パディング**と呼びます。Hugging Face のデータコレーター（data
# collator）も同じことをします。大事なものは何も切り落とされません。実在するトークンはすべて元の位置
# （したがって位置埋め込み）を保ち、取り除かれるのは、いずれにせよマスクされるか重みが 0 の部分だけ
# です。`train_bert` はすべてのミニバッチをこのように切り詰めます。

# %%
show_source(trim_padding, region="trim")

# %% [markdown] lang="en"
# The same mini-batch of 32 pairs, padded to 64 and trimmed: the losses agree, and PyTorch's
# `FlopCounterMode` counts the floating-point operations of a forward and backward pass.

# %% [markdown] lang="zh"
# 下面把同一个小批量（32 个句子对）分别填充到 64 和截短，比较两者：损失完全一致；再用 PyTorch 的
# `FlopCounterMode` 统计一次前向传播加反向传播的浮点运算次数。

# %% [markdown] lang="ja"
# 32 組のペアからなる同じミニバッチを、64 までパディングした場合と切り詰めた場合で比べます。損失は一
# 致します。さらに PyTorch の `FlopCounterMode` で、順伝播と逆伝播 1 回ぶんの浮動小数点演算の回数を
# 数えます。


# %%
def step_gflop(loss_fn, batch):
    """Floating-point operations (in billions) of ``loss_fn`` and its gradients on ``batch``."""
    with FlopCounterMode(display=False) as counter:
        loss_fn(model, *batch).total.backward()
    model.zero_grad()
    return counter.get_total_flops() / 1e9


trimmed = trim_padding(batch)
rows = []
for name, b in ((tr("padded to max_len:"), batch), (tr("trimmed:"), trimmed)):
    with torch.no_grad():
        loss = chapter_loss(model, *b)
    rows.append([name, f"T = {b[0].shape[1]}, P = {b[3].shape[1]}",
                 tr("MLM {mlm:.3f}  NSP {nsp:.3f}  total {total:.3f}", mlm=loss.mlm,
                    nsp=loss.nsp, total=loss.total),
                 tr("forward + backward: {gflop:.2f} GFLOP", gflop=step_gflop(chapter_loss, b))])
print(table(rows))
print("fast_loss:", tr("forward + backward: {gflop:.2f} GFLOP",
                       gflop=step_gflop(fast_loss, trimmed)))

# %% [markdown] lang="en"
# Trimmed to its longest pair (46 tokens), the mini-batch costs 0.75 GFLOP instead of 1.05 in
# the chapter's step, for the same losses to the last digit. `fast_loss` goes further, to 0.40:
# inside the trimmed batch the shorter pairs are still padded, and every layer but attention
# works token by token, so it runs those layers on the real tokens only and pads them just for
# attention (`bertlib.scale.fast.unpadded_encode`), and it runs the MLM head only on the K real
# slots.
#
# A random mini-batch still pads every pair to the longest one it happens to hold. **Grouping
# by length** goes further, as Hugging Face's `group_by_length` does: `LengthGroupedSampler`
# shuffles the pairs, sorts each chunk of 50 mini-batches by length, cuts it into mini-batches
# and shuffles their order, so a mini-batch holds pairs of nearly the same length.
# `train_bert(..., group_by_length=True)` uses it. The padding left after trimming, for random
# and for grouped mini-batches of 128 pairs:

# %% [markdown] lang="zh"
# 截到其中最长的句子对（46 个词元）之后，按本章的做法训练一步，这个小批量的计算量从 1.05 GFLOP 降到
# 了 0.75 GFLOP，损失却分毫不差。`fast_loss` 更进一步，降到 0.40：截短后的批量里，较短的句子对仍有填
# 充，而除注意力之外的每一层都是逐个词元计算的，所以它让这些层只在真实词元上运行，只在注意力那一步才
# 补上填充（`bertlib.scale.fast.unpadded_encode`）；掩蔽语言模型的输出层也只算 K 个真实位置。
#
# 随机组成的小批量仍然要把每个句子对填充到其中碰巧最长的那一个。**按长度分组**更进一步，就像 Hugging
# Face 的 `group_by_length` 那样：`LengthGroupedSampler` 先打乱句子对，每次取出够组成 50 个小批量的
# 句子对，按长度排序后切分成小批量，最后打乱所有小批量的顺序，这样同一个小批量里的句子对长度几乎相
# 同。`train_bert(..., group_by_length=True)` 用的就是它。下面分别统计随机组成的小批量和按长度分组的
# 小批量（每批 128 个句子对）在截短之后还剩多少填充：

# %% [markdown] lang="ja"
# 最も長いペア（46 トークン）に合わせて切り詰めると、章のやり方の 1 ステップで、このミニバッチの計
# 算量は 1.05 GFLOP から 0.75 GFLOP に減り、損失は最後の桁まで同じです。`fast_loss` はさらに 0.40 ま
# で減らします。切り詰めたバッチの中でも短いペアにはまだパディングがあり、アテンション以外の層はすべ
# てトークンごとに計算するので、それらの層は実在するトークンだけで計算し、アテンションのときだけパデ
# ィングを補うのです（`bertlib.scale.fast.unpadded_encode`）。マスク言語モデルの出力層も K 個の実在
# する予測位置だけで計算します。
#
# ランダムに組んだミニバッチでは、各ペアをそのバッチにたまたま含まれる最も長いペアまでパディングしな
# ければなりません。**長さごとにまとめる**と、Hugging Face の `group_by_length` のように、さらにパ
# ディングを減らせます。`LengthGroupedSampler` はペアをシャッフルし、ミニバッチ 50 個ぶんずつ長さで
# 並べ替えてミニバッチに切り分け、その順序をシャッフルします。こうすると、1 つのミニバッチにはほぼ同
# じ長さのペアが集まります。`train_bert(..., group_by_length=True)` はこれを使います。128 組ずつのミ
# ニバッチについて、ランダムに組んだ場合と長さごとにまとめた場合で、切り詰めた後に残るパディングを数
# えてみましょう。

# %%
is_zh = torch.cat([torch.full((len(d),), lang == "zh") for lang, d in by_lang.items()])
lengths = train_pairs.valid_lens

random_batches = torch.randperm(len(lengths), generator=torch.Generator().manual_seed(0))
grouped_batches = [torch.tensor(b) for b in LengthGroupedSampler(lengths, 128, seed=0)]
rows = []
for name, batches in ((tr("random mini-batches:"), random_batches.split(128)),
                      (tr("grouped by length:"), grouped_batches)):
    padded = sum(len(b) * int(lengths[b].max()) for b in batches)
    zh_share = torch.stack([is_zh[b].float().mean() for b in batches])
    majority = torch.maximum(zh_share, 1 - zh_share).mean()  # the larger language's share
    rows.append([name, tr("padding after trimming {padding:.1%}; the larger language makes up "
                          "{majority:.0%} of a mini-batch on average",
                          padding=1 - int(lengths.sum()) / padded, majority=majority)])
print(table(rows))

# %% [markdown] lang="en"
# Grouping leaves almost no padding, but look at the second number: a random mini-batch is
# about half English and half Chinese, while a grouped one is nearly all one language. In this
# corpus the length of a pair gives its language away:

# %% [markdown] lang="zh"
# 分组之后几乎没有填充了，但请看第二个数：随机组成的小批量里英文和中文大约各占一半，按长度分组的小批
# 量则几乎只有一种语言。在这个语料库里，看句子对的长度就能猜出它是哪种语言：

# %% [markdown] lang="ja"
# 長さでまとめると、パディングはほとんど残りません。しかし 2 つ目の数字を見てください。ランダムなミ
# ニバッチは英語と中国語がほぼ半分ずつなのに、長さでまとめたミニバッチはほとんど 1 つの言語だけで
# す。このコーパスでは、ペアの長さを見ればその言語がわかってしまうのです。

# %%
rows = []
for name, d in ((tr("English pairs:"), by_lang["en"]), (tr("Chinese pairs:"), by_lang["zh"])):
    q = d.valid_lens.float().quantile(torch.tensor([0.1, 0.9]))
    rows.append([name, tr("mean length {mean:.1f} tokens, 10th to 90th percentile {low} to "
                          "{high}", mean=d.valid_lens.float().mean(), low=int(q[0]),
                          high=int(q[1]))])
print(table(rows))

# %% [markdown] lang="en"
# English pairs are 15 to 25 tokens long (10th to 90th percentile), Chinese pairs 22 to 35,
# since the tokenizer cuts Chinese into single characters. Sorting by length sorts by language,
# and a model that sees one language per step learns more slowly: the in-class run at the end
# of this notebook measures how much. That is why `train_bert` trims every mini-batch but does
# not group by length unless asked. On a corpus whose lengths say nothing else, grouping is a
# free saving.

# %% [markdown] lang="zh"
# 英文句子对长 15 到 25 个词元（第 10 到第 90 百分位数），中文句子对长 22 到 35 个，因为分词器把中文
# 切成了单个汉字。按长度排序也就成了按语言排序，而每一步只见到一种语言的模型学得更慢：本笔记本最后的
# 课堂训练会测出慢了多少。所以 `train_bert` 会截短每个小批量，但只有在你要求时才按长度分组。如果语料
# 库中句子对的长度不透露别的信息，按长度分组省下的计算就是白赚的。

# %% [markdown] lang="ja"
# 英語のペアは 15 から 25 トークン（10 から 90 パーセンタイル）、中国語のペアは 22 から 35 トークン
# です。トークナイザが中国語を 1 文字ずつに切るからです。長さで並べ替えることは言語で並べ替えること
# になり、1 ステップで 1 つの言語しか見ないモデルは学習が遅くなります。どれだけ遅くなるかは、この
# ノートブックの最後の授業用の学習で測ります。`train_bert` がすべてのミニバッチを切り詰めはしても、
# 指定されない限り長さごとにはまとめないのはこのためです。長さがほかの何も語らないコーパスなら、長さ
# でまとめることによる節約はただで手に入ります。

# %% [markdown] lang="en"
# ### The shipped model's recipe, in class
#
# A class can watch for longer than a minute. `scripts/pretrain_small.py --in-class` times a recipe
# for that: the shipped model's recipe (sizes, tokenizer, training paragraphs, held-out pairs, no
# dropout, a learning rate of 2e-3), but 900 steps instead of 3000, on both cores. It times
# everything from the tokenized corpus to the held-out figures, once with random mini-batches and
# once grouped by length, and records both runs in the shipped `metrics.json`:

# %% [markdown] lang="zh"
# ### 在课堂上运行自带模型的训练配置
#
# 一堂课的时间远不止一分钟。`scripts/pretrain_small.py --in-class` 为此给出一套课堂训练配置并计时：
# 模型尺寸、分词器、训练段落、留出的句子对、不用 dropout、学习率 2e-3，都与自带模型相同，但只训练
# 900 步而不是 3000 步，并用上两个核。计时从分好词的语料开始，一直到得出留出数据上的结果为止；随机组
# 成小批量和按长度分组各跑一次，两次的结果都记录在自带的 `metrics.json` 中：

# %% [markdown] lang="ja"
# ### 授業の中で付属モデルの学習設定を実行する
#
# 授業では 1 分よりもっと長く見ていられます。`scripts/pretrain_small.py --in-class` は、そのための学
# 習設定の時間を計ります。付属モデルと同じサイズ、トークナイザ、学習用の段落、ホールドアウトのペアを
# 使い、ドロップアウトなし、学習率 2e-3 も同じですが、ステップ数は 3000 ではなく 900 で、2 つのコア
# を使います。トークン化したコーパスからホールドアウトデータでの結果が出るまでをすべて計り、ランダム
# なミニバッチで 1 回、長さでまとめて 1 回実行し、両方の結果を付属の `metrics.json` に記録していま
# す。

# %%
in_class = metrics["in_class"]
r = in_class["recipe"]
print(tr("in-class recipe: lr {lr:g}, dropout {dropout:g}, {steps} steps of {batch} pairs, "
         "{threads} threads",
         lr=r["lr"], dropout=r["dropout"], steps=r["num_steps"], batch=r["batch_size"],
         threads=r["threads"]))
rows = [[name, tr("NSP {nsp:.3f}  MLM {mlm:.3f}  {pairs:.0f} pairs/s; seconds: data {data:.1f}, "
                  "training {training:.1f}, evaluation {evaluation:.1f}, total {total:.1f}",
                  nsp=run_["held_out"]["nsp_accuracy"], mlm=run_["held_out"]["mlm_accuracy"],
                  pairs=run_["pairs_per_sec"], **run_["seconds"])]
        for name, run_ in ((tr("random mini-batches:"), in_class["random"]),
                           (tr("grouped by length:"), in_class["grouped"]))]
rows.append([tr("shipped model:"), tr("NSP {nsp:.3f}  MLM {mlm:.3f}  ({steps} steps, {minutes:.1f} "
                                      "min on {threads} thread)",
                                      nsp=metrics["held_out"]["nsp_accuracy"],
                                      mlm=metrics["held_out"]["mlm_accuracy"],
                                      steps=recipe["num_steps"], minutes=run["seconds"] / 60,
                                      threads=recipe["threads"])])
print(table(rows))
print(tr("pairs per second, grouped / random: {ratio:.2f}",
         ratio=in_class["grouped"]["pairs_per_sec"] / in_class["random"]["pairs_per_sec"]))

# %% [markdown] lang="en"
# With random mini-batches the recipe gets held-out NSP 0.830 and MLM 0.738 in 158.1 s on the
# two cores of the machine that ran it (27.1 of them building the pairs). That is close to the
# shipped model's NSP (0.841) but well short of its MLM (0.880): the shipped model trains for
# 3000 steps, not 900. What 900 steps cannot give at all is what notebook 09 needs: the link
# between a word and the words of its class (a fruit and "peel", a city and "streets") forms
# only between steps 900 and 3000. Grouped by length, a step is 1.28 times as fast (`fast_loss`
# already leaves out most of the padding), and after the same 900 steps the model is behind
# (NSP 0.791, MLM 0.650): one language per mini-batch costs more than the padding saves. To run
# the recipe in a lesson, build the pairs as the script does
# (`make_pretrain_data(..., rounds=10, groups=split.train_langs)`) and call
# `train_bert(init_model(BERTConfig(len(vocab), 128, 256, 2, 2, dropout=0.0, max_len=64), seed=3),
# data, num_steps=900, batch_size=128, lr=2e-3, seed=4, callback=LossPlot().update)`.

# %% [markdown] lang="zh"
# 随机组成小批量时，这套课堂训练配置在运行它的那台机器上用两个核共耗时 158.1 秒（其中 27.1 秒用于构
# 造句子对），留出数据上下一句预测的准确率为 0.830，掩蔽语言模型的准确率为 0.738。下一句预测接近自带
# 模型（0.841），掩蔽语言模型却明显不如（0.880）：自带模型训练了 3000 步，而不是 900 步。900 步完全
# 给不了的，是笔记本 09 所需要的东西：一个词与同类词的联系（水果和“果皮”，城市和“街道”）要到第 900
# 步和第 3000 步之间才形成。按长度分组时，每一步的速度是原来的 1.28 倍（`fast_loss` 已经省掉了大部分
# 填充），而同样训练 900 步之后，模型却落在后面（下一句预测 0.791，掩蔽语言模型 0.650）：每个小批量
# 只有一种语言，付出的代价比少算填充省下的还多。要在课堂上使用这套训练配置，请像脚本那样构造句子对
# （`make_pretrain_data(..., rounds=10, groups=split.train_langs)`），再调用
# `train_bert(init_model(BERTConfig(len(vocab), 128, 256, 2, 2, dropout=0.0, max_len=64), seed=3),
# data, num_steps=900, batch_size=128, lr=2e-3, seed=4, callback=LossPlot().update)`。

# %% [markdown] lang="ja"
# ランダムなミニバッチでは、この学習設定は実行したマシンの 2 つのコアで 158.1 秒かかり（そのうち
# 27.1 秒はペアの作成）、ホールドアウトデータで次文予測 0.830、マスク言語モデル 0.738 に達します。次
# 文予測は付属モデル（0.841）に近いものの、マスク言語モデルは（0.880）にかなり届きません。付属モデル
# は 900 ステップではなく 3000 ステップ学習しているからです。900 ステップではまったく得られないの
# が、ノートブック 09 が必要とするもの、つまり単語と同じクラスの単語との結びつき（果物と「皮」、都市
# と「通り」）で、これはステップ 900 から 3000 のあいだにようやくできます。長さでまとめると、1 ステ
# ップは 1.28 倍速くなり（`fast_loss` がすでにパディングの大半を省いています）、同じ 900 ステップの
# 後のモデルは遅れています（次文予測 0.791、マスク言語モデル 0.650）。1 つのミニバッチに 1 つの言語
# しかないことの損失は、パディングを減らして得る節約よりも大きいのです。授業でこの学習設定を実行する
# には、スクリプトと同じようにペアを作り（`make_pretrain_data(..., rounds=10,
# groups=split.train_langs)`）、`train_bert(init_model(BERTConfig(len(vocab), 128, 256, 2, 2,
# dropout=0.0, max_len=64), seed=3), data, num_steps=900, batch_size=128, lr=2e-3, seed=4,
# callback=LossPlot().update)` を呼びます。

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
# * Snapshots of the weights (`SnapshotRecorder` during `train_bert`, `load_snapshots` for the
#   shipped recipe's) show what a run learns and when, in `TimeLapseWidget`: the guesses are
#   the most frequent tokens up to about step 150 and mostly right by step 3000; layer 1 keeps to
#   its own sentence, layer 0 turns to the previous token; none turns to `<sep>`.
# * Going further: dynamic padding (`trim_padding`) pads each mini-batch only to its longest
#   pair, the same losses for far less work. Grouping pairs by length (`LengthGroupedSampler`)
#   removes nearly all the rest, but here length gives the language away, and one-language
#   batches learn more slowly: measure before you group. The shipped recipe stopped at 900 steps
#   comes close to the shipped model's NSP but not to its MLM, nor to the word classes notebook
#   09 needs.

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
# * 权重的快照（训练时用 `SnapshotRecorder` 记录，自带训练配置的快照用 `load_snapshots` 读取）在
#   `TimeLapseWidget` 中展示一次训练学到了什么、何时学到：大约到第 150 步为止，预测都是最常见的词
#   元，到第 3000 步大多已经猜对；层 1 留在自己的句子里，层 0 转向前一个词元；没有一个头转向
#   `<sep>`。
# * 更进一步：动态填充（`trim_padding`）让每个小批量只填充到其中最长的句子对，损失不变，计算量却少得
#   多。按长度分组（`LengthGroupedSampler`）几乎能去掉剩下的全部填充，但在这里长度会泄露语言，而只含
#   一种语言的小批量学得更慢：分组之前先测一测。自带模型的训练配置只训练 900 步时，下一句预测接近自
#   带模型，掩蔽语言模型却不如它，也学不到笔记本 09 所需要的词类。

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
# * 重みのスナップショット（`train_bert` の中で `SnapshotRecorder` が記録し、付属の学習設定のものは
#   `load_snapshots` で読み込みます）を `TimeLapseWidget` で見ると、学習が何をいつ学ぶかがわかりま
#   す。予測はステップ 150 ごろまでは最も頻度の高いトークンで、ステップ 3000 までにはほとんど正しく
#   なります。層 1 は自分の文の中にとどまり、層 0 は直前のトークンを見るようになります。`<sep>` を
#   見るようになるヘッドはありません。
# * さらに先へ：動的パディング（`trim_padding`）は各ミニバッチを最も長いペアまでだけパディングし、損
#   失は同じまま計算をずっと減らします。ペアを長さごとにまとめると（`LengthGroupedSampler`）残りもほ
#   とんどなくなりますが、ここでは長さが言語を明かしてしまい、1 つの言語だけのバッチでは学習が遅くな
#   ります。まとめる前に測りましょう。付属モデルの学習設定を 900 ステップで止めると、次文予測は付属
#   モデルに近づきますが、マスク言語モデルは届かず、ノートブック 09 が必要とする単語クラスも身につき
#   ません。

# %% [markdown] lang="en"
# ## Exercises
#
# 1. ★ **Count.** In the chapter's training step (`chapter_loss`, every pair padded to `max_len`)
#    with the shipped recipe's batch size 128 and `max_len` 64, how many numbers does `mlm_Y_hat`
#    hold? Check below.
# 2. ★ **Count.** How many learnable parameters does the shipped small BERT have? Work it out
#    from `small_bert.config`, then check below.
# 3. ★★ **Implement it: the weighted MLM loss.** `mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)`, in
#    "The combined loss", in the cell before the listing of `bert_loss` (the listing gives the
#    answer away, so write yours first).
# 4. ★★ **Splitting sentences.** The chapter cuts sentences at `" . "` only and suggests a real
#    sentence splitter (spaCy or NLTK) instead. Split the lines of `WIKITEXT_SAMPLE` with a rule
#    of your own, for example a regular expression that cuts after `.`, `?` or `!` followed by a
#    space, or with NLTK's `sent_tokenize` if you have it. Compare with `read_wikitext`: where do
#    the sentences differ, and what happens to the final `.` and to `14 @.@ 5`?
# 5. ★★ **Vocabulary size.** The chapter keeps only words seen at least 5 times
#    (`min_freq=5`). Build word vocabularies of the English training sentences,
#    `Vocab([s.lower().split() for p, lang in zip(split.train, split.train_langs) if lang == "en"
#    for s in p], min_freq=k)` (`from bertlib.text.vocab import Vocab`), for k = 1, 2, 5. How many
#    words does each keep, next to the `len(vocab)` of the WordPiece vocabulary, which also
#    covers Chinese? What happens to a word that is not in a word vocabulary, and to one that is
#    not in the WordPiece vocabulary?
# 6. ★★ In the live run, as in the chapter, the MLM loss stays far above the NSP loss. Does MLM
#    learn less? Divide each loss at the end of the live run (`history.mlm[-1]`,
#    `history.nsp[-1]`) by the loss of guessing uniformly: which of the two tasks has the model
#    brought further below its uniform guess, MLM or NSP? Do the same at the end of the shipped
#    run (`run["mlm_loss"][-1]`, `run["nsp_loss"][-1]`), where the MLM loss ends below the NSP
#    loss.
# 7. ★★★ The chapter suggests pretraining with `max_len=512` and the sizes of BERT-Large (24
#    blocks, H = 1024, 16 heads, FFN 4096). Without running it: when `max_len` goes from 64 to
#    512, by what factor does the memory of the parameters grow, and by what factor the memory
#    of one batch's attention weights? Which of the two makes the run fail on a laptop?

# %% [markdown] lang="zh"
# ## 练习
#
# 1. ★ **数一数。** 按本章的做法训练一步（`chapter_loss`，每个句子对都填充到 `max_len`），批量大小
#    取自带模型训练配置中的 128，`max_len` 为 64，这时 `mlm_Y_hat` 中有多少个数？在下面检查你的答
#    案。
# 2. ★ **数一数。** 自带的小 BERT 有多少个可学习的参数？根据 `small_bert.config` 算出来，再在下面检
#    查。
# 3. ★★ **动手实现：加权的掩蔽语言模型损失。** 即“总损失”一节中、`bert_loss` 源代码之前那个单元格
#    里的 `mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)`（源代码会泄露答案，所以要先写出你自己的版本）。
# 4. ★★ **切分句子。** 本章只在 `" . "` 处切分句子，并建议改用真正的分句工具（spaCy 或 NLTK）。用你
#    自己的规则切分 `WIKITEXT_SAMPLE` 中的各行，例如用正则表达式在 `.`、`?` 或 `!` 后面紧跟空格的地
#    方切分；如果装有 NLTK，也可以用它的 `sent_tokenize`。与 `read_wikitext` 比较：哪些句子不同？末
#    尾的 `.` 和 `14 @.@ 5` 又变成了什么样？
# 5. ★★ **词表大小。** 本章只保留至少出现 5 次的词（`min_freq=5`）。用英文训练句子构建单词词表：
#    `Vocab([s.lower().split() for p, lang in zip(split.train, split.train_langs) if lang == "en"
#    for s in p], min_freq=k)`（`from bertlib.text.vocab import Vocab`），k 取 1、2、5。每个词表保留
#    了多少个词？与 WordPiece 词表（它还覆盖中文）的 `len(vocab)` 相比如何？不在单词词表中的词会怎
#    样？不在 WordPiece 词表中的词又会怎样？
# 6. ★★ 在现场训练中，和在本章中一样，掩蔽语言模型的损失远高于下一句预测的损失。这说明掩蔽语言模型
#    学到的更少吗？把现场训练结束时的两个损失（`history.mlm[-1]`、`history.nsp[-1]`）分别除以均匀猜
#    测时的损失：两个任务中，哪一个被训练得离均匀猜测更远，掩蔽语言模型还是下一句预测？再对自带模型
#    完整训练结束时的损失（`run["mlm_loss"][-1]`、`run["nsp_loss"][-1]`）做同样的计算，那时掩蔽语言
#    模型的损失已经低于下一句预测的损失。
# 7. ★★★ 本章建议用 `max_len=512` 和 BERT-Large 的尺寸（24 个编码器块，H = 1024，16 个头，前馈网
#    络 4096）做预训练。不用运行，想一想：`max_len` 从 64 增加到 512 时，参数占用的内存增长到原来的
#    多少倍？一个批量的注意力权重占用的内存又增长到多少倍？在笔记本电脑上，是哪一个让训练无法进行？

# %% [markdown] lang="ja"
# ## 演習
#
# 1. ★ **数えてみよう。** 章の学習ステップ（`chapter_loss`、すべてのペアを `max_len` までパディン
#    グ）で、付属の学習設定のバッチサイズ 128、`max_len` 64 のとき、`mlm_Y_hat` にはいくつの数が入っ
#    ていますか。下で確かめましょう。
# 2. ★ **数えてみよう。** 付属の小さな BERT には、学習可能なパラメータがいくつありますか。
#    `small_bert.config` から計算し、下で確かめましょう。
# 3. ★★ **実装してみよう：重み付きのマスク言語モデルの損失。**「損失を合わせる」の節で、`bert_loss`
#    のソースコードの前のセルにある `mlm_loss(mlm_Y_hat, mlm_Y, mlm_weights)` です（ソースコードを見
#    ると答えがわかってしまうので、先に自分で書きましょう）。
# 4. ★★ **文を切り分ける。** 章は `" . "` だけで文を切り、本物の文分割ツール（spaCy や NLTK）を使
#    うことを勧めています。`WIKITEXT_SAMPLE` の各行を自分の規則で切り分けてみましょう。たとえば、
#    `.`、`?`、`!` の後にスペースが続くところで切る正規表現や、NLTK があればその `sent_tokenize` を
#    使います。`read_wikitext` と比べて、どの文が違いますか。末尾の `.` と `14 @.@ 5` はどうなります
#    か。
# 5. ★★ **語彙のサイズ。** 章は 5 回以上現れた単語だけを残します（`min_freq=5`）。英語の学習用の文
#    から単語の語彙を作りましょう。`Vocab([s.lower().split() for p, lang in zip(split.train,
#    split.train_langs) if lang == "en" for s in p], min_freq=k)`（`from bertlib.text.vocab import
#    Vocab`）で、k = 1、2、5 とします。それぞれいくつの単語が残りますか。中国語も扱う WordPiece
#    の語彙の `len(vocab)` と比べるとどうでしょうか。単語の語彙にない単語はどうなり、WordPiece の語
#    彙にない単語はどうなりますか。
# 6. ★★ その場での学習では、章と同じく、マスク言語モデルの損失は次文予測の損失よりずっと高いまま
#    です。マスク言語モデルの学ぶことは少ないのでしょうか。その場での学習の最後の損失
#    （`history.mlm[-1]`、`history.nsp[-1]`）を、それぞれ一様な推測の損失で割ってみましょう。モデル
#    が一様な推測からより遠くまで下げたのは、マスク言語モデルと次文予測のどちらですか。付属モデルの
#    学習の最後の損失（`run["mlm_loss"][-1]`、`run["nsp_loss"][-1]`）でも同じ計算をしてみましょう。
#    こちらでは、マスク言語モデルの損失が次文予測の損失より低くなっています。
# 7. ★★★ 章は `max_len=512` と BERT-Large のサイズ（24 ブロック、H = 1024、16 ヘッド、FFN 4096）で
#    事前学習することを提案しています。実行せずに考えましょう。`max_len` が 64 から 512 になると、パ
#    ラメータのメモリは何倍になり、1 つのバッチのアテンションの重みのメモリは何倍になりますか。ノー
#    トパソコンで学習が失敗する原因になるのは、どちらでしょうか。

# %%
answer = None  # your answer to exercise 1: an integer
check_exercise("06_mlm_logits", answer)

# %%
answer = None  # your answer to exercise 2: an integer
check_exercise("06_small_bert_params", answer)


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
# "padding: {share:.0%} of all positions (mean length {mean:.1f}, longest {longest}, max_len 64)"
# "填充占全部位置的 {share:.0%}（平均长度 {mean:.1f}，最长 {longest}，max_len 为 64）"
#
# "padded to max_len:"
# "填充到 max_len："
#
# "trimmed:"
# "截短之后："
#
# "forward + backward: {gflop:.2f} GFLOP"
# "前向传播 + 反向传播：{gflop:.2f} GFLOP"
#
# "random mini-batches:"
# "随机组成的小批量："
#
# "grouped by length:"
# "按长度分组："
#
# "padding after trimming {padding:.1%}; the larger language makes up {majority:.0%} of a mini-batch on average"
# "截短后填充占 {padding:.1%}；小批量中较多的那种语言平均占 {majority:.0%}"
#
# "English pairs:"
# "英文句子对："
#
# "Chinese pairs:"
# "中文句子对："
#
# "mean length {mean:.1f} tokens, 10th to 90th percentile {low} to {high}"
# "平均长度 {mean:.1f} 个词元，第 10 到第 90 百分位数为 {low} 到 {high}"
#
# "NSP loss (recorded every {every} steps): mean over steps {a}-{b} {early:.2f}, over steps {c}-{d} {late:.2f}"
# "下一句预测损失（每 {every} 步记录一次）：第 {a}–{b} 步平均 {early:.2f}，第 {c}–{d} 步平均 {late:.2f}"
#
# "{sentences:,} sentences, {tokens:,} WordPiece tokens; {minutes} minutes of training"
# "{sentences:,} 个句子，{tokens:,} 个 WordPiece 词元；训练用时 {minutes} 分钟"
#
# "in-class recipe: lr {lr:g}, dropout {dropout:g}, {steps} steps of {batch} pairs, {threads} threads"
# "课堂训练配置：学习率 {lr:g}，dropout {dropout:g}，{steps} 步，每步 {batch} 个句子对，{threads} 个线程"
#
# "NSP {nsp:.3f}  MLM {mlm:.3f}  {pairs:.0f} pairs/s; seconds: data {data:.1f}, training {training:.1f}, evaluation {evaluation:.1f}, total {total:.1f}"
# "下一句预测 {nsp:.3f}  掩蔽语言模型 {mlm:.3f}  每秒 {pairs:.0f} 个句子对；用时（秒）：构造数据 {data:.1f}，训练 {training:.1f}，评估 {evaluation:.1f}，共 {total:.1f}"
#
# "NSP {nsp:.3f}  MLM {mlm:.3f}  ({steps} steps, {minutes:.1f} min on {threads} thread)"
# "下一句预测 {nsp:.3f}  掩蔽语言模型 {mlm:.3f}（{steps} 步，在 {threads} 个线程上用时 {minutes:.1f} 分钟）"
#
# "pairs per second, grouped / random: {ratio:.2f}"
# "每秒处理的句子对数之比（按长度分组 / 随机）：{ratio:.2f}"
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
# "shipped model:"
# "自带模型："
#
# "NSP accuracy"
# "下一句预测准确率"
#
# "MLM accuracy"
# "掩蔽语言模型准确率"
#
# "among the 10 most frequent"
# "属于最常见的 10 个"
#
# "different tokens"
# "不同的词元数"
#
# "right where the answer is another token"
# "答案为其他词元时猜对"
#
# "layer {layer}:"
# "层 {layer}："
#
# "previous"
# "前一个"
#
# "next"
# "后一个"
#
# "other"
# "另一句"
#
# "The snapshots on the {pairs} held-out pairs:"
# "各快照在 {pairs} 个留出的句子对上："
#
# "shipped model (its own run): NSP {nsp:.3f}, MLM {mlm:.3f}"
# "自带模型（它自己的那次训练）：下一句预测 {nsp:.3f}，掩蔽语言模型 {mlm:.3f}"
#
# "{pairs} held-out pairs, {slots} masked slots; the 10 most frequent answers {tokens} are {share:.3f} of them"
# "{pairs} 个留出的句子对，{slots} 个被掩蔽的位置；最常见的 10 个答案 {tokens} 占其中的 {share:.3f}"
#
# "The top guess at each masked slot:"
# "每个被掩蔽位置的首选预测："
#
# "Attention weight on the previous token, the next one, <sep> and the other sentence, mean over heads and over every token as query:"
# "放在前一个词元、后一个词元、<sep> 和另一个句子上的注意力权重（对各个头以及作为查询的每个词元求平均）："
#
# "your run at step 300: {frequent:.3f} of the top guesses among the 10 most frequent answers; layer 0 on the previous token {previous:.3f}, on the other sentence {other:.3f}"
# "你的训练在第 300 步：首选预测中属于最常见的 10 个答案的占 {frequent:.3f}；层 0 放在前一个词元上的权重为 {previous:.3f}，放在另一个句子上的为 {other:.3f}"

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
# "padding: {share:.0%} of all positions (mean length {mean:.1f}, longest {longest}, max_len 64)"
# "パディングは全位置の {share:.0%}（平均の長さ {mean:.1f}、最長 {longest}、max_len 64）"
#
# "padded to max_len:"
# "max_len までパディング："
#
# "trimmed:"
# "切り詰め後："
#
# "forward + backward: {gflop:.2f} GFLOP"
# "順伝播 + 逆伝播：{gflop:.2f} GFLOP"
#
# "random mini-batches:"
# "ランダムなミニバッチ："
#
# "grouped by length:"
# "長さごとにまとめたミニバッチ："
#
# "padding after trimming {padding:.1%}; the larger language makes up {majority:.0%} of a mini-batch on average"
# "切り詰め後のパディング {padding:.1%}。ミニバッチの中で多いほうの言語が平均 {majority:.0%} を占める"
#
# "English pairs:"
# "英語のペア："
#
# "Chinese pairs:"
# "中国語のペア："
#
# "mean length {mean:.1f} tokens, 10th to 90th percentile {low} to {high}"
# "平均の長さ {mean:.1f} トークン、10 から 90 パーセンタイルは {low} から {high}"
#
# "NSP loss (recorded every {every} steps): mean over steps {a}-{b} {early:.2f}, over steps {c}-{d} {late:.2f}"
# "次文予測の損失（{every} ステップごとに記録）：ステップ {a}–{b} の平均 {early:.2f}、ステップ {c}–{d} の平均 {late:.2f}"
#
# "{sentences:,} sentences, {tokens:,} WordPiece tokens; {minutes} minutes of training"
# "{sentences:,} 文、{tokens:,} WordPiece トークン。学習時間 {minutes} 分"
#
# "in-class recipe: lr {lr:g}, dropout {dropout:g}, {steps} steps of {batch} pairs, {threads} threads"
# "授業用の学習設定：学習率 {lr:g}、ドロップアウト {dropout:g}、{batch} 組ずつ {steps} ステップ、{threads} スレッド"
#
# "NSP {nsp:.3f}  MLM {mlm:.3f}  {pairs:.0f} pairs/s; seconds: data {data:.1f}, training {training:.1f}, evaluation {evaluation:.1f}, total {total:.1f}"
# "次文予測 {nsp:.3f}  マスク言語モデル {mlm:.3f}  毎秒 {pairs:.0f} 組。秒数：データ {data:.1f}、学習 {training:.1f}、評価 {evaluation:.1f}、合計 {total:.1f}"
#
# "NSP {nsp:.3f}  MLM {mlm:.3f}  ({steps} steps, {minutes:.1f} min on {threads} thread)"
# "次文予測 {nsp:.3f}  マスク言語モデル {mlm:.3f}（{steps} ステップ、{threads} スレッドで {minutes:.1f} 分）"
#
# "pairs per second, grouped / random: {ratio:.2f}"
# "1 秒あたりのペア数の比（長さでまとめた場合 / ランダム）：{ratio:.2f}"
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
# "shipped model:"
# "付属モデル："
#
# "NSP accuracy"
# "次文予測の正解率"
#
# "MLM accuracy"
# "マスク言語モデルの正解率"
#
# "among the 10 most frequent"
# "頻度上位 10 個に入る割合"
#
# "different tokens"
# "トークンの種類"
#
# "right where the answer is another token"
# "答えがそれ以外のときの正解"
#
# "layer {layer}:"
# "層 {layer}："
#
# "previous"
# "直前"
#
# "next"
# "直後"
#
# "other"
# "もう一方の文"
#
# "The snapshots on the {pairs} held-out pairs:"
# "ホールドアウトのペア {pairs} 組での各スナップショット："
#
# "shipped model (its own run): NSP {nsp:.3f}, MLM {mlm:.3f}"
# "付属モデル（それ自身の学習）：次文予測 {nsp:.3f}、マスク言語モデル {mlm:.3f}"
#
# "{pairs} held-out pairs, {slots} masked slots; the 10 most frequent answers {tokens} are {share:.3f} of them"
# "ホールドアウトのペア {pairs} 組、マスクした位置 {slots} 個。頻度上位 10 個の答え {tokens} がその {share:.3f} を占める"
#
# "The top guess at each masked slot:"
# "マスクした各位置の第一候補："
#
# "Attention weight on the previous token, the next one, <sep> and the other sentence, mean over heads and over every token as query:"
# "直前のトークン、直後のトークン、<sep>、もう一方の文に置くアテンションの重み（ヘッドと、クエリとしての全トークンで平均）："
#
# "your run at step 300: {frequent:.3f} of the top guesses among the 10 most frequent answers; layer 0 on the previous token {previous:.3f}, on the other sentence {other:.3f}"
# "あなたの学習のステップ 300：第一候補のうち頻度上位 10 個の答えに入る割合 {frequent:.3f}。層 0 が直前のトークンに置く重み {previous:.3f}、もう一方の文に置く重み {other:.3f}"
