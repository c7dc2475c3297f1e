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
# # 03 · The encoder forward pass
#
# *[中文版](../zh/03_encoder.ipynb) · [日本語](../ja/03_encoder.ipynb) · [Index](00_index.ipynb)*
#
# Notebook 02 turned tokens into a `(B, T, H)` tensor. BERT's encoder now refines that tensor
# through a stack of identical Transformer encoder blocks; afterwards every token's vector
# depends on the whole input, left *and* right. This notebook follows one batch through the
# encoder and prints the shape at every step.
#
# You will:
# 1. build the chapter's demo encoder and run it;
# 2. recompute one block by hand: queries, keys and values, the split into heads
#    `(B, nh, T, hs)`, scores, softmax, and the output, and compare with `bertlib`;
# 3. see how `valid_lens` hides padding: padded keys get weight exactly 0, and padding does not
#    change the outputs at real positions;
# 4. plot attention weights, and explore them in a widget, first with random weights, then with
#    the weights of a pretrained BERT;
# 5. write the masked attention weights yourself, and let a check compare them with `bertlib`'s
#    on several batches.
#
# Shapes use B = batch size, T = sequence length, H = `num_hiddens`, nh = `num_heads`,
# hs = H / nh (the size of one head).

# %% [markdown] lang="zh"
# # 03 · 编码器的前向传播
#
# [English](../en/03_encoder.ipynb) · [日本語](../ja/03_encoder.ipynb) · [目录](00_index.ipynb)
#
# 笔记本 02 把词元变成了形状为 `(B, T, H)` 的张量。接下来，BERT 的编码器让这个张量依次通过
# 若干个结构相同的 Transformer 编码器块；经过编码器之后，每个词元的向量都取决于整个输入，左右两边
# 都算在内。本笔记本跟着一个批量走完编码器，每一步都打印出形状。
#
# 你将会：
# 1. 构建本章演示用的编码器并运行它；
# 2. 亲手重算一个编码器块：查询、键和值，拆分成多个头 `(B, nh, T, hs)`，注意力分数、softmax
#    和输出，并与 `bertlib` 的结果对照；
# 3. 看 `valid_lens` 如何把填充排除在注意力之外：填充位置上的键得到的权重恰好为 0，填充也不会
#    改变真实位置的输出；
# 4. 画出注意力权重，并用小部件探索它们：先用随机权重，再用预训练好的 BERT 的权重；
# 5. 亲手计算掩蔽后的注意力权重，再由检查单元格在几个批量上与 `bertlib` 的结果对照。
#
# 形状记号：B = 批量大小，T = 序列长度，H = `num_hiddens`，nh = `num_heads`，hs = H / nh（每个头
# 的大小）。

# %% [markdown] lang="ja"
# # 03 · エンコーダの順伝播
#
# *[English](../en/03_encoder.ipynb) · [中文](../zh/03_encoder.ipynb) · [目次](00_index.ipynb)*
#
# ノートブック 02 では、トークンを形状 `(B, T, H)` のテンソルに変えました。BERT のエンコーダは、同じ
# 構造の Transformer エンコーダブロックを積み重ねたもので、このテンソルを 1 ブロックずつ磨き上げてい
# きます。エンコーダを通った後では、各トークンのベクトルは入力全体に、左側**にも**右側にも依存しま
# す。このノートブックでは 1 つのバッチがエンコーダを通る様子を追い、各段階で形状を表示します。
#
# このノートブックでは次のことを行います。
# 1. 章のデモ用のエンコーダを組み立てて実行します。
# 2. ブロックを 1 つ手で計算し直します。クエリ・キー・バリュー、ヘッドへの分割 `(B, nh, T, hs)`、ス
#    コア、softmax、出力を求め、`bertlib` と比べます。
# 3. `valid_lens` がパディングを隠す仕組みを見ます。パディングされたキーの重みはちょうど 0 になり、
#    パディングは実在の位置の出力を変えません。
# 4. アテンションの重みを図に描き、ウィジェットで調べます。最初はランダムな重み、次は事前学習済みの
#    BERT の重みです。
# 5. マスクしたアテンションの重みを自分で書き、チェック用のセルでいくつかのバッチについて `bertlib`
#    と比べます。
#
# 形状には次の記号を使います：B = バッチサイズ、T = シーケンス長、H = `num_hiddens`、nh =
# `num_heads`、hs = H / nh（1 つのヘッドの大きさ）。

# %%
import math

import torch
from IPython.display import display

from bertlib import BERTEncoder, BERTModel, MultiHeadAttention, load_small_bert
from bertlib.classroom.exercises import check_exercise
from bertlib.classroom.implement import check_implementation
from bertlib.model import key_padding_mask
from bertlib.support.i18n import tr
from bertlib.viz import AttentionWidget, new_figure
from bertlib.viz.listing import show_source

# %% [markdown] lang="en"
# ## The chapter's demo encoder
#
# Vocabulary 10000, H = 768, a feed-forward layer of 1024 units, 4 heads, 2 blocks, dropout 0.2.
# A real BERT-Base has 12 blocks of 12 heads and an FFN of 3072 units, but the shapes tell the
# same story. We call `eval()` to switch dropout off, so that the numbers below are the same on
# every run; during pretraining the model is in training mode and dropout is active.

# %% [markdown] lang="zh"
# ## 本章演示用的编码器
#
# 词表大小 10000，H = 768，前馈网络有 1024 个隐藏单元，4 个头，2 个编码器块，dropout（暂退法）
# 为 0.2。真正的 BERT-Base 有 12 个块、每块 12 个头，前馈网络有 3072 个单元，但形状的变化规律完全
# 一样。我们调用 `eval()` 关闭 dropout，这样下面的数字每次运行都相同；预训练时模型处于训练模式，
# dropout 是生效的。

# %% [markdown] lang="ja"
# ## 章のデモ用エンコーダ
#
# 語彙サイズ 10000、H = 768、フィードフォワード層のユニット数 1024、ヘッド 4 つ、ブロック 2 つ、ド
# ロップアウト 0.2 です。本物の BERT-Base は 12 ヘッドのブロックが 12 個で、FFN のユニット数は 3072
# ですが、形状が語ることは同じです。`eval()` を呼んでドロップアウトを止め、下の数値が毎回同じになる
# ようにします。事前学習のときは、モデルは訓練モードにあり、ドロップアウトが働きます。

# %%
torch.manual_seed(0)
encoder = BERTEncoder(vocab_size=10000, num_hiddens=768, ffn_num_hiddens=1024, num_heads=4,
                      num_blks=2, dropout=0.2)
encoder.eval()
torch.set_grad_enabled(False)  # this notebook only runs forward passes: no gradients needed

tokens = torch.randint(0, 10000, (2, 8))  # (B, T): two sequences of 8 token ids
segments = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1],
                         [0, 0, 0, 1, 1, 1, 1, 1]])  # (B, T)
encoded_X = encoder(tokens, segments)
print(tokens)
print(tuple(encoded_X.shape))  # (B, T, H)

# %% [markdown] lang="en"
# The output has the same shape as the input representation: one H-vector per token. Printing
# the module shows what is inside: the three embedding tables, then two blocks, each made of
# multi-head attention, an add & norm step, a position-wise feed-forward network (FFN) and a
# second add & norm.

# %% [markdown] lang="zh"
# 输出与输入表示的形状相同：每个词元一个长度为 H 的向量。打印这个模块可以看到它的组成：三张嵌入
# 表，然后是两个编码器块；每个块由多头注意力、一次“相加并规范化”（残差连接加层规范化）、一个
# 基于位置的前馈网络（FFN）和第二次“相加并规范化”组成。

