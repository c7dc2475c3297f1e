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
# # 04 · Masked language modelling
#
# *[中文版](../zh/04_masked_lm.ipynb) · [日本語](../ja/04_masked_lm.ipynb) ·
# [Index](00_index.ipynb)*
#
# A left-to-right language model predicts each token from the tokens on its left. BERT wants
# every token's vector to use *both* sides, but a model that sees both sides could simply copy
# the token it is asked to predict. The fix: hide some tokens and predict them from their
# context. This is **masked language modelling** (MLM), the first of BERT's two pretraining
# tasks. Its labels come for free from raw text.
#
# You will:
# 1. corrupt a sentence with `mask_tokens` and check the 15% and 80/10/10 rules over many seeded
#    draws;
# 2. see how `MaskLM` gathers the prediction positions out of a `(B, T, H)` tensor, and write
#    that gather yourself (an exercise checked against bertlib);
# 3. compute the weighted MLM loss with `bert_loss`, and see numerically why the chapter's
#    training code, which uses a mean-reduced loss, counts the padded slots too;
# 4. going further: measure a shortcut that a bilingual vocabulary opens in the 10% random
#    replacements, and mask whole words instead of single pieces.

# %% [markdown] lang="zh"
# # 04 · 掩蔽语言模型
#
# [English](../en/04_masked_lm.ipynb) · [日本語](../ja/04_masked_lm.ipynb) · [目录](00_index.ipynb)
#
# 从左到右的语言模型根据左边的词元来预测每个词元。BERT 希望每个词元的向量同时利用**两侧**的上下文，
# 但如果模型能看到两侧，它大可直接把要预测的那个词元抄过来。解决办法是：把一部分词元掩蔽起来，再根据
# 上下文把它们预测出来。这就是**掩蔽语言模型**（MLM），是 BERT 两个预训练任务中的第一个。它的标签直
# 接来自原始文本，不需要人工标注。
#
# 你将会：
# 1. 用 `mask_tokens` 掩蔽一个句子，再固定随机种子反复抽样，检验 15% 规则和 80/10/10 规则；
# 2. 看 `MaskLM` 怎样从形状为 `(B, T, H)` 的张量中取出预测位置上的向量，再亲手实现这一步（练习会把你
#    的结果与 bertlib 比对）；
# 3. 用 `bert_loss` 计算加权的掩蔽语言模型损失，并用数字说明：本章的训练代码用的是按均值归约的损失，
#    结果填充位置并没有排除在损失之外；
# 4. 更进一步：看一看双语词表怎样在 10% 的随机替换中留下一条捷径，再试试掩蔽整个词，而不是逐个子词
#    掩蔽。

# %% [markdown] lang="ja"
# # 04 · マスク言語モデル
#
# *[English](../en/04_masked_lm.ipynb) · [中文](../zh/04_masked_lm.ipynb) · [目次](00_index.ipynb)*
#
# 左から右への言語モデルは、各トークンをその左側のトークンから予測します。BERT は各トークンのベクト
# ルに左右**両側**の文脈を使わせたいのですが、両側が見えるモデルは、予測を求められたトークンをそのま
# ま写すだけで済んでしまいます。そこで、いくつかのトークンを隠し、それを文脈から予測させます。これ
# が**マスク言語モデル**（MLM）で、BERT の 2 つの事前学習タスクの 1 つ目です。そのラベルは生のテキス
# トからただで手に入ります。
#
# このノートブックでは次のことを行います。
# 1. `mask_tokens` で文を壊し、乱数シードを固定した多数回の抽選で 15% の規則と 80/10/10 の規則を確か
#    めます。
# 2. `MaskLM` が `(B, T, H)` のテンソルから予測位置のベクトルをどう取り出すかを見て、その取り出しを
#    自分で書きます（bertlib と照らし合わせてチェックする演習です）。
# 3. `bert_loss` で重み付きのマスク言語モデルの損失を計算し、平均で集約した損失を使う章の学習コード
#    では、パディングした予測位置まで数に入ってしまう理由を数値で確かめます。
# 4. さらに先へ：2 言語の語彙が 10% のランダムな置き換えに開けてしまう近道を測り、1 つ 1 つのサブ
#    ワードではなく単語全体をマスクしてみます。

# %%
import collections
import dataclasses

import torch
import torch.nn.functional as F

from bertlib import (
    Fate,
    MaskLM,
    Vocab,
    bert_loss,
    get_tokens_and_segments,
    load_small_bert,
    load_small_corpus,
    mask_tokens,
)
from bertlib.classroom.exercises import check_exercise
from bertlib.classroom.implement import check_implementation
from bertlib.inputs import encode_pair, stack_inputs
from bertlib.support.i18n import table, tr
from bertlib.text.words import segment, word_ids
from bertlib.viz import MaskingWidget
from bertlib.viz.listing import show_source

# %% [markdown] lang="en"
# ## The 15% and the 80/10/10 rule
#
# In every BERT input sequence, 15% of the tokens are chosen as prediction positions. The count
# is taken over the whole sequence, `<cls>` and `<sep>` included, though these are never chosen
# themselves: `max(1, round(0.15 * len(tokens)))`, as in the chapter's `_get_mlm_data_from_tokens`
# and the original BERT's data script. Always replacing them by `<mask>` would create a
# mismatch: `<mask>` never
# appears when BERT is later fine-tuned on real text. So each chosen token is replaced
#
# * by `<mask>` 80% of the time ("this movie is great" → "this movie is `<mask>`"),
# * by a random word 10% of the time ("this movie is drink"),
# * not at all 10% of the time ("this movie is great").
#
# The model is asked to predict the original token in all three cases, so it cannot trust the
# input at a prediction position, and it must build a good vector for *every* token, since any
# token might be one it is asked about.

# %% [markdown] lang="zh"
# ## 15% 与 80/10/10 规则
#
# 在每个 BERT 输入序列中，随机选出 15% 的词元作为预测位置。这个个数按整个序列计算，`<cls>` 和
# `<sep>` 也计入长度，只是它们本身永远不会被选中：`max(1, round(0.15 * len(tokens)))`，与本章的
# `_get_mlm_data_from_tokens` 和原始 BERT 的数据脚本一致。如果总是把选中的词元替换成 `<mask>`，预训
# 练和微调之间就会出现不匹配：之后在真实文本上微调时，`<mask>` 从不出现。因此，每个被选中的词元
#
# * 80% 的时间替换为 `<mask>`（“this movie is great”→“this movie is `<mask>`”）；
# * 10% 的时间替换为一个随机词元（“this movie is drink”）；
# * 10% 的时间保持不变（“this movie is great”）。
#
# 在这三种情况下，模型都要预测原来的词元，所以它不能轻信预测位置上的输入；又因为任何词元都可能成为预
# 测对象，它必须为**每个**词元都构造出好的向量。

# %% [markdown] lang="ja"
# ## 15% と 80/10/10 の規則
#
# 各 BERT 入力シーケンスで、トークンの 15% を予測位置として選びます。この数は `<cls>` と `<sep>` も
# 含めたシーケンス全体で数えますが、`<cls>` と `<sep>` 自身が選ばれることはありません：`max(1,
# round(0.15 * len(tokens)))`。章の `_get_mlm_data_from_tokens` やオリジナルの BERT
# のデータ作成スクリプトと同じです。マスクする単位は単語ではなくトークンです。英語ではサブワード、中
# 国語では 1 文字 1 文字がそれにあたり、日本語で学習した BERT でも、漢字やかなの 1 文字、またはサブ
# ワードが単位になります（単語全体をマスクする方法は最後の節で見ます）。
#
# 選んだトークンを常に `<mask>` に置き換えると、食い違いが生まれます。後で BERT を実際のテキストで
# ファインチューニングするとき、`<mask>` は決して現れないからです。そこで、選ばれた各トークンは
#
# * 80% の確率で `<mask>` に置き換え（「this movie is great」→「this movie is `<mask>`」）、
# * 10% の確率でランダムな単語に置き換え（「this movie is drink」）、
# * 10% の確率でそのままにします（「this movie is great」）。
#
# どの場合もモデルには元のトークンを予測させるので、モデルは予測位置の入力を信用できません。また、ど
# のトークンも予測を求められる可能性があるので、**すべての**トークンについてよいベクトルを作らなけれ
# ばなりません。

# %%
words = ("the old man sat by the river and watched the boats go by "
         "while his dog slept in the warm sun").split()
vocab = Vocab([words])
tokens, _ = get_tokens_and_segments(words)
ids = vocab[tokens]

m = mask_tokens(ids, vocab, seed=0)
print("len(tokens) =", len(tokens), " m.positions =", m.positions)
FATES = {Fate.MASK: tr("masked"), Fate.RANDOM: tr("random word"), Fate.KEEP: tr("unchanged")}
for pos, target, fate in zip(m.positions, m.labels, m.fates, strict=True):
    shown = vocab.to_tokens(m.masked_ids[pos])  # what the model will see at this position
    print(f"{pos:2}: {vocab.to_tokens(target):>6} -> {shown:<6} {FATES[fate]}")

# %% [markdown] lang="en"
# `mask_tokens` returns the corrupted ids (the model's input), the prediction positions, the
# labels (the original ids there) and each position's `Fate`. Its whole recipe fits on a screen;
# it does what the chapter's `_get_mlm_data_from_tokens` and `_replace_mlm_tokens` do together:
# count the positions, shuffle the candidates and take them in that order, then draw each
# one's fate.

