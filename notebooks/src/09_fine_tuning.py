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
#    labels (a learning curve);
# 5. set the result beside the BERT paper's own evidence and beside a real BERT, MiniLM;
# 6. type sentences into the fine-tuned models.

# %% [markdown] lang="zh"
# # 09 · 微调
#
# [English](../en/09_fine_tuning.ipynb) · [日本語](../ja/09_fine_tuning.ipynb) ·
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
# 4. 看看预训练把留出词放在了哪里，以及差距如何随标签数量变化（学习曲线）；
# 5. 把结果与 BERT 论文自己的证据、与一个真实的 BERT（MiniLM）放在一起对照；
# 6. 向微调好的模型输入你自己的句子。

# %% [markdown] lang="ja"
# # 09 · ファインチューニング
#
# *[English](../en/09_fine_tuning.ipynb) · [中文](../zh/09_fine_tuning.ipynb) ·
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
# 5. 結果を、BERT 論文自身の証拠や本物の BERT である MiniLM と並べます。
# 6. ファインチューニングしたモデルに文を入力してみます。

# %%
# %matplotlib inline
import warnings

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
from bertlib.assets import SMALL_CORPUS_DIR
from bertlib.classroom.exercises import check_exercise
from bertlib.classroom.implement import check_implementation
from bertlib.finetuning.experiment import (
    CURVE,
    RECIPE,
    STARTS,
    compare,
    data_for,
    load_experiment,
    neighbours,
)
from bertlib.finetuning.finetune import freeze_layers, span_accuracy, task_loss
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
from bertlib.viz import FineTuneWidget, ScoredClassifier, new_figure
from bertlib.viz.listing import show_source
from bertlib.weights.hf import minilm_directory

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
# geometry; the 2 encoder blocks, the pooler and the new output layer learn. (Exercise 5 asks what
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
# 新的输出层。（练习 5 会问不冻结时会怎样。）
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
# つのエンコーダブロック、プーラー、新しい出力層です（凍結しないとどうなるかは演習 5 で扱います）。
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
#
# ## Token level: tagging names, places and times
#
# The tagger is fine-tuned the same way, on the training sentences of one and two words. Its
# accuracy is measured on the tokens of the test words only: the frame around them is *other*
# throughout, and would let a tagger that always answers *other* look good.

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
#
# ## 词元级任务：标注人名、地点和时间
#
# 标注器用同样的方式微调，训练数据是含一个词和两个词的训练句子。它的准确率只在测试词的词元上测量：测
# 试词周围的框架全都是*其他*，如果也算进来，一个永远回答*其他*的标注器也会显得不错。

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
#
# ## トークン単位：人名、場所、時間のタグ付け
#
# タガーも同じようにファインチューニングします。学習データは単語を 1 つまたは 2 つ含む学習用の文で
# す。正解率はテスト用の単語のトークンだけで測ります。周りの枠はすべて*その他*なので、それも数える
# と、常に*その他*と答えるタガーでもよく見えてしまいます。

# %%
tag_train = data_for("tags", split.train, tokenizer, max_len)
tag_tests = {(code, part): data_for("tags", getattr(split, part), tokenizer, max_len,
                                    words_only=True).select(code)
             for code in LANGUAGES for part in PARTS}
steps, lr = RECIPE["tags"]
tagger.encoder.token_embedding.weight.requires_grad_(False)
fine_tune(tagger, tag_train, num_steps=steps, lr=lr, seed=0, progress=False)
scores = {key: evaluate_task(tagger, data, len(TAGS)) for key, data in tag_tests.items()}
print(table([[tr("tag"), *(f"{LANGUAGES[code]}, {PARTS['held_out']}" for code in LANGUAGES)]]
            + [[name, *(scores[code, "held_out"].per_class[t] for code in LANGUAGES)]
               for t, name in enumerate(tag_names)]))
print(tr("five seeds, accuracy on the tokens of the test words:"))
print_recorded(recorded["tasks"]["tags"])