# %% [markdown] lang="ja"
# 出力の形状は入力表現と同じで、トークンごとに長さ H のベクトルが 1 つです。モジュールを表示すると中
# 身がわかります。3 つの埋め込みの表、続いて 2 つのブロックで、各ブロックはマルチヘッドアテンショ
# ン、加算と正規化（add & norm、残差接続と層正規化）、位置ごとのフィードフォワードネットワーク
# （FFN）、2 回目の加算と正規化からできています。

# %%
print(encoder)
num_params = sum(p.numel() for p in encoder.parameters())
print(f"num_params = {num_params:,}")

# %% [markdown] lang="en"
# ## One block by hand
#
# We start from the input representation `X` and take the first block apart.

# %% [markdown] lang="zh"
# ## 亲手计算一个编码器块
#
# 从输入表示 `X` 出发，把第一个编码器块拆开来看。

# %% [markdown] lang="ja"
# ## エンコーダブロックを手で計算する
#
# 入力表現 `X` から始めて、最初のブロックを分解していきます。

# %%
X = encoder.embed(tokens, segments)  # (B, T, H)
block = encoder.blks[0]
attention = block.attention
B, T, H = X.shape
nh = attention.num_heads
hs = H // nh
print(f"B={B} T={T} H={H} nh={nh} hs={hs}")

# %% [markdown] lang="en"
# **Queries, keys, values.** Three linear maps turn every token vector into a query (what am I
# looking for?), a key (what do I offer?) and a value (what do I pass on?), each of size H.
#
# **Split into heads.** Multi-head attention does not need separate weights per head: it cuts
# each H-vector into nh slices of size hs, and slice h belongs to head h. A `view` makes the
# slices a new axis, and a `transpose` moves the head axis next to the batch axis, so that every
# head becomes an independent batch of `(T, hs)` matrices.

# %% [markdown] lang="zh"
# **查询、键和值。** 三个线性变换把每个词元向量分别变成查询（我在找什么？）、键（我能提供什么？）
# 和值（我要传递什么？），长度都是 H。
#
# **拆分成多个头。** 多头注意力并不需要为每个头准备单独的权重：它把每个长度为 H 的向量切成 nh 段，
# 每段长 hs，第 h 段属于头 h。`view` 把这些段变成一个新的维度，`transpose` 再把“头”这一维移到
# 批量维旁边，于是每个头都成为一批独立的 `(T, hs)` 矩阵。

# %% [markdown] lang="ja"
# **クエリ、キー、バリュー。** 3 つの線形写像が、各トークンのベクトルをクエリ（何を探しているか）、
# キー（何を差し出せるか）、バリュー（何を渡すか）に変えます。どれも大きさは H です。
#
# **ヘッドへの分割。** マルチヘッドアテンションは、ヘッドごとに別の重みを用意する必要はありません。
# 長さ H の各ベクトルを大きさ hs の nh 個の区間に切り分け、区間 h をヘッド h に割り当てます。`view`
# で区間を新しい軸にし、`transpose` でヘッドの軸をバッチの軸の隣に移すと、どのヘッドも `(T, hs)` 行
# 列の独立したバッチになります。

# %%
Q, K, V = attention.W_q(X), attention.W_k(X), attention.W_v(X)  # each (B, T, H)


def split_heads(Z):
    return Z.view(B, T, nh, hs).transpose(1, 2)  # (B, T, H) -> (B, T, nh, hs) -> (B, nh, T, hs)


q, k, v = split_heads(Q), split_heads(K), split_heads(V)
print(tuple(Q.shape), "->", tuple(q.shape))
print("q[:, 1] == Q[:, :, hs:2*hs]:", torch.equal(q[:, 1], Q[:, :, hs:2 * hs]))  # head 1 = slice 1

# %% [markdown] lang="en"
# **Scores and softmax.** In every head, query i is compared with every key j by a dot product,
# divided by $\sqrt{hs}$ so that the scores do not grow with the head size:
# $$\text{score}_{ij} = \frac{\mathbf{q}_i \cdot \mathbf{k}_j}{\sqrt{hs}}.$$
# A softmax over j turns each row of scores into weights that are positive and sum to 1.

# %% [markdown] lang="zh"
# **注意力分数与 softmax。** 在每个头中，查询 i 与每个键 j 做点积，再除以 $\sqrt{hs}$，使分数
# 不会随着头的大小而变大：
# $$\text{score}_{ij} = \frac{\mathbf{q}_i \cdot \mathbf{k}_j}{\sqrt{hs}}.$$
# 对 j 做 softmax，把每一行分数变成全为正、和为 1 的权重。

# %% [markdown] lang="ja"
# **スコアと softmax。** 各ヘッドで、クエリ i をすべてのキー j と内積で比べ、スコアがヘッドの大きさ
# とともに大きくならないように $\sqrt{hs}$ で割ります。
# $$\text{score}_{ij} = \frac{\mathbf{q}_i \cdot \mathbf{k}_j}{\sqrt{hs}}.$$
# j について softmax を取ると、スコアの各行は正で和が 1 の重みになります。

# %%
scores = q @ k.transpose(-2, -1) / math.sqrt(hs)  # (B, nh, T, hs) @ (B, nh, hs, T) -> (B, nh, T, T)
weights = scores.softmax(dim=-1)  # (B, nh, T, T); row i: how much query i takes from each key j
print(tuple(scores.shape))
print(weights[0, 0].sum(dim=-1).numpy().round(4))  # every row sums to 1

# %% [markdown] lang="en"
# **Output.** Each query's output is the weighted average of the values. Then the heads are put
# side by side again (the inverse of `split_heads`) and a last linear map `W_o` mixes them.
# `bertlib`'s attention module returns the same output and the same weights:

# %% [markdown] lang="zh"
# **输出。** 每个查询的输出是各个值的加权平均。然后把各个头重新并排连结（`split_heads` 的逆操作），
# 再用最后一个线性变换 `W_o` 把它们混合起来。`bertlib` 的注意力模块给出相同的输出和相同的权重：

# %% [markdown] lang="ja"
# **出力。** 各クエリの出力は、バリューの重み付き平均です。そのあとヘッドを再び横に並べ
# （`split_heads` の逆の操作）、最後の線形写像 `W_o` でそれらを混ぜ合わせます。`bertlib` のアテン
# ションのモジュールも、同じ出力と同じ重みを返します。

# %%
per_head = weights @ v  # (B, nh, T, T) @ (B, nh, T, hs) -> (B, nh, T, hs)
merged = per_head.transpose(1, 2).reshape(B, T, H)  # (B, nh, T, hs) -> (B, T, nh, hs) -> (B, T, H)
attn_out = attention.W_o(merged)  # (B, T, H)

ref_out, ref_weights = attention(X, None, need_weights=True)
print(tuple(per_head.shape), "->", tuple(merged.shape), "->", tuple(attn_out.shape))
print("attn_out ≈ ref_out:       ", torch.allclose(attn_out, ref_out, atol=1e-6))
print("weights  ≈ ref_weights:   ", torch.allclose(weights, ref_weights, atol=1e-6))

# %% [markdown] lang="en"
# **The rest of the block.** A residual connection adds the attention output to the block's
# input, and LayerNorm normalises each token vector (*add & norm*). Then the FFN, the same
# two-layer MLP at every position (H → 1024 → H), followed by a second add & norm. Here is the
# block's code, and our replay of it:

