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
# # 07 · Watching a model learn
#
# *[中文版](../zh/07_watching_it_learn.ipynb) · [日本語](../ja/07_watching_it_learn.ipynb) ·
# [Index](00_index.ipynb)*
#
# Notebook 06 pretrained a small BERT for under a minute and put the shipped model's full run
# next to the original BERT's four days. A loss curve says *that* a model learns. This notebook
# asks *what* it learns, and when, and what makes a step cheaper.
#
# You will:
# 1. load snapshots of the shipped model's run and measure each one on held-out pairs;
# 2. play a time-lapse of one sentence pair through the run: its attention, its guesses at
#    masked tokens and its NSP answer, step by step;
# 3. see when the guesses turn from frequent tokens to the right ones, and where the heads learn
#    to look;
# 4. going further: pad each mini-batch only as far as it needs, see why grouping pairs by
#    length backfires on this corpus, and run the shipped recipe in class, stopped at 900 steps.

# %% [markdown] lang="zh"
# # 07 · 看着模型学习
#
# [English](../en/07_watching_it_learn.ipynb) · [日本語](../ja/07_watching_it_learn.ipynb) ·
# [目录](00_index.ipynb)
#
# 笔记本 06 用不到一分钟预训练了一个小 BERT，并把自带模型的完整训练与原始 BERT 四天的训练放在一起
# 比较。损失曲线只能说明模型*在*学习。本笔记本要问的是：它学到了*什么*，什么时候学到的，以及怎样
# 让每一步的计算更省。
#
# 你将会：
# 1. 加载自带模型训练过程中的快照，并在留出的句子对上逐个测量；
# 2. 播放一个句子对在整个训练过程中的延时画面：它的注意力、它对被掩蔽词元的预测以及它的下一句预测，
#    一步一步地看；
# 3. 看预测何时从高频词元变成正确的词元，以及各个头学会了看向哪里；
# 4. 更进一步：每个小批量只填充到它需要的长度；看看在这个语料库上按长度给句子对分组为什么适得其反；
#    再在课堂上运行自带模型的训练配置，在第 900 步停下。

# %% [markdown] lang="ja"
# # 07 · 学んでいくモデルを見る
#
# *[English](../en/07_watching_it_learn.ipynb) · [中文](../zh/07_watching_it_learn.ipynb) ·
# [目次](00_index.ipynb)*
#
# ノートブック 06 では小さな BERT を 1 分足らず事前学習し、付属モデルの学習全体をオリジナルの BERT
# の 4 日間と並べました。損失の曲線からわかるのは、モデルが学んで*いる*ことだけです。このノートブッ
# クでは、モデルが*何を*、いつ学ぶのか、そして 1 ステップの計算を何が安くするのかを調べます。
#
# このノートブックでは、次のことを行います。
# 1. 付属モデルの学習のスナップショットを読み込み、それぞれをホールドアウトのペアで測ります。
# 2. 1 組の文ペアが学習を通してどう変わるかをタイムラプスで再生します。アテンション、マスクしたトー
#    クンの予測、次文予測の答えをステップごとに見ます。
# 3. 予測が頻度の高いトークンから正しいトークンへ変わる時期と、各ヘッドがどこを見るようになるかを
#    調べます。
# 4. さらに先へ：各ミニバッチを必要な長さまでだけパディングし、このコーパスでは長さでペアをまとめる
#    と逆効果になる理由を見て、付属モデルの学習設定を授業の中で 900 ステップまで実行します。

# %%
import torch
from torch.utils.flop_counter import FlopCounterMode

from bertlib import (
    BERTConfig,
    BERTModel,
    load_small_bert,
    load_small_corpus,
    make_loader,
    make_pretrain_data,
    tokenize_paragraphs,
)
from bertlib.analysis.snapshots import load_snapshots
from bertlib.analysis.timelapse import snapshot_stats
from bertlib.assets import small_bert_metrics
from bertlib.batches import LengthGroupedSampler, trim_padding
from bertlib.classroom.exercises import check_exercise
from bertlib.data import PretrainBatch
from bertlib.loss import chapter_loss
from bertlib.scale.fast import fast_loss
from bertlib.support.i18n import table, tr
from bertlib.train import evaluate_pretraining, init_model
from bertlib.viz import TimeLapseWidget
from bertlib.viz.listing import show_source

# %%
# One thread: the printed losses then come out the same on any number of cores (the order of
# floating-point sums depends on the thread count), and for models this small it is not slower.
torch.set_num_threads(1)

# %% [markdown] lang="en"
# The shipped model and its tokenizer, the corpus and its 1331 held-out pairs, as notebook 06
# made them; the shipped run's record (`metrics`); and for "Going further", the mini-batches of
# notebook 06 and a model of the live run's sizes.

# %% [markdown] lang="zh"
# 下面加载自带模型及其分词器、语料库以及按笔记本 06 的方法构造的留出句子对，还有自带模型那次训练的
# 记录（`metrics`）；另外为“更进一步”准备笔记本 06 中的小批量，以及一个与现场训练同样大小的模型。

# %% [markdown] lang="ja"
# 付属モデルとそのトークナイザ、コーパスと、ノートブック 06 と同じ方法で作ったホールドアウトのペア、
# 付属モデルの学習の記録（`metrics`）を読み込みます。「さらに先へ」のために、ノートブック 06 のミニ
# バッチと、その場での学習と同じ大きさのモデルも用意します。

# %%
small_bert, tokenizer = load_small_bert()
vocab = tokenizer.vocab
split = load_small_corpus()
held_out = make_pretrain_data(tokenize_paragraphs(split.held_out, tokenizer.tokenize), vocab,
                              max_len=64, seed=2, groups=split.held_out_langs)
metrics = small_bert_metrics()
recipe, run = metrics["recipe"], metrics["training"]

data = make_pretrain_data(tokenize_paragraphs(split.train[::4], tokenizer.tokenize), vocab,
                          max_len=64, seed=0, groups=split.train_langs[::4])
batch = next(iter(make_loader(data, batch_size=32, seed=0)))
by_lang = {lang: make_pretrain_data(
    tokenize_paragraphs([p for p, lang_p in zip(split.train, split.train_langs, strict=True)
                         if lang_p == lang], tokenizer.tokenize), vocab, max_len=64, seed=0)
           for lang in ("en", "zh")}
train_pairs = PretrainBatch(*(torch.cat(t) for t in zip(*(d.tensors() for d in by_lang.values()),
                                                         strict=True)))
model = init_model(BERTConfig(vocab_size=len(vocab), num_hiddens=64, ffn_num_hiddens=128,
                              num_heads=2, num_blks=2, dropout=0.0, max_len=64), seed=0)
print(tr("held-out pairs: {pairs}; training pairs: {train}", pairs=len(held_out),
         train=len(train_pairs)))

# %% [markdown] lang="en"
# ## A model that learns before your eyes
#
# A loss curve says *that* a model learns, not *what* it learns. `scripts/pretrain_small.py`
# therefore also keeps the weights at six steps of its run, 0, 50, 150, 300, 900 and 3000, dense
# early, where the MLM loss falls fastest (a `SnapshotRecorder` passed to `train_bert` as its
# callback copies them). They ship with `bertlib` as `snapshots.safetensors` (in half precision,
# with every step's losses), and `load_snapshots` reads them. Below, each snapshot is loaded into
# a model of the shipped architecture and evaluated on the same 1331 held-out pairs as notebook
# 06's live run; the attention and the guesses are measured on every third of these pairs, which
# keeps the cell short.

# %% [markdown] lang="zh"
# ## 看着模型学习
#
# 损失曲线只能说明模型在学，却说明不了它学到了什么。因此，`scripts/pretrain_small.py` 还在训练中
# 的六步（0、50、150、300、900 和 3000）保存了权重；开头几步取得密一些，因为掩蔽语言模型的损失在
# 开头下降得最快（作为回调传给 `train_bert` 的 `SnapshotRecorder` 负责复制权重）。这些快照以半精
# 度存成 `snapshots.safetensors`（连同每一步的损失）随 `bertlib` 一起提供，用 `load_snapshots` 读
# 取。下面把每个快照载入一个与自带模型结构相同的模型，在笔记本 06 的现场训练用过的那 1331 个留出
# 的句子对上评估；注意力和预测则只在其中每隔两个取一个的句子对上统计，好让这个单元格快一些。

