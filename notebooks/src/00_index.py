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
# # BERT from first principles
#
# *[中文版](../zh/00_index.ipynb) · [日本語](../ja/00_index.ipynb)*
#
# Twelve short notebooks that take BERT apart and put it back together, following the BERT
# section of *Dive into Deep Learning* (d2l). Every step is code you can run and change, every
# shape is printed, and every claim is checked by a computation. The model code lives in a small
# tested package, `bertlib`; the notebooks import it, show it and explain it.
#
# 0. [**Index**](00_index.ipynb), about 11 minutes: this page, with the contents, how to run the
#    notebooks and a map of the chapter.
# 1. [**From context-independent to context-sensitive**](01_context.ipynb), about 25 minutes:
#    word2vec/GloVe vs ELMo vs GPT vs BERT; polysemy measured with real weights.
# 2. [**Input representation**](02_input_representation.ipynb), about 30 minutes: `<cls>` A `<sep>`
#    B `<sep>` and segment ids; WordPiece's greedy longest match and how its vocabulary is learned;
#    token + segment + position embeddings summed by hand.
# 3. [**The encoder forward pass**](03_encoder.ipynb), about 41 minutes: one block by hand with the
#    shape of every step, `valid_lens` masking, attention heatmaps.
# 4. [**Masked language modelling**](04_masked_lm.ipynb), about 41 minutes: the 15% and 80/10/10
#    rules counted, gathering the prediction positions, the weighted loss.
# 5. [**Next sentence prediction**](05_next_sentence.ipynb), about 37 minutes: IsNext/NotNext pairs,
#    the head on `<cls>`, a padded pretraining batch.
# 6. [**Putting it together**](06_pretraining.ipynb), about 37 minutes: `BERTModel`, the data
#    pipeline, the combined loss, one training step, a live pretraining run, the paper's scale next
#    to ours.
# 7. [**Watching a model learn**](07_watching_it_learn.ipynb), about 32 minutes: a time-lapse of a
#    run learning (attention, masked-token guesses, NSP, snapshot by snapshot); going further:
#    dynamic padding, grouping by length, the shipped recipe in class.
# 8. [**Evaluating honestly**](08_evaluation.ipynb), about 35 minutes: the shipped model's held-out
#    accuracy with confidence intervals, masked-token guesses, encodings; going further: the NSP
#    shortcut, template leakage.
# 9. [**Real BERT**](09_real_bert.ipynb), about 35 minutes: what the original BERT adds, loading
#    real weights, parity with the reference implementation, real attention heads.
# 10. [**Fine-tuning**](10_fine_tuning.ipynb), about 32 minutes: what pretraining buys, as a
#    designed experiment on words no label shows: `BERTClassifier` on `<cls>`, pretrained vs random
#    weights vs a bag of words over five seeds, where pretraining put the words, a learning curve.
# 11. [**Tagging, question answering and a real BERT**](11_tagging_and_qa.ipynb), about 30
#    minutes: a token tagger and question answering with start and end vectors under the same
#    controls, the BERT paper's evidence, fine-tuning real MiniLM weights.
#
# Each notebook stands on its own and runs on a laptop CPU, no GPU needed. The minutes after each
# title estimate its class time, exercises aside: the prose read at 150 words a minute, 5 s a line
# of code, 3 s a line of output, 4 minutes a widget, and the run (`python tools/notebooks.py
# --estimate` prints them); each fits one 45-minute class period. Each ends with exercises;
# some have a check cell that tells you ✓ or × without giving the answer away. An implement-it
# check names the first case that fails and where; add `hint=1` (then 2, 3) to it for hints, the
# full recipe last. It refuses a function that calls bertlib's own answer.