# %% [markdown] lang="zh"
# **编码器块的其余部分。** 残差连接把注意力的输出加回到块的输入上，层规范化再对每个词元向量做
# 规范化（即“相加并规范化”）。接着是前馈网络：在每个位置上使用同一个两层的多层感知机（H → 1024 →
# H），之后是第二次相加并规范化。下面是编码器块的代码，以及我们的复现：

# %% [markdown] lang="ja"
# **ブロックの残りの部分。** 残差接続がアテンションの出力をブロックの入力に足し、層正規化
# （LayerNorm）が各トークンのベクトルを正規化します（加算と正規化）。続いて FFN、つまりどの位置でも
# 同じ 2 層の多層パーセプトロン（H → 1024 → H）を通し、2 回目の加算と正規化を行います。これがブロッ
# クのコードと、それを私たちの手で再現したものです。

# %%
show_source(type(block).forward)

Y = block.addnorm1(X, attn_out)  # LayerNorm(X + attention(X)): (B, T, H)
hidden = block.ffn.act(block.ffn.dense1(Y))  # (B, T, 1024)
Z = block.addnorm2(Y, block.ffn.dense2(hidden))  # LayerNorm(Y + FFN(Y)): (B, T, H)
print(tuple(Y.shape), tuple(hidden.shape), tuple(Z.shape))
print("Z ≈ block(X):", torch.allclose(Z, block(X, None)[0], atol=1e-5))

# %% [markdown] lang="en"
# The whole encoder is just this, block after block: the output of block 0 is the input of
# block 1 (blocks are numbered from 0, like layers and heads). `BERTEncoder.forward` checks its
# inputs, turns `valid_lens` into the padding mask (next section), computes the input
# representation of notebook 02 and runs the blocks one after another; with
# `return_attention=True` it also keeps every block's attention weights:

# %% [markdown] lang="zh"
# 整个编码器就是把这样的块一个接一个地串起来：块 0 的输出就是块 1 的输入（块与层、头一样，从 0
# 开始编号）。`BERTEncoder.forward` 先检查输入，把 `valid_lens` 变成填充掩码（见下一节），计算
# 笔记本 02 中的输入表示，再依次运行各个块；传入 `return_attention=True` 时，它还会保留每个块的
# 注意力权重：

# %% [markdown] lang="ja"
# エンコーダ全体は、このブロックを次々につなげたものにすぎません。ブロック 0 の出力がブロック 1 の入
# 力になります（ブロックは層やヘッドと同じく 0 から番号を振ります）。`BERTEncoder.forward` は入力を
# 検査し、`valid_lens` をパディングのマスクに変え（次の節）、ノートブック 02 の入力表現を計算して、
# ブロックを順に実行します。`return_attention=True` を渡すと、各ブロックのアテンションの重みも保存し
# ます。

# %%
show_source(BERTEncoder.forward)

out = Z
for blk in encoder.blks[1:]:
    out, _ = blk(out, None)
print("out ≈ encoded_X:", torch.allclose(out, encoded_X, atol=1e-5))

# %% [markdown] lang="en"
# ## Padding and `valid_lens`
#
# Sequences in a batch have different lengths, so shorter ones are padded with `<pad>` (id 0)
# up to a common length T. `valid_lens` gives each sequence's real length. Inside attention,
# `bertlib` turns it into a `(B, T)` boolean mask, True at real keys, and sets the scores of the
# padded keys to $-\infty$ before the softmax. Since $e^{-\infty} = 0$, a padded key gets weight
# **exactly 0**, in every head and for every query.
#
# (The chapter's `masked_softmax` writes $-10^6$ instead; in float32 that also rounds to 0 after
# the softmax unless the scores are huge. $-\infty$ needs no such argument.)
#
# **Implement it (exercise 6).** Before you read `bertlib`'s code, write the masked attention
# weights yourself in the cell below: `attention_weights(attention, X, valid_lens)`, for a
# `bertlib` `MultiHeadAttention`, returns the weights `(B, nh, T, T)` of its heads on `X`
# `(B, T, H)`, with weight exactly 0 on the padded keys (`valid_lens` may be None: then nothing
# is masked). "One block by hand" computed these weights without a mask. The check compares
# yours with `bertlib`'s on several batches, padding and one-token sequences included, and tells
# you which case fails; add `hint=1` to it for a hint.

# %% [markdown] lang="zh"
# ## 填充与 `valid_lens`
#
# 一个批量中的序列长短不一，较短的序列用 `<pad>`（词元索引为 0）填充到同一长度 T。`valid_lens` 给出
# 每个序列的真实长度。在注意力内部，`bertlib` 把它变成形状为 `(B, T)` 的布尔掩码（真实的键为
# True），并在 softmax 之前，把填充位置上各个键的分数设为 $-\infty$。由于 $e^{-\infty} = 0$，
# 填充的键得到的权重**恰好为 0**——对每个头、每个查询都是如此。
#
# （本章的 `masked_softmax` 用的是 $-10^6$；在 float32 中，只要分数不是特别大，softmax 之后同样会
# 舍入为 0。用 $-\infty$ 则根本不必考虑这一点。）
#
# **动手实现（练习 6）。** 先别看 `bertlib` 的代码，在下面的单元格里自己写出掩蔽后的注意力权重：
# 对 `bertlib` 的 `MultiHeadAttention`，`attention_weights(attention, X, valid_lens)` 返回各个头在
# `X`（形状为 `(B, T, H)`）上的注意力权重，形状为 `(B, nh, T, T)`，填充位置上的键的权重恰好为 0
# （`valid_lens` 可以是 `None`，这时不做任何掩蔽）。“亲手计算一个编码器块”一节已经算出了不加掩码
# 的权重。检查单元格会在几个批量上（包括填充和只有一个词元的序列）把它与 `bertlib` 的结果比较，并告
# 诉你哪个测试用例没有通过；需要提示的话，在检查中加上 `hint=1`。


# %% [markdown] lang="ja"
# ## パディングと `valid_lens`
#
# バッチ内のシーケンスは長さがまちまちなので、短いシーケンスは `<pad>`（トークンインデックス 0）で共
# 通の長さ T までパディングします。`valid_lens` は各シーケンスの本当の長さです。アテンションの中で、
# `bertlib` はこれを形状 `(B, T)` のブールマスク（実在のキーで True）に変え、softmax の前に、パディ
# ングされたキーのスコアを $-\infty$ にします。$e^{-\infty} = 0$ なので、パディングされたキーの重み
# は、どのヘッドでもどのクエリでも**ちょうど 0** になります。
#
# （章の `masked_softmax` は代わりに $-10^6$ を使います。float32 では、スコアがよほど大きくない限
# り、これも softmax の後で 0 に丸められます。$-\infty$ なら、そのような議論はそもそも要りません。）
#
# **実装してみよう（演習 6）。** `bertlib` のコードを読む前に、下のセルでマスクしたアテンションの重
# みを自分で書いてみてください。`attention_weights(attention, X, valid_lens)` は、`bertlib` の
# `MultiHeadAttention` について、`X`（形状 `(B, T, H)`）に対する各ヘッドの重み `(B, nh, T, T)` を返
# します。パディングされたキーの重みはちょうど 0 です（`valid_lens` は None でもよく、そのときは何も
# マスクしません）。「エンコーダブロックを手で計算する」の節では、この重みをマスクなしで計算しまし
# た。チェックは、パディングや 1 トークンだけのシーケンスを含むいくつかのバッチであなたの関数を
# `bertlib` と比べ、どのケースで失敗したかを教えてくれます。ヒントが欲しければ、チェックに `hint=1`
# を加えてください。

