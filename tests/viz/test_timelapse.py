"""The time-lapse widget: what it draws at a step is what that snapshot's weights compute, the
losses are marked at the step, the controls move the step, every label is in the widget's
language, and bad input is refused; and the held-out statistics of bertlib.analysis.timelapse
against
loops written out by hand."""

import html
import re
import struct

import numpy as np
import pytest
import torch
from matplotlib.text import Text

from bertlib import load_small_bert, make_pretrain_data, tokenize_paragraphs
from bertlib.analysis.snapshots import SnapshotRecorder, Snapshots, load_snapshots
from bertlib.analysis.timelapse import snapshot_outputs, snapshot_stats
from bertlib.model import BERTModel
from bertlib.support.i18n import text
from bertlib.text.tokenizer import WordPieceTokenizer
from bertlib.train import TrainHistory, init_model, train_bert
from bertlib.viz import TimeLapseWidget
from bertlib.viz._widget import DEFAULT_TEXTS, InputNotice
from bertlib.viz.timelapse import TOKEN_GID
from bertlib.viz.timelapse_widget import DEFAULT_MASKED

PARAGRAPHS = [
    ["the crane lifted a heavy steel beam", "then it put the beam on the roof",
     "the bird sat on the bank of the river"],
    ["a crane flew over the river bank", "she went to the bank to get money",
     "then it flew over the roof"],
    ["起重机吊起了钢梁", "一只鹤飞过河岸", "她去银行取钱"],
]
TEXTS = {"text_a": PARAGRAPHS[0][0], "text_b": PARAGRAPHS[0][1]}
STEPS = [0, 2, 5]  # recorded during a run of 5 steps


@pytest.fixture(scope="module")
def tokenizer() -> WordPieceTokenizer:
    return WordPieceTokenizer.train([s for p in PARAGRAPHS for s in p] * 5, vocab_size=120)


@pytest.fixture(scope="module")
def run(tokenizer):
    """A model trained for 5 steps, its recorder (steps 0, 2, 5) and its history."""
    data = make_pretrain_data(tokenize_paragraphs(PARAGRAPHS, tokenizer.tokenize),
                              tokenizer.vocab, 40, seed=0, rounds=4)
    model = init_model(BERTModel(len(tokenizer.vocab), 16, 32, 2, 2, 0.0,
                                 max_len=40).config, seed=0)
    recorder = SnapshotRecorder(model, STEPS)
    history = train_bert(model, data, num_steps=5, batch_size=4, lr=1e-2, seed=0,
                         progress=False, callback=recorder)
    return model, recorder, history


def masked_input(tokenizer, a, b, positions):
    """<cls> A <sep> B <sep> as ids, written out here, with <mask> at ``positions``."""
    vocab = tokenizer.vocab
    tokens_a, tokens_b = tokenizer.tokenize(a), tokenizer.tokenize(b)
    ids = vocab[["<cls>", *tokens_a, "<sep>", *tokens_b, "<sep>"]]
    originals = [ids[p] for p in positions]
    for p in positions:
        ids[p] = vocab.mask_id
    segments = [0] * (len(tokens_a) + 2) + [1] * (len(tokens_b) + 1)
    return torch.tensor([ids]), torch.tensor([segments]), originals


def fresh_outputs(config, state, tokens, segments, positions):
    """A fresh model with the snapshot's weights loaded: its attentions, its probabilities at
    ``positions`` and P(IsNext)."""
    model = BERTModel.from_config(config)
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        X, attentions = model.encoder(tokens, segments, return_attention=True)
        probs = model.mlm(X, torch.tensor([positions]))[0].softmax(-1)
        is_next = model.nsp(model.hidden(X[:, 0]))[0].softmax(-1)[1]
    return attentions, probs, float(is_next)