# %% [markdown] lang="zh"
# `mask_tokens` 返回掩蔽后的词元索引（模型的输入）、预测位置、标签（这些位置上原来的词元索引），以及
# 每个位置的 `Fate`（处理方式）。它的完整流程一屏就能看完，做的事相当于本章的
# `_get_mlm_data_from_tokens` 和 `_replace_mlm_tokens` 两个函数加起来：先算出预测位置的个数，把候选
# 位置打乱后依次选取，再为每个选中的位置抽取处理方式。

# %% [markdown] lang="ja"
# `mask_tokens` は、壊したトークンインデックス（モデルへの入力）、予測位置、ラベル（その位置の元の
# トークンインデックス）、そして各位置の `Fate`（扱い）を返します。その手順全体は 1 画面に収まり、章
# の `_get_mlm_data_from_tokens` と `_replace_mlm_tokens` を合わせた処理をします。予測位置の数を求
# め、候補の位置をシャッフルしてその順に取り、選んだ位置ごとに扱いを引くのです。

# %%
show_source(mask_tokens, region="recipe")

# %% [markdown] lang="en"
# Python's `round` goes to the nearest integer, and a value exactly halfway goes to the **even**
# neighbour ("banker's rounding"): 4.5 becomes 4, 7.5 becomes 8. The sequence above has 23
# tokens; here are a few lengths, with the count `mask_tokens` actually chooses:

# %% [markdown] lang="zh"
# Python 的 `round` 舍入到最接近的整数；恰好在两个整数中间时，取**偶数**（“银行家舍入”），而不是
# 四舍五入：4.5 变成 4，7.5 变成 8。上面的序列有 23 个词元；下面是几种长度，以及 `mask_tokens`
# 实际选出的个数：

# %% [markdown] lang="ja"
# Python の `round` は最も近い整数に丸め、ちょうど中間の値は**偶数**の側に丸めます（「銀行家の丸
# め」）。4.5 は 4 に、7.5 は 8 になります。上のシーケンスは 23 トークンでした。いくつかの長さについ
# て、`mask_tokens` が実際に選ぶ数を示します。

# %%
for n in (5, 23, 30, 50):
    seq = [vocab.cls_id] + [ids[1]] * (n - 2) + [vocab.sep_id]  # <cls>, n - 2 words, <sep>
    print(tr("{n:3} tokens: 0.15 × {n} = {x:<5} -> {k} positions",
             n=n, x=round(0.15 * n, 2), k=len(mask_tokens(seq, vocab, seed=0).positions)))

# %% [markdown] lang="en"
# One draw says little about probabilities. Let us repeat the draw 2000 times with one seeded
# generator and count: the number of positions is always the same, every word position is chosen
# about equally often, `<cls>` and `<sep>` never, and the fates come out close to 80/10/10.

# %% [markdown] lang="zh"
# 只抽样一次说明不了概率。我们用同一个设定了随机种子的随机数生成器重复抽样 2000 次并计数：预测位置的
# 个数每次都一样，每个词所在的位置被选中的次数大致相同，`<cls>` 和 `<sep>` 从不被选中，而三种处理方
# 式的比例接近 80/10/10。

# %% [markdown] lang="ja"
# 1 回の抽選では、確率についてほとんど何もわかりません。乱数シードを設定した 1 つの生成器で抽選を
# 2000 回繰り返して数えてみましょう。予測位置の数は毎回同じで、単語の位置はどれもほぼ同じ回数だけ選
# ばれ、`<cls>` と `<sep>` は決して選ばれず、扱いの割合は 80/10/10 に近くなります。

# %%
draws = 2000
g = torch.Generator().manual_seed(0)
num_preds, chosen, fates = collections.Counter(), collections.Counter(), collections.Counter()
for _ in range(draws):
    m = mask_tokens(ids, vocab, generator=g)
    num_preds[len(m.positions)] += 1
    chosen.update(m.positions)
    fates.update(m.fates)

print("len(m.positions):", dict(num_preds))  # {number of positions: draws}
per_position = [chosen[i] for i in range(1, len(tokens) - 1)]  # the word positions
expected = draws * len(m.positions) / len(words)  # every draw picks the same number of words
print(tr("chosen per position: min {low}, max {high}, expected {expected:.1f}",
         low=min(per_position), high=max(per_position), expected=expected))
print(tr("chosen <cls>, <sep>: {cls} {sep}", cls=chosen[0], sep=chosen[len(tokens) - 1]))
total = sum(fates.values())
print(table([FATES[fate], f"{fates[fate]:5}", f"{fates[fate] / total:.3f}",
              tr("(expected {share})", share=share)]
             for fate, share in ((Fate.MASK, 0.8), (Fate.RANDOM, 0.1), (Fate.KEEP, 0.1))))

# %% [markdown] lang="en"
# ## Try it: masking a sentence pair
#
# The widget below runs `mask_tokens` on a sentence pair, tokenized by the WordPiece tokenizer of
# the small BERT pretrained for these notebooks. Each chip is a token. A selected chip is
# outlined in the colour of its fate, and its band shows what the model sees there instead; the
# table under the chips lists the MLM targets. Try:
#
# * *Resample* (or change the seed) a few times: the number of selected tokens stays the same,
#   but which tokens and their fates change; `<cls>` and `<sep>` are never selected;
# * a longer or shorter sentence: the number of selected tokens is always 15% of all the tokens,
#   `<cls>` and `<sep>` counted, rounded to the nearest integer (a half to the even one), and at
#   least 1;
# * *Tally resamples*: the widget draws the mask 300 times from one seeded generator, then plots
#   how often each position was selected and how the shares of the three fates approach
#   80/10/10 as the draws add up. Set the resamples to 5000 and tally again;
# * *mask ratio* 0.5: what is left for the model to read? (Exercise 3 below.)

# %% [markdown] lang="zh"
# ## 动手试试：掩蔽一个句子对
#
# 下面的小部件对一个句子对运行 `mask_tokens`，分词用的是项目自带的小 BERT 的 WordPiece 分词器。每个
# 方块是一个词元。被选中的方块按处理方式用不同颜色描边，方块里的色条显示模型在这个位置上实际看到的是
# 什么；方块下面的表格列出掩蔽语言模型的预测目标。可以试试：
#
# * 多点几次“重新采样”（或者修改随机种子）：被选中的词元个数不变，但选中哪些词元、如何处理都会变化；
#   `<cls>` 和 `<sep>` 永远不会被选中；
# * 把句子改长或改短：被选中的词元个数始终是全部词元个数（`<cls>` 和 `<sep>` 也计入）的 15%，舍入到
#   最接近的整数（恰好在中间时取偶数），且至少为 1；
# * 点击“统计多次采样”：小部件用同一个设定了随机种子的随机数生成器抽样 300 次，然后画出每个位置被选
#   中的频率，以及随着抽样次数增加，三种处理方式的比例如何逼近 80/10/10。把“采样次数”改成 5000，再统
#   计一次；
# * 把“掩蔽比例”设为 0.5：模型还能读到多少上下文？（见下面的练习 3。）

# %% [markdown] lang="ja"
# ## 試してみよう：文ペアをマスクする
#
# 下のウィジェットは、プロジェクト付属の小さな BERT の WordPiece トークナイザで文ペアをトークンに分
# け、`mask_tokens` を実行します。1 つのチップが 1 つのトークンです。選ばれたチップは扱いに応じた色
# の枠で囲まれ、その帯が、モデルがその位置で代わりに見るものを示します。チップの下の表は、マスク言語
# モデルの予測対象の一覧です。日本語版でも、ウィジェットはモデルが知っている英語の文ペアから始まりま
# す。このモデルは日本語を学習していないので、日本語の文を入れると、漢字は残りますが、かなは `<unk>`
# になります（ノートブック 05 に例があります）。試してみましょう。
#
# * 「引き直す」を何度か押して（または乱数シードを変えて）みてください。選ばれるトークンの数は変わり
#   ませんが、どのトークンが選ばれ、どう扱われるかは変わります。`<cls>` と `<sep>` が選ばれることは
#   ありません。
# * 文を長くしたり短くしたりしてみてください。選ばれるトークンの数は、常に全トークン数（`<cls>` と
#   `<sep>` も数える）の 15% を最も近い整数に丸めた数（ちょうど中間なら偶数へ）で、最低でも 1 です。
# * 「何度も引き直して数える」：ウィジェットは乱数シードを設定した 1 つの生成器で 300 回マスクを引
#   き、各位置が選ばれた頻度と、抽選を重ねるにつれて 3 つの扱いの割合が 80/10/10 に近づいていく様子
#   を描きます。「引き直す回数」を 5000 にして、もう一度数えてみてください。
# * 「マスクの割合」を 0.5 にすると、モデルが読める部分はどれだけ残るでしょうか。（下の演習 3 で
#   す。）

# %%
model, tokenizer = load_small_bert()  # the small pretrained BERT and its tokenizer
MaskingWidget(tokenizer, model=model)

# %% [markdown] lang="en"
# The last column of the table is the model at work: given the corrupted sequence, the small
# BERT's five most probable tokens at each chosen position, with the original in bold when it is
# among them. Watch how the three fates differ: at a `<mask>` the model has only the context; at
# a random replacement it must overrule a wrong token it can see; at an unchanged position the
# right answer is in plain view, yet the model does not always simply copy it.