# %%
def attention_weights(attention, X, valid_lens):
    """Exercise 6. attention: a bertlib MultiHeadAttention; X: (B, T, H); valid_lens: (B,) real
    lengths, or None. Returns the weights (B, nh, T, T), exactly 0 on padded keys."""
    raise NotImplementedError  # replace this line with your code


check_implementation("03_attention_weights", attention_weights)

# %% [markdown] lang="en"
# Here is `bertlib`'s code. `key_padding_mask` compares the positions 0 … T−1 with each
# sequence's length: key j of sequence b is real when j < `valid_lens[b]`. In
# `MultiHeadAttention.forward` the mask gets two axes of size 1, `(B, 1, 1, T)`, so that it
# broadcasts over every head and every query: it masks **keys** (the columns of the score
# matrix), never queries (the rows). When no weights are asked for, the same `(B, 1, 1, T)` mask
# goes to PyTorch's fused `scaled_dot_product_attention`, which computes the same output without
# keeping the weights.

# %% [markdown] lang="zh"
# 下面是 `bertlib` 的代码。`key_padding_mask` 把位置 0 … T−1 与每个序列的长度比
# 较：当 j < `valid_lens[b]` 时，序列 b 的键 j 是真实词元。在 `MultiHeadAttention.forward` 中，
# 掩码增加两个大小为 1 的维度，变成 `(B, 1, 1, T)`，这样就能在所有头和所有查询上广播：它掩蔽
# 的是**键**（分数矩阵的列），而不是查询（行）。不需要返回权重时，这个 `(B, 1, 1, T)` 掩码直接交
# 给 PyTorch 的融合算子 `scaled_dot_product_attention`，它算出相同的输出，但不保留权重。

# %% [markdown] lang="ja"
# これが `bertlib` のコードです。`key_padding_mask` は位置 0 … T−1 を各シーケンスの長さと比べます。
# j < `valid_lens[b]` のとき、シーケンス b のキー j は実在のトークンです。
# `MultiHeadAttention.forward` では、マスクに大きさ 1 の軸を 2 つ加えて `(B, 1, 1, T)` とし、すべて
# のヘッドとすべてのクエリにブロードキャストされるようにします。マスクするのは**キー**（スコア行列の
# 列）で、クエリ（行）ではありません。重みを返す必要がないときは、同じ `(B, 1, 1, T)` のマスクを
# PyTorch の融合カーネル `scaled_dot_product_attention` に渡します。これは重みを保存せずに同じ出力を
# 計算します。

# %%
show_source(key_padding_mask)
print()
show_source(MultiHeadAttention.forward, region="masked-softmax")

# %% [markdown] lang="en"
# Below, the second sequence has 5 real tokens and 3 padded slots.

# %% [markdown] lang="zh"
# 下面第二个序列有 5 个真实词元和 3 个填充位置。

# %% [markdown] lang="ja"
# 下のバッチでは、2 つ目のシーケンスに実在のトークンが 5 つ、パディングされた位置が 3 つあります。

# %%
valid_lens = torch.tensor([8, 5])  # (B,)
padded = tokens.clone()
padded[1, 5:] = 0  # <pad>

mask = key_padding_mask(valid_lens, T)  # (B, T): True at real keys
print(mask)

X_pad, attentions = encoder(padded, segments, valid_lens, return_attention=True)
print(len(attentions), "x", tuple(attentions[0].shape))  # one (B, nh, T, T) tensor per block
print(attentions[0][1, 0].numpy().round(2))  # layer 0, 2nd sequence, head 0: columns 5-7 = 0
zero = bool((attentions[0][1, :, :, 5:] == 0).all())  # every head and query of layer 0
print(tr("weights on padded keys: all exactly 0") if zero else tr("weights on padded keys: not 0"))

# %% [markdown] lang="en"
# Because no real token ever attends to a padded key, the outputs at the 5 real positions are
# the same as for the unpadded sequence of length 5, and they stay the same whatever the padding
# holds. The outputs *at* the padded positions are computed too (their queries still attend to
# the real keys), but they mean nothing: the pretraining heads never read them. Without
# `valid_lens` the padding leaks into the real positions.

# %% [markdown] lang="zh"
# 由于真实词元从不关注填充位置上的键，5 个真实位置的输出与不加填充、长度为 5 的序列完全相同，
# 而且无论填充位置放的是什么都不会改变。填充位置**本身**的输出照样会算出来（它们的查询仍然关注真实
# 的键），但这些输出没有意义：预训练的输出层从不读取它们。如果不传入 `valid_lens`，填充就会影响真
# 实位置的输出。

# %% [markdown] lang="ja"
# 実在のトークンがパディングされたキーに注目することはないので、5 つの実在の位置の出力は、パディング
# なしの長さ 5 のシーケンスの出力と同じです。パディングに何が入っていても変わりません。パディングさ
# れた位置**そのもの**の出力も計算はされます（そのクエリは実在のキーに注目します）が、意味はありませ
# ん。事前学習の出力層はそれを決して読まないからです。`valid_lens` を渡さないと、パディングが実在の
# 位置に漏れ込みます。

# %%
alone = encoder(tokens[1:, :5], segments[1:, :5])  # sequence 2 without padding: (1, 5, H)
junk = padded.clone()
junk[1, 5:] = torch.tensor([11, 22, 33])  # other tokens in the padded slots
X_junk = encoder(junk, segments, valid_lens)

X_no_mask = encoder(padded, segments)  # the same padded batch, but no valid_lens
print("X_pad[1, :5]     ≈ alone:       ", torch.allclose(X_pad[1, :5], alone[0], atol=1e-5))
print("X_junk[1, :5]    ≈ X_pad[1, :5]:", torch.allclose(X_junk[1, :5], X_pad[1, :5], atol=1e-5))
print("X_no_mask[1, :5] ≈ alone:       ", torch.allclose(X_no_mask[1, :5], alone[0], atol=1e-5))

# %% [markdown] lang="en"
# ## Attention weights as a picture
#
# Each head gives a `(T, T)` matrix: row i = query i, column j = key j. Here are the four heads
# (0 to 3) of layer 0, the first block, for the padded sequence; the three empty columns on the
# right are the padded keys. This model is untrained, so the patterns mean nothing yet;
# notebook 09 shows the heads of a real BERT.

# %% [markdown] lang="zh"
# ## 把注意力权重画出来
#
# 每个头给出一个 `(T, T)` 矩阵：第 i 行对应查询 i，第 j 列对应键 j。下图以这条填充过的序列为例，
# 画出层 0（即第一个编码器块）中头 0 到头 3 的权重；右边三列空白对应填充位置上的键。这个模型还没有训
# 练，所以图案本身没有意义；笔记本 09 会展示真实 BERT 的注意力头。

# %% [markdown] lang="ja"
# ## アテンションの重みを図にする
#
# 各ヘッドは `(T, T)` の行列を出します。i 行目がクエリ i、j 列目がキー j です。パディングしたシーケ
# ンスについて、層 0（最初のブロック）の 4 つのヘッド（0 から 3）を描きました。右側の空白の 3 列がパ
# ディングされたキーです。このモデルはまだ学習していないので、模様にはまだ何の意味もありません。本物
# の BERT のヘッドはノートブック 09 で見ます。

# %%
fig = new_figure(9, 3)  # bertlib's figures draw Chinese labels with the CJK font
fig.set_layout_engine("constrained")
axes = fig.subplots(1, nh)
for h, ax in enumerate(axes):  # heads numbered from 0, as in the code and the widgets
    image = ax.imshow(attentions[0][1, h].numpy(), cmap="Reds", vmin=0, vmax=1)
    ax.set(title=tr("head {head}", head=h), xlabel=tr("key j"), xticks=range(T),
           yticks=range(T))