# %% [markdown] lang="zh"
# # 从零开始理解 BERT
#
# [English](../en/00_index.ipynb) · [日本語](../ja/00_index.ipynb)
#
# 这里有十二个短小的笔记本，对照《动手学深度学习》（d2l）中 BERT 一节，先把 BERT 拆开，再一块块装回
# 去。每一步都是可以运行、可以修改的代码；每个张量的形状都会打印出来；每个结论都用计算来验证。
# 模型代码集中放在经过测试的小软件包 `bertlib` 里，笔记本导入它，展示它的源代码并加以讲解。
#
# 0. [**目录**](00_index.ipynb)（约 11 分钟）：本页，包括内容简介、运行方法以及与原书章节的对应关
#    系。
# 1. [**从上下文无关到上下文敏感**](01_context.ipynb)（约 25 分钟）：比较 word2vec/GloVe、ELMo、GPT
#    与 BERT；用真实权重实测一词多义。
# 2. [**输入表示**](02_input_representation.ipynb)（约 30 分钟）：`<cls>` A `<sep>` B `<sep>` 与片段
#    索引；WordPiece 的贪心最长匹配及其词表的学习方法；亲手把词元嵌入、片段嵌入和位置嵌入相加。
# 3. [**编码器的前向传播**](03_encoder.ipynb)（约 41 分钟）：亲手计算一个编码器块并打印每一步的形
#    状；`valid_lens` 掩码；注意力热图。
# 4. [**掩蔽语言模型**](04_masked_lm.ipynb)（约 41 分钟）：统计验证 15% 与 80/10/10 规则；取出预测位
#    置；加权损失。
# 5. [**下一句预测**](05_next_sentence.ipynb)（约 37 分钟）：“是下一句”与“不是下一句”的句子对；基于
#    `<cls>` 的输出层；填充好的预训练批量。
# 6. [**整合与预训练**](06_pretraining.ipynb)（约 37 分钟）：`BERTModel`、数据流水线、总损失、一步训
#    练、一次现场训练、论文的规模与我们的对比。
# 7. [**看着模型学习**](07_watching_it_learn.ipynb)（约 32 分钟）：逐个快照回放一次训练的学习过程
#    （注意力、被掩蔽词元处的预测、下一句预测）；更进一步：动态填充、按长度分组、在课堂上运行自带
#    模型的训练配置。
# 8. [**如实评估**](08_evaluation.ipynb)（约 35 分钟）：项目自带的小 BERT 在留出数据上的准确率及其置
#    信区间；模型对被掩蔽词元的猜测；BERT 编码；更进一步：下一句预测的捷径、模板泄漏。
# 9. [**真实的 BERT**](09_real_bert.ipynb)（约 35 分钟）：原始 BERT 增加了什么；加载真实权重；与参考
#    实现逐个数值比对；真实的注意力头。
# 10. [**微调**](10_fine_tuning.ipynb)（约 32 分钟）：预训练到底带来了什么，用一个关于标签里没有的词
#    的设计好的实验来回答：基于 `<cls>` 的 `BERTClassifier`；预训练权重、随机权重与词袋模型在五个随
#    机种子上的比较；预训练把这些词放在了哪里；学习曲线。
# 11. [**标注、问答与真实的 BERT**](11_tagging_and_qa.ipynb)（约 30 分钟）：在同样的对照下做词元标
#    注，并用起点向量和终点向量做问答；BERT 论文的证据；微调真实的 MiniLM 权重。
#
# 每个笔记本都可以单独学习，在笔记本电脑的 CPU 上就能运行，不需要 GPU。标题后的分钟数是课堂用时的
# 估计（不含练习）：英文正文按每分钟 150 个词阅读，每行代码 5 秒，每行输出 3 秒，每个小部件 4 分
# 钟，再加上运行时间（`python tools/notebooks.py --estimate` 会打印这些估计）；每个笔记本都能在一
# 节 45 分钟的课内讲完。每个笔记本最后都有练习；部分练习附有检查单元格，它会告诉你答对（✓）还是答
# 错（×），但不会泄露答案。“动手实现”的检查会指出第一个没有通过的测试用例以及出错的位置；在检查中
# 加上 `hint=1`（然后是 2、3）可以得到提示，最后一条是完整的做法。直接调用 bertlib 自己的函数是不
# 算数的。

