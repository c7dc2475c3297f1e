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
# # 02 · Input representation
#
# *[中文版](../zh/02_input_representation.ipynb) · [日本語](../ja/02_input_representation.ipynb) ·
# [Index](00_index.ipynb)*
#
# Before BERT can attend to anything, text has to become a matrix: one vector per token. This
# notebook builds that matrix step by step.
#
# You will:
# 1. turn one sentence, or a pair of sentences, into a **BERT input sequence** with its
#    **segment ids**;
# 2. see how WordPiece spells any word with a fixed set of pieces, and learn such a vocabulary
#    from a corpus;
# 3. look up the three embeddings BERT adds together (token, segment, position) and check your
#    sum against `BERTEncoder.embed`;
# 4. see why the position embeddings are *learned*, and what that costs;
# 5. write the function that builds a BERT input sequence, and WordPiece's longest match,
#    yourself, and let a check compare them with `bertlib`'s on several cases.

# %% [markdown] lang="zh"
# # 02 · 输入表示
#
# [English](../en/02_input_representation.ipynb) · [日本語](../ja/02_input_representation.ipynb) ·
# [目录](00_index.ipynb)
#
# BERT 在做任何注意力计算之前，先要把文本变成一个矩阵：每个词元对应一个向量。本笔记本一步一步地
# 把这个矩阵构造出来。
#
# 你将会：
# 1. 把一个句子或一对句子变成 **BERT 输入序列**，并得到每个词元的**片段索引**；
# 2. 看 WordPiece 怎样用一套固定的子词拼出任意一个词，并从语料库中学出这样一个词表；
# 3. 查出 BERT 相加的三种嵌入（词元嵌入、片段嵌入、位置嵌入），亲手求和，并与
#    `BERTEncoder.embed` 的结果对照；
# 4. 理解为什么位置嵌入是**可学习的**，以及这样做的代价；
# 5. 亲手写出构造 BERT 输入序列的函数和 WordPiece 的最长匹配，再由检查单元格在几个测试用例上与
#    `bertlib` 的实现对照。

# %% [markdown] lang="ja"
# # 02 · 入力表現
#
# *[English](../en/02_input_representation.ipynb) · [中文](../zh/02_input_representation.ipynb) ·
# [目次](00_index.ipynb)*
#
# BERT がアテンションを計算する前に、テキストを行列に、つまりトークンごとに 1 つのベクトルに変えなけ
# ればなりません。このノートブックでは、その行列を一歩ずつ組み立てます。
#
# このノートブックでは次のことを行います。
# 1. 1 つの文、または文ペアを、**セグメントインデックス**付きの **BERT 入力シーケンス**に変換しま
#    す。
# 2. WordPiece が決まったサブワードの集合でどんな単語でも書き表す仕組みを見て、そのような語彙をコー
#    パスから学習します。
# 3. BERT が足し合わせる 3 つの埋め込み（トークン、セグメント、位置）を引き、自分で計算した和を
#    `BERTEncoder.embed` と照らし合わせます。
# 4. 位置埋め込みがなぜ**学習される**のか、そしてその代償は何かを見ます。
# 5. BERT 入力シーケンスを作る関数と WordPiece の最長一致を自分で書き、チェック用のセルでいくつかの
#    ケースについて `bertlib` の実装と比べます。

# %%
import torch

from bertlib import (
    BERTEncoder,
    Vocab,
    WordPieceTokenizer,
    get_tokens_and_segments,
    load_small_bert,
    load_small_corpus,
)
from bertlib.classroom.implement import check_implementation
from bertlib.support.checks import error_message
from bertlib.support.i18n import table, tr
from bertlib.viz import InputRepresentationWidget
from bertlib.viz.listing import show_source

# %% [markdown] lang="en"
# ## One text or two
#
# Some tasks read a single text (sentiment analysis: *is this review positive?*), others a pair
# (natural language inference: *does sentence A imply sentence B?*). BERT uses one input format
# for both:
#
# * one text: `<cls>` A `<sep>`
# * a pair: `<cls>` A `<sep>` B `<sep>`
#
# `<cls>` ("classification") always comes first; its final vector will summarise the whole
# input (notebook 05 uses it). `<sep>` closes each text. A **segment id** per token says which
# text it belongs to: 0 for `<cls>`, A and A's `<sep>`; 1 for B and B's `<sep>`.
#
# The chapter distinguishes a *BERT input sequence* (what the model reads) from a *text
# sequence* (one of the at most two texts inside it). `get_tokens_and_segments(tokens_a,
# tokens_b=None)` builds one: it returns the tokens and their segment ids, as two lists.
#
# **Implement it (exercise 1).** Before you read that function, write it yourself in the cell
# below: `tokens_and_segments(tokens_a, tokens_b=None)` returns the tokens of `<cls>` A `<sep>`
# (or `<cls>` A `<sep>` B `<sep>` when `tokens_b` is not None) and their segment ids, as a
# tuple of two lists. The check compares it with `get_tokens_and_segments` on a single text,
# pairs, Chinese characters, one-token texts and an empty B, and tells you which case fails;
# add `hint=1` to it for a hint.

# %% [markdown] lang="zh"
# ## 单个文本还是文本对
#
# 有些任务只读一个文本（情感分析：这条评论是好评吗？），有些任务读一对文本（自然语言推断：
# 句子 A 能推出句子 B 吗？）。BERT 用同一种输入格式处理这两种情况：
#
# * 单个文本：`<cls>` A `<sep>`
# * 文本对：`<cls>` A `<sep>` B `<sep>`
#
# `<cls>`（classification，分类）总在最前面，它最终的向量将概括整个输入（笔记本 05 会用到
# 它）。`<sep>` 标志每个文本的结束。每个词元还有一个**片段索引**，表示它属于哪个文本：`<cls>`、
# A 以及 A 后面的 `<sep>` 是 0；B 以及 B 后面的 `<sep>` 是 1。
#
# 本章区分 **BERT 输入序列**（模型读入的整个序列）和**文本序列**（其中的一个文本，最多有两个）。
# `get_tokens_and_segments(tokens_a, tokens_b=None)` 负责构造 BERT 输入序列：它返回词元及其片段索
# 引，是两个列表。
#
# **动手实现（练习 1）。** 先别看这个函数，在下面的单元格里自己写出
# `tokens_and_segments(tokens_a, tokens_b=None)`：它返回 `<cls>` A `<sep>`（当 `tokens_b` 不是
# None 时为 `<cls>` A `<sep>` B `<sep>`）的词元及其片段索引，以两个列表组成的元组返回。检查单元格会
# 在单个文本、文本对、汉字、只有一个词元的文本以及空的 B 上把它与 `get_tokens_and_segments` 比较，
# 并告诉你哪个测试用例没有通过；需要提示的话，在检查中加上 `hint=1`。


