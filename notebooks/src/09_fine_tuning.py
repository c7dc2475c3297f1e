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
# # 09 · Fine-tuning
#
# *[中文版](../zh/09_fine_tuning.ipynb) · [日本語](../ja/09_fine_tuning.ipynb) ·
# [Index](00_index.ipynb)*
#
# The chapter ends where BERT's point begins. The original BERT is pretrained once, on unlabelled
# text, and then **fine-tuned** for each downstream task: the MLM and NSP heads are dropped, a
# small output layer is added on top of the encoder, and all parameters are trained a little
# further on the task's labelled examples. The new output layer starts from scratch; everything
# below it starts from the pretrained weights. This notebook does that, and measures what the
# pretrained weights are worth.
#
# You will:
# 1. meet four small labelled tasks made from the corpus templates, one per kind of
#    application: a sentence's topic, whether two sentences come from the same story, a tag for
#    every token (names, places, times), and questions answered by a span; and split them so
#    that held-out sentences come from templates never seen with a label;
# 2. read `BERTClassifier` (the chapter's classifier on `<cls>`) and `BERTTagger` (one label per
#    token);
# 3. fine-tune the shipped small BERT, and compare it on the same held-out sentences with the
#    same architecture trained from random weights and with a bag-of-words baseline, with
#    confidence intervals;
# 4. tag tokens, answer questions by finding a span of the sentence (the start and end vectors
#    of the BERT paper), freeze layers and see what that saves and costs;
# 5. fine-tune a real BERT, all-MiniLM-L6-v2, on the English task;
# 6. type sentences into the fine-tuned models.

# %% [markdown] lang="zh"
# # 09 · 微调
#
# [English](../en/09_fine_tuning.ipynb) · [日本語](../ja/09_fine_tuning.ipynb) ·
# [目录](00_index.ipynb)
#
# 本章讲到哪里结束，BERT 真正的用武之地就从哪里开始。原始的 BERT 只在无标签文本上预训练一次，之后针
# 对每个下游任务进行**微调**：去掉掩蔽语言模型和下一句预测的输出层，在编码器上加一个小小的输出层，再
# 用该任务的有标签样本把全部参数继续训练一小会儿。新的输出层从零开始训练，它下面的各层都从预训练得到
# 的权重出发。本笔记本就来做这件事，并看一看预训练的权重到底有多大价值。
#
# 你将会：
# 1. 认识四个小型有标签任务：它们都用语料库的句子模板构造，各对应一类应用，分别是判断句子的话题、判
#    断两个句子是否出自同一个故事、给每个词元打标签（人名、地点、时间），以及用句子中的一个区间回答
#    问题；并且按模板划分数据，使留出的句子全都来自从未在有标签的训练数据中出现过的模板；
# 2. 阅读 `BERTClassifier`（本章基于 `<cls>` 的分类器）和 `BERTTagger`（每个词元一个标签）；
# 3. 微调项目自带的小 BERT，并在同一批留出句子上，把它与从随机权重开始训练的同一架构以及词袋基线进行
#    比较，同时给出置信区间；
# 4. 给词元打标签；在句子中找出一个区间来回答问题（BERT 论文中的起点向量和终点向量）；冻结部分层，
#    看看这样能省下什么、又要付出什么；
# 5. 在英文任务上微调一个真实的 BERT：all-MiniLM-L6-v2；
# 6. 向微调好的模型输入你自己的句子。

# %% [markdown] lang="ja"
# # 09 · ファインチューニング
#
# *[English](../en/09_fine_tuning.ipynb) · [中文](../zh/09_fine_tuning.ipynb) ·
# [目次](00_index.ipynb)*
#
# 本章が終わるところから、BERT の本領が始まります。元の BERT は、ラベルのないテキストで一度だけ事前
# 学習され、その後、下流タスクごとに**ファインチューニング**されます。マスク言語モデルと次文予測の出
# 力層を取り除き、エンコーダの上に小さな出力層を加え、タスクのラベル付きの例ですべてのパラメータをも
# う少しだけ学習させるのです。新しい出力層はゼロから始まり、その下のすべては事前学習済みの重みから始
# まります。このノートブックではそれを行い、事前学習済みの重みにどれだけの価値があるかを測ります。
#
# このノートブックでは、次のことを行います。
# 1. コーパスのテンプレートから作った、ラベル付きの小さな 4 つのタスクを知ります。応用の種類ごとに 1
#    つずつで、文の話題、2 つの文が同じ物語から来ているか、各トークンのタグ（人名、場所、時間）、そ
#    してスパンで答える質問です。ホールドアウトの文が、ラベル付きで一度も見たことのないテンプレート
#    から来るように分割します。
# 2. `BERTClassifier`（`<cls>` に基づく本章の分類器）と `BERTTagger`（トークンごとに 1 つのラベル）
#    を読みます。
# 3. 付属の小さな BERT をファインチューニングし、同じホールドアウトの文で、ランダムな重みから学習さ
#    せた同じ構造のモデルや Bag-of-Words のベースラインと、信頼区間付きで比べます。
# 4. トークンにタグを付け、文のスパンを見つけて質問に答え（BERT 論文の開始ベクトルと終了ベクトル）、
#    層を凍結して、それで何が節約でき何を失うかを見ます。
# 5. 本物の BERT である all-MiniLM-L6-v2 を英語のタスクでファインチューニングします。
# 6. ファインチューニングしたモデルに文を入力してみます。

# %%
# %matplotlib inline
import math
import warnings
from collections import Counter

import torch
from IPython.display import display

from bertlib import (
    BERTClassifier,
    BERTQuestionAnswerer,
    BERTTagger,
    evaluate_task,
    fine_tune,
    load_hf,
    load_small_bert,
)
from bertlib.classroom.exercises import check_exercise
from bertlib.classroom.implement import check_implementation
from bertlib.finetuning.finetune import (
    Accuracy,
    BagOfWords,
    freeze_layers,
    predict,
    predict_spans,
    span_accuracy,
    task_loss,
)
from bertlib.finetuning.tasks import (
    IGNORE,
    NUM_TOPICS,
    TAGS,
    class_names,
    load_task_sentences,
    pair_data,
    span_data,
    split_by_template,
    tagging_data,
    token_tags,
    topic_data,
)
from bertlib.support.i18n import corpus_language, table, tr
from bertlib.train import init_model
from bertlib.viz import FineTuneWidget, ScoredClassifier, new_figure
from bertlib.viz.listing import show_source
from bertlib.weights.hf import minilm_directory

# %%
# One thread: the printed numbers then come out the same on any number of cores (the order of
# floating-point sums depends on the thread count), and for models this small it is not slower.
torch.set_num_threads(1)

STEPS, LR = 100, 7e-4  # the fine-tuning recipe of the small models (batches of 32)

# %% [markdown] lang="en"
# ## Four tasks from the corpus templates
#
# Fine-tuning needs labelled data. We make it the way the pretraining corpus was made
# (notebook 06): `scripts/make_tasks.py` fills the same hand-written templates with names,
# days and places, and records, for every sentence, the story it belongs to, the story's topic
# (one of 12: the market, a rainy day, the library, …), which template it came from, and where
# the filled-in names, places and times are. The sets ship with `bertlib`, 1,440 sentences per
# language:

# %% [markdown] lang="zh"
# ## 用语料库的句子模板构造四个任务
#
# 微调需要有标签的数据。我们用构造预训练语料库的办法来构造它（见笔记本 06）：
# `scripts/make_tasks.py` 用人名、星期和地点填充同样的手写句子模板，并为每个句子记下它属于哪个
# 故事、故事的话题（共 12 个：买菜、下雨天、图书馆……）、它来自哪个模板，以及填进去的人名、地点和
# 时间在句子中的位置。`bertlib` 自带这些数据，每种语言 1,440 个句子：

# %% [markdown] lang="ja"
# ## コーパスのテンプレートから作った 4 つのタスク
#
# ファインチューニングにはラベル付きのデータが必要です。これは事前学習のコーパスと同じ方法で作ります
# （ノートブック 06）。`scripts/make_tasks.py` は同じ手書きのテンプレートに名前、曜日、場所を埋め込
# み、各文について、それが属する物語、物語の話題（買い物、雨の日、図書館、… の 12 種類のいずれか）、
# 元になったテンプレート、そして埋め込んだ人名、場所、時間の位置を記録します。データは `bertlib` に
# 付属していて、各言語 1,440 文です。

# %%
sentences = load_task_sentences()
langs = Counter(s.lang for s in sentences)
print(tr("sentences: English {en}, Chinese {zh}", en=langs["en"], zh=langs["zh"]))
topics, tag_names = class_names("topic"), class_names("tags")
rows = []
for s in (sentences[0], sentences[1], sentences[1440], sentences[1441]):
    spans = "  ".join(f"{s.text[start:end]}/{tag_names[TAGS.index(tag)]}"
                      for start, end, tag in s.spans)  # the filled-in names, places and times
    rows.append([s.template, tr("story {n}", n=s.story), topics[s.topic], s.text, spans])
print(table(rows))

# %% [markdown] lang="en"
# The sentences give four tasks, one for each group of applications the chapter fine-tunes BERT
# for:
#
# * **sentence level, topic**: which of the 12 topics is `<cls>` sentence `<sep>` about?
# * **pair level, same story**: do A and B in `<cls>` A `<sep>` B `<sep>` come from the same
#   story? Half of the pairs do; in the other half, B comes from a story about another topic.
# * **token level, tags**: is each token part of a name, a place, a time, or none of these? This
#   is named-entity recognition in miniature; a word cut into several WordPiece tokens gives its
#   tag to each piece, which is trained and scored (the BERT paper scores the first piece of
#   each word only: a simplification here), and `<cls>`, `<sep>` and the padding get the label
#   `IGNORE`, so that no loss is computed there.
# * **question answering, spans**: in `<cls>` question `<sep>` sentence `<sep>`, which tokens
#   answer *who*, *where* or *when*? One question per name, place and time of a sentence.

# %% [markdown] lang="zh"
# 这些句子构成四个任务，正好对应本章微调 BERT 的四类应用：
#
# * **句子级，话题**：`<cls>` 句子 `<sep>` 讲的是 12 个话题中的哪一个？
# * **句子对级，同一个故事**：`<cls>` A `<sep>` B `<sep>` 中的 A 和 B 是否出自同一个故事？其中一半的
#   句子对是这样；另一半的 B 则来自另一个话题的故事。
# * **词元级，标注**：每个词元是人名、地点、时间的一部分，还是都不是？这相当于一个微缩版的命名实体识
#   别；如果一个词切成了几个 WordPiece 词元，每个子词都沿用这个词的标签，每个子词都参与训练和评分
#   （BERT 论文只对每个词的第一个子词评分；这里做了简化）；`<cls>`、`<sep>` 和填充的位
#   置标为 `IGNORE`，这些位置不计算损失。
# * **问答，区间**：在 `<cls>` 问题 `<sep>` 句子 `<sep>` 中，哪些词元回答了“谁”“在哪儿”或“哪
#   天”？句子中的每个人名、地点和时间各对应一个问题。