# %% [markdown] lang="ja"
# # BERT を基礎から理解する
#
# *[English](../en/00_index.ipynb) · [中文](../zh/00_index.ipynb)*
#
# 12 本の短いノートブックで、BERT をいったん分解し、もう一度組み立て直します。題材は *Dive into
# Deep Learning*（d2l）の BERT の節です。どの手順も実行して書き換えられるコードで示し、テンソルの形
# 状はすべて表示し、主張はすべて計算で確かめます。モデルのコードはテスト済みの小さなパッケージ
# `bertlib` にまとめてあり、ノートブックはそれをインポートして、ソースコードを見せながら説明します。
#
# このコレクションには同じソースから作られた 3 つの版があります：英語版（`notebooks/en/`）、中国語版
# （`notebooks/zh/`）、そしてこの日本語版（`notebooks/ja/`）です。
#
# 0. [**目次**](00_index.ipynb)（約 11 分）：このページです。内容の紹介、ノートブックの動かし方、d2l
#    の章との対応をまとめています。
# 1. [**文脈に依存しない表現から文脈に依存する表現へ**](01_context.ipynb)（約 25 分）：
#    word2vec/GloVe、ELMo、GPT、BERT を比べ、実際の重みで多義性を測ります。
# 2. [**入力表現**](02_input_representation.ipynb)（約 30 分）：`<cls>` A `<sep>` B `<sep>` とセグメ
#    ントインデックス、WordPiece の貪欲な最長一致と語彙の学習方法、トークン埋め込み・セグメント埋め
#    込み・位置埋め込みを手で足し合わせます。
# 3. [**エンコーダの順伝播**](03_encoder.ipynb)（約 41 分）：エンコーダブロックを 1 つ手で計算して各
#    段階の形状を表示し、`valid_lens` によるマスク、アテンションのヒートマップを見ます。
# 4. [**マスク言語モデル**](04_masked_lm.ipynb)（約 41 分）：15% の規則と 80/10/10 の規則を数えて確
#    かめ、予測位置のベクトルを取り出し、重み付きの損失を計算します。
# 5. [**次文予測**](05_next_sentence.ipynb)（約 37 分）：「次の文」と「次の文ではない」の文ペア、
#    `<cls>` を読む出力層、パディング済みの事前学習用バッチ。
# 6. [**全体の組み立てと事前学習**](06_pretraining.ipynb)（約 37 分）：`BERTModel`、データパイプライ
#    ン、損失の合計、1 ステップの学習、その場で行う事前学習、論文の規模と私たちの規模の比較。
# 7. [**学んでいくモデルを見る**](07_watching_it_learn.ipynb)（約 32 分）：学習の様子をスナップシ
#    ョットごとに再生するタイムラプス（アテンション、マスクしたトークンの予測、次文予測）。さらに
#    先へ：動的パディング、長さによるまとめ、付属モデルの学習設定を授業の中で実行。
# 8. [**正直な評価**](08_evaluation.ipynb)（約 35 分）：プロジェクト付属の小さな BERT の、ホールドア
#    ウトデータでの正解率とその信頼区間、マスクしたトークンの予測、BERT による表現。さらに先へ：次文
#    予測の近道、テンプレートの漏洩。
# 9. [**本物の BERT**](09_real_bert.ipynb)（約 35 分）：オリジナルの BERT が加えているもの、実際の重
#    みの読み込み、参照実装との数値の一致、本物のアテンションヘッド。
# 10. [**ファインチューニング**](10_fine_tuning.ipynb)（約 32 分）：事前学習で何が得られるのかを、
#    ラベルに現れない単語についての設計した実験で確かめます。`<cls>` の上の `BERTClassifier`、事前学
#    習済みの重み・ランダムな重み・Bag-of-Words モデルの 5 つのシードでの比較、事前学習が単語をどこ
#    に置いたか、学習曲線。
# 11. [**タグ付け、質問応答、本物の BERT**](11_tagging_and_qa.ipynb)（約 30 分）：同じ対照のもとで
#    のトークンのタガーと、開始ベクトルと終了ベクトルによる質問応答、BERT 論文の証拠、本物の MiniLM
#    の重みのファインチューニング。
#
# どのノートブックも単独で読むことができ、ノートパソコンの CPU で動きます。GPU は要りません。タイ
# トルの後の分数は授業時間の見積もりです（演習は含みません）。英語版の本文を 1 分に 150 語で読み、
# コードは 1 行 5 秒、出力は 1 行 3 秒、ウィジェットは 1 つ 4 分とし、実行時間を足しています
# （`python tools/notebooks.py --estimate` が表示します）。どのノートブックも 45 分の授業 1 回に
# 収まります。各ノートブックの最後には演習があり、その一部には、答えを明かさずに正解（✓）か不正解
# （×）かを教えてくれるチェック用のセルが付いています。関数を実装する演習のチェックは、最初に失敗
# したテストケースとその箇所を示します。チェックに `hint=1`（続いて 2、3）を加えるとヒントが表示
# され、最後のヒントは完全な手順です。bertlib 自身の関数を呼び出して済ませた実装は合格になりませ
# ん。

# %% [markdown] lang="en"
# ## How to run
#
# From the repository's root folder, on a machine with Python 3.10+ and `make`:
#
# ```bash
# make lab    # installs the pinned versions into .venv and opens JupyterLab on notebooks/
# make test   # the same set-up, then the linter and every test, notebooks included
# ```
#
# English notebooks are in `notebooks/en/`, Chinese ones in `notebooks/zh/`, Japanese ones in
# `notebooks/ja/`.
#
# **What the three editions share, and what differs.** The code cells are the same in all
# editions, but for the first one, which sets the edition's language (and says what to install
# if `bertlib` is missing). So are the numbers they print: the same models, data and seeds give
# the same results. What differs is everything around the numbers: the explanations, the labels
# of printed lines, figures, tables and widgets, and each edition's default example sentences.
# The widgets of notebooks 02–05 start on an English sentence pair in the English edition and on
# a Chinese pair in the Chinese edition, and the fine-tuning widget of notebook 11 likewise starts
# on an English or a Chinese sentence. So what such a widget shows before you type anything, and
# a count the text takes from it, can differ between the editions. The corpus, the small model
# and the tasks are English and Chinese only, so the Japanese edition's widgets start on the
# English examples.
#
# The notebooks do not depend on the folder their kernel starts in, so they also run on
# JupyterHub, Colab or in VS Code: the README says how to install there. Run a
# notebook from the top (*Kernel → Restart Kernel and Run All Cells*): every random draw is
# seeded, so you get the printed outputs you see here. The outputs are saved in the files, so
# you can also just read them, e.g. on GitHub.
#
# Conventions: B = batch size, T = sequence length, H = `num_hiddens`, V = vocabulary size,
# P = prediction positions per sequence. The Chinese terms follow the
# [glossary](../GLOSSARY.md).

