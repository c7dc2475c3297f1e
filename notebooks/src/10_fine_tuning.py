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
# # 10 · Fine-tuning
#
# *[中文版](../zh/10_fine_tuning.ipynb) · [日本語](../ja/10_fine_tuning.ipynb) ·
# [Index](00_index.ipynb)*
#
# The chapter ends where BERT's point begins. The original BERT is pretrained once, on unlabelled
# text, and then **fine-tuned** for each downstream task: the MLM and NSP heads are dropped, a
# small output layer is added on top of the encoder, and the model is trained a little further
# on the task's labelled examples. The paper's central claim is that this beats the same model
# trained on the labels alone. This notebook fine-tunes the small BERT and puts that claim to a
# test it can fail.
#
# You will:
# 1. meet three small labelled tasks (a sentence's topic, a tag for every token, questions
#    answered by a span) whose test sentences hold **words that no labelled example holds**:
#    words the small BERT met only in its unlabelled pretraining text;
# 2. read `BERTClassifier`, `BERTTagger` and `BERTQuestionAnswerer`: one new output layer each;
# 3. fine-tune the pretrained small BERT, the same model from random weights and a bag of words,
#    over five seeds, and compare them on held-out words and on seen words;
# 4. see where pretraining put the held-out words, and how the gap changes with the number of
#    labels (a learning curve).
# 5. see that the same claim holds, with the same controls, at the token level: notebook 11
#    tags tokens, answers questions, and sets the result beside the BERT paper and MiniLM.

# %% [markdown] lang="zh"
# # 10 · 微调
#
# [English](../en/10_fine_tuning.ipynb) · [日本語](../ja/10_fine_tuning.ipynb) ·
# [目录](00_index.ipynb)
#
# 本章讲到哪里结束，BERT 真正的用武之地就从哪里开始。原始的 BERT 只在无标签文本上预训练一次，之后针
# 对每个下游任务进行**微调**：去掉掩蔽语言模型和下一句预测的输出层，在编码器上加一个小小的输出层，再
# 用该任务的有标签样本把模型继续训练一小会儿。论文的核心论断是：这样做胜过只用标签训练的同一个模型。
# 本笔记本微调项目自带的小 BERT，并让这个论断接受一次可能失败的检验。
#
# 你将会：
# 1. 认识三个小型有标签任务（判断句子的话题、给每个词元打标签、用一个区间回答问题），它们的测试句子
#    中含有**任何有标签样本里都没有的词**：小 BERT 只在无标签的预训练文本中见过这些词；
# 2. 阅读 `BERTClassifier`、`BERTTagger` 和 `BERTQuestionAnswerer`：每个都只加一个新的输出层；
# 3. 在五个随机种子上微调预训练的小 BERT、从随机权重开始的同一模型以及词袋模型，并分别在留出词和见过
#    的词上比较它们；
# 4. 看看预训练把留出词放在了哪里，以及差距如何随标签数量变化（学习曲线）。
#
# 笔记本 11 接着在词元级上用同样的对照检验这个论断：给词元打标签、回答问题，并把结果与 BERT 论文和
# MiniLM 放在一起对照。

# %% [markdown] lang="ja"
# # 10 · ファインチューニング
#
# *[English](../en/10_fine_tuning.ipynb) · [中文](../zh/10_fine_tuning.ipynb) ·
# [目次](00_index.ipynb)*
#
# 章が終わるところから、BERT の本領が始まります。元の BERT は、ラベルのないテキストで一度だけ事前
# 学習され、その後、下流タスクごとに**ファインチューニング**されます。マスク言語モデルと次文予測の出
# 力層を取り除き、エンコーダの上に小さな出力層を加え、タスクのラベル付きの例でモデルをもう少しだけ学
# 習させるのです。論文の中心的な主張は、こうすると、ラベルだけで学習させた同じモデルに勝つというもの
# です。このノートブックでは小さな BERT をファインチューニングし、その主張を、外れることもありうる検
# 証にかけます。
#
# このノートブックでは、次のことを行います。
# 1. ラベル付きの小さな 3 つのタスク（文の話題、各トークンのタグ、スパンで答える質問）を知ります。そ
#    のテスト文には、**どのラベル付きの例にも現れない単語**が含まれます。小さな BERT がラベルのない
#    事前学習のテキストでしか出会っていない単語です。
# 2. `BERTClassifier`、`BERTTagger`、`BERTQuestionAnswerer` を読みます。どれも新しい出力層を 1 つ加
#    えるだけです。
# 3. 事前学習済みの小さな BERT、ランダムな重みから始めた同じモデル、Bag-of-Words を 5 つのシードで
#    ファインチューニングし、ホールドアウトした単語と学習で見た単語のそれぞれで比べます。
# 4. 事前学習がホールドアウトした単語をどこに置いたか、そして差がラベルの数とともにどう変わるか（学
#    習曲線）を見ます。
#
# ノートブック 11 では、同じ主張を同じ対照を使ってトークン単位で確かめます。トークンにタグを付け、質
# 問に答え、その結果を BERT 論文や MiniLM と並べます。

# %%
# %matplotlib inline

import torch
from IPython.display import display

from bertlib import (
    BERTClassifier,
    BERTTagger,
    evaluate_task,
    fine_tune,
    load_small_bert,
)
from bertlib.assets import SMALL_CORPUS_DIR
from bertlib.finetuning.experiment import (
    CURVE,
    RECIPE,
    STARTS,
    compare,
    data_for,
    load_experiment,
    neighbours,
)
from bertlib.finetuning.finetune import task_loss
from bertlib.finetuning.tasks import (
    CLASSES,
    NUM_TOPICS,
    TAGS,
    class_names,
    load_task_sentences,
    split_tasks,
    token_tags,
)
from bertlib.support.i18n import corpus_language, table, tr
from bertlib.train import init_model
from bertlib.viz import new_figure
from bertlib.viz.listing import show_source

# %%
# One thread: the printed numbers then come out the same on any number of cores (the order of
# floating-point sums depends on the thread count), and for models this small it is not slower.
torch.set_num_threads(1)

# %% [markdown] lang="en"
# ## A designed experiment: words no label shows
#
# If the test sentences of a task use the same words as its training sentences, a model needs
# nothing from pretraining: a bag of words remembers which word goes with which label, and wins.
# (An earlier version of this notebook did exactly that, and the pretrained model lost.) So the
# tasks here are built, by `scripts/make_tasks.py`, to need what only the unlabelled text holds:
#
# * six **word classes** per language: names, places, times, fruits, animals and sports, 12 words
#   each. The first 8 of each class are **seen**: they occur in labelled training sentences. The
#   last 4 are **held out**: no labelled training sentence holds them.
# * The labelled sentences are **neutral frames**, such as "The letter was about X." or "Have you
#   ever heard of X?": nothing in them tells X's class, so the word is the only evidence. Test
#   sentences use other frames than training sentences.
# * The pretraining corpus (`scripts/make_corpus.py`) holds, beside the stories of notebook 06,
#   short sentences about every one of these words, held-out ones included: "We talked about the
#   peel of mangoes for hours.", "Peter told us about the streets of Lisbon." A word's class shows
#   in
#   the words around it, and masked-token prediction learns from exactly that.
#
# This is a designed experiment: the corpus is built so that the effect, if there is one, can be
# seen. Real text is messier, and we come back to what carries over at the end.

# %% [markdown] lang="zh"
# ## 一个设计好的实验：标签里没有的词
#
# 如果一个任务的测试句子用的词和训练句子完全一样，模型就用不着预训练：词袋模型记住哪个词对应哪个标
# 签，就能胜出。（本笔记本的早先版本正是这样，结果预训练的模型输了。）所以这里的任务由
# `scripts/make_tasks.py` 专门构造，使它们需要只有无标签文本才有的知识：
#
# * 每种语言六个**词类**：人名、地点、时间、水果、动物和运动，每类 12 个词。每类的前 8 个是**见过的
#   词**：它们出现在有标签的训练句子中。后 4 个是**留出词**：没有任何有标签的训练句子含有它们。
# * 有标签的句子都是**中性的句子框架**，比如“信里写的是X。”或“你听说过X吗？”：框架本身不透露 X 的
#   类别，所以词本身是唯一的依据。测试句子用的框架与训练句子不同。
# * 预训练语料库（`scripts/make_corpus.py`）除了笔记本 06 的故事之外，还有关于这些词（包括留出词）
#   的短句：“谁也忘不了榴莲的果皮。”“我们聊了好几个小时桂林的街道。”一个词的类别体现在它周围的词
#   里，而掩蔽语言模型恰恰就是从这里学习的。
#
# 这是一个设计好的实验：语料库是特意构造的，好让效果（如果存在的话）能被看到。真实文本要杂乱得多，
# 哪些结论可以推广，我们在最后再谈。