# %% [markdown] lang="zh"
# 表格最后一列是模型的实际预测：自带模型读入破坏后的序列，在每个被选中的位置上给出概率最高的 5 个词
# 元；如果原词元在其中，就用粗体标出。留意三种处理方式的差别：遇到 `<mask>`，模型只能依靠上下文；遇
# 到随机替换的词，它得推翻一个看得见的错误词元；位置保持不变时，正确答案就摆在眼前，但模型并不总是照
# 抄。

# %% [markdown] lang="ja"
# 表の最後の列は、モデルが実際に働いている様子です。壊したシーケンスを読んだ付属モデルが、選ばれた各
# 位置で最も確率が高いと予測したトークン 5 つで、元のトークンがその中にあれば太字になっています。3
# つの扱いの違いに注目してください。`<mask>` の位置では、モデルには文脈しかありません。ランダムに置
# き換えた位置では、目の前にある誤ったトークンを退けなければなりません。そのままの位置では正解が丸見
# えですが、モデルはいつもそれを単純に写すわけではありません。

# %% [markdown] lang="en"
# ## The MLM head: gather, then predict
#
# The encoder returns a vector for every position, `(B, T, H)`, but the loss only needs the
# prediction positions: a `(B, P)` tensor, P positions per sequence. `MaskLM` first *gathers*
# those vectors into a `(B, P, H)` tensor, then runs a one-hidden-layer MLP that scores every
# vocabulary entry.
#
# The gathering is one line of advanced indexing. **Try it first**: write `gather(X,
# pred_positions)`, which returns the `(B, P, H)` tensor whose element `[b, p]` is
# `X[b, pred_positions[b, p]]`, as `MaskLM` does before its MLP. The check runs it against
# `MaskLM` on several cases, padded slots included; `hint=1` in the check gives a first hint.
# The cells after it show two ways to write it, so write yours before you read on.

# %% [markdown] lang="zh"
# ## 掩蔽语言模型的输出层：先取出，再预测
#
# 编码器为每个位置输出一个向量，形状为 `(B, T, H)`；而损失只用到预测位置上的向量。预测位置是形状为
# `(B, P)` 的张量，每个序列有 P 个位置。`MaskLM` 先把这些向量**取出**来，组成形状为 `(B, P, H)` 的张
# 量，再用只有一个隐藏层的多层感知机给词表中的每个词元打分。
#
# 取出向量只要一行高级索引。**先自己试一试**：编写 `gather(X, pred_positions)`，返回形状为
# `(B, P, H)` 的张量，它的元素 `[b, p]` 等于 `X[b, pred_positions[b, p]]`，就像 `MaskLM` 在送入多层
# 感知机之前所做的那样。检查会在几个用例（包括填充的预测位置）上把它与 `MaskLM` 比对；在检查中加上
# `hint=1` 可以得到第一条提示。后面的单元格会给出两种写法，所以请先写好你自己的，再往下读。

# %% [markdown] lang="ja"
# ## マスク言語モデルの出力層：取り出してから予測する
#
# エンコーダはすべての位置についてベクトルを返します（形状 `(B, T, H)`）が、損失に必要なのは予測位置
# だけです。予測位置は形状 `(B, P)` のテンソルで、シーケンスごとに P 個あります。`MaskLM` はまずそれ
# らのベクトルを形状 `(B, P, H)` のテンソルに**取り出し**、続いて隠れ層が 1 つの多層パーセプトロ
# ン で語彙のすべての項目にスコアを付けます。
#
# 取り出しは、高度なインデックス参照 1 行で書けます。**まず自分で試してみましょう**。`gather(X,
# pred_positions)` を書いてください。要素 `[b, p]` が `X[b, pred_positions[b, p]]` である形状
# `(B, P, H)` のテンソルを返します。`MaskLM` が多層パーセプトロンの前で行う処理です。チェックは、パ
# ディングした予測位置を含むいくつかのケースで `MaskLM` と比べます。チェックに `hint=1` を加えると最
# 初のヒントが出ます。この後のセルで 2 通りの書き方を見せるので、先に自分の答えを書いてから読み進め
# てください。

# %%
def gather(X: torch.Tensor, pred_positions: torch.Tensor) -> torch.Tensor:
    """Exercise 4. X: (B, T, H); pred_positions: (B, P). Returns (B, P, H), whose element
    [b, p] is X[b, pred_positions[b, p]]."""
    raise NotImplementedError  # replace this line with your code


check_implementation("04_mlm_gather", gather)

# %% [markdown] lang="en"
# Now the answer. To see what the indexing does, take a small `X` whose entries are easy to
# recognise.

# %% [markdown] lang="zh"
# 下面是答案。为了看清楚索引做了什么，我们取一个小张量 `X`，它的元素一眼就能认出来。

# %% [markdown] lang="ja"
# ここからが答えです。インデックス参照の働きを見るために、要素がひと目でわかる小さな `X` を使いま
# しょう。

# %%
B, T, H = 2, 6, 3
X = torch.arange(B * T * H).reshape(B, T, H)  # row t of sequence b holds 18b + 3t, +1, +2
pred_positions = torch.tensor([[1, 5, 2],
                               [4, 1, 0]])  # (B, P): the positions to predict in each sequence
batch_idx = torch.arange(B)[:, None]  # (B, 1): broadcasts against (B, P)

print(batch_idx.expand_as(pred_positions))  # the sequence index of each slot, (B, P)
gathered = X[batch_idx, pred_positions]  # element [b, p] = X[b, pred_positions[b, p]]
print(tuple(gathered.shape))  # (B, P, H)
print(gathered)

# %% [markdown] lang="en"
# Row `[b, p]` of the result is row `pred_positions[b, p]` of sequence b. The chapter builds the
# same index differently, flattening everything and repeating each batch index P times with
# `repeat_interleave`; the result is identical. A tempting shortcut, `X[:, pred_positions]`, is
# wrong: it applies *every* sequence's positions to *every* sequence.

# %% [markdown] lang="zh"
# 结果的第 `[b, p]` 行就是序列 b 的第 `pred_positions[b, p]` 行。本章构造同样的索引时用了另一种办
# 法：先把所有东西展平，再用 `repeat_interleave` 把每个序列的批量索引重复 P 次；结果完全相同。
# `X[:, pred_positions]` 这种写法看似省事，其实是错的：它把**每个**序列的预测位置都用到了**每个**序
# 列上。

# %% [markdown] lang="ja"
# 結果の `[b, p]` 行は、シーケンス b の `pred_positions[b, p]` 行です。章は同じインデックスを別の方
# 法で作ります。すべてを平坦化し、`repeat_interleave` で各バッチのインデックスを P 回繰り返すので
# す。結果はまったく同じです。`X[:, pred_positions]` という近道は魅力的に見えますが、誤りです。**す
# べての**シーケンスの位置を**すべての**シーケンスに当てはめてしまいます。

# %%
P = pred_positions.shape[1]
flat_batch_idx = torch.repeat_interleave(torch.arange(B), P)  # [0, 0, 0, 1, 1, 1]
chapter_way = X[flat_batch_idx, pred_positions.reshape(-1)].reshape(B, P, H)
print(flat_batch_idx)
print(tr("the same as gathered") if torch.equal(gathered, chapter_way) else tr("not the same"))
print("X[:, pred_positions].shape:", tuple(X[:, pred_positions].shape))  # (B, B, P, H)

# %% [markdown] lang="en"
# That line is the heart of `MaskLM`, bertlib's MLM head (the chapter's class of the same
# name). After checking its inputs, it gathers the rows (its method `gather`) and runs them
# through an MLP, Linear → ReLU → LayerNorm → Linear, which gives one score (logit) per
# vocabulary entry at each prediction position:

# %% [markdown] lang="zh"
# 这一行就是 `MaskLM` 的核心。`MaskLM` 是 bertlib 中掩蔽语言模型的输出层，对应本章的同名类。它先检查
# 输入，再用自己的 `gather` 方法取出这些行，送入多层感知机：全连接层 → ReLU → 层规范化 → 全连接层，
# 在每个预测位置上为词表中的每个词元输出一个分数（logit，即未规范化的预测）：

# %% [markdown] lang="ja"
# この 1 行が、bertlib のマスク言語モデルの出力層 `MaskLM`（章の同名のクラスにあたります）の核心で
# す。`MaskLM` は入力を検査した後、自身の `gather` メソッドで行を取り出し、全結合層 → ReLU → 層正規
# 化 → 全結合層という多層パーセプトロンに通して、各予測位置で語彙の項目ごとに 1 つのスコア（ロジッ
# ト）を出します。

# %%
show_source(MaskLM)

# %% [markdown] lang="en"
# Now the real head with the chapter's sizes: vocabulary 10000, H = 768. A random tensor stands
# in for the encoder's output here: the head does not care where its input comes from.

# %% [markdown] lang="zh"
# 现在用本章的尺寸构建真正的输出层：词表大小 10000，H = 768。这里用一个随机张量代替编码器的
# 输出：输出层并不关心输入从哪里来。

# %% [markdown] lang="ja"
# では、章の大きさ（語彙サイズ 10000、H = 768）で本物の出力層を作りましょう。ここではエンコーダの出
# 力の代わりにランダムなテンソルを使います。出力層は、入力がどこから来たかを気にしません。

# %%
torch.manual_seed(0)
torch.set_grad_enabled(False)  # forward passes only
mlm = MaskLM(vocab_size=10000, num_hiddens=768)
encoded_X = torch.randn(2, 8, 768)  # (B, T, H), as if from the encoder
mlm_positions = torch.tensor([[1, 5, 2],
                              [6, 1, 5]])  # (B, P)