# %% [markdown] lang="zh"
# ## 如何运行
#
# 在仓库根目录下（需要 Python 3.10+ 和 `make`）：
#
# ```bash
# make lab    # 把固定版本的依赖装进 .venv，并在 notebooks/ 上打开 JupyterLab
# make test   # 同样的安装步骤，然后运行代码检查和全部测试（包括笔记本）
# ```
#
# 英文笔记本在 `notebooks/en/`，中文笔记本在 `notebooks/zh/`，日文笔记本在 `notebooks/ja/`。
#
# **三个版本哪些相同，哪些不同。** 三个版本的代码单元格完全相同，只有第一个除外：它设置本版本的
# 语言（如果没有安装 `bertlib`，还会说明该安装什么）。打印出来的数字也完全相同：模型、数据和
# 随机种子都一样，结果自然一样。不同的是数字以外的一切：讲解文字，打印结果、图、表格和小部件中的
# 文字，以及各版本默认的示例句子。笔记本 02–05 中的小部件，英文版默认显示一对英文句子，中文版
# 默认显示一对中文句子；笔记本 11 中的微调小部件也是如此，默认分别显示一个英文句子和一个中文句子。
# 因此，在你输入任何内容之前，这些小部件显示的结果，以及正文从中数出的数字，各版本可能不同。
# 语料库、小模型和各项任务都只有英文和中文，所以日文版的小部件默认显示英文示例。
#
# 笔记本不依赖内核启动时所在的文件夹，所以在 JupyterHub、Colab 或 VS Code 中同样可以运行，
# 安装方法见 README。请从头运行笔记本（*Kernel → Restart Kernel and Run All Cells*）：所有随机抽样
# 都设定了随机种子，你会得到与这里相同的输出。输出已经保存在文件里，所以也可以不运行、直接阅读（例
# 如在 GitHub 上）。
#
# 记号约定：B = 批量大小，T = 序列长度，H = `num_hiddens`，V = 词表大小，P = 每个序列的预测位置数。
# 中文术语以[术语表](../GLOSSARY.md)为准。

# %% [markdown] lang="ja"
# ## 動かし方
#
# リポジトリのルートフォルダで（Python 3.10 以上と `make` が必要です）：
#
# ```bash
# make lab    # 固定したバージョンを .venv にインストールし、notebooks/ で JupyterLab を開く
# make test   # 同じ準備をしてから、リンターとすべてのテスト（ノートブックを含む）を実行する
# ```
#
# 英語版のノートブックは `notebooks/en/`、中国語版は `notebooks/zh/`、日本語版は `notebooks/ja/` に
# あります。
#
# **3 つの版で共通のもの、違うもの。** コードセルは 3 つの版で同じです。例外は最初のセルだけで、これ
# は版の言語を設定します（`bertlib` がインストールされていなければ、何を入れればよいかも示します）。
# 表示される数値も同じです。モデルもデータも乱数シードも同じなので、結果も同じになります。違うのは数
# 値以外のすべて、つまり説明の文章と、表示される行・図・表・ウィジェットのラベル、そして各版の既定の
# 例文です。ノートブック 02〜05 のウィジェットは、英語版では英語の文ペア、中国語版では中国語の文ペア
# から始まります。ノートブック 11 のファインチューニングのウィジェットも同様に、英語または中国語の文
# から始まります。そのため、何も入力する前にウィジェットが示すものや、本文がそこから数える個数は、版
# によって異なることがあります。
#
# **日本語版のモデルとデータについて。** このコレクションのコーパス、小さなモデル、ファインチューニ
# ングのタスクは英語と中国語の 2 言語のままで、日本語版のために学習し直してはいません。モデルは日本
# 語を知らず、かなは語彙にないので `<unk>` になってしまいます。そこで日本語版のウィジェットは、モデ
# ルが知っている英語の例文（英語版と同じもの）から始まります。説明やラベルは日本語ですが、モデルに読
# ませる例文は英語のままです。英語の文を書き換えて試すのはもちろん、中国語の文を入力して試すこともで
# きます。
#
# ノートブックはカーネルが起動したフォルダに依存しないので、JupyterHub、Colab、VS Code でも動きま
# す。そこでのインストール方法は README にあります。ノートブックは先頭から実行してください（*Kernel
# → Restart Kernel and Run All Cells*）。乱数を引く箇所にはすべて乱数シードを設定してあるので、ここ
# に表示されているのと同じ出力が得られます。出力はファイルに保存されているので、実行せずに（たとえ
# ば GitHub 上で）読むだけでもかまいません。
#
# 記法：B = バッチサイズ、T = シーケンス長、H = `num_hiddens`、V = 語彙サイズ、P = シーケンスあたり
# の予測位置の数。日本語の用語は[用語集](../GLOSSARY.md)に従います。

