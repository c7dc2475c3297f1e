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
# # 08 · Evaluating honestly
#
# *[中文版](../zh/08_evaluation.ipynb) · [日本語](../ja/08_evaluation.ipynb) ·
# [Index](00_index.ipynb)*
#
# Notebook 06 pretrained a small model for under a minute and showed the full run of the small
# BERT that ships with `bertlib`. What did that model learn? This notebook measures it, and
# asks what the numbers mean. It loads the shipped model (`load_small_bert`), not the one that
# notebook 06 trained: every notebook runs on its own from a fresh kernel, and the short run
# there learned far less than the shipped model.
#
# You will:
# 1. measure NSP and MLM accuracy on held-out paragraphs, each figure with a 95% confidence
#    interval, next to baselines;
# 2. look at the model's guesses for masked tokens in English and Chinese, and at its encodings
#    from `get_bert_encoding`;
# 3. going further: see the NSP shortcut that shaped the training recipe, and how the shipped
#    model judges the pairs that offer it; find what hides behind the MLM accuracy: sentence
#    templates seen in training.

# %% [markdown] lang="zh"
# # 08 · 如实评估
#
# [English](../en/08_evaluation.ipynb) · [日本語](../ja/08_evaluation.ipynb) ·
# [目录](00_index.ipynb)
#
# 笔记本 06 用不到一分钟预训练了一个小模型，还展示了项目自带的小 BERT（随 `bertlib` 一起提供）的完整
# 训练过程。这个模型到底学到了什么？本笔记本就来测一测，并追问这些数字意味着什么。我们加载的是自带模
# 型（`load_small_bert`），而不是笔记本 06 训练的那个：每个笔记本都在一个新的内核中独立运行，况且那
# 次短暂的训练学到的远不如自带模型。
#
# 你将会：
# 1. 在留出的段落上测量下一句预测和掩蔽语言模型的准确率，每个数字都附上 95% 置信区间，并与基线比较；
# 2. 看看模型怎样猜测英文和中文句子中被掩蔽的词元，再看看 `get_bert_encoding` 给出的编码；
# 3. 更进一步：看一看影响了训练配置的那条下一句预测捷径，以及自带模型如何判断那些可以走捷径的句子
#    对；再找出掩蔽语言模型的准确率背后藏着什么：训练中见过的句子模板。

# %% [markdown] lang="ja"
# # 08 · 正直に評価する
#
# *[English](../en/08_evaluation.ipynb) · [中文](../zh/08_evaluation.ipynb) ·
# [目次](00_index.ipynb)*
#
# ノートブック 06 では、小さなモデルを 1 分足らず事前学習し、`bertlib` に付属する小さな BERT の学
# 習全体を見ました。そのモデルは何を学んだのでしょうか。このノートブックではそれを測り、その数字が何
# を意味するのかを考えます。読み込むのは付属モデル（`load_small_bert`）で、ノートブック 06 で学習さ
# せたモデルではありません。どのノートブックも新しいカーネルで単独で動くようにしてあり、また、06 の
# 短い学習で学べたことは付属モデルよりずっと少ないからです。
#
# このノートブックでは、次のことを行います。
# 1. ホールドアウトの段落で次文予測とマスク言語モデルの正解率を測り、それぞれに 95% 信頼区間を付け
#    て、ベースラインと並べます。
# 2. 英語と中国語でマスクしたトークンに対するモデルの予測を見て、`get_bert_encoding` によるエンコー
#    ディングも見ます。
# 3. さらに先へ：学習設定を形づくった次文予測の近道と、その近道が使えるペアを付属モデルがどう判定す
#    るかを見ます。また、マスク言語モデルの正解率の裏に隠れているもの、つまり学習で見た文テンプレー
#    トを見つけます。
#
# このノートブックのモデルとコーパスは英語と中国語で、日本語は学習していません。そのため、モデルに入
# 力する例文は英語と中国語のままにしてあります。

# %%
import re

import torch
from IPython.display import display

from bertlib import (
    IS_NEXT,
    evaluate_pretraining,
    get_bert_encoding,
    get_tokens_and_segments,
    load_small_bert,
    load_small_corpus,
    make_pretrain_data,
    tokenize_paragraphs,
)
from bertlib.analysis.evidence import attention_norms, attention_on_neighbours, heads_switched_off
from bertlib.assets import small_bert_metrics
from bertlib.classroom.exercises import check_exercise
from bertlib.finetuning.finetune import Accuracy
from bertlib.support.i18n import table, tr
from bertlib.viz import AttentionWidget
from bertlib.viz.listing import show_source

# %%
# One thread: the printed numbers then come out the same on any number of cores.
torch.set_num_threads(1)

# %% [markdown] lang="en"
# ## The model and its data
#
# The shipped model was trained by `scripts/pretrain_small.py` on the training paragraphs of
# the bilingual corpus; `load_small_corpus` gives the same split, with 10% of each language's
# paragraphs held out, which the model never saw. `metrics.json` records the run:

# %% [markdown] lang="zh"
# 自带模型是用 `scripts/pretrain_small.py` 在双语语料库的训练段落上训练出来的；`load_small_corpus`
# 给出同样的划分：每种语言留出 10% 的段落，模型从未见过这些段落。`metrics.json` 记录了这次训练：

# %% [markdown] lang="ja"
# ## モデルとデータ
#
# 付属モデルは `scripts/pretrain_small.py` によって、2 言語のコーパスの学習用の段落で学習しました。
# `load_small_corpus` は同じ分割を返し、各言語の段落の 10% はホールドアウトとして取り分けてありま
# す。モデルはこれを一度も見ていません。`metrics.json` には学習の記録があります。

# %%
small_bert, tokenizer = load_small_bert()
vocab = tokenizer.vocab
split = load_small_corpus()
metrics = small_bert_metrics()
recipe, minutes = metrics["recipe"], round(metrics["training"]["seconds"] / 60)
print(tr("the shipped small BERT: {steps} steps, {minutes} min, on {paragraphs} training "
         "paragraphs with {sentences:,} sentences",
         steps=recipe["num_steps"], minutes=minutes, paragraphs=len(split.train),
         sentences=sum(len(p) for p in split.train)))

# %% [markdown] lang="en"
# ## Held-out accuracy, with a confidence interval
#
# `evaluate_pretraining` measures NSP accuracy and MLM top-1 accuracy (the most probable token
# is the original one) on the held-out paragraphs, paired and masked as in training, and two
# baselines: always answering the more frequent NSP label, and always guessing the most frequent
# token for MLM (the best any constant guess can do).
#
# An accuracy measured on a few hundred pairs is itself a random quantity: another draw of pairs and
# masks would give a slightly different number. So every figure below comes with a 95% Wilson
# confidence interval, from `Accuracy(hits, n)` in `bertlib.finetuning.finetune` (notebook 10 uses
# it for fine-tuning too). Unlike value ± 1.96 standard errors it stays inside [0, 1].

# %% [markdown] lang="zh"
# ## 留出数据上的准确率及其置信区间
#
# `evaluate_pretraining` 像训练时一样对留出的段落构造句子对并做掩蔽，然后测量下一句预测的准确率，以
# 及掩蔽语言模型的准确率（概率最高的预测正是原来的词元才算对），并给出两个基线：下一句预测总是回答较
# 多的那个标签，掩蔽语言模型总是猜最常见的词元（任何固定不变的猜测都不会比它更好）。
#
# 在几百个句子对上测得的准确率本身也是一个随机量：换一次句子对和掩蔽的抽样，就会得到略有不同的
# 数字。所以下面的每个数字都附有 95% 的 Wilson 置信区间，由 `bertlib.finetuning.finetune` 中的
# `Accuracy(hits, n)` 计算（笔记本 10 在微调时也用它）。与“值 ± 1.96 倍标准误差”不同，它
# 不会超出 [0, 1]。

# %% [markdown] lang="ja"
# ## ホールドアウトデータでの正解率と信頼区間
#
# `evaluate_pretraining` は、ホールドアウトの段落を学習のときと同じようにペアにしてマスクをかけ、次
# 文予測の正解率とマスク言語モデルの正解率（確率が最大のトークンが元のトークンなら正解）を測ります。
# あわせて 2 つのベースラインも測ります。次文予測では常に多いほうのラベルを答える場合、マスク言語モ
# デルでは常に最も頻度の高いトークンを答える場合（一定の答えで到達できる最高の値）です。
#
# 数百組のペアで測った正解率は、それ自体が確率的な量です。ペアとマスクを引き直せば、少し違う数字にな
# るでしょう。そこで下の数字にはすべて、`bertlib.finetuning.finetune` の `Accuracy(hits, n)` による
# 95% の Wilson 信頼区間を付けます（ノートブック 10 のファインチューニングでも使います）。値 ± 1.96
# × 標準誤差とは違って、この区間は [0, 1] の外に出ません。