# %% [markdown] lang="ja"
# ## 設計した実験：ラベルに現れない単語
#
# タスクのテスト文が学習用の文とまったく同じ単語を使っていれば、モデルに事前学習は要りません。
# Bag-of-Words がどの単語がどのラベルに対応するかを覚えて勝ってしまいます（このノートブックの以前の
# 版がまさにそうで、事前学習済みモデルは負けました）。そこで、ここでのタスクは
# `scripts/make_tasks.py` によって、ラベルのないテキストだけが持つ知識を必要とするように作られていま
# す。
#
# * 言語ごとに 6 つの**単語クラス**：人名、場所、時間、果物、動物、スポーツで、それぞれ 12 語です。
#   各クラスの最初の 8 語は**学習で見る単語**で、ラベル付きの学習用の文に現れます。最後の 4 語
#   は**ホールドアウトした単語**で、どのラベル付きの学習用の文にも現れません。
# * ラベル付きの文は、"The letter was about X." や "Have you ever heard of X?" のような**中立的な
#   枠**です。枠は X のクラスについて何も語らないので、証拠は単語だけです。テスト文は学習用の文とは
#   別の枠を使います。
# * 事前学習のコーパス（`scripts/make_corpus.py`）には、ノートブック 06 の物語のほかに、これらの単語
#   （ホールドアウトした単語も含む）についての短い文があります。"We talked about the peel of mangoes
#   for hours."
#   や "Peter told us about the streets of Lisbon." です。単語のクラスは周りの単語に表れ、マス
#   ク言語モデルはまさにそこから学びます。
#
# これは設計した実験です。効果があるならそれが見えるように、コーパスを作っています。本物のテキストは
# もっと雑多です。何が一般化できるかは最後に考えます。

# %%
sentences = load_task_sentences()
split = split_tasks(sentences)
lang = corpus_language()  # this edition's corpus language (English where there is none)
topics, tag_names = class_names("topic"), class_names("tags")
print(tr("training sentences {train}; test sentences with seen words {seen}, with held-out words "
         "{held}", train=len(split.train), seen=len(split.seen), held=len(split.held_out)))
words = {(cls, held): [] for cls in CLASSES for held in (False, True)}
for s in sentences:
    for start, end, cls, held in s.words:
        word = s.text[start:end]
        if s.lang == lang and word.lower() not in map(str.lower, words[cls, held]):
            words[cls, held].append(word)  # once, as first written
print(table([[tr("class"), tr("seen words"), tr("held-out words")]]
            + [[name, " ".join(words[cls, False]), " ".join(words[cls, True])]
               for cls, name in zip(CLASSES, topics, strict=True)]))
for part in ("train", "seen", "held_out"):
    s = next(s for s in getattr(split, part) if s.lang == lang)
    print(f"{part:9}", s.text)

# %% [markdown] lang="en"
# Two checks decide whether the design holds. No held-out word may occur in a training sentence
# (in Chinese, not even one of its characters: a character is a token), and every held-out word
# must occur in the pretraining corpus. `tests/finetuning/test_tasks.py` checks both from the data
# files for both languages; here is the count for this edition's language, and a few corpus
# sentences with a held-out fruit:

# %% [markdown] lang="zh"
# 设计是否成立，取决于两项检查：留出词不能出现在任何训练句子中（中文里连它的一个字都不能出现，因为一
# 个字就是一个词元），而每个留出词都必须出现在预训练语料库中。`tests/finetuning/test_tasks.py` 直接
# 从数据文件检查两种语言的这两点；下面是本版本所用语言的计数，以及几个含有留出水果的语料库句子：

# %% [markdown] lang="ja"
# 設計が成り立つかどうかは 2 つの確認で決まります。ホールドアウトした単語は学習用の文に現れてはなら
# ず（中国語ではその 1 文字も現れてはなりません。1 文字が 1 トークンだからです）、ホールドアウトした
# 単語はどれも事前学習のコーパスに現れなければなりません。`tests/finetuning/test_tasks.py` は両方の
# 言語について、データファイルからこの 2 点を確かめます。下は、この版の言語での数と、ホールドアウト
# した果物を含むコーパスの文のいくつかです。

# %%
held_words = [w for cls in CLASSES for w in words[cls, True]]
training_text = "\n".join(s.text for s in split.train if s.lang == lang)
corpus = (SMALL_CORPUS_DIR / f"{lang}.txt").read_text(encoding="utf-8").splitlines()
print(tr("held-out words found in training sentences: {n}",
         n=sum(w in training_text for w in held_words)))
print(tr("corpus sentences holding a held-out word: {n} of {total}",
         n=sum(any(w in line for w in held_words) for line in corpus),
         total=sum(1 for line in corpus if line)))
fruit = words["fruit", True][0]
for line in [line for line in corpus if fruit in line][:3]:
    print("  ", line)

# %% [markdown] lang="en"
# ## The classifier, the tagger and the question answerer
#
# The chapter's `BERTClassifier` keeps the pretrained encoder and the `hidden` layer (the
# Linear + Tanh on `<cls>` that fed the NSP head, the *pooler*), and adds a new output layer with
# one output per class. For a text pair nothing changes: `<cls>` A `<sep>` B `<sep>` and its
# segment ids go in, as for the chapter's natural language inference.

# %% [markdown] lang="zh"
# ## 分类器、标注器与问答模型
#
# 本章的 `BERTClassifier` 保留预训练的编码器和 `hidden` 层，再加一个新的输出层，每个类别对应一个输
# 出。`hidden` 层就是汇聚层（pooler），即作用在 `<cls>` 上的全连接层 + Tanh，它原本为下一句预测的输
# 出层提供输入。处理文本对时什么都不用改：把 `<cls>` A `<sep>` B `<sep>` 及其片段索引送进去即可，本
# 章的自然语言推断就是这样做的。

# %% [markdown] lang="ja"
# ## 分類器、タガー、質問応答モデル
#
# 章の `BERTClassifier` は事前学習済みのエンコーダと `hidden` 層（次文予測の出力層に入力していた、
# `<cls>` に作用する全結合層 + Tanh、つまりプーラー）をそのまま使い、クラスごとに 1 つの出力を持つ新
# しい出力層を加えます。テキストのペアでも何も変わりません。章の自然言語推論と同じように、`<cls>`
# A `<sep>` B `<sep>` とそのセグメントインデックスを入力します。

# %%
show_source(BERTClassifier)

# %% [markdown] lang="en"
# Two details differ from the chapter's code: the encoder and the hidden layer are *copies*, so
# fine-tuning leaves `small_bert` as it was (we fine-tune it many times below), and the new
# layer's initial weights depend on a `seed` only. For token-level tasks, `BERTTagger` applies
# its output layer to every token's representation instead of `<cls>`'s:

# %% [markdown] lang="zh"
# 与本章的代码相比有两处不同：编码器和 `hidden` 层都是**副本**，所以微调不会改动 `small_bert`（下面
# 我们要从它出发微调很多次）；新输出层的初始权重只取决于 `seed`。对于词元级任务，`BERTTagger` 把输出
# 层作用在每个词元的表示上，而不是只作用在 `<cls>` 的表示上：

# %% [markdown] lang="ja"
# 章のコードと違う点が 2 つあります。エンコーダと hidden 層は**コピー**なので、ファインチューニン
# グしても `small_bert` は元のままです（下で何度もファインチューニングします）。また、新しい層の初期
# の重みは `seed` だけで決まります。トークン単位のタスクでは、`BERTTagger` が出力層を `<cls>` の表現
# ではなく各トークンの表現に適用します。