# %% [markdown] lang="en"
# Over five seeds, the pretrained tagger is right on 0.545 of the tokens of held-out words in
# English and 0.425 in Chinese; the random start on 0.322 and 0.309, the bag of words on 0.338 and
# 0.319. The intervals are apart. On seen words the order turns in English: the bag of words is
# right on every token (1.000), the random start on 0.943, the pretrained tagger on 0.701. We have
# not found out why the pretrained tagger trails there; in Chinese the three are close (0.965,
# 0.961 and 0.920).
#
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
# Our questions come from the sentences of two words: *who* for a name, *where* for a place,
# *when* for a time (哪个人, 哪儿, 哪天 for a Chinese sentence). In the test sentences with
# held-out words, every answer is a name, place or time the training questions never asked
# about.

# %% [markdown] lang="zh"
# 在五个随机种子上，预训练的标注器在留出词的词元上，英文对了 0.545，中文对了 0.425；随机初始化的模型
# 为 0.322 和 0.309，词袋模型为 0.338 和 0.319。置信区间互不重叠。在见过的词上，英文的名次反了过来：
# 词袋模型每个词元都对（1.000），随机初始化的模型为 0.943，预训练的标注器为 0.701。我们还没有弄清预
# 训练的标注器为什么在这里落后；中文的三者很接近（0.965、0.961 和 0.920）。
#
# ## 问答：文本中的一个区间
#
# 本章列出的第四类下游任务是问答，例如 SQuAD：输入是一个问题和一段文字，即 `<cls>` 问题 `<sep>`
# 文字 `<sep>`，答案是这段文字中连续的若干个词元。BERT 论文只加了两个长度为 H 的向量：起点向量 S
# 和终点向量 E。设 h_i 是词元 i 的编码，那么词元 i 作为答案起点的分数是 S·h_i，作为终点的分数是
# E·h_i；对所有位置做 softmax，就把每一行分数变成了概率。损失是正确起点与正确终点的交叉熵的平均。
# 回答问题时，模型选出 S·h_i + E·h_j 最大的区间 i 到 j（i ≤ j）。
#
# 我们的问题来自含两个词的句子：人名问 *who*，地点问 *where*，时间问 *when*（中文句子分别问“哪个人”
# “哪儿”“哪天”）。在含留出词的测试句子中，每个答案都是训练问题从未问到过的人名、地点或时间。

# %% [markdown] lang="ja"
# 5 つのシードで、事前学習済みのタガーはホールドアウトした単語のトークンの 0.545（英語）と 0.425（中
# 国語）に正解し、ランダムな重みから始めたモデルは 0.322 と 0.309、Bag-of-Words は 0.338 と 0.319 で
# す。区間は重なりません。学習で見た単語では、英語で順位が逆になります。Bag-of-Words はすべてのトー
# クンに正解し（1.000）、ランダムな重みから始めたモデルは 0.943、事前学習済みのタガーは 0.701 です。
# なぜ事前学習済みのタガーがここで遅れをとるのかは、まだ突き止めていません。中国語では 3 つとも近い
# 値です（0.965、0.961、0.920）。
#
# ## 質問応答：テキストのスパン
#
# 章の下流タスクの 4 つめのグループは、SQuAD のような質問応答です。入力は質問と文章で `<cls>` 質問
# `<sep>` 文章 `<sep>` となり、答えは文章のトークンのスパンです。BERT 論文が加えるのは、サイズ H の
# 2 つのベクトル、開始ベクトル S と終了ベクトル E だけです。トークン i が答えの始まりであるスコアは
# S·h_i、終わりであるスコアは E·h_i で、h_i はそのトークンのエンコーディングです。位置についての
# softmax で、スコアの各行を確率に変えます。損失は、正しい開始位置と正しい終了位置の交差エントロピー
# の平均です。答えるときには、S·h_i + E·h_j が最大になる i から j まで（i ≤ j）のスパンを取ります。
#
# 質問は単語を 2 つ含む文から作ります。人名には *who*、場所には *where*、時間には *when* です（中国
# 語の文なら 哪个人、哪儿、哪天）。ホールドアウトした単語を含むテスト文では、答えはどれも学習用の質
# 問が一度も尋ねなかった人名、場所、時間です。

# %%
qa_train = data_for("spans", split.train, tokenizer, max_len)
i = qa_train.langs.index(lang)  # the first question in this edition's language
tokens = tokenizer.vocab.to_tokens(qa_train.tokens[i, :qa_train.valid_lens[i]].tolist())
first, last = qa_train.labels[i].tolist()
print(" ".join(tokens))
print(tr("  answer: positions {first} to {last}, {answer}", first=first, last=last,
         answer=" ".join(tokens[first:last + 1])))