mlm_Y_hat = mlm(encoded_X, mlm_positions)
print(mlm)
print(tuple(mlm_Y_hat.shape))  # (B, P, vocab_size)

# %% [markdown] lang="en"
# ## The loss, and padded prediction slots
#
# With the true tokens `mlm_Y` at those positions, the cross-entropy of each slot is computed
# separately (`reduction="none"`). An untrained model is close to guessing uniformly among
# 10000 tokens, which costs about $\ln 10000 \approx 9.21$.

# %% [markdown] lang="zh"
# ## 损失，以及填充的预测位置
#
# 有了这些位置上的真实词元 `mlm_Y`，就可以分别计算每个位置的交叉熵（`reduction="none"`）。
# 未经训练的模型差不多是在 10000 个词元中均匀地猜，损失约为 $\ln 10000 \approx 9.21$。

# %% [markdown] lang="ja"
# ## 損失と、パディングした予測位置
#
# それらの位置の正しいトークン `mlm_Y` を使い、各予測位置の交差エントロピーを別々に計算します
# （`reduction="none"`）。学習していないモデルは 10000 個のトークンから一様に当て推量しているのに近
# く、その損失はおよそ $\ln 10000 \approx 9.21$ です。

# %%
mlm_Y = torch.tensor([[7, 8, 9],
                      [10, 20, 30]])  # (B, P): the original token ids
per_slot = F.cross_entropy(mlm_Y_hat.reshape(-1, 10000), mlm_Y.reshape(-1), reduction="none")
print(tuple(per_slot.shape))  # (B * P,)
print(per_slot.numpy().round(2))

# %% [markdown] lang="en"
# Sequences have different numbers of prediction positions, so a batch pads them to a common P,
# and a weight per slot says which slots are real (1) and which are padding (0). Suppose the
# second sequence really has only 2 positions, so its third slot is padding. The MLM loss must
# be the average over the **5 real slots**: $\sum_i w_i \ell_i / \sum_i w_i$. That is what
# `bert_loss` computes; its label at the padded slot can be anything. (`bert_loss` also takes
# the NSP predictions and labels, the subject of notebook 05; here we read its `.mlm` part.)

# %% [markdown] lang="zh"
# 不同序列的预测位置个数不同，所以组成批量时要把它们填充到同一个 P，并给每个位置一个权重：真实位置为
# 1，填充位置为 0。假设第二个序列其实只有 2 个预测位置，它的第三个位置只是填充。掩蔽语言模型的损失应
# 当是 **5 个真实位置**上的平均：$\sum_i w_i \ell_i / \sum_i w_i$。`bert_loss` 正是这样计算的；填充
# 位置上的标签是什么都无所谓。（`bert_loss` 还需要下一句预测的预测值和标签，那是笔记本 05 的内容；这
# 里只看它的 `.mlm` 部分。）

# %% [markdown] lang="ja"
# シーケンスごとに予測位置の数は異なるので、バッチでは共通の P までパディングし、予測位置ごとの重み
# で、実在の位置（1）とパディング（0）を区別します。2 つ目のシーケンスには実は予測位置が 2 つしかな
# く、3 つ目はパディングだとしましょう。マスク言語モデルの損失は、**5 つの実在の位置**での平均
# $\sum_i w_i \ell_i / \sum_i w_i$ でなければなりません。`bert_loss` が計算するのはこれで、パディン
# グした位置のラベルは何でもかまいません。（`bert_loss` は次文予測の予測とラベルも受け取ります。それ
# はノートブック 05 の話題なので、ここでは `.mlm` の部分だけを読みます。）

# %%
mlm_weights = torch.tensor([[1.0, 1.0, 1.0],
                            [1.0, 1.0, 0.0]])  # (B, P): the last slot is padding
nsp_Y_hat, nsp_labels = torch.zeros(2, 2), torch.tensor([1, 0])  # placeholders for notebook 05
other_Y = mlm_Y.clone()
other_Y[1, 2] = 0  # a different label in the padded slot

loss = bert_loss(mlm_Y_hat, mlm_Y, mlm_weights, nsp_Y_hat, nsp_labels).mlm
loss_other = bert_loss(mlm_Y_hat, other_Y, mlm_weights, nsp_Y_hat, nsp_labels).mlm
print(f"loss                {loss:.3f}")
print(f"per_slot[:5].mean() {per_slot[:5].mean():.3f}")  # the 5 real slots
print(f"loss_other          {loss_other:.3f}")  # another label in the padded slot

# %% [markdown] lang="en"
# ## The chapter's loss counts the padded slots
#
# The chapter's PyTorch pretraining code creates its loss as `nn.CrossEntropyLoss()`, whose
# default reduction is the **mean**. It then multiplies the loss by the weights and divides by
# their sum. But the mean-reduced loss is already a single number, the average over *all* slots,
# padding included. Multiplying a scalar by the weights and dividing by their sum gives that
# scalar back: the weights cancel out, and the padded slot counts like a real one. This was
# reported as [d2l-en issue #2582](https://github.com/d2l-ai/d2l-en/issues/2582). Here is that
# code, replayed:

# %% [markdown] lang="zh"
# ## 为什么本章的训练损失没能排除填充位置
#
# 本章 PyTorch 版的预训练代码用 `nn.CrossEntropyLoss()` 定义损失，它默认按**均值**归约。随后代码把损
# 失乘以权重，再除以权重之和。可是按均值归约的损失已经是一个数，也就是**所有**位置（包括填充位置）上
# 的平均。把一个标量乘以权重、再除以权重之和，得到的还是这个标量：权重相互抵消，填充位置和真实位置一
# 样计入了损失。这个问题已经在 [d2l-en issue #2582](https://github.com/d2l-ai/d2l-en/issues/2582) 中
# 报告过。下面重现那段代码：

# %% [markdown] lang="ja"
# ## 章の損失はパディングした予測位置も数える
#
# 章の PyTorch 版の事前学習コードは、損失を `nn.CrossEntropyLoss()` で作ります。その既定の集約方法
# は**平均**です。コードはその後、損失に重みを掛けて重みの和で割ります。しかし、平均で集約した損失は
# すでに 1 つの数、つまりパディングも含めた**すべての**位置での平均です。スカラーに重みを掛けて重み
# の和で割ると、元のスカラーに戻るだけです。重みは打ち消し合い、パディングした位置も実在の位置と同じ
# ように数えられてしまいます。この問題は [d2l-en
# issue #2582](https://github.com/d2l-ai/d2l-en/issues/2582) で報告されています。そのコードを再現し
# てみましょう。

# %%
mean_loss = torch.nn.CrossEntropyLoss()  # reduction="mean", as in the chapter


def chapter_mlm_loss(labels):
    mlm_l = mean_loss(mlm_Y_hat.reshape(-1, 10000), labels.reshape(-1))  # shape (): one number
    mlm_l = mlm_l * mlm_weights.reshape(-1, 1)  # that number times each weight: (B * P, 1)
    return mlm_l.sum() / (mlm_weights.sum() + 1e-8)  # ... and back to that number


print("mean_loss(...).shape:", tuple(mean_loss(mlm_Y_hat[0], mlm_Y[0]).shape))
print(f"chapter_mlm_loss(mlm_Y)   {chapter_mlm_loss(mlm_Y):.3f}")
print(f"per_slot.mean()           {per_slot.mean():.3f}")  # all 6 slots, padding included
print(f"chapter_mlm_loss(other_Y) {chapter_mlm_loss(other_Y):.3f}")


# %% [markdown] lang="en"
# The chapter's value is the mean over all six slots and it moves when the padded label moves;
# `bert_loss` stays on the five real slots. The fix is one word: create the loss with
# `reduction="none"` so that each slot keeps its own value until it is weighted. In real
# pretraining batches many slots are padding, so the difference is not cosmetic: the model is
# trained to predict token id 0 at position 0 (`<cls>`) over and over.

# %% [markdown] lang="zh"
# 本章的结果是全部 6 个位置的平均，会随填充位置上的标签而变化；`bert_loss` 则只看 5 个真实位置。修正
# 只需改一处：定义损失时使用 `reduction="none"`，让每个位置先保留各自的损失值，再乘以权重。真实的预
# 训练批量中有许多填充位置，所以这个差别不是小事：训练会一遍又一遍地教模型在位置 0（`<cls>`）上预测
# 词元索引 0。

# %% [markdown] lang="ja"
# 章の値は 6 つの位置すべての平均で、パディングした位置のラベルが変わると一緒に動きます。
# `bert_loss` は 5 つの実在の位置だけを見ています。修正は 1 語で済みます。各位置が重みを掛けられるま
# で自分の値を保つように、損失を `reduction="none"` で作ればよいのです。実際の事前学習のバッチではパ
# ディングした位置が多いので、この違いは見た目だけの問題ではありません。モデルは、位置 0（`<cls>`）
# でトークンインデックス 0 を予測するように何度も何度も学習させられてしまいます。

# %% [markdown] lang="en"
# ## Going further
#
# The chapter's path ends here: masking, `MaskLM`, the loss. The two sections below go
# beyond it. The first measures a shortcut that a bilingual vocabulary opens in the 10% random
# replacements; the second masks whole words instead of single pieces, as BERT's later releases
# and the Chinese BERT-wwm models do.

# %% [markdown] lang="zh"
# ## 更进一步
#
# 本章的主线到这里就结束了：掩蔽、`MaskLM`、损失。下面两节是主线之外的内容。第一节看双语词表
# 在 10% 的随机替换中留下的一条捷径；第二节不再逐个子词掩蔽，而是掩蔽整个词，这正是 BERT 后来发布
# 的版本和中文 BERT-wwm 模型的做法。

