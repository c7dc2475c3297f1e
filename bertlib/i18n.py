"""Every user-facing string of the figures and widgets, in English and Simplified Chinese.

The notebooks come in two editions, ``notebooks/en`` and ``notebooks/zh``, with identical code;
a kernel runs in the notebook's folder, so the folder name picks the language.
"""

from __future__ import annotations

from pathlib import Path

LANGUAGES = ("en", "zh")

STRINGS: dict[str, dict[str, str]] = {
    # Shared controls and messages
    "sentence_a": {"en": "Sentence A", "zh": "句子 A"},
    "sentence_b": {"en": "Sentence B", "zh": "句子 B"},
    "optional": {"en": "(optional)", "zh": "（可选）"},
    "empty_text": {"en": "Type a sentence in A to start.", "zh": "请在句子 A 中输入文字。"},
    "need_b": {"en": "Next-sentence prediction needs a sentence B.",
               "zh": "下一句预测需要输入句子 B。"},
    "truncated": {
        "en": "The input had {total} tokens; it was cut to {kept} to fit max_len={max_len}.",
        "zh": "输入共有 {total} 个词元，已截断为 {kept} 个以适应 max_len={max_len}。",
    },
    "unknown": {"en": "{count} piece(s) not in the vocabulary are shown as {unk}.",
                "zh": "有 {count} 个词元不在词表中，显示为 {unk}。"},
    "error": {"en": "Cannot show this input: {message}", "zh": "无法显示此输入：{message}"},
    "token": {"en": "token", "zh": "词元"},
    "segment": {"en": "segment", "zh": "片段"},
    "position": {"en": "position", "zh": "位置"},
    # Input representation
    "emb_token": {"en": "token embedding", "zh": "词元嵌入"},
    "emb_segment": {"en": "segment embedding", "zh": "片段嵌入"},
    "emb_position": {"en": "position embedding", "zh": "位置嵌入"},
    "emb_sum": {"en": "sum = encoder input", "zh": "求和 = 编码器输入"},
    "emb_sum_norm": {"en": "LayerNorm(sum) = encoder input", "zh": "LayerNorm(求和) = 编码器输入"},
    "hidden_dim": {"en": "hidden dimension", "zh": "隐藏维度"},
    "emb_value": {"en": "value", "zh": "数值"},
    # Masking
    "mask_ratio": {"en": "mask ratio", "zh": "掩蔽比例"},
    "seed": {"en": "seed", "zh": "随机种子"},
    "resample": {"en": "Resample", "zh": "重新采样"},
    "tally_button": {"en": "Tally resamples", "zh": "统计多次采样"},
    "num_samples": {"en": "resamples", "zh": "采样次数"},
    "fate_mask": {"en": "→ mask token (80%)", "zh": "→ 掩码词元（80%）"},
    "fate_random": {"en": "→ random token (10%)", "zh": "→ 随机词元（10%）"},
    "fate_keep": {"en": "unchanged (10%)", "zh": "保持不变（10%）"},
    "fate_none": {"en": "not selected", "zh": "未被选中"},
    "chips_title": {
        "en": "{selected} of {candidates} tokens selected for prediction (seed {seed})",
        "zh": "{candidates} 个词元中选出 {selected} 个用于预测（随机种子 {seed}）",
    },
    "model_sees": {"en": "model sees", "zh": "模型看到"},
    "targets_title": {"en": "MLM targets (what the model must predict)",
                      "zh": "MLM 预测目标（模型需要预测的内容）"},
    "no_targets": {"en": "No position selected.", "zh": "没有选中任何位置。"},
    "target_original": {"en": "original token", "zh": "原词元"},
    "target_input": {"en": "input token", "zh": "输入词元"},
    "fate": {"en": "what happened", "zh": "处理方式"},
    "tally_stale": {"en": "Click “Tally resamples” to count fates over many draws.",
                    "zh": "点击“统计多次采样”以统计多次抽样的结果。"},
    "tally_selection_title": {"en": "How often each position is selected",
                              "zh": "每个位置被选中的频率"},
    "tally_selection_expected": {"en": "expected {selected}/{candidates} = {percent:.1f}%",
                                 "zh": "期望值 {selected}/{candidates} = {percent:.1f}%"},
    "tally_fates_title": {"en": "Fates of selected tokens over {samples} resamples",
                          "zh": "{samples} 次采样中被选中词元的处理方式"},
    "tally_fraction": {"en": "fraction", "zh": "比例"},
    "tally_resample_axis": {"en": "number of resamples", "zh": "采样次数"},
    "expected_value": {"en": "expected value", "zh": "期望值"},
    # Attention
    "layer": {"en": "layer", "zh": "层"},
    "head": {"en": "head", "zh": "头"},
    "mean_heads": {"en": "mean of heads", "zh": "各头平均"},
    "view": {"en": "view", "zh": "视图"},
    "view_one": {"en": "one head", "zh": "单个头"},
    "view_all": {"en": "all heads", "zh": "全部头"},
    "hide_specials": {"en": "hide special tokens", "zh": "隐藏特殊词元"},
    "query_token": {"en": "query token", "zh": "查询词元"},
    "attention_title": {"en": "Attention weights, layer {layer}, {head}",
                        "zh": "注意力权重，第 {layer} 层，{head}"},
    "head_name": {"en": "head {head}", "zh": "第 {head} 个头"},
    "attends_title": {"en": "Where “{token}” attends", "zh": "“{token}”关注哪里"},
    "query_axis": {"en": "query (attending token)", "zh": "查询（发出注意力的词元）"},
    "key_axis": {"en": "key (attended token)", "zh": "键（被关注的词元）"},
    "weight": {"en": "attention weight", "zh": "注意力权重"},
    "rows_not_renormalised": {"en": "special tokens hidden; rows no longer sum to 1",
                              "zh": "已隐藏特殊词元；每行之和不再为 1"},
    "all_heads_title": {"en": "All heads of layer {layer}", "zh": "第 {layer} 层的全部注意力头"},
    # NSP
    "swap": {"en": "Swap A and B", "zh": "交换 A 和 B"},
    "is_next": {"en": "IsNext", "zh": "是下一句"},
    "not_next": {"en": "NotNext", "zh": "不是下一句"},
    "probability": {"en": "probability", "zh": "概率"},
    "nsp_title": {"en": "Next-sentence prediction: P(IsNext) = {p:.3f}",
                  "zh": "下一句预测：P(是下一句) = {p:.3f}"},
    # Similarity
    "similarity_title": {"en": "Cosine similarity", "zh": "余弦相似度"},
    # Self-check exercises (bertlib.exercises). Hints must never contain the answer.
    "ex_correct": {"en": "✓ Correct.", "zh": "✓ 正确。"},
    "ex_missing": {"en": "… Replace None with your answer, then run the cell again.",
                   "zh": "… 请把 None 换成你的答案，然后重新运行这个单元格。"},
    "ex_wrong": {"en": "× Not yet. Hint: {hint}", "zh": "× 还不对。提示：{hint}"},
    "ex_hint_02_embedding_params": {
        "en": "add three tables: one vector per vocabulary entry, one per segment (A and B), one "
              "per position up to max_len = 1000.",
        "zh": "把三张表加起来：词表中每个词元一个向量，每个片段（A 和 B）一个向量，每个位置"
              "（直到 max_len = 1000）一个向量。",
    },
    "ex_hint_03_block_params": {
        "en": "count weights and biases: four H×H projections in attention, two layers in the "
              "FFN (H→1024→H), and a scale and a shift per LayerNorm (there are two).",
        "zh": "权重和偏置都要算：注意力中有四个 H×H 的投影，前馈网络有两层（H→1024→H），"
              "每个层规范化有一个缩放和一个平移（共两个）。",
    },
    "ex_hint_04_num_preds": {
        "en": "<cls> and <sep> are never chosen; take 15% of the other tokens and round to the "
              "nearest integer.",
        "zh": "<cls> 和 <sep> 永远不会被选中；取其余词元的 15%，四舍五入到整数。",
    },
    "ex_hint_05_nsp_pairs": {
        "en": "one pair for every two consecutive sentences of a paragraph; a NotNext pair "
              "replaces the second sentence but is still one pair.",
        "zh": "段落中每两个相邻的句子构成一对；NotNext 的句子对只是换掉了第二个句子，仍然算一对。",
    },
    "ex_hint_05_nsp_head_params": {
        "en": "a Linear H→H (weights and biases) followed by Tanh, then a Linear H→2; H = 768.",
        "zh": "先是一个 H→H 的全连接层（权重和偏置）加 Tanh，再是一个 H→2 的全连接层；H = 768。",
    },
    "ex_hint_06_mlm_logits": {
        "en": "mlm_Y_hat has the shape (B, P, V): B is the recipe's batch_size, P = 15% of "
              "max_len rounded to the nearest integer, V = len(tokenizer.vocab).",
        "zh": "mlm_Y_hat 的形状是 (B, P, V)：B 是训练配置中的 batch_size，P 是 max_len 的 15% "
              "四舍五入到整数，V = len(tokenizer.vocab)。",
    },
    "ex_hint_06_small_bert_params": {
        "en": "read the sizes from small_bert.config and add up the encoder (three embedding "
              "tables, then per block four H×H projections, the FFN H→ffn→H and two LayerNorms), "
              "the pooler (H→H), the MLM head (H→H, LayerNorm, H→V) and the NSP head (H→2). "
              "Every Linear layer has biases.",
        "zh": "从 small_bert.config 中读出各个尺寸，再把编码器（三张嵌入表；每个块中四个 H×H 的"
              "投影、前馈网络 H→ffn→H 和两个层规范化）、pooler（H→H）、掩蔽语言模型的输出层"
              "（H→H、层规范化、H→V）以及下一句预测的输出层（H→2）加起来。每个全连接层都有偏置。",
    },
    # Pretraining (bertlib.pretrain.LossPlot and notebook 06)
    "train_step": {"en": "step", "zh": "训练步数"},
    "train_loss": {"en": "loss", "zh": "损失"},
    "train_mlm_loss": {"en": "MLM loss", "zh": "掩蔽语言模型损失"},
    "train_nsp_loss": {"en": "NSP loss", "zh": "下一句预测损失"},
    "train_nsp_chance": {"en": "ln 2: NSP by coin toss", "zh": "ln 2：下一句预测靠掷硬币"},
    "train_full_run_title": {"en": "The shipped model's full run: {steps} steps, {minutes} min",
                             "zh": "随附模型的完整训练：{steps} 步，{minutes} 分钟"},
    # Notebook 01: context (figure of what each model sees, similarity titles)
    "ctx_figure_title": {"en": "Which tokens can the representation of each token depend on?",
                         "zh": "每个词元的表示可以依赖哪些词元？"},
    "ctx_w2v": {"en": "word2vec / GloVe:\nthe word alone", "zh": "word2vec / GloVe：\n只看词本身"},
    "ctx_elmo": {"en": "ELMo:\ntwo one-way LSTMs", "zh": "ELMo：\n两个单向 LSTM"},
    "ctx_gpt": {"en": "GPT:\nleft context only", "zh": "GPT：\n只看左侧上下文"},
    "ctx_bert": {"en": "BERT:\nboth sides at once", "zh": "BERT：\n同时看两侧"},
    "ctx_w2v_use": {"en": "lookup table,\none vector per word", "zh": "查表，\n每个词一个向量"},
    "ctx_elmo_use": {"en": "frozen features for a\ntask-specific model",
                     "zh": "冻结的特征，\n送入特定于任务的模型"},
    "ctx_gpt_use": {"en": "Transformer decoder,\nfine-tuned", "zh": "Transformer 解码器，\n微调"},
    "ctx_bert_use": {"en": "Transformer encoder,\nfine-tuned", "zh": "Transformer 编码器，\n微调"},
    "ctx_seen": {"en": "seen", "zh": "可见"},
    "ctx_seen_forward": {"en": "seen by the left-to-right LSTM only",
                         "zh": "只有从左到右的 LSTM 可见"},
    "ctx_seen_backward": {"en": "seen by the right-to-left LSTM only",
                          "zh": "只有从右到左的 LSTM 可见"},
    "ctx_unseen": {"en": "not seen", "zh": "不可见"},
    "ctx_rows": {"en": "representation of", "zh": "谁的表示"},
    "ctx_cols": {"en": "depends on", "zh": "依赖于"},
    "ctx_sim_static": {"en": "“{word}”: token embeddings only", "zh": "“{word}”：只用词元嵌入"},
    "ctx_sim_minilm": {"en": "“{word}” in MiniLM (real weights)",
                       "zh": "MiniLM（真实权重）中的“{word}”"},
    "ctx_sim_small": {"en": "“{word}” in the small pretrained model",
                      "zh": "小型预训练模型中的“{word}”"},
    "ctx_sim_random": {"en": "“{word}” with random weights", "zh": "随机权重下的“{word}”"},
    "ex_hint_01_gpt_context": {
        "en": "write out the BERT input sequence of sentence A with get_tokens_and_segments and "
              "count from <cls> up to and including “bank”: a left-to-right model sees nothing "
              "to the right of the word.",
        "zh": "用 get_tokens_and_segments 写出句子 A 的 BERT 输入序列，从 <cls> 数到“bank”"
              "（包括它本身）：从左到右的模型看不到这个词右边的任何词元。",
    },
    # Notebook 07: real BERT
    "real_act_title": {"en": "ReLU (the chapter) and GELU (the original BERT)",
                       "zh": "ReLU（本章）与 GELU（原始 BERT）"},
    "real_act_input": {"en": "input x", "zh": "输入 x"},
    "real_act_output": {"en": "activation", "zh": "激活值"},
    "real_head_title": {"en": "Layer {layer}, head {head}: mean weight {mass:.2f} on the {kind}",
                        "zh": "第 {layer} 层第 {head} 个头：{kind}上的平均权重为 {mass:.2f}"},
    "real_kind_prev": {"en": "previous token", "zh": "前一个词元"},
    "real_kind_next": {"en": "next token", "zh": "后一个词元"},
    "real_kind_sep": {"en": "[SEP] tokens", "zh": "[SEP] 词元"},
    "real_kind_cls": {"en": "[CLS] token", "zh": "[CLS] 词元"},
    "ex_hint_07_tied_saving": {
        "en": "an untied decoder has a weight matrix of its own, one row of H numbers per "
              "vocabulary entry; its bias exists either way. Take V and H from model.config.",
        "zh": "不共享时，解码器有自己的权重矩阵，词表中每个词元一行，每行 H 个数；偏置无论是否共享"
              "都存在。V 和 H 从 model.config 中读取。",
    },
}


def detect_language() -> str:
    """``"zh"`` inside a folder named ``zh`` (the Chinese notebooks), else ``"en"``."""
    return "zh" if Path.cwd().name == "zh" else "en"


def resolve_language(lang: str | None) -> str:
    """``lang`` itself when valid, :func:`detect_language` when None."""
    if lang is None:
        return detect_language()
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {list(LANGUAGES)} or None; got {lang!r}")
    return lang


def text(key: str, lang: str | None = None, **fmt) -> str:
    """The string ``key`` in ``lang``, with ``{placeholders}`` filled from ``fmt``."""
    lang = resolve_language(lang)
    if key not in STRINGS:
        raise ValueError(f"unknown text key {key!r}; known keys are listed in bertlib.i18n.STRINGS")
    template = STRINGS[key][lang]
    return template.format(**fmt) if fmt else template