axes[0].set_ylabel(tr("query i"))
fig.colorbar(image, ax=axes, shrink=0.8)
display(fig)

# %% [markdown] lang="en"
# ## Exploring attention with a widget
#
# The widget below runs a BERT on a pair of sentences you type and draws one head's attention
# weights: row i is query i, column j is key j, and the orange lines separate sentence A from
# sentence B. The bars beside the heatmap repeat the row of the chosen *query token*, turned to
# read top to bottom, one bar per key: where that token takes its information from. Layers and
# heads are numbered from 0, as in the code.
#
# We start with random weights: a `BERTModel` with the sizes of the small BERT pretrained for
# these notebooks (2 blocks of 2 heads, H = 128) and its WordPiece tokenizer, but before any
# training. Try:
#
# * another query token, another layer or head: the weights are spread out, in layer 1 almost
#   evenly (no weight comes near 1: look at the colour bar), with no pattern that means anything;
# * *all heads*: both heads of a layer and their mean, side by side;
# * another seed in `torch.manual_seed(0)`, then run the cell again: a different pattern, just as
#   meaningless.

# %% [markdown] lang="zh"
# ## 用小部件探索注意力
#
# 下面的小部件让一个 BERT 读入你输入的一对句子，并画出一个头的注意力权重：第 i 行是查询 i，第 j 列是
# 键 j，橙色的线把句子 A 和句子 B 分开。热图右边的条形图单独画出“查询词元”中所选词元的那一行，
# 每个键一根横条，自上而下排列，即这个词元从哪些位置获取信息。层和头都从 0 开始编号，与代码一致。
#
# 先看随机权重：一个 `BERTModel`，尺寸与项目自带的小 BERT 相同（2 个块，每块 2 个头，H = 128），
# 也使用自带模型的 WordPiece 分词器，但还没有经过任何训练。可以试试：
#
# * 换一个查询词元、另一层或另一个头：权重分散在许多词元上，层 1 几乎是均匀的（看颜色条：没有
#   哪个权重接近 1），看不出任何有意义的模式；
# * 选择“全部头”：同一层的两个头和它们的平均并排显示；
# * 把 `torch.manual_seed(0)` 换一个随机种子，再运行这个单元格：图案变了，但同样没有意义。

# %% [markdown] lang="ja"
# ## ウィジェットでアテンションを調べる
#
# 下のウィジェットは、入力した文ペアを BERT に読ませ、1 つのヘッドのアテンションの重みを描きます。i
# 行目がクエリ i、j 列目がキー j で、オレンジの線が文 A と文 B を区切っています。ヒートマップの横の
# 棒グラフは、選んだ「クエリトークン」の行を、キーごとに 1 本の棒として上から下へ並べ直したもので、
# そのトークンがどこから情報を得ているかを表します。層とヘッドには、コードと同じく 0 から番号を振り
# ます。
#
# まずはランダムな重みから始めます。プロジェクト付属の小さな BERT と同じ大きさ（ヘッド 2 つのブロッ
# クが 2 つ、H = 128）の `BERTModel` で、その WordPiece トークナイザも使いますが、まだ何も学習してい
# ません。日本語版でも、ウィジェットはモデルが知っている英語の文ペアから始まります。試してみましょ
# う。
#
# * 別のクエリトークン、別の層やヘッドを選んでみてください。重みは散らばっていて、層 1 ではほぼ均等
#   です（カラーバーを見ると、1 に近い重みはありません）。意味のある模様は見当たりません。
# * 「全ヘッド」を選ぶと、1 つの層の 2 つのヘッドとその平均が並んで表示されます。
# * `torch.manual_seed(0)` のシードを変えてセルを実行し直すと、模様は変わりますが、やはり意味はあり
#   ません。

# %%
model, tokenizer = load_small_bert()  # the pretrained small BERT and its tokenizer
torch.manual_seed(0)
random_model = BERTModel.from_config(model.config)  # the same sizes, random weights
AttentionWidget(random_model, tokenizer)

# %% [markdown] lang="en"
# Now the same architecture with the pretrained weights (notebook 06 trains them on a small
# corpus of English and Chinese paragraphs). The rows are no longer flat. Try:
#
# * layer 0, head 1: nearly every token gives its largest weight to the token just *before* it.
#   Layer 0, head 0 looks elsewhere: much of its weight goes to the *other* sentence of the pair.
#   Other sentence pairs from the corpus show the same two patterns (notebooks 05 and 06 measure
#   them on the held-out pairs). Nobody wrote these rules: pretraining found that neighbours help
#   to predict masked tokens;
# * *hide special tokens*: the heatmap without the `<cls>` and `<sep>` rows and columns;
# * query token `<cls>`: which tokens does it read in each layer?
# * your own sentences, in English or Chinese. The tokenizer learned its vocabulary from the
#   corpus alone: a new English word is cut into pieces it knows (*astronaut* becomes
#   `as ##t ##ro ##na ##ut`), but a word with a letter it has never seen (*zebra*: the
#   vocabulary has no `z`) and a Chinese character it has never seen (雪) become `<unk>`.

# %% [markdown] lang="zh"
# 现在换成自带模型：结构相同，但用的是预训练权重（笔记本 06 用一个中英文段落组成的小语料库训练出这些
# 权重）。每一行的权重不再均匀分布。可以试试：
#
# * 层 0、头 1：几乎每个词元都把最大的权重给了紧挨在它**前面**的词元。层 0、头 0 看的是别处：它的
#   权重有很多落在句子对的**另一个**句子上。语料库中的其他句子对也呈现这两种模式（笔记本 05 和 06 在
#   留出的句子对上测量了它们）。这些规则不是谁写进去的，而是预训练自己发现的：相邻的词元有助于预测被
#   掩蔽的词元；
# * 勾选“隐藏特殊词元”：热图去掉 `<cls>` 和 `<sep>` 所在的行和列；
# * “查询词元”选 `<cls>`：它在每一层读取了哪些词元？
# * 输入你自己的句子，中文或英文都可以。分词器的词表只从这个语料库中学来：它会把没见过的英文单词切成
#   几个认识的子词（*astronaut* 变成 `as ##t ##ro ##na ##ut`），但如果单词里有它没见过的字母
#   （*zebra*：词表里没有 `z`），或者遇到没见过的汉字（比如“雪”），就只能得到 `<unk>`。

# %% [markdown] lang="ja"
# 次は、同じアーキテクチャで事前学習済みの重みを使います（ノートブック 06 で、英語と中国語の段落から
# なる小さなコーパスを使って学習します）。各行はもう平らではありません。試してみましょう。
#
# * 層 0・ヘッド 1：ほとんどすべてのトークンが、すぐ**前**のトークンに最大の重みを与えます。層 0・ヘ
#   ッド 0 は別の場所を見ていて、重みの多くがペアの**もう一方**の文に向かいます。コーパスのほかの文
#   ペアでも、この 2 つの模様が現れます（ノートブック 05 と 06 がホールドアウトのペアで測ります）。
#   この規則は誰かが書いたものではありません。隣のトークンがマスクされたトークンの予測に役立つこと
#   を、事前学習が見つけたのです。
# * 「特殊トークンを隠す」：`<cls>` と `<sep>` の行と列を除いたヒートマップになります。
# * 「クエリトークン」に `<cls>` を選ぶと、各層でどのトークンを読んでいるでしょうか。
# * 自分の文を英語か中国語で入力してみましょう。トークナイザの語彙はコーパスだけから学習したもので
#   す。知らない英単語は知っているサブワードに分割されます（*astronaut* は `as ##t ##ro ##na ##ut`
#   になります）が、見たことのない文字を含む単語（*zebra*：語彙に `z` がありません）や、見たことのな
#   い漢字（雪）は `<unk>` になります。日本語の文も入力はできますが、かなや日本語の字形の漢字はほと
#   んど `<unk>` になってしまいます。