# %% [markdown] lang="ja"
# ## テキスト 1 つか 2 つか
#
# 1 つのテキストを読むタスク（感情分析：このレビューは肯定的か？）もあれば、テキストペアを読むタスク
# （自然言語推論：文 A から文 B が導けるか？）もあります。BERT はどちらにも同じ入力形式を使います。
#
# * テキスト 1 つ：`<cls>` A `<sep>`
# * テキストペア：`<cls>` A `<sep>` B `<sep>`
#
# `<cls>`（classification、分類）は常に先頭に置かれ、その最終的なベクトルが入力全体を要約します
# （ノートブック 05 で使います）。`<sep>` は各テキストの終わりを示します。トークンごとの**セグメント
# インデックス**は、そのトークンがどちらのテキストに属するかを表し、`<cls>`、A、A の後の `<sep>` は
# 0、B と B の後の `<sep>` は 1 です。
#
# 章では、**BERT 入力シーケンス**（モデルが読むシーケンス全体）と**テキストシーケンス**（その中の、
# 最大 2 つあるテキストの 1 つ）を区別しています。`get_tokens_and_segments(tokens_a,
# tokens_b=None)` が BERT 入力シーケンスを作ります。トークンとそのセグメントインデックスを 2
# つのリストとして返します。
#
# **実装してみよう（演習 1）。** この関数を読む前に、下のセルで自分で書いてみてください。
# `tokens_and_segments(tokens_a, tokens_b=None)` は、`<cls>` A `<sep>`（`tokens_b` が None でなけれ
# ば `<cls>` A `<sep>` B `<sep>`）のトークンとそのセグメントインデックスを、2 つのリストのタプルとし
# て返します。チェックは、テキスト 1 つ、ペア、漢字、1 トークンだけのテキスト、空の B について
# `get_tokens_and_segments` と比べ、どのケースで失敗したかを教えてくれます。ヒントが欲しければ、
# チェックに `hint=1` を加えてください。

# %%
def tokens_and_segments(tokens_a, tokens_b=None):
    """Exercise 1. tokens_a, tokens_b: lists of token strings (tokens_b may be None). Returns
    (tokens, segments): the BERT input sequence and one segment id (0 or 1) per token."""
    raise NotImplementedError  # replace this line with your code


check_implementation("02_tokens_and_segments", tokens_and_segments)

# %% [markdown] lang="en"
# Here is `bertlib`'s function:

# %% [markdown] lang="zh"
# 下面是 `bertlib` 中的这个函数：

# %% [markdown] lang="ja"
# これが `bertlib` の関数です。

# %%
show_source(get_tokens_and_segments)

# %% [markdown] lang="en"
# A single sentence: every segment id is 0.

# %% [markdown] lang="zh"
# 单个句子：所有片段索引都是 0。

# %% [markdown] lang="ja"
# 文が 1 つの場合、セグメントインデックスはすべて 0 です。

# %%
tokens, segments = get_tokens_and_segments(["this", "movie", "is", "great"])
print(tokens)
print(segments)

# %% [markdown] lang="en"
# A pair. Read the two rows together: each token sits above its segment id.

# %% [markdown] lang="zh"
# 一对句子。把“词元”和“片段”两行对照着看：每个词元下方就是它的片段索引。

# %% [markdown] lang="ja"
# 文ペアの場合です。「トークン」と「セグメント」の 2 行を見比べてください。各トークンの真下にそのセ
# グメントインデックスがあります。

# %%
tokens_a = ["the", "cat", "sat", "on", "the", "mat"]
tokens_b = ["it", "was", "warm"]
tokens, segments = get_tokens_and_segments(tokens_a, tokens_b)

rows = {tr("position:"): range(len(tokens)), tr("token:"): tokens, tr("segment:"): segments}
print(table(([name, *(f"{x!s:>5}" for x in row)] for name, row in rows.items()), gap=1))

# %% [markdown] lang="en"
# ## From tokens to ids
#
# The model works with integers. A `Vocab` gives every token an id; ids 0–4 are reserved for
# `<pad> <unk> <cls> <sep> <mask>`, the rest follow by frequency. Our toy vocabulary only knows
# the words of this pair. A batch of one sequence of length T has shape `(1, T)`.

# %% [markdown] lang="zh"
# ## 从词元到索引
#
# 模型处理的是整数。`Vocab`（词表）为每个词元分配一个词元索引：0–4 留给
# `<pad> <unk> <cls> <sep> <mask>`，其余的按词频依次排列。我们的玩具词表只认识这对句子里的词。
# 如果一个批量只有一条长度为 T 的序列，它的形状就是 `(1, T)`。

# %% [markdown] lang="ja"
# ## トークンからインデックスへ
#
# モデルが扱うのは整数です。`Vocab`（語彙）は各トークンにトークンインデックスを割り当てます。0〜4
# は `<pad> <unk> <cls> <sep> <mask>` のために予約されていて、残りは出現頻度の順に続きます。ここで作
# る練習用の小さな語彙は、このペアの単語しか知りません。長さ T のシーケンス 1 つだけからなるバッチの
# 形状は `(1, T)` です。

# %%
vocab = Vocab([tokens_a, tokens_b])
token_ids = torch.tensor([vocab[tokens]])  # (1, T)
segment_ids = torch.tensor([segments])  # (1, T)
print("len(vocab) =", len(vocab))
print(token_ids, tuple(token_ids.shape))
print(segment_ids, tuple(segment_ids.shape))

# %% [markdown] lang="en"
# ## WordPiece: any word from a fixed set of pieces
#
# Our toy vocabulary knows only the words of this pair; every other word would be `<unk>`. A
# vocabulary of whole words for real text would need millions of entries and would still miss
# the next new name. BERT uses **WordPiece** instead (30,000 pieces in the English BERT): whole
# words for frequent words, and pieces of words for the rest. A piece that continues a word
# starts with `##`. The small BERT of these notebooks has a WordPiece vocabulary learned from
# its training corpus. Here is what it does with a few words:

# %% [markdown] lang="zh"
# ## WordPiece：用一套固定的子词拼出任意的词
#
# 我们的玩具词表只认识这对句子里的词，其他任何词都会变成 `<unk>`。如果为真实文本建一个整词词表，它
# 需要几百万个词元，而且仍然认不出下一个新出现的名字。BERT 改用 **WordPiece**（英文 BERT 有
# 30,000 个子词）：常见的词整个作为一个词元，其余的词拆成子词。接在词中间的子词以 `##` 开头。本系列
# 笔记本中的小 BERT 有一个从它的训练语料库中学出的 WordPiece 词表。看看它怎样切分下面这几个词：

# %% [markdown] lang="ja"
# ## WordPiece：決まったサブワードの集合でどんな単語も書き表す
#
# 練習用の小さな語彙はこのペアの単語しか知らないので、ほかの単語はすべて `<unk>` になってしまいま
# す。実際のテキストのために単語そのものの語彙を作ると、何百万もの項目が必要になり、それでも次に現れ
# る新しい名前は取りこぼします。そこで BERT は **WordPiece** を使います（英語の BERT では 30,000 個
# のサブワード）。よく出る単語は単語全体を 1 つのトークンとし、それ以外の単語はサブワードに分けま
# す。単語の途中に続くサブワードは `##` で始まります。プロジェクト付属の小さな BERT は、学習に使った
# コーパスから学習した WordPiece の語彙をもっています。いくつかの単語をどう分割するか見てみましょ
# う。

# %%
model, tokenizer = load_small_bert()  # the small pretrained BERT and its WordPiece tokenizer
print("len(tokenizer.vocab) =", len(tokenizer.vocab))
words = ["library", "visited", "unbelievable", "zanzibar", "小明", "咖啡"]
print(table([word, " ".join(tokenizer.tokenize(word))] for word in words))