# %% [markdown] lang="ja"
# ## 目の前で学んでいくモデル
#
# 損失の曲線からわかるのは、モデルが学んでいる**ということ**であって、**何を**学んでいるかではあ
# りません。そこで `scripts/pretrain_small.py` は、学習中の 6 つのステップ、0、50、150、300、900、
# 3000 で重みも保存しています。マスク言語モデルの損失がいちばん速く下がる序盤に多めに取っています
# （`train_bert` のコールバックに渡した `SnapshotRecorder` が重みをコピーします）。これらは
# `snapshots.safetensors` として `bertlib` に付属し（半精度で、各ステップの損失も含みます）、
# `load_snapshots` で読み込めます。下では、各スナップショットを付属モデルと同じ構造のモデルに読み
# 込み、ノートブック 06 のその場での学習と同じ 1331 組のホールドアウトのペアで評価します。アテン
# ションと予測は、セルが短い時間で終わるように、そのうち 3 組に 1 組だけで測ります。

# %%
snapshots = load_snapshots()  # {step: weights}, and the run's losses at every step
rerun = BERTModel.from_config(small_bert.config)  # the shipped architecture, for each snapshot
sample = held_out[::3]
answers = sample.mlm_labels[sample.mlm_weights > 0]  # what each masked slot should be
frequent = held_out.mlm_labels[held_out.mlm_weights > 0].bincount().topk(10).indices
other = ~torch.isin(answers, frequent)  # slots whose answer is not one of the 10 most frequent

accuracy = [[tr("step"), tr("NSP accuracy"), tr("MLM accuracy")]]
guessing = [[tr("step"), tr("among the 10 most frequent"), tr("different tokens"),
             tr("right where the answer is another token")]]
looking = [["", tr("layer {layer}:", layer=0), "", "", "", tr("layer {layer}:", layer=1)],
           [tr("step"), *[tr("previous"), tr("next"), "<sep>", tr("other")] * 2]]
for step, weights in snapshots.weights.items():
    rerun.load_state_dict(weights)
    scores = evaluate_pretraining(rerun, held_out)
    accuracy.append([step, f"{scores['nsp_accuracy']:.3f}", f"{scores['mlm_accuracy']:.3f}"])
    stats = snapshot_stats(rerun, sample, vocab.sep_id)
    guesses = stats.guesses  # the top guess at each masked slot of the sample
    guessing.append([step, f"{torch.isin(guesses, frequent).float().mean():.3f}",
                     len(guesses.unique()), f"{(guesses == answers)[other].float().mean():.3f}"])
    shares = torch.stack([stats.previous, stats.next, stats.sep, stats.other_segment])
    looking.append([step, *(f"{x:.3f}" for x in shares.mean(dim=-1).T.flatten())])  # over heads

print(tr("The snapshots on the {pairs} held-out pairs:", pairs=len(held_out)))
print(table(accuracy))
print(tr("shipped model (its own run): NSP {nsp:.3f}, MLM {mlm:.3f}",
         nsp=metrics["held_out"]["nsp_accuracy"], mlm=metrics["held_out"]["mlm_accuracy"]))

# %% [markdown] lang="en"
# These snapshots come from the shipped model's own run: the last one is the shipped model
# (held-out NSP 0.841, MLM 0.880). Its MLM accuracy climbs fast up to step 300 (0.549), then more
# slowly (0.739 at step 900); its NSP accuracy is at chance at step 0 (0.491) and climbs from
# step 50 (0.554).
#
# The time-lapse widget shows one sentence pair through the snapshots. Move the slider
# *training step*, or press play to see one snapshot after another. For the step
# chosen it draws one head's attention weights (choose the layer and the head; the colour scale
# stays the same at every step, so the steps compare), the three most probable tokens at the
# token masked in each sentence (*mask in A*, *mask in B*; the right token's bar is green, and
# each title gives its probability), P(IsNext) for the pair, and the run's two losses on a log
# scale, a line at the step. Every snapshot runs once when the text or a masked token changes;
# the slider, the layer and the head only redraw. The model passed in gives the architecture;
# the snapshots bring the weights.

# %% [markdown] lang="zh"
# 这些快照来自自带模型自己的那次训练：最后一个快照就是自带模型（留出数据上下一句预测 0.841，掩蔽语言
# 模型 0.880）。掩蔽语言模型的准确率在第 300 步之前上升得很快（0.549），之后变慢（第 900 步为
# 0.739）；下一句预测的准确率在第 0 步与随机猜测相当（0.491），从第 50 步（0.554）开始上升。
#
# 下面的延时回放小部件让一个句子对依次经过这些快照。拖动滑块“训练步”，或者按下播放键，依次播放各个快
# 照。对所选的训练步，它画出一个头的注意力权重（层和头可以选；颜色刻度在各训练步中保持不变，便于比
# 较）、两个句子中各一个被掩蔽的词元处概率最高的三个词元（“在 A 中掩蔽”“在 B 中掩蔽”；正确词元的柱形
# 为绿色，标题给出它的概率）、这个句子对的 P(是下一句)，以及这次训练的两个损失（对数刻度，竖线标出所
# 选的训练步）。文本或被掩蔽的词元改变时，每个快照各运行一次；拖动滑块、换层或换头只需重画。传入的模
# 型只提供结构，权重来自快照。

# %% [markdown] lang="ja"
# これらのスナップショットは付属モデル自身の学習から取ったもので、最後のものが付属モデルです（ホール
# ドアウトデータで次文予測 0.841、マスク言語モデル 0.880）。マスク言語モデルの正解率はステップ 300
# までは速く上がり（0.549）、その後はゆっくりになります（ステップ 900 で 0.739）。次文予測の正解率は
# ステップ 0 ではチャンスレベル（0.491）で、ステップ 50（0.554）から上がり始めます。
#
# タイムラプスのウィジェットでは、1 組の文ペアがスナップショットを順にたどります。スライダー「学習ス
# テップ」を動かすか、再生ボタンを押して、スナップショットを 1 つずつ見ていきましょう。選んだステッ
# プについて、ウィジェットは次のものを描きます。1 つのヘッドのアテンションの重み（層とヘッドは選べま
# す。カラースケールはどのステップでも同じなので、ステップどうしを比べられます）、各文で 1 つずつマ
# スクしたトークンでの確率上位 3 つのトークン（「A でマスク」「B でマスク」。正しいトークンの棒は緑
# 色で、タイトルにその確率が示されます）、そのペアの P(次の文)、そして学習の 2 つの損失（対数目盛
# で、選んだステップに縦線）です。テキストやマスクするトークンを変えると、各スナップショットが 1 回
# ずつ実行されます。スライダー、層、ヘッドを変えたときは描き直すだけです。渡したモデルは構造だけを与
# え、重みはスナップショットから来ます。

# %%
TimeLapseWidget(small_bert, tokenizer, snapshots)

# %% [markdown] lang="en"
# Play it, and watch the guesses at the two masked tokens and the attention in each layer (head
# by head, and their mean). One pair shows a few tokens; the next cell measures the same things
# on the 444 sampled held-out pairs. Each masked slot's top guess: is it one of the 10 most frequent
# answers, how many different tokens the snapshot guesses, and how often it is right where the
# answer is another token. Then where the heads look: the attention weight each token (as
# query) puts on the token before it, the one after it, the two `<sep>` and the other sentence,
# averaged over the heads of a layer and over every token of the pairs.

# %% [markdown] lang="zh"
# 播放一遍，留意两个被掩蔽词元处的预测，以及每一层的注意力（逐个头看，也看各头平均）。一个句子对只能
# 展示几个词元；下一个单元格在抽出的 444 个留出的句子对上统计同样的东西。先看每个被掩蔽位置的首选预
# 测：它是不是最常见的 10 个答案之一，每个快照一共猜出多少个不同的词元，以及答案为其他词元时它猜对的
# 比例。再看各个头关注哪里：每个词元（作为查询）放在它前一个词元、后一个词元、两个 `<sep>` 和另一个
# 句子上的注意力权重，对同一层的各个头以及这些句子对中的每个词元求平均。