# %%
show_source(BERTTagger.forward)
small_bert, tokenizer = load_small_bert()
max_len = small_bert.config.max_len
classifier = BERTClassifier(small_bert, NUM_TOPICS, seed=0)
tagger = BERTTagger(small_bert, len(TAGS), seed=0)
batch = data_for("topic", split.train[:4], tokenizer, max_len)
inputs = batch.tokens, batch.segments, batch.valid_lens
with torch.no_grad():
    print("BERTClassifier:", tuple(classifier(*inputs).shape))  # (B, C)
    print("BERTTagger:    ", tuple(tagger(*inputs).shape))  # (B, T, C)

# %% [markdown] lang="en"
# The tags are *name*, *place*, *time* and *other*: a fruit, an animal or a sport is *other*, like
# the frame's words. A word cut into several WordPiece tokens gives its tag to each piece (the
# BERT paper scores the first piece of each word only: a simplification here). The loss is the
# cross-entropy of the labels, averaged over every labelled position of the batch; `<cls>`,
# `<sep>` and the padding are labelled `IGNORE` and count for nothing (you will write this loss
# yourself in the exercises):

# %% [markdown] lang="zh"
# 标签有*人名*、*地点*、*时间*和*其他*四种：水果、动物和运动都算*其他*，和句子框架里的词一样。一个词
# 被切成几个子词时，每个子词都得到这个词的标签（BERT 论文只对每个词的第一个子词评分：这里做了简
# 化）。损失是标签的交叉熵，对批量中所有有标签的位置求平均；`<cls>`、`<sep>` 和填充位置的标签是
# `IGNORE`，不计入损失（在练习中你将亲手写出这个损失）：

# %% [markdown] lang="ja"
# タグは*人名*、*場所*、*時間*、*その他*の 4 つです。果物、動物、スポーツは、枠の単語と同じく*その
# 他* です。いくつかの WordPiece トークンに分かれた単語は、そのタグを各サブワードに与えます（BERT 論
# 文は各単語の最初のサブワードだけを評価します。ここでは簡略化しています）。損失はラベルの交差エント
# ロピーを、バッチ内のラベルのあるすべての位置で平均したものです。`<cls>`、`<sep>`、パディングには
# `IGNORE` のラベルが付き、数に入りません（この損失は演習で自分で書きます）。

# %%
two = next(s for s in split.train if s.lang == lang and len(s.words) == 2)
print(" ".join(f"{piece}/{tag_names[t]}" if t else piece
               for piece, t in zip(tokenizer.tokenize(two.text), token_tags(two, tokenizer),
                                   strict=True)))
tags = data_for("tags", [two], tokenizer, max_len)
print(tags.labels)
with torch.no_grad():
    print(tr("loss {loss:.3f}, ln 4 = {ln4:.3f}", ln4=torch.log(torch.tensor(4.0)),
             loss=task_loss(tagger(*tags.tensors()[:3]), tags.labels)))

# %% [markdown] lang="en"
# ## Fine-tuning the small BERT once
#
# `fine_tune` runs the same loop as `train_bert` (notebook 06): Adam, seeded batches and
# dropout, a progress bar; only the loss differs. We train the classifier on the topics of the
# training sentences of both languages.
#
# One change from the usual recipe: the **token embeddings stay frozen**. Fine-tuning would move
# the embeddings of the words it sees, the seen words, and never those of the held-out words,
# which occur in no training sentence. It would pull the seen words away from the place
# pretraining gave them, beside the held-out words of their class. Frozen, the table keeps that
# geometry; the 2 encoder blocks, the pooler and the new output layer learn. (Exercise 1 asks what
# happens without the freeze.)
#
# Accuracy is measured on the test sentences, separately for those with held-out words and those
# with seen words, per language, with a 95% confidence interval (the Wilson interval).

# %% [markdown] lang="zh"
# ## 微调一次小 BERT
#
# `fine_tune` 运行的是和 `train_bert`（笔记本 06）相同的循环：Adam 优化器、设定了随机种子的批量、
# dropout（暂退法）和进度条；只有损失不同。我们用两种语言的训练句子及其话题标签训练分类器。
#
# 与通常的训练配置相比有一处改动：**词元嵌入保持冻结**。微调会移动它见到的词（见过的词）的嵌入，却从
# 不移动留出词的嵌入，因为留出词不出现在任何训练句子中。这样一来，见过的词会被拉离预训练给它们安排的
# 位置，也就是同类留出词的旁边。冻结之后，嵌入表保留了这种几何结构；学习的是 2 个编码器块、汇聚层和
# 新的输出层。（练习 1 会问不冻结时会怎样。）
#
# 准确率在测试句子上测量，含留出词的句子和含见过的词的句子分开计算，每种语言分别给出 95% 置信区间
# （Wilson 区间）。

# %% [markdown] lang="ja"
# ## 小さな BERT を一度ファインチューニングする
#
# `fine_tune` は `train_bert`（ノートブック 06）と同じループを回します。Adam、乱数シードを設定した
# バッチ、ドロップアウト、進捗バーです。違うのは損失だけです。両方の言語の学習用の文で、分類器に話題
# を学習させます。
#
# いつもの学習設定から 1 つだけ変えます。**トークン埋め込みは凍結したまま**にするのです。ファイン
# チューニングは、見た単語の埋め込みを動かしますが、学習用の文に現れないホールドアウトした単語の埋め
# 込みは決して動かしません。そのため、見た単語は事前学習が与えた位置、つまり同じクラスのホールドアウ
# トした単語のそばから引き離されてしまいます。凍結すれば埋め込み表はその幾何を保ち、学習するのは 2
# つのエンコーダブロック、プーラー、新しい出力層です（凍結しないとどうなるかは演習 1 で扱います）。
#
# 正解率はテスト文で、ホールドアウトした単語を含む文と見た単語を含む文に分けて、言語ごとに 95% 信頼
# 区間（Wilson 区間）付きで測ります。

# %%
topic_train = data_for("topic", split.train, tokenizer, max_len)
LANGUAGES = {"en": tr("English"), "zh": tr("Chinese")}
PARTS = {"held_out": tr("held-out words"), "seen": tr("seen words")}
topic_tests = {(code, part): data_for("topic", getattr(split, part), tokenizer,
                                      max_len).select(code)
               for code in LANGUAGES for part in PARTS}
steps, lr = RECIPE["topic"]
classifier.encoder.token_embedding.weight.requires_grad_(False)  # the frozen token embeddings
history = fine_tune(classifier, topic_train, num_steps=steps, lr=lr, seed=0)
print(tr("loss over {steps} steps: first 10 {first:.2f}, last 10 {last:.2f}",
         steps=len(history.loss), first=sum(history.loss[:10]) / 10,
         last=sum(history.loss[-10:]) / 10))
accuracy = {key: evaluate_task(classifier, data, NUM_TOPICS).overall
            for key, data in topic_tests.items()}
print(table([[tr("test sentences"), *LANGUAGES.values()]]
            + [[name, *(accuracy[code, part] for code in LANGUAGES)]
               for part, name in PARTS.items()]))

# %% [markdown] lang="en"
# ## What pretraining buys, under control
#
# One run says little. To see what the pretrained weights are worth, we need the same run from
# other starting points, with the same recipe, the same labels and the same seed:
#
# * **random start**: the same architecture from random weights (`init_model`), fine-tuned the
#   same way, its token embeddings frozen too;
# * **bag of words**: a linear classifier on how often each vocabulary entry occurs in the
#   sentence, blind to word order and context, with nothing pretrained.
#
# `compare` fine-tunes each start once per seed and scores it on every test set:

# %% [markdown] lang="zh"
# ## 预训练带来了什么：对照实验
#
# 一次运行说明不了多少。要看预训练的权重值多少，需要从别的起点做同样的运行，用同样的训练配置、同样的
# 标签和同样的随机种子：
#
# * **随机初始化**：从随机权重开始的同一架构（`init_model`），用同样的方式微调，词元嵌入也冻结；
# * **词袋模型**：一个线性分类器，输入是每个词表条目在句子中出现的频率，它看不到词序和上下文，也没有
#   任何预训练。
#
# `compare` 对每个起点、每个随机种子各微调一次，并在每个测试集上评分：