# %%
held_out_paragraphs = tokenize_paragraphs(split.held_out, tokenizer.tokenize)
held_out = make_pretrain_data(held_out_paragraphs, vocab, max_len=recipe["max_len"],
                              seed=recipe["held_out_data_seed"], groups=split.held_out_langs)
scores = evaluate_pretraining(small_bert, held_out)


def counted(share: float, n: int) -> Accuracy:
    """A share of n examples as hits out of n, with its 95% Wilson interval."""
    return Accuracy(round(share * n), n)


pairs, slots = scores["pairs"], scores["mlm_slots"]
is_next = int((held_out.nsp_labels == IS_NEXT).sum())
print(tr("held out: pairs {pairs}  MLM slots {slots}", pairs=pairs, slots=slots))
rows = []
for name, accuracy in (
        (tr("NSP accuracy"), counted(scores["nsp_accuracy"], pairs)),
        (tr("  on IsNext pairs"), counted(scores["nsp_accuracy_is_next"], is_next)),
        (tr("  on NotNext pairs"), counted(scores["nsp_accuracy_not_next"], pairs - is_next)),
        (tr("NSP: always the more frequent label"),
         counted(scores["nsp_majority_baseline"], pairs)),
        (tr("MLM accuracy"), counted(scores["mlm_accuracy"], slots)),
        (tr("MLM: always the most frequent token"),
         counted(scores["mlm_majority_baseline"], slots))):
    rows.append([name, f"n = {accuracy.n:4}", accuracy])
print(table(rows))
same = all(round(scores[k], 3) == round(metrics["held_out"][k], 3)
           for k in ("nsp_accuracy", "mlm_accuracy"))
print(tr("the same as in metrics.json") if same else tr("not the same as in metrics.json"))

# %% [markdown] lang="en"
# Both accuracies are far above their baselines, and far outside what the draw could explain:
# NSP 0.841 with the interval [0.821, 0.860], against 0.509 for always giving the more frequent
# label; MLM 0.880 [0.871, 0.889], against 0.050 for always guessing the most frequent token.
# The NSP head is far from even-handed: it accepts true continuations (0.994) much more often
# than it rejects false ones (0.694), and the two intervals are far apart. Each class rests on
# only about half the pairs, so its interval is wider than the overall one; the MLM interval, on
# 4746 slots, is the narrowest.
#
# An interval covers only the luck of the draw, and treats every pair or slot as an independent
# draw (slots of the same sentence are not quite). It says nothing about whether the held-out
# set measures what we want; the going-further sections at the end show two ways in which it
# does not.

# %% [markdown] lang="zh"
# 两个准确率都远高于各自的基线，也远远超出了抽样波动所能解释的范围：下一句预测的准确率为 0.841，置信
# 区间为 [0.821, 0.860]，而总回答较多的那个标签只有 0.509；掩蔽语言模型的准确率为 0.880（置信区间
# [0.871, 0.889]），而总猜最常见的词元只有 0.050。下一句预测的输出层远不是一视同仁：它接受“是下一
# 句”的句子对（0.994）比拒绝“不是下一句”的句子对（0.694）准得多，两个置信区间相距很远。每一类只有大
# 约一半的句子对，所以各自的置信区间比总体的宽；掩蔽语言模型的置信区间基于 4746 个预测位置，是最窄
# 的。
#
# 置信区间只考虑了抽样的偶然性，而且把每个句子对或预测位置都看作一次独立的抽样（同一个句子中的各个预
# 测位置其实并不完全独立）。至于留出数据测的是不是我们想测的东西，置信区间什么也说明不了；本笔记本末
# 尾“更进一步”中的两节给出了两个反例。

# %% [markdown] lang="ja"
# どちらの正解率もベースラインを大きく上回り、ペアの引き方の偶然では説明できないほど離れています。次
# 文予測は 0.841、区間は [0.821, 0.860] で、常に多いほうのラベルを答えた場合は 0.509 です。マスク言
# 語モデルは 0.880 [0.871, 0.889] で、常に最も頻度の高いトークンを答えた場合は 0.050 です。次文予測
# の出力層の判定は大きく偏っていて、正しい続きを受け入れる（0.994）ほうが、誤った続きを退ける
# （0.694）よりずっと得意です。2 つの区間は大きく離れています。各クラスはペアのおよそ半分にしか基づ
# かないので、その区間は全体の区間より広くなります。4746 個の予測位置に基づくマスク言語モデルの区間
# が最も狭くなります。
#
# 区間が扱うのは引き方の偶然だけで、しかもペアや予測位置の 1 つ 1 つを独立な抽出とみなしています（同
# じ文の予測位置は厳密には独立ではありません）。ホールドアウトデータが、測りたいものを本当に測ってい
# るかどうかについては何も言いません。最後の「さらに先へ」の節では、そうなっていない 2 つの例を示し
# ます。

# %% [markdown] lang="en"
# ## Filling in masked tokens
#
# To see the MLM head at work, we mask one token of a sentence and print the model's five most
# probable tokens for it. Some sentences come from the corpus, the others are new.

# %% [markdown] lang="zh"
# ## 填补被掩蔽的词元
#
# 为了看看掩蔽语言模型的输出层是怎样工作的，我们把句子中的一个词元掩蔽掉，并打印模型认为最可能填在这
# 里的五个词元。有些句子来自语料库，另一些是新句子。

# %% [markdown] lang="ja"
# ## マスクしたトークンを埋める
#
# マスク言語モデルの出力層の働きを見るために、文のトークンを 1 つマスクし、そこに入るトークンの確率
# 上位 5 つを表示します。コーパスにある文もあれば、新しい文もあります。

# %%
specials = vocab.specials
corpus_sentences = {s for paragraph in split.train + split.held_out for s in paragraph}


@torch.no_grad()
def fill_mask(sentence, target, k=5):
    """Mask the first `target` token of `sentence`; print the k most probable tokens there."""
    tokens, segments = get_tokens_and_segments(tokenizer.tokenize(sentence),
                                               cls_token=specials.cls, sep_token=specials.sep)
    position = tokens.index(target)
    tokens[position] = specials.mask
    _, mlm_Y_hat, _ = small_bert(torch.tensor([vocab[tokens]]), torch.tensor([segments]),
                                 pred_positions=torch.tensor([[position]]))
    top = mlm_Y_hat[0, 0].softmax(dim=-1).topk(k)  # mlm_Y_hat: (1, 1, V)
    guesses = ", ".join(f"{vocab.to_tokens(int(i))} {p:.2f}"
                        for p, i in zip(top.values, top.indices, strict=True))
    origin = tr("corpus") if sentence in corpus_sentences else tr("new")
    print(f"[{origin}] {' '.join(tokens[1:-1])}\n    -> {guesses}")


fill_mask("They carried the heavy boxes down the stairs.", "boxes")
fill_mask("On Sunday, Lucy bought a ticket at the station.", "ticket")
fill_mask("On Sunday, Lucy bought a ticket at the station.", "station")
fill_mask("她很早就到了车站，买好了车票。", "票")
fill_mask("医生让他多喝水，好好休息。", "医")
fill_mask("医生让他多喝水，好好休息。", "水")

# %% [markdown] lang="en"
# On the corpus sentences the model is confident and right. On the new sentences it is right
# where the words around the mask match a template: many corpus sentences begin with 医生让他
# ("the doctor told him to"), so 医 comes first in "…生让他", and in the corpus 多喝 ("drink
# plenty of") is followed by 水, so the reordered sentence gets 水 (0.98). Where the template is
# broken the model goes wrong. The corpus says "bought a ticket at the station early in the
# morning", but after "On Sunday, Lucy bought a" the model prefers *table* (0.72) to *ticket*
# (0.25), and for the station it is fairly sure of *list* (0.63). A model trained for 12 minutes
# on a corpus of template sentences knows its corpus, not English or Chinese.

# %% [markdown] lang="zh"
# 对语料库中的句子，模型很有把握，而且猜对了。对新句子，只有当被掩蔽词元周围的词与某个句子模板吻合时
# 它才猜得对：语料库中有许多以“医生让他”开头的句子，所以在“…生让他”中，“医”排在第一位；语料库中“多
# 喝”后面跟的是“水”，所以在调换了顺序的句子里，模型也猜出了“水”（0.98）。句子不再符合模板时，模型就
# 猜错了。语料库中的原句是“bought a ticket at the station early in the morning”，但在“On Sunday,
# Lucy bought a”之后，模型更倾向于 table（0.72）而不是 ticket（0.25）；在 station 的位置上，它相当
# 肯定地猜了 list（0.63）。这个模型只在由模板句子组成的语料库上训练了 12 分钟，它熟悉的是自己的语料
# 库，而不是英语或汉语。