# %% [markdown] lang="ja"
# 再生して、2 つのマスクされたトークンでの予測と、各層のアテンション（ヘッドごと、そしてその平均）を
# 見てみましょう。1 組のペアで見えるのは数個のトークンだけです。次のセルでは、抜き出した 444 組の
# ホールドアウトのペアで同じことを測ります。まず、マスクした各位置の第一候補について、それが最も頻度
# の高い 10 個の答えの 1 つかどうか、スナップショットが全部で何種類のトークンを答えるか、そして答え
# がそれ以外のトークンのときにどれだけ正解するかを見ます。次に、ヘッドがどこを見ているかです。各トー
# クン（クエリとして）が、直前のトークン、直後のトークン、2 つの `<sep>`、もう一方の文に置くアテン
# ションの重みを、層のヘッドとペアのすべてのトークンで平均します。

# %%
print(tr("{pairs} held-out pairs, {slots} masked slots; the 10 most frequent answers {tokens} are "
         "{share:.3f} of them", pairs=len(sample), slots=len(answers),
         tokens=vocab.to_tokens(frequent.tolist()), share=1 - other.float().mean()))
print(tr("The top guess at each masked slot:"))
print(table(guessing))
print(tr("Attention weight on the previous token, the next one, <sep> and the other sentence, "
         "mean over heads and over every token as query:"))
print(table(looking))

# %% [markdown] lang="en"
# **The guesses.** At step 0 the weights are random, and so are the guesses: 179 different
# tokens, never right. By step 50 the model has found the cheapest answer: 0.892 of the top
# guesses are among the 10 most frequent answers, 31 different tokens in all. Then the guesses
# turn into the right ones: where the answer is another token, 0.303 are right at step 150, 0.423
# at step 300, 0.659 at step 900 and 0.849 at step 3000, with 405 different tokens; by then 0.285
# of the guesses are frequent tokens, close to the 0.283 that the frequent answers make up.
#
# **The attention.** At step 0 the weights are nearly uniform: about 0.04 on the previous token
# and on the next, and 0.487 and 0.499 on the other sentence. Layer 1 learns to stay in its own
# sentence: its weight on the other sentence falls to 0.310 by step 150 and 0.124 by step 900.
# Layer 0 does not: it still puts 0.354 on the other sentence at step 3000 (notebook 05 finds
# one of its heads looking across). Layer 0 learns the previous token instead, together with the
# right guesses: from 0.121 at step 300 to 0.336 at step 900 and 0.428 at step 3000. Layer 1's
# weight on its neighbours stays low (0.062 and 0.065 at step 3000). `<sep>` never draws much
# attention: its share is highest at step 0 (0.080 and 0.084, what nearly uniform weights give
# two keys) and ends at 0.035 and 0.065. Heads of the large original BERT put much of their
# weight on `[SEP]` (Clark et al., 2019); this small model, in 3000 steps, does not.

# %% [markdown] lang="zh"
# **猜测。** 第 0 步的权重是随机的，猜测也一样：179 个不同的词元，一个也没猜对。到第 50 步，模型已经
# 找到了最省事的答案：0.892 的首选猜测是 10 个最常见的答案之一，总共只有 31 个不同的词元。之后猜测逐
# 渐变成正确的答案：在答案是其他词元的地方，第 150 步猜对 0.303，第 300 步 0.423，第 900 步 0.659，
# 第 3000 步 0.849，用到 405 个不同的词元；这时首选猜测中常见词元占 0.285，与常见答案所占的 0.283 相
# 当。
#
# **注意力。** 第 0 步的权重几乎是均匀的：前一个和后一个词元上各约 0.04，另一个句子上分别为 0.487 和
# 0.499。层 1 学会了留在自己的句子里：它放在另一个句子上的权重到第 150 步降到 0.310，到第 900 步降到
# 0.124。层 0 却没有：到第 3000 步，它仍把 0.354 放在另一个句子上（笔记本 05 发现它的一个头在看另一
# 个句子）。层 0 学会的是前一个词元，而且与猜对同步：从第 300 步的 0.121 增加到第 900 步的 0.336 和
# 第 3000 步的 0.428。层 1 放在相邻词元上的权重一直很低（第 3000 步为 0.062 和 0.065）。`<sep>` 从来
# 没有吸引多少注意力：它的份额在第 0 步最高（0.080 和 0.084，即几乎均匀的权重分给两个键的份额），最
# 后为 0.035 和 0.065。大型的原始 BERT 有些头会把大量权重放在 `[SEP]` 上（Clark 等人，2019）；这个小
# 模型训练 3000 步之后并没有这样做。

# %% [markdown] lang="ja"
# **予測。** ステップ 0 では重みはランダムで、予測もランダムです。179 種類のトークンで、1 つも当たり
# ません。ステップ 50 までに、モデルは最も手軽な答えを見つけます。首位の予測の 0.892 が最も頻度の高
# い 10 個の答えのどれかで、全部で 31 種類のトークンしかありません。その後、予測は正しい答えに変わっ
# ていきます。答えが別のトークンである位置での正解は、ステップ 150 で 0.303、300 で 0.423、900 で
# 0.659、3000 で 0.849 になり、405 種類のトークンを使います。そのときの首位の予測のうち頻出トークン
# は 0.285 で、頻出の答えが占める 0.283 に近い値です。
#
# **アテンション。** ステップ 0 では重みはほぼ一様で、直前と直後のトークンにそれぞれ約 0.04、もう一
# 方の文に 0.487 と 0.499 です。層 1 は自分の文にとどまることを学び、もう一方の文への重みはステップ
# 150 までに 0.310、ステップ 900 までに 0.124 に下がります。層 0 はそうなりません。ステップ 3000 で
# もまだ 0.354 をもう一方の文に置いています（ノートブック 05 では、そのヘッドの 1 つがもう一方の文を
# 見ていました）。層 0 が学ぶのは代わりに直前のトークンで、正しい予測と歩調を合わせて、ステップ 300
# の 0.121 からステップ 900 の 0.336、ステップ 3000 の 0.428 に増えます。層 1 の隣への重みは低いまま
# です（ステップ 3000 で 0.062 と 0.065）。`<sep>` はあまりアテンションを集めません。その割合はステ
# ップ 0 で最も高く（0.080 と 0.084。ほぼ一様な重みが 2 つのキーに与える割合です）、最後は 0.035 と
# 0.065 です。大きな元の BERT のヘッドは重みの多くを `[SEP]` に置きます（Clark ら、2019）が、この小
# さなモデルは 3000 ステップでもそうなりません。

# %% [markdown] lang="en"
# ## Going further
#
# The chapter's path ended in notebook 06: `BERTModel`, the data, the loss, one step and a run.
# The first section below measures what makes a step cheaper: padding each mini-batch only as far
# as it needs (counted in FLOPs), and grouping pairs by length. The second runs the shipped
# model's recipe within a lesson, stopped at 900 steps, and measures how far short of the shipped
# model it falls.

# %% [markdown] lang="zh"
# ## 更进一步
#
# 本章的主线在笔记本 06 就结束了：`BERTModel`、数据、损失、一步训练和一次完整的训练。下面第一节测
# 一测怎样让每一步的计算更少：每个小批量只填充到它需要的长度（按 FLOP 计算），以及按长度给句子对
# 分组；第二节在一堂课内运行自带模型的训练配置，只训练到第 900 步，并测一测它离自带模型还差多远。

# %% [markdown] lang="ja"
# ## さらに先へ
#
# 章の道筋はノートブック 06 で終わりました。`BERTModel`、データ、損失、1 ステップ、そして 1 回の
# 学習を見てきました。下の最初の節では、1 ステップの計算を減らす方法を測ります。各ミニバッチを必
# 要な長さまでしかパディングしないこと（FLOP で数えます）と、ペアを長さごとにまとめることです。2
# つ目の節では、付属モデルの学習設定を 900 ステップで打ち切って 1 回の授業の時間内に実行し、付属
# モデルとの差を測ります。

# %% [markdown] lang="en"
# ### Padding only as far as each mini-batch needs
#
# Every pair in notebook 06 was padded to `max_len` = 64 tokens, as in the chapter. The encoder then
# works on every padded position too: attention masks it out and the loss never looks at it,
# but its embeddings, projections and feed-forward layers are computed all the same. How much of
# the data is padding?