# %% [markdown] lang="en"
# * A frequent word is one piece (`library`). A rarer one is cut into known pieces:
#   `visit ##ed`. The `##` says that `ed` continues the word before it, so the pieces can be
#   glued back into "visited".
# * "unbelievable" never occurs in the corpus. It is still spelled, from small pieces down to
#   single letters: no word made of known characters is lost.
# * "zanzibar" becomes one `<unk>`. No piece starts with "z" (the corpus never uses the
#   letter), and one gap turns the *whole* word into `<unk>`, not just the "z".
# * BERT's tokenizer puts spaces around every Chinese character, so each character is a word of
#   its own: 小明 → 小 明. Neither character of 咖啡 occurs in the corpus: two `<unk>`.
#
# ### Greedy longest match
#
# The tokenizer cuts a word from left to right. At each point it takes the **longest** piece of
# the vocabulary that fits there (with `##` in front, except at the start of the word) and goes
# on after it. It never goes back to try another cut. The first step for "visited": shorten the
# word from the right until what is left is a piece.

# %% [markdown] lang="zh"
# * 常见的词是一个子词（`library`）。不常见的词被切成词表中已有的子词：`visit ##ed`。`##` 表示
#   `ed` 接在前一个子词后面，所以这些子词可以重新拼回“visited”。
# * “unbelievable”在语料库中从没出现过，但它仍然能被拼出来，用的是一些小的子词，小到单个字母：只要一
#   个词的每个字符都认识，这个词就不会丢。
# * “zanzibar”变成了一个 `<unk>`。没有任何子词以“z”开头（语料库里从不用这个字母），而只要有一处切不
#   下去，**整个**词就都变成 `<unk>`，而不只是“z”。
# * BERT 的分词器在每个汉字两边加上空格，所以每个汉字自成一个词：小明 → 小 明。“咖啡”的两个字都没在
#   语料库中出现过：得到两个 `<unk>`。
#
# ### 贪心最长匹配
#
# 分词器从左到右切分一个词。在每个位置，它取词表中能匹配的**最长**子词（不在词首时前面要加
# `##`），再从这个子词之后接着切。它从不回头尝试另一种切法。以“visited”为例，第一步是：从右边
# 一个字母一个字母地缩短这个词，直到剩下的部分是词表中的一个子词。

# %% [markdown] lang="ja"
# * よく出る単語は 1 つのサブワードです（`library`）。あまり出ない単語は、既知のサブワードに分割され
#   ます：`visit ##ed`。`##` は `ed` が前の部分に続くことを示すので、サブワードをつなぎ直すと
#   「visited」に戻せます。
# * 「unbelievable」はコーパスに一度も出てきません。それでも、1 文字にいたるまでの小さなサブワードで
#   書き表せます。既知の文字だけでできた単語が失われることはありません。
# * 「zanzibar」は 1 つの `<unk>` になります。「z」で始まるサブワードがなく（コーパスはこの文字を一
#   度も使いません）、1 か所でも分割できないと、「z」だけでなく単語**全体**が `<unk>` になるのです。
# * BERT のトークナイザは漢字の 1 字 1 字の両側に空白を入れるので、どの漢字も 1 字で 1 単語になりま
#   す：小明 → 小 明。咖啡（コーヒー）の 2 字はどちらもコーパスに出てこないので、`<unk>` が 2 つにな
#   ります。日本語の文でも漢字は同じように 1 字ずつに分かれますが、かなはこの扱いを受けず、空白のな
#   い日本語では、かなの連なりがそのまま 1 つの「単語」として扱われます。
#
# ### 貪欲な最長一致
#
# トークナイザは単語を左から右へ切っていきます。各位置で、そこに当てはまる語彙の中で**最も長い**サブ
# ワード（単語の先頭以外では前に `##` を付けたもの）を取り、その後ろから続けます。別の切り方を試すた
# めに戻ることはありません。「visited」の最初の一歩は、残りがサブワードになるまで単語を右から 1 文字
# ずつ短くしていくことです。

# %%
word = "visited"
pieces = set(tokenizer.vocab.idx_to_token)
for end in range(len(word), 0, -1):
    print(f"{word[:end]:<8}", "✓" if word[:end] in pieces else "×")
    if word[:end] in pieces:
        break

# %% [markdown] lang="en"
# The rest, `ed`, is looked up as `##ed`, and the word is done. Exercise 5 asks you to write the
# whole loop, `<unk>` included.
#
# ### How the vocabulary is learned
#
# Where do the pieces come from? Training starts from every character of the training text, once
# as a word start (`v`) and once as a continuation (`##v`). Then it repeats one step: count how
# often each two neighbouring pieces occur together in the words of the corpus, and add the most
# frequent pair as a new piece. It stops at `vocab_size` pieces, or when no pair occurs at least
# `min_frequency` (2) times. The `tokenizers` library, which `WordPieceTokenizer.train` calls,
# picks pairs by frequency, as byte-pair encoding does. Google's original WordPiece picks the
# pair that raises the likelihood of the training data most; the Hugging Face course scores a
# pair by its count divided by the counts of its two parts. Either way, words are then cut by
# greedy longest match.
#
# We learn vocabularies of several sizes from the paragraphs the small BERT was trained on, and
# count the tokens of the held-out English paragraphs with each. The small BERT's recipe asked for
# 4000 pieces.

# %% [markdown] lang="zh"
# 剩下的 `ed` 以 `##ed` 的形式去查，这个词就切完了。练习 5 请你写出完整的循环，包括 `<unk>` 的情形。
#
# ### 词表是怎样学出来的
#
# 这些子词从哪里来？训练从训练文本中的每个字符开始，每个字符有两种形式：词首的（`v`）和接在词中间的
# （`##v`）。然后反复做同一步：统计语料库的词里每两个相邻子词一起出现的次数，把出现最多的一对合并
# 成一个新的子词加入词表。词表达到 `vocab_size` 个子词，或者再没有哪一对出现至少 `min_frequency`
# （2）次时，训练就停止。`WordPieceTokenizer.train` 调用的 `tokenizers` 库按出现次数挑选子词对，和
# 字节对编码（BPE）一样；谷歌最初的 WordPiece 则挑选最能提高训练数据似然的那一对，Hugging Face 课程
# 给一对子词打的分是它的出现次数除以两个部分各自的出现次数。无论哪种方法，学好词表之后都用贪心最长
# 匹配来切词。
#
# 我们在小 BERT 的训练段落上学出几个不同大小的词表，再分别统计留出的英文段落被切成多少个词元。
# 小 BERT 的训练配置要求的是 4000 个子词。

# %% [markdown] lang="ja"
# 残りの `ed` は `##ed` として引かれ、これで単語の分割は終わりです。演習 5 では、`<unk>` の場合も含
# めたループ全体を書きます。
#
# ### 語彙はどのように学習されるか
#
# サブワードはどこから来るのでしょうか。学習は、学習用テキストに現れるすべての文字から始まります。各
# 文字は単語の先頭の形（`v`）と続きの形（`##v`）の 2 通りで語彙に入ります。そのうえで、同じ手順を繰
# り返します。コーパスの単語の中で、隣り合う 2 つのサブワードが一緒に現れる回数を数え、最も多い組を
# 新しいサブワードとして加えるのです。サブワードが `vocab_size` 個に達するか、`min_frequency`（2）回
# 以上現れる組がなくなったところで止まります。`WordPieceTokenizer.train` が呼び出す `tokenizers` ラ
# イブラリは、バイト対符号化（BPE）と同じく出現回数で組を選びます。Google のオリジナルの WordPiece
# は学習データの尤度を最も大きくする組を選び、Hugging Face のコースでは、組の出現回数をその 2 つの部
# 分それぞれの出現回数で割った値で組を評価します。いずれの方法でも、語彙ができた後の単語の分割は貪欲
# な最長一致です。
#
# 付属モデルの学習に使った段落から大きさの異なる語彙をいくつか学習し、それぞれで、ホールドアウトの英
# 語の段落のトークン数を数えます。付属モデルの学習設定で指定したのは 4000 個のサブワードでした。

