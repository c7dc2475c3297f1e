import json
from collections import Counter

import matplotlib
import pytest
import torch
import torch.nn.functional as F

from bertlib import BERTConfig, Vocab
from bertlib.checkpoint import read_config
from bertlib.corpus import load_small_corpus, tokenize_paragraphs
from bertlib.pretrain import (
    METRICS_FILE,
    SMALL_BERT_DIR,
    LossPlot,
    TrainHistory,
    chapter_loss,
    evaluate_pretraining,
    fast_loss,
    get_bert_encoding,
    init_model,
    keep_freed_memory,
    linear_cross_entropy,
    load_small_bert,
    make_loader,
    make_pretrain_data,
    train_bert,
    train_step,
)

matplotlib.use("Agg")

WORDS = "the cat sat on a mat and dog ran to park it was sunny day".split()
MAX_LEN = 16


@pytest.fixture
def toy_vocab() -> Vocab:
    return Vocab([WORDS])


@pytest.fixture
def toy_paragraphs() -> list:
    g = torch.Generator().manual_seed(0)
    return [[[WORDS[i] for i in torch.randint(len(WORDS), (n,), generator=g).tolist()]
             for n in torch.randint(2, 7, (4,), generator=g).tolist()] for _ in range(12)]


@pytest.fixture
def toy_data(toy_paragraphs, toy_vocab):
    return make_pretrain_data(toy_paragraphs, toy_vocab, MAX_LEN, seed=0, rounds=2)


def toy_model(vocab_size: int, seed: int = 0, **options):
    config = BERTConfig(vocab_size, 32, 64, 2, 2, 0.2, MAX_LEN, **options)
    return init_model(config, seed)


def test_make_pretrain_data_shapes_and_rounds(toy_paragraphs, toy_vocab, toy_data):
    one_round = make_pretrain_data(toy_paragraphs, toy_vocab, MAX_LEN, seed=0)
    n_pairs = sum(len(p) - 1 for p in toy_paragraphs)
    assert len(one_round) == n_pairs
    assert len(toy_data) == 2 * n_pairs  # rounds=2: fresh pairs and masks for every sentence
    assert toy_data.tokens.shape == (2 * n_pairs, MAX_LEN)
    assert toy_data.pred_positions.shape == (2 * n_pairs, round(0.15 * MAX_LEN))
    # The second round draws its own NSP partners / masks, not a copy of the first.
    assert not torch.equal(toy_data.tokens[:n_pairs], toy_data.tokens[n_pairs:])


def test_groups_keep_notnext_partners_within_a_group(toy_paragraphs, toy_vocab):
    """Paragraphs in two disjoint 'languages': with groups, no pair mixes them; without, many
    NotNext pairs do."""
    half = len(WORDS) // 2
    lang = ["x" if i % 2 else "y" for i in range(len(toy_paragraphs))]
    paragraphs = [[[w for w in s if (WORDS.index(w) < half) == (g == "x")] or [WORDS[0 if g == "x"
                   else -1]] for s in p] for p, g in zip(toy_paragraphs, lang, strict=True)]
    vocab_x = torch.tensor(toy_vocab[WORDS[:half]])

    def mixed(data) -> torch.Tensor:
        """Per pair: do its two segments come from different halves of WORDS?"""
        # Undo the masking first: a random replacement may come from the other half. (Padded
        # slots write <pad> at position 0, over <cls>: harmless.)
        tokens = data.tokens.scatter(1, data.pred_positions, data.mlm_labels)
        words = tokens >= 5  # ids 0-4 are the specials
        in_x = torch.isin(tokens, vocab_x)
        side = [(in_x & words & (data.segments == s)).any(1) for s in (0, 1)]
        return side[0] != side[1]

    grouped = make_pretrain_data(paragraphs, toy_vocab, MAX_LEN, seed=0, rounds=3, groups=lang)
    ungrouped = make_pretrain_data(paragraphs, toy_vocab, MAX_LEN, seed=0, rounds=3)
    assert len(grouped) == len(ungrouped)
    assert not mixed(grouped).any()
    assert mixed(ungrouped).sum() > len(ungrouped) / 8  # ~1/4: half of the NotNext pairs
    assert 0.4 < grouped.nsp_labels.float().mean() < 0.6
    with pytest.raises(ValueError, match="one label per paragraph"):
        make_pretrain_data(paragraphs, toy_vocab, MAX_LEN, seed=0, groups=lang[:-1])
    with pytest.raises(ValueError, match=r"too few in groups \{'z': 1\}"):
        make_pretrain_data(paragraphs, toy_vocab, MAX_LEN, seed=0, groups=[*lang[:-1], "z"])
    with pytest.raises(ValueError, match="got 0 paragraphs"):
        make_pretrain_data([], toy_vocab, MAX_LEN, seed=0)