# %% [markdown] lang="zh"
# ### 每个小批量只填充到它需要的长度
#
# 笔记本 06 中的每个句子对都像本章那样填充到了 `max_len` = 64 个词元。编码器在填充位置上也照样计
# 算：注意力会把这些位置掩蔽掉，损失也根本用不到它们，但它们的嵌入、线性变换和前馈网络照样都要算。
# 数据中有多少是填充呢？

# %% [markdown] lang="ja"
# ### 各ミニバッチを必要な長さまでだけパディングする
#
# ノートブック 06 のペアはすべて、章と同じく `max_len` = 64 トークンまでパディングしてあります。
# するとエンコーダは、パディングの位置でも計算をします。アテンションはそれをマスクし、損失もそこ
# を見ませんが、埋め込み、線形変換、フィードフォワード層はやはり計算されます。データのうち、どれ
# だけがパディングなのでしょうか。

# %%
lengths = data.valid_lens.float()
print(tr("padding: {share:.0%} of all positions (mean length {mean:.1f}, longest {longest}, "
         "max_len 64)",
         share=1 - lengths.sum() / data.tokens.numel(), mean=lengths.mean(),
         longest=int(lengths.max())))

# %% [markdown] lang="en"
# More than half of all positions are padding. A mini-batch only needs to be as long as its
# longest pair: `trim_padding` cuts its tensors down to that length, and cuts the prediction
# slots down to the last one in use. This is called **dynamic padding**; Hugging Face's data
# collators do the same. Nothing that matters is cut: every real token keeps its position (and
# so its position embedding), and what goes was masked out or weighted 0 anyway. `train_bert`
# trims every mini-batch this way.

# %% [markdown] lang="zh"
# 一半以上的位置都是填充。其实一个小批量只需要和其中最长的句子对一样长：`trim_padding` 把小批量的张
# 量截到这个长度，并把预测位置截到最后一个用到的位置。这种做法叫做**动态填充**，Hugging Face 的数据
# 整理器（data collator）也是这么做的。截掉的都是无关紧要的部分：每个真实词元都保留原来的位置（因而
# 也保留了它的位置嵌入），截掉的部分要么本来就会掩蔽掉，要么权重为 0。`train_bert` 对每个小批量都这
# 样截短。

# %% [markdown] lang="ja"
# 全位置の半分以上がパディングです。ミニバッチの長さは、その中で最も長いペアの長さがあれば十分です。
# `trim_padding` はミニバッチのテンソルをその長さまで切り詰め、予測位置も使われている最後の位置まで
# に切り詰めます。これを**動的パディング**と呼びます。Hugging Face のデータコレーター（data
# collator）も同じことをします。大事なものは何も切り落とされません。実在するトークンはすべて元の位置
# （したがって位置埋め込み）を保ち、取り除かれるのは、いずれにせよマスクされるか重みが 0 の部分だけ
# です。`train_bert` はすべてのミニバッチをこのように切り詰めます。

# %%
show_source(trim_padding, region="trim")

# %% [markdown] lang="en"
# The same mini-batch of 32 pairs, padded to 64 and trimmed: the losses agree, and PyTorch's
# `FlopCounterMode` counts the floating-point operations of a forward and backward pass.

# %% [markdown] lang="zh"
# 下面把同一个小批量（32 个句子对）分别填充到 64 和截短，比较两者：损失完全一致；再用 PyTorch 的
# `FlopCounterMode` 统计一次前向传播加反向传播的浮点运算次数。

# %% [markdown] lang="ja"
# 32 組のペアからなる同じミニバッチを、64 までパディングした場合と切り詰めた場合で比べます。損失は一
# 致します。さらに PyTorch の `FlopCounterMode` で、順伝播と逆伝播 1 回ぶんの浮動小数点演算の回数を
# 数えます。


# %%
def step_gflop(loss_fn, batch):
    """Floating-point operations (in billions) of ``loss_fn`` and its gradients on ``batch``."""
    with FlopCounterMode(display=False) as counter:
        loss_fn(model, *batch).total.backward()
    model.zero_grad()
    return counter.get_total_flops() / 1e9


trimmed = trim_padding(batch)
rows = []
for name, b in ((tr("padded to max_len:"), batch), (tr("trimmed:"), trimmed)):
    with torch.no_grad():
        loss = chapter_loss(model, *b)
    rows.append([name, f"T = {b[0].shape[1]}, P = {b[3].shape[1]}",
                 tr("MLM {mlm:.3f}  NSP {nsp:.3f}  total {total:.3f}", mlm=loss.mlm,
                    nsp=loss.nsp, total=loss.total),
                 tr("forward + backward: {gflop:.2f} GFLOP", gflop=step_gflop(chapter_loss, b))])
print(table(rows))
print("fast_loss:", tr("forward + backward: {gflop:.2f} GFLOP",
                       gflop=step_gflop(fast_loss, trimmed)))

# %% [markdown] lang="en"
# Trimmed to its longest pair (46 tokens), the mini-batch costs 0.75 GFLOP instead of 1.05 in
# the chapter's step, for the same losses to the last digit. `fast_loss` goes further, to 0.40:
# inside the trimmed batch the shorter pairs are still padded, and every layer but attention
# works token by token, so it runs those layers on the real tokens only and pads them just for
# attention (`bertlib.scale.fast.unpadded_encode`), and it runs the MLM head only on the K real
# slots.
#
# A random mini-batch still pads every pair to the longest one it happens to hold. **Grouping
# by length** goes further, as Hugging Face's `group_by_length` does: `LengthGroupedSampler`
# shuffles the pairs, sorts each chunk of 50 mini-batches by length, cuts it into mini-batches
# and shuffles their order, so a mini-batch holds pairs of nearly the same length.
# `train_bert(..., group_by_length=True)` uses it. The padding left after trimming, for random
# and for grouped mini-batches of 128 pairs:

# %% [markdown] lang="zh"
# 截到其中最长的句子对（46 个词元）之后，按本章的做法训练一步，这个小批量的计算量从 1.05 GFLOP 降到
# 了 0.75 GFLOP，损失却分毫不差。`fast_loss` 更进一步，降到 0.40：截短后的批量里，较短的句子对仍有填
# 充，而除注意力之外的每一层都是逐个词元计算的，所以它让这些层只在真实词元上运行，只在注意力那一步才
# 补上填充（`bertlib.scale.fast.unpadded_encode`）；掩蔽语言模型的输出层也只算 K 个真实位置。
#
# 随机组成的小批量仍然要把每个句子对填充到其中碰巧最长的那一个。**按长度分组**更进一步，就像 Hugging
# Face 的 `group_by_length` 那样：`LengthGroupedSampler` 先打乱句子对，每次取出够组成 50 个小批量的
# 句子对，按长度排序后切分成小批量，最后打乱所有小批量的顺序，这样同一个小批量里的句子对长度几乎相
# 同。`train_bert(..., group_by_length=True)` 用的就是它。下面分别统计随机组成的小批量和按长度分组的
# 小批量（每批 128 个句子对）在截短之后还剩多少填充：

# %% [markdown] lang="ja"
# 最も長いペア（46 トークン）に合わせて切り詰めると、章のやり方の 1 ステップで、このミニバッチの計
# 算量は 1.05 GFLOP から 0.75 GFLOP に減り、損失は最後の桁まで同じです。`fast_loss` はさらに 0.40 ま
# で減らします。切り詰めたバッチの中でも短いペアにはまだパディングがあり、アテンション以外の層はすべ
# てトークンごとに計算するので、それらの層は実在するトークンだけで計算し、アテンションのときだけパデ
# ィングを補うのです（`bertlib.scale.fast.unpadded_encode`）。マスク言語モデルの出力層も K 個の実在
# する予測位置だけで計算します。
#
# ランダムに組んだミニバッチでは、各ペアをそのバッチにたまたま含まれる最も長いペアまでパディングしな
# ければなりません。**長さごとにまとめる**と、Hugging Face の `group_by_length` のように、さらにパ
# ディングを減らせます。`LengthGroupedSampler` はペアをシャッフルし、ミニバッチ 50 個ぶんずつ長さで
# 並べ替えてミニバッチに切り分け、その順序をシャッフルします。こうすると、1 つのミニバッチにはほぼ同
# じ長さのペアが集まります。`train_bert(..., group_by_length=True)` はこれを使います。128 組ずつのミ
# ニバッチについて、ランダムに組んだ場合と長さごとにまとめた場合で、切り詰めた後に残るパディングを数
# えてみましょう。