# %% [markdown] lang="ja"
# これらの文から 4 つのタスクを作ります。本章が BERT をファインチューニングする応用のグループごとに
# 1 つずつです。
#
# * **文単位、話題**：`<cls>` 文 `<sep>` は 12 の話題のどれについての文か。
# * **ペア単位、同じ物語**：`<cls>` A `<sep>` B `<sep>` の A と B は同じ物語から来ているか。ペアの半
#   分はそうで、残りの半分では B は別の話題の物語から来ています。
# * **トークン単位、タグ**：各トークンは人名、場所、時間の一部か、どれでもないか。固有表現認識の小型
#   版です。複数の WordPiece のトークンに切られた単語は、各サブワードに自分のタグを与え、どのサブワ
#   ードも学習と採点の対象になります（BERT の論文は各単語の最初のサブワードだけを採点します。ここで
#   は簡略化しています）。`<cls>`、`<sep>`、パディングにはラベル `IGNORE` を付け、そこでは損失を計算
#   しません。
# * **質問応答、スパン**：`<cls>` 質問 `<sep>` 文 `<sep>` で、*who*、*where*、*when* に答えるのはど
#   のトークンか。文の人名、場所、時間ごとに 1 つの質問を作ります。

# %%
small_bert, tokenizer = load_small_bert()
max_len = small_bert.config.max_len
for s in (sentences[0], sentences[1444]):
    pieces = tokenizer.tokenize(s.text)
    print(" ".join(f"{p}/{tag_names[t]}" if t else p
                   for p, t in zip(pieces, token_tags(s, tokenizer), strict=True)))
pairs = pair_data(sentences[:12] + sentences[1440:1452], tokenizer, max_len, seed=0)
print(tr("pairs:"), tuple(pairs.tokens.shape), tr("labels"), pairs.labels.tolist())
print(" ".join(tokenizer.vocab.to_tokens(pairs.tokens[0, :int(pairs.valid_lens[0])].tolist())))

# %% [markdown] lang="en"
# ## Hold out templates, not sentences
#
# The corpus is built from templates: two wordings for each step of each story, with names,
# days and foods filled in. If we held out random sentences, almost every held-out sentence
# would have a twin in training that differs only in a name, and held-out accuracy would
# measure how well a model remembers templates. So `split_by_template` holds out *whole
# templates*: for each topic and language, one of the two wordings of three of the six steps.
# The other wording of those steps stays in training, so every step is still taught, but a
# held-out sentence is always worded in a way the model never saw with a label.

# %% [markdown] lang="zh"
# ## 留出模板，而不是留出句子
#
# 语料库是用模板生成的：每个故事的每一步有两种措辞，再填入人名、星期、食物等。如果随机留出句子，几乎
# 每个留出的句子都会在训练集中有一个只差一个名字的“双胞胎”，留出数据上的准确率衡量的就只是模型记住了
# 多少模板。所以 `split_by_template` 留出**整个模板**：在每种语言的每个话题中，从六个步骤里选出三
# 个，各留出两种措辞中的一种。这些步骤的另一种措辞仍在训练集中，所以每一步都有训练样本；但留出句子所
# 用的措辞，模型从未在有标签的训练数据中见过。

# %% [markdown] lang="ja"
# ## 文ではなくテンプレートを取り分ける
#
# コーパスはテンプレートから作られています。各物語の各段階に 2 通りの言い回しがあり、名前、曜日、食
# べ物が埋め込まれています。文をランダムに取り分けると、ホールドアウトの文のほとんどに、名前が違うだ
# けの双子が学習データの中にあることになり、ホールドアウトデータでの正解率は、モデルがテンプレートを
# どれだけ覚えているかを測ることになってしまいます。そこで `split_by_template` は**テンプレートご
# と**取り分けます。話題と言語ごとに、6 つの段階のうち 3 つについて、2 通りの言い回しの一方を取り分
# けるのです。その段階のもう一方の言い回しは学習データに残るので、どの段階も教えられますが、ホールド
# アウトの文は必ず、モデルがラベル付きでは一度も見たことのない言い回しになっています。

# %%
split = split_by_template(sentences, held_out_steps=3, seed=0)
train_templates = {(s.lang, s.template) for s in split.train}
print(tr("{train} training sentences, {held} held-out sentences",
         train=len(split.train), held=len(split.held_out)))
print(tr("templates on both sides: {n}", n=len(train_templates & split.held_out_templates)))
held = next(s for s in split.held_out if s.lang == corpus_language())  # one in this edition's
topic_, step, wording = held.template.split(".")
twin = next(s for s in split.train  # the other wording of that step, in the same language
            if s.template == f"{topic_}.{step}.{1 - int(wording)}" and s.lang == held.lang)
print(tr("held out: {sentence}", sentence=held.text))
print(tr("trained:  {sentence}", sentence=twin.text))

# %% [markdown] lang="en"
# One caveat: the small BERT was *pretrained* on the whole corpus, held-out wordings included.
# That is the setting pretraining is meant for (lots of unlabelled text from the domain, few
# labels), but keep it in mind: the held-out sentences are new to the *labels*, not to the
# pretrained encoder.
#
# ## The classifier and the tagger
#
# The chapter's `BERTClassifier` keeps the pretrained encoder and the `hidden` layer (the
# Linear + Tanh on `<cls>` that fed the NSP head, the *pooler*), and adds a new output layer with
# one output per class. For a text pair nothing changes: `<cls>` A `<sep>` B `<sep>` and its
# segment ids go in, as for the chapter's natural language inference.

# %% [markdown] lang="zh"
# 需要说明一点：小 BERT 是在整个语料库上**预训练**的，其中也包括留出的措辞。这正是预训练所针对的情形
# （领域内有大量无标签文本，有标签的却很少），但要记住：留出的句子只是对**标签**来说是新的，对预训练
# 的编码器来说并不新。
#
# ## 分类器与标注器
#
# 本章的 `BERTClassifier` 保留预训练的编码器和 `hidden` 层，再加一个新的输出层，每个类别对应一个输
# 出。`hidden` 层就是汇聚层（pooler），即作用在 `<cls>` 上的全连接层 + Tanh，它原本为下一句预测的输
# 出层提供输入。处理文本对时什么都不用改：把 `<cls>` A `<sep>` B `<sep>` 及其片段索引送进去即可，本
# 章的自然语言推断就是这样做的。

# %% [markdown] lang="ja"
# 注意が 1 つあります。小さな BERT は、取り分けた言い回しも含むコーパス全体で**事前学習**されていま
# す。これは事前学習が想定している状況（その分野のラベルのないテキストはたくさんあり、ラベルは少な
# い）ですが、覚えておいてください。ホールドアウトの文が新しいのは**ラベル**にとってであって、事前学
# 習済みのエンコーダにとってではありません。
#
# ## 分類器とタガー
#
# 本章の `BERTClassifier` は事前学習済みのエンコーダと `hidden` 層（次文予測の出力層に入力していた、
# `<cls>` に作用する全結合層 + Tanh、つまりプーラー）をそのまま使い、クラスごとに 1 つの出力を持つ新
# しい出力層を加えます。テキストのペアでも何も変わりません。本章の自然言語推論と同じように、`<cls>`
# A `<sep>` B `<sep>` とそのセグメントインデックスを入力します。

# %%
show_source(BERTClassifier)

# %% [markdown] lang="en"
# Two details differ from the chapter's code: the encoder and the hidden layer are *copies*, so
# fine-tuning leaves `small_bert` as it was (we fine-tune it several times below), and the new
# layer's initial weights depend on a `seed` only. For token-level tasks, `BERTTagger` applies
# its output layer to every token's representation instead of `<cls>`'s:

# %% [markdown] lang="zh"
# 与本章的代码相比有两处不同：编码器和 `hidden` 层都是**副本**，所以微调不会改动 `small_bert`（下面
# 我们要从它出发微调好几次）；新输出层的初始权重只取决于 `seed`。对于词元级任务，`BERTTagger` 把输出
# 层作用在每个词元的表示上，而不是只作用在 `<cls>` 的表示上：

# %% [markdown] lang="ja"
# 本章のコードと違う点が 2 つあります。エンコーダと hidden 層は**コピー**なので、ファインチューニン
# グしても `small_bert` は元のままです（下で何度もファインチューニングします）。また、新しい層の初期
# の重みは `seed` だけで決まります。トークン単位のタスクでは、`BERTTagger` が出力層を `<cls>` の表現
# ではなく各トークンの表現に適用します。

# %%
show_source(BERTTagger.forward)
classifier = BERTClassifier(small_bert, NUM_TOPICS, seed=0)
tagger = BERTTagger(small_bert, len(TAGS), seed=0)
batch = topic_data(split.train[:4], tokenizer, max_len)
inputs = batch.tokens, batch.segments, batch.valid_lens
with torch.no_grad():
    print("BERTClassifier:", tuple(classifier(*inputs).shape))  # (B, C)
    print("BERTTagger:    ", tuple(tagger(*inputs).shape))  # (B, T, C)

# %% [markdown] lang="en"
# The loss is the cross-entropy of the labels, averaged over every labelled position of the
# batch: one per sentence for the classifier, one per real token for the tagger. Positions
# labelled `IGNORE` count for nothing (you will write this loss yourself in the exercises):

# %% [markdown] lang="zh"
# 损失是标签的交叉熵，对批量中所有有标签的位置求平均：分类器每个句子一个位置，标注器每个真实词元
# 一个位置。标为 `IGNORE` 的位置不计入（在练习中你将亲手写出这个损失）：

# %% [markdown] lang="ja"
# 損失はラベルの交差エントロピーを、バッチ内のラベルのあるすべての位置で平均したものです。分類器では
# 文ごとに 1 つ、タガーでは実在するトークンごとに 1 つです。`IGNORE` のラベルが付いた位置は数に入り
# ません（この損失は演習で自分で書きます）。

# %%
tags = tagging_data(split.train[:2], tokenizer, max_len)
print(tags.labels)
with torch.no_grad():
    print(tr("loss {loss:.3f}, ln 4 = {ln4:.3f}", ln4=math.log(4),
             loss=task_loss(tagger(*tags.tensors()[:3]), tags.labels)))