# %%
split = load_small_corpus()  # the stories of the small BERT, 10% of the paragraphs held out
sentences = [s for paragraph in split.train for s in paragraph]
english = [p for p, lang in zip(split.held_out, split.held_out_langs, strict=True) if lang == "en"]
held_out = [s for paragraph in english for s in paragraph]

rows = [[tr("vocab_size asked"), tr("pieces learned"), tr("tokens per held-out sentence"),
         "visited"]]
for size in (700, 900, 1400, 4000):
    learned = WordPieceTokenizer.train(sentences, vocab_size=size)
    count = sum(len(learned.tokenize(s)) for s in held_out)
    rows.append([size, len(learned), f"{count / len(held_out):.1f}",
                 " ".join(learned.tokenize("visited"))])
print(table(rows))
same = learned.vocab.idx_to_token == tokenizer.vocab.idx_to_token
print(tr("4000 gives the small BERT's vocabulary, piece for piece.") if same
      else tr("4000 gives a vocabulary other than the small BERT's."))
reserved = learned.vocab.specials.as_list()  # <pad> <unk> <cls> <sep> <mask>
merged = [t for t in learned.vocab.idx_to_token if len(t.removeprefix("##")) > 1
          and t not in reserved]  # in the order they were learned
print(tr("the first pieces learned after the single characters:"), merged[:12])

# %% [markdown] lang="en"
# * With 700 pieces the vocabulary is little more than the characters, and a held-out sentence
#   costs about three times as many tokens as with the full vocabulary. Each merge makes some
#   frequent word shorter.
# * Asked for 4000, training stops at 1,927 pieces: after that no pair occurs twice in the
#   corpus. Training is deterministic, so it gives back the small BERT's vocabulary piece for
#   piece.
# * The first merges are the most frequent pairs of English: `##he`, then `the`, `##er`, `##on`.
#   The Chinese characters never merge: every one is a word of its own.
# * A short sequence matters: attention costs grow with the square of the number of tokens, and
#   `max_len` caps how much text fits.

# %% [markdown] lang="zh"
# * 只有 700 个子词时，词表比单个字符多不了多少，一个留出句子所需的词元数约为完整词表时的三倍。每
#   合并一次，就有某个常见的词变短一些。
# * 要求 4000 个子词时，训练在 1,927 个子词处停了下来：此后语料库中再没有出现过两次的子词对。训练是
#   确定性的，所以得到的词表与小 BERT 的词表逐个子词完全相同。
# * 最先合并出来的是英文中最常见的字母对：`##he`，然后是 `the`、`##er`、`##on`。汉字从不合并：每个
#   汉字都自成一个词。
# * 序列短是有好处的：注意力的计算量随词元数的平方增长，而 `max_len` 限制了能放进去的文本长度。

# %% [markdown] lang="ja"
# * サブワードが 700 個では語彙は文字とほとんど変わらず、ホールドアウトの文 1 つに必要なトークンは、
#   完全な語彙のときの約 3 倍になります。組を 1 つ併合するたびに、よく出る単語のどれかが短くなりま
#   す。
# * 4000 個を指定しても、学習は 1,927 個で止まります。それ以上は、コーパスの中で 2 回現れる組がない
#   からです。学習は決定的なので、付属モデルの語彙がサブワード 1 つ 1 つまでそのまま得られます。
# * 最初に併合されるのは英語で最もよく出る組です：`##he`、続いて `the`、`##er`、`##on`。漢字は決して
#   併合されず、1 字 1 字がそれぞれ 1 単語です。
# * シーケンスが短いことには意味があります。アテンションの計算量はトークン数の 2 乗で増え、
#   `max_len` が入れられるテキストの長さの上限を決めるからです。

# %% [markdown] lang="en"
# ## Three embeddings, one sum
#
# `BERTEncoder` holds three learnable tables, each row a vector of size `num_hiddens` (H):
#
# | table | rows | looked up by |
# | --- | --- | --- |
# | token embedding | one per vocabulary entry | token id |
# | segment embedding | 2 (A and B) | segment id |
# | position embedding | `max_len` | position 0, 1, 2, … |
#
# The input representation of a token is the **sum** of its three rows. The constructor of
# `BERTEncoder` creates the three tables, then the stack of encoder blocks that notebook 03
# follows. The position table is a plain `nn.Parameter` of shape `(1, max_len, H)`, as in the
# chapter: it is never looked up by id, only sliced, its first T rows for T tokens. The original
# BERT's options add a LayerNorm and dropout after the sum:

# %% [markdown] lang="zh"
# ## 三种嵌入相加
#
# `BERTEncoder` 里有三张可学习的表，每一行是一个长度为 `num_hiddens`（H）的向量：
#
# | 表 | 行数 | 按什么查 |
# | --- | --- | --- |
# | 词元嵌入 | 词表中每个词元一行 | 词元索引 |
# | 片段嵌入 | 2（A 和 B） | 片段索引 |
# | 位置嵌入 | `max_len` | 位置 0、1、2、… |
#
# 一个词元的输入表示就是这三行的**和**。`BERTEncoder` 的构造函数先创建这三张表，再创建笔记本 03 将逐
# 个跟踪的各个编码器块。与本章一样，位置表是一个形状为 `(1, max_len, H)` 的普通 `nn.Parameter`：
# 它从不按索引查表，只做切片，T 个词元就取它的前 T 行。如果打开原始 BERT 的选项，求和之后还会加上层
# 规范化和 dropout（暂退法）：

# %% [markdown] lang="ja"
# ## 3 つの埋め込み、1 つの和
#
# `BERTEncoder` は学習可能な 3 つの表をもち、その各行は大きさ `num_hiddens`（H）のベクトルです。
#
# | 表 | 行数 | 何で引くか |
# | --- | --- | --- |
# | トークン埋め込み | 語彙の項目ごとに 1 行 | トークンインデックス |
# | セグメント埋め込み | 2（A と B） | セグメントインデックス |
# | 位置埋め込み | `max_len` | 位置 0、1、2、… |
#
# トークンの入力表現は、この 3 つの行の**和**です。`BERTEncoder` のコンストラクタは 3 つの表を作り、
# 続いてノートブック 03 でたどるエンコーダブロックの積み重ねを作ります。位置の表は章と同じく形状
# `(1, max_len, H)` のただの `nn.Parameter` で、インデックスで引かれることはなく、スライスされるだけ
# です。T 個のトークンには最初の T 行を使います。オリジナルの BERT のオプションを有効にすると、和の
# 後に層正規化（LayerNorm）とドロップアウトが加わります。

# %%
show_source(BERTEncoder.__init__)

# %% [markdown] lang="en"
# We use a tiny encoder (H = 6) so that whole vectors fit on screen; the sizes do not change the
# idea.

# %% [markdown] lang="zh"
# 我们用一个很小的编码器（H = 6），好让整个向量能显示在屏幕上；尺寸大小不影响原理。