# %% [markdown] lang="ja"
# ## 事前学習で得られるもの：対照実験
#
# 1 回の実行ではほとんど何も言えません。事前学習済みの重みの価値を見るには、同じ学習設定、同じラベル
# 、
# 同じシードで、別の出発点から同じ実行をする必要があります。
#
# * **ランダムな重みから**：同じ構造をランダムな重み（`init_model`）から始め、同じようにファイン
#   チューニングします。トークン埋め込みも凍結します。
# * **Bag-of-Words**：語彙の各エントリが文に何回現れるかを入力とする線形分類器です。語順も文脈も見
#   ず、何も事前学習していません。
#
# `compare` は出発点ごと、シードごとに 1 回ファインチューニングし、各テストセットで評価します。

# %%
show_source(compare)

# %% [markdown] lang="en"
# Here it is with one seed, the same seed 0 as above:

# %% [markdown] lang="zh"
# 下面用一个随机种子运行它，即与上面相同的种子 0：

# %% [markdown] lang="ja"
# 1 つのシードで実行してみます。上と同じシード 0 です。

# %%
START_NAMES = {"pretrained": tr("small BERT, pretrained"), "random": tr("small BERT, random start"),
               "bag": tr("bag of words")}


def print_comparison(results: dict) -> None:
    """One row per language and kind of test word, one column per start."""
    rows = [[tr("test sentences"), *START_NAMES.values()]]
    rows += [[f"{LANGUAGES[code]}, {PARTS[part]}",
              *(f"{results[start, (code, part)].mean:.3f}" for start in STARTS)]
             for code in LANGUAGES for part in PARTS]
    print(table(rows))


one_seed = compare("topic", small_bert, topic_train, topic_tests, seeds=(0,), num_steps=steps,
                   lr=lr)
print_comparison(one_seed)
print(tr("chance: 1/{k} = {p:.3f}", k=NUM_TOPICS, p=1 / NUM_TOPICS))

# %% [markdown] lang="en"
# A seed fixes the new layer's initial weights, the random start's weights and the order of the
# batches. Another seed gives other numbers, so `scripts/what_pretraining_buys.py` runs the same
# comparison with five seeds (0 to 4) and records the results in
# `bertlib/assets/small_bert/experiment.json`. That takes minutes; the notebook reads the record.
# Its first seed is the run above. Each cell gives the mean over the five seeds and a 95%
# t-interval for that mean:

# %% [markdown] lang="zh"
# 随机种子决定新输出层的初始权重、随机初始化模型的权重以及批量的顺序。换一个随机种子，数字就会不同，
# 所以 `scripts/what_pretraining_buys.py` 用五个随机种子（0 到 4）运行同样的比较，并把结果记录在
# `bertlib/assets/small_bert/experiment.json` 中。这需要几分钟；笔记本读取的是这份记录，其中第一个随
# 机种子就是上面那次运行。每一格给出五个随机种子的平均值，以及这个平均值的 95% t 区间：

# %% [markdown] lang="ja"
# シードは、新しい層の初期の重み、ランダムな重みから始めるモデルの重み、バッチの順序を決めます。シー
# ドが違えば数字も違うので、`scripts/what_pretraining_buys.py` は同じ比較を 5 つのシード（0 から 4）
# で実行し、結果を `bertlib/assets/small_bert/experiment.json` に記録します。数分かかるので、ノート
# ブックはその記録を読みます。最初のシードが上の実行です。各セルは 5 つのシードの平均と、その平均の
# 95% t 区間です。

# %%
recorded = load_experiment()
print(tr("seeds {seeds}; {minutes:.0f} minutes on {cores} cores", seeds=recorded["seeds"],
         minutes=recorded["wall_seconds"] / 60, cores=recorded["cores"]))


def print_recorded(results: dict) -> None:
    """The recorded means over seeds with their 95% t-intervals."""
    rows = [[tr("test sentences"), *START_NAMES.values()]]
    rows += [[f"{LANGUAGES[code]}, {PARTS[part]}",
              *(format(results[start, code, part]) for start in STARTS)]
             for code in LANGUAGES for part in PARTS]
    print(table(rows))


print_recorded(recorded["tasks"]["topic"])

# %% [markdown] lang="en"
# Read the table by its rows.
#
# * **Held-out words** (the claim). The pretrained small BERT names the class of a word it never
#   saw with a label far more often than chance (1/6 = 0.167). The random start and the bag of
#   words stay near chance: for them a held-out word is a token like any other unseen one. The
#   intervals do not overlap, in either language.
# * **Seen words** (the control). The bag of words is right on nearly every sentence: it has
#   learned one weight per word, and each test word was a training word. The BERTs do well too,
#   but not better. Where labels cover every word, pretraining buys little here.
#
# So what pretraining brought is not skill at the task. It is knowledge about words, taken from
# unlabelled text, that the labels alone cannot give.
#
# ## Where pretraining put the held-out words
#
# Take a held-out word, put it in the neutral test frames, and read the encoder's output vector
# at the word (the mean over its pieces and over the frames), before any fine-tuning. Which seen
# words have the most similar vectors? `neighbours` answers that by cosine similarity, for the
# pretrained small BERT and for the same model with random weights:

# %% [markdown] lang="zh"
# 按行来读这张表。
#
# * **留出词**（要检验的论断）。预训练的小 BERT 给一个从未带着标签出现过的词判断类别，对的次数远高于
#   随机猜测（1/6 = 0.167）。随机初始化的模型和词袋模型都停留在随机猜测附近：对它们来说，留出词和任
#   何没见过的词元没有区别。两种语言中置信区间都互不重叠。
# * **见过的词**（对照）。词袋模型几乎每个句子都对：它为每个词学了一个权重，而每个测试词都是训练词。
#   两个BERT 也不错，但并不更好。在标签覆盖了每一个词的地方，预训练在这里带来的好处很少。
#
# 所以预训练带来的不是做这个任务的本事，而是从无标签文本中得来的、单靠标签无法给出的关于词的知识。
#
# ## 预训练把留出词放在了哪里
#
# 取一个留出词，把它放进中性的测试句子框架，在微调之前读出编码器在这个词处的输出向量（对它的各个子词
# 和各个框架求平均）。哪些见过的词的向量与它最相似？`neighbours` 用余弦相似度回答这个问题，分别针对
# 预训练的小 BERT 和随机权重的同一模型：

# %% [markdown] lang="ja"
# 表は行ごとに読みます。
#
# * **ホールドアウトした単語**（検証する主張）。事前学習済みの小さな BERT は、ラベル付きで一度も見た
#   ことのない単語のクラスを、チャンスレベル（1/6 = 0.167）よりはるかに多く当てます。ランダムな重み
#   から始めたモデルと Bag-of-Words はチャンスレベル付近にとどまります。これらにとって、ホールドアウ
#   トした単語は見たことのない他のトークンと変わらないのです。どちらの言語でも区間は重なりません。
# * **学習で見た単語**（対照）。Bag-of-Words はほぼすべての文に正解します。単語ごとに 1 つの重みを学
#   習しており、テストの単語はどれも学習の単語だからです。2 つの BERT もよくできますが、上回りはしま
#   せん。ラベルがすべての単語を覆っているところでは、ここでの事前学習の得はわずかです。
#
# つまり事前学習がもたらしたのはタスクの腕前ではなく、ラベルだけでは与えられない、ラベルのないテキス
# トから得た単語についての知識です。
#
# ## 事前学習はホールドアウトした単語をどこに置いたか
#
# ホールドアウトした単語を中立的なテスト用の枠に入れ、ファインチューニングの前に、その単語の位置での
# エンコーダの出力ベクトルを読みます（サブワードと枠について平均します）。どの見た単語のベクトルがい
# ちばん似ているでしょうか。`neighbours` がコサイン類似度でこれに答えます。事前学習済みの小さな BERT
# と、ランダムな重みの同じモデルのそれぞれについてです。