show_source(BERTQuestionAnswerer)

# %% [markdown] lang="en"
# `BERTQuestionAnswerer` puts a new `Linear(H, 2)` on the encoder: its two rows are S and E. It
# returns the scores as a tensor of shape (B, 2, T), with -inf on the padding. Read as logits of
# a T-way classification (which position?) for two rows, start and end, these scores make
# `task_loss` exactly the paper's loss, and `fine_tune` trains the model unchanged. Accuracy is
# the exact match: the first and the last token both right. The bag of words of question
# answering needs no training: for each question, it answers with the span most often the answer
# in training, counted from the sentence's first token.

# %% [markdown] lang="zh"
# `BERTQuestionAnswerer` 在编码器上加一个新的 `Linear(H, 2)`：它的两行就是 S 和 E。它返回形状为
# (B, 2, T) 的分数张量，填充位置的分数是 -inf。如果把起点和终点这两行分数各看作一个 T 类分类（答案
# 在哪个位置？）的 logits，那么 `task_loss` 恰好就是论文中的损失，`fine_tune` 不用改就能训练它。准确
# 率按完全匹配计算：第一个和最后一个词元都要对。问答的“词袋模型”不需要训练：对每个问题，它回答训练中
# 最常作为答案的区间（从句子的第一个词元算起）。

# %% [markdown] lang="ja"
# `BERTQuestionAnswerer` はエンコーダの上に新しい `Linear(H, 2)` を置きます。その 2 つの行が S と E
# です。スコアを形状 (B, 2, T) のテンソルとして返し、パディングの位置は -inf にします。開始と終了の
# 2 つの行のそれぞれについて、T 通りの分類（どの位置か）のロジットとして読めば、`task_loss` はちょう
# ど論文の損失になり、`fine_tune` はそのままモデルを学習させられます。正解率は完全一致で、最初と最後
# のトークンの両方が正しいときだけ正解です。質問応答の Bag-of-Words は学習を必要としません。質問ごと
# に、学習データで最もよく答えだったスパン（文の最初のトークンから数えて）で答えます。

# %%
qa_tests = {(code, part): data_for("spans", getattr(split, part), tokenizer,
                                   max_len).select(code)
            for code in LANGUAGES for part in PARTS}
steps, lr = RECIPE["spans"]
qa = BERTQuestionAnswerer(small_bert, seed=0)
qa.encoder.token_embedding.weight.requires_grad_(False)
fine_tune(qa, qa_train, num_steps=steps, lr=lr, seed=0, progress=False)
print(table([[tr("questions"), *LANGUAGES.values()]]
            + [[name, *(span_accuracy(qa, qa_tests[code, part]) for code in LANGUAGES)]
               for part, name in PARTS.items()]))
print(tr("five seeds, exact match:"))
print_recorded(recorded["tasks"]["spans"])