# %% [markdown] lang="ja"
# ベクトル全体が画面に収まるように、とても小さなエンコーダ（H = 6）を使います。大きさが変わっても考
# え方は同じです。

# %%
torch.manual_seed(0)
encoder = BERTEncoder(vocab_size=len(vocab), num_hiddens=6, ffn_num_hiddens=12, num_heads=2,
                      num_blks=1, dropout=0.0, max_len=16)

print(table([[tr("token embedding"), tuple(encoder.token_embedding.weight.shape)],  # (V, H)
             [tr("segment embedding"), tuple(encoder.segment_embedding.weight.shape)],  # (2, H)
             [tr("position embedding"), tuple(encoder.pos_embedding.shape)]]))  # (1, max_len, H)

# %% [markdown] lang="en"
# Now the sum by hand. Indexing a table with a tensor of ids picks one row per id, so a `(1, T)`
# tensor of ids gives a `(1, T, H)` tensor of vectors. The position table already has a batch
# axis of size 1; slicing its first T rows and adding broadcasts it over the batch.

# %% [markdown] lang="zh"
# 现在亲手求和。拿索引张量去查表，每个索引取出一行，所以形状为 `(1, T)` 的索引张量查出来的是形状
# 为 `(1, T, H)` 的向量张量。位置表本身已经带有大小为 1 的批量维度；取出它的前 T 行相加时，
# 会沿批量维度广播。

# %% [markdown] lang="ja"
# では、自分の手で和を計算しましょう。インデックスのテンソルで表を引くと、インデックスごとに 1 行が
# 取り出されます。つまり形状 `(1, T)` のインデックスからは形状 `(1, T, H)` のベクトルが得られます。
# 位置の表はもともと大きさ 1 のバッチの軸をもっているので、最初の T 行をスライスして足すと、バッチ全
# 体にブロードキャストされます。

# %%
T = token_ids.shape[1]
tok = encoder.token_embedding.weight[token_ids]  # (1, T, H)
seg = encoder.segment_embedding.weight[segment_ids]  # (1, T, H)
pos = encoder.pos_embedding[:, :T, :]  # (1, T, H)
by_hand = tok + seg + pos  # (1, T, H)

X = encoder.embed(token_ids, segment_ids)  # what the encoder computes
print(tuple(by_hand.shape), tuple(X.shape))
print("torch.allclose(by_hand, X):", torch.allclose(by_hand, X))

# %% [markdown] lang="en"
# `BERTEncoder.embed` is that sum in code: the token and segment tables are `nn.Embedding`
# layers (a lookup by id, as above), the position table is sliced to the first T rows.

# %% [markdown] lang="zh"
# `BERTEncoder.embed` 就是用代码写出的这个求和：词元表和片段表是 `nn.Embedding` 层（和上面一样，
# 按索引查表），位置表则取前 T 行。

# %% [markdown] lang="ja"
# `BERTEncoder.embed` は、この和をコードにしたものです。トークンとセグメントの表は `nn.Embedding` 層
# （上と同じくインデックスで引く）で、位置の表は最初の T 行にスライスされます。

# %%
show_source(BERTEncoder.embed)

# %% [markdown] lang="en"
# ## What each part contributes
#
# "the" appears twice in A (positions 1 and 5). Its token embedding is the same both times, yet
# its input vectors differ, and the difference is exactly the difference of the two position
# rows. Without position embeddings, self-attention could not tell the two apart: it treats its
# input as a *set*.

# %% [markdown] lang="zh"
# ## 每一部分的作用
#
# “the”在 A 中出现了两次（位置 1 和 5）。两次的词元嵌入相同，但输入向量不同，而差值恰好等于两行
# 位置嵌入之差。如果没有位置嵌入，自注意力就无法区分这两个“the”：它把输入当作一个**集合**。

# %% [markdown] lang="ja"
# ## 各部分の役割
#
# 「the」は A に 2 回現れます（位置 1 と 5）。トークン埋め込みはどちらも同じなのに入力ベクトルは異な
# り、その差はちょうど 2 つの位置の行の差です。位置埋め込みがなければ、自己注意はこの 2 つを区別でき
# ません。自己注意は入力を**集合**として扱うからです。

# %%
first, second = 1, 5
print(tokens[first], tokens[second])
print("tok[1] == tok[5]:", torch.equal(tok[0, first], tok[0, second]))
print("X[1]   == X[5]:  ", torch.equal(X[0, first], X[0, second]))
print("X[1] - X[5] == pos[1] - pos[5]:",
      torch.allclose(X[0, first] - X[0, second], pos[0, first] - pos[0, second]))
print(X[0, [first, second]].detach().numpy().round(2))  # the two input vectors of "the"

# %% [markdown] lang="en"
# The segment embedding plays the same role across texts: the same word in A and in B differs by
# $\mathbf{e}_B - \mathbf{e}_A$ (plus the position difference). For a single text only
# $\mathbf{e}_A$ is ever used.
#
# ## Try it: the input representation of a trained BERT
#
# The widget below does all of the above for any text you type, with the small BERT pretrained
# for these notebooks (notebook 06 trains it on a small corpus of English and Chinese paragraphs;
# H = 128, `max_len` = 64). The table gives each token's position and segment id, coloured by
# segment. The four heatmaps have one row per token and one column per hidden dimension: the
# token, segment and position embeddings, and their sum, on one colour scale.
#
# Things to try:
#
# * Look at the segment panel: it has only two different rows, one for A and one for B. Now
#   delete sentence B: every segment id becomes 0.
# * Find a token that occurs twice (in the default pair, the full stop "." that ends each
#   sentence). Its two rows are the same in the token panel but not in the sum.
# * Type a long word such as "unbelievable": every piece takes a position of its own, so one
#   word can use up several of the 64 position rows.
# * Paste a long text: the input is cut to `max_len` = 64 tokens, since there are no more
#   position rows.

# %% [markdown] lang="zh"
# 片段嵌入则在两个文本之间起同样的作用：同一个词出现在 A 中和出现在 B 中，输入向量相差
# $\mathbf{e}_B - \mathbf{e}_A$（再加上位置之差）。单个文本只会用到 $\mathbf{e}_A$。
#
# ## 动手试试：训练好的 BERT 的输入表示
#
# 下面的小部件对你输入的任意文本完成上面的全部步骤，用的是项目自带的小 BERT（笔记本 06 用一个中英文
# 段落组成的小语料库训练它；H = 128，`max_len` = 64）。表格给出每个词元的位置和片段索引，并按片段着
# 色。四张热图的每一行对应一个词元，每一列对应一个隐藏维度，依次是词元嵌入、片段嵌入、位置嵌入以及三
# 者之和，共用同一个颜色刻度。
#
# 可以试试：
#
# * 看片段嵌入那张图：它只有两种不同的行，A 一种、B 一种。再把句子 B 删掉：所有片段索引都变成 0。
# * 找一个出现两次的词元（在默认的句子对中，“小”出现在“小明”和“从小”里，“球”出现在“篮球”和
#   “球队”里）。在词元嵌入图中，它的两行完全相同；在求和图中却不同。
# * 输入一个很长的词，比如“unbelievable”：每个子词都占一个位置，所以一个词可能用掉 64 行位置嵌入中
#   的好几行。
# * 粘贴一段很长的文本：输入会被截断为 `max_len` = 64 个词元，因为位置嵌入表没有更多的行了。