# %% [markdown] lang="ja"
# コーパスの文では、モデルは自信を持って正しく答えます。新しい文で正しく答えられるのは、マスクのまわ
# りの単語がテンプレートに合っている場合です。コーパスには 医生让他（「医者は彼に……するよう言っ
# た」）で始まる文が多いので、「…生让他」の前には 医 が第一候補として来ます。またコーパスでは 多喝
# （「たくさん飲む」）の後に 水 が続くので、語順を変えた文でも 水 を予測します（0.98）。テンプレート
# が崩れたところでは、モデルは間違えます。コーパスでは "bought a ticket at the station early in the
# morning" ですが、"On Sunday, Lucy bought a" の後では *ticket*（0.25）より *table*（0.72）を選び、
# station の位置では *list* をかなり確信しています（0.63）。テンプレートの文からなるコーパスで 12 分
# 学習したモデルが知っているのは、自分のコーパスであって、英語や中国語ではないのです。

# %% [markdown] lang="en"
# ## BERT representations: `get_bert_encoding`
#
# After pretraining, the chapter uses the encoder's output as the representation of a text
# (`get_bert_encoding`): `(1, T, H)` for `<cls>` A `<sep>`, or for `<cls>` A `<sep>` B `<sep>`.
# The `<cls>` vector represents the whole input; every other row represents one token in its
# context. The chapter's demo encodes "a crane is flying"; here is a sentence from our corpus,
# alone and followed by a second sentence, and a pair in Chinese (one token per character):

# %% [markdown] lang="zh"
# ## BERT 表示：`get_bert_encoding`
#
# 预训练之后，本章把编码器的输出用作文本的表示（`get_bert_encoding`）：对 `<cls>` A `<sep>` 或
# `<cls>` A `<sep>` B `<sep>`，它的形状是 `(1, T, H)`。`<cls>` 的向量表示整个输入；其余每一行表示一
# 个词元在其上下文中的含义。本章的演示编码的是“a crane is flying”；这里用我们语料库中的一个句子，先
# 单独编码，再在后面接上第二个句子编码一次；最后编码一个中文句子对（每个汉字是一个词元）：

# %% [markdown] lang="ja"
# ## BERT の表現：`get_bert_encoding`
#
# 事前学習の後、章はエンコーダの出力をテキストの表現として使います（`get_bert_encoding`）。`<cls>`
# A `<sep>`、または `<cls>` A `<sep>` B `<sep>` に対して `(1, T, H)` です。`<cls>` のベクトルは入力
# 全体を表し、ほかの各行は文脈の中の 1 つのトークンを表します。章のデモでは "a crane is flying" を
# エンコードしています。ここでは、コーパスの文を単独で、また 2 つ目の文を続けてエンコードし、さらに
# 中国語のペア（1 文字 1 トークン）もエンコードします。

# %%
alone = get_bert_encoding(small_bert, tokenizer, "The train left at ten.")
pair = get_bert_encoding(small_bert, tokenizer, "The train left at ten.",
                         "It was full of people.")
chinese = get_bert_encoding(small_bert, tokenizer, "火车七点出发。", "车上的人很多。")
print(tr("shapes: one sentence {alone}, a pair {pair}, a Chinese pair {chinese}",
         alone=tuple(alone.shape), pair=tuple(pair.shape), chinese=tuple(chinese.shape)))
print(tr("<cls>  "), alone[0, 0, :3].numpy().round(3))  # the whole input
print(tr("train  "), alone[0, 2, :3].numpy().round(3))  # <cls> the train ...
print(tr("in pair"), pair[0, 2, :3].numpy().round(3))  # same token, more context

# %% [markdown] lang="en"
# The same token "train" gets a different vector once a second sentence is added: every vector
# depends on the whole input. One difference from the chapter: its `get_bert_encoding` calls the
# network as training left it, in training mode, so dropout is still on and the same text is
# encoded differently on every call. `bertlib`'s version switches to eval mode (and back):

# %% [markdown] lang="zh"
# 加上第二个句子之后，同一个词元“train”得到了不同的向量：每个向量都取决于整个输入。这里与本章有一处
# 不同：本章的 `get_bert_encoding` 直接调用训练结束时的网络，网络仍处于训练模式，dropout（暂退法）依
# 然打开，所以同一个文本每次调用得到的编码都不一样。`bertlib` 的版本会先切换到评估模式（用完再切换回
# 来）：

# %% [markdown] lang="ja"
# 同じトークン "train" でも、2 つ目の文を加えると別のベクトルになります。どのベクトルも入力全体に依
# 存するのです。章との違いが 1 つあります。章の `get_bert_encoding` は、学習が終わったときの状
# 態、つまり訓練モードのままネットワークを呼び出すので、ドロップアウトが有効なままで、同じテキストで
# も呼び出すたびに違うエンコーディングになります。`bertlib` の実装は評価モードに切り替えます（そして
# 元に戻します）。

# %%
show_source(get_bert_encoding)

# %% [markdown] lang="en"
# The chapter's version is the middle line alone. Here the text goes through the tokenizer and
# `encode_pair` first, and `eval_mode` switches dropout off for the call. Two calls on the same
# text, the chapter's way and `bertlib`'s. The shipped model was trained without dropout (its
# rate is 0), so for it training mode changes nothing, and both lines below find the same
# encoding twice; the chapter's model has dropout, and there the first line would find two
# different encodings:

# %% [markdown] lang="zh"
# 本章的版本只有中间那一行。这里的文本先经过分词器和 `encode_pair`，`eval_mode` 则在调用期间关闭
# dropout。下面按本章的做法和 `bertlib` 的做法，分别对同一个文本调用两次。自带模型训练时没有用
# dropout（暂退概率为 0），所以对它来说训练模式不会带来任何变化，下面两行得到的都是两次相同的编码；
# 本章的模型用了 dropout，换成它，第一行就会得到两个不同的编码：

# %% [markdown] lang="ja"
# 章の実装は真ん中の行だけです。ここではテキストがまずトークナイザと `encode_pair` を通り、
# `eval_mode` がその呼び出しのあいだドロップアウトを止めます。同じテキストを 2 回、章のやり方と
# `bertlib` のやり方でエンコードしてみましょう。付属モデルはドロップアウトなし（率は 0）で学習したの
# で、訓練モードにしても何も変わらず、下の 2 行はどちらも同じエンコーディングを 2 回得ます。章の
# モデルにはドロップアウトがあるので、そちらなら 1 行目は 2 つの異なるエンコーディングを得ます。

# %%
tokens, segments = get_tokens_and_segments(tokenizer.tokenize("The train left at ten."),
                                           cls_token=specials.cls, sep_token=specials.sep)
token_ids, segments = torch.tensor([vocab[tokens]]), torch.tensor([segments])
torch.manual_seed(0)
small_bert.train()  # as the chapter's network is after training
with torch.no_grad():
    first, second = (small_bert(token_ids, segments)[0] for _ in range(2))
small_bert.eval()
again = get_bert_encoding(small_bert, tokenizer, "The train left at ten.")
print(table([name, tr("the same encoding twice") if torch.equal(a, b)
              else tr("two encodings, {diff:.2f} apart at most", diff=(a - b).abs().max())]
             for name, a, b in ((tr("the chapter, dropout on:"), first, second),
                                (tr("get_bert_encoding:"), again, alone))))

# %% [markdown] lang="en"
# ## Attention next to evidence
#
# An attention map shows where a head looks, not what it changes. A bright cell can move almost
# nothing: the weight multiplies a value vector, and a tiny vector counts for little however
# large its weight (Kobayashi et al., 2020). And a head that looks at the right place may not
# be needed, if other heads carry the same information (Michel et al., 2019). So we put each
# head to a test that decides: we **switch it off**, zeroing its output before `W_o` as Michel et
# al. (2019) do in their head-masking experiments, and measure the held-out accuracies again.
#
# Beside each head we print what its attention shows: how much weight a masked token's query
# gives to the two tokens next to it, from the raw weights and from the norm-based ones,
# α_ij‖f(x_j)‖ (each row made to sum to 1). The weights come from 300 held-out pairs.

# %% [markdown] lang="zh"
# ## 把注意力和证据放在一起
#
# 注意力图显示的是一个头看向哪里，而不是它改变了什么。一个很亮的格子可能几乎什么也没改变：权重乘的
# 是值向量，如果值向量很小，权重再大也无足轻重（Kobayashi 等人，2020）。一个看向正确位置的头也未必
# 不可或缺，因为别的头可能携带着同样的信息（Michel 等人，2019）。所以我们用一个能下结论的办法来检验
# 每个头：像 Michel 等人（2019）的头掩蔽实验那样**关掉**它，即在 `W_o` 之前把它的输出置零，然后重新
# 测量留出数据上的准确率。
#
# 每个头旁边还打印了它的注意力所显示的情况：被掩蔽词元的查询分给左右两个相邻词元的权重，分别按原始
# 权重和按范数加权的权重 α_ij‖f(x_j)‖（每一行归一化使其和为 1）计算。这些权重来自 300 个留出句子对。