# %% [markdown] lang="ja"
# ## さらに先へ
#
# 章の道筋はここで終わりです：マスク、`MaskLM`、損失。以下の 2 つの節はその先に進みます。1 つ目は、
# 2 言語の語彙が 10% のランダムな置き換えに開けてしまう近道を測ります。2 つ目は、BERT の後のリリース
# や中国語の BERT-wwm モデルと同じように、1 つ 1 つのサブワードではなく単語全体をマスクします。

# %% [markdown] lang="en"
# ### A second-language shortcut in the random replacements
#
# The 10% random replacements are drawn uniformly from the vocabulary's ordinary words. The small
# BERT's vocabulary is bilingual, so in an English sentence the "random word" is often a Chinese
# character (the widget may show `in → 鸟`). How often? Count the Chinese tokens among the words
# a replacement is drawn from, then mask the held-out English sentences ten times each and
# count the replacements themselves:

# %% [markdown] lang="zh"
# ### 随机替换中的第二语言捷径
#
# 10% 的随机词元从词表的普通词元中均匀抽取。自带模型的词表是双语的，所以在英文句子里，“随机词元”常常
# 是汉字（小部件里就可能出现 `in → 鸟` 这样的替换）。这种情况有多常见？先数一数可供抽取的词元中有多
# 少是中文，再把留出的英文句子各掩蔽十次，数一数实际发生的随机替换：

# %% [markdown] lang="ja"
# ### ランダムな置き換えに潜む、もう一方の言語という近道
#
# 10% のランダムな置き換えは、語彙の通常の単語から一様に引きます。付属モデルの語彙は 2 言語なので、
# 英語の文の中の「ランダムな単語」は漢字であることがよくあります（ウィジェットに `in → 鸟` のような
# 置き換えが出るかもしれません）。どのくらいの頻度でしょうか。置き換えを引く元の単語のうち中国語の
# トークンを数え、次にホールドアウトの英語の文をそれぞれ 10 回ずつマスクして、実際の置き換えを数えま
# す。

# %%
def is_chinese(token: str) -> bool:
    """Whether ``token`` holds a CJK character (the corpus's Chinese is all in this block)."""
    return any("\u4e00" <= ch <= "\u9fff" for ch in token)


vocab = tokenizer.vocab  # the small BERT's, from here on
chinese_words = sum(is_chinese(t) for t in vocab.to_tokens(vocab.word_ids))
print(tr("ordinary words in the vocabulary: {n}, Chinese: {zh} ({share:.1%})",
         n=len(vocab.word_ids), zh=chinese_words, share=chinese_words / len(vocab.word_ids)))

corpus = load_small_corpus()  # the same split as the small BERT's pretraining
english = [encode_pair(tokenizer, sentence)
           for paragraph, lang in zip(corpus.held_out, corpus.held_out_langs, strict=True)
           if lang == "en" for sentence in paragraph]
rounds, g = 10, torch.Generator().manual_seed(0)
replaced = []  # (the sentence, its corrupted ids, the position) of every RANDOM slot
for _ in range(rounds):
    for enc in english:
        m = mask_tokens(enc.ids, vocab, generator=g)
        replaced += [(enc, m.masked_ids, pos) for pos, fate in zip(m.positions, m.fates,
                                                                   strict=True)
                     if fate is Fate.RANDOM]
chinese = torch.tensor([is_chinese(vocab.to_tokens(masked[pos])) for _, masked, pos in replaced])
print(tr("random replacements in {s} held-out English sentences ({r} draws each): {n}, Chinese: "
         "{zh} ({share:.1%})",
         s=len(english), r=rounds, n=len(replaced), zh=int(chinese.sum()),
         share=chinese.float().mean().item()))

# %% [markdown] lang="en"
# About a third of the random replacements in English sentences are Chinese characters, just as
# a third of the words are. That is a shortcut, like the language shortcut of NSP that
# notebook 08 measures: a Chinese character in the middle of an English sentence is
# obviously not the original token, so for these replacements the model needs no understanding
# of the sentence to know that the input is wrong there; it only has to tell the two scripts
# apart. The paper keeps 10% random and 10% unchanged tokens because fine-tuning never shows
# `<mask>`, and so that the model must keep a representation of every input token, since any of
# them may have been replaced; a third of the replacements ask for no such representation. (The same
# holds the other way round for English words in Chinese sentences.)
#
# Does the small BERT treat the two kinds of replacement differently? At every one of these
# positions, ask it for its top guess, and for the probability it gives the token it sees:

# %% [markdown] lang="zh"
# 英文句子中的随机替换大约有三分之一是汉字，这和汉字在词表中约占三分之一的比例相当。这是一条捷径，和
# 笔记本 08 中测量的下一句预测的语言捷径类似：英文句子中间冒出一个汉字，显然不是原来的词元；遇到这样
# 的替换，模型不必理解句子就知道这里的输入有错，只要分辨出两种文字就行。论文保留 10% 的随机替换和
# 10% 的原词，是因为微调时根本不会出现 `<mask>`，也是为了让模型为每个输入词元都保留一个表示，因为其
# 中任何一个都可能被替换过；而有三分之一的替换，用不着这样的表示就能识破。（反过来，中文句子中的英文
# 替换词也是如此。）
#
# 自带模型会区别对待这两种替换吗？在每个这样的位置上，看看它的首选预测，以及它给眼前这个替换词多大的
# 概率：

# %% [markdown] lang="ja"
# 英語の文でのランダムな置き換えの約 3 分の 1 は漢字で、語彙の単語の約 3 分の 1 が漢字であるのと同じ
# です。これは近道です。ノートブック 08 で測る次文予測の言語の近道と同じ種類のものです。英語の文の途
# 中に漢字が現れたら、それが元のトークンでないのは明らかです。このような置き換えでは、モデルは文を理
# 解しなくても、そこの入力が誤りだとわかります。2 種類の文字を見分けるだけでよいのです。論文が 10%
# をランダムなトークンに、10% をそのままにするのは、ファインチューニングでは `<mask>` が現れないから
# であり、またどのトークンも置き換えられているかもしれないので、モデルが入力のすべてのトークンについ
# て表現を保たなければならないようにするためです。置き換えの 3 分の 1 は、そのような表現がなくても見
# 破れます。（中国語の文に英単語が入る逆向きの場合も同じです。）
#
# 付属モデルは 2 種類の置き換えを区別して扱っているでしょうか。このような位置の 1 つ 1 つで、第一候
# 補と、目の前にある置き換えたトークンに与える確率を尋ねてみましょう。

# %%
inputs = [dataclasses.replace(enc, ids=masked) for enc, masked, _ in replaced]
tokens, segments, valid_lens = stack_inputs(inputs, vocab.pad_id)
positions = torch.tensor([[pos] for _, _, pos in replaced])  # (N, 1)
originals = torch.tensor([enc.ids[pos] for enc, _, pos in replaced])
with torch.no_grad():
    _, guesses, _ = model(tokens, segments, valid_lens, positions)
right = guesses[:, 0].argmax(-1) == originals
shown = torch.tensor([masked[pos] for _, masked, pos in replaced])
trust = guesses[:, 0].softmax(-1).gather(1, shown[:, None])[:, 0]  # P(the replacement)
for kind, rows in ((tr("Chinese"), chinese), (tr("non-Chinese"), ~chinese)):
    print(tr("{kind} replacement: original recovered {right}/{n} = {share:.1%}, mean P(the "
             "replacement itself) {trust:.2%}",
             kind=kind, right=int(right[rows].sum()), n=int(rows.sum()),
             share=right[rows].float().mean().item(), trust=trust[rows].mean().item()))

# %% [markdown] lang="en"
# The model gives a Chinese replacement about a sixth of the probability it gives a non-Chinese
# one (0.02% against 0.13%): it has learnt that a Chinese character in an English sentence is
# not to be believed. Recovering the original is about equally hard after either kind (78.5%
# and 80.7%): the obvious replacements give away *where* the input is wrong, not *what*
# belongs there. What they cannot teach is the harder lesson the random replacements exist
# for, doubting a token that fits. Drawing each replacement from the sentence's own language
# would bring that lesson back (exercise 5).

# %% [markdown] lang="zh"
# 模型给中文替换词的概率只有给非中文替换词的六分之一左右（0.02% 对 0.13%）：它已经学会不去相信英文句
# 子里的汉字。无论是哪种替换，要预测出原词元都差不多难（78.5% 和 80.7%）：明显的替换词只暴露了输
# 入**哪里**有错，并没有透露那里**应该**是什么。随机替换本来是要让模型学会更难的一课，即怀疑一个放在
# 那里也说得通的词元，而这类替换词教不了这一课。如果替换词都取自句子本身的语言，这一课就能补回来（练
# 习 5）。

# %% [markdown] lang="ja"
# モデルは、中国語の置き換えには、中国語以外の置き換えのおよそ 6 分の 1 の確率しか与えません（0.02%
# 対 0.13%）。英語の文の中の漢字は信じるべきでないことを学んでいるのです。元のトークンを当てる難しさ
# は、どちらの置き換えの後でもほぼ同じです（78.5% と 80.7%）。見え透いた置き換えが明かすのは、入力
# の**どこ**が誤りかであって、そこに**何が**入るべきかではありません。こうした置き換えに教えられない
# のは、ランダムな置き換えが本来教えるべき、より難しい教訓、つまりその場に収まっているトークンを疑う
# ことです。置き換えを文自身の言語から引けば、その教訓を取り戻せます（演習 5）。