# %% [markdown] lang="ja"
# セグメント埋め込みは、2 つのテキストの間で同じ役割を果たします。同じ単語が A にあるときと B にある
# ときとでは、入力ベクトルが $\mathbf{e}_B - \mathbf{e}_A$（に位置の差を加えたもの）だけ異なります。
# テキストが 1 つなら、使われるのは $\mathbf{e}_A$ だけです。
#
# ## 試してみよう：学習済みの BERT の入力表現
#
# 下のウィジェットは、入力した任意のテキストについて、ここまでのことをすべて行います。使うのは、付属
# モデルです（ノートブック 06 で英語と中国語の段落からなる小さなコーパスを使って学習します。H =
# 128、`max_len` = 64）。表には各トークンの位置とセグメントインデックスがセグメントごとに色分けして
# 示されます。4 つのヒートマップは、行がトークン、列が隠れ次元に対応し、トークン埋め込み、セグメント
# 埋め込み、位置埋め込み、そしてそれらの和を、共通のカラースケールで描いています。
#
# このモデルは英語と中国語しか知らないので、日本語版でもウィジェットは英語の文ペアから始まります。
#
# 試してみること：
#
# * セグメント埋め込みの図を見てください。異なる行は 2 種類しかありません。A の行と B の行です。次に
#   文 B を消してみましょう。セグメントインデックスはすべて 0 になります。
# * 2 回現れるトークンを探してください（既定の文ペアでは、各文を終えるピリオド「.」）。トークン埋め
#   込みの図ではその 2 行は同じですが、和の図では違います。
# * 「unbelievable」のような長い単語を入力してみましょう。サブワードごとに位置を 1 つ使うので、1 つ
#   の単語が 64 行ある位置埋め込みのうち何行も使うことがあります。
# * 長いテキストを貼り付けてみましょう。位置埋め込みの表にそれ以上の行はないので、入力は `max_len`
#   = 64 トークンに切り詰められます。
# * 日本語の文（たとえば「私は図書館で本を読みました。」）を入力してみましょう。このモデルは日本語で
#   学習していないので、かなは `<unk>` になります。漢字も、中国語の文に出てくる字形しか知りませ
#   ん。「本」は見つかりますが、「図」「書」「館」は中国語ではそれぞれ「图」「书」「馆」と書くので、
#   これらも `<unk>` になります。

# %%
InputRepresentationWidget(model, tokenizer)

# %% [markdown] lang="en"
# ## Why learnable positions?
#
# The original Transformer adds fixed sinusoids for positions. BERT instead learns one vector per
# position, like a word embedding for "position 7". That is simpler and lets the data decide
# what position information is useful. The price: the table has `max_len` rows (1000 in the
# chapter, 512 in the original BERT), and a longer input has no position vector at all.
# `bertlib` says so instead of failing deep inside PyTorch:

# %% [markdown] lang="zh"
# ## 为什么使用可学习的位置嵌入？
#
# 原始的 Transformer 用固定的正弦函数表示位置。BERT 则为每个位置学习一个向量，就像给“位置 7”
# 学一个词嵌入。这样更简单，也让数据自己决定哪些位置信息有用。代价是：这张表只有 `max_len` 行
# （本章是 1000，原始 BERT 是 512），更长的输入根本没有对应的位置向量。`bertlib` 会直接说明这一点，
# 而不是在 PyTorch 深处报一个难懂的错：

# %% [markdown] lang="ja"
# ## 位置はなぜ学習するのか
#
# オリジナルの Transformer は、位置を表すのに固定した正弦波による位置エンコーディングを加えます。
# BERT は代わりに、「位置 7」の単語埋め込みのように、位置ごとに 1 つのベクトルを学習します。このほう
# が単純で、どのような位置の情報が役に立つかをデータに決めさせることができます。代償として、表の行数
# は `max_len`（章では 1000、オリジナルの BERT では 512）で、それより長い入力には位置ベクトルがまっ
# たくありません。`bertlib` は PyTorch の奥深くで失敗する代わりに、そのことをはっきり伝えます。

# %%
too_long = torch.zeros((1, 17), dtype=torch.long)  # 17 positions; this encoder has max_len=16
try:
    encoder(too_long, too_long)
except ValueError as err:
    print(error_message(err))  # the message in the edition's language

# %% [markdown] lang="en"
# ## The chapter's sizes
#
# With the chapter's demo sizes (vocabulary 10000, H = 768) and a batch of 2 sequences of
# length 8, the input representation has shape `(batch, sequence length, num_hiddens)`. Every
# encoder block keeps that shape (notebook 03).

# %% [markdown] lang="zh"
# ## 本章的尺寸
#
# 使用本章演示用的尺寸（词表大小 10000，H = 768），输入 2 条长度为 8 的序列，输入表示的形状是
# `(批量大小, 序列长度, num_hiddens)`。每个编码器块都保持这个形状不变（见笔记本 03）。

# %% [markdown] lang="ja"
# ## 章での大きさ
#
# 章のデモの大きさ（語彙サイズ 10000、H = 768）で、長さ 8 のシーケンス 2 つのバッチを入れると、入力
# 表現の形状は `(バッチサイズ, シーケンス長, num_hiddens)` になります。どのエンコーダブロックもこの
# 形状を保ちます（ノートブック 03）。

# %%
torch.manual_seed(0)
big = BERTEncoder(vocab_size=10000, num_hiddens=768, ffn_num_hiddens=1024, num_heads=4,
                  num_blks=2, dropout=0.2)
batch_tokens = torch.randint(0, 10000, (2, 8))  # (B, T)
batch_segments = torch.tensor([[0, 0, 0, 0, 1, 1, 1, 1],
                               [0, 0, 0, 1, 1, 1, 1, 1]])  # (B, T)
print(tuple(big.embed(batch_tokens, batch_segments).shape))  # (B, T, H)

# %% [markdown] lang="en"
# ## Summary
#
# * A BERT input sequence is `<cls>` A `<sep>` or `<cls>` A `<sep>` B `<sep>`; segment ids
#   (0 / 1) say which text each token belongs to.
# * WordPiece spells any word of known characters with a fixed vocabulary of pieces, by greedy
#   longest match; `##` marks a piece inside a word, and a word with no fitting piece is `<unk>`.
#   The vocabulary is learned by merging the most frequent pairs of pieces.
# * The input representation is token embedding + segment embedding + position embedding, a
#   `(B, T, H)` tensor.
# * Position embeddings are learned, one row per position up to `max_len`.
#
# ## Exercises
#
# 1. ★★ **Implement it: the BERT input sequence.** `tokens_and_segments(tokens_a,
#    tokens_b=None)`, in "One text or two", in the cell before the listing of
#    `get_tokens_and_segments` (the listing gives the answer away, so write yours first).
# 2. ★ Why does a single text still end with `<sep>`? And why is `<cls>` placed first rather
#    than last? (Think of sequences of different lengths in one padded batch.)
# 3. ★★ Imagine the learned positions replaced by the Transformer's fixed sinusoids. What would
#    the model no longer have to learn, and what could it gain for inputs longer than any it saw
#    in training?
# 4. ★★ Suppose the segment embedding were removed. Could the model still tell, in a pair, which
#    tokens belong to A and which to B? What else in the input marks where A ends?
# 5. ★★ **Implement it: WordPiece on one word.** Write `wordpiece(word, pieces)`: `pieces` is a
#    set of vocabulary pieces, `word` one lower-case word (or one Chinese character); it returns
#    the word's pieces by greedy longest match, or `["<unk>"]`. The check compares it with
#    `bertlib`'s tokenizer on words over the small BERT's vocabulary, Chinese characters, a word
#    with no known piece and three small made-up vocabularies, and refuses a function that lets
#    the tokenizer do the work.