# %% [markdown] lang="en"
# ## Fine-tuning the small BERT
#
# `fine_tune` runs the same loop as `train_bert` (notebook 06): Adam, seeded batches and
# dropout, a progress bar; only the loss differs. We train on the topics of the training
# sentences of both languages, then measure the accuracy on the held-out sentences, per
# language, with a 95% confidence interval (the Wilson interval: with a few hundred sentences
# per language, an accuracy is only known to a few percentage points).

# %% [markdown] lang="zh"
# ## 微调小 BERT
#
# `fine_tune` 运行的是和 `train_bert`（笔记本 06）相同的循环：Adam 优化器、设定了随机种子的批量、
# dropout（暂退法）和进度条；只有损失不同。我们用两种语言的训练句子及其话题标签进行训练，然后在留出
# 的句子上按语言分别计算准确率，并给出 95% 置信区间（Wilson 区间：每种语言只有几百个句子，准确率只能
# 精确到几个百分点）。

# %% [markdown] lang="ja"
# ## 小さな BERT をファインチューニングする
#
# `fine_tune` は `train_bert`（ノートブック 06）と同じループを回します。Adam、乱数シードを設定した
# バッチ、ドロップアウト、進捗バーです。違うのは損失だけです。両方の言語の学習用の文で話題を学習さ
# せ、ホールドアウトの文での正解率を言語ごとに 95% 信頼区間付きで測ります（Wilson 区間。1 言語あたり
# 数百文では、正解率は数パーセントポイントの幅でしか分かりません）。

# %%
topic_train = topic_data(split.train, tokenizer, max_len)
topic_held = topic_data(split.held_out, tokenizer, max_len)
print(tr("training {train}, held out {held}",
         train=tuple(topic_train.tokens.shape), held=tuple(topic_held.tokens.shape)))
history = fine_tune(classifier, topic_train, num_steps=STEPS, lr=LR, seed=0)
print(tr("loss over {steps} steps: first 10 {first:.2f}, last 10 {last:.2f}",
         steps=len(history.loss), first=sum(history.loss[:10]) / 10,
         last=sum(history.loss[-10:]) / 10))


def held_out_accuracy(model, data, languages=("en", "zh")):
    """Topic accuracy on the held-out sentences of each language."""
    return {lang: evaluate_task(model, data.select(lang), NUM_TOPICS).overall
            for lang in languages}


MODELS = {"pretrained": tr("small BERT, pretrained"), "random": tr("small BERT, random start"),
          "bow": tr("bag of words"), "frozen": tr("small BERT, encoder frozen"),
          "minilm": tr("MiniLM, pretrained")}
LANGUAGES = {"en": tr("English"), "zh": tr("Chinese")}


def print_results(names: list[str]) -> None:
    """These models' held-out accuracies, with 95% intervals: a row each, a column per
    language."""
    rows = [[tr("model"), *LANGUAGES.values()]]
    rows += [[MODELS[name], *(results[name].get(lang, "-") for lang in LANGUAGES)]
             for name in names]
    print(table(rows))


results = {"pretrained": held_out_accuracy(classifier, topic_held)}
print_results(["pretrained"])

# %% [markdown] lang="en"
# ### What pretraining buys: the same model from random weights
#
# To see what the pretrained weights are worth, we fine-tune the same architecture, with the
# same recipe, data and seed, from random weights (`init_model`). A cheaper baseline needs no
# encoder at all: **bag of words**, a linear classifier on how often each vocabulary entry occurs
# in the sentence, blind to word order and context.

# %% [markdown] lang="zh"
# ### 预训练带来了什么：从随机权重开始的同一个模型
#
# 为了看清预训练的权重有多大价值，我们用同样的训练配置、数据和随机种子，从随机权重（`init_model`）开
# 始微调同一个架构。还有一个成本更低的基线，根本不需要编码器：**词袋模型**。它是一个线性分类器，依据
# 词表中每个词元在句子中出现的次数进行分类，看不到词序，也看不到上下文。

# %% [markdown] lang="ja"
# ### 事前学習で得られるもの：ランダムな重みから始めた同じモデル
#
# 事前学習済みの重みにどれだけの価値があるかを見るために、同じ構造を、同じ学習設定、データ、乱数シー
# ドで、ランダムな重み（`init_model`）からファインチューニングします。もっと安上がりなベースラインに
# は、エンコーダすら要りません。**Bag-of-Words モデル**で、語彙の各項目が文に何回現れるかに基づく線
# 形分類器です。語順にも文脈にも目を向けません。

# %%
scratch = BERTClassifier(init_model(small_bert.config, seed=1), NUM_TOPICS, seed=0)
fine_tune(scratch, topic_train, num_steps=STEPS, lr=LR, seed=0, progress=False)
results["random"] = held_out_accuracy(scratch, topic_held)

bag = BagOfWords(len(tokenizer.vocab), NUM_TOPICS, seed=0)
fine_tune(bag, topic_train, num_steps=STEPS, lr=0.1, seed=0, progress=False)
results["bow"] = held_out_accuracy(bag, topic_held)
print_results(["pretrained", "random", "bow"])
gap = {lang: results["pretrained"][lang].value - results["random"][lang].value
       for lang in ("en", "zh")}
print(tr("{a} − {b}:", a=MODELS["pretrained"], b=MODELS["random"]),
      "  ".join(f"{LANGUAGES[lang]} {gap[lang]:+.3f}" for lang in LANGUAGES))

# %% [markdown] lang="en"
# Fine-tuned from the pretrained weights, the small BERT gets 0.194 of the held-out English
# sentences and 0.343 of the Chinese ones right; the same architecture fine-tuned from random
# weights gets 0.189 and 0.234. Chance is 1/12. In Chinese the intervals do not overlap: with
# the same labels, the same steps and the same seed, pretraining adds 0.110 to the accuracy. In
# English it adds next to nothing in this run (0.005), far less than the width of the
# intervals. (`tests/finetuning/test_finetune.py` repeats the comparison on every test run, with
# three
# seeds and both languages pooled.)
#
# The bag of words is a humbling baseline. It does clearly better than the pretrained small
# BERT in both languages (0.324 in English, 0.593 in Chinese). A topic is mostly told by its words
# (*library*, *ticket*, 医生, 球), and the bag of words sees each word directly, while the small
# BERT must learn to gather them into its `<cls>` vector, from 100 steps of labels, with an
# encoder that was briefly pretrained on a small corpus of template sentences. (In Chinese every
# character is a token, so many topic words reach the bag of words as several telling
# characters.) The last part of this notebook shows what a properly pretrained encoder does on
# the same test.
#
# Per class, the pretrained small BERT's held-out accuracy varies a lot:

# %% [markdown] lang="zh"
# 从预训练的权重出发微调，小 BERT 在英文留出句子上的准确率为 0.194，在中文留出句子上为 0.343；从随机
# 权重出发微调的同一个架构则为 0.189 和 0.234。随机猜测的准确率是 1/12。在中文上，两个置信区间互不重
# 叠：在标签、训练步数和随机种子都相同的情况下，预训练让准确率提高了 0.110。在英文上，这次运行中预训
# 练几乎没有带来提升（0.005），远小于置信区间的宽度。（`tests/finetuning/test_finetune.py` 每次运行
# 测试时都会用
# 三个随机种子、把两种语言合在一起重复这个比较。）
#
# 词袋基线则给人泼了一盆冷水：它在两种语言上都明显好于预训练的小 BERT（英文 0.324，中文 0.593）。话
# 题主要靠词语来判断（*library*、*ticket*、医生、球），词袋能直接看到每个词；而小 BERT 必须学会把这
# 些词的信息汇集到 `<cls>` 向量中，而有标签的训练只有 100 步，编码器也只在一个由模板句子组成的小语料
# 库上短暂预训练过。（中文里每个汉字是一个词元，所以许多话题词到了词袋那里，就成了好几个很能说明问题
# 的汉字。）本笔记本的最后一部分会展示，经过充分预训练的编码器在同样的测试中表现如何。
#
# 按类别来看，预训练的小 BERT 在留出数据上的准确率差别很大：

# %% [markdown] lang="ja"
# 事前学習済みの重みからファインチューニングした小さな BERT は、ホールドアウトの英語の文の 0.194、中
# 国語の文の 0.343 に正解します。ランダムな重みからファインチューニングした同じ構造は 0.189 と 0.234
# です。チャンスレベルは 1/12 です。中国語では区間が重なりません。同じラベル、同じステップ数、同じ乱
# 数シードで、事前学習は正解率を 0.110 上げています。英語では、この実行ではほとんど上がっていません
# （0.005）。区間の幅よりずっと小さな差です（`tests/finetuning/test_finetune.py` は、テストを実行す
# るたびに、3
# つの乱数シードと両言語を合わせてこの比較を繰り返しています）。
#
# Bag-of-Words モデルは、思い上がりをいさめてくれるベースラインです。どちらの言語でも、事前学習済み
# の小さな BERT よりはっきり良い結果を出します（英語 0.324、中国語 0.593）。話題はほとんど単語で分か
# り（*library*、*ticket*、医生、球）、Bag-of-Words モデルは各単語を直接見ます。一方、小さな BERT
# は、小さなテンプレートの文のコーパスで短時間だけ事前学習したエンコーダで、100 ステップぶんのラベル
# から、単語を `<cls>` ベクトルに集めることを学ばなければなりません（中国語では 1 文字が 1 トークン
# なので、話題を表す単語の多くは、手がかりになる複数の文字として Bag-of-Words モデルに届きます）。こ
# のノートブックの最後の部分では、きちんと事前学習したエンコーダが同じテストで何をするかを見ます。
#
# クラスごとに見ると、事前学習済みの小さな BERT のホールドアウトデータでの正解率は大きくばらつきま
# す。

# %%
per_class = evaluate_task(classifier, topic_held, NUM_TOPICS).per_class
print(table([[tr("topic"), f"{'n':>3}", tr("held-out accuracy (95% interval)")]]
            + [[name, f"{acc.n:>3}", acc] for name, acc in zip(topics, per_class, strict=True)]))
predicted = predict(classifier, topic_held)  # one topic per held-out sentence, in order
wrong = {s.text: topics[int(p)] for s, p in zip(split.held_out, predicted, strict=True)
         if s.topic == 0 and p != 0 and s.lang == corpus_language()}  # each sentence once
for text_, guess in list(wrong.items())[:3]:
    print(tr("{topic} → {guess}: {sentence}", topic=topics[0], guess=guess, sentence=text_))