# %% [markdown] lang="ja"
# ## アテンションと根拠を並べる
#
# アテンションマップからわかるのは、ヘッドがどこを見ているかであって、何を変えているかではありませ
# ん。明るいマスでも、ほとんど何も動かさないことがあります。重みはバリューベクトルに掛かるので、小さ
# なベクトルは重みがいくら大きくてもほとんど効きません（Kobayashi ら、2020）。また、正しい場所を見て
# いるヘッドでも、ほかのヘッドが同じ情報を運んでいれば、なくても困らないかもしれません（Michel ら、
# 2019）。そこで各ヘッドを決着のつくテストにかけます。Michel ら（2019）のヘッドマスキングの実験と同
# じように、そのヘッドの出力を `W_o` の前でゼロにして**ヘッドを切り**、ホールドアウトデータでの正解
# 率を測り直すのです。
#
# 各ヘッドの横には、そのアテンションが示すものも表示します。マスクしたトークンのクエリが両隣の 2 つ
# のトークンに置く重みを、生の重みと、ノルムに基づく重み α_ij‖f(x_j)‖（各行の和が 1 になるように正規
# 化）の両方で示します。重みはホールドアウトの 300 組のペアから計算します。

# %%
sample = slice(0, 300)  # 300 held-out pairs: enough for the attention shares
weights, norms = attention_norms(small_bert, held_out.tokens[sample], held_out.segments[sample],
                                 held_out.valid_lens[sample])  # (B, L, nh, T, T) each
positions, real = held_out.pred_positions[sample], held_out.mlm_weights[sample]
looks = attention_on_neighbours(weights, positions, real)  # (L, nh)
looks_by_norm = attention_on_neighbours(norms / norms.sum(-1, keepdim=True), positions, real)

L, nh = small_bert.config.num_blks, small_bert.config.num_heads
rows = [[tr("switched off"), tr("on neighbours"), tr("by norm"), tr("MLM accuracy"),
         tr("NSP accuracy")],
        [tr("nothing"), "", "", counted(scores["mlm_accuracy"], slots),
         counted(scores["nsp_accuracy"], pairs)]]
for layer in range(L):
    for head in [*range(nh), None]:  # each head, then the whole layer
        keep = torch.ones(L, nh)
        keep[layer, slice(None) if head is None else head] = 0
        with heads_switched_off(small_bert, keep):
            ablated = evaluate_pretraining(small_bert, held_out)
        name = tr("layer {layer}, all heads", layer=layer) if head is None else f"L{layer}H{head}"
        shares = ["", ""] if head is None else [f"{looks[layer, head]:.2f}",
                                                f"{looks_by_norm[layer, head]:.2f}"]
        rows.append([name, *shares, counted(ablated["mlm_accuracy"], slots),
                     counted(ablated["nsp_accuracy"], pairs)])
print(table(rows))
print(tr("largest gap between a weight and its norm-based share: {gap:.3f}",
         gap=(weights - norms / norms.sum(-1, keepdim=True)).abs().max()))

# %% [markdown] lang="en"
# Here the picture and the test agree only in part (the table names layer 0's head 1 L0H1). The head
# whose masked tokens look most at their neighbours (L0H1, 0.92) is the one whose loss hurts MLM
# most (0.880 → 0.497), and the one that looks there least (L0H0, 0.04) costs almost nothing
# (0.878). But L1H0, which looks at the neighbours hardly at all (0.05), costs MLM a lot (0.652): a
# head can matter without looking where the picture suggests. For NSP every head but L0H0 matters
# now: switching off L1H1, L1H0 or L0H1 leaves 0.580 to 0.673 of 0.841, each interval far below the
# intact model's [0.821, 0.860], and a whole layer costs more still (0.600 and 0.550). On the
# neighbours of masked tokens the norm-based shares are the raw ones, but elsewhere a weight and its
# norm-based share differ by as much as 0.287 (the last line): the sizes of the value vectors
# matter, and the evidence view shows where.
#
# Held-out averages hide single inputs. The widget's evidence view switches off every head for
# the pair on screen, in one batched forward pass, and draws a grid of what each costs beside
# the attention map: P(original token) at the masked positions you pick, and P(IsNext). Next to
# the chosen head's raw weights it draws the norm-based ones and the attention rollout across
# layers (Abnar & Zuidema, 2020), where they disagree.

# %% [markdown] lang="zh"
# 在这里，图和检验只有一部分是吻合的（表中把层 0 的头 1 记作 L0H1，其余类推）。被掩蔽词元最关注邻居
# 的那个头（L0H1，0.92），关掉后对掩蔽语言模型的损害也最大（0.880 → 0.497）；最不关注邻居的那个
# 头（L0H0，0.04）关掉后几乎没有影响（0.878）。但是 L1H0 几乎不看邻居（0.05），关掉后掩蔽语言模型
# 却损失很大（0.652）：一个头可以很重要，却并不看图上暗示的地方。对下一句预测来说，现在除了 L0H0 以
# 外每个头都很重要：关掉 L1H1、L1H0 或 L0H1，准确率从 0.841 降到 0.580 到 0.673，每个置信区间都远低
# 于完整模型的 [0.821, 0.860]；关掉一整层损失更大（0.600 和 0.550）。在被掩蔽词元的邻居上，基于范数
# 的份额与原始权重相同，但在别处，一个权重与它基于范数的份额最多相差 0.287（最后一行）：值向量的大小
# 也有影响，“证据”视图会显示在哪里。
#
# 留出数据上的平均值掩盖了单个输入的情况。小部件的“证据”视图针对屏幕上的句子对，用一次批量的前向传播
# 把每个头都关掉一次，并在注意力图旁边画出一个网格，显示关掉每个头的代价：你选定的掩蔽位置上原词元的
# 概率，以及“是下一句”的概率。在所选头的原始权重旁边，它还画出按范数加权的权重和跨层的注意力
# 展开（attention rollout，Abnar 和 Zuidema，2020），让你看到它们在哪里不一致。

# %% [markdown] lang="ja"
# ここでは、図と検証は一部でしか一致しません（表では層 0 のヘッド 1 を L0H1 と書きます）。マスクした
# トークンが隣を最もよく見るヘッド（L0H1、0.92）は、止めるとマスク言語モデルを最も損ないます（0.880
# → 0.497）。隣を最も見ないヘッド（L0H0、0.04）は止めてもほとんど影響がありません（0.878）。ところが
# L1H0 は隣をほとんど見ない（0.05）のに、止めるとマスク言語モデルは大きく下がります（0.652）。ヘッド
# は、図が示唆する場所を見ていなくても重要でありうるのです。次文予測では、今は L0H0 以外のどのヘッド
# も重要です。L1H1、L1H0、L0H1 のどれを止めても 0.841 が 0.580 から 0.673 に下がり、どの区間も元のモ
# デルの [0.821, 0.860] よりずっと下にあります。層全体を止めるとさらに下がります（0.600 と 0.550）。
# マスクしたトークンの隣については、ノルムに基づく割合は元の重みと同じですが、ほかの場所では重みとノ
# ルムに基づく割合が最大 0.287 も違います（最後の行）。値ベクトルの大きさも効いていて、証拠ビューが
# その場所を示します。
#
# ホールドアウトデータでの平均は、個々の入力を覆い隠します。ウィジェットの「根拠」ビューは、画面上の
# ペアについてすべてのヘッドを 1 回のバッチ化した順伝播で切り、それぞれが何を失わせるかをアテンショ
# ンマップの横にグリッドで描きます。選んだマスク位置での P(元のトークン) と、P(次の文) です。選んだ
# ヘッドの生の重みの横には、ノルムに基づく重みと、層をまたいだアテンションロールアウト（attention
# rollout、Abnar & Zuidema、2020）を、生の重みと食い違うところで描きます。

# %%
evidence = AttentionWidget(small_bert, tokenizer)
evidence.view.value = "evidence"
display(evidence)

# %% [markdown] lang="en"
# ## Going further: what the held-out figures hide
#
# An interval covers only the luck of the draw. The two sections below show two ways in which
# a held-out set can measure something else than we want: a shortcut in the NSP pairs, and
# sentence templates shared between training and held-out text.

# %% [markdown] lang="zh"
# ## 更进一步：留出数据上的数字掩盖了什么
#
# 置信区间只反映抽样的运气。下面两节给出留出数据测偏了的两种情形：下一句预测的句子对里有一条捷径；
# 训练文本和留出文本共用同样的句子模板。

# %% [markdown] lang="ja"
# ## さらに先へ：ホールドアウトデータの数字が隠すもの
#
# 区間が扱うのは引き方の偶然だけです。下の 2 つの節では、ホールドアウトデータが測りたいものとは別の
# ものを測ってしまう 2 つの場合を示します。次文予測のペアにある近道と、学習用のテキストとホールドア
# ウトのテキストに共通する文テンプレートです。

