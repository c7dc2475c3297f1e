"""What ships with bertlib: the small pretrained BERT and its recorded figures."""

from collections import Counter

import pytest
import torch

from bertlib import evaluate_pretraining, load_small_bert, load_small_corpus, make_pretrain_data
from bertlib.assets import SMALL_BERT_DIR, small_bert_metrics
from bertlib.text.corpus import tokenize_paragraphs
from bertlib.weights.checkpoint import read_config


def test_shipped_small_bert_beats_the_baselines_on_held_out_data():
    model, tokenizer = load_small_bert()
    assert len(tokenizer.vocab) == model.config.vocab_size
    assert tokenizer.vocab.to_tokens([0, 1, 2, 3, 4]) == ["<pad>", "<unk>", "<cls>", "<sep>",
                                                          "<mask>"]
    assert (SMALL_BERT_DIR / "model.safetensors").stat().st_size <= 10 * 2**20
    recipe = read_config(SMALL_BERT_DIR)["metadata"]["recipe"]
    split = load_small_corpus(held_out=recipe["held_out_fraction"], seed=recipe["split_seed"])
    held_out = make_pretrain_data(tokenize_paragraphs(split.held_out, tokenizer.tokenize),
                                  tokenizer.vocab, recipe["max_len"],
                                  seed=recipe["held_out_data_seed"],
                                  groups=split.held_out_langs)  # NotNext within one language
    metrics = evaluate_pretraining(model, held_out)
    labels = held_out.mlm_labels[held_out.mlm_weights > 0].tolist()
    majority = Counter(labels).most_common(1)[0][1] / len(labels)
    assert metrics["mlm_majority_baseline"] == pytest.approx(majority)
    assert metrics["nsp_accuracy"] >= 0.70
    with torch.no_grad():  # per-class NSP accuracy, computed here in one batch
        _, _, nsp_Y_hat = model(held_out.tokens, held_out.segments, held_out.valid_lens)
    right = nsp_Y_hat.argmax(1) == held_out.nsp_labels
    for label, key in ((1, "nsp_accuracy_is_next"), (0, "nsp_accuracy_not_next")):
        rows = held_out.nsp_labels == label
        assert metrics[key] == pytest.approx(right[rows].float().mean().item())
        assert metrics[key] >= 0.6  # neither class is given up for the other
    assert metrics["mlm_accuracy"] >= 2 * majority
    # The shipped metrics file reports exactly this evaluation.
    shipped = small_bert_metrics()
    for key in ("nsp_accuracy", "nsp_accuracy_is_next", "nsp_accuracy_not_next", "mlm_accuracy",
                "mlm_majority_baseline"):
        assert shipped["held_out"][key] == pytest.approx(metrics[key], abs=1e-3)