# %% [markdown] lang="en"
# ### Whole-word masking
#
# BERT cuts Chinese text into single characters, so a Chinese word of two characters is two
# tokens, and masking one of them leaves the other in plain view: with 球 ("ball") showing,
# 队 ("team") of 球队 is easy to guess. The Chinese BERT-wwm models (Cui et al., 2019) mask
# **whole words** instead, taking the words from a segmenter (they used LTP; we use `jieba`). The
# original BERT's later release does the same for WordPiece: the `##` pieces of a word are
# masked together. `mask_tokens(..., words=...)` takes the word of each token (`None` for
# `<cls>`/`<sep>`); `bertlib.text.words.word_ids` computes it from the text, joining `##` pieces and
# the characters of each word jieba finds. Whole words are drawn in random order while they
# fit into the same budget of 15% of the tokens, as in the original data script, and each
# chosen piece still gets its own 80/10/10 fate.

# %% [markdown] lang="zh"
# ### 全词掩蔽
#
# BERT 把中文切成单个汉字，于是一个两字的词就是两个词元；只掩蔽其中一个，另一个仍然摆在眼前：看到
# “球”，“球队”里的“队”就不难猜。中文 BERT-wwm 模型（Cui 等人，2019）改为掩蔽**整个词**，词由分词工具
# 切出（他们用的是 LTP，我们用 `jieba`）。原始 BERT 后来发布的版本对 WordPiece 子词也这样做：一个词
# 的各个 `##` 子词一起掩蔽。`mask_tokens(..., words=...)` 接收每个词元所属的词（`<cls>`、`<sep>` 为
# `None`）；`bertlib.text.words.word_ids` 根据文本算出这一信息：`##` 子词归入前面的词，汉字按 jieba
# 切出的词归并。整词按随机顺序选取，只要还放得进同样的预算（词元总数的 15%）就选入，与原始的数据脚本
# 一致；选中的每个词元仍各自按 80/10/10 处理。

# %% [markdown] lang="ja"
# ### 全単語マスキング
#
# BERT は中国語のテキストを 1 文字ずつに切るので、2 文字の中国語の単語は 2 つのトークンになり、その
# 一方だけをマスクしても、もう一方は丸見えのままです。「球」（ボール）が見えていれば、「球队」（チー
# ム）の「队」は簡単に推測できます。中国語の BERT-wwm モデル（Cui ら、2019）は代わりに**単語全体**を
# マスクし、単語は単語分割器で求めます（彼らは LTP を使い、ここでは `jieba` を使います）。オリジナル
# の BERT も、後のリリースで WordPiece について同じことをしています。1 つの単語の `##` サブワードを
# まとめてマスクするのです。`mask_tokens(..., words=...)` は各トークンが属する単語を受け取ります
# （`<cls>`/`<sep>` は `None`）。`bertlib.text.words.word_ids` は、`##` サブワードを前の部分とまと
# め、jieba が見つけた単語ごとに漢字をまとめて、テキストからそれを計算します。オリジナルのデータ作成
# スクリプトと同じように、単語全体をランダムな順序で引き、トークンの 15% という同じ予算に収まる限り
# 選んでいきます。選ばれた各トークンは、やはりそれぞれ 80/10/10 で扱われます。
#
# 日本語も、中国語と同じく単語の間に空白を入れずに書きます。BERT のトークナイザは漢字を 1 字ずつに分
# けますが、かなは分けないので、空白のない日本語では、トークンの境界は単語の境界と一致しません（ノー
# トブック 02 で見たとおり、かなの連なりはひとまとまりの「単語」として扱われます）。そのため日本語で
# 学習した BERT は、文を 1 文字ずつの単位に切るか、MeCab のような形態素解析器でまず単語に分割してか
# ら WordPiece を適用します。文字単位なら、漢字もかなも 1 文字が 1 トークンになり、中国語と同じく、
# 2 文字の単語の一方をマスクしても、もう一方が答えを教えてしまいます。したがって日本語で単語全体をマ
# スクするには、中国語の jieba にあたる単語分割器、たとえば MeCab や SudachiPy が見つける単語の境界
# が必要です。このノートブックのモデルは日本語を知らないのでここでは試しませんが、`mask_tokens(...,
# words=...)` には単語の番号さえ渡せばよいので、仕組みは同じです。

# %%
sentence = "后来小明抓住机会，为球队得了分。"
print(segment(sentence))  # jieba's words
enc = encode_pair(tokenizer, sentence)
words = [None, *word_ids(tokenizer, sentence), None]  # <cls> and <sep> belong to no word
print(list(zip(enc.tokens, words, strict=True)))
for seed in range(3):
    per_char = mask_tokens(enc.ids, vocab, mask_ratio=0.3, seed=seed)
    whole = mask_tokens(enc.ids, vocab, mask_ratio=0.3, seed=seed, words=words)
    print(tr("seed {seed}  per character: {per_char}  whole words: {whole}",
             seed=seed, per_char=vocab.to_tokens(per_char.labels),
             whole=vocab.to_tokens(whole.labels)))

# %% [markdown] lang="en"
# What the model has to predict changes with it. The small BERT of these notebooks was
# pretrained with per-character masking. Take every two-character word of the first 200
# held-out Chinese sentences, mask its second character alone, then the whole word, and ask
# the model for that second character each time:

# %% [markdown] lang="zh"
# 模型要预测的内容也随之改变。自带模型预训练时用的是逐字掩蔽。在留出的前 200 个中文句子中，取出每个
# 两字词，先只掩蔽它的第二个字，再掩蔽整个词，两次都让模型预测这第二个字：

# %% [markdown] lang="ja"
# それに伴って、モデルが予測しなければならないものも変わります。付属モデルは、文字単位のマスキングで
# 事前学習しています。ホールドアウトの中国語の文の最初の 200 個に含まれる 2 文字の単語をすべて取り出
# し、まず 2 文字目だけを、次に単語全体をマスクして、どちらの場合もモデルにその 2 文字目を予測させま
# す。

# %%
chinese_sentences = [sentence for paragraph, lang in zip(corpus.held_out, corpus.held_out_langs,
                                                         strict=True)
                     if lang == "zh" for sentence in paragraph][:200]
one_char, whole_word, targets = [], [], []  # inputs, and (position, original id) in each
for sentence in chinese_sentences:
    enc = encode_pair(tokenizer, sentence)
    words = [None, *word_ids(tokenizer, sentence), None]
    for word in sorted({w for w in words if w is not None}):
        pieces = [i for i, w in enumerate(words) if w == word]
        if len(pieces) != 2:  # two-character words only
            continue
        first, second = pieces
        masked = list(enc.ids)
        masked[second] = vocab.mask_id
        one_char.append(dataclasses.replace(enc, ids=masked))
        masked = list(masked)
        masked[first] = vocab.mask_id  # its partner as well
        whole_word.append(dataclasses.replace(enc, ids=masked))
        targets.append((second, enc.ids[second]))

print(tr("two-character words in {s} held-out Chinese sentences: {n}",
         s=len(chinese_sentences), n=len(targets)))
second_positions = torch.tensor([[pos] for pos, _ in targets])  # (N, 1)
second_originals = torch.tensor([original for _, original in targets])  # (N,)
for name, inputs in ((tr("partner visible"), one_char), (tr("whole word masked"), whole_word)):
    _, guesses, _ = model(*stack_inputs(inputs, vocab.pad_id), second_positions)
    p = guesses[:, 0].softmax(-1)  # (N, V)
    print(tr("{name}: top guess right {right:.1%}, mean P(original) {p:.3f}", name=name,
             right=(p.argmax(-1) == second_originals).float().mean().item(),
             p=p.gather(1, second_originals[:, None]).mean().item()))

# %% [markdown] lang="en"
# With the partner in view, the model's top guess is right more often and the original gets
# more probability; with the whole word hidden, the model has to work the word out from the
# sentence around it alone. That is the harder, more useful task whole-word masking sets. (The
# sentences of the small corpus are short and repetitive, which may be why the sentence alone
# still gives many words away.)

# %% [markdown] lang="zh"
# 同伴字可见时，模型的首选预测更常猜中，原字得到的概率也更高；整个词都掩蔽掉以后，模型只能根据周围的
# 句子把这个词推断出来。全词掩蔽设下的正是这样一个更难、也更有用的任务。（这个小语料库里的句子短小又
# 重复，也许正因为如此，单凭句子仍能猜出许多词。）

# %% [markdown] lang="ja"
# 相方の文字が見えていると、モデルの第一候補が当たることが多くなり、元の文字に与える確率も高くなりま
# す。単語全体が隠れていると、モデルは周りの文だけから単語を推し量らなければなりません。全単語マスキ
# ングが課すのは、この、より難しく、より役に立つタスクです。（小さなコーパスの文は短く繰り返しが多
# いので、そのせいで文だけからでも多くの単語がわかってしまうのかもしれません。）

# %% [markdown] lang="en"
# ## Summary
#
# * MLM picks `max(1, round(0.15 * len(tokens)))` positions, `<cls>`/`<sep>` counted in the
#   length but never chosen, a half rounded to the even integer; it corrupts them 80/10/10 into
#   `<mask>` / a random word / unchanged; the labels are the original tokens.
# * `MaskLM` gathers the prediction positions with `X[batch_idx, pred_positions]`,
#   `(B, T, H)` → `(B, P, H)`, then scores the vocabulary: `(B, P, V)`.
# * The MLM loss is a weighted mean over real slots; weighting only works on per-slot losses
#   (`reduction="none"`).
# * Going further: in a bilingual vocabulary a third of the random words in an English sentence
#   are Chinese, corruptions the model can spot from the script alone; whole-word masking hides
#   all pieces of a word together (`mask_tokens(..., words=...)`), so a Chinese word cannot be
#   read off its other character.