# %% [markdown] lang="en"
# ## Map of the chapter
#
# | d2l's BERT section | notebook |
# | --- | --- |
# | Context-independent → context-sensitive; task-specific → task-agnostic; BERT | 01 |
# | Input representation (`get_tokens_and_segments`, `BERTEncoder`) | 02, 03 |
# | Pretraining tasks: masked language modeling (`MaskLM`) | 04 |
# | Pretraining tasks: next sentence prediction (`NextSentencePred`) | 05 |
# | Putting it all together (`BERTModel`), and the chapter's pretraining sections | 06 |
# | Beyond the chapter: evaluating the pretrained model on held-out data | 08 |
# | Beyond the chapter: the original BERT and its released weights | 09 |
# | The chapter's next sections: fine-tuning for sequence- and token-level tasks | 10 |
# | Summary and exercises | the end of every notebook |

# %% [markdown] lang="zh"
# ## 与原书章节的对应关系
#
# | d2l 的 BERT 一节 | 笔记本 |
# | --- | --- |
# | 从上下文无关到上下文敏感；从特定于任务到任务无关；BERT | 01 |
# | 输入表示（`get_tokens_and_segments`、`BERTEncoder`） | 02、03 |
# | 预训练任务：掩蔽语言模型（`MaskLM`） | 04 |
# | 预训练任务：下一句预测（`NextSentencePred`） | 05 |
# | 整合代码（`BERTModel`），以及本章之后的预训练小节 | 06 |
# | 超出本章：在留出数据上评估预训练的模型 | 08 |
# | 超出本章：原始 BERT 及其公开的权重 | 09 |
# | 本章之后的几节：针对序列级和词元级任务的微调 | 10 |
# | 小结与练习 | 每个笔记本的末尾 |

# %% [markdown] lang="ja"
# ## d2l の章との対応
#
# | d2l の BERT の節 | ノートブック |
# | --- | --- |
# | 文脈に依存しない表現から文脈に依存する表現へ、タスク固有からタスク非依存へ、BERT | 01 |
# | 入力表現（`get_tokens_and_segments`、`BERTEncoder`） | 02、03 |
# | 事前学習タスク：マスク言語モデル（`MaskLM`） | 04 |
# | 事前学習タスク：次文予測（`NextSentencePred`） | 05 |
# | すべてをまとめる（`BERTModel`）、および章に続く事前学習の節 | 06 |
# | 章の外：事前学習したモデルをホールドアウトデータで評価する | 08 |
# | 章の外：オリジナルの BERT と公開された重み | 09 |
# | 章に続く節：シーケンスレベルとトークンレベルのタスクのためのファインチューニング | 10 |
# | まとめと演習 | 各ノートブックの最後 |