# %% [markdown] lang="en"
# When the answer is a held-out word, the pretrained model finds the exact span for 0.614 of the
# English and 0.382 of the Chinese questions, over five seeds; the random start for 0.152 and
# 0.032, the most common span for 0.139 and 0.004. On seen words the two BERTs are close (0.823 and
# 0.778 in English). A Chinese answer is two or three characters, one token each, and the span must
# start and end on the right ones: one reason the Chinese figures are lower.
#
# To answer, the model needs `best_span`: the best pair of a start and an end, not the best start
# and the best end on their own (exercise 4 asks you to write it).
#
# ## The same claim at full scale: the BERT paper
#
# Our experiment is small and built on purpose. The BERT paper (Devlin et al. 2018) makes the
# same claim with real text and real tasks. Its Table 1 gives the average test score on the GLUE
# benchmark's tasks:
#
# | model (2018) | GLUE average |
# | --- | --- |
# | best before OpenAI GPT | 74.0 |
# | BiLSTM + ELMo + attention | 71.0 |
# | OpenAI GPT (pretrained, left to right) | 75.1 |
# | BERT-Base | 79.6 |
# | BERT-Large | 82.1 |
#
# Its ablations (Table 5, development sets, BERT-Base's size) take the pretraining apart:
#
# | pretraining | MNLI | QNLI | MRPC | SST-2 | SQuAD F1 |
# | --- | --- | --- | --- | --- | --- |
# | MLM + NSP (BERT-Base) | 84.4 | 88.4 | 86.7 | 92.7 | 88.5 |
# | MLM, no NSP | 83.9 | 84.9 | 86.5 | 92.6 | 87.9 |
# | left to right, no NSP | 82.1 | 84.3 | 77.5 | 92.1 | 77.8 |
#
# Removing next sentence prediction costs most on the tasks about sentence pairs (QNLI); a
# left-to-right model instead of a masked one costs most on question answering (SQuAD) and on
# MRPC. The paper does not fine-tune a randomly initialised BERT on GLUE; its comparison is
# against models with less or other pretraining.
#
# ## A real BERT: MiniLM
#
# all-MiniLM-L6-v2 (notebook 08) was pretrained on real English, in which mangoes are eaten,
# wolves howl and Lisbon has a harbour. It knows only English, so we fine-tune it on the English
# topic task, with its own tokenizer. To stay within the time budget of this notebook, we train
# only its top two encoder blocks (and the layers above them), with batches of 16 for 20 steps.

# %% [markdown] lang="zh"
# 答案是留出词时，在五个随机种子上，预训练模型对 0.614 的英文问题和 0.382 的中文问题找出了完全正确的
# 区间；随机初始化的模型为 0.152 和 0.032，最常见的区间为 0.139 和 0.004。在见过的词上，两个 BERT 很
# 接近（英文 0.823 和 0.778）。中文的答案有两三个字，每个字是一个词元，区间的起点和终点都得落在对的
# 字上：这是中文的数字较低的一个原因。
#
# 回答问题还需要 `best_span`：它找的是起点和终点组合起来最好的一对，而不是分别最好的起点和最好的终点
# （练习 4 请你写出它）。
#
# ## 同一个论断的真实规模版本：BERT 论文
#
# 我们的实验规模很小，而且是特意构造的。BERT 论文（Devlin 等人，2018）用真实的文本和真实的任务提出了
# 同一个论断。论文的表 1 给出了在 GLUE 基准各任务上的平均测试成绩：
#
# | 模型（2018 年） | GLUE 平均分 |
# | --- | --- |
# | OpenAI GPT 之前的最好成绩 | 74.0 |
# | BiLSTM + ELMo + 注意力 | 71.0 |
# | OpenAI GPT（预训练，从左到右） | 75.1 |
# | BERT-Base | 79.6 |
# | BERT-Large | 82.1 |
#
# 论文的消融实验（表 5，开发集，BERT-Base 的规模）把预训练拆开来看：
#
# | 预训练 | MNLI | QNLI | MRPC | SST-2 | SQuAD F1 |
# | --- | --- | --- | --- | --- | --- |
# | 掩蔽语言模型 + 下一句预测（BERT-Base） | 84.4 | 88.4 | 86.7 | 92.7 | 88.5 |
# | 掩蔽语言模型，无下一句预测 | 83.9 | 84.9 | 86.5 | 92.6 | 87.9 |
# | 从左到右，无下一句预测 | 82.1 | 84.3 | 77.5 | 92.1 | 77.8 |
#
# 去掉下一句预测，损失最大的是关于句子对的任务（QNLI）；用从左到右的模型代替掩蔽语言模型，损失最大
# 的是问答（SQuAD）和 MRPC。论文没有在 GLUE 上微调随机初始化的 BERT；它对比的是预训练更少或方式不同
# 的模型。
#
# ## 真实的 BERT：MiniLM
#
# all-MiniLM-L6-v2（笔记本 08）是在真实的英文上预训练的，在那些文本里，芒果被吃掉，狼会嚎叫，里斯本
# 有港口。它只懂英文，所以我们用它自己的分词器，在英文的话题任务上微调它。为了不超出本笔记本的时间预
# 算，我们只训练它最上面的两个编码器块（以及它们之上的层），批量大小为 16，训练 20 步。

