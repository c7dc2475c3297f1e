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
    # Self-check exercises (bertlib.exercises holds each exercise's hints)
    "ex_correct": {"en": "✓ Correct.", "zh": "✓ 正确。"},
    "ex_missing": {"en": "… Replace None with your answer, then run the cell again.",
                   "zh": "… 请把 None 换成你的答案，然后重新运行这个单元格。"},
    "ex_wrong": {"en": "× Not yet. Hint: {hint}", "zh": "× 还不对。提示：{hint}"},
    # Pretraining (bertlib.viz.LossPlot)
    "train_step": {"en": "step", "zh": "训练步数"},
    "train_loss": {"en": "loss", "zh": "损失"},
    "train_mlm_loss": {"en": "MLM loss", "zh": "掩蔽语言模型损失"},
    "train_nsp_loss": {"en": "NSP loss", "zh": "下一句预测损失"},
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