# %%
test_sentences = [s for s in split.seen + split.held_out if s.lang == lang]
near = {"pretrained": neighbours(small_bert, tokenizer, test_sentences),
        "random": neighbours(init_model(small_bert.config, seed=100), tokenizer, test_sentences)}
class_of = {s.text[a:b]: cls for s in test_sentences for a, b, cls, _ in s.words}
print(table([[tr("held-out word"), tr("class"), tr("nearest seen words: pretrained"),
              tr("random start")]]
             + [[word, topics[CLASSES.index(class_of[word])], " ".join(near["pretrained"][word]),
                 " ".join(near["random"][word])] for word in list(near["pretrained"])[::2]]))
for start in ("pretrained", "random"):
    same = sum(class_of[word] == class_of[found[0]] for word, found in near[start].items())
    print(tr("{start}: the nearest seen word is of the same class for {n} of {total} held-out "
             "words (chance: 1 in 6)", start=START_NAMES[start], n=same, total=len(near[start])))

# %% [markdown] lang="en"
# (The table shows every other held-out word; the count below it covers all of them.) Before a
# single label, pretraining has placed many held-out words beside seen words of their own class.
# Fine-tuning then only has to learn which region of this space is which class, from the seen
# words, and a held-out word in the right region is classified right. The random model's
# neighbours are those of a random map.
#
# ## How many labels is pretraining worth?
#
# The same comparison, with fewer labels: 1, 4, 16 or 64 training sentences per class and
# language, drawn at random (with the seed), against all 128. The figures are recorded over the
# same five seeds:

# %% [markdown] lang="zh"
# （表中每隔一个留出词列出一个；表下的计数涵盖全部留出词。）在见到任何标签之前，预训练已经把许多留出
# 词放在了同类的见过的词旁边。微调只需从见过的词学会这个空间里的哪一片区域属于哪个类别，落在正确区域
# 的留出词就会被分对。随机模型的近邻只是一张随机地图上的近邻。
#
# ## 预训练值多少个标签？
#
# 用更少的标签做同样的比较：每个类别、每种语言各 1、4、16 或 64 个训练句子（按随机种子随机抽取），
# 对比全部 128 个。结果同样是在五个随机种子上记录的：

# %% [markdown] lang="ja"
# （表にはホールドアウトした単語を 1 つおきに載せています。表の下の数はすべての単語についてのもので
# す。）ラベルを 1 つも見る前に、事前学習は多くのホールドアウトした単語を同じクラスの見た単語のそば
# に置いています。あとはファインチューニングが、見た単語から空間のどの領域がどのクラスかを学ぶだけ
# で、正しい領域にあるホールドアウトした単語は正しく分類されます。ランダムなモデルの近傍は、ランダム
# な地図の近傍にすぎません。
#
# ## 事前学習はラベル何個分の価値があるか
#
# 同じ比較を、もっと少ないラベルで行います。クラスと言語ごとに 1、4、16、64 個の学習用の文を（シー
# ドで）ランダムに選び、すべての 128 個と比べます。数字は同じ 5 つのシードで記録したものです。

# %%
fig = new_figure(7.5, 3.4)
fig.set_layout_engine("constrained")
COLORS = {"pretrained": "#0072B2", "random": "#E69F00", "bag": "#777777"}
for j, code in enumerate(LANGUAGES):
    ax = fig.add_subplot(1, 2, j + 1)
    for start in STARTS:
        means = [recorded["curve"][n][start, code, "held_out"] for n in CURVE]
        ax.plot(CURVE, [m.mean for m in means], "o-", color=COLORS[start],
                label=START_NAMES[start])
        ax.fill_between(CURVE, [m.interval[0] for m in means], [m.interval[1] for m in means],
                        color=COLORS[start], alpha=0.15, linewidth=0)
    ax.axhline(1 / NUM_TOPICS, color="#444444", linestyle="--", linewidth=1)
    ax.set_xscale("log")
    ax.set_xticks(CURVE, [str(n) for n in CURVE])
    ax.set(ylim=(0, 1), title=LANGUAGES[code], xlabel=tr("labelled sentences per class"))
    if j == 0:
        ax.set_ylabel(tr("accuracy on held-out words"))
        ax.legend(fontsize=8, loc="upper left")
display(fig)
print(table([[tr("per class"), *(f"{n:>5}" for n in CURVE)]]
            + [[f"{LANGUAGES[code]}, {START_NAMES[start]}",
                *(f"{recorded['curve'][n][start, code, 'held_out'].mean:.3f}" for n in CURVE)]
               for code in LANGUAGES for start in ("pretrained", "random")]))

# %% [markdown] lang="en"
# The dashed line is chance.
# With one or four labelled sentences per class, the pretrained model is no better than the random
# start: 0.175 against 0.189 in English with one, 0.172 against 0.161 in Chinese. The gap opens at
# 16 and is largest with 64 or 128 (0.564 against 0.164 in English at 64, 0.508 against 0.142 in
# Chinese with all 128). That is not the usual picture, in which pretraining matters most where
# labels are scarcest, and we report it as it came out. A held-out word is classified by its
# likeness to seen words, so the layers on top must first learn, from labelled seen words, which
# region of the space belongs to which class. With one sentence per class, one seen word of each
# class has a label: pretraining drew the map, and a handful of labels cannot yet name its regions.
# The random start and the bag of words stay at chance on held-out words at every size: no number
# of labels teaches a word that no label holds.

# %% [markdown] lang="zh"
# 虚线是随机猜测的水平。
# 每个类别只有一个或四个有标签的句子时，预训练模型并不比随机初始化的模型好：英文在每类一个句子时为
# 0.175 对 0.189，中文为 0.172 对 0.161。差距从 16 个句子开始出现，在 64 或 128 个句子时最大（英文
# 64 个句子时为 0.564 对 0.164，中文用全部 128 个句子时为 0.508 对 0.142）。这和通常的说法不同：通
# 常认为标签越少，预训练越重要。我们照实报告。一个留出词是凭它与见过的词的相似性来分类的，所以上面的
# 层先要从有标签的见过的词中学会空间里的哪一片区域属于哪个类别。每类只有一个句子时，每个类别只有一个
# 见过的词带着标签：地图是预训练画好的，但寥寥几个标签还不足以给它的各个区域命名。随机初始化的模型和
# 词袋模型在留出词上无论用多少标签都停留在随机猜测的水平：再多的标签也教不会一个从未出现在标签中的
# 词。

# %% [markdown] lang="ja"
# 破線はチャンスレベルです。クラスごとのラベル付きの文が 1 つや 4 つのときは、事前学習済みモデルはラ
# ンダムな重みから始めたモデルと変わりません。1 つのとき、英語で 0.175 対 0.189、中国語で 0.172 対
# 0.161 です。差は 16 文から開き、64 文か 128 文で最大になります（英語は 64 文で 0.564 対 0.164、中
# 国語はすべての 128 文で 0.508 対 0.142）。ラベルが少ないほど事前学習が効くという、よく描かれる図と
# は違いますが、結果をそのまま報告します。ホールドアウトした単語は、学習で見た単語との似かたで分類さ
# れます。そのため上の層は、まずラベル付きの見た単語から、空間のどの領域がどのクラスかを学ばなければ
# なりません。クラスごとに 1 文では、各クラスで 1 つの単語にしかラベルがありません。地図を描いたのは
# 事前学習ですが、ひと握りのラベルではその領域にまだ名前を付けられないのです。ランダムな重みから始め
# たモデルと Bag-of-Words は、どの大きさでもホールドアウトした単語ではチャンスレベルのままです。どれ
# だけラベルがあっても、ラベルに一度も現れない単語は教えられません。