# %% [markdown] lang="ja"
# 答えがホールドアウトした単語のとき、5 つのシードで、事前学習済みモデルは英語の質問の 0.614、中国語
# の質問の 0.382 で完全に正しいスパンを見つけます。ランダムな重みから始めたモデルは 0.152 と 0.032、
# 最もよく現れるスパンは 0.139 と 0.004 です。学習で見た単語では、2 つの BERT は近い値です（英語で
# 0.823 と 0.778）。中国語の答えは 2、3 文字で、1 文字が 1 トークンなので、スパンの始まりと終わりの
# 両方が正しい文字に来なければなりません。中国語の数字が低い理由の 1 つです。
#
# 答えるために、モデルには `best_span` が必要です。最も良い開始と最も良い終了をそれぞれ選ぶのではな
# く、開始と終了の組として最も良いものを選ぶ関数です（演習 4 で書きます）。
#
# ## 同じ主張を実際の規模で：BERT 論文
#
# 私たちの実験は小さく、意図して作ったものです。BERT 論文（Devlin ら、2018）は、本物のテキストと本物
# のタスクで同じ主張をしています。その表 1 は、GLUE ベンチマークのタスクでのテストスコアの平均です。
#
# | モデル（2018 年） | GLUE の平均 |
# | --- | --- |
# | OpenAI GPT 以前の最高 | 74.0 |
# | BiLSTM + ELMo + アテンション | 71.0 |
# | OpenAI GPT（事前学習済み、左から右） | 75.1 |
# | BERT-Base | 79.6 |
# | BERT-Large | 82.1 |
#
# アブレーション（表 5、開発セット、BERT-Base の大きさ）は、事前学習を分解してみせます。
#
# | 事前学習 | MNLI | QNLI | MRPC | SST-2 | SQuAD F1 |
# | --- | --- | --- | --- | --- | --- |
# | マスク言語モデル + 次文予測（BERT-Base） | 84.4 | 88.4 | 86.7 | 92.7 | 88.5 |
# | マスク言語モデル、次文予測なし | 83.9 | 84.9 | 86.5 | 92.6 | 87.9 |
# | 左から右、次文予測なし | 82.1 | 84.3 | 77.5 | 92.1 | 77.8 |
#
# 次文予測をなくすと、文のペアについてのタスク（QNLI）で最も大きく下がります。マスク言語モデルの代わ
# りに左から右のモデルを使うと、質問応答（SQuAD）と MRPC で最も大きく下がります。論文は、ランダムに
# 初期化した BERT を GLUE でファインチューニングしてはいません。比べているのは、事前学習が少ないか別
# の方法のモデルです。
#
# ## 本物の BERT：MiniLM
#
# all-MiniLM-L6-v2（ノートブック 08）は本物の英語で事前学習されています。そこではマンゴーは食べら
# れ、オオカミは遠吠えし、リスボンには港があります。英語しか知らないので、英語の話題のタスクで、それ
# 自身のトークナイザを使ってファインチューニングします。このノートブックの時間の予算に収めるため、最
# 上位の 2 つのエンコーダブロック（とその上の層）だけを、バッチサイズ 16 で 20 ステップ学習させま
# す。

# %%
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # MiniLM ships no MLM or NSP head, as notebook 08 showed
    minilm, minilm_tokenizer = load_hf(minilm_directory())


def english(sentences):
    return [s for s in sentences if s.lang == "en"]


minilm_classifier = BERTClassifier(minilm, NUM_TOPICS, seed=0)
print(tr("trainable parameters: {n:,}", n=freeze_layers(minilm_classifier, trainable_blocks=2)))
fine_tune(minilm_classifier, data_for("topic", english(split.train), minilm_tokenizer, 64),
          num_steps=20, batch_size=16, lr=4e-4, seed=0, progress=False)
minilm_accuracy = {part: evaluate_task(minilm_classifier,
                                       data_for("topic", english(getattr(split, part)),
                                                minilm_tokenizer, 64), NUM_TOPICS).overall
                   for part in PARTS}
print(table([[tr("English test sentences"), tr("MiniLM, pretrained")]]
            + [[name, minilm_accuracy[part]] for part, name in PARTS.items()]))