# %%
is_zh = torch.cat([torch.full((len(d),), lang == "zh") for lang, d in by_lang.items()])
lengths = train_pairs.valid_lens

random_batches = torch.randperm(len(lengths), generator=torch.Generator().manual_seed(0))
grouped_batches = [torch.tensor(b) for b in LengthGroupedSampler(lengths, 128, seed=0)]
rows = []
for name, batches in ((tr("random mini-batches:"), random_batches.split(128)),
                      (tr("grouped by length:"), grouped_batches)):
    padded = sum(len(b) * int(lengths[b].max()) for b in batches)
    zh_share = torch.stack([is_zh[b].float().mean() for b in batches])
    majority = torch.maximum(zh_share, 1 - zh_share).mean()  # the larger language's share
    rows.append([name, tr("padding after trimming {padding:.1%}; the larger language makes up "
                          "{majority:.0%} of a mini-batch on average",
                          padding=1 - int(lengths.sum()) / padded, majority=majority)])
print(table(rows))

# %% [markdown] lang="en"
# Grouping leaves almost no padding, but look at the second number: a random mini-batch is
# about half English and half Chinese, while a grouped one is nearly all one language. In this
# corpus the length of a pair gives its language away:

# %% [markdown] lang="zh"
# 分组之后几乎没有填充了，但请看第二个数：随机组成的小批量里英文和中文大约各占一半，按长度分组的小批
# 量则几乎只有一种语言。在这个语料库里，看句子对的长度就能猜出它是哪种语言：

# %% [markdown] lang="ja"
# 長さでまとめると、パディングはほとんど残りません。しかし 2 つ目の数字を見てください。ランダムなミ
# ニバッチは英語と中国語がほぼ半分ずつなのに、長さでまとめたミニバッチはほとんど 1 つの言語だけで
# す。このコーパスでは、ペアの長さを見ればその言語がわかってしまうのです。

# %%
rows = []
for name, d in ((tr("English pairs:"), by_lang["en"]), (tr("Chinese pairs:"), by_lang["zh"])):
    q = d.valid_lens.float().quantile(torch.tensor([0.1, 0.9]))
    rows.append([name, tr("mean length {mean:.1f} tokens, 10th to 90th percentile {low} to "
                          "{high}", mean=d.valid_lens.float().mean(), low=int(q[0]),
                          high=int(q[1]))])
print(table(rows))

# %% [markdown] lang="en"
# English pairs are 15 to 25 tokens long (10th to 90th percentile), Chinese pairs 22 to 35,
# since the tokenizer cuts Chinese into single characters. Sorting by length sorts by language,
# and a model that sees one language per step learns more slowly: the in-class run at the end
# of this notebook measures how much. That is why `train_bert` trims every mini-batch but does
# not group by length unless asked. On a corpus whose lengths say nothing else, grouping is a
# free saving.

# %% [markdown] lang="zh"
# 英文句子对长 15 到 25 个词元（第 10 到第 90 百分位数），中文句子对长 22 到 35 个，因为分词器把中文
# 切成了单个汉字。按长度排序也就成了按语言排序，而每一步只见到一种语言的模型学得更慢：本笔记本最后的
# 课堂训练会测出慢了多少。所以 `train_bert` 会截短每个小批量，但只有在你要求时才按长度分组。如果语料
# 库中句子对的长度不透露别的信息，按长度分组省下的计算就是白赚的。

# %% [markdown] lang="ja"
# 英語のペアは 15 から 25 トークン（10 から 90 パーセンタイル）、中国語のペアは 22 から 35 トークン
# です。トークナイザが中国語を 1 文字ずつに切るからです。長さで並べ替えることは言語で並べ替えること
# になり、1 ステップで 1 つの言語しか見ないモデルは学習が遅くなります。どれだけ遅くなるかは、この
# ノートブックの最後の授業用の学習で測ります。`train_bert` がすべてのミニバッチを切り詰めはしても、
# 指定されない限り長さごとにはまとめないのはこのためです。長さがほかの何も語らないコーパスなら、長さ
# でまとめることによる節約はただで手に入ります。

# %% [markdown] lang="en"
# ### The shipped model's recipe, in class
#
# A class can watch for longer than a minute. `scripts/pretrain_small.py --in-class` times a recipe
# for that: the shipped model's recipe (sizes, tokenizer, training paragraphs, held-out pairs, no
# dropout, a learning rate of 2e-3), but 900 steps instead of 3000, on both cores. It times
# everything from the tokenized corpus to the held-out figures, once with random mini-batches and
# once grouped by length, and records both runs in the shipped `metrics.json`:

# %% [markdown] lang="zh"
# ### 在课堂上运行自带模型的训练配置
#
# 一堂课的时间远不止一分钟。`scripts/pretrain_small.py --in-class` 为此给出一套课堂训练配置并计时：
# 模型尺寸、分词器、训练段落、留出的句子对、不用 dropout、学习率 2e-3，都与自带模型相同，但只训练
# 900 步而不是 3000 步，并用上两个核。计时从分好词的语料开始，一直到得出留出数据上的结果为止；随机组
# 成小批量和按长度分组各跑一次，两次的结果都记录在自带的 `metrics.json` 中：

# %% [markdown] lang="ja"
# ### 授業の中で付属モデルの学習設定を実行する
#
# 授業では 1 分よりもっと長く見ていられます。`scripts/pretrain_small.py --in-class` は、そのための学
# 習設定の時間を計ります。付属モデルと同じサイズ、トークナイザ、学習用の段落、ホールドアウトのペアを
# 使い、ドロップアウトなし、学習率 2e-3 も同じですが、ステップ数は 3000 ではなく 900 で、2 つのコア
# を使います。トークン化したコーパスからホールドアウトデータでの結果が出るまでをすべて計り、ランダム
# なミニバッチで 1 回、長さでまとめて 1 回実行し、両方の結果を付属の `metrics.json` に記録していま
# す。

# %%
in_class = metrics["in_class"]
r = in_class["recipe"]
print(tr("in-class recipe: lr {lr:g}, dropout {dropout:g}, {steps} steps of {batch} pairs, "
         "{threads} threads",
         lr=r["lr"], dropout=r["dropout"], steps=r["num_steps"], batch=r["batch_size"],
         threads=r["threads"]))
rows = [[name, tr("NSP {nsp:.3f}  MLM {mlm:.3f}  {pairs:.0f} pairs/s; seconds: data {data:.1f}, "
                  "training {training:.1f}, evaluation {evaluation:.1f}, total {total:.1f}",
                  nsp=run_["held_out"]["nsp_accuracy"], mlm=run_["held_out"]["mlm_accuracy"],
                  pairs=run_["pairs_per_sec"], **run_["seconds"])]
        for name, run_ in ((tr("random mini-batches:"), in_class["random"]),
                           (tr("grouped by length:"), in_class["grouped"]))]
rows.append([tr("shipped model:"), tr("NSP {nsp:.3f}  MLM {mlm:.3f}  ({steps} steps, {minutes:.1f} "
                                      "min on {threads} thread)",
                                      nsp=metrics["held_out"]["nsp_accuracy"],
                                      mlm=metrics["held_out"]["mlm_accuracy"],
                                      steps=recipe["num_steps"], minutes=run["seconds"] / 60,
                                      threads=recipe["threads"])])
print(table(rows))
print(tr("pairs per second, grouped / random: {ratio:.2f}",
         ratio=in_class["grouped"]["pairs_per_sec"] / in_class["random"]["pairs_per_sec"]))