# %% [markdown] lang="en"
# ### The NSP shortcut
#
# Note `groups=split.held_out_langs` in the held-out set built at the start: each NotNext partner
# comes from a paragraph in the same language, here as in training (the recipe's
# `notnext_same_language`). Drawn from any paragraph, as the chapter does, about half of the NotNext
# pairs of a bilingual corpus would join an English sentence with a Chinese one (count them in the
# output below), which a model can spot without understanding either language. Telling the languages
# apart is then the cheapest way to lower the NSP loss: a model trained on such pairs learns it, and
# the overall accuracy rewards it, while within one language it still accepts false continuations.
# Exercise 1 trains a small model on such pairs and watches it take the shortcut. The shipped recipe
# draws each partner from the same language, which takes the shortcut out of the training data.
#
# What does the shipped model make of the mixed pairs it never saw in training? Below, the
# held-out set is built with partners from any paragraph (no `groups`, same seed), and the NSP
# accuracy is split by kind of pair; each segment's language is decided by its share of Chinese
# tokens:

# %% [markdown] lang="zh"
# ### 下一句预测的捷径
#
# 注意本笔记本开头构造留出数据时的 `groups=split.held_out_langs`：“不是下一句”的句子对里，替换句总是
# 取自同一种语言的段落，这里如此，训练时也如此（即训练配置中的 `notnext_same_language`）。如果像本章
# 那样从任意段落中抽取替换句，双语语料库中“不是下一句”的句子对大约有一半会是英文句子配中文句子（可以
# 在下面的输出中数一数），模型不必懂任何一种语言就能认出来。这时，区分两种语言就成了降低下一句预测损
# 失最省力的办法：在这样的句子对上训练的模型会学会这一招，总准确率也会奖励它，而在同一种语言之内，它
# 仍会把许多并不相接的句子对判成“是下一句”。练习 1 就让一个小模型在这样的句子对上训练，看它怎样走上
# 这条捷径。自带模型的训练配置只从同一种语言中抽取替换句，训练数据里也就没有这条捷径。
#
# 自带模型在训练中从未见过混合语言的句子对，它会怎样判断这样的句子对呢？下面从任意段落中抽取替换
# 句来构造留出数据（不传 `groups`，随机种子相同），再按句子对的类型分别计算下一句预测的准确率；每个
# 片段属于哪种语言，由其中中文词元所占的比例决定：

# %% [markdown] lang="ja"
# ### 次文予測の近道
#
# 最初に作ったホールドアウトデータの `groups=split.held_out_langs` に注目してください。学習のときと
# 同じく（学習設定の `notnext_same_language`）、「次の文ではない」ペアの相手は同じ言語の段落から取っ
# ています。章のようにどの段落からでも取ると、2 言語のコーパスでは「次の文ではない」ペアのおよそ半
# 分が英語の文と中国語の文の組み合わせになります（下の出力で数えてみましょう）。モデルはどちらの言語
# も理解しないまま、それを見抜けてしまいます。すると言語を見分けることが、次文予測の損失を下げるいち
# ばん安上がりな方法になります。そのようなペアで学習したモデルはそれを覚え、全体の正解率もそれに報い
# ますが、1 つの言語の中では誤った続きをやはり受け入れてしまいます。演習 1 では、そのようなペアで小
# さなモデルを学習させ、近道を使うようになる様子を見ます。付属の学習設定は相手を同じ言語から取ること
# で、学習データからこの近道を取り除いています。
#
# では、学習で一度も見なかった言語の混ざったペアを、付属モデルはどう判定するのでしょうか。下では、
# ホールドアウトデータを、相手をどの段落からでも取るようにして（`groups` なし、同じ乱数シード）作り
# 直し、次文予測の正解率をペアの種類ごとに分けます。各セグメントの言語は、中国語のトークンの割合で決
# めます。

# %%
is_chinese = torch.tensor([re.fullmatch(r"[\u4e00-\u9fff]", t) is not None
                           for t in vocab.to_tokens(list(range(len(vocab))))])


@torch.no_grad()
def accuracy_by_kind(model, data):
    """Print the NSP accuracy of `model` (in eval mode) on each kind of pair in `data`, with its
    95% interval."""
    words = data.tokens >= 5  # ids 0-4 are <pad>, <unk>, <cls>, <sep>, <mask>
    chinese_a, chinese_b = (
        2 * (is_chinese[data.tokens] & words & (data.segments == s)).sum(1)
        > (words & (data.segments == s)).sum(1) for s in (0, 1))
    _, _, nsp_Y_hat = model(data.tokens, data.segments, data.valid_lens)
    right = nsp_Y_hat.argmax(1) == data.nsp_labels
    is_next = data.nsp_labels == IS_NEXT
    kinds = ((tr("all pairs"), torch.ones_like(is_next)), (tr("IsNext"), is_next),
             (tr("NotNext, same language"), ~is_next & (chinese_a == chinese_b)),
             (tr("NotNext, other language"), ~is_next & (chinese_a != chinese_b)))
    accuracies = [(name, Accuracy(int(right[rows].sum()), int(rows.sum()))) for name, rows in kinds]
    print(table([name, f"n = {accuracy.n:4}", accuracy] for name, accuracy in accuracies))


# No groups: NotNext partners from any paragraph, either language.
mixed = make_pretrain_data(held_out_paragraphs, vocab, max_len=recipe["max_len"],
                           seed=recipe["held_out_data_seed"])
accuracy_by_kind(small_bert, mixed)

# %% [markdown] lang="en"
# The switch of language does not show. The model rejects the cross-language pairs (0.681) no more
# often than the same-language ones (0.683); its overall accuracy, 0.842, is that of the grouped set
# (0.841). The model never saw a pair that switches language in training, so it was never rewarded
# for spotting the switch itself, and here it does not use it: a Chinese sentence after an English
# one is rejected no more readily than an English sentence from another paragraph. The model's skill
# within one language is what the grouped held-out set measures. (IsNext and same-language NotNext
# differ from the grouped set's because the pairs are a different random draw; the intervals show by
# how much that can move them.)

# %% [markdown] lang="zh"
# 语言的切换并没有起作用。模型拒绝跨语言句子对的比例（0.681）并不比同一语言的句子对（0.683）高；它的
# 总准确率为 0.842，与分组构造的留出数据上的（0.841）相当。模型在训练中从未见过切换语言的句子对，所
# 以从来没有因为发现语言切换本身而得到奖励，而在这里它也没有利用这一点：英文句子后面跟一个中文句子，
# 并不比跟一个来自别的段落的英文句子更容易被拒绝。模型在同一种语言内的本事，是分组构造的留出数据所测
# 量的。（“是下一句”和同一语言的“不是下一句”与分组数据上的结果不同，是因为这些句子对是另一次随机抽
# 取；置信区间显示了这会带来多大的变动。）

# %% [markdown] lang="ja"
# 言語の切り替えは効いていません。モデルが言語をまたぐペアを退ける割合（0.681）は、同じ言語のペア
# （0.683）より高くありません。全体の正解率 0.842 は、言語を揃えたデータでの値（0.841）と同じ程度で
# す。モデルは学習中に言語が切り替わるペアを見たことがないので、切り替えそのものに気づいて報われたこ
# とはなく、ここでもそれを使っていません。英語の文の後の中国語の文は、別の段落の英語の文より退けられ
# やすいわけではないのです。1 つの言語の中でのモデルの実力は、言語
# を揃えたホールドアウトデータが測るものです（IsNext と同じ言語の NotNext の値が揃えたデータと違うの
# は、ペアが別のランダムな抽出だからです。区間は、それでどれだけ動きうるかを示します）。

# %% [markdown] lang="en"
# ### Template leakage
#
# The MLM number needs a caveat too: the held-out *paragraphs* are new, but the corpus is built
# from sentence templates, so most held-out *sentences* also occur somewhere in the training
# paragraphs:

# %% [markdown] lang="zh"
# ### 模板泄漏
#
# 掩蔽语言模型的准确率同样需要加一句说明：留出的**段落**是新的，但语料库是用句子模板生成的，所以留出
# 的**句子**大多也在训练段落中出现过：

# %% [markdown] lang="ja"
# ### テンプレートの漏洩
#
# マスク言語モデルの数字にも注意書きが必要です。ホールドアウトの**段落**は新しいものですが、コーパス
# は文テンプレートから作られているので、ホールドアウトの**文**の大半は学習用の段落のどこかにも現れま
# す。

# %%
train_sentences = {s for paragraph in split.train for s in paragraph}
held_out_sentences = [s for paragraph in split.held_out for s in paragraph]
seen = sum(s in train_sentences for s in held_out_sentences)
print(tr("{seen} of {total} held-out sentences also occur in training",
         seen=seen, total=len(held_out_sentences)))

# %% [markdown] lang="en"
# So the held-out MLM accuracy mostly measures how well the model learned the corpus's
# templates: the held-out set leaks. No confidence interval can show this; only a look at the
# data can. Exercise 2 measures the MLM accuracy on the unseen sentences alone. The language
# shortcut and the repeated sentences are both quirks of a small bilingual corpus built from
# templates; the original BERT read billions of words of real text (notebook 06).