# %% [markdown] lang="en"
# MiniLM classifies almost every English sentence with a held-out word right after 20 steps. Its
# pretraining read mangoes, wolves and Lisbon in countless real sentences, so a word no label
# showed still lands beside its class: the mechanism of our small BERT, at a far larger scale. It
# is not a controlled comparison. MiniLM is larger, was distilled from a BERT pretrained on far
# more text, and was then trained on more than a billion sentence pairs to give sentences about the
# same thing similar vectors (notebook 08). It shows what a far larger pretraining does on the same
# test, not what causes the difference.
#
# ## Try it
#
# Type a sentence in English or Chinese: the widget shows a fine-tuned classifier's probability
# for each of the six classes, and the tagger's tag for every token. Under the classifier's
# buttons it says how often that classifier was right on test sentences with held-out words (the
# tables above) and what guessing gives (1/6). The default sentence holds a held-out word in a
# frame no training sentence used. The buttons switch between two classifiers; the tags come
# from the small BERT's tagger either way.
#
# Try a held-out word in a frame of your own, then a seen word, then a word that is in no class
# and in no corpus sentence, each with both classifiers. MiniLM was fine-tuned and measured on
# English only, and many Chinese characters are not in its vocabulary (the widget says how many
# pieces of a sentence it cannot read), so its answers to Chinese sentences mean little.

# %% [markdown] lang="zh"
# MiniLM 只训练了 20 步，就把几乎所有含留出词的英文句子分对了。它在预训练中读过无数真实的句子，里面
# 有芒果、狼和里斯本，所以一个从未带着标签出现的词仍会落在它的类别旁边：这和我们的小 BERT 是同一个机
# 制，只是规模大得多。这不是一个对照实验。MiniLM 更大，是从一个用多得多的文本预训练的 BERT 蒸馏而来
# 的，之后又在十亿多个句子对上训练，让讲同一件事的句子得到相近的向量（笔记本 08）。它显示的是
# 规模大得多的预训练在同一个测试上能做到什么，而不是差别从何而来。
#
# ## 动手试一试
#
# 输入一个英文或中文句子：小部件显示一个微调好的分类器对六个类别各自给出的概率，以及标注器给每个词元
# 打的标签。分类器按钮下方写着这个分类器在含留出词的测试句子上对了多少（上面的表格），以及随机猜测的
# 水平（1/6）。默认句子在一个训练句子没用过的框架里放了一个留出词。按钮在两个分类器之间切换；无论选
# 哪个，标签都来自小 BERT 的标注器。
#
# 试试把一个留出词放进你自己写的框架，再试一个见过的词，再试一个不属于任何类别、也不在任何语料库句子
# 中的词，每次都用两个分类器。MiniLM 只在英文上微调和测量过，而且很多汉字不在它的词表里（小部件会说
# 明句子中有多少个子词它读不了），所以它对中文句子的回答意义不大。

# %% [markdown] lang="ja"
# MiniLM は 20 ステップの学習だけで、ホールドアウトした単語を含む英語の文をほぼすべて正しく分類しま
# す。事前学習で mangoes や wolves や Lisbon を数えきれない本物の文の中で読んでいるので、ラベルで一
# 度も見せていない単語も自分のクラスのそばに置かれるのです。私たちの小さな BERT と同じ仕組みを、はる
# かに大きな規模で行ったものです。ただし、これは対照実験ではありません。MiniLM はより大きく、はるか
# に多くのテキストで事前学習した BERT から蒸留され、その後十億組を超える文のペアで、同じことについ
# ての文に近いベクトルを与えるように学習されています（ノートブック 08）。同じテストではるかに大きな
# 事前学習が何をするかは示しますが、差が何から生まれるかは示しません。
#
# ## 試してみよう
#
# 英語か中国語の文を入力してください。ウィジェットは、ファインチューニングした分類器の 6 つのクラス
# それぞれの確率と、タガーが各トークンに付けたタグを表示します。分類器のボタンの下には、その分類器が
# ホールドアウトした単語を含むテスト文でどれだけ正解したか（上の表）と、チャンスレベル（1/6）が書か
# れ
# ています。既定の文は、どの学習用の文も使っていない枠にホールドアウトした単語を入れたものです。ボタ
# ンで 2 つの分類器を切り替えます。タグはどちらを選んでも小さな BERT のタガーが付けます。
#
# 自分で書いた枠にホールドアウトした単語を入れてみて、次に学習で見た単語、次にどのクラスにもコーパス
# のどの文にもない単語を、それぞれ両方の分類器で試してください。MiniLM は英語だけでファインチューニ
# ングして測ったもので、多くの漢字は語彙にありません（文のサブワードのうち読めないものの数をウィ
# ジェットが示します）。そのため、中国語の文への答えにはあまり意味がありません。