# %% [markdown] lang="en"
# With random mini-batches the recipe gets held-out NSP 0.830 and MLM 0.738 in 158.1 s on the
# two cores of the machine that ran it (27.1 of them building the pairs). That is close to the
# shipped model's NSP (0.841) but well short of its MLM (0.880): the shipped model trains for
# 3000 steps, not 900. What 900 steps cannot give at all is what notebook 10 needs: the link
# between a word and the words of its class (a fruit and "peel", a city and "streets") forms
# only between steps 900 and 3000. Grouped by length, a step is 1.28 times as fast (`fast_loss`
# already leaves out most of the padding), and after the same 900 steps the model is behind
# (NSP 0.791, MLM 0.650): one language per mini-batch costs more than the padding saves. To run
# the recipe in a lesson, build the pairs as the script does
# (`make_pretrain_data(..., rounds=10, groups=split.train_langs)`) and call
# `train_bert(init_model(BERTConfig(len(vocab), 128, 256, 2, 2, dropout=0.0, max_len=64), seed=3),
# data, num_steps=900, batch_size=128, lr=2e-3, seed=4, callback=LossPlot().update)`.

# %% [markdown] lang="zh"
# 随机组成小批量时，这套课堂训练配置在运行它的那台机器上用两个核共耗时 158.1 秒（其中 27.1 秒用于构
# 造句子对），留出数据上下一句预测的准确率为 0.830，掩蔽语言模型的准确率为 0.738。下一句预测接近自带
# 模型（0.841），掩蔽语言模型却明显不如（0.880）：自带模型训练了 3000 步，而不是 900 步。900 步完全
# 给不了的，是笔记本 10 所需要的东西：一个词与同类词的联系（水果和“果皮”，城市和“街道”）要到第 900
# 步和第 3000 步之间才形成。按长度分组时，每一步的速度是原来的 1.28 倍（`fast_loss` 已经省掉了大部分
# 填充），而同样训练 900 步之后，模型却落在后面（下一句预测 0.791，掩蔽语言模型 0.650）：每个小批量
# 只有一种语言，付出的代价比少算填充省下的还多。要在课堂上使用这套训练配置，请像脚本那样构造句子对
# （`make_pretrain_data(..., rounds=10, groups=split.train_langs)`），再调用
# `train_bert(init_model(BERTConfig(len(vocab), 128, 256, 2, 2, dropout=0.0, max_len=64), seed=3),
# data, num_steps=900, batch_size=128, lr=2e-3, seed=4, callback=LossPlot().update)`。

# %% [markdown] lang="ja"
# ランダムなミニバッチでは、この学習設定は実行したマシンの 2 つのコアで 158.1 秒かかり（そのうち
# 27.1 秒はペアの作成）、ホールドアウトデータで次文予測 0.830、マスク言語モデル 0.738 に達します。次
# 文予測は付属モデル（0.841）に近いものの、マスク言語モデルは（0.880）にかなり届きません。付属モデル
# は 900 ステップではなく 3000 ステップ学習しているからです。900 ステップではまったく得られないの
# が、ノートブック 10 が必要とするもの、つまり単語と同じクラスの単語との結びつき（果物と「皮」、都市
# と「通り」）で、これはステップ 900 から 3000 のあいだにようやくできます。長さでまとめると、1 ステ
# ップは 1.28 倍速くなり（`fast_loss` がすでにパディングの大半を省いています）、同じ 900 ステップの
# 後のモデルは遅れています（次文予測 0.791、マスク言語モデル 0.650）。1 つのミニバッチに 1 つの言語
# しかないことの損失は、パディングを減らして得る節約よりも大きいのです。授業でこの学習設定を実行する
# には、スクリプトと同じようにペアを作り（`make_pretrain_data(..., rounds=10,
# groups=split.train_langs)`）、`train_bert(init_model(BERTConfig(len(vocab), 128, 256, 2, 2,
# dropout=0.0, max_len=64), seed=3), data, num_steps=900, batch_size=128, lr=2e-3, seed=4,
# callback=LossPlot().update)` を呼びます。

# %% [markdown] lang="en"
# ## Summary
#
# * Snapshots of the weights (`SnapshotRecorder` during `train_bert`, `load_snapshots` for the
#   shipped recipe's) show what a run learns and when, in `TimeLapseWidget`: the guesses are
#   the most frequent tokens up to about step 150 and mostly right by step 3000; layer 1 keeps to
#   its own sentence, layer 0 turns to the previous token; none turns to `<sep>`.
# * Dynamic padding (`trim_padding`) pads each mini-batch only to its longest
#   pair, the same losses for far less work. Grouping pairs by length (`LengthGroupedSampler`)
#   removes nearly all the rest, but here length gives the language away, and one-language
#   batches learn more slowly: measure before you group. The shipped recipe stopped at 900 steps
#   comes close to the shipped model's NSP but not to its MLM, nor to the word classes notebook
#   10 needs.

# %% [markdown] lang="zh"
# ## 小结
#
# * 权重的快照（训练时用 `SnapshotRecorder` 记录，自带训练配置的快照用 `load_snapshots` 读取）在
#   `TimeLapseWidget` 中展示一次训练学到了什么、何时学到：大约到第 150 步为止，预测都是最常见的词
#   元，到第 3000 步大多已经猜对；层 1 留在自己的句子里，层 0 转向前一个词元；没有一个头转向
#   `<sep>`。
# * 动态填充（`trim_padding`）让每个小批量只填充到其中最长的句子对，损失不变，计算量却少得
#   多。按长度分组（`LengthGroupedSampler`）几乎能去掉剩下的全部填充，但在这里长度会泄露语言，而只含
#   一种语言的小批量学得更慢：分组之前先测一测。自带模型的训练配置只训练 900 步时，下一句预测接近自
#   带模型，掩蔽语言模型却不如它，也学不到笔记本 10 所需要的词类。

# %% [markdown] lang="ja"
# ## まとめ
#
# * 重みのスナップショット（`train_bert` の中で `SnapshotRecorder` が記録し、付属の学習設定のものは
#   `load_snapshots` で読み込みます）を `TimeLapseWidget` で見ると、学習が何をいつ学ぶかがわかりま
#   す。予測はステップ 150 ごろまでは最も頻度の高いトークンで、ステップ 3000 までにはほとんど正しく
#   なります。層 1 は自分の文の中にとどまり、層 0 は直前のトークンを見るようになります。`<sep>` を
#   見るようになるヘッドはありません。
# * 動的パディング（`trim_padding`）は各ミニバッチを最も長いペアまでだけパディングし、損
#   失は同じまま計算をずっと減らします。ペアを長さごとにまとめると（`LengthGroupedSampler`）残りもほ
#   とんどなくなりますが、ここでは長さが言語を明かしてしまい、1 つの言語だけのバッチでは学習が遅くな
#   ります。まとめる前に測りましょう。付属モデルの学習設定を 900 ステップで止めると、次文予測は付属
#   モデルに近づきますが、マスク言語モデルは届かず、ノートブック 10 が必要とする単語クラスも身につき
#   ません。

# %% [markdown] lang="en"
# ## Exercises
#
# 1. ★★ **Your own run.** Record a run of your own and play it: train a model of notebook 06's
#    live-run sizes, `model = init_model(model.config, seed=0)`, with `recorder =
#    SnapshotRecorder(model, steps=[0, 25, 50, 100, 200, 300])` as its callback,
#    `history = train_bert(model, train_pairs, num_steps=300, batch_size=128, lr=3e-3, seed=0,
#    loss_fn=fast_loss, callback=recorder)`, then show `TimeLapseWidget(model, tokenizer,
#    recorder, history)` and measure its last step with `snapshot_stats(model, sample,
#    vocab.sep_id)`. How far do its guesses get by step 300, next to the shipped run's snapshot at
#    step 300? Do its layer-0 heads take the same path? (Import `train_bert` from `bertlib` and
#    `SnapshotRecorder` from `bertlib.analysis.snapshots`.)
# 2. ★★★ The chapter suggests pretraining with `max_len=512` and the sizes of BERT-Large (24
#    blocks, H = 1024, 16 heads, FFN 4096). Without running it: when `max_len` goes from 64 to
#    512, by what factor does the memory of the parameters grow, and by what factor the memory
#    of one batch's attention weights? Which of the two makes the run fail on a laptop?
#    Check the second factor below.