# %% [markdown] lang="zh"
# 所以，留出数据上掩蔽语言模型的准确率，主要衡量的是模型对语料库中句子模板的掌握程度：留出数据存在泄
# 漏。任何置信区间都显示不出这一点，只有查看数据才能发现。练习 2 只在没有见过的句子上计算掩蔽语言模
# 型的准确率。语言这条捷径和重复的句子，都是用模板生成的小型双语语料库特有的问题；原始的 BERT 读的是
# 数十亿个词的真实文本（见笔记本 06）。

# %% [markdown] lang="ja"
# つまり、ホールドアウトデータでのマスク言語モデルの正解率が主に測っているのは、モデルがコーパスのテ
# ンプレートをどれだけよく覚えたかです。ホールドアウトデータが漏れているのです。これはどんな信頼区間
# にも表れず、データを見ることでしかわかりません。演習 2 では、学習で見なかった文だけでマスク言語モ
# デルの正解率を測ります。言語の近道も、繰り返し現れる文も、テンプレートから作った小さな 2 言語の
# コーパスに特有の癖です。元の BERT は、実際のテキストを何十億語も読んでいます（ノートブック 06）。

# %% [markdown] lang="en"
# ## Summary
#
# * A held-out accuracy is a sample: give it a confidence interval (`Accuracy(hits, n)`, 95%
#   Wilson). The shipped small BERT beats its baselines on NSP and MLM by far more than the
#   intervals' width, and its NSP head accepts far more readily than it rejects.
# * The model's guesses for a masked token are right where a template fits and wrong where it
#   breaks; it knows its corpus, not English or Chinese.
# * `get_bert_encoding` gives `(1, T, H)` context-dependent vectors, deterministic in eval mode.
# * Going further: an interval covers the luck of the draw, not a flawed test. NotNext partners from
#   any paragraph reward telling the languages apart; the shipped recipe draws them from the same
#   language. The shipped model, never trained on cross-language pairs, rejects them no more readily
#   than same-language ones: it does not use the switch of language. And behind the MLM accuracy are
#   templates seen in training: most held-out sentences occur in the training paragraphs.

# %% [markdown] lang="zh"
# ## 小结
#
# * 留出数据上的准确率只是一个样本，应当给出置信区间（`Accuracy(hits, n)`，95% Wilson 区间）。自带的
#   小 BERT 在下一句预测和掩蔽语言模型上都超过了基线，超出的幅度远大于置信区间的宽度；它的下一句预测
#   输出层明显偏向于判为“是下一句”。
# * 模型对被掩蔽词元的猜测，在句子符合模板的地方是对的，偏离模板的地方就错了；它熟悉的是自己的语料
#   库，而不是英语或汉语。
# * `get_bert_encoding` 给出依赖上下文的向量，形状为 `(1, T, H)`，在评估模式下是确定的。
# * 更进一步：置信区间反映的是抽样的偶然性，反映不了测试本身的缺陷。从任意段落中抽取“不是下一句”的替
#   换句，等于奖励模型区分两种语言；自带模型的训练配置只从同一种语言中抽取。自带模型没在跨语言句子对
#   上训练过，把它们判为“不是下一句”的比例并不比同一语言的句子对高：它没有利用语言的切换。掩蔽语言模
#   型的准确率背后则是训练中见过的句子模板：大多数留出的句子都出现在训练段落中。

# %% [markdown] lang="ja"
# ## まとめ
#
# * ホールドアウトデータでの正解率は標本です。信頼区間を付けましょう（`Accuracy(hits, n)`、95% の
#   Wilson 区間）。付属の小さな BERT は、次文予測でもマスク言語モデルでも、区間の幅よりはるかに大き
#   な差でベースラインを上回ります。次文予測の出力層は、退けるよりも受け入れるほうに大きく傾いてい
#   ます。
# * マスクしたトークンに対するモデルの予測は、テンプレートに合う場所では正しく、テンプレートが崩れる
#   と間違えます。モデルが知っているのは自分のコーパスであって、英語や中国語ではありません。
# * `get_bert_encoding` は文脈に依存する `(1, T, H)` のベクトルを返し、評価モードなので結果は毎回同
#   じです。
# * さらに先へ：区間が扱うのは引き方の偶然であって、欠陥のあるテストではありません。「次の文ではな
#   い」ペアの相手をどの段落からでも取ると、言語を見分けることが報われてしまいます。付属の学習設定は
#   相手を同じ言語から取ります。言語をまたぐペアで学習していない付属モデルは、そうしたペアを同じ言語
#   のペアより退けやすいわけではなく、言語の切り替えを使っていません。そしてマスク言語
#   モデルの正解率の裏には、学習で見たテンプレートがあります。ホールドアウトの文の大半は学習用の段落
#   にも現れるのです。

# %% [markdown] lang="en"
# ## Exercises
#
# 1. ★★★ **Grow the shortcut.** Build training pairs like those of notebook 06's live run, but
#    with NotNext partners from either language, that is without `groups`
#    (`make_pretrain_data(tokenize_paragraphs(split.train, tokenizer.tokenize), vocab,
#    max_len=64, seed=0)`), train notebook 06's small model on them (`init_model(BERTConfig(
#    vocab_size=len(vocab), num_hiddens=64, ffn_num_hiddens=128, num_heads=2, num_blks=2,
#    dropout=0.0, max_len=64), seed=0)`, `train_bert(..., num_steps=300, batch_size=128,
#    lr=3e-3, seed=0)`, under a minute), and split its NSP accuracy on `mixed` with
#    `accuracy_by_kind`. Does the shortcut appear? Repeat with `groups=split.train_langs` and
#    compare the two models, and their NSP losses.
# 2. ★★ Restrict the held-out MLM accuracy to sentences that do not occur in the training
#    paragraphs (build the held-out data from those sentences only, or keep only their slots).
#    How much lower is it, how wide is its interval, and is it still above the baseline?
# 3. ★ **Count.** At the same share of hits (0.841), how many times as many held-out pairs as
#    the 1331 above would halve the width of the NSP interval (to the nearest whole number)?
#    Guess, then try `Accuracy(hits, n)` at larger `n`, and check below.
# 4. ★★ **Predict.** A 95% interval covers the *true* accuracy in 95% of draws; it promises
#    nothing about where the next draw lands. Suppose the model's true NSP accuracy is 0.841 and
#    two independent held-out sets of 1331 pairs each are drawn. In what percentage of such
#    repeats does the second set's accuracy fall inside the first set's 95% interval (a whole
#    number)? Check below.
# 5. ★★ **The brightest cell.** In the attention widget's evidence view, keep the default pair and
#    mask one token: "final" in English, the 球 of 篮球 in Chinese. Which head gives the masked
#    token its brightest cell (the largest weight in its row), and what happens to P(original
#    token) when that head is switched off?
# 6. ★★ **The head that matters.** Now mask "scored" (in Chinese, the 赛 of 比赛). Which head,
#    switched off, lowers P(original token) most? Where does that head's masked token look, and
#    how bright is its brightest cell compared with the other heads'?

# %% [markdown] lang="zh"
# ## 练习
#
# 1. ★★★ **让捷径重新出现。** 像笔记本 06 现场训练那样构造训练用的句子对，但“不是下一句”的替换句可以
#    来自任一种语言，也就是不传 `groups`（`make_pretrain_data(tokenize_paragraphs(split.train,
#    tokenizer.tokenize), vocab, max_len=64, seed=0)`），用它们训练笔记本 06 中的小模型
#    （`init_model(BERTConfig(vocab_size=len(vocab), num_hiddens=64, ffn_num_hiddens=128,
#    num_heads=2, num_blks=2, dropout=0.0, max_len=64), seed=0)`，`train_bert(..., num_steps=300,
#    batch_size=128, lr=3e-3, seed=0)`，不到一分钟），再用 `accuracy_by_kind` 按句子对的类型拆分它在
#    `mixed` 上的下一句预测准确率。捷径出现了吗？传入 `groups=split.train_langs` 再做一遍，比较两个
#    模型以及它们的下一句预测损失。
# 2. ★★ 只在没有出现在训练段落中的句子上计算留出数据的掩蔽语言模型准确率（只用这些句子构造留出数据，
#    或者只保留它们的预测位置）。它低了多少？置信区间有多宽？还高于基线吗？
# 3. ★ **数一数。** 在判对比例不变（0.841）的情况下，留出的句子对要是上面 1331 个的多少倍，下一句预
#    测的置信区间宽度才会减半（取最接近的整数）？先猜一猜，再在更大的 `n` 上试试
#    `Accuracy(hits, n)`，然后在下面检查。
# 4. ★★ **先预测。** 95% 置信区间的意思是：在 95% 的抽样中，区间覆盖**真实**的准确率；至于下一次
#    抽样的结果落在哪里，它什么也没有保证。假设模型下一句预测的真实准确率是 0.841，独立地抽取两组留
#    出数据，每组 1331 个句子对。在这样的重复中，第二组的准确率落在第一组的 95% 置信区间之内的情况占
#    百分之几（取整数）？在下面检查你的答案。
# 5. ★★ **最亮的格子。** 在注意力小部件的“证据”视图中，保留默认的句子对，掩蔽一个词元：英文版掩蔽
#    “final”，中文版掩蔽“篮球”的“球”。哪个头给被掩蔽词元的最亮的格子（它那一行中最大的权重）？关掉
#    这个头之后，原词元的概率会怎样变化？
# 6. ★★ **真正起作用的头。** 现在掩蔽“scored”（中文版掩蔽“比赛”的“赛”）。关掉哪个头，原词元的概率
#    下降得最多？这个头里被掩蔽的词元看向哪里？它最亮的格子与其他头的相比有多亮？