# %%
AttentionWidget(model, tokenizer)

# %% [markdown] lang="en"
# ## All layers at once, and one query step by step
#
# Two more views of the widget. *All layers and heads* draws every head of every layer as a
# thumbnail, each on its own colour scale, so the patterns of the pretrained model can be
# compared at a glance; the layer and head chosen above are outlined in the grid and drawn large
# beside it, with their tokens.
#
# The last view, *one query, step by step*, takes the formula of this notebook
# apart on the sentence pair in the boxes, one row per key $j$. For the chosen layer, head and
# query token it shows, with every number written out:
# 1. the scores $\mathbf{q}\cdot\mathbf{k}_j/\tau$ of the query with every key. The *temperature τ*
#    slider sets the divisor τ: it starts at the model's own $\tau = \sqrt{d} = 8$ ($d$ is the head
#    size, 64 here), marked `8 = √d` on the slider; at its left end, $\tau = 1$, the dot products
#    are not scaled at all. The line under the scores names the τ drawn;
# 2. the mask: 0 for a real key, $-\infty$ for a padded one. The *padding* slider appends that
#    many `<pad>` positions (3 to begin with), as a mini-batch would to a shorter pair;
# 3. the softmax of the masked scores: the row of the heatmap above, with exactly 0 at every
#    padded key;
# 4. the values $\mathbf{v}_j$ and the head's output for this query,
#    $\sum_j \text{weight}_j\,\mathbf{v}_j$: one vector of $d$ numbers, which `W_o` then mixes
#    with the other heads' outputs.
#
# Pick a query token and a head and follow a large score to a large weight. Then look at how
# much larger the largest score has to be than the others before one key takes almost all of
# the weight: that is the softmax at work. Last, move τ: the scores keep their order, and their
# bars their shape, but the weights in step 3 do not.

# %% [markdown] lang="zh"
# ## 一次看全部层，再逐步看一个查询
#
# 小部件还有两种视图。“全部层和头”把每一层的每个头画成一幅小图，各用自己的颜色刻度，便于一眼比较预训
# 练模型的各种模式；上方选中的层和头在网格中加框标出，并连同词元一起在网格右边放大显示。
#
# 最后一种视图是“单个查询，逐步计算”：它以文本框里的句子对为例，把本笔记本的公式逐项拆开，每个键 $j$
# 占一行。对于所选的层、头和查询词元，每一个数都会写出来：
# 1. 查询与每个键的打分 $\mathbf{q}\cdot\mathbf{k}_j/\tau$。滑块“温度 τ”决定除数 τ：开始时是模型本身
#    的 $\tau = \sqrt{d} = 8$（$d$ 是每个头的大小，这里是 64），滑块上标为 `8 = √d`；拖到最左端
#    $\tau = 1$，点积就完全不缩放。打分下方的一行写出图中所用的 τ；
# 2. 掩码：真实的键为 0，填充的键为 $-\infty$。滑块“填充”在序列后面补上相应个数的 `<pad>`（开始时是
#    3 个），就像小批量中较短的句子对要补齐那样；
# 3. 对掩蔽后的打分做 softmax：结果就是上面热图中的一行，每个填充的键的权重都恰好为 0；
# 4. 值 $\mathbf{v}_j$，以及这个头对该查询的输出 $\sum_j \text{权重}_j\,\mathbf{v}_j$：一个含
#    $d$ 个数的向量，随后 `W_o` 把它与其他头的输出混合起来。
#
# 选一个查询词元和一个头，看看大的打分怎样变成大的权重。再看看最大的打分要比其余的大出多少，
# 才能让一个键几乎拿走全部权重：这就是 softmax 在起作用。最后拖动 τ：打分的大小顺序不变，
# 条形的形状也不变，第 3 步的权重却变了。

# %% [markdown] lang="ja"
# ## 全層を一度に、そして 1 つのクエリを順を追って
#
# ウィジェットにはさらに 2 つのビューがあります。「全層・全ヘッド」は、すべての層のすべてのヘッド
# を、それぞれ独自のカラースケールでサムネイルとして描くので、事前学習済みモデルの模様を一目で比べら
# れます。上で選んだ層とヘッドは格子の中で枠で囲まれ、トークンとともにその横に大きく描かれます。
#
# 最後のビュー「1 つのクエリを順を追って」は、入力欄の文ペアを使って、このノートブックの式を 1 項ず
# つ分解して見せます。キー $j$ ごとに 1 行です。選んだ層、ヘッド、クエリトークンについて、すべての数
# 値を書き出して次のものを示します。
# 1. クエリとすべてのキーとのスコア $\mathbf{q}\cdot\mathbf{k}_j/\tau$。スライダー「温度 τ」が割る
#    数 τ を決めます。最初はモデル本来の $\tau = \sqrt{d} = 8$（$d$ はヘッドの大きさで、ここでは
#    64）で、スライダーには `8 = √d` と印が付いています。左端の $\tau = 1$ では、内積はまったくス
#    ケーリングされません。スコアの下の行に、描いている τ が書かれます。
# 2. マスク：実在のキーには 0、パディングされたキーには $-\infty$。スライダー「パディング」は、ミニ
#    バッチが短い文ペアを埋めるときのように、その数だけ `<pad>` の位置を後ろに足します（最初は 3
#    つ）。
# 3. マスクしたスコアの softmax：上のヒートマップの 1 行そのもので、パディングされたキーの重みはすべ
#    てちょうど 0 です。
# 4. バリュー $\mathbf{v}_j$ と、このクエリに対するヘッドの出力 $\sum_j
#    \text{重み}_j\,\mathbf{v}_j$：$d$ 個の数からなるベクトル 1 つで、このあと `W_o`
#    がほかのヘッドの出力と混ぜ合わせます。
#
# クエリトークンとヘッドを選び、大きなスコアが大きな重みになる様子を追ってください。次に、1 つのキー
# が重みをほぼ独り占めするには、最大のスコアがほかよりどれだけ大きくなければならないかを見てくださ
# い。これが softmax の働きです。最後に τ を動かしてみましょう。スコアの順序も棒の形も変わりません
# が、手順 3 の重みは変わります。

# %%
step_by_step = AttentionWidget(model, tokenizer)
step_by_step.view.value = "querykey"
display(step_by_step)