# %% [markdown] lang="en"
# The dog in the park (0.702) and the birthday (0.544) are recognised most often; the guests
# never (0.000), the market rarely (0.100). Each row has only 54 to 73 sentences, so its interval
# is wide; still, a per-class table shows what one accuracy hides. The mistakes on the market are
# not subtle (the last lines): a stall and ripe fruit tell a reader the topic at once.
# Fine-tuned on the other wordings of the market story, the model has not carried these words
# over to sentences worded anew.
#
# ## Token-level: tagging names, places and times

# %% [markdown] lang="zh"
# 遛狗（0.702）和生日（0.544）最容易认出来；请客一次也没有认出来（0.000），买菜也很少认对（0.100）。
# 每一行只有 54 到 73 个句子，所以区间都很宽；尽管如此，按类别列表仍能看出单个总准确率掩盖了什么。模
# 型在“买菜”上犯的错（最后几行）其实错得很明显：读者一看这几个句子就知道是在买菜。模型
# 虽然在“买菜”故事的其他措辞上微调过，却没能把这些词迁移到换了说法的新句子上。
#
# ## 词元级任务：标注人名、地点和时间

# %% [markdown] lang="ja"
# 犬の散歩（0.702）と誕生日（0.544）は最もよく当たり、来客はまったく当たらず（0.000）、買い物もめっ
# たに当たりません（0.100）。各行は 54 から 73 文しかないので区間は広いのですが、それでもクラスごと
# の表を見れば、1 つの正解率が何を隠しているかが分かります。買い物での間違いは微妙なものではありませ
# ん（最後の数行）。屋台や熟した果物と聞けば、読む人にはすぐに話題が分かります。買い物の物語のほかの
# 言い回しでファインチューニングされたモデルは、これらの単語を新しい言い回しの文に持ち越せていないの
# です。
#
# ## トークン単位：人名、場所、時間のタグ付け

# %%
tag_train = tagging_data(split.train, tokenizer, max_len)
tag_held = tagging_data(split.held_out, tokenizer, max_len)
counts = Counter(tag_train.labels[tag_train.labels != IGNORE].tolist())
print(tr("training tokens: {counts}",
         counts="  ".join(f"{tag_names[t]} {counts[t]}" for t in range(len(TAGS)))))
fine_tune(tagger, tag_train, num_steps=60, lr=2e-3, seed=0, progress=False)
scores = {lang: evaluate_task(tagger, tag_held.select(lang), len(TAGS)) for lang in LANGUAGES}
print(table([[tr("tag"), *LANGUAGES.values()]]
            + [[name, *(scores[lang].per_class[t] for lang in LANGUAGES)]
               for t, name in enumerate(tag_names)]))
labelled = tag_held.labels[tag_held.labels != IGNORE]
print(tr("always '{tag}': right on {share:.3f} of the held-out tokens",
         tag=tag_names[0], share=(labelled == 0).float().mean()))

# %% [markdown] lang="en"
# The accuracy here is per tag: the share of the held-out tokens of each tag that got it. After
# 60 steps the tagger finds about half the names (0.486 English, 0.516 Chinese) in sentences
# worded as it never saw them, nearly all the Chinese times (0.989) but few of the English ones
# (0.185), and never a place (0.000). Places are rare: the
# templates fill in a city in only one step of one story, so the training sentences hold far
# fewer place tokens than name or time tokens (the counts above), and a loss averaged over all
# tokens barely notices them. That is also why a tagger is judged per tag: most tokens are
# *other*, so a tagger that always answers *other* is right on most tokens (the last line) and
# useless.

# %% [markdown] lang="zh"
# 这里的准确率是按标签计算的：在带某种标签的留出词元中，标对的比例。训练 60 步之后，在措辞从未见过的
# 句子中，标注器能找出大约一半的人名（英文 0.486，中文 0.516）；中文的时间几乎都能找出来（0.989），
# 英文的时间却只找出了少数（0.185）；地点则一个也没有找出来（0.000）。地点很少见：模板只在一个故事的
# 一个步骤里填入城市，所以训练句子中地点词元比人名和时间词元少得多（见上面的计数），对所有词元求平均
# 的损失几乎注意不到它们。这也是为什么要按标签评价标注器：绝大多数词元都是“其他”，永远回答“其他”的标
# 注器在大多数词元上都是对的（最后一行），却毫无用处。

# %% [markdown] lang="ja"
# ここでの正解率はタグごとのもので、各タグのホールドアウトのトークンのうち、そのタグを正しく付けられ
# た割合です。60 ステップの後、タガーは一度も見たことのない言い回しの文で人名のおよそ半分（英語
# 0.486、中国語 0.516）を見つけ、中国語の時間はほぼすべて（0.989）見つけますが、英語の時間はわずか
# （0.185）で、場所はまったく見つけません（0.000）。場所はまれなのです。テンプレートが都市を埋め込む
# のは 1 つの物語の 1 つの段階だけなので、学習用の文に含まれる場所のトークンは人名や時間のトークンよ
# りずっと少なく（上の数）、すべてのトークンで平均した損失はそれをほとんど気にかけません。タガーをタ
# グごとに評価するのもそのためです。ほとんどのトークンは「その他」なので、常に「その他」と答えるタ
# ガーは大半のトークンで正解しますが（最後の行）、役に立ちません。

# %% [markdown] lang="en"
# ## Question answering: a span of the text
#
# The chapter's fourth group of downstream tasks is question answering, as in SQuAD: the input
# is a question and a passage, `<cls>` question `<sep>` passage `<sep>`, and the answer is a
# span of the passage's tokens. The BERT paper adds only two vectors of size H, a start vector
# S and an end vector E. Token i's score for starting the answer is S·h_i, for ending it E·h_i,
# where h_i is the token's encoding; a softmax over the positions turns each row of scores into
# probabilities. The loss is the mean of the cross-entropies of the right start and the right
# end. To answer, the model takes the span from i to j, i ≤ j, with the highest S·h_i + E·h_j.
#
# Our task data hold the spans of the names, places and times that the templates filled in.
# Each becomes a question paired with its sentence: *who* for a name, *where* for a place,
# *when* for a time (哪个人, 哪儿, 哪天 for a Chinese sentence). The labels are the positions of
# the answer's first and last token in the whole input.

# %% [markdown] lang="zh"
# ## 问答：文本中的一个区间
#
# 本章列出的第四类下游任务是问答，例如 SQuAD：输入是一个问题和一段文字，即 `<cls>` 问题 `<sep>`
# 文字 `<sep>`，答案是这段文字中连续的若干个词元。BERT 论文只加了两个长度为 H 的向量：起点向量 S
# 和终点向量 E。设 h_i 是词元 i 的编码，那么词元 i 作为答案起点的分数是 S·h_i，作为终点的分数是
# E·h_i；对所有位置做 softmax，就把每一行分数变成了概率。损失是正确起点与正确终点的交叉熵的平均。
# 回答问题时，模型选出 S·h_i + E·h_j 最大的区间 i 到 j（i ≤ j）。
#
# 我们的任务数据记录了模板填入的人名、地点和时间所在的区间。每一个都变成一个问题，与它所在的句子配成
# 一对：人名问 *who*，地点问 *where*，时间问 *when*（中文句子分别问“哪个人”“哪儿”“哪天”）。标签
# 是答案的第一个和最后一个词元在整个输入中的位置。

# %% [markdown] lang="ja"
# ## 質問応答：テキストのスパン
#
# 本章の下流タスクの 4 つめのグループは、SQuAD のような質問応答です。入力は質問と文章で `<cls>` 質問
# `<sep>` 文章 `<sep>` となり、答えは文章のトークンのスパンです。BERT 論文が加えるのは、サイズ H の
# 2 つのベクトル、開始ベクトル S と終了ベクトル E だけです。トークン i が答えの始まりであるスコアは
# S·h_i、終わりであるスコアは E·h_i で、h_i はそのトークンのエンコーディングです。位置についての
# softmax で、スコアの各行を確率に変えます。損失は、正しい開始位置と正しい終了位置の交差エントロピー
# の平均です。答えるときには、S·h_i + E·h_j が最大になる i から j まで（i ≤ j）のスパンを取ります。
#
# タスクのデータには、テンプレートが埋め込んだ人名、場所、時間のスパンが含まれています。それぞれを、
# その文と組にした質問にします。人名には *who*、場所には *where*、時間には *when* です（中国語の文な
# ら 哪个人、哪儿、哪天）。ラベルは、入力全体の中での答えの最初と最後のトークンの位置です。

# %%
qa_train = span_data(split.train, tokenizer, max_len)
qa_held = span_data(split.held_out, tokenizer, max_len)
print(tr("questions: training {train}, held out {held}", train=len(qa_train), held=len(qa_held)))
i = qa_train.langs.index(corpus_language())  # the first question in this edition's language
tokens = tokenizer.vocab.to_tokens(qa_train.tokens[i, :qa_train.valid_lens[i]].tolist())
first, last = qa_train.labels[i].tolist()
print(" ".join(tokens))
print(tr("  answer: positions {first} to {last}, {answer}", first=first, last=last,
         answer=" ".join(tokens[first:last + 1])))

# %% [markdown] lang="en"
# `BERTQuestionAnswerer` puts a new `Linear(H, 2)` on the encoder: its two rows are S and E. It
# returns the scores as a tensor of shape (B, 2, T), with -inf on the padding. Read as logits of
# a T-way classification (which position?) for two rows, start and end, these scores make
# `task_loss` exactly the paper's loss, the mean over the two rows, and `fine_tune` trains the
# model unchanged.

# %% [markdown] lang="zh"
# `BERTQuestionAnswerer` 在编码器上加一个新的 `Linear(H, 2)`：它的两行就是 S 和 E。它返回形状为
# (B, 2, T) 的分数张量，填充位置的分数是 -inf。如果把起点和终点这两行分数各看作一个 T 类分类（答案
# 在哪个位置？）的 logits，那么 `task_loss` 恰好就是论文中的损失，即两行的平均，`fine_tune` 不用改
# 就能训练它。

# %% [markdown] lang="ja"
# `BERTQuestionAnswerer` はエンコーダの上に新しい `Linear(H, 2)` を置きます。その 2 つの行が S と E
# です。スコアを形状 (B, 2, T) のテンソルとして返し、パディングの位置は -inf にします。開始と終了の
# 2 つの行のそれぞれについて、T 通りの分類（どの位置か）のロジットとして読めば、`task_loss` はちょう
# ど論文の損失（2 つの行の平均）になり、`fine_tune` はそのままモデルを学習させられます。