# %% [markdown] lang="zh"
# ## 练习
#
# 1. ★★ **你自己的训练。** 记录一次你自己的训练并播放它：训练一个与笔记本 06 现场训练同样大小的
#    模型 `model = init_model(model.config, seed=0)`，把 `recorder = SnapshotRecorder(model,
#    steps=[0, 25, 50, 100, 200, 300])` 作为回调：`history = train_bert(model, train_pairs,
#    num_steps=300, batch_size=128, lr=3e-3, seed=0, loss_fn=fast_loss, callback=recorder)`，再显示
#    `TimeLapseWidget(model, tokenizer, recorder, history)`，并用 `snapshot_stats(model, sample,
#    vocab.sep_id)` 测量它的最后一步。与自带模型那次训练在第 300 步的快照相比，它的预测到了什么程
#    度？它的层 0 的各个头走的是同一条路吗？（`train_bert` 从 `bertlib` 导入，`SnapshotRecorder` 从
#    `bertlib.analysis.snapshots` 导入。）
# 2. ★★★ 本章建议用 `max_len=512` 和 BERT-Large 的尺寸（24 个编码器块，H = 1024，16 个头，前馈网
#    络 4096）做预训练。不用运行，想一想：`max_len` 从 64 增加到 512 时，参数占用的内存增长到原来的
#    多少倍？一个批量的注意力权重占用的内存又增长到多少倍？在笔记本电脑上，是哪一个让训练无法进行？
#    在下面检查第二个倍数。

# %% [markdown] lang="ja"
# ## 演習
#
# 1. ★★ **あなた自身の学習。** 自分の学習を記録して再生してみましょう。ノートブック 06 のその場での
#    学習と同じ大きさのモデル `model = init_model(model.config, seed=0)` を、`recorder =
#    SnapshotRecorder(model, steps=[0, 25, 50, 100, 200, 300])` をコールバックにして学習させます：
#    `history = train_bert(model, train_pairs, num_steps=300, batch_size=128, lr=3e-3, seed=0,
#    loss_fn=fast_loss, callback=recorder)`。それから `TimeLapseWidget(model, tokenizer, recorder,
#    history)` を表示し、最後のステップを `snapshot_stats(model, sample, vocab.sep_id)` で測ります。
#    付属モデルの学習のステップ 300 のスナップショットと比べて、予測はどこまで進んでいますか。層 0
#    のヘッドは同じ道をたどりますか（`train_bert` は `bertlib` から、`SnapshotRecorder` は
#    `bertlib.analysis.snapshots` からインポートします）。
# 2. ★★★ 章は `max_len=512` と BERT-Large のサイズ（24 ブロック、H = 1024、16 ヘッド、FFN 4096）で
#    事前学習することを提案しています。実行せずに考えましょう。`max_len` が 64 から 512 になると、パ
#    ラメータのメモリは何倍になり、1 つのバッチのアテンションの重みのメモリは何倍になりますか。ノー
#    トパソコンで学習が失敗する原因になるのは、どちらでしょうか。
#    2 つ目の倍率を下で確かめましょう。

# %%
answer = None  # your answer to exercise 2: an integer
check_exercise("07_attention_growth", answer)

# %% [markdown] lang="en"
# ### Worked answers
#
# Try each exercise before you open its answer.
#
# <details><summary>Exercise 1: Your own run</summary>
#
# In its guesses your 300 steps take the model about as far as the shipped run's first 300:
# about as large a share of its top guesses are frequent tokens as the snapshot's 0.423, and
# its held-out MLM accuracy (notebook 06 printed it after the live run) is a little below the
# snapshot's 0.549. Layer 0 has begun to look at the previous token, a little less than the
# snapshot's 0.121. Its attention took another path, though: its layer 0 puts only a small share
# on the other sentence, where the shipped run's layer 0 still puts 0.438 at step 300. Two runs
# of one architecture, at other sizes and from other seeds, need not share their heads: play
# both time-lapses and compare layer by layer, not head by head.
#
# </details>
#
# <details><summary>Exercise 2: max_len 512</summary>
#
# The parameters barely grow: only the position-embedding table gets longer, by a few hundred
# rows of H = 1024 numbers, a tiny part of BERT-Large's 340M parameters (the weights, their
# gradients and Adam's two moments grow in the same proportion). The attention weights grow with
# $T^2$, the factor you checked, and every one of the 24 blocks keeps them, with its other
# activations, for the backward pass. It is the activations, above all the attention weights,
# that no longer fit in a laptop's memory; this is why the paper trained at 128 tokens for 90% of
# the steps.
#
# </details>

# %% [markdown] lang="zh"
# ### 参考答案
#
# 先自己做每道练习，再展开它的答案。
#
# <details><summary>练习 1：你自己的训练</summary>
#
# 在猜测上，你的 300 步把模型带到了与自带模型那次训练的前 300 步差不多的地方：首选预测中常见词元所
# 占的比例与快照的 0.423 差不多；它在留出数据上的掩蔽语言模型准确率（笔记本 06 在现场训练之后打印
# 过）比快照的 0.549 略低。层 0 已经开始关注前一个词元，比快照的 0.121 略少。注意力却走了另一条
# 路：它的层 0 放在另一个句子上的权重很小，而自带模型那次训练的层 0 在第 300 步仍放着 0.438。同一
# 个架构的两次训练，规模和随机种子不同，头不一定相同：播放两段延时回放，逐层比较，而不是逐个头比
# 较。
#
# </details>
#
# <details><summary>练习 2：max_len 取 512</summary>
#
# 参数几乎不增加：只有位置嵌入表变长了，多出几百行、每行 H = 1024 个数，这在 BERT-Large 的 3.4 亿个
# 参数中微不足道（权重、它们的梯度和 Adam 的两个矩按同样的比例增加）。注意力权重按 $T^2$ 增长，也
# 就是你检查过的那个倍数，而且 24 个编码器块都要把它们连同其他中间结果一起保存下来，供反向传播使
# 用。让笔记本电脑的内存装不下的，是这些中间结果，尤其是注意力权重；这也是论文在 90% 的步骤中只用
# 128 个词元训练的原因。
#
# </details>

# %% [markdown] lang="ja"
# ### 解答例
#
# まず自分で演習に取り組んでから、解答を開きましょう。
#
# <details><summary>演習 1：あなた自身の学習</summary>
#
# 予測については、あなたの 300 ステップは、付属モデルの学習の最初の 300 ステップとほぼ同じところま
# でモデルを進めます。第一候補のうち頻出トークンの割合はスナップショットの 0.423 とほぼ同じで、ホー
# ルドアウトデータでのマスク言語モデルの正解率（ノートブック 06 でその場での学習の後に表示しました）
# はスナップショットの 0.549 より少し低くなります。層 0 は直前のトークンを見始めていますが、スナッ
# プショットの 0.121 より少し少なめです。ただしアテンションは別の道をたどります。層 0 がもう一方の文
# に置く重みはわずかで、付属モデルの学習の層 0 はステップ 300 でもまだ 0.438 を置いています。同じ構
# 造でも、大きさと乱数シードの違う 2 回の学習が同じヘッドを持つとは限りません。2 つのタイムラプスを
# 再生し、ヘッドごとではなく層ごとに比べてみましょう。
#
# </details>
#
# <details><summary>演習 2：max_len を 512 に</summary>
#
# パラメータはほとんど増えません。長くなるのは位置埋め込みの表だけで、H = 1024 個の数の行が数百行増
# えますが、BERT-Large の 3.4 億のパラメータから見ればごくわずかです（重み、その勾配、Adam の 2 つの
# モーメントも同じ割合で増えます）。アテンションの重みは $T^2$ に比例して増え、これが確かめた倍率で
# す。しかも 24 個のブロックがどれも、ほかの中間結果と一緒にそれを逆伝播のために保存します。ノート
# パソコンのメモリに収まらなくなるのは、この中間結果、とくにアテンションの重みです。論文がステップの
# 90% を 128 トークンで学習したのはこのためです。
#
# </details>