# %% [markdown] lang="en"
# ## Summary
#
# * Fine-tuning = the pretrained encoder + a new output layer, trained on the task's labels: on
#   `<cls>` for a text or a text pair (`BERTClassifier`), on every token for tagging
#   (`BERTTagger`), two scores per token for a question's answer span
#   (`BERTQuestionAnswerer`). The loss averages the cross-entropy over the labelled positions.
# * To see what pretraining buys, hold out what only pretraining can know: here, words that no
#   labelled sentence holds and the unlabelled corpus does. Compare with the same model from
#   random weights and with a bag of words, over several seeds, with intervals, and keep a
#   control (the seen words) on which the claim is not expected to hold.
# * On held-out words the pretrained small BERT beat both baselines at telling the topic, in
#   both languages; on seen words the bag of words was as good or better. The knowledge sat in
#   where pretraining placed the words, which is why fine-tuning here keeps the token embeddings
#   frozen.
#
# ## Exercises
#
# 1. ★★ Fine-tune the topic classifier with the token embeddings *not* frozen (leave out the
#    `requires_grad_(False)` line) and measure it on held-out and seen words. What changes, and
#    why? (Hint: compare the nearest neighbours of a held-out word before and after.)
# 2. ★★ Which held-out words does the pretrained classifier get wrong most often? Compare with
#    the neighbours table: are they the words whose nearest seen words are of another class?
# 3. ★★ Run `compare` for the topic task with three new seeds (5, 6, 7). Do your means fall
#    inside the recorded intervals? How often should they?
# 4. ★★★ Pretrain a small BERT for 900 steps only (the in-class recipe of notebook 07,
#    `scripts/pretrain_small.py --in-class` shows its figures) and repeat the comparison with it.
#    What does that say about where in pretraining the knowledge about words appears?

# %% [markdown] lang="zh"
# ## 小结
#
# * 微调 = 预训练的编码器 + 一个新的输出层，用任务的标签训练：文本或文本对用 `<cls>`
#   （`BERTClassifier`），标注用每个词元（`BERTTagger`），问题的答案区间则给每个词元两个分数
#   （`BERTQuestionAnswerer`）。损失只在有标签的位置上对交叉熵求平均。
# * 要看预训练带来了什么，就要留出只有预训练才能知道的东西：这里是任何有标签句子里都没有、而无标签语
#   料库里有的词。与从随机权重开始的同一模型以及词袋模型比较，用多个随机种子，给出置信区间，并保留一
#   个对照（见过的词），在对照上论断本不指望成立。
# * 在留出词上，预训练的小 BERT 在两种语言中判断话题时都胜过两条基线；在见过的词上，词袋模型不相上下
#   或者更好。知识存在于预训练给词安排的位置里，所以这里微调时冻结了词元嵌入。
#
# ## 练习
#
# 1. ★★ 微调话题分类器时**不**冻结词元嵌入（去掉 `requires_grad_(False)` 那一行），在留出词和见过的
#    词上测量它。有什么变化？为什么？（提示：比较一个留出词在微调前后的最近邻。）
# 2. ★★ 预训练的分类器最常分错哪些留出词？对照最近邻表格：它们是不是那些最近的见过的词属于别的类别的
#    词？
# 3. ★★ 用三个新的随机种子（5、6、7）对话题任务运行 `compare`。你得到的平均值落在记录的区间里吗？
#    应该多常落在里面？
# 4. ★★★ 只用 900 步预训练一个小 BERT（笔记本 07 的课堂训练配置，`scripts/pretrain_small.py
#    --in-class` 会给出它的结果），再用它重复这个比较。这说明关于词的知识在预训练的哪个阶段出现？