# %%
show_source(BERTQuestionAnswerer)

# %% [markdown] lang="en"
# We fine-tune it with the recipe of the topic task, from the pretrained weights and from random
# ones. A baseline needs no model: for each kind of question, answer with the span most common
# among the training questions of that kind, counted from the sentence's first token. Accuracy
# is the exact match: the first and the last token both right.

# %% [markdown] lang="zh"
# 我们用话题任务的训练配置来微调它，一次从预训练的权重开始，一次从随机权重开始。还有一个不需要模型的
# 基线：每种问题都回答它在训练问题中最常见的那个区间（从句子的第一个词元算起）。准确率按完全匹配
# 计算：答案的第一个和最后一个词元都要对。

# %% [markdown] lang="ja"
# 話題のタスクと同じ学習設定で、事前学習済みの重みからとランダムな重みからファインチューニングしま
# す。ベースラインにはモデルは要りません。質問の種類ごとに、その種類の学習用の質問で最もよく現れるス
# パンを、文の最初のトークンから数えて答えるだけです。正解率は完全一致、つまり最初と最後のトークンの
# 両方が正しい割合です。

# %%
qa = BERTQuestionAnswerer(small_bert, seed=0)
fine_tune(qa, qa_train, num_steps=STEPS, lr=LR, seed=0, progress=False)
qa_random = BERTQuestionAnswerer(init_model(small_bert.config, seed=1), seed=0)
fine_tune(qa_random, qa_train, num_steps=STEPS, lr=LR, seed=0, progress=False)


def from_sentence_start(data):
    """The answers' first and last token (N, 2), counted from the sentence's first token."""
    return data.labels - data.segments.argmax(1, keepdim=True)  # segment 1 starts there


rows = [[tr("question"), "n", MODELS["pretrained"], MODELS["random"], tr("most common span")]]
guessed = 0
for kind, name in zip(TAGS[1:], tag_names[1:], strict=True):
    train_k = span_data(split.train, tokenizer, max_len, kinds=[kind])
    held_k = span_data(split.held_out, tokenizer, max_len, kinds=[kind])
    # The baseline: this question's most common span in training, as a (first, last) pair.
    common = Counter(map(tuple, from_sentence_start(train_k).tolist())).most_common(1)[0][0]
    hits = int((from_sentence_start(held_k) == torch.tensor(common)).all(1).sum())
    guessed += hits
    rows.append([name, len(held_k), span_accuracy(qa, held_k), span_accuracy(qa_random, held_k),
                 Accuracy(hits, len(held_k))])
rows.append([tr("all"), len(qa_held), span_accuracy(qa, qa_held),
             span_accuracy(qa_random, qa_held), Accuracy(guessed, len(qa_held))])
print(table(rows))

# %% [markdown] lang="en"
# Both fine-tuned models leave the baseline far behind: the most common span of each question
# answers 0.186 of the held-out questions, the models 0.807 (pretrained) and 0.929 (random
# start). Here, unlike with topics, the random start is ahead, and the intervals do not overlap:
# it finds every held-out name (1.000, against 0.808). Times are found by both (0.929 and 0.953);
# places, 23 held-out questions and as rare in training as in tagging, mostly by neither.
#
# How can a model trained from random weights find every name? The names come from a short list,
# and every name of a held-out question also occurs in training (the first line below): a model
# can learn to point at the tokens it has seen as answers to *who*, whatever the sentence around
# them. The lines after it are three of the pretrained model's misses: it points at words next to
# the name, or at a span too long or too short.

# %% [markdown] lang="zh"
# 两个微调过的模型都远远超过了基线：每种问题都回答它最常见的区间，能答对 0.186 的留出问题，而两个
# 模型分别答对 0.807（预训练）和 0.929（随机初始化）。与话题任务不同，这里随机初始化的模型领先，而且
# 置信区间没有重叠：它找出了所有留出的人名（1.000，而预训练的是 0.808）。时间两个模型都能找出来
# （0.929 和 0.953）；地点只有 23 个留出问题，在训练数据中也和标注任务里一样少，两个模型大多都找不
# 出来。
#
# 从随机权重训练的模型怎么能找出所有的人名？人名来自一个很短的名单，留出问题中的每个人名在训练数据
# 中都出现过（下面第一行）：模型可以学会指向那些在训练中作为 *who* 的答案出现过的词元，而不管它们
# 周围是什么句子。后面几行是预训练模型答错的三个例子：它指向了人名旁边的词，或者给出的区间太长、
# 太短。

# %% [markdown] lang="ja"
# ファインチューニングした 2 つのモデルは、どちらもベースラインを大きく引き離します。各質問で最もよ
# く現れるスパンはホールドアウトの質問の 0.186 に答え、モデルは 0.807（事前学習済み）と 0.929（ラン
# ダムな重みから）です。話題の場合と違ってここではランダムな重みから始めたほうが上で、区間も重なりま
# せん。ホールドアウトのすべての名前を見つけるのです（1.000、対して 0.808）。時間はどちらのモデルも
# 見つけます（0.929 と 0.953）。場所は、ホールドアウトの質問が 23 個しかなく、タグ付けと同じく学習
# データでもまれで、どちらのモデルもほとんど見つけられません。
#
# ランダムな重みから学習させたモデルが、どうしてすべての名前を見つけられるのでしょうか。名前は短いリ
# ストから取られていて、ホールドアウトの質問の人名はすべて学習データにも現れます（下の最初の行）。モ
# デルは、まわりの文がどうであれ、*who* の答えとして見たことのあるトークンを指せばよいことを学べるの
# です。その後の行は、事前学習済みのモデルが外した 3 つの例です。名前の隣の単語を指したり、長すぎた
# り短すぎたりするスパンを指したりしています。

# %%
def names(sentences):
    return {s.text[b:e] for s in sentences for b, e, kind in s.spans if kind == "NAME"}


print(tr("names in held-out questions: {n}, not seen in training: {new}",
         n=len(names(split.held_out)), new=len(names(split.held_out) - names(split.train))))
names_held = span_data(split.held_out, tokenizer, max_len, kinds=["NAME"])
found = predict_spans(qa, names_held)
missed = [i for i in (found != names_held.labels).any(1).nonzero()[:, 0].tolist()
          if names_held.langs[i] == corpus_language()]
for i in missed[:3]:
    tokens = tokenizer.vocab.to_tokens(names_held.tokens[i, :names_held.valid_lens[i]].tolist())
    (first, last), (got_first, got_last) = names_held.labels[i].tolist(), found[i].tolist()
    print(tr("{sentence}  answer: {answer}, found: {found}",
             sentence=" ".join(tokens[names_held.segments[i].argmax():-1]),
             answer=" ".join(tokens[first:last + 1]),
             found=" ".join(tokens[got_first:got_last + 1])))

# %% [markdown] lang="en"
# To answer, the model needs `best_span`: the best pair of a start and an end, not the best start
# and the best end on their own (exercise 4 asks you to write it).
#
# ## Which layers to freeze
#
# Fine-tuning updates every parameter. Freezing the lower layers (no gradient, no update) saves
# the backward pass through them and the optimizer's memory for them; the price is that they
# cannot adapt to the task. `freeze_layers` freezes the embeddings and all but the top
# `trainable_blocks` encoder blocks. Here is the extreme, the whole encoder frozen: only the
# hidden layer and the output layer learn.

# %% [markdown] lang="zh"
# 回答问题还需要 `best_span`：它找的是起点和终点组合起来最好的一对，而不是分别最好的起点和最好的终点
# （练习 4 请你写出它）。
#
# ## 冻结哪些层
#
# 微调会更新全部参数。冻结较低的层（不计算梯度，也不更新）可以省下这些层的反向传播，以及优化器为它们
# 占用的内存；代价是这些层无法适应新任务。`freeze_layers` 冻结嵌入层，以及除了最上面
# `trainable_blocks` 个编码器块之外的所有编码器块。下面是最极端的情况：冻结整个编码器，只有 `hidden`
# 层和输出层在学习。

# %% [markdown] lang="ja"
# 答えるために、モデルには `best_span` が必要です。最も良い開始と最も良い終了をそれぞれ選ぶのではな
# く、開始と終了の組として最も良いものを選ぶ関数です（演習 4 で書きます）。
#
# ## どの層を凍結するか
#
# ファインチューニングはすべてのパラメータを更新します。下の層を凍結すると（勾配を計算せず、更新もし
# ない）、その層を通る逆伝播とオプティマイザのメモリが節約できますが、その代わりにその層はタスクに適
# 応できません。`freeze_layers` は埋め込みと、上から `trainable_blocks` 個を除くすべてのエンコーダブ
# ロックを凍結します。ここでは極端な場合として、エンコーダ全体を凍結します。学習するのは hidden 層と
# 出力層だけです。

# %%
frozen = BERTClassifier(small_bert, NUM_TOPICS, seed=0)
total = sum(p.numel() for p in frozen.parameters())
trainable = freeze_layers(frozen, trainable_blocks=0)
frozen_history = fine_tune(frozen, topic_train, num_steps=STEPS, lr=LR, seed=0, progress=False)
results["frozen"] = held_out_accuracy(frozen, topic_held)
print(tr("trainable parameters: {n:,} of {total:,} ({frozen:,} frozen)",
         n=trainable, total=total, frozen=total - trainable))
# Adam keeps two running averages for every trainable parameter.
print(tr("Adam's state: {n:,} numbers instead of {total:,}", n=2 * trainable, total=2 * total))
faster = frozen_history.seconds < history.seconds
print(tr("the frozen steps took less time") if faster else tr("the frozen steps were not faster"))
print_results(["pretrained", "frozen"])

# %% [markdown] lang="en"
# Frozen, the encoder's 482,432 parameters need no gradient and no optimizer state, and each step
# is faster. But the held-out accuracy drops to 0.168 (English) and 0.283 (Chinese): in English
# about where the model trained from random weights stands (0.189), in Chinese about halfway
# between it (0.234) and full fine-tuning (0.343). The pretrained `<cls>` vector was shaped for
# next sentence prediction, and without adapting the encoder, it seems, the layers on top can
# read little of the topic from it. Full fine-tuning is ahead in both languages (0.194 against
# 0.168 in English, 0.343 against 0.283 in Chinese), but in both the intervals overlap: one run on
# this data cannot say how much it is worth. The trade-off also shifts with the model's size: with a
# large pretrained encoder and little time or memory, training only the top blocks is common
# (we do so with MiniLM below).
#
# ## A real BERT: MiniLM
#
# all-MiniLM-L6-v2 (notebook 08) was pretrained on far more text than our template corpus.
# It knows only English, so we fine-tune it on the English sentences, with its own
# tokenizer. To stay within the time budget of this notebook, we train only its top two encoder
# blocks (and the layers above them), with batches of 16 for 20 steps.