# %% [markdown] lang="ja"
# ## 演習
#
# 1. ★★★ **近道を育てる。** ノートブック 06 のその場での学習と同じように学習用のペアを作りますが、
#    「次の文ではない」ペアの相手はどちらの言語からでも取るようにします。つまり `groups` を付けずに
#    （`make_pretrain_data(tokenize_paragraphs(split.train, tokenizer.tokenize), vocab, max_len=64,
#    seed=0)`）作り、ノートブック 06 の小さなモデル（`init_model(BERTConfig( vocab_size=len(vocab),
#    num_hiddens=64, ffn_num_hiddens=128, num_heads=2, num_blks=2, dropout=0.0, max_len=64),
#    seed=0)`）を学習させ（`train_bert(..., num_steps=300, batch_size=128, lr=3e-3, seed=0)`、1
#    分足らず）、`mixed` での次文予測の正解率を `accuracy_by_kind` で分けます。近道は現れるでしょう
#    か。`groups=split.train_langs` を付けて繰り返し、2 つのモデルとその次文予測の損失を比べましょ
#    う。
# 2. ★★ ホールドアウトデータでのマスク言語モデルの正解率を、学習用の段落に現れない文だけに絞ってくだ
#    さい（それらの文だけからホールドアウトデータを作るか、それらの予測位置だけを残します）。正解率
#    はどれだけ下がり、区間の幅はどれくらいで、それでもベースラインを上回っているでしょうか。
# 3. ★ **数えてみよう。** 正解の割合が同じ（0.841）とき、次文予測の区間の幅を半分にするには、ホール
#    ドアウトのペアを上の 1331 組の何倍にすればよいでしょうか（最も近い整数で）。予想してから、もっ
#    と大きな `n` で `Accuracy(hits, n)` を試し、下で確かめましょう。
# 4. ★★ **予測しよう。** 95% 区間は、抽出の 95% で**真の**正解率を含みます。次の抽出の値がどこに来る
#    かについては何も約束しません。モデルの真の次文予測の正解率が 0.841 で、1331 組ずつの独立なホー
#    ルドアウトデータを 2 つ引くとします。このような繰り返しのうち、2 つ目のデータの正解率が 1 つめ
#    のデータの 95% 区間に入るのは何パーセントでしょうか（整数で）。下で確かめましょう。
# 5. ★★ **いちばん明るいセル。** アテンションのウィジェットの「根拠」ビューで、最初に表示されるペア
#    のまま、トークンを 1 つマスクします。英語なら "final"、中国語なら 篮球 の 球 です。マスクした
#    トークンに最も明るいマス（その行で最大の重み）を与えるのはどのヘッドでしょうか。そのヘッドを切
#    ると、P(元のトークン) はどうなりますか。
# 6. ★★ **効いているヘッド。** 今度は "scored"（中国語なら 比赛 の 赛）をマスクします。切ったときに
#    P(元のトークン) を最も下げるのはどのヘッドでしょうか。そのヘッドでは、マスクしたトークンはどこ
#    を見ていて、その最も明るいマスはほかのヘッドと比べてどれくらい明るいでしょうか。

# %%
answer = None  # your answer to exercise 3: how many times as many pairs
check_exercise("08_halve_width", answer)

# %%
answer = None  # your answer to exercise 4: a percentage, a whole number
check_exercise("08_replication", answer)

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 1: Grow the shortcut</summary>
#
# It does. Trained on pairs whose NotNext partner may come from the other language, the small
# model rejects nearly every cross-language NotNext pair of `mixed`, but same-language ones only
# about as often as a coin toss would; its overall accuracy on `mixed` is higher than the other
# model's, and its NSP loss at the end of training is lower too. Trained with
# `groups=split.train_langs`, the model rejects the two kinds of NotNext pair about equally
# often, and rejects same-language ones more often than the shortcut model does. The lower loss
# and the higher overall accuracy reward the shortcut, not a better grasp of which sentence
# follows which: only the accuracy split by kind shows it.
#
# </details>
#
# <details><summary>Exercise 2: Unseen sentences only</summary>
#
# Keep the held-out paragraphs' sentences that are not in `train_sentences` and the paragraphs
# left with at least two of them. The MLM accuracy on them is lower than the 0.880 on all
# held-out pairs, by several hundredths, and its interval is several times as wide, since only a
# small fraction of the slots remain (the sentences seen in training are most of the held-out
# sentences, as printed above). It is still far above always guessing the most frequent token:
# the model learned the words of its templates, not only whole sentences, but part of the 0.880
# is memory of sentences seen in training.
#
# </details>
#
# <details><summary>Exercise 5: The brightest cell</summary>
#
# In English L0H1 gives "final" its brightest cell: nearly all of its weight on the previous
# token, "the". Switched off, P(final) drops from near certainty to almost nothing: here the
# brightest head is the one the guess needs. The next brightest cell, L0H0's on the last `.`,
# means nothing: with L0H0 off, P(final) even rises a little. In Chinese it is L0H1 again, on
# 篮 before the masked 球, and switching it off costs most of P(球); L1H0 looks hard at `<sep>`
# and costs almost nothing. A bright cell alone does not tell a needed head from an idle one;
# switching the head off does.
#
# </details>
#
# <details><summary>Exercise 6: The head that matters</summary>
#
# For "scored", L0H1 again: it looks at "and", the previous token, with nearly all its weight,
# the brightest cell of the four heads, and without it P(scored) falls from near certainty to
# below a fifth. But L1H1, whose brightest cell (on "made") holds less than half of its weight,
# lowers P(scored) almost as much, while L1H0, brighter, on the first `<sep>`, lowers it little.
# In Chinese L0H1, which looks at 比, is the only head whose loss lowers P(赛) clearly. How much
# a head matters follows neither the brightness of its cells nor where they are.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 1：让捷径长出来</summary>
#
# 会出现。用“不是下一句”的句子可能来自另一种语言的句子对训练后，这个小模型几乎能拒绝 `mixed` 中所有
# 跨语言的“不是下一句”的句子对，但拒绝同一语言的句子对的比例只和抛硬币差不多；它在 `mixed` 上的总
# 体准确率比另一个模型高，训练结束时下一句预测的损失也更低。用
# `groups=split.train_langs` 训练的模型，拒绝两种“不是下一句”的句子对的比例差不多，拒绝同一语言的
# 句子对的比例也比走捷径的模型高。更低的损失和更高的总体准确率奖励的是捷径，而不是更好地理解哪句接
# 在哪句后面：只有按句子对的种类拆开的准确率才能看出这一点。
#
# </details>
#
# <details><summary>练习 2：只看没见过的句子</summary>
#
# 保留留出段落中不在 `train_sentences` 里的句子，以及因此剩下至少两句的段落。在这些句子上，掩蔽语
# 言模型的准确率比全部留出数据上的 0.880 低几个百分点，区间宽好几倍，因为只剩下一小部分预测位置
# （如上面打印的，留出的句子大多在训练中出现过）。它仍然远高于总是猜最常见词元的基线：模型学到的是
# 模板中的词，而不只是整句，但 0.880 中有一部分是对训练中见过的句子的记忆。
#
# </details>
#
# <details><summary>练习 5：最亮的格子</summary>
#
# 英文版中，给“final”最亮格子的是 L0H1：它几乎把全部权重放在前一个词元“the”上。关掉它，
# P(final) 从几乎确定降到几乎为零：这里最亮的头正是预测所需要的头。第二亮的格子是 L0H0 放在最后一个
# `.` 上的，它什么也不代表：关掉 L0H0，P(final) 反而略有上升。中文版同样是 L0H1，看的是被掩蔽的球
# 前面的篮，关掉它，P(球) 失去大半；L1H0 紧盯着 `<sep>`，关掉它几乎没有影响。只看格子的亮度分不出
# 一个头是必需的还是闲着的；关掉这个头才能分出来。
#
# </details>
#
# <details><summary>练习 6：真正起作用的头</summary>
#
# 对“scored”来说，又是 L0H1：它几乎把全部权重放在前一个词元“and”上，是四个头中最亮的格子；没有它，
# P(scored) 从几乎确定降到不到五分之一。但 L1H1 最亮的格子（在“made”上）只占它不到一半的权重，关
# 掉它，P(scored) 也下降得差不多多；而更亮的 L1H0 看的是第一个 `<sep>`，关掉它影响很小。中文版
# 中，只有关掉看着比的 L0H1，P(赛) 才明显下降。一个头有多重要，既不取决于它的格子有多亮，也不取决
# 于亮格子在哪里。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# まず自分で演習に取り組んでから、解答を開きましょう。
#
# <details><summary>演習 1：近道を育てる</summary>
#
# 近道は現れます。「次の文ではない」相手がもう一方の言語から来ることもあるペアで学習させると、小さな
# モデルは `mixed` の言語をまたぐ「次の文ではない」ペアをほぼすべて退けますが、同じ言語のペアを退け
# る割合はコイン投げと変わりません。`mixed` 全体での正解率はもう一方のモデルより高く、学習の最後の次
# 文予測の損失も低くなります。`groups=split.train_langs` で学習させたモデル
# は、2 種類の「次の文ではない」ペアをほぼ同じ割合で退け、同じ言語のペアを退ける割合も近道を使うモデ
# ルより高くなります。低い損失と高い全体の正解率が報いているのは近道であって、どの文がどの文に続くか
# をよく理解したことではありません。それが見えるのは、ペアの種類ごとに分けた正解率だけです。
#
# </details>
#
# <details><summary>演習 2：見たことのない文だけで</summary>
#
# ホールドアウトの段落から `train_sentences` にない文だけを残し、そうした文が 2 つ以上残る段落を使い
# ます。その文でのマスク言語モデルの正解率は、ホールドアウト全体の 0.880 より数ポイント低く、区間は
# 数倍の幅になります。残る予測位置がごく一部だからです（上に表示したとおり、ホールドアウトの文の大半
# は学習でも現れます）。それでも、常に最頻出のトークンを当てる方法よりはずっと上です。モデルは文ま
# るごとだけでなくテンプレートの単語を学んでいますが、0.880 の一部は学習で見た文の記憶です。
#
# </details>
#
# <details><summary>演習 5：いちばん明るいセル</summary>
#
# 英語では、"final" にいちばん明るいセルを与えるのは L0H1 で、重みのほぼすべてを直前のトークン
# "the" に置きます。このヘッドを切ると、P(final) はほぼ確実からほぼゼロまで下がります。ここでは、い
# ちばん明るいヘッドこそ予測に必要なヘッドです。次に明るいセルは L0H0 が最後の `.` に置くもので、こ
# ちらには意味がありません。L0H0 を切ると、P(final) はむしろ少し上がります。中国語でも L0H1 で、マス
# クした 球 の前の 篮 を見ており、切ると P(球) の大半が失われます。L1H0 は `<sep>` を強く見ています
# が、切ってもほとんど変わりません。セルの明るさだけでは、必要なヘッドと働いていないヘッドを区別で
# きません。区別できるのは、ヘッドを切ってみることです。
#
# </details>
#
# <details><summary>演習 6：効いているヘッド</summary>
#
# "scored" でも L0H1 です。重みのほぼすべてを直前のトークン "and" に置き、4 つのヘッドの中でいち
# ばん明るいセルを持ちます。このヘッドがないと、P(scored) はほぼ確実から 5 分の 1 未満まで下がり
# ます。ところが、いちばん明るいセル（"made" の上）でも重みの半分に満たない L1H1 を切っても、
# P(scored) はほぼ同じくらい下がります。一方、より明るいセルを最初の `<sep>` に持つ L1H0 を切って
# も、あまり下がりません。中国語では、比 を見ている L0H1 を切ったときだけ P(赛) がはっきり下がり
# ます。ヘッドがどれだけ効いているかは、セルの明るさからも、明るいセルの位置からもわかりません。
#
# </details>