# %% [markdown] lang="zh"
# ## 小结
#
# * 掩蔽语言模型选出 `max(1, round(0.15 * len(tokens)))` 个位置：`<cls>`/`<sep>` 计入长度但从不被选
#   中，恰好在两个整数中间时取偶数；再按 80/10/10 把它们替换为 `<mask>`、随机词元或保持不变；标签是
#   原来的词元。
# * `MaskLM` 用 `X[batch_idx, pred_positions]` 取出预测位置上的向量，`(B, T, H)` → `(B, P, H)`，再为
#   词表打分：`(B, P, V)`。
# * 掩蔽语言模型的损失是真实位置上的加权平均；只有对逐位置的损失（`reduction="none"`）加权才有效。
# * 更进一步：在双语词表中，英文句子里的随机词元有三分之一是汉字，模型单看文字种类就能识破这些替
#   换；全词掩蔽把一个词的所有词元一起掩蔽（`mask_tokens(..., words=...)`），这样中文词就没法凭另一
#   个字猜出来了。

# %% [markdown] lang="ja"
# ## まとめ
#
# * マスク言語モデルは `max(1, round(0.15 * len(tokens)))` 個の位置を選びます。`<cls>`/`<sep>` は長
#   さには数えますが選ばれることはなく、ちょうど中間の値は偶数に丸めます。選んだ位置は 80/10/10 で
#   `<mask>`、ランダムな単語、そのまま、のいずれかにし、ラベルは元のトークンです。
# * `MaskLM` は `X[batch_idx, pred_positions]` で予測位置を取り出し（`(B, T, H)` → `(B, P, H)`）、語
#   彙にスコアを付けます：`(B, P, V)`。
# * マスク言語モデルの損失は、実在の位置での重み付き平均です。重み付けが働くのは、予測位置ごとの損失
#   （`reduction="none"`）に対してだけです。
# * さらに先へ：2 言語の語彙では、英語の文に入るランダムな単語の 3 分の 1 が漢字で、モデルは文字の種
#   類だけでそれを見破れます。全単語マスキングは 1 つの単語のすべてのトークンをまとめて隠す
#   （`mask_tokens(..., words=...)`）ので、中国語の単語をもう一方の字から読み取ることはできません。
#   日本語でも同じで、単語の境界を知るには MeCab や SudachiPy のような単語分割器が必要です。

# %% [markdown] lang="en"
# ## Exercises
#
# 1. ★ **Count.** BERT-Base was pretrained mostly on sequences of 128 tokens (notebook 06). How
#    many prediction positions does `mask_tokens` choose in a sequence of `<cls>`, 126 word pieces
#    and `<sep>`? Check below.
# 2. ★★ The 80/10/10 section gives the reason not to always use `<mask>`. Why, then, not replace
#    20% by random words instead of keeping 10% unchanged? Argue from what the model sees at
#    fine-tuning time, and from what it could learn about an unchanged token.
# 3. ★ Call `mask_tokens(ids, vocab, mask_ratio=0.5, seed=0)`. What would happen to the quality
#    of the context if half the tokens were corrupted?
# 4. ★★ **Implement it: the gather.** `gather(X, pred_positions)`, in "The MLM head: gather,
#    then predict", in the cell before the answer (write yours first). Then write it a third
#    way: flatten `X` to `(B * T, H)` and offset the positions of sequence b by `b * T`, which
#    neither bertlib nor the chapter does.
# 5. ★★★ Remove the second-language shortcut: how would you change `mask_tokens` so that a
#    random replacement comes from the sentence's own language? What do you need to know about
#    each vocabulary entry, and what about tokens such as digits or punctuation that belong to
#    neither language?

# %% [markdown] lang="zh"
# ## 练习
#
# 1. ★ **数一数。** BERT-Base 的预训练大多用 128 个词元的序列（见笔记本 06）。对于由 `<cls>`、126 个
#    子词和 `<sep>` 组成的序列，`mask_tokens` 会选出多少个预测位置？在下面检查你的答案。
# 2. ★★ 讲 80/10/10 的那一节已经说明了为什么不总是使用 `<mask>`。那么，为什么不把 20% 替换为随机
#    词，而要保留 10% 不变？请从模型在微调时看到的输入，以及它能从未改动的词元学到什么来论证。
# 3. ★ 调用 `mask_tokens(ids, vocab, mask_ratio=0.5, seed=0)`。如果一半的词元都被破坏，上下文的质量
#    会怎样？
# 4. ★★ **动手实现：取出操作。** `gather(X, pred_positions)` 在“掩蔽语言模型的输出层：先取出，再预
#    测”一节中，位于答案之前的单元格里（请先写好你自己的）。然后再换第三种写法：把 `X` 展平成
#    `(B * T, H)`，再给第 b 个序列的位置加上 `b * T`；bertlib 和本章都不是这样做的。
# 5. ★★★ 去掉第二语言捷径：要让随机词元来自句子本身的语言，你会怎样修改 `mask_tokens`？你需要知道
#    词表中每个词元的什么信息？数字、标点这类不属于任何一种语言的词元又该怎么办？

# %% [markdown] lang="ja"
# ## 演習
#
# 1. ★ **数えてみよう。** BERT-Base は主に 128 トークンのシーケンスで事前学習されました（ノートブッ
#    ク 06）。`<cls>`、126 個のサブワード、`<sep>` からなるシーケンスで、`mask_tokens` が選ぶ予測位
#    置はいくつでしょうか。下で確かめてください。
# 2. ★★ 常に `<mask>` を使わない理由は 80/10/10 の節で述べました。では、10% をそのままにする代わり
#    に、20% をランダムな単語に置き換えないのはなぜでしょうか。ファインチューニングのときにモデルが
#    目にするものと、変えられなかったトークンからモデルが学べることから論じてください。
# 3. ★ `mask_tokens(ids, vocab, mask_ratio=0.5, seed=0)` を呼んでみてください。トークンの半分が壊さ
#    れたら、文脈の質はどうなるでしょうか。
# 4. ★★ **実装してみよう：取り出し。** `gather(X, pred_positions)` は「マスク言語モデルの出力層：取
#    り出してから予測する」の節で、答えの前のセルにあります（先に自分の答えを書いてください）。その
#    後、3 つ目の書き方も試しましょう。`X` を `(B * T, H)` に平坦化し、シーケンス b の位置を `b * T`
#    だけずらす方法は、bertlib も章も使っていません。
# 5. ★★★ もう一方の言語という近道をなくしましょう。ランダムな置き換えが文自身の言語から来るようにす
#    るには、`mask_tokens` をどう変えればよいでしょうか。語彙の各項目について何を知る必要があるで
#    しょうか。数字や句読点のように、どちらの言語にも属さないトークンはどうすればよいでしょうか。