# %% [markdown] lang="zh"
# 冻结之后，编码器的 482,432 个参数既不需要梯度，也不需要优化器状态，每一步都更快。但留出数据上的
# 准确率降到了 0.168（英文）和 0.283（中文）：英文与从随机权重开始训练的模型（0.189）相差无几，
# 中文则大约在它（0.234）和微调全部参数（0.343）的中间。预训练得到的 `<cls>` 向量是为下一句预测
# 塑造的，看来编码器不做调整，上面的层就很难从中读出话题。微调全部参数在两种语言上都领先（英文
# 0.194 对 0.168，中文 0.343 对 0.283），但两种语言的置信区间都有重叠：仅凭这份数据上的一次运行，说
# 不清微调全部参数到底值多少。这种取舍也会随模型的大小而变化：当预训练的编码器很大、时间或内存又有限
# 时，常见的做法是只训练最上面几个块（下面对 MiniLM 就是这样做的）。
#
# ## 真实的 BERT：MiniLM
#
# all-MiniLM-L6-v2（见笔记本 08）预训练所用的文本远远多于我们的模板语料库。它只懂
# 英文，所以我们用它自己的分词器，在英文句子上微调它。为了不超出本笔记本的时间预算，我们只训练它
# 最上面的两个编码器块（以及它们上面的层），批量大小 16，训练 20 步。

# %% [markdown] lang="ja"
# 凍結すると、エンコーダの 482,432 個のパラメータには勾配もオプティマイザの状態も要らず、各ステップ
# は速くなります。しかしホールドアウトデータでの正解率は 0.168（英語）と 0.283（中国語）に下がりま
# す。英語ではランダムな重みから学習させたモデル（0.189）とほぼ同じ位置で、中国語ではそれ（0.234）と
# 完全なファインチューニング（0.343）のほぼ中間です。事前学習済みの `<cls>` ベクトルは次文予測のため
# に形づくられたもので、エンコーダを適応させなければ、その上の層はそこから話題をほとんど読み取れない
# ようです。完全なファインチューニングはどちらの言語でも上回っていて、英語では 0.194 対 0.168、中国
# 語では 0.343 対 0.283 ですが、どちらでも区間が重なっています。このデータでの 1 回の実行では、それ
# にどれだけの価値があるかは言えません。この損得はモデルの大きさによっても変わります。大きな事前学習
# 済みのエンコーダで、時間やメモリが少ないときは、上のブロックだけを学習させるのが一般的です（下の
# MiniLM でもそうします）。
#
# ## 本物の BERT：MiniLM
#
# all-MiniLM-L6-v2（ノートブック 08）は、テンプレートのコーパスよりはるかに多くのテキストで事前学習
# されています。英語しか知らないので、英語の文で、それ自身のトークナイザを使ってファインチューニング
# します。このノートブックの時間の予算に収めるため、上の 2 つのエンコーダブロック（とその上の層）だ
# けを、16 個ずつのバッチで 20 ステップ学習させます。

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # MiniLM ships no MLM or NSP head, as notebook 08 showed
    minilm, minilm_tokenizer = load_hf(minilm_directory())
english_train = [s for s in split.train if s.lang == "en"]
english_held = [s for s in split.held_out if s.lang == "en"]
minilm_classifier = BERTClassifier(minilm, NUM_TOPICS, seed=0)
print(tr("trainable parameters: {n:,}", n=freeze_layers(minilm_classifier, trainable_blocks=2)))
fine_tune(minilm_classifier, topic_data(english_train, minilm_tokenizer, 64), num_steps=20,
          batch_size=16, lr=4e-4, seed=0, progress=False)
results["minilm"] = held_out_accuracy(
    minilm_classifier, topic_data(english_held, minilm_tokenizer, 64), ("en",))
print_results(list(results))

# %%
fig = new_figure(7.5, 3.6)
fig.set_layout_engine("constrained")
ax = fig.add_subplot()
names = ["bow", "random", "frozen", "pretrained", "minilm"]
colors = ["#999999", "#E69F00", "#56B4E9", "#0072B2", "#009E73"]
for j, lang in enumerate(("en", "zh")):
    for i, name in enumerate(names):
        if lang not in results[name]:
            continue
        acc = results[name][lang]
        low, high = acc.interval
        ax.bar(j + (i - 2) * 0.16, acc.value, 0.15, color=colors[i],
               yerr=[[acc.value - low], [high - acc.value]], capsize=3,
               label=MODELS[name] if j == 0 else None)
ax.axhline(1 / NUM_TOPICS, color="#444444", linestyle="--", linewidth=1, label=tr("chance (1/12)"))
ax.set_xticks([0, 1], list(LANGUAGES.values()))
ax.set(ylim=(0, 1), ylabel=tr("held-out accuracy (95% interval)"), title=tr("Topic of a sentence "
                                                                            "from a held-out "
                                                                            "template"))
ax.legend(fontsize=8, loc="upper right")
display(fig)

# %% [markdown] lang="en"
# MiniLM gets 0.848 of the held-out English sentences right after only 20 steps, far above the
# small BERT (0.194) and the bag of words (0.324), with the same labels and the same held-out
# templates. The comparison is not MLM pretraining alone, though. MiniLM was distilled from a
# BERT pretrained on vastly more, and real, English text, and then trained on more than a
# billion sentence pairs to give sentences about the same thing similar vectors (notebook 08), a
# task close to telling topics apart. Words such as *fridge*, *groceries* and *market* met in
# countless contexts there, so a sentence worded in a new way still lands near its topic. The
# gap measures a large encoder trained for sentence similarity against a small one pretrained for
# minutes; the labels of the small task only have to point the way.
#
# ## Try it
#
# Type a sentence in English or Chinese: the widget shows a fine-tuned classifier's probability
# for each topic, and the tagger's tag for every token. Under the classifier's buttons it says
# how often that classifier was right on the held-out sentences (the table above) and what
# guessing gives (1/12). The buttons switch between two classifiers; the tags come from the
# small BERT's tagger either way.
#
# * The **small BERT** reads both languages, but it is right on only 0.194 of the held-out
#   English sentences and 0.343 of the Chinese ones: expect mostly wrong topics, if better than
#   chance.
# * **MiniLM** is right on 0.848 of the held-out English sentences: in English, expect the right
#   topic most of the time. It was fine-tuned and measured on English only, and many Chinese
#   characters are not in its vocabulary (the widget says how many of a sentence's pieces it
#   cannot read), so its answers to Chinese sentences mean little.
#
# Try a sentence from the corpus, then the same story told in new words, then something the
# corpus never talks about, each with both classifiers.

# %% [markdown] lang="zh"
# 只训练了 20 步，MiniLM 在英文留出句子上的准确率就达到了 0.848，远高于小 BERT（0.194）和词袋
# （0.324），而用的标签和留出模板都完全相同。不过，这个比较衡量的并不只是掩蔽语言模型的预训练。
# MiniLM 是从一个在多得多的真实英文文本上预训练过的 BERT 蒸馏出来的，之后又在十亿多个句子对上训练，
# 让讲同一件事的句子得到相近的向量（见笔记本 08），而这和区分话题已经很接近了。*fridge*、
# *groceries*、*market* 这样的词在那里无数次地一同出现，所以即使句子换了一种说法，它的表示仍然落在
# 同一话题附近。这里的差距衡量的是一个为句子相似度训练过的大编码器与一个只预训练了几分钟的小编码器
# 之间的差别；小任务的标签只需要指明方向。
#
# ## 动手试一试
#
# 输入一个英文或中文句子：小部件会显示一个微调后的分类器对每个话题给出的概率，以及标注器为每个词元打
# 的标签。在选择分类器的按钮下面，小部件会说明这个分类器在留出句子上的准确率（即上面表格中的数字），
# 以及随机猜测的准确率（1/12）。用这些按钮可以在两个分类器之间切换；无论选哪个，标注都来自小 BERT 的
# 标注器。
#
# * **小 BERT** 两种语言都能读，但在留出的英文句子上准确率只有 0.194，在中文句子上只有 0.343：它给出
#   的话题大多是错的，只是比随机猜测好一些。
# * **MiniLM** 在留出的英文句子上准确率达到 0.848：输入英文句子时，它大多数时候都能给出正确的话题。
#   它只在英文句子上微调和评估过，而且许多汉字不在它的词表中（小部件会说明一个句子中有多少个词元它读
#   不懂），所以它对中文句子给出的答案没有多大意义。
#
# 先试一个语料库中的句子，再用新的说法讲同一个故事，最后试试语料库从未谈到的内容，每次都用两个分类器
# 比较一下。

# %% [markdown] lang="ja"
# MiniLM はわずか 20 ステップで、ホールドアウトの英語の文の 0.848 に正解します。同じラベル、同じホー
# ルドアウトのテンプレートで、小さな BERT（0.194）や Bag-of-Words モデル（0.324）を大きく上回りま
# す。ただし、これはマスク言語モデルの事前学習だけを比べたものではありません。MiniLM は、はるかに多
# くの本物の英語のテキストで事前学習した BERT から蒸留され、さらに 10 億組を超える文ペアで、同じこと
# についての文に似たベクトルを与えるよう学習しています（ノートブック 08）。これは話題を見分けること
# に近いタスクです。*fridge*、*groceries*、*market* のような単語はそこで数えきれないほどの文脈に現れ
# ているので、新しい言い回しの文でも、その話題の近くに落ち着きます。この差が測っているのは、文の類似
# 度のために学習した大きなエンコーダと、数分だけ事前学習した小さなエンコーダの違いです。小さなタスク
# のラベルは、向かう方向を示しさえすればよいのです。
#
# ## 試してみよう
#
# 英語か中国語の文を入力してください。ウィジェットには、ファインチューニングした分類器による各話題の
# 確率と、タガーによる各トークンのタグが表示されます。分類器のボタンの下には、その分類器がホールドア
# ウトの文でどれだけ正解したか（上の表）と、当てずっぽうで答えた場合の値（1/12）が表示されます。ボタ
# ンで 2 つの分類器を切り替えられます。タグはどちらの場合も小さな BERT のタガーによるものです。
#
# このウィジェットのモデルは英語と中国語で学習したもので、日本語は読めません（かなは `<unk>` になり
# ます）。英語か中国語の文で試しましょう。
#
# * **小さな BERT**は両方の言語を読みますが、ホールドアウトの英語の文の 0.194、中国語の文の 0.343 に
#   しか正解しません。チャンスレベルよりは良いものの、話題はたいてい外れると思ってください。
# * **MiniLM**は、ホールドアウトの英語の文の 0.848 に正解します。英語なら、たいていは正しい話題が出
#   るでしょう。英語だけでファインチューニングし、英語だけで測ったモデルで、中国語の文字の多くは語彙
#   にありません（文のサブワードのうちいくつを読めないかをウィジェットが示します）。そのため、中国語
#   の文に対する答えにはあまり意味がありません。
#
# コーパスにある文、同じ物語を新しい言葉で語った文、コーパスがまったく扱っていない内容の文を、それぞ
# れ両方の分類器で試してみましょう。