# %% [raw] strings="zh"
# "the shipped small BERT: {steps} steps, {minutes} min, on {paragraphs} training paragraphs with {sentences:,} sentences"
# "自带的小 BERT：在 {paragraphs} 个训练段落（{sentences:,} 个句子）上训练了 {steps} 步，用时 {minutes} 分钟"
#
# "held out: pairs {pairs}  MLM slots {slots}"
# "留出数据：{pairs} 个句子对，{slots} 个掩蔽语言模型的预测位置"
#
# "NSP accuracy"
# "下一句预测准确率"
#
# "  on IsNext pairs"
# "  其中“是下一句”的句子对"
#
# "  on NotNext pairs"
# "  其中“不是下一句”的句子对"
#
# "NSP: always the more frequent label"
# "下一句预测：总猜较常见的标签"
#
# "MLM accuracy"
# "掩蔽语言模型准确率"
#
# "MLM: always the most frequent token"
# "掩蔽语言模型：总猜最常见的词元"
#
# "the same as in metrics.json"
# "与 metrics.json 中的一致"
#
# "all pairs"
# "全部句子对"
#
# "IsNext"
# "是下一句"
#
# "NotNext, same language"
# "不是下一句，同一种语言"
#
# "NotNext, other language"
# "不是下一句，跨语言"
#
# "{seen} of {total} held-out sentences also occur in training"
# "{total} 个留出的句子中，有 {seen} 个也出现在训练段落中"
#
# "corpus"
# "语料库"
#
# "new"
# "新句子"
#
# "shapes: one sentence {alone}, a pair {pair}, a Chinese pair {chinese}"
# "形状：单句 {alone}，句子对 {pair}，中文句子对 {chinese}"
#
# "<cls>  "
# "<cls>（单句）  "
#
# "train  "
# "train（单句）  "
#
# "in pair"
# "train（句子对）"
#
# "the chapter, dropout on:"
# "本章的做法（开启 dropout）："
#
# "get_bert_encoding:"
# "get_bert_encoding："
#
# "not the same as in metrics.json"
# "与 metrics.json 中的不一致"
#
# "the same encoding twice"
# "两次编码完全相同"
#
# "two encodings, {diff:.2f} apart at most"
# "两次编码不同，最大差值 {diff:.2f}"
#
# "switched off"
# "关掉的头"
#
# "on neighbours"
# "相邻词元上的权重"
#
# "by norm"
# "按范数加权"
#
# "nothing"
# "无"
#
# "layer {layer}, all heads"
# "第 {layer} 层的全部头"
#
# "largest gap between a weight and its norm-based share: {gap:.3f}"
# "原始权重与按范数加权的比例之间的最大差距：{gap:.3f}"

# %% [raw] strings="ja"
# "the shipped small BERT: {steps} steps, {minutes} min, on {paragraphs} training paragraphs with {sentences:,} sentences"
# "付属の小さな BERT：{paragraphs} 個の学習用の段落（{sentences:,} 文）で {steps} ステップ、{minutes} 分"
#
# "held out: pairs {pairs}  MLM slots {slots}"
# "ホールドアウト：ペア {pairs} 組、マスク言語モデルの予測位置 {slots} 個"
#
# "NSP accuracy"
# "次文予測の正解率"
#
# "  on IsNext pairs"
# "  うち「次の文」のペア"
#
# "  on NotNext pairs"
# "  うち「次の文ではない」ペア"
#
# "NSP: always the more frequent label"
# "次文予測：常に多いほうのラベル"
#
# "MLM accuracy"
# "マスク言語モデルの正解率"
#
# "MLM: always the most frequent token"
# "マスク言語モデル：常に最も頻度の高いトークン"
#
# "the same as in metrics.json"
# "metrics.json の値と一致"
#
# "all pairs"
# "すべてのペア"
#
# "IsNext"
# "次の文"
#
# "NotNext, same language"
# "次の文ではない（同じ言語）"
#
# "NotNext, other language"
# "次の文ではない（別の言語）"
#
# "{seen} of {total} held-out sentences also occur in training"
# "ホールドアウトの {total} 文のうち {seen} 文は学習データにも現れる"
#
# "corpus"
# "コーパス"
#
# "new"
# "新しい文"
#
# "shapes: one sentence {alone}, a pair {pair}, a Chinese pair {chinese}"
# "形状：1 文 {alone}、ペア {pair}、中国語のペア {chinese}"
#
# "<cls>  "
# "<cls>（1 文）  "
#
# "train  "
# "train（1 文）  "
#
# "in pair"
# "train（ペア）"
#
# "the chapter, dropout on:"
# "章のやり方（ドロップアウト有効）："
#
# "get_bert_encoding:"
# "get_bert_encoding："
#
# "not the same as in metrics.json"
# "metrics.json の値と不一致"
#
# "the same encoding twice"
# "2 回とも同じエンコーディング"
#
# "two encodings, {diff:.2f} apart at most"
# "2 つのエンコーディングは異なり、差は最大 {diff:.2f}"
#
# "switched off"
# "切ったもの"
#
# "on neighbours"
# "隣への重み"
#
# "by norm"
# "ノルム基準"
#
# "nothing"
# "なし"
#
# "layer {layer}, all heads"
# "層 {layer} の全ヘッド"
#
# "largest gap between a weight and its norm-based share: {gap:.3f}"
# "生の重みとノルムに基づく割合の最大の差：{gap:.3f}"