# %% [markdown] lang="ja"
# ## まとめ
#
# * ファインチューニング = 事前学習済みのエンコーダ + 新しい出力層で、タスクのラベルで学習させます。
#   テキストやテキストのペアには `<cls>` 上（`BERTClassifier`）、タグ付けには各トークン上
#   （`BERTTagger`）、質問の答えのスパンにはトークンごとに 2 つのスコア（`BERTQuestionAnswerer`）で
#   す。損失はラベルのある位置だけで交差エントロピーを平均します。
# * 事前学習で何が得られるかを見るには、事前学習でしか知りえないものをホールドアウトします。ここで
#   は、どのラベル付きの文にもなく、ラベルのないコーパスにはある単語です。ランダムな重みから始めた同
#   じモデルや Bag-of-Words と、複数のシードで、区間付きで比べ、主張が成り立つとは期待されない対照
#   （見た単語）も残しておきます。
# * ホールドアウトした単語では、事前学習済みの小さな BERT が 2 つの言語のどちらでも話題の判定で両
#   方のベースラインに勝ちました。見た単語では、Bag-of-Words が同じくらいかそれ以上でした。知識は
#   事前学習が単語を置いた位置にあり、だからここではトークン埋め込みを凍結してファインチューニン
#   グしました。
#
# ## 演習
#
# 1. ★★ トークン埋め込みを凍結**せずに**（`requires_grad_(False)` の行を除いて）話題の分類器をファイ
#    ンチューニングし、ホールドアウトした単語と見た単語で測りましょう。何が変わり、それはなぜでしょ
#    うか（ヒント：ホールドアウトした単語の最近傍を前後で比べてみましょう）。
# 2. ★★ 事前学習済みの分類器が最もよく間違えるホールドアウトした単語はどれでしょうか。近傍の表と比べ
#    ましょう。最も近い見た単語が別のクラスの単語でしょうか。
# 3. ★★ 話題のタスクで、3 つの新しいシード（5、6、7）で `compare` を実行しましょう。平均は記録され
#    た区間に入るでしょうか。どのくらいの頻度で入るはずでしょうか。
# 4. ★★★ 900 ステップだけで小さな BERT を事前学習し（ノートブック 07 の授業用の学習設定。
#    `scripts/pretrain_small.py --in-class` がその数字を示します）、それで比較を繰り返しましょう。単
#    語についての知識が事前学習のどの段階で現れるかについて、何が言えるでしょうか。

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 1: Unfreezing the token embeddings</summary>
#
# * Unfrozen, the table gets a gradient in every row whose token occurs in a training sentence:
#   the seen words and the frames' words. A held-out word's row gets none, since no training
#   sentence holds it (in Chinese, not even one of its characters); it stays where pretraining
#   put it. The seen words move toward whatever helps the output layer tell the classes apart,
#   away from the place they shared with the held-out words of their class. Compare the
#   neighbours of a held-out word before and after: its vector still comes from its old
#   embedding, its seen neighbours' from new ones.
# * So the risk falls on the held-out words: the further the seen words move, the more
#   held-out accuracy slides toward the random start's, while seen-word accuracy holds or
#   rises (the labels now reach the seen words' own rows).
# * With this recipe (300 steps at a small learning rate) the rows move by only a small fraction
#   of their length. One run with seed 0 changes little: held-out accuracy moves slightly, up in
#   one language and down in the other, well inside the spread between seeds that the recorded
#   intervals show. The freeze is a guarantee that the map stays as drawn, not
#   a large gain at this recipe; longer fine-tuning or a larger learning rate makes the
#   distortion grow.
#
# </details>
#
# <details><summary>Exercise 2: Which held-out words fail</summary>
#
# Predict with the notebook's `classifier` (seed 0) on the held-out test sentences and count the
# errors per word (each word has three test sentences). The link to the neighbours table is loose.
# Some words with a clean neighbour list are often wrong (in English, *bears*: cats ducks dogs;
# *cycling*: hockey basketball rugby), and some whose nearest seen word is of another class are
# right (*melons*, beside hockey; *Cairo*, beside rabbits). Three reasons: the table reads the
# encoder before fine-tuning, while the classifier reads `<cls>` after fine-tuning changed the
# blocks; the table averages the word's vector over frames, while each test sentence is one
# frame, and most wrong answers are *person* or *place*, which points at frames that
# lean toward those classes; and three sentences per word make each word's error rate coarse.
# The count under the table (the nearest seen word is of the same class for 18 of 24 words)
# predicts the average well enough; single words, poorly.
#
# </details>
#
# <details><summary>Exercise 3: Seeds 5, 6 and 7</summary>
#
# * The recorded 95% t-interval, such as 0.475 [0.427, 0.523] for English held-out words, is a
#   statement about the **mean** over seeds: repeated five-seed experiments would give
#   intervals that contain the true mean 95% of the time. It is not a range for a single
#   seed's result, and not one for the mean of three other seeds.
# * A mean of three scatters more than a mean of five, and the recorded interval's centre is
#   itself off the true mean by some amount. Both add up, so a new mean of three falls inside
#   the recorded interval most of the time but clearly less often than 95%; a single seed's
#   result falls outside still more often. Landing just outside is no sign that something broke.
# * What should not change is the conclusion: the pretrained model's held-out means sit far
#   above the random start's and the bag of words' intervals (0.475 against 0.161 and 0.150 in
#   English), a gap many times the width of any interval. Note also what the seeds vary: the new
#   layer, the random start and the batch order, not the pretraining. Another pretraining run
#   of the small BERT can place the words differently (`docs/shipped.md`).
#
# </details>
#
# <details><summary>Exercise 4: Pretraining for 900 steps</summary>
#
# * `--in-class` records figures only and saves no weights; the simplest model to use is the
#   shipped run's own snapshot at step 900 (notebook 07's `load_snapshots`), loaded into a
#   `BERTModel` and passed to `compare` in place of `small_bert`.
# * After 900 steps the model fills "the peel of [MASK]" the same way for every fruit and
#   animal: the association of a word with its class forms after step 900, before the
#   shipped run ends (`docs/shipped.md`). The nearest seen word of a held-out word is then of
#   its class about as often as chance, and the held-out advantage largely disappears: a run
#   with seed 0 is near chance on held-out words in both languages, like the random start. The
#   seen words are still learned from their labels.
# * So the knowledge about words is a late product of pretraining: by step 900 the MLM accuracy
#   has climbed most of the way (notebook 07), yet what fine-tuning needs from unlabelled text
#   arrives only in the later steps. A pretraining loss that has nearly flattened does not tell
#   you that.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 请先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 1：不冻结词元嵌入</summary>
#
# * 不冻结时，嵌入表中凡是在训练句子里出现过的词元，它那一行都会得到梯度：见过的词和句子框架里的
#   词。留出词的那一行得不到任何梯度，因为没有一个训练句子含有它（中文里连它的一个字都没有）；它停
#   留在预训练安排的位置上。见过的词则朝着有助于输出层区分类别的方向移动，离开了它们与同类留出词共
#   享的位置。比较一个留出词在微调前后的最近邻：它的向量仍来自旧的嵌入，而它那些见过的近邻的向量来
#   自新的嵌入。
# * 所以风险落在留出词上：见过的词移得越远，留出词上的准确率就越向随机初始化的模型滑落，而见过的词
#   上的准确率保持不变甚至上升（标签现在能直接作用到见过的词自己的那一行）。
# * 按这里的训练配置（300 步，学习率很小），各行只移动了自身长度的很小一部分。用随机种子 0 运行一
#   次，变化很小：留出词上的准确率只略有变动，一种语言略升、另一种略降，远在记录的区间所显示的随机
#   种子之间的波动范围之内。冻结是一种保证，确保预训练画好的地图不被改动，在这个训练配置下并不带来
#   多大的提升；微调更久或学习率更大时，扭曲就会加剧。
#
# </details>
#
# <details><summary>练习 2：哪些留出词会分错</summary>
#
# 用笔记本里的 `classifier`（随机种子 0）对含留出词的测试句子做预测，按词统计错误（每个词有三个测
# 试句子）。它与最近邻表格的联系并不紧密。有些词的近邻都是同类，却常常分错（英文的 *bears*：cats
# ducks dogs；*cycling*：hockey basketball rugby）；有些词最近的见过的词属于别的类别，却分对了
# （*melons* 挨着 hockey，*Cairo* 挨着 rabbits）。原因有三：表格读的是微调之前的编码器，而分类器读
# 的是微调改动了编码器块之后的 `<cls>`；表格对这个词在各个框架中的向量求了平均，而每个测试句子只是
# 一个框架，错误答案大多是*人名*或*地点*，说明有些框架本身偏向这两类；每个词只有三个句子，每个词的
# 错误率因此很粗糙。表格下的计数（24 个留出词中有 18 个，最近的见过的词与它同类）能大致预测平均水
# 平，却预测不好单个词。
#
# </details>
#
# <details><summary>练习 3：随机种子 5、6、7</summary>
#
# * 记录的 95% t 区间，比如英文留出词的 0.475 [0.427, 0.523]，说的是随机种子上的**平均值**：如果反
#   复做五个随机种子的实验，得到的区间有 95% 会包含真实的平均值。它不是单个随机种子结果的范围，也不
#   是另外三个随机种子平均值的范围。
# * 三个随机种子的平均值比五个的波动更大，而记录的区间的中心本身也偏离真实平均值。两者叠加，所以新
#   的三个随机种子的平均值大多数时候落在记录的区间里，但明显低于 95%；单个随机种子的结果落在区间外的
#   情况更多。稍稍落在区间外，并不说明哪里出了问题。
# * 不应改变的是结论：预训练模型在留出词上的平均值远高于随机初始化的模型和词袋模型的区间（英文为
#   0.475 对 0.161 和 0.150），差距是任何一个区间宽度的好几倍。还要注意随机种子改变的是什么：新输出
#   层、随机初始化的权重和批量的顺序，而不是预训练。再预训练一次小 BERT，词的位置可能就不同
#   （`docs/shipped.md`）。
#
# </details>
#
# <details><summary>练习 4：只预训练 900 步</summary>
#
# * `--in-class` 只记录结果，不保存权重；最简单的做法是用自带那次运行在第 900 步的快照（笔记本 07
#   的 `load_snapshots`），载入一个 `BERTModel`，代替 `small_bert` 传给 `compare`。
# * 900 步之后，模型对每种水果和动物都用同样的方式填“the peel of [MASK]”：词与其类别的关联在第 900
#   步之后、自带那次运行结束之前才形成（`docs/shipped.md`）。这时留出词最近的见过的词与它同类的
#   次数大约只相当于随机猜测，留出词上的优势基本消失：用随机种子 0 运行一次，两种语言在留出词上
#   都接近随机猜测，和随机初始化的模型一样。见过的词仍然能从它们的标签中学到。
# * 所以关于词的知识是预训练后期的产物：到第 900 步，掩蔽语言模型的准确率已经完成了大部分上升（笔记
#   本 07），但微调需要从无标签文本得到的东西要到后面的步数才出现。几乎已经变平的预训练损失并不会告
#   诉你这一点。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# どの演習も、まず自分で解いてから解答を開いてください。
#
# <details><summary>演習 1：トークン埋め込みを凍結しない</summary>
#
# * 凍結しないと、学習用の文に現れるトークンの行にはすべて勾配が届きます。学習で見た単語と、枠の単
#   語です。ホールドアウトした単語の行には何も届きません。それを含む学習用の文は 1 つもないからです
#   （中国語ではその 1 文字さえありません）。その行は事前学習が置いた場所にとどまります。見た単語
#   は、出力層がクラスを見分けやすくなる方向へ動き、同じクラスのホールドアウトした単語と共有していた
#   場所から離れます。ホールドアウトした単語の最近傍を前後で比べると、その単語のベクトルは古い埋め込
#   みから、近傍の見た単語のベクトルは新しい埋め込みから来ています。
# * そのためリスクはホールドアウトした単語にかかります。見た単語が遠くへ動くほど、ホールドアウトした
#   単語での正解率はランダムな重みから始めたモデルの値へ近づき、見た単語での正解率は保たれるか上がり
#   ます（ラベルが見た単語自身の行に直接届くようになるからです）。
# * この学習設定（**300** ステップ、小さな学習率）では、各行は自分の長さのごく一部しか動きません。
#   乱数シード 0 で 1 回実行しても変化は小さく、ホールドアウトした単語での正解率は一方の言語でわず
#   かに上がり、もう一方でわずかに下がる程度で、記録された区間が示す乱数シード間のばらつきに十分収ま
#   ります。凍結は、事前学習が描いた地図をそのまま保つ保証であって、この学習設定では大きな得にはなり
#   ません。もっと長く、あるいは大きな学習率でファインチューニングすると、ゆがみは大きくなります。
#
# </details>
#
# <details><summary>演習 2：どのホールドアウトした単語を間違えるか</summary>
#
# ノートブックの `classifier`（乱数シード 0）で、ホールドアウトした単語を含むテスト文を予測し、単語
# ごとに誤りを数えます（各単語のテスト文は 3 つです）。近傍の表との結びつきは緩やかです。近傍がすべ
# て同じクラスなのによく間違える単語があり（英語の *bears*：cats ducks dogs、*cycling*：hockey
# basketball rugby）、最も近い見た単語が別のクラスなのに正解する単語もあります（hockey のそばの
# *melons*、rabbits のそばの *Cairo*）。理由は 3 つです。表はファインチューニング前のエンコーダを読
# みますが、分類器はファインチューニングでブロックが変わった後の `<cls>` を読みます。表は単語のベク
# トルを枠について平均しますが、各テスト文は 1 つの枠で、誤った答えの多くは*人名*か*場所*です。つま
# り、それらのクラスに傾く枠があるのです。そして単語ごとに 3 文しかないので、単語ごとの誤り率は粗い
# 値です。表の下の数（ホールドアウトした単語 **24** 個中 **18** 個で、最も近い見た単語が同じクラス）
# は平均をそれなりに予測しますが、個々の単語はうまく予測できません。
#
# </details>
#
# <details><summary>演習 3：乱数シード 5、6、7</summary>
#
# * 記録された 95% t 区間、たとえば英語のホールドアウトした単語の 0.475 [0.427, 0.523] は、乱数シー
#   ドについての**平均**の話です。5 つの乱数シードでの実験を繰り返すと、得られる区間の 95% が真の平
#   均を含みます。1 つの乱数シードの結果の範囲でも、別の 3 つの乱数シードの平均の範囲でもあ
#   りません。
# * 3 つの平均は 5 つの平均よりばらつきが大きく、記録された区間の中心もそれ自体が真の平均からずれて
#   います。両方が重なるので、新しい 3 つの平均は、たいていは記録された区間に入りますが、その頻度は
#   95% よりはっきり低くなります。1 つの乱数シードの結果なら、外れることはさらに多くなります。少し外
#   れても、何かが壊れたしるしではありません。
# * 変わってはならないのは結論です。事前学習済みモデルのホールドアウトした単語での平均は、ランダムな
#   重みから始めたモデルや Bag-of-Words の区間よりはるかに上にあり（英語で 0.475 対 0.161 と
#   0.150）、その差はどの区間の幅の何倍もあります。乱数シードが変えるものにも注意しましょう。新しい
#   層、ランダムな重み、バッチの順序であって、事前学習ではありません。小さな BERT をもう一度事前学習
#   すると、単語の置かれる場所が変わることがあります（`docs/shipped.md`）。
#
# </details>
#
# <details><summary>演習 4：900 ステップだけの事前学習</summary>
#
# * `--in-class` は数字を記録するだけで、重みは保存しません。いちばん簡単なのは、付属モデルの学習の
#   ステップ 900 のスナップショット（ノートブック 07 の `load_snapshots`）を `BERTModel` に読み込
#   み、`small_bert` の代わりに `compare` に渡すことです。
# * 900 ステップの後、モデルは "the peel of [MASK]" をどの果物でも動物でも同じように埋めます。単語と
#   そのクラスの結びつきは、ステップ 900 より後、付属モデルの学習が終わるまでの間にできるのです
#   （`docs/shipped.md`）。このとき、ホールドアウトした単語の最も近い見た単語が同じクラスになる頻度
#   はチャンスレベル程度で、ホールドアウトした単語での優位はほとんど消えます。乱数シード 0 で 1 回
#   実行すると、どちらの言語でもホールドアウトした単語ではチャンスレベル付近で、ランダムな重みから始
#   めたモデルと同じです。見た単語は、そのラベルから変わらず学べます。
# * つまり単語についての知識は事前学習の後半の産物です。ステップ 900 までにマスク言語モデルの正解率
#   は上がるべき分の大半を上がっています（ノートブック 07）が、ファインチューニングがラベルのないテ
#   キストから必要とするものは、その後のステップで初めて現れます。ほぼ平らになった事前学習の損失は、
#   そのことを教えてくれません。
#
# </details>

