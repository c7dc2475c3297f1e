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
# *[中文版](../zh/03_encoder.ipynb) · [Index](00_index.ipynb)*
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
# [English](../en/03_encoder.ipynb) · [目录](00_index.ipynb)
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

# %%
import math

import torch
from IPython.display import display

from bertlib import BERTEncoder, BERTModel, MultiHeadAttention, load_small_bert
from bertlib.exercises import check_exercise
from bertlib.i18n import tr
from bertlib.implement import check_implementation
from bertlib.model import key_padding_mask
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
# **输出。** 每个查询的输出是各个值的加权平均。然后把各个头重新并排拼接（`split_heads` 的逆操作），
# 再用最后一个线性变换 `W_o` 把它们混合起来。`bertlib` 的注意力模块给出相同的输出和相同的权重：

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

# %%
show_source(key_padding_mask)
print()
show_source(MultiHeadAttention.forward, region="masked-softmax")

# %% [markdown] lang="en"
# Below, the second sequence has 5 real tokens and 3 padded slots.

# %% [markdown] lang="zh"
# 下面第二个序列有 5 个真实词元和 3 个填充位置。

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
# notebook 08 shows the heads of a real BERT.

# %% [markdown] lang="zh"
# ## 把注意力权重画出来
#
# 每个头给出一个 `(T, T)` 矩阵：第 i 行对应查询 i，第 j 列对应键 j。下图以这条填充过的序列为例，
# 画出层 0（即第一个编码器块）中头 0 到头 3 的权重；右边三列空白对应填充位置上的键。这个模型还没有训
# 练，所以图案本身没有意义；笔记本 08 会展示真实 BERT 的注意力头。

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

# %%
model, tokenizer = load_small_bert()  # the pretrained small BERT and its tokenizer
torch.manual_seed(0)
random_model = BERTModel.from_config(model.config)  # the same sizes, random weights
AttentionWidget(random_model, tokenizer)

# %% [markdown] lang="en"
# Now the same architecture with the pretrained weights (notebook 06 trains them on short
# everyday stories in English and Chinese). The rows are no longer flat. Try:
#
# * layer 1, head 0: the great majority of tokens give their largest weight to the token just
#   *after* them. Layer 0, head 0 leans the other way: many tokens, though fewer than half, give
#   their largest weight to the token just *before* them. Most other sentence pairs from the
#   stories show the same two patterns. Nobody wrote these rules: pretraining found that
#   neighbours help to predict masked tokens;
# * *hide special tokens*: the heatmap without the `<cls>` and `<sep>` rows and columns;
# * query token `<cls>`: which tokens does it read in each layer?
# * your own sentences, in English or Chinese. The tokenizer learned its vocabulary from the
#   stories alone: a new English word is cut into pieces it knows (*astronaut* becomes
#   `as ##t ##r ##on ##a ##ut`), but a word with a letter it has never seen (*zebra*: the
#   vocabulary has no `z`) and a Chinese character it has never seen (雪) become `<unk>`.

# %% [markdown] lang="zh"
# 现在换成自带模型：结构相同，但用的是预训练权重（笔记本 06 用中英文的日常小故事训练出这些权重）。
# 每一行的权重不再均匀分布。可以试试：
#
# * 层 1、头 0：绝大多数词元把最大的权重给了紧挨在它**后面**的词元。层 0、头 0 的倾向正好相反：
#   不少词元（虽然不到一半）把最大的权重给了紧挨在它**前面**的词元。故事中的其他句子对大多也呈现
#   这两种模式。这些规则不是谁写进去的，而是预训练自己发现的：相邻的词元有助于预测被掩蔽的词元；
# * 勾选“隐藏特殊词元”：热图去掉 `<cls>` 和 `<sep>` 所在的行和列；
# * “查询词元”选 `<cls>`：它在每一层读取了哪些词元？
# * 输入你自己的句子，中文或英文都可以。分词器的词表只从这些故事中学来：它会把没见过的英文单词切成几
#   个认识的子词（*astronaut* 变成 `as ##t ##r ##on ##a ##ut`），但如果单词里有它没见过的字母
#   （*zebra*：词表里没有 `z`），或者遇到没见过的汉字（比如“雪”），就只能得到 `<unk>`。

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