# %% [markdown] lang="zh"
# ## 小结
#
# * BERT 输入序列是 `<cls>` A `<sep>` 或 `<cls>` A `<sep>` B `<sep>`；片段索引（0 / 1）表示每个
#   词元属于哪个文本。
# * WordPiece 用贪心最长匹配，以一个固定的子词表拼出由已知字符组成的任何词；`##` 标出词中间的子词，
#   找不到匹配子词的词成为 `<unk>`。词表是通过反复合并最常出现的子词对学出来的。
# * 输入表示 = 词元嵌入 + 片段嵌入 + 位置嵌入，是一个形状为 `(B, T, H)` 的张量。
# * 位置嵌入是可学习的，每个位置一行，最多 `max_len` 行。
#
# ## 练习
#
# 1. ★★ **动手实现：BERT 输入序列。** 即“单个文本还是文本对”一节中、`get_tokens_and_segments`
#    源代码之前那个单元格里的 `tokens_and_segments(tokens_a, tokens_b=None)`（源代码会泄露答案，
#    所以要先写出你自己的版本）。
# 2. ★ 为什么单个文本的末尾也要加 `<sep>`？为什么 `<cls>` 放在最前面而不是最后面？（想一想：
#    在填充后的同一个批量里，各个序列的长度并不相同。）
# 3. ★★ 设想把可学习的位置嵌入换成 Transformer 固定的正弦位置编码：模型不再需要学习什么？对于比
#    训练中见过的都长的输入，又可能得到什么好处？
# 4. ★★ 假设去掉片段嵌入。在一个文本对中，模型还能分清哪些词元属于 A、哪些属于 B 吗？输入中还有
#    什么标出了 A 在哪里结束？
# 5. ★★ **动手实现：一个词的 WordPiece 切分。** 写出 `wordpiece(word, pieces)`：`pieces` 是词表中
#    子词的集合，`word` 是一个小写的词（或一个汉字）；它用贪心最长匹配返回这个词的子词，或者返回
#    `["<unk>"]`。检查单元格会把它与 `bertlib` 的分词器对照，用到小 BERT 词表上的词、汉字、一个没有
#    任何已知子词的词以及三个自己编的小词表；如果函数让分词器替你干活，检查会拒绝它。

# %% [markdown] lang="ja"
# ## まとめ
#
# * BERT 入力シーケンスは `<cls>` A `<sep>` または `<cls>` A `<sep>` B `<sep>` で、セグメントイン
#   デックス（0 / 1）が各トークンの属するテキストを表します。
# * WordPiece は、決まったサブワードの語彙を使い、貪欲な最長一致によって、既知の文字でできたどんな単
#   語でも書き表します。`##` は単語の途中のサブワードの印で、当てはまるサブワードのない単語は
#   `<unk>` になります。語彙は、最もよく現れるサブワードの組を併合していくことで学習されます。
# * 入力表現はトークン埋め込み + セグメント埋め込み + 位置埋め込みで、形状 `(B, T, H)` のテンソルで
#   す。
# * 位置埋め込みは学習され、`max_len` まで位置ごとに 1 行あります。
#
# ## 演習
#
# 1. ★★ **実装してみよう：BERT 入力シーケンス。** 「テキスト 1 つか 2 つか」の節で、
#    `get_tokens_and_segments` のソースコードの前のセルにある `tokens_and_segments(tokens_a,
#    tokens_b=None)` です（ソースコードを見ると答えがわかってしまうので、先に自分のものを書いてくだ
#    さい）。
# 2. ★ テキストが 1 つでも、最後に `<sep>` を付けるのはなぜでしょうか。また、`<cls>` を最後ではなく
#    最初に置くのはなぜでしょうか。（パディングした 1 つのバッチに、長さの異なるシーケンスが入ってい
#    る場合を考えてください。）
# 3. ★★ 学習する位置埋め込みを、Transformer の固定した正弦波による位置エンコーディングに置き換えたと
#    しましょう。モデルは何を学習しなくてよくなるでしょうか。学習中に見たどの入力よりも長い入力に対
#    しては、何が得られる可能性があるでしょうか。
# 4. ★★ セグメント埋め込みを取り除いたとします。ペアの中で、どのトークンが A に、どのトークンが B に
#    属するかを、モデルはまだ見分けられるでしょうか。入力の中で、ほかに A の終わりを示しているものは
#    何でしょうか。
# 5. ★★ **実装してみよう：1 つの単語の WordPiece。** `wordpiece(word, pieces)` を書いてください。
#    `pieces` は語彙のサブワードの集合、`word` は小文字の単語 1 つ（または漢字 1 字）で、貪欲な最長
#    一致による単語のサブワードのリスト、または `["<unk>"]` を返します。チェックは、付属モデルの語彙
#    での単語、漢字、既知のサブワードが 1 つもない単語、自作の小さな語彙 3 つについて `bertlib` の
#    トークナイザと比べます。トークナイザに仕事を任せた関数は合格になりません。

# %%
def wordpiece(word, pieces):
    """Exercise 5. word: one lower-case word or one Chinese character; pieces: a set of
    vocabulary pieces ("visit", "##ed", ...). Returns the list of the word's pieces, or
    ["<unk>"] when no piece fits somewhere in the word."""
    raise NotImplementedError  # replace this line with your code