def test_each_step_draws_what_that_snapshot_computes(run, tokenizer):
    model, recorder, history = run
    trained = {k: v.clone() for k, v in model.state_dict().items()}
    w = TimeLapseWidget(model, tokenizer, recorder, history, "en", **TEXTS)
    positions = [w.mask_a.value, w.mask_b.value]
    tokens, segments, originals = masked_input(tokenizer, *TEXTS.values(), positions)
    assert w.outputs.tokens == tokenizer.vocab.to_tokens(tokens[0].tolist())
    for step in STEPS:
        attentions, probs, is_next = fresh_outputs(model.config, recorder.snapshots[step],
                                                   tokens, segments, positions)
        for layer, head in ((0, 0), (1, 1), (1, -1)):
            w.step.value, w.layer.value, w.head.value = step, layer, head
            ref = attentions[layer][0]
            ref = ref.mean(0) if head == -1 else ref[head]
            np.testing.assert_allclose(w.frame.weights, ref.numpy(), rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(w.plot.image.get_array(), ref.numpy(), rtol=1e-5,
                                       atol=1e-7)
        top = probs.topk(3)
        for p, guess in enumerate(w.frame.guesses):
            assert guess.tokens == tokenizer.vocab.to_tokens(top.indices[p].tolist())
            np.testing.assert_allclose(guess.probabilities, top.values[p].numpy(), rtol=1e-5)
            # Drawn: the bars' lengths, their tokens, the original's probability in the title.
            bars = w.plot.guess_bars[p].get_paths()
            np.testing.assert_allclose([b.vertices[:, 0].max() for b in bars],
                                       top.values[p].numpy(), rtol=1e-5)
            assert [t.get_text() for t in w.plot.guess_tokens[p]] == guess.tokens
            assert w.plot.guess_titles[p].get_text() == (
                f"Masked “{guess.original}”: its probability {probs[p, originals[p]]:.2f}")
        assert w.frame.is_next == pytest.approx(is_next, rel=1e-5)
        assert w.plot.nsp_title.get_text() == f"P(IsNext) = {is_next:.3f}"
    # The model keeps its own weights: the snapshots were only lent to it.
    assert all(torch.equal(v, trained[k]) for k, v in model.state_dict().items())


def test_the_marker_sits_at_the_chosen_step_on_the_run_losses(run, tokenizer):
    model, recorder, history = run
    w = TimeLapseWidget(model, tokenizer, recorder, history, "en", **TEXTS)
    for step in (5, 2):
        w.step.value = step
        assert list(w.plot.marker.get_xdata()) == [step, step]
        assert list(w.plot.dots.get_xdata()) == [step, step]
        np.testing.assert_allclose(w.plot.dots.get_ydata(),
                                   [history.mlm[step - 1], history.nsp[step - 1]])
        assert w.plot.step_title.get_text() == f"Training step {step} of 5"
    w.step.value = 0  # before training: the marker, and no loss yet
    assert list(w.plot.marker.get_xdata()) == [0, 0] and len(w.plot.dots.get_xdata()) == 0
    lines = w.plot.loss_lines
    np.testing.assert_allclose(lines["mlm"].get_ydata(), history.mlm)
    np.testing.assert_allclose(lines["nsp"].get_xdata(), [1, 2, 3, 4, 5])


def test_play_and_slider_move_the_step_together(run, tokenizer):
    model, recorder, history = run
    w = TimeLapseWidget(model, tokenizer, recorder, history, "en", **TEXTS)
    assert w.step.value == 5 and w.play.value == 2  # the trained model first
    last = w.image.value
    w.play.value = 0  # what the play button does, a step at a time
    assert w.step.value == 0 and w.frame.step == 0 and w.image.value != last
    w.play.value = 1
    assert w.step.value == 2 and w.frame.step == 2
    w.step.value = 5
    assert w.play.value == 2 and w.frame.step == 5
    assert (w.play.min, w.play.max) == (0, 2)


def test_the_model_runs_once_per_text_and_mask_not_per_step(run, tokenizer, monkeypatch):
    model, recorder, history = run
    w = TimeLapseWidget(model, tokenizer, recorder, history, "en", **TEXTS)
    calls = []
    original = type(model).forward
    monkeypatch.setattr(type(model), "forward", lambda self, *a, **k: (
        calls.append(1), original(self, *a, **k))[1])
    for step in (0, 2, 5):
        w.step.value = step
    w.layer.value, w.head.value = 1, -1
    assert calls == []
    w.mask_b.value = None  # one masked token left: every snapshot runs again
    assert len(calls) == len(STEPS) and len(w.frame.guesses) == 1
    assert not w.plot.ax_guesses[1].get_visible()


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_the_shipped_snapshots_on_the_default_pair(lang):
    """The default pair, its default masked words, which the shipped run guesses wrong (as a
    frequent token) at steps 50-300 and right at the last step."""
    model, tokenizer = load_small_bert()
    w = TimeLapseWidget(model, tokenizer, load_snapshots(), lang=lang)
    assert (w.text_a.value, w.text_b.value) == DEFAULT_TEXTS[lang] and w.message == ""
    masked = [w.encoded.tokens[p] for p in (w.mask_a.value, w.mask_b.value)]
    assert masked == list(DEFAULT_MASKED[lang])
    assert w.outputs.steps == (0, 50, 150, 300, 900, 3000)
    for s, guesses in zip(w.outputs.steps, w.outputs.guesses, strict=True):
        for guess in guesses:
            if s in (50, 150, 300):
                assert guess.tokens[0] != guess.original, (s, guess)
            if s == 3000:
                assert guess.tokens[0] == guess.original, (s, guess)
    # Every text inside the figure at the last step, whose title is the longest (four digits
    # twice): the Japanese title once ran off the right edge.
    fig = w.plot.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip():
            box = t.get_window_extent(renderer)
            assert box.x0 >= -1 and box.x1 <= fig.bbox.width + 1, (lang, t.get_text(), box)
            assert box.y0 >= -1 and box.y1 <= fig.bbox.height + 1, (lang, t.get_text(), box)


def test_chinese_labels_in_the_chinese_widget(run, tokenizer, tmp_path):
    model, recorder, history = run
    w = TimeLapseWidget(model, tokenizer, recorder, history, "zh", **TEXTS)
    assert (w.step.description, w.layer.description, w.head.description) == ("训练步", "层", "头")
    assert (w.mask_a.description, w.mask_b.description) == ("在 A 中掩蔽", "在 B 中掩蔽")
    assert w.mask_b.options[-1] == ("不掩蔽", None)
    assert dict(w.head.options)["各头平均"] == -1
    w.step.value = 2
    plot = w.plot
    assert plot.step_title.get_text() == "训练第 2 步（共 5 步）"
    assert plot.ax_map.get_title() == "注意力权重：层 0、头 0"
    assert plot.nsp_title.get_text().startswith("P(是下一句) = ")
    assert plot.guess_titles[0].get_text().startswith(f"被掩蔽的“{w.frame.guesses[0].original}”")
    assert plot.ax_loss.get_xlabel() == "训练步数" and plot.ax_loss.get_ylabel() == "损失"
    legend = [t.get_text() for t in plot.ax_loss.get_legend().get_texts()]
    assert legend == ["掩蔽语言模型损失", "下一句预测损失"]
    assert [b.description for b in w.save_buttons.values()] == ["保存为 PNG", "保存为 SVG",
                                                                "保存为 PDF"]
    svg = w.save(tmp_path / "t.svg").read_text("utf-8")
    # Every text of the figure is Chinese, a token (the guesses are marked as tokens), a
    # number or a formula's letters.
    tokens = {t.get_text() for ts in plot.guess_tokens for t in ts} | set(w.outputs.tokens)
    assert re.findall(rf'<g id="{TOKEN_GID}">', svg)
    for shown in map(html.unescape, re.findall(r"<text[^>]*>([^<]*)</text>", svg)):
        if shown not in tokens:  # a title quotes the masked token
            assert not re.findall(r"[A-Za-z]{2,}", re.sub("“[^”]*”", "", shown)), shown


def test_saving_saves_the_figure_on_screen(run, tokenizer, tmp_path, monkeypatch):
    model, recorder, history = run
    w = TimeLapseWidget(model, tokenizer, recorder, history, "zh", **TEXTS)
    data = w.save(tmp_path / "t.png", dpi=200).read_bytes()
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == pytest.approx(tuple(w.plot.figure.get_size_inches() * 200), abs=1)
    assert w.save(tmp_path / "t.pdf").read_bytes().startswith(b"%PDF")
    monkeypatch.chdir(tmp_path)
    w.save_buttons["svg"].click()
    assert (tmp_path / "time-lapse.svg").exists()
    assert w.message == text("saved", "zh", path="time-lapse.svg")
    assert w.picture() == w.plot.png()  # the static picture (captioned in the bundle)


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_inputs_it_cannot_show_are_explained_in_its_language(run, tokenizer, lang):
    model, recorder, history = run
    w = TimeLapseWidget(model, tokenizer, recorder, history, lang, **TEXTS)
    w.text_b.value = "  "
    assert w.message == text("need_b", lang) and w.image.layout.display == "none"
    w.step.value = 0  # nothing drawn for a text that could not run: no stale figure
    assert w.message == text("need_b", lang) and w.image.layout.display == "none"
    w.text_b.value = TEXTS["text_b"]
    assert w.message == "" and w.image.layout.display is None
    w.mask_a.value = w.mask_b.value = None
    assert w.message == text("tl_need_mask", lang) and w.image.layout.display == "none"
    with pytest.raises(InputNotice, match=re.escape(text("save_hidden", lang))):
        w.save("x.png")
    w.step.value = 2  # no redraw of what is not there, no traceback
    assert w.message == text("tl_need_mask", lang)
    w.mask_a.value = w.mask_a.options[0][1]
    assert w.message == "" and w.frame.step == 2


def test_bad_arguments_are_refused_with_what_is_allowed(run, tokenizer, toy_model):
    model, recorder, history = run
    with pytest.raises(ValueError, match="history must be the TrainHistory"):
        TimeLapseWidget(model, tokenizer, recorder)
    with pytest.raises(ValueError, match="snapshots must be Snapshots .* or a SnapshotRecorder"):
        TimeLapseWidget(model, tokenizer, recorder.snapshots, history)
    snapshots = Snapshots(recorder.snapshots, history.mlm, history.nsp)
    with pytest.raises(ValueError, match="history is only for a SnapshotRecorder"):
        TimeLapseWidget(model, tokenizer, snapshots, history)
    with pytest.raises(ValueError, match="snapshots must hold at least one snapshot"):
        TimeLapseWidget(model, tokenizer, Snapshots({}, [1.0], [0.5]))
    other = toy_model(vocab_size=len(tokenizer.vocab))  # H = 32, not 16
    with pytest.raises(ValueError, match="the snapshot of step 0 does not fit model"):
        TimeLapseWidget(other, tokenizer, recorder, history)
    empty = SnapshotRecorder(model, [3])
    with pytest.raises(ValueError, match="snapshots must hold at least one snapshot"):
        TimeLapseWidget(model, tokenizer, empty, TrainHistory())
    with pytest.raises(ValueError, match="text_a must be a string"):
        TimeLapseWidget(model, tokenizer, recorder, history, text_a=3)


def test_snapshot_outputs_refuse_positions_past_the_input(run, tokenizer):
    """The widget offers only the text's tokens, one per sentence; a position past the input
    is what a direct call gets wrong."""
    model, recorder, _ = run
    w_enc = TimeLapseWidget(model, tokenizer, recorder, _, "en", **TEXTS).encoded
    with pytest.raises(ValueError, match=r"positions\[i\] must be an integer in"):
        snapshot_outputs(model, recorder.snapshots, w_enc, [99], tokenizer.vocab)


# --- statistics on many pairs ---------------------------------------------------------------


def test_snapshot_stats_against_loops_over_single_pairs(toy_model, toy_data, vocab):
    """Each pair alone, unpadded, its shares summed by plain loops over queries and keys."""
    model = toy_model(seed=1).eval()
    data = toy_data[:9]
    stats = snapshot_stats(model, data, vocab.sep_id, batch_size=4)  # batches padded unevenly
    L, nh = model.config.num_blks, model.config.num_heads
    sums, counts, guesses = np.zeros((4, L, nh)), np.zeros(3), []
    for i in range(len(data)):
        n = int(data.valid_lens[i])
        tokens, segments = data.tokens[i, :n].tolist(), data.segments[i, :n].tolist()
        with torch.no_grad():
            _, mlm, _, attentions = model(data.tokens[i:i + 1, :n], data.segments[i:i + 1, :n],
                                          pred_positions=data.pred_positions[i:i + 1],
                                          return_attention=True)
        guesses += [int(mlm[0, j].argmax()) for j in range(mlm.shape[1])
                    if data.mlm_weights[i, j] > 0]
        counts += [n - 1, n - 1, n]
        for layer in range(L):
            for head in range(nh):
                A = attentions[layer][0, head].numpy()
                for q in range(n):
                    if q > 0:
                        sums[0, layer, head] += A[q, q - 1]
                    if q < n - 1:
                        sums[1, layer, head] += A[q, q + 1]
                    for k in range(n):
                        sums[2, layer, head] += A[q, k] * (tokens[k] == vocab.sep_id)
                        sums[3, layer, head] += A[q, k] * (segments[k] != segments[q])
    expected = sums / counts[[0, 1, 2, 2], None, None]
    for which, name in enumerate(("previous", "next", "sep", "other_segment")):
        np.testing.assert_allclose(getattr(stats, name).numpy(), expected[which], rtol=1e-5,
                                   err_msg=name)
    assert stats.guesses.tolist() == guesses


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lone_surrogate_in_a_text_box_gets_a_notice(run, tokenizer, lang):
    """Before: TypeError: TextInputSequence must be str, out of the text box's callback."""
    model, recorder, history = run
    w = TimeLapseWidget(model, tokenizer, recorder, history, lang, **TEXTS)
    w.text_b.value = "\ud800"
    assert w.message == text("lone_surrogate", lang, box=text("sentence_b", lang),
                             code="\\ud800")
    assert w.image.layout.display == "none"
    w.text_b.value = TEXTS["text_b"]
    assert w.message == "" and w.image.layout.display is None