# %% [markdown] lang="en"
# ## The chapter's code in `bertlib`
#
# Every function and class of the chapter has a counterpart in `bertlib`, shown on screen (with
# `show_source`) where it is taught; in most of these sections an exercise asks you to write it
# yourself.
#
# * `get_tokens_and_segments` → `get_tokens_and_segments` (02 · One text or two)
# * `d2l.Vocab`, `d2l.tokenize` → `Vocab`, `WordPieceTokenizer` (02 · WordPiece)
# * `BERTEncoder` (constructor, embeddings) → `BERTEncoder.__init__`, `BERTEncoder.embed`
#   (02 · Three embeddings, one sum)
# * `d2l.TransformerEncoderBlock`, `BERTEncoder.forward` → `TransformerEncoderBlock`,
#   `BERTEncoder.forward` (03 · One block by hand)
# * `d2l.masked_softmax` (inside multi-head attention) → `key_padding_mask`,
#   `MultiHeadAttention.forward` (03 · Padding and `valid_lens`)
# * `_replace_mlm_tokens`, `_get_mlm_data_from_tokens` → `mask_tokens` (04 · The 15% and the
#   80/10/10 rule)
# * `MaskLM` → `MaskLM` (04 · The MLM head: gather, then predict)
# * `_get_next_sentence`, `_get_nsp_data_from_paragraph` → `get_next_sentence`, `make_nsp_pairs`
#   (05 · Sampling pairs)
# * `NextSentencePred` → `NextSentencePred` (05 · The NSP head reads `<cls>`)
# * `BERTModel` → `BERTModel` (06 · `BERTModel`)
# * `_read_wiki` → `read_wikitext` (06 · The chapter's data pipeline)
# * `_pad_bert_inputs` → `pad_bert_inputs` (06 · The chapter's data pipeline)
# * `_WikiTextDataset`, `load_data_wiki` → `make_pretrain_data`, `make_loader` (06 · The chapter's
#   data pipeline)
# * `_get_batch_loss_bert` → `bert_loss` (06 · The combined loss)
# * `train_bert` → `train_step`, `train_bert` (06 · One pretraining step, A short live run)
# * `get_bert_encoding` → `get_bert_encoding` (08 · BERT representations)
#
# Where `bertlib` departs from the chapter's code on purpose, the notebook that meets the
# difference says what it is and why:
#
# * **Data.** The chapter's WikiText-2 download no longer works (d2l-en issue #2588);
#   `bertlib` ships a small bilingual corpus and reads WikiText files with the same rules (06).
# * **Tokens.** WordPiece subwords instead of whole words with `min_freq` (02, 06).
# * **Attention masking.** Padded keys get the score `-inf` instead of `-1e6` before the
#   softmax (03); the weights come out the same.
# * **Random replacements.** The 10% of chosen tokens that are replaced by a random token draw
#   it from ordinary words only, never a special token such as `<cls>` (04).
# * **The MLM loss.** Weighted per slot with `reduction="none"`, so padded slots count for
#   nothing; the chapter's mean-reduced loss counts them (04, d2l-en issue #2582).
# * **NotNext pairs.** The replacement sentence comes from another paragraph, so it is never
#   the true next sentence by chance (05).
# * **Long pairs.** Pairs longer than `max_len` are truncated and counted, not dropped (05).
# * **Padding.** The chapter pads every pair to `max_len`; `train_bert` pads each mini-batch
#   only to its longest pair (`trim_padding`) and runs the encoder's token-wise layers on the
#   real tokens only (`fast_loss`), which changes no loss (06).
#
# The masking count is the chapter's: `max(1, round(0.15 × len(tokens)))`, with `<cls>` and
# `<sep>` counted in `len(tokens)` (04).

# %% [markdown] lang="zh"
# ## 本章代码在 `bertlib` 中的对应
#
# 本章的每个函数和类在 `bertlib` 中都有对应的实现，讲到它的地方会用 `show_source` 把源代码显示
# 出来；多数小节还配有一道练习，请你亲手把它写出来。
#
# * `get_tokens_and_segments` → `get_tokens_and_segments`（02 · 单个文本还是文本对）
# * `d2l.Vocab`、`d2l.tokenize` → `Vocab`、`WordPieceTokenizer`（02 · WordPiece）
# * `BERTEncoder`（构造函数、嵌入） → `BERTEncoder.__init__`、`BERTEncoder.embed`（02 · 三
#   种嵌入相加）
# * `d2l.TransformerEncoderBlock`、`BERTEncoder.forward` →
#   `TransformerEncoderBlock`、`BERTEncoder.forward`（03 · 亲手计算一个编码器块）
# * `d2l.masked_softmax`（在多头注意力中） →
#   `key_padding_mask`、`MultiHeadAttention.forward`（03 · 填充与 `valid_lens`）
# * `_replace_mlm_tokens`、`_get_mlm_data_from_tokens` → `mask_tokens`（04 · 15% 与 80/10/10 规则）
# * `MaskLM` → `MaskLM`（04 · 掩蔽语言模型的输出层：先取出，再预测）
# * `_get_next_sentence`、`_get_nsp_data_from_paragraph` →
#   `get_next_sentence`、`make_nsp_pairs`（05 · 采样句子对）
# * `NextSentencePred` → `NextSentencePred`（05 · 下一句预测的输出层读取 `<cls>`）
# * `BERTModel` → `BERTModel`（06 · `BERTModel`：一个编码器，两个输出层）
# * `_read_wiki` → `read_wikitext`（06 · 本章的数据流水线）
# * `_pad_bert_inputs` → `pad_bert_inputs`（06 · 本章的数据流水线）
# * `_WikiTextDataset`、`load_data_wiki` →
#   `make_pretrain_data`、`make_loader`（06 · 本章的数据流水线）
# * `_get_batch_loss_bert` → `bert_loss`（06 · 总损失）
# * `train_bert` → `train_step`、`train_bert`（06 · 一步预训练、一次简短的现场训练）
# * `get_bert_encoding` → `get_bert_encoding`（08 · BERT 表示：`get_bert_encoding`）
#
# `bertlib` 有意与本章代码不同的地方如下，讲到它的笔记本会说明差别及原因：
#
# * **数据。** 本章使用的 WikiText-2 已经无法下载（d2l-en issue #2588）；`bertlib` 自带一个小型双语
#   语料库，并按同样的规则读取 WikiText 文件（06）。
# * **词元。** 使用 WordPiece 子词，而不是按 `min_freq` 过滤的整词（02、06）。
# * **注意力掩码。** 在 softmax 之前，填充位置的键得到的分数是 `-inf` 而不是 `-1e6`（03）；
#   算出的注意力权重相同。
# * **随机替换。** 被选中的词元中有 10% 换成随机词元，这个随机词元只从普通词中抽取，绝不会是
#   `<cls>` 这样的特殊词元（04）。
# * **掩蔽语言模型损失。** 用 `reduction="none"` 逐个预测位置计算损失再加权，填充的预测位置不起
#   作用；本章按均值归约的损失则会把它们算进去（04，d2l-en issue #2582）。
# * **“不是下一句”的句子对。** 替换用的句子取自另一个段落，所以不会碰巧正是真正的下一句（05）。
# * **过长的句子对。** 长度超过 `max_len` 的句子对截断后保留并计数，而不是直接丢弃（05）。
# * **填充。** 本章把每个句子对都填充到 `max_len`；`train_bert` 只把每个小批量填充到其中最长的
#   句子对（`trim_padding`），编码器中逐词元计算的层也只在真实词元上运行（`fast_loss`），损失
#   不受影响（06）。
#
# 被掩蔽的词元个数与本章相同：`max(1, round(0.15 × len(tokens)))`，其中 `len(tokens)` 把 `<cls>`
# 和 `<sep>` 也算在内（04）。