# %% [raw] strings="zh"
# "held-out pairs: {pairs}; training pairs: {train}"
# "留出的句子对：{pairs} 个；训练用的句子对：{train} 个"
#
# "MLM {mlm:.3f}  NSP {nsp:.3f}  total {total:.3f}"
# "掩蔽语言模型 {mlm:.3f}  下一句预测 {nsp:.3f}  总损失 {total:.3f}"
#
# "padding: {share:.0%} of all positions (mean length {mean:.1f}, longest {longest}, max_len 64)"
# "填充占全部位置的 {share:.0%}（平均长度 {mean:.1f}，最长 {longest}，max_len 为 64）"
#
# "padded to max_len:"
# "填充到 max_len："
#
# "trimmed:"
# "截短之后："
#
# "forward + backward: {gflop:.2f} GFLOP"
# "前向传播 + 反向传播：{gflop:.2f} GFLOP"
#
# "random mini-batches:"
# "随机组成的小批量："
#
# "grouped by length:"
# "按长度分组："
#
# "padding after trimming {padding:.1%}; the larger language makes up {majority:.0%} of a mini-batch on average"
# "截短后填充占 {padding:.1%}；小批量中较多的那种语言平均占 {majority:.0%}"
#
# "English pairs:"
# "英文句子对："
#
# "Chinese pairs:"
# "中文句子对："
#
# "mean length {mean:.1f} tokens, 10th to 90th percentile {low} to {high}"
# "平均长度 {mean:.1f} 个词元，第 10 到第 90 百分位数为 {low} 到 {high}"
#
# "in-class recipe: lr {lr:g}, dropout {dropout:g}, {steps} steps of {batch} pairs, {threads} threads"
# "课堂训练配置：学习率 {lr:g}，dropout {dropout:g}，{steps} 步，每步 {batch} 个句子对，{threads} 个线程"
#
# "NSP {nsp:.3f}  MLM {mlm:.3f}  {pairs:.0f} pairs/s; seconds: data {data:.1f}, training {training:.1f}, evaluation {evaluation:.1f}, total {total:.1f}"
# "下一句预测 {nsp:.3f}  掩蔽语言模型 {mlm:.3f}  每秒 {pairs:.0f} 个句子对；用时（秒）：构造数据 {data:.1f}，训练 {training:.1f}，评估 {evaluation:.1f}，共 {total:.1f}"
#
# "NSP {nsp:.3f}  MLM {mlm:.3f}  ({steps} steps, {minutes:.1f} min on {threads} thread)"
# "下一句预测 {nsp:.3f}  掩蔽语言模型 {mlm:.3f}（{steps} 步，在 {threads} 个线程上用时 {minutes:.1f} 分钟）"
#
# "pairs per second, grouped / random: {ratio:.2f}"
# "每秒处理的句子对数之比（按长度分组 / 随机）：{ratio:.2f}"
#
# "step"
# "训练步数"
#
# "shipped model:"
# "自带模型："
#
# "NSP accuracy"
# "下一句预测准确率"
#
# "MLM accuracy"
# "掩蔽语言模型准确率"
#
# "among the 10 most frequent"
# "属于最常见的 10 个"
#
# "different tokens"
# "不同的词元数"
#
# "right where the answer is another token"
# "答案为其他词元时猜对"
#
# "layer {layer}:"
# "层 {layer}："
#
# "previous"
# "前一个"
#
# "next"
# "后一个"
#
# "other"
# "另一句"
#
# "The snapshots on the {pairs} held-out pairs:"
# "各快照在 {pairs} 个留出的句子对上："
#
# "shipped model (its own run): NSP {nsp:.3f}, MLM {mlm:.3f}"
# "自带模型（它自己的那次训练）：下一句预测 {nsp:.3f}，掩蔽语言模型 {mlm:.3f}"
#
# "{pairs} held-out pairs, {slots} masked slots; the 10 most frequent answers {tokens} are {share:.3f} of them"
# "{pairs} 个留出的句子对，{slots} 个被掩蔽的位置；最常见的 10 个答案 {tokens} 占其中的 {share:.3f}"
#
# "The top guess at each masked slot:"
# "每个被掩蔽位置的首选预测："
#
# "Attention weight on the previous token, the next one, <sep> and the other sentence, mean over heads and over every token as query:"
# "放在前一个词元、后一个词元、<sep> 和另一个句子上的注意力权重（对各个头以及作为查询的每个词元求平均）："

# %% [raw] strings="ja"
# "held-out pairs: {pairs}; training pairs: {train}"
# "ホールドアウトのペア：{pairs} 組。学習用のペア：{train} 組"
#
# "MLM {mlm:.3f}  NSP {nsp:.3f}  total {total:.3f}"
# "マスク言語モデル {mlm:.3f}  次文予測 {nsp:.3f}  合計 {total:.3f}"
#
# "padding: {share:.0%} of all positions (mean length {mean:.1f}, longest {longest}, max_len 64)"
# "パディングは全位置の {share:.0%}（平均の長さ {mean:.1f}、最長 {longest}、max_len 64）"
#
# "padded to max_len:"
# "max_len までパディング："
#
# "trimmed:"
# "切り詰め後："
#
# "forward + backward: {gflop:.2f} GFLOP"
# "順伝播 + 逆伝播：{gflop:.2f} GFLOP"
#
# "random mini-batches:"
# "ランダムなミニバッチ："
#
# "grouped by length:"
# "長さごとにまとめたミニバッチ："
#
# "padding after trimming {padding:.1%}; the larger language makes up {majority:.0%} of a mini-batch on average"
# "切り詰め後のパディング {padding:.1%}。ミニバッチの中で多いほうの言語が平均 {majority:.0%} を占める"
#
# "English pairs:"
# "英語のペア："
#
# "Chinese pairs:"
# "中国語のペア："
#
# "mean length {mean:.1f} tokens, 10th to 90th percentile {low} to {high}"
# "平均の長さ {mean:.1f} トークン、10 から 90 パーセンタイルは {low} から {high}"
#
# "in-class recipe: lr {lr:g}, dropout {dropout:g}, {steps} steps of {batch} pairs, {threads} threads"
# "授業用の学習設定：学習率 {lr:g}、ドロップアウト {dropout:g}、{batch} 組ずつ {steps} ステップ、{threads} スレッド"
#
# "NSP {nsp:.3f}  MLM {mlm:.3f}  {pairs:.0f} pairs/s; seconds: data {data:.1f}, training {training:.1f}, evaluation {evaluation:.1f}, total {total:.1f}"
# "次文予測 {nsp:.3f}  マスク言語モデル {mlm:.3f}  毎秒 {pairs:.0f} 組。秒数：データ {data:.1f}、学習 {training:.1f}、評価 {evaluation:.1f}、合計 {total:.1f}"
#
# "NSP {nsp:.3f}  MLM {mlm:.3f}  ({steps} steps, {minutes:.1f} min on {threads} thread)"
# "次文予測 {nsp:.3f}  マスク言語モデル {mlm:.3f}（{steps} ステップ、{threads} スレッドで {minutes:.1f} 分）"
#
# "pairs per second, grouped / random: {ratio:.2f}"
# "1 秒あたりのペア数の比（長さでまとめた場合 / ランダム）：{ratio:.2f}"
#
# "step"
# "ステップ"
#
# "shipped model:"
# "付属モデル："
#
# "NSP accuracy"
# "次文予測の正解率"
#
# "MLM accuracy"
# "マスク言語モデルの正解率"
#
# "among the 10 most frequent"
# "頻度上位 10 個に入る割合"
#
# "different tokens"
# "トークンの種類"
#
# "right where the answer is another token"
# "答えがそれ以外のときの正解"
#
# "layer {layer}:"
# "層 {layer}："
#
# "previous"
# "直前"
#
# "next"
# "直後"
#
# "other"
# "もう一方の文"
#
# "The snapshots on the {pairs} held-out pairs:"
# "ホールドアウトのペア {pairs} 組での各スナップショット："
#
# "shipped model (its own run): NSP {nsp:.3f}, MLM {mlm:.3f}"
# "付属モデル（それ自身の学習）：次文予測 {nsp:.3f}、マスク言語モデル {mlm:.3f}"
#
# "{pairs} held-out pairs, {slots} masked slots; the 10 most frequent answers {tokens} are {share:.3f} of them"
# "ホールドアウトのペア {pairs} 組、マスクした位置 {slots} 個。頻度上位 10 個の答え {tokens} がその {share:.3f} を占める"
#
# "The top guess at each masked slot:"
# "マスクした各位置の第一候補："
#
# "Attention weight on the previous token, the next one, <sep> and the other sentence, mean over heads and over every token as query:"
# "直前のトークン、直後のトークン、<sep>、もう一方の文に置くアテンションの重み（ヘッドと、クエリとしての全トークンで平均）："