# %%
# Each classifier with the tokenizer it reads and its held-out accuracy from the tables above.
classifiers = {
    MODELS["pretrained"]: ScoredClassifier(classifier, tokenizer, results["pretrained"]),
    MODELS["minilm"]: ScoredClassifier(minilm_classifier, minilm_tokenizer, results["minilm"]),
}
FineTuneWidget(classifiers, tagger, tokenizer, topics)

# %% [markdown] lang="en"
# ## Summary
#
# * Fine-tuning = the pretrained encoder + a new output layer, all trained on the task's labels:
#   on `<cls>` for a text or a text pair (`BERTClassifier`), on every token for tagging
#   (`BERTTagger`). The loss averages the cross-entropy over the labelled positions only.
# * Held-out data must hold out what a model could memorise: here whole templates.
# * On sentences of held-out templates, pretraining was worth 0.110 of accuracy to the small
#   BERT over random weights in Chinese, and next to nothing in English; a bag of words did
#   better in both languages. MiniLM, pretrained on real English, beat them all by far.
# * Per class and per tag, accuracy tells what one number hides: a rare tag (places) can be
#   missed entirely.
# * Question answering scores every token as the answer's start and as its end (two vectors, S
#   and E) and picks the best valid span. On our templates a model from random weights found
#   the names better than the pretrained one: the names come from a list seen in training.
# * Freezing the encoder saves time and memory, and costs accuracy.
#
# ## Exercises
#
# 1. ★ **Count.** How many learnable numbers does the tagger (`BERTTagger(small_bert, 4)`) have
#    fewer than the topic classifier, and why? Check below.
# 2. ★ **Count.** With `trainable_blocks=1`, how many parameters of the topic classifier are
#    still trained? Work it out from `small_bert.config`, then check below.
# 3. ★★ **Implement it: the tagging loss.** Write `tagging_loss(Y_hat, labels)`: `Y_hat` holds
#    logits of shape `(B, T, C)`, `labels` tag ids of shape `(B, T)`, `IGNORE` where there is
#    nothing to predict. Return the mean cross-entropy over the labelled positions of the whole
#    batch. The check compares it with `bertlib`'s on several batches, padding and edge cases
#    included, and tells you which case fails.
# 4. ★★ **Implement it: the best answer span.** Write `best_span(scores, allowed,
#    max_answer_len)`: `scores` of shape `(B, 2, T)` as `BERTQuestionAnswerer` gives them,
#    `allowed` a `(B, T)` bool tensor of the positions an answer may use. Return a `(B, 2)` long
#    tensor: for each example the first token i and the last token j, i ≤ j, both allowed, at
#    most `max_answer_len` tokens long, with the highest `scores[b, 0, i] + scores[b, 1, j]`.
# 5. ★★ Fine-tune a `BERTClassifier` on the pair task (`pair_data` of `split.train` and
#    `split.held_out`, `max_len` 64). How does its held-out accuracy compare with the topic
#    task's? Which pairs are hardest? (Hint: look at pairs whose sentences have no name in them.)
# 6. ★★ Try `trainable_blocks=1` on the small BERT. Where between frozen and fully trained do
#    its accuracy and its time per step land?
# 7. ★★ Hold out *random sentences* instead of templates (shuffle `sentences`, hold out a
#    quarter) and compare the three models again. Which model gains most, and why?
# 8. ★★ **Rare tags.** The tagger never finds a place. Give `F.cross_entropy` a `weight=` per
#    tag (for example inversely proportional to the counts printed above) in a copy of
#    `task_loss`, or repeat the training sentences that hold a place, and fine-tune again. What
#    happens to the *place* column, and to *other*?
# 9. ★★★ The bag of words does well on topics. Build a held-out set on which it must fail but a
#    model of context can succeed (think of word order, or of words that change the topic only
#    together), and test both.

# %% [markdown] lang="zh"
# ## 小结
#
# * 微调 = 预训练的编码器 + 一个新的输出层，全部参数都用任务的标签来训练：对一个文本或文本对，输出层
#   作用在 `<cls>` 上（`BERTClassifier`）；对标注任务，输出层作用在每个词元上（`BERTTagger`）。损失
#   只对有标签的位置求交叉熵的平均。
# * 留出数据必须把模型可能记住的东西留出来：这里是整个模板。
# * 在留出模板的句子上，与随机权重相比，预训练让小 BERT 在中文上的准确率提高了 0.110，在英文上几乎没
#   有提高；词袋在两种语言上都更好。在真实英文上预训练的 MiniLM 则远远超过了它们。
# * 按类别、按标签计算的准确率能揭示单个总数字掩盖的问题：罕见的标签（地点）可能一个也找不出来。
# * 问答给每个词元打两个分数：作为答案起点的分数和作为终点的分数（两个向量 S 和 E），再选出最好的
#   有效区间。在我们的模板数据上，从随机权重训练的模型比预训练的模型更善于找人名：人名来自一个在训练
#   中见过的名单。
# * 冻结编码器可以节省时间和内存，但会损失准确率。
#
# ## 练习
#
# 1. ★ **数一数。** 标注器（`BERTTagger(small_bert, 4)`）比话题分类器少多少个可学习的参数？为什么？
#    在下面检查你的答案。
# 2. ★ **数一数。** 当 `trainable_blocks=1` 时，话题分类器中还有多少个参数参与训练？根据
#    `small_bert.config` 算出来，再在下面检查。
# 3. ★★ **动手实现：标注任务的损失。** 写出 `tagging_loss(Y_hat, labels)`：`Y_hat` 是形状为
#    `(B, T, C)` 的 logits（未规范化的预测），`labels` 是形状为 `(B, T)` 的标签索引，不需要预测的位
#    置是 `IGNORE`。返回整个批量中所有有标签位置的交叉熵的平均值。检查单元格会在几个批量上（包括填充
#    和边界情况）把它与 `bertlib` 的实现比较，并告诉你哪个测试用例没有通过。
# 4. ★★ **动手实现：最好的答案区间。** 写出 `best_span(scores, allowed, max_answer_len)`：`scores`
#    是 `BERTQuestionAnswerer` 给出的形状为 `(B, 2, T)` 的分数，`allowed` 是形状为 `(B, T)` 的布尔张
#    量，标出答案可以使用的位置。返回形状为 `(B, 2)` 的 long 张量：对每个样本，给出第一个词元 i 和最
#    后一个词元 j，要求 i ≤ j、两者都被允许、长度不超过 `max_answer_len` 个词元，并且
#    `scores[b, 0, i] + scores[b, 1, j]` 最大。
# 5. ★★ 在句子对任务上微调一个 `BERTClassifier`（用 `split.train` 和 `split.held_out` 构造
#    `pair_data`，`max_len` 取 64）。它在留出数据上的准确率与话题任务相比如何？哪些句子对最难？（提
#    示：看看两个句子中都没有人名的句子对。）
# 6. ★★ 在小 BERT 上试试 `trainable_blocks=1`。它的准确率和每一步的时间，落在完全冻结与全部训练之间
#    的什么位置？
# 7. ★★ 不按模板，而是**随机留出句子**（打乱 `sentences`，留出四分之一），再比较这三个模型。哪个模型
#    提高得最多？为什么？
# 8. ★★ **罕见的标签。** 标注器从来没有找出过地点。复制一份 `task_loss`，给 `F.cross_entropy` 传入每
#    种标签的 `weight=`（例如与上面打印的计数成反比），或者把含有地点的训练句子重复几遍，然后重新微
#    调。“地点”这一列会怎样变化？“其他”呢？
# 9. ★★★ 词袋在话题任务上表现不错。构造一个留出数据集，让词袋必然失败、而能利用上下文的模型可以成功
#    （想想词序，或者只有同时出现才会改变话题的词），然后测试两者。