check_implementation("02_wordpiece", wordpiece)

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 2: Where the special tokens go</summary>
#
# * A single text ends with `<sep>` so that every text the model reads, alone or in a pair, has the
#   same form: its tokens, then `<sep>`. In pretraining every input is a pair, so every A the model
#   has seen ended with `<sep>`; a single text at fine-tuning time then looks like the first half of
#   what it knows.
# * `<cls>` goes first because the sequences of a padded batch have different lengths: the last real
#   token sits at another index in every row (`valid_lens - 1`), with `<pad>` after it. At the
#   front, `<cls>` is at index 0 in every sequence, so the NSP head or a classifier reads it with
#   one slice, `X[:, 0, :]`, without `valid_lens`, and it always gets the same position embedding.
#
# </details>
#
# <details><summary>Exercise 3: Fixed sinusoids instead of learned positions</summary>
#
# * What the model no longer learns: the position table, one row of H numbers per position up to
#   `max_len`. Nothing has to see every position often enough to learn its row, either: the late
#   positions, which only long inputs reach, get few updates in training.
# * What it could gain: a learned table has no row past `max_len`, so a longer input cannot even be
#   embedded (bertlib refuses it). A sinusoid is defined at every position, and the encoding of
#   position p + k is a fixed rotation of that of p, so attention could read the same relative
#   offsets at new positions. The model would at least run on longer inputs; doing well there is not
#   guaranteed, since it never trained on those positions.
#
# </details>
#
# <details><summary>Exercise 4: Without the segment embedding</summary>
#
# In principle, yes. The first `<sep>` marks where A ends, and the position embedding tells each
# token where it stands, so attention can work out whether a token comes after the first `<sep>`: a
# head that attends to the `<sep>` tokens and compares their positions with its own would do.
#
# But the model would have to compute this in its blocks instead of getting it at the input: in the
# first block no token yet knows its side, and heads spent on finding the boundary do nothing else.
# The segment embedding gives the answer exactly, for two rows of H numbers.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 请先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 2：特殊词元的位置</summary>
#
# * 单个文本的末尾也加 `<sep>`，是为了让模型读到的每个文本——无论单独出现还是在文本对中——都是同一个样
#   子：先是它的词元，然后是 `<sep>`。预训练时每个输入都是文本对，模型见过的每个 A 后面都跟着
#   `<sep>`；微调时输入单个文本，看起来就和它熟悉的文本对的前半部分一样。
# * `<cls>` 放在最前面，是因为填充后的批量中各个序列长短不一：最后一个真实词元在每一行中的下标都不同
#   （`valid_lens - 1`），后面还跟着 `<pad>`。放在最前面，`<cls>` 在每个序列中都位于下标 0，下一句预
#   测的输出层或分类器用一个切片 `X[:, 0, :]` 就能取出它，不需要 `valid_lens`；而且它总是得到同一个
#   位置嵌入。
#
# </details>
#
# <details><summary>练习 3：用固定的正弦位置编码代替可学习的位置嵌入</summary>
#
# * 模型不再需要学习的：位置嵌入表，即每个位置（直到 `max_len`）一行、每行 H 个数。也不再需要让每个
#   位置都足够频繁地出现，才能学好它那一行：靠后的位置只有长输入才会用到，训练中很少得到更新。
# * 可能得到的好处：可学习的位置嵌入表在 `max_len` 之后没有任何一行，所以更长的输入根本无法嵌入
#   （bertlib 会拒绝它）。正弦位置编码在每个位置上都有定义，而且位置 p + k 的编码是位置 p 的编码经过
#   一个固定的旋转得到的，所以注意力在新的位置上也可能读出同样的相对偏移。模型至少能在更长的输入上运
#   行；但它从没在这些位置上训练过，效果好不好并没有保证。
#
# </details>
#
# <details><summary>练习 4：去掉片段嵌入</summary>
#
# 原则上可以。第一个 `<sep>` 标出了 A 在哪里结束，位置嵌入又告诉每个词元它在哪里，所以注意力可以算出
# 一个词元是否在第一个 `<sep>` 之后：比如一个头关注各个 `<sep>`，再把它们的位置和自己的位置比较。
#
# 但这样一来，模型就得在编码器块里把这件事算出来，而不是在输入中直接得到：在第一个编码器块中，还没有
# 哪个词元知道自己属于哪一侧；用来寻找边界的头也就干不了别的。片段嵌入只用两行、每行 H 个数，就准确
# 地给出了答案。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# どの演習も、まず自分で解いてから解答を開いてください。
#
# <details><summary>演習 2：特殊トークンの位置</summary>
#
# * テキストが 1 つでも最後に `<sep>` を付けるのは、モデルが読むテキストが、単独でもペアの中でも、同
#   じ形（トークンの後に `<sep>`）になるようにするためです。事前学習では入力はすべてペアなので、モデ
#   ルが見た A の後ろには必ず `<sep>` がありました。ファインチューニングで 1 つのテキストを入力する
#   と、見慣れたペアの前半と同じ形になります。
# * `<cls>` を先頭に置くのは、パディングしたバッチでは各シーケンスの長さが異なるからです。最後の実在
#   するトークンのインデックス（`valid_lens - 1`）は行ごとに違い、その後ろには `<pad>` が続きます。
#   先頭なら `<cls>` はどのシーケンスでもインデックス 0 にあるので、次文予測の出力層や分類器は
#   `X[:, 0, :]` という 1 つのスライスで `valid_lens` なしに取り出せます。位置埋め込みもいつも同じで
#   す。
#
# </details>
#
# <details><summary>演習 3：学習する位置埋め込みの代わりに固定した正弦波を使う</summary>
#
# * 学習しなくてよくなるもの：位置の表、つまり `max_len` までの各位置に H 個の数からなる 1 行です。
#   各位置を、その行を学習できるほど頻繁に見る必要もなくなります。後ろのほうの位置は長い入力でしか使
#   われず、学習中にほとんど更新されません。
# * 得られる可能性があるもの：学習する表には `max_len` より先の行がないので、長い入力はそもそも埋め
#   込めません（bertlib は受け付けません）。正弦波はどの位置でも定義されていて、位置 p + k のエンコ
#   ーディングは位置 p のものを決まった角度だけ回転したものなので、アテンションは新しい位置でも同じ
#   相対的なずれを読み取れるかもしれません。少なくとも長い入力でもモデルは動きます。ただし、その位置
#   では一度も学習していないので、うまくいく保証はありません。
#
# </details>
#
# <details><summary>演習 4：セグメント埋め込みがなかったら</summary>
#
# 原理的には見分けられます。最初の `<sep>` が A の終わりを示し、位置埋め込みが各トークンの位置を教え
# るので、アテンションによって、あるトークンが最初の `<sep>` より後ろにあるかどうかを計算できます。
# たとえば `<sep>` にアテンションを向け、その位置を自分の位置と比べるヘッドがあれば十分です。
#
# しかしその場合、モデルはこれを入力で受け取る代わりに、ブロックの中で計算しなければなりません。最初
# のブロックでは、どのトークンもまだ自分がどちら側にいるのかを知りませんし、境界を探すのに使ったヘッ
# ドはほかのことができません。セグメント埋め込みは、H 個の数からなる 2 行だけで、その答えを正確に与
# えます。
#
# </details>

# %% [raw] strings="zh"
# "position:"
# "位置："
#
# "token:"
# "词元："
#
# "segment:"
# "片段："
#
# "token embedding"
# "词元嵌入"
#
# "segment embedding"
# "片段嵌入"
#
# "position embedding"
# "位置嵌入"
#
# "vocab_size asked"
# "要求的 vocab_size"
#
# "pieces learned"
# "学到的子词数"
#
# "tokens per held-out sentence"
# "每个留出句子的词元数"
#
# "the first pieces learned after the single characters:"
# "单个字符之后最先学到的子词："
#
# "4000 gives the small BERT's vocabulary, piece for piece."
# "要求 4000 个子词时，学到的词表与小 BERT 的词表逐个子词相同。"
#
# "4000 gives a vocabulary other than the small BERT's."
# "要求 4000 个子词时，学到的词表与小 BERT 的词表不同。"

# %% [raw] strings="ja"
# "position:"
# "位置："
#
# "token:"
# "トークン："
#
# "segment:"
# "セグメント："
#
# "token embedding"
# "トークン埋め込み"
#
# "segment embedding"
# "セグメント埋め込み"
#
# "position embedding"
# "位置埋め込み"
#
# "vocab_size asked"
# "指定した vocab_size"
#
# "pieces learned"
# "学習したサブワード数"
#
# "tokens per held-out sentence"
# "ホールドアウトの文 1 つあたりのトークン数"
#
# "the first pieces learned after the single characters:"
# "1 文字のサブワードの後、最初に学習されたサブワード："
#
# "4000 gives the small BERT's vocabulary, piece for piece."
# "4000 を指定すると、付属モデルの語彙がサブワード 1 つ 1 つまでそのまま得られます。"
#
# "4000 gives a vocabulary other than the small BERT's."
# "4000 を指定すると、付属モデルとは異なる語彙が得られます。"