# %%
answer = None  # your answer to exercise 1: an integer
check_exercise("04_num_preds", answer)

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 2: Why keep some tokens unchanged</summary>
#
# * At fine-tuning time every input token is real text and is right. The unchanged tokens are the
#   only prediction positions where the right output is the very token the model reads. Without
#   them, a prediction position would always hold `<mask>` or a wrong word, and the loss would never
#   reward a vector that keeps the token's own identity: the model could learn to discount the token
#   at a position and build its vector from the context alone, which is the wrong habit for
#   fine-tuning.
# * More random words would also corrupt more of the context that the other predictions read, and,
#   since the model cannot tell which visible tokens are prediction positions, teach it to distrust
#   every word it sees a little more. Keeping a share unchanged tells it that a visible word is
#   usually right, but not always.
#
# </details>
#
# <details><summary>Exercise 3: Masking half the tokens</summary>
#
# With `mask_ratio=0.5`, half of the tokens are chosen (`<cls>` and `<sep>` still never), and most
# of them become `<mask>`. Each prediction then has only about half of its neighbours intact, often
# with masks side by side, so many targets become ambiguous: several words fit, and the context left
# cannot decide. The model gets more targets per sequence, but each is a noisier signal, and its
# input looks even less like the real text of fine-tuning. The 15% is a compromise between too few
# targets per sequence, which makes training slow, and too little context per target.
#
# </details>
#
# <details><summary>Exercise 5: Replacements from the sentence's own language</summary>
#
# * Give every entry of `vocab.word_ids` a language once, from its characters (`##` removed):
#   Chinese for a Chinese character, English for Latin letters, none for digits and punctuation.
#   Keep one list of ids per language.
# * In `mask_tokens`, find the language of the sequence, or of each segment, from the languages of
#   its tokens (the majority), and draw the random word from that language's list with the same
#   generator, so that a seed still gives the same mask.
# * Tokens of neither language occur in both: put them in both lists, so that a digit can replace a
#   word in either language and a word can replace a digit. What the model must not get is a
#   replacement whose script alone gives it away.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 请先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 2：为什么要保留一些词元不变</summary>
#
# * 微调时，输入的每个词元都是真实的文本，都是对的。在所有预测位置中，只有保持不变的那些，正确的输出
#   恰好就是模型读到的那个词元。如果没有它们，预测位置上要么是 `<mask>`，要么是错误的词，损失永远不
#   会奖励保留词元本身信息的向量：模型可能学会忽视一个位置上的词元，只凭上下文构造它的向量，而这对微
#   调是坏习惯。
# * 更多的随机词还会破坏更多的上下文，而其他预测都要读取这些上下文；又因为模型不知道哪些看得见的词元
#   是预测位置，它会学着对看到的每个词都更不信任一些。保留一部分不变，等于告诉模型：看得见的词通常是
#   对的，但并不总是对的。
#
# </details>
#
# <details><summary>练习 3：掩蔽一半的词元</summary>
#
# 设 `mask_ratio=0.5` 时，一半的词元被选中（`<cls>` 和 `<sep>` 仍然不会被选中），其中大多数变成
# `<mask>`。每个预测位置的邻居只剩一半左右完好无损，而且常有几个掩码挨在一起，于是许多预测目标变得模
# 棱两可：好几个词都说得通，剩下的上下文定不下来。模型从每个序列得到的预测目标更多了，但每个目标提供
# 的信号噪声更大，输入也更不像微调时的真实文本。15% 是一种折中：每个序列的预测目标太少，训练就慢；每
# 个目标的上下文太少，预测就难以确定。
#
# </details>
#
# <details><summary>练习 5：从句子本身的语言中抽取替换词</summary>
#
# * 事先根据字符（去掉 `##`）给 `vocab.word_ids` 中的每个词元标上语言：汉字标为中文，拉丁字母标为英
#   文，数字和标点不属于任何一种语言。为每种语言各建一个词元索引列表。
# * 在 `mask_tokens` 中，根据序列（或每个片段）中词元的语言（取多数）确定它的语言，再用同一个生成器
#   从这种语言的列表中抽取随机词，这样同一个随机种子仍然得到同样的掩蔽结果。
# * 不属于任何一种语言的词元在两种语言中都会出现：把它们放进两个列表，这样数字可以替换任何一种语言中
#   的词，词也可以替换数字。要避免的，是单凭文字种类就能识破的替换词。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# どの演習も、まず自分で解いてから解答を開いてください。
#
# <details><summary>演習 2：一部のトークンをそのまま残す理由</summary>
#
# * ファインチューニングのとき、入力のトークンはすべて本物のテキストで、正しいものです。予測位置のう
#   ち、正しい出力がモデルの読んでいるトークンそのものになるのは、そのまま残したトークンだけです。そ
#   れがなければ、予測位置にはいつも `<mask>` か誤った単語があることになり、トークン自身の情報を保つ
#   ベクトルが損失で報われることはありません。モデルは、その位置のトークンを軽んじて文脈だけからベク
#   トルを作ることを覚えるかもしれず、それはファインチューニングにとって悪い癖です。
# * ランダムな単語が増えると、ほかの予測が読む文脈もそれだけ壊れます。しかも、見えているトークンのど
#   れが予測位置なのかモデルにはわからないので、見える単語すべてを少しずつ疑うように学んでしまいま
#   す。一部をそのまま残すことで、見える単語はたいてい正しいが、いつもではない、とモデルに教えるので
#   す。
#
# </details>
#
# <details><summary>演習 3：トークンの半分をマスクする</summary>
#
# `mask_ratio=0.5` では、トークンの半分が選ばれ（`<cls>` と `<sep>` はやはり選ばれません）、その大部
# 分が `<mask>` になります。各予測位置では隣のトークンのおよそ半分しか無傷で残らず、マスクが並ぶこと
# も多いので、多くの予測対象があいまいになります。当てはまる単語がいくつもあり、残った文脈では決めら
# れないのです。シーケンスあたりの予測対象は増えますが、1 つ 1 つの信号はノイズが多くなり、入力はフ
# ァインチューニングのときの本物のテキストからさらに遠ざかります。15% は、シーケンスあたりの予測対象
# が少なすぎて学習が遅くなることと、予測対象あたりの文脈が少なすぎることとの折り合いです。
#
# </details>
#
# <details><summary>演習 5：文自身の言語から置き換えを引く</summary>
#
# * `vocab.word_ids` の各項目に、文字（`##` を除く）から一度だけ言語を付けておきます。漢字なら中国
#   語、ラテン文字なら英語、数字と句読点はどちらでもありません。言語ごとにインデックスのリストを作り
#   ます。
# * `mask_tokens` では、シーケンス（または各セグメント）の言語をそのトークンの言語の多数決で決め、同
#   じ生成器でその言語のリストからランダムな単語を引きます。こうすれば、同じ乱数シードからは同じマス
#   クが得られます。
# * どちらの言語にも属さないトークンは両方の言語に現れるので、両方のリストに入れます。数字がどちらの
#   言語の単語とも置き換わり、単語が数字とも置き換わるようにするのです。避けるべきなのは、文字の種類
#   だけで見破れる置き換えです。
#
# </details>

# %% [raw] strings="zh"
# "chosen per position: min {low}, max {high}, expected {expected:.1f}"
# "每个位置被选中的次数：最少 {low}，最多 {high}，期望 {expected:.1f}"
#
# "chosen <cls>, <sep>: {cls} {sep}"
# "<cls> 和 <sep> 被选中的次数：{cls}、{sep}"
#
# "(expected {share})"
# "（期望 {share}）"
#
# "seed {seed}  per character: {per_char}  whole words: {whole}"
# "随机种子 {seed}  逐字掩蔽：{per_char}  全词掩蔽：{whole}"
#
# "{name}: top guess right {right:.1%}, mean P(original) {p:.3f}"
# "{name}：首选预测正确 {right:.1%}，原字的平均概率 {p:.3f}"
#
# "two-character words in {s} held-out Chinese sentences: {n}"
# "{s} 个留出的中文句子中的两字词：{n} 个"
#
# "{n:3} tokens: 0.15 × {n} = {x:<5} -> {k} positions"
# "{n:3} 个词元：0.15 × {n} = {x:<5} -> {k} 个预测位置"
#
# "ordinary words in the vocabulary: {n}, Chinese: {zh} ({share:.1%})"
# "词表中的普通词元：{n} 个，其中中文 {zh} 个（{share:.1%}）"
#
# "random replacements in {s} held-out English sentences ({r} draws each): {n}, Chinese: {zh} ({share:.1%})"
# "{s} 个留出的英文句子（每句抽样 {r} 次）中的随机替换：{n} 个，其中换成中文的 {zh} 个（{share:.1%}）"
#
# "{kind} replacement: original recovered {right}/{n} = {share:.1%}, mean P(the replacement itself) {trust:.2%}"
# "替换词为{kind}：猜中原词元 {right}/{n} = {share:.1%}，替换词本身得到的平均概率 {trust:.2%}"
#
# "Chinese"
# "中文"
#
# "non-Chinese"
# "非中文"
#
# "partner visible"
# "同伴字可见"
#
# "whole word masked"
# "整个词都掩蔽"
#
# "masked"
# "掩码词元"
#
# "random word"
# "随机词元"
#
# "unchanged"
# "保持不变"
#
# "the same as gathered"
# "与 gathered 完全相同"
#
# "not the same"
# "与 gathered 不同"

# %% [raw] strings="ja"
# "chosen per position: min {low}, max {high}, expected {expected:.1f}"
# "各位置が選ばれた回数：最少 {low}、最多 {high}、期待値 {expected:.1f}"
#
# "chosen <cls>, <sep>: {cls} {sep}"
# "<cls> と <sep> が選ばれた回数：{cls}、{sep}"
#
# "(expected {share})"
# "（期待値 {share}）"
#
# "seed {seed}  per character: {per_char}  whole words: {whole}"
# "乱数シード {seed}  文字単位：{per_char}  全単語：{whole}"
#
# "{name}: top guess right {right:.1%}, mean P(original) {p:.3f}"
# "{name}：第一候補の正解率 {right:.1%}、元の文字の平均確率 {p:.3f}"
#
# "two-character words in {s} held-out Chinese sentences: {n}"
# "ホールドアウトの中国語の文 {s} 個に含まれる 2 文字の単語：{n} 個"
#
# "{n:3} tokens: 0.15 × {n} = {x:<5} -> {k} positions"
# "{n:3} トークン：0.15 × {n} = {x:<5} -> 予測位置 {k} 個"
#
# "ordinary words in the vocabulary: {n}, Chinese: {zh} ({share:.1%})"
# "語彙の通常の単語：{n} 個、うち中国語 {zh} 個（{share:.1%}）"
#
# "random replacements in {s} held-out English sentences ({r} draws each): {n}, Chinese: {zh} ({share:.1%})"
# "ホールドアウトの英語の文 {s} 個（各 {r} 回抽選）でのランダムな置き換え：{n} 個、うち中国語 {zh} 個（{share:.1%}）"
#
# "{kind} replacement: original recovered {right}/{n} = {share:.1%}, mean P(the replacement itself) {trust:.2%}"
# "{kind}の置き換え：元のトークンを当てた数 {right}/{n} = {share:.1%}、置き換えたトークン自体の平均確率 {trust:.2%}"
#
# "Chinese"
# "中国語"
#
# "non-Chinese"
# "中国語以外"
#
# "partner visible"
# "相方の文字が見える"
#
# "whole word masked"
# "単語全体をマスク"
#
# "masked"
# "マスクトークン"
#
# "random word"
# "ランダムなトークン"
#
# "unchanged"
# "そのまま"
#
# "the same as gathered"
# "gathered と同じ"
#
# "not the same"
# "gathered と異なる"