# %% [markdown] lang="ja"
# ## 章のコードと `bertlib` の対応
#
# 章に出てくる関数とクラスには、すべて `bertlib` に対応する実装があり、それを教える箇所で
# （`show_source` によって）ソースコードを画面に示します。ほとんどの節には、それを自分で書いてみる演
# 習があります。
#
# * `get_tokens_and_segments` → `get_tokens_and_segments`（02・テキスト 1 つか 2 つか）
# * `d2l.Vocab`、`d2l.tokenize` → `Vocab`、`WordPieceTokenizer`（02・WordPiece）
# * `BERTEncoder`（コンストラクタ、埋め込み） → `BERTEncoder.__init__`、`BERTEncoder.embed`（02・3
#   つの埋め込み、1 つの和）
# * `d2l.TransformerEncoderBlock`、`BERTEncoder.forward` → `TransformerEncoderBlock`、
#   `BERTEncoder.forward`（03・エンコーダブロックを手で計算する）
# * `d2l.masked_softmax`（マルチヘッドアテンションの中） → `key_padding_mask`、
#   `MultiHeadAttention.forward`（03・パディングと `valid_lens`）
# * `_replace_mlm_tokens`、`_get_mlm_data_from_tokens` → `mask_tokens`（04・15% と 80/10/10 の規則）
# * `MaskLM` → `MaskLM`（04・マスク言語モデルの出力層：取り出してから予測する）
# * `_get_next_sentence`、`_get_nsp_data_from_paragraph` → `get_next_sentence`、`make_nsp_pairs`
#   （05・文ペアのサンプリング）
# * `NextSentencePred` → `NextSentencePred`（05・次文予測の出力層は `<cls>` を読む）
# * `BERTModel` → `BERTModel`（06・`BERTModel`）
# * `_read_wiki` → `read_wikitext`（06・章のデータパイプライン）
# * `_pad_bert_inputs` → `pad_bert_inputs`（06・章のデータパイプライン）
# * `_WikiTextDataset`、`load_data_wiki` → `make_pretrain_data`、`make_loader`（06・章のデータパイプ
#   ライン）
# * `_get_batch_loss_bert` → `bert_loss`（06・損失の合計）
# * `train_bert` → `train_step`、`train_bert`（06・事前学習の 1 ステップ、その場での短い学習）
# * `get_bert_encoding` → `get_bert_encoding`（08・BERT による表現）
#
# `bertlib` が意図して章のコードと変えている点は次のとおりです。その違いに出会うノートブックで、何が
# どう違い、なぜそうしたのかを説明します。
#
# * **データ。** 章で使う WikiText-2 はもうダウンロードできません（d2l-en issue #2588）。`bertlib`
#   には小さな 2 言語のコーパスが付属しており、WikiText のファイルも同じ規則で読み込みます（06）。
# * **トークン。** `min_freq` で絞り込んだ単語ではなく、WordPiece のサブワードを使います（02、06）。
# * **アテンションのマスク。** softmax の前に、パディングされたキーのスコアを `-1e6` ではなく
#   `-inf` にします（03）。得られる重みは同じです。
# * **ランダムな置き換え。** 選ばれたトークンのうち 10% はランダムなトークンに置き換えますが、その
#   トークンは通常の単語からだけ引き、`<cls>` のような特殊トークンは決して選びません（04）。
# * **マスク言語モデルの損失。** `reduction="none"` で予測位置ごとに損失を求めてから重みを掛けるの
#   で、パディングした予測位置は損失に効きません。章の平均で集約した損失では、それらも数に入ってしま
#   います（04、d2l-en issue #2582）。
# * **「次の文ではない」文ペア。** 置き換える文は別の段落から取るので、たまたま本当の次の文になって
#   しまうことはありません（05）。
# * **長すぎる文ペア。** `max_len` より長い文ペアは捨てずに、切り詰めて数えます（05）。
# * **パディング。** 章ではすべての文ペアを `max_len` までパディングします。`train_bert` は各ミニ
#   バッチをその中で最も長い文ペアまでしかパディングせず（`trim_padding`）、エンコーダのうちトークン
#   ごとに計算する層は実在のトークンの上でだけ実行します（`fast_loss`）。これで損失は変わりません
#   （06）。
#
# マスクするトークンの数は章と同じ `max(1, round(0.15 × len(tokens)))` で、`len(tokens)` には
# `<cls>` と `<sep>` も含めて数えます（04）。