# %% [markdown] lang="en"
# ## Summary
#
# * Each block: multi-head self-attention → add & norm → position-wise FFN → add & norm. The
#   shape stays `(B, T, H)` throughout.
# * Heads are slices of H: `(B, T, H)` → `(B, nh, T, hs)`; scores and weights are
#   `(B, nh, T, T)`.
# * `valid_lens` masks padded keys with $-\infty$: their weights are exactly 0, and padding cannot
#   change the outputs at real positions.
#
# ## Exercises
#
# 1. ★ **Count.** How many learnable numbers does *one* encoder block of the demo encoder hold
#    (H = 768, FFN 1024, 4 heads)? Check below.
# 2. ★ **Predict.** Change `num_heads` from 4 to 8 with H = 768. Which shapes in this notebook
#    change, and does one block hold more learnable numbers? How many numbers does one block's
#    attention-weight tensor hold for a batch of 2 sequences of 8 tokens? Check below.
# 3. ★★ **The scale.** In the step-by-step view above, drag the *temperature τ* from the model's
#    own $\sqrt{d}$ down to 1, which removes the division by $\sqrt{hs}$, and watch step 3. The
#    view cannot show what this does to training. For one row of weights
#    $w = \mathrm{softmax}(s)$, $\partial w_j/\partial s_i = w_j(\delta_{ij} - w_i)$
#    ($\delta_{ij}$: 1 if $i = j$, else 0). What do all these derivatives become when one weight
#    is close to 1, and what does that mean for the gradients that reach $W_q$ and $W_k$ in
#    pretraining?
# 4. ★★ **Word order.** Swap the tokens at positions 1 and 2 of the first sequence of `tokens`
#    and run a copy of `encoder` whose position table is zero (`import copy`,
#    `no_pos = copy.deepcopy(encoder)`, `no_pos.pos_embedding.zero_()`) on both batches. At how
#    many of the first sequence's 8 positions does the output change? Predict, then check below.
# 5. ★★ **Predict.** In the `junk` batch above, the three padded slots of the second sequence
#    hold other tokens than in `padded`. With `valid_lens`, at how many of the batch's 2 × 8
#    positions does the encoder's output change (`X_junk` against `X_pad`, position by
#    position)? Check below.
# 6. ★★ **Implement it: the masked attention weights.** `attention_weights(attention, X,
#    valid_lens)`, in "Padding and `valid_lens`", in the cell before the listings of
#    `key_padding_mask` and `MultiHeadAttention.forward` (they give the answer away, so write
#    yours first).

# %% [markdown] lang="zh"
# ## 小结
#
# * 每个编码器块：多头自注意力 → 相加并规范化 → 基于位置的前馈网络 → 相加并规范化。形状始终是
#   `(B, T, H)`。
# * 每个头是 H 的一段：`(B, T, H)` → `(B, nh, T, hs)`；注意力分数和权重的形状是 `(B, nh, T, T)`。
# * `valid_lens` 用 $-\infty$ 掩蔽填充位置上的键：它们的权重恰好为 0，填充无法改变真实位置的输出。
#
# ## 练习
#
# 1. ★ **数一数。** 演示用编码器的**一个**编码器块（H = 768，前馈网络 1024，4 个头）有多少个可学习的
#    参数？在下面检查你的答案。
# 2. ★ **先预测。** 保持 H = 768，把 `num_heads` 从 4 改成 8。本笔记本中哪些形状会变化？一个编码器
#    块的可学习参数会变多吗？对于由 2 个长度为 8 的序列组成的批量，一个编码器块的注意力权重张量有多
#    少个数？在下面检查你的答案。
# 3. ★★ **缩放。** 在上面的“单个查询，逐步计算”视图中，把“温度 τ”从模型本身的 $\sqrt{d}$ 拖到
#    1，也就是去掉除以 $\sqrt{hs}$ 这一步，再观察第 3 步。这对训练有什么影响，视图无法显示。对于
#    一行权重 $w = \mathrm{softmax}(s)$，有 $\partial w_j/\partial s_i = w_j(\delta_{ij} - w_i)$
#    （$i = j$ 时 $\delta_{ij}$ 为 1，否则为 0）。当某一个权重接近 1 时，这些导数都会变成什么？这对
#    预训练时传回 $W_q$ 和 $W_k$ 的梯度意味着什么？
# 4. ★★ **词序。** 交换 `tokens` 中第一个序列位置 1 和位置 2 上的词元，再复制一份 `encoder`，把它
#    的位置嵌入表置零（`import copy`，`no_pos = copy.deepcopy(encoder)`，
#    `no_pos.pos_embedding.zero_()`），用它分别运行交换前后的两个批量。第一个序列的 8 个位置中，有几
#    个位置的输出变了？先预测，再在下面检查。
# 5. ★★ **先预测。** 在上面的 `junk` 批量中，第二个序列的三个填充位置放的词元与 `padded` 中的不
#    同。传入 `valid_lens` 时，这个批量的 2 × 8 个位置中，有几个位置的编码器输出变了（逐个位置比较
#    `X_junk` 和 `X_pad`）？在下面检查你的答案。
# 6. ★★ **动手实现：掩蔽后的注意力权重。** 即“填充与 `valid_lens`”一节中、`key_padding_mask` 和
#    `MultiHeadAttention.forward` 源代码之前那个单元格里的 `attention_weights(attention, X,
#    valid_lens)`（源代码会泄露答案，所以要先写出你自己的版本）。

# %% [markdown] lang="ja"
# ## まとめ
#
# * 各ブロック：マルチヘッド自己注意 → 加算と正規化 → 位置ごとの FFN → 加算と正規化。形状は終始
#   `(B, T, H)` のままです。
# * ヘッドは H の区間です：`(B, T, H)` → `(B, nh, T, hs)`。スコアと重みの形状は `(B, nh, T, T)` で
#   す。
# * `valid_lens` はパディングされたキーを $-\infty$ でマスクします。その重みはちょうど 0 で、パディ
#   ングは実在の位置の出力を変えられません。
#
# ## 演習
#
# 1. ★ **数えてみよう。** デモ用エンコーダの **1 つの**ブロック（H = 768、FFN 1024、ヘッド 4 つ）に
#    は、学習可能なパラメータがいくつあるでしょうか。下で確かめてください。
# 2. ★ **予想してみよう。** H = 768 のまま `num_heads` を 4 から 8 に変えます。このノートブックのど
#    の形状が変わるでしょうか。1 つのブロックの学習可能なパラメータは増えるでしょうか。8 トークンの
#    シーケンス 2 つのバッチで、1 つのブロックのアテンションの重みのテンソルにはいくつの数が入ってい
#    るでしょうか。下で確かめてください。
# 3. ★★ **スケール。** 上の「1 つのクエリを順を追って」のビューで、「温度 τ」をモデル本来の
#    $\sqrt{d}$ から 1 まで動かし（$\sqrt{hs}$ で割るのをやめることになります）、手順 3 を見てくださ
#    い。これが学習に何をもたらすかは、ビューには現れません。重みの 1 行 $w = \mathrm{softmax}(s)$
#    について、$\partial w_j/\partial s_i = w_j(\delta_{ij} - w_i)$ です（$\delta_{ij}$ は $i = j$
#    なら 1、そうでなければ 0）。1 つの重みが 1 に近いとき、これらの導関数はすべてどうなるでしょう
#    か。それは事前学習で $W_q$ と $W_k$ に届く勾配にとって何を意味するでしょうか。
# 4. ★★ **語順。** `tokens` の最初のシーケンスで位置 1 と 2 のトークンを入れ替え、位置の表をゼロにし
#    た `encoder` のコピー（`import copy`、`no_pos = copy.deepcopy(encoder)`、
#    `no_pos.pos_embedding.zero_()`）を両方のバッチで実行します。最初のシーケンスの 8 つの位置のう
#    ち、いくつの位置で出力が変わるでしょうか。予想してから、下で確かめてください。
# 5. ★★ **予想してみよう。** 上の `junk` バッチでは、2 つ目のシーケンスのパディングされた 3 つの位置
#    に `padded` とは別のトークンが入っています。`valid_lens` を渡したとき、バッチの 2 × 8 個の位置
#    のうち、いくつの位置でエンコーダの出力が変わるでしょうか（`X_junk` と `X_pad` を位置ごとに比べ
#    ます）。下で確かめてください。
# 6. ★★ **実装してみよう：マスクしたアテンションの重み。** 「パディングと `valid_lens`」の節で、
#    `key_padding_mask` と `MultiHeadAttention.forward` のソースコードの前のセルにある
#    `attention_weights(attention, X, valid_lens)` です（ソースコードを見ると答えがわかってしまうの
#    で、先に自分のものを書いてください）。