# %%
# Each classifier with the tokenizer it reads and its accuracy on held-out words (tables above).
classifiers = {
    tr("small BERT, pretrained"): ScoredClassifier(
        classifier, tokenizer, {code: accuracy[code, "held_out"] for code in LANGUAGES}),
    tr("MiniLM, pretrained"): ScoredClassifier(minilm_classifier, minilm_tokenizer,
                                               {"en": minilm_accuracy["held_out"]}),
}
FineTuneWidget(classifiers, tagger, tokenizer, topics)

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
# * On held-out words the pretrained small BERT beat both baselines in the three tasks and both
#   languages; on seen words the bag of words was as good or better. The knowledge sat in where
#   pretraining placed the words, which is why fine-tuning here keeps the token embeddings
#   frozen.
# * At full scale the BERT paper shows the same claim on real tasks, and MiniLM, pretrained on
#   real English, classifies the held-out English words almost without error.
# * What carries over, and what does not. The corpus was built so that a word's class shows in
#   the words around it, one cue per sentence, and the labelled frames say nothing else. Real text
#   is messier: a word's contexts tell many things besides a class, words have several senses,
#   and a real BERT fine-tunes all its weights, embeddings included, on many more labels. The
#   effect was also fragile here: the same recipe run on two threads, which adds in another
#   order, placed the Chinese held-out words less well, and its Chinese results were weaker. What
#   carries over is the method: hold out what only pretraining can know, and compare against
#   controls.
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
# 5. ★★ Fine-tune the topic classifier with the token embeddings *not* frozen (leave out the
#    `requires_grad_(False)` line) and measure it on held-out and seen words. What changes, and
#    why? (Hint: compare the nearest neighbours of a held-out word before and after.)
# 6. ★★ Which held-out words does the pretrained classifier get wrong most often? Compare with
#    the neighbours table: are they the words whose nearest seen words are of another class?
# 7. ★★ Run `compare` for the topic task with three new seeds (5, 6, 7). Do your means fall
#    inside the recorded intervals? How often should they?
# 8. ★★★ Pretrain a small BERT for 900 steps only (the in-class recipe of notebook 06,
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
# * 在留出词上，预训练的小 BERT 在三个任务、两种语言中都胜过两条基线；在见过的词上，词袋模型不相上下
#   或者更好。知识存在于预训练给词安排的位置里，所以这里微调时冻结了词元嵌入。
# * 在真实规模上，BERT 论文在真实任务上给出了同一个论断；在真实英文上预训练的 MiniLM 几乎不出错地分
#   对了英文的留出词。
# * 哪些结论可以推广，哪些不能。语料库是特意构造的：一个词的类别体现在它周围的词里，每个句子只有一个
#   线索，而有标签的句子框架不透露任何别的信息。真实文本要杂乱得多：一个词的上下文除了类别还透露许多
#   别的东西，词有多种含义，真正的 BERT 微调时会更新包括嵌入在内的全部权重，用的标签也多得多。这里的
#   效果也并不稳固：同一个训练配置用两个线程运行（浮点数的累加顺序不同），留出的中文词就没有被放得这
#   么好，中文的结果也更弱。可以推广的是方法：留出只有预训练才能知道的东西，并和对照组比较。
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
# 5. ★★ 微调话题分类器时**不**冻结词元嵌入（去掉 `requires_grad_(False)` 那一行），在留出词和见过的
#    词上测量它。有什么变化？为什么？（提示：比较一个留出词在微调前后的最近邻。）
# 6. ★★ 预训练的分类器最常分错哪些留出词？对照最近邻表格：它们是不是那些最近的见过的词属于别的类别的
#    词？
# 7. ★★ 用三个新的随机种子（5、6、7）对话题任务运行 `compare`。你得到的平均值落在记录的区间里吗？
#    应该多常落在里面？
# 8. ★★★ 只用 900 步预训练一个小 BERT（笔记本 06 的课堂训练配置，`scripts/pretrain_small.py
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
# * ホールドアウトした単語では、事前学習済みの小さな BERT が 3 つのタスクと 2 つの言語のすべてで両方
#   のベースラインに勝ちました。見た単語では、Bag-of-Words が同じくらいかそれ以上でした。知識は事前
#   学習が単語を置いた位置にあり、だからここではトークン埋め込みを凍結してファインチューニングしまし
#   た。
# * 実際の規模では BERT 論文が本物のタスクで同じ主張を示し、本物の英語で事前学習した MiniLM はホール
#   ドアウトした英語の単語をほとんど間違えずに分類します。
# * 何が一般化でき、何ができないか。コーパスは、単語のクラスが周りの単語に表れるように作られていま
#   す。1 文に手がかりは 1 つで、ラベル付きの文の枠はそれ以外のことを何も語りません。本物のテキスト
#   はもっと雑多です。単語の文脈はクラス以外にも多くのことを語り、単語には複数の意味があり、本物の
#   BERT は埋め込みを含むすべての重みを、はるかに多くのラベルでファインチューニングします。ここでの
#   効果はもろくもありました。同じ学習設定を 2 スレッドで実行すると（浮動小数点の足し算の順序が変わ
#   り
#   ます）、中国語のホールドアウトした単語はうまく配置されず、中国語の結果も弱くなりました。一般化で
#   きるのは方法です。事前学習でしか知りえないものをホールドアウトし、対照と比べることです。
#
# ## 演習
#
# 1. ★ **数えてみよう。** タガー（`BERTTagger(small_bert, 4)`）の学習可能なパラメータは、話題の分類
#    器よりいくつ少ないでしょうか。それはなぜですか。下で確かめましょう。
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
# 5. ★★ トークン埋め込みを凍結**せずに**（`requires_grad_(False)` の行を除いて）話題の分類器をファイ
#    ンチューニングし、ホールドアウトした単語と見た単語で測りましょう。何が変わり、それはなぜでしょ
#    うか（ヒント：ホールドアウトした単語の最近傍を前後で比べてみましょう）。
# 6. ★★ 事前学習済みの分類器が最もよく間違えるホールドアウトした単語はどれでしょうか。近傍の表と比べ
#    ましょう。最も近い見た単語が別のクラスの単語でしょうか。
# 7. ★★ 話題のタスクで、3 つの新しいシード（5、6、7）で `compare` を実行しましょう。平均は記録され
#    た区間に入るでしょうか。どのくらいの頻度で入るはずでしょうか。
# 8. ★★★ 900 ステップだけで小さな BERT を事前学習し（ノートブック 06 の授業用の学習設定。
#    `scripts/pretrain_small.py --in-class` がその数字を示します）、それで比較を繰り返しましょう。単
#    語についての知識が事前学習のどの段階で現れるかについて、何が言えるでしょうか。

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
#
# "tag"
# "标签"
#
# "five seeds, accuracy on the tokens of the test words:"
# "五个随机种子，测试词的词元上的准确率："
#
# "  answer: positions {first} to {last}, {answer}"
# "  答案：位置 {first} 到 {last}，{answer}"
#
# "questions"
# "问题"
#
# "five seeds, exact match:"
# "五个随机种子，完全匹配："
#
# "trainable parameters: {n:,}"
# "可训练的参数：{n:,} 个"
#
# "English test sentences"
# "英文测试句子"
#
# "MiniLM, pretrained"
# "MiniLM（预训练）"

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
#
# "tag"
# "タグ"
#
# "five seeds, accuracy on the tokens of the test words:"
# "5 つのシード、テスト用の単語のトークンでの正解率："
#
# "  answer: positions {first} to {last}, {answer}"
# "  答え：位置 {first} から {last}、{answer}"
#
# "questions"
# "質問"
#
# "five seeds, exact match:"
# "5 つのシード、完全一致："
#
# "trainable parameters: {n:,}"
# "学習するパラメータ：{n:,} 個"
#
# "English test sentences"
# "英語のテスト文"
#
# "MiniLM, pretrained"
# "MiniLM（事前学習済み）"