# %% [markdown] lang="en"
# ## For instructors: presenting in class
#
# * **Full screen, no clutter:** *View → Presentation Mode* enlarges everything and hides the
#   side panels; *View → Simple Interface* shows one notebook at a time.
# * **Larger text** for the back row: *Settings → Theme → Increase Code Font Size* and
#   *Increase Content Font Size* (repeat as needed). No extension such as RISE is required.
# * **Pacing:** the cells are short on purpose; run them one at a time with Shift+Enter and
#   discuss each printed shape before moving on.
# * **Live changes:** every cell can be edited and re-run; a seed at the top of a cell makes its
#   numbers repeatable, so students can follow along on their own machines.
# * **Several languages in one room:** open the same notebook from `en/`, `zh/` and `ja/`; the
#   code and the printed numbers are the same, while the explanations, figures and widgets speak
#   each edition's language and the widgets start on each edition's own example sentences (in
#   the Japanese edition, the English ones, which the model knows).
# * **Exercises:** the check cells (✓/× with a hint) work well as short in-class quizzes.

# %% [markdown] lang="zh"
# ## 给教师：课堂演示
#
# * **全屏、无干扰：** *View → Presentation Mode* 会放大所有内容并隐藏侧边栏；*View → Simple
#   Interface* 一次只显示一个笔记本。
# * **更大的字号**，方便后排学生：*Settings → Theme → Increase Code Font Size* 以及 *Increase
#   Content Font Size*（可重复点击）。不需要安装 RISE 之类的扩展。
# * **节奏：** 单元格刻意写得很短；用 Shift+Enter 逐个运行，每打印出一个形状，先讨论清楚再往下
#   走。
# * **现场修改：** 每个单元格都可以修改后重新运行；单元格开头设定了随机种子，数字可以复现，学生
#   可以在自己的电脑上跟着操作。
# * **多语课堂：** 分别从 `en/`、`zh/` 和 `ja/` 打开同一个笔记本；代码和打印出的数字完全相同，
#   讲解文字、图和小部件则使用各自版本的语言，小部件默认的示例句子也用本版本的语言（日文版用模型
#   认识的英文句子）。
# * **练习：** 检查单元格（✓/× 并附提示）很适合用作课堂小测验。

# %% [markdown] lang="ja"
# ## 教える方へ：授業での提示
#
# * **全画面ですっきりと：** *View → Presentation Mode* ですべてが拡大され、サイドパネルが隠れます。
#   *View → Simple Interface* ではノートブックを 1 つずつ表示します。
# * **後ろの席にも見える大きな文字：** *Settings → Theme → Increase Code Font Size* と *Increase
#   Content Font Size*（必要なだけ繰り返します）。RISE などの拡張機能は要りません。
# * **進め方：** セルはわざと短くしてあります。Shift+Enter で 1 つずつ実行し、形状が表示されるたびに
#   話し合ってから先へ進んでください。
# * **その場で書き換える：** どのセルも書き換えて実行し直せます。セルの先頭で乱数シードを設定してい
#   るので数値は再現でき、学生は自分のマシンで同じ結果を追えます。
# * **複数の言語が混じる教室：** 同じノートブックを `en/`、`zh/`、`ja/` から開いてください。コードと
#   表示される数値は同じで、説明・図・ウィジェットはそれぞれの版の言語で示されます。ウィジェットの例
#   文は英語版と中国語版ではそれぞれの言語のもの、日本語版ではモデルが知っている英語のものです。
# * **演習：** チェック用のセル（✓/× とヒント）は、授業中の短い小テストに向いています。