# %%
answer = None  # your answer to exercise 1: an integer
check_exercise("03_block_params", answer)

# %%
answer = None  # your answer to exercise 2: numbers in one block's attention weights
check_exercise("03_more_heads", answer)

# %%
answer = None  # your answer to exercise 4: how many of the 8 outputs change
check_exercise("03_word_order", answer)

# %%
answer = None  # your answer to exercise 5: how many of the 2 x 8 outputs change
check_exercise("03_padding_changes", answer)

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 2: Eight heads</summary>
#
# With 8 heads and H = 768, each head is half as wide: hs = H / nh halves. The split tensors become
# `(B, 8, T, hs)` and the scores and weights `(B, 8, T, T)`: twice as many heads, each smaller. One
# block holds exactly as many learnable numbers as before: W_q, W_k, W_v and W_o stay H × H, and the
# FFN and the LayerNorms do not depend on the heads at all. Heads are slices of H; what grows is the
# attention-weight tensor, whose size the check asks for.
#
# </details>
#
# <details><summary>Exercise 3: The scale</summary>
#
# * When one weight $w_k$ is close to 1, all the others are close to 0. Then $\partial w_k/\partial
#   s_k = w_k(1 - w_k) \approx 0$, $\partial w_k/\partial s_i = -w_k w_i \approx 0$ for $i \ne k$,
#   and every $\partial w_j/\partial s_i$ with $j \ne k$ has the factor $w_j \approx 0$. All the
#   derivatives of the row are close to 0: the softmax is saturated.
# * The gradient that reaches $W_q$ and $W_k$ passes through these derivatives (the scores are $q_i
#   \cdot k_j / \tau$, with $q = X W_q$ and $k = X W_k$), so it nearly vanishes: a head whose rows
#   have saturated stops learning where to look, and stays on the key it happened to favour.
# * Why $\sqrt{hs}$ prevents it: $q \cdot k$ is a sum of hs products. With entries of variance about
#   1, its standard deviation is about $\sqrt{hs}$, here $\sqrt{64} = 8$. Without the division the
#   scores spread 8 times as wide, which is what step 3 shows at τ = 1: one key takes almost all the
#   weight. Dividing by $\sqrt{hs}$ keeps the scores' spread near 1 at the start of training,
#   whatever the head size, so the softmax starts soft and the gradients flow.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 请先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 2：8 个头</summary>
#
# H = 768 时用 8 个头，每个头只有原来一半宽：hs = H / nh 减半。拆分后的张量变成 `(B, 8, T, hs)`，注
# 意力分数和权重变成 `(B, 8, T, T)`：头的个数翻倍，每个头变小。一个编码器块的可学习参数与原来一样
# 多：W_q、W_k、W_v 和 W_o 仍然是 H × H，前馈网络和层规范化与头数完全无关。每个头只是 H 的一段；变大
# 的是注意力权重张量，下面的检查问的正是它的大小。
#
# </details>
#
# <details><summary>练习 3：缩放</summary>
#
# * 当某一个权重 $w_k$ 接近 1 时，其他权重都接近 0。这时
#   $\partial w_k/\partial s_k = w_k(1 - w_k) \approx 0$，$i \ne k$ 时
#   $\partial w_k/\partial s_i = -w_k w_i \approx 0$，而 $j \ne k$ 时的每个
#   $\partial w_j/\partial s_i$ 都带有因子 $w_j \approx 0$。这一行的所有导数都接近 0：softmax 饱和
#   了。
# * 传回 $W_q$ 和 $W_k$ 的梯度要经过这些导数（注意力分数是 $q_i \cdot k_j / \tau$，其中
#   $q = X W_q$，$k = X W_k$），所以它几乎消失：各行都饱和了的头不再学习该看哪里，只能停留在它碰巧偏
#   爱的那个键上。
# * 为什么除以 $\sqrt{hs}$ 能避免这一点：$q \cdot k$ 是 hs 个乘积之和。如果各个分量的方差约为 1，它
#   的标准差约为 $\sqrt{hs}$，这里是 $\sqrt{64} = 8$。不做除法，分数的分布就宽 8 倍，这正是 τ = 1 时
#   第 3 步所显示的：一个键几乎拿走了全部权重。除以 $\sqrt{hs}$ 后，无论头有多大，训练开始时分数的分
#   布宽度都接近 1，softmax 一开始是“软”的，梯度也就能传回去。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# どの演習も、まず自分で解いてから解答を開いてください。
#
# <details><summary>演習 2：ヘッドを 8 つに</summary>
#
# H = 768 でヘッドを 8 つにすると、各ヘッドの幅は半分になります（hs = H / nh が半分）。分割したテン
# ソルは `(B, 8, T, hs)`、スコアと重みは `(B, 8, T, T)` になり、ヘッドの数は 2 倍、1 つ 1 つは小さく
# なります。1 つのブロックの学習可能なパラメータの数はまったく変わりません。W_q、W_k、W_v、W_o は H
# × H のままで、FFN と層正規化はヘッドの数に依存しないからです。ヘッドは H の区間にすぎません。大き
# くなるのはアテンションの重みのテンソルで、その大きさを下のチェックで尋ねています。
#
# </details>
#
# <details><summary>演習 3：スケール</summary>
#
# * 1 つの重み $w_k$ が 1 に近いとき、ほかの重みはすべて 0 に近くなります。このとき
#   $\partial w_k/\partial s_k = w_k(1 - w_k) \approx 0$、$i \ne k$ なら
#   $\partial w_k/\partial s_i = -w_k w_i \approx 0$ で、$j \ne k$ の $\partial w_j/\partial s_i$ に
#   はすべて因子 $w_j \approx 0$ が掛かります。行の導関数がすべて 0 に近くなる、つまり softmax が飽
#   和します。
# * $W_q$ と $W_k$ に届く勾配はこれらの導関数を通る（スコアは $q_i \cdot k_j / \tau$ で、
#   $q = X W_q$、$k = X W_k$）ので、ほとんど消えてしまいます。行が飽和したヘッドはどこを見るべきかを
#   学ばなくなり、たまたま好んだキーに留まり続けます。
# * $\sqrt{hs}$ で割るとこれを防げる理由：$q \cdot k$ は hs 個の積の和です。成分の分散がおよそ 1 な
#   ら、その標準偏差はおよそ $\sqrt{hs}$、ここでは $\sqrt{64} = 8$ です。割らなければスコアは 8 倍に
#   広がり、τ = 1 のときの手順 3 のように、1 つのキーが重みをほぼ独り占めします。$\sqrt{hs}$ で割れ
#   ば、ヘッドの大きさによらず学習の始めのスコアの広がりが 1 程度に保たれるので、softmax は穏やかに
#   始まり、勾配が流れます。
#
# </details>

# %% [raw] strings="zh"
# "head {head}"
# "头 {head}"
#
# "key j"
# "键 j"
#
# "query i"
# "查询 i"
#
# "weights on padded keys: all exactly 0"
# "填充的键得到的权重：全部恰好为 0"
#
# "weights on padded keys: not 0"
# "填充的键得到的权重：不全为 0"

# %% [raw] strings="ja"
# "head {head}"
# "ヘッド {head}"
#
# "key j"
# "キー j"
#
# "query i"
# "クエリ i"
#
# "weights on padded keys: all exactly 0"
# "パディングされたキーの重み：すべてちょうど 0"
#
# "weights on padded keys: not 0"
# "パディングされたキーの重み：0 ではない"