# %% [markdown] lang="ja"
# ## まとめ
#
# * ファインチューニング = 事前学習済みのエンコーダ + 新しい出力層で、すべてをタスクのラベルで学習さ
#   せます。テキストやテキストのペアには `<cls>` の上に（`BERTClassifier`）、タグ付けには各トークン
#   の上に（`BERTTagger`）出力層を置きます。損失は、ラベルのある位置だけで交差エントロピーを平均しま
#   す。
# * ホールドアウトデータでは、モデルが覚えてしまえるものを取り分けなければなりません。ここではテンプ
#   レート全体です。
# * 取り分けたテンプレートの文では、事前学習は小さな BERT に、ランダムな重みと比べて中国語で 0.110
#   の正解率をもたらしましたが、英語ではほとんど何ももたらしませんでした。Bag-of-Words モデルはどち
#   らの言語でもそれより良い結果でした。本物の英語で事前学習した MiniLM は、そのすべてを大きく上回り
#   ました。
# * クラスごと、タグごとの正解率は、1 つの数字が隠すものを教えてくれます。まれなタグ（場所）はまった
#   く見つからないことがあります。
# * 質問応答では、各トークンを答えの開始と終了としてスコア付けし（2 つのベクトル S と E）、有効なス
#   パンの中で最も良いものを選びます。私たちのテンプレートでは、ランダムな重みから始めたモデルのほう
#   が事前学習済みのモデルより名前をよく見つけました。名前は学習で見たリストから取られているからで
#   す。
# * エンコーダを凍結すると時間とメモリが節約できますが、正解率が下がります。
#
# ## 演習
#
# 1. ★ **数えてみよう。** タガー（`BERTTagger(small_bert, 4)`）の学習可能な数は、話題の分類器よりい
#    くつ少ないでしょうか。それはなぜですか。下で確かめましょう。
# 2. ★ **数えてみよう。** `trainable_blocks=1` のとき、話題の分類器のパラメータのうち学習されるもの
#    はいくつ残るでしょうか。`small_bert.config` から計算し、下で確かめましょう。
# 3. ★★ **実装してみよう：タグ付けの損失。** `tagging_loss(Y_hat, labels)` を書きましょう。`Y_hat`
#    は形状 `(B, T, C)` のロジット、`labels` は形状 `(B, T)` のタグインデックスで、予測するもののな
#    い位置は `IGNORE` です。バッチ全体のラベルのある位置での交差エントロピーの平均を返します。
#    チェック用のセルは、パディングや端のケースを含むいくつかのバッチで `bertlib` の実装と比べ、どの
#    テストケースで食い違うかを教えてくれます。
# 4. ★★ **実装してみよう：最良の答えのスパン。** `best_span(scores, allowed, max_answer_len)` を書き
#    ましょう。`scores` は `BERTQuestionAnswerer` が返す形状 `(B, 2, T)` のスコア、`allowed` は答え
#    に使える位置を示す `(B, T)` の bool テンソルです。形状 `(B, 2)` の long テンソルを返します。各
#    例について、最初のトークン i と最後のトークン j（i ≤ j、どちらも使える位置、長さは
#    `max_answer_len` トークン以下）のうち、`scores[b, 0, i] + scores[b, 1, j]` が最大になるもので
#    す。
# 5. ★★ ペアのタスク（`split.train` と `split.held_out` の `pair_data`、`max_len` 64）で
#    `BERTClassifier` をファインチューニングしましょう。ホールドアウトデータでの正解率は、話題のタス
#    クと比べてどうでしょうか。最も難しいのはどのペアですか（ヒント：名前を含まない文ペアを見てみま
#    しょう）。
# 6. ★★ 小さな BERT で `trainable_blocks=1` を試しましょう。正解率と 1 ステップあたりの時間は、凍結
#    した場合と完全に学習させた場合のあいだのどこに来るでしょうか。
# 7. ★★ テンプレートではなく**ランダムな文**を取り分けて（`sentences` をシャッフルし、4 分の 1 を取
#    り分けます）、3 つのモデルをもう一度比べましょう。最も得をするのはどのモデルで、それはなぜで
#    しょうか。
# 8. ★★ **まれなタグ。** タガーは場所をまったく見つけません。`task_loss` のコピーで
#    `F.cross_entropy` にタグごとの `weight=` を与える（たとえば上で表示した数に反比例させる）か、場
#    所を含む学習用の文を繰り返して、もう一度ファインチューニングしましょう。「場所」の列と「その
#    他」の列はどうなるでしょうか。
# 9. ★★★ Bag-of-Words モデルは話題ではよくできます。Bag-of-Words モデルは必ず失敗するが、文脈を扱う
#    モデルなら成功できるようなホールドアウトデータを作り（語順や、組み合わさって初めて話題を変える
#    単語を考えてみましょう）、両方を試しましょう。

# %%
answer = None  # your answer to exercise 1: an integer
check_exercise("09_tagger_fewer", answer)

# %%
answer = None  # your answer to exercise 2: an integer
check_exercise("09_frozen_trainable", answer)


# %%
def tagging_loss(Y_hat, labels):
    """Exercise 3. Y_hat: (B, T, C) logits; labels: (B, T) tag ids, IGNORE where nothing is
    predicted. Returns the mean cross-entropy over the labelled positions (a 0-dim tensor)."""
    raise NotImplementedError  # replace this line with your code


check_implementation("09_tagging_loss", tagging_loss)


# %%
def best_span(scores, allowed, max_answer_len):
    """Exercise 4. scores: (B, 2, T), row 0 for the start, row 1 for the end; allowed: (B, T)
    bool. Returns (B, 2) long: the first and last token of the best allowed span."""
    raise NotImplementedError  # replace this line with your code


check_implementation("09_best_span", best_span)

# %% [raw] strings="zh"
# "English"
# "英文"
#
# "Chinese"
# "中文"
#
# "model"
# "模型"
#
# "small BERT, pretrained"
# "小 BERT（预训练）"
#
# "small BERT, random start"
# "小 BERT（随机初始化）"
#
# "bag of words"
# "词袋"
#
# "MiniLM, pretrained"
# "MiniLM（预训练）"
#
# "small BERT, encoder frozen"
# "小 BERT（冻结编码器）"
#
# "held-out accuracy (95% interval)"
# "留出数据上的准确率（95% 置信区间）"
#
# "chance (1/12)"
# "随机猜测（1/12）"
#
# "topic"
# "话题"
#
# "tag"
# "标签"
#
# "trainable parameters: {n:,}"
# "可训练的参数：{n:,} 个"
#
# "trainable parameters: {n:,} of {total:,} ({frozen:,} frozen)"
# "可训练的参数：{n:,} 个（共 {total:,} 个，冻结 {frozen:,} 个）"
#
# "Adam's state: {n:,} numbers instead of {total:,}"
# "Adam 的状态：{n:,} 个数，原本需要 {total:,} 个"
#
# "the frozen steps took less time"
# "冻结之后每步用时更少"
#
# "pairs:"
# "句子对："
#
# "labels"
# "标签"
#
# "{train} training sentences, {held} held-out sentences"
# "训练句子 {train} 个，留出句子 {held} 个"
#
# "templates on both sides: {n}"
# "两边都有的模板：{n} 个"
#
# "held out: {sentence}"
# "留出：{sentence}"
#
# "trained:  {sentence}"
# "训练：{sentence}"
#
# "loss {loss:.3f}, ln 4 = {ln4:.3f}"
# "损失 {loss:.3f}，ln 4 = {ln4:.3f}"
#
# "training {train}, held out {held}"
# "训练 {train}，留出 {held}"
#
# "loss over {steps} steps: first 10 {first:.2f}, last 10 {last:.2f}"
# "损失（共 {steps} 步）：前 10 步平均 {first:.2f}，最后 10 步平均 {last:.2f}"
#
# "training tokens: {counts}"
# "训练词元数：{counts}"
#
# "always '{tag}': right on {share:.3f} of the held-out tokens"
# "总猜“{tag}”：留出词元中猜对的比例为 {share:.3f}"
#
# "Topic of a sentence from a held-out template"
# "预测留出模板中句子的话题"
#
# "sentences: English {en}, Chinese {zh}"
# "句子：英文 {en} 个，中文 {zh} 个"
#
# "the frozen steps were not faster"
# "冻结之后每步并没有更快"
#
# "{a} − {b}:"
# "{a} − {b}："
#
# "{topic} → {guess}: {sentence}"
# "{topic} → {guess}：{sentence}"
#
# "story {n}"
# "故事 {n}"
#
# "questions: training {train}, held out {held}"
# "问题：训练 {train} 个，留出 {held} 个"
#
# "  answer: positions {first} to {last}, {answer}"
# "  答案：位置 {first} 到 {last}，{answer}"
#
# "question"
# "问题"
#
# "most common span"
# "最常见的区间"
#
# "all"
# "全部"
#
# "names in held-out questions: {n}, not seen in training: {new}"
# "留出问题中的人名：{n} 个，其中训练中没见过的：{new} 个"
#
# "{sentence}  answer: {answer}, found: {found}"
# "{sentence}  答案：{answer}，找到的：{found}"

# %% [raw] strings="ja"
# "English"
# "英語"
#
# "Chinese"
# "中国語"
#
# "model"
# "モデル"
#
# "small BERT, pretrained"
# "小さな BERT（事前学習済み）"
#
# "small BERT, random start"
# "小さな BERT（ランダムな重みから）"
#
# "bag of words"
# "Bag-of-Words"
#
# "MiniLM, pretrained"
# "MiniLM（事前学習済み）"
#
# "small BERT, encoder frozen"
# "小さな BERT（エンコーダを凍結）"
#
# "held-out accuracy (95% interval)"
# "ホールドアウトデータでの正解率（95% 区間）"
#
# "chance (1/12)"
# "チャンスレベル（1/12）"
#
# "topic"
# "話題"
#
# "tag"
# "タグ"
#
# "trainable parameters: {n:,}"
# "学習するパラメータ：{n:,} 個"
#
# "trainable parameters: {n:,} of {total:,} ({frozen:,} frozen)"
# "学習するパラメータ：{total:,} 個中 {n:,} 個（凍結 {frozen:,} 個）"
#
# "Adam's state: {n:,} numbers instead of {total:,}"
# "Adam の状態：{total:,} 個ではなく {n:,} 個の数"
#
# "the frozen steps took less time"
# "凍結したステップのほうが短時間で済んだ"
#
# "pairs:"
# "ペア："
#
# "labels"
# "ラベル"
#
# "{train} training sentences, {held} held-out sentences"
# "学習用の文 {train}、ホールドアウトの文 {held}"
#
# "templates on both sides: {n}"
# "両方にあるテンプレート：{n} 個"
#
# "held out: {sentence}"
# "評価用：{sentence}"
#
# "trained:  {sentence}"
# "学習用：{sentence}"
#
# "loss {loss:.3f}, ln 4 = {ln4:.3f}"
# "損失 {loss:.3f}、ln 4 = {ln4:.3f}"
#
# "training {train}, held out {held}"
# "学習用 {train}、ホールドアウト {held}"
#
# "loss over {steps} steps: first 10 {first:.2f}, last 10 {last:.2f}"
# "{steps} ステップの損失：最初の 10 ステップ {first:.2f}、最後の 10 ステップ {last:.2f}"
#
# "training tokens: {counts}"
# "学習用のトークン数：{counts}"
#
# "always '{tag}': right on {share:.3f} of the held-out tokens"
# "常に「{tag}」：ホールドアウトのトークンの {share:.3f} に正解"
#
# "Topic of a sentence from a held-out template"
# "ホールドアウトのテンプレートの文の話題"
#
# "sentences: English {en}, Chinese {zh}"
# "文：英語 {en}、中国語 {zh}"
#
# "the frozen steps were not faster"
# "凍結したステップは速くならなかった"
#
# "{a} − {b}:"
# "{a} − {b}："
#
# "{topic} → {guess}: {sentence}"
# "{topic} → {guess}：{sentence}"
#
# "story {n}"
# "物語 {n}"
#
# "questions: training {train}, held out {held}"
# "質問：学習用 {train}、ホールドアウト {held}"
#
# "  answer: positions {first} to {last}, {answer}"
# "  答え：位置 {first} から {last}、{answer}"
#
# "question"
# "質問"
#
# "most common span"
# "最もよく現れるスパン"
#
# "all"
# "全体"
#
# "names in held-out questions: {n}, not seen in training: {new}"
# "ホールドアウトの質問の人名：{n} 個、学習データにないもの：{new} 個"
#
# "{sentence}  answer: {answer}, found: {found}"
# "{sentence}  答え：{answer}、見つけたもの：{found}"