def test_loader_batches_cover_the_data_once_per_epoch_in_seeded_order(toy_data):
    def batches(seed):
        return list(make_loader(toy_data, 8, seed=seed))

    a, b, c = batches(1), batches(1), batches(2)
    assert [t.shape for t in a[0]] == [(8, MAX_LEN), (8, MAX_LEN), (8,), (8, 2), (8, 2), (8, 2),
                                       (8,)]
    assert all(torch.equal(x, y) for bx, by in zip(a, b, strict=True)
               for x, y in zip(bx, by, strict=True))
    assert not torch.equal(a[0][0], c[0][0])
    rows = Counter(tuple(r) for batch in a for r in batch[0].tolist())
    assert rows == Counter(tuple(r) for r in toy_data.tokens.tolist())


def random_batch(vocab_size, B=6, T=MAX_LEN, P=4, seed=0):
    """A batch with random valid lengths and some padded prediction slots."""
    g = torch.Generator().manual_seed(seed)
    valid_lens = torch.randint(P + 2, T + 1, (B,), generator=g)
    tokens = torch.randint(5, vocab_size, (B, T), generator=g)
    segments = (torch.arange(T) >= valid_lens[:, None] // 2).long()
    pred_positions = torch.randint(1, P + 1, (B, P), generator=g)
    weights = (torch.rand(B, P, generator=g) < 0.6).float()
    weights[0] = 1.0  # at least one real slot
    labels = torch.randint(5, vocab_size, (B, P), generator=g)
    nsp = torch.randint(0, 2, (B,), generator=g)
    return tokens, segments, valid_lens, pred_positions * weights.long(), weights, labels, nsp


@pytest.mark.parametrize("tied", [False, True])
def test_fast_loss_matches_chapter_loss_and_gradients(tied):
    options = {"tie_mlm_decoder": True} if tied else {}
    model = toy_model(40, **options).train()  # dropout on: both must draw the same masks
    batch = random_batch(40)
    results = []
    for loss_fn in (chapter_loss, fast_loss):
        model.zero_grad()
        torch.manual_seed(7)
        loss = loss_fn(model, *batch)
        loss.total.backward()
        results.append((loss, {n: p.grad.clone() for n, p in model.named_parameters()}))
    (ref, ref_grads), (fast, fast_grads) = results
    for a, b in zip(ref, fast, strict=True):
        torch.testing.assert_close(a, b)
    for name, grad in ref_grads.items():
        torch.testing.assert_close(fast_grads[name], grad, msg=name)


def test_linear_cross_entropy_against_torch_with_weights():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(7, 5, generator=g, dtype=torch.float64, requires_grad=True)
    W = torch.randn(11, 5, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(11, generator=g, dtype=torch.float64, requires_grad=True)
    labels = torch.randint(11, (7,), generator=g)
    w = torch.tensor([1.0, 0.5, 2.0, 0.0, 1.0, 3.0, 0.25], dtype=torch.float64)
    ref = (F.cross_entropy(X @ W.T + b, labels, reduction="none") * w).sum() / w.sum()
    ref_grads = torch.autograd.grad(ref, (X, W, b))
    out = linear_cross_entropy(X, W, b, labels, w)
    torch.testing.assert_close(out, ref)
    for g_out, g_ref in zip(torch.autograd.grad(out, (X, W, b)), ref_grads, strict=True):
        torch.testing.assert_close(g_out, g_ref)


def test_linear_cross_entropy_backward_runs_once():
    X = torch.randn(3, 4, requires_grad=True)
    out = linear_cross_entropy(X, torch.randn(6, 4), torch.zeros(6), torch.tensor([0, 1, 2]),
                               torch.ones(3))
    out.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="only once"):
        out.backward()


def test_one_training_step_lowers_the_loss_on_a_fixed_batch(toy_data):
    batch = toy_data[:16].tensors()
    model = toy_model(len(WORDS) + 5).eval()
    before = fast_loss(model, *batch).total.item()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.eval()  # no dropout, so the only change between the two losses is the step
    train_step(model, optimizer, batch)
    after = fast_loss(model, *batch).total.item()
    untouched = fast_loss(toy_model(len(WORDS) + 5).eval(), *batch).total.item()
    assert untouched == pytest.approx(before)
    assert after < before - 0.05


def test_train_bert_is_deterministic_for_a_seed_and_learns(toy_data):
    def run(seed):
        model = toy_model(len(WORDS) + 5)
        history = train_bert(model, toy_data, num_steps=20, batch_size=16, lr=1e-2,
                             seed=seed, progress=False)
        return history, model

    (h1, m1), (h2, m2), (h3, _) = run(0), run(0), run(1)
    assert h1.mlm == h2.mlm and h1.nsp == h2.nsp
    assert all(torch.equal(a, b) for a, b in zip(m1.state_dict().values(),
                                                 m2.state_dict().values(), strict=True))
    assert h1.mlm != h3.mlm
    steps_per_epoch = -(-len(toy_data) // 16)
    epochs, rest = divmod(20, steps_per_epoch)
    assert len(h1.mlm) == 20 and h1.pairs == epochs * len(toy_data) + rest * 16
    assert not m1.training
    # 20 steps span several epochs of the toy data; the MLM loss falls from ~log(20).
    assert sum(h1.mlm[-5:]) / 5 < sum(h1.mlm[:5]) / 5 - 0.3


def test_keep_freed_memory_applies_on_glibc_linux():
    assert keep_freed_memory() is True


def test_loss_plot_tracks_history():
    plot = LossPlot(every=2)
    history = TrainHistory(mlm=[3.0, 2.0, 1.5], nsp=[0.7, 0.6, 0.65])
    plot.update(history)  # step 3: not a multiple of 2, nothing drawn
    assert list(plot.lines["mlm"].get_ydata()) == []
    history.mlm.append(1.2)
    history.nsp.append(0.5)
    plot.update(history)
    assert list(plot.lines["mlm"].get_ydata()) == [3.0, 2.0, 1.5, 1.2]
    assert list(plot.lines["nsp"].get_xdata()) == [1, 2, 3, 4]
    assert plot.ax.get_ylim()[1] >= 3.0
    history.num_steps = 5  # the last step is drawn even when it is not a multiple of every
    history.mlm.append(1.1)
    history.nsp.append(0.4)
    plot.update(history)
    assert list(plot.lines["mlm"].get_ydata()) == [3.0, 2.0, 1.5, 1.2, 1.1]


@pytest.mark.parametrize("lang, labels", [
    ("en", ("step", "loss", ["MLM loss", "NSP loss"])),
    ("zh", ("训练步数", "损失", ["掩蔽语言模型损失", "下一句预测损失"])),
])
def test_loss_plot_labels_follow_the_language(lang, labels):
    plot = LossPlot(lang=lang)
    legend = [t.get_text() for t in plot.ax.get_legend().get_texts()]
    assert (plot.ax.get_xlabel(), plot.ax.get_ylabel(), legend) == labels


def test_loss_plot_language_defaults_to_the_notebook_folder(tmp_path, monkeypatch):
    (tmp_path / "zh").mkdir()
    monkeypatch.chdir(tmp_path / "zh")
    assert LossPlot().ax.get_xlabel() == "训练步数"
    with pytest.raises(ValueError, match="lang must be one of"):
        LossPlot(lang="fr")


def test_get_bert_encoding_is_deterministic_and_restores_mode():
    model, tokenizer = load_small_bert()
    model.train()
    a = get_bert_encoding(model, tokenizer, "the train was crowded .", "她 坐 火 车 。")
    b = get_bert_encoding(model, tokenizer, "the train was crowded .", "她 坐 火 车 。")
    assert model.training
    assert a.shape == (1, 1 + 5 + 1 + 5 + 1, model.config.num_hiddens)
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    ids = tokenizer.vocab[["<cls>", "the", "train", "was", "crowded", ".", "<sep>"]]
    reference = model.eval().encoder(torch.tensor([ids]), torch.zeros(1, 7, dtype=torch.long))
    torch.testing.assert_close(get_bert_encoding(model, tokenizer, "The train was crowded."),
                               reference)


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
    shipped = json.loads((SMALL_BERT_DIR / METRICS_FILE).read_text(encoding="utf-8"))
    for key in ("nsp_accuracy", "nsp_accuracy_is_next", "nsp_accuracy_not_next", "mlm_accuracy",
                "mlm_majority_baseline"):
        assert shipped["held_out"][key] == pytest.approx(metrics[key], abs=1e-3)