# %% [raw] strings="zh"
# "training sentences {train}; test sentences with seen words {seen}, with held-out words {held}"
# "训练句子 {train} 个；测试句子中含见过的词的 {seen} 个，含留出词的 {held} 个"
#
# "class"
# "类别"
#
# "seen words"
# "见过的词"
#
# "held-out words"
# "留出词"
#
# "held-out words found in training sentences: {n}"
# "在训练句子中找到的留出词：{n} 个"
#
# "corpus sentences holding a held-out word: {n} of {total}"
# "含留出词的语料库句子：{total} 个中的 {n} 个"
#
# "loss {loss:.3f}, ln 4 = {ln4:.3f}"
# "损失 {loss:.3f}，ln 4 = {ln4:.3f}"
#
# "English"
# "英文"
#
# "Chinese"
# "中文"
#
# "loss over {steps} steps: first 10 {first:.2f}, last 10 {last:.2f}"
# "损失（共 {steps} 步）：前 10 步平均 {first:.2f}，最后 10 步平均 {last:.2f}"
#
# "test sentences"
# "测试句子"
#
# "small BERT, pretrained"
# "小 BERT（预训练）"
#
# "small BERT, random start"
# "小 BERT（随机初始化）"
#
# "bag of words"
# "词袋模型"
#
# "chance: 1/{k} = {p:.3f}"
# "随机猜测：1/{k} = {p:.3f}"
#
# "seeds {seeds}; {minutes:.0f} minutes on {cores} cores"
# "随机种子 {seeds}；在 {cores} 个核上用时 {minutes:.0f} 分钟"
#
# "held-out word"
# "留出词"
#
# "nearest seen words: pretrained"
# "最近的见过的词：预训练"
#
# "random start"
# "随机初始化"
#
# "{start}: the nearest seen word is of the same class for {n} of {total} held-out words (chance: 1 in 6)"
# "{start}：{total} 个留出词中有 {n} 个，最近的见过的词与它同类（随机猜测：六分之一）"
#
# "labelled sentences per class"
# "每个类别的有标签句子数"
#
# "accuracy on held-out words"
# "留出词上的准确率"
#
# "per class"
# "每个类别"

# %% [raw] strings="ja"
# "training sentences {train}; test sentences with seen words {seen}, with held-out words {held}"
# "学習用の文 {train}、テスト文のうち学習で見た単語を含むもの {seen}、ホールドアウトした単語を含むもの {held}"
#
# "class"
# "クラス"
#
# "seen words"
# "学習で見た単語"
#
# "held-out words"
# "ホールドアウトした単語"
#
# "held-out words found in training sentences: {n}"
# "学習用の文に見つかったホールドアウトした単語：{n} 個"
#
# "corpus sentences holding a held-out word: {n} of {total}"
# "ホールドアウトした単語を含むコーパスの文：{total} 文中 {n} 文"
#
# "loss {loss:.3f}, ln 4 = {ln4:.3f}"
# "損失 {loss:.3f}、ln 4 = {ln4:.3f}"
#
# "English"
# "英語"
#
# "Chinese"
# "中国語"
#
# "loss over {steps} steps: first 10 {first:.2f}, last 10 {last:.2f}"
# "{steps} ステップの損失：最初の 10 ステップ {first:.2f}、最後の 10 ステップ {last:.2f}"
#
# "test sentences"
# "テスト文"
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
# "chance: 1/{k} = {p:.3f}"
# "チャンスレベル：1/{k} = {p:.3f}"
#
# "seeds {seeds}; {minutes:.0f} minutes on {cores} cores"
# "シード {seeds}、{cores} コアで {minutes:.0f} 分"
#
# "held-out word"
# "ホールドアウトした単語"
#
# "nearest seen words: pretrained"
# "最も近い学習で見た単語：事前学習済み"
#
# "random start"
# "ランダムな重み"
#
# "{start}: the nearest seen word is of the same class for {n} of {total} held-out words (chance: 1 in 6)"
# "{start}：ホールドアウトした単語 {total} 個中 {n} 個で、最も近い学習で見た単語が同じクラス（チャンスレベル：6 分の 1）"
#
# "labelled sentences per class"
# "クラスごとのラベル付きの文の数"
#
# "accuracy on held-out words"
# "ホールドアウトした単語での正解率"
#
# "per class"
# "クラスごと"
