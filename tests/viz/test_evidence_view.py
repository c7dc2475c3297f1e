"""The attention widget's evidence view: its grids against one forward pass per switched-off
head, its maps against the weights, the norm-based weights and the rollout computed here, the
chosen head marked, its words in the reader's language, and a notice for a model without
trained output layers."""

import re
import struct

import numpy as np
import pytest
import torch

from bertlib import load_small_bert
from bertlib.analysis.evidence import attention_norms, attention_rollout, heads_switched_off
from bertlib.data import IS_NEXT
from bertlib.support.i18n import text
from bertlib.viz import AttentionWidget
from bertlib.viz.evidence import plot_evidence, shown_labels
from bertlib.viz.style import MIN_FONT, PAGE_WIDTH

HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def small():
    return load_small_bert()


def widget_on(small, lang: str, masked: list[str]) -> AttentionWidget:
    """The widget on the default pair, in the evidence view, with the tokens ``masked``."""
    model, tokenizer = small
    w = AttentionWidget(model, tokenizer, lang)
    w.view.value = "evidence"
    by_token = {label.partition(": ")[2]: p for label, p in w.masked.options}
    w.masked.value = tuple(by_token[t] for t in masked)
    return w


def masked_input(w: AttentionWidget) -> tuple[torch.Tensor, torch.Tensor, list[int]]:
    """The widget's input with its chosen tokens replaced by <mask>, built here by hand."""
    ids = list(w.encoded.ids)
    positions = list(w.masked.value)
    for p in positions:
        ids[p] = w.tokenizer.vocab.mask_id
    return torch.tensor([ids]), torch.tensor([w.encoded.segments]), positions


@pytest.mark.parametrize(("lang", "masked"), [("en", ["final"]), ("en", ["scored", "final"]),
                                              ("zh", ["赛"])])
def test_the_grids_are_one_forward_pass_per_switched_off_head(small, lang, masked):
    w = widget_on(small, lang, masked)
    model = w.model
    tokens, segments, positions = masked_input(w)
    targets = torch.tensor([w.encoded.ids[p] for p in positions])
    pred = torch.tensor([positions])

    def answers(keep: torch.Tensor) -> tuple[torch.Tensor, float]:
        with torch.no_grad(), heads_switched_off(model, keep):
            _, mlm, nsp = model(tokens, segments, pred_positions=pred)
        return mlm[0].softmax(-1)[torch.arange(len(positions)), targets], \
            float(nsp.softmax(-1)[0, IS_NEXT])

    L, nh = model.config.num_blks, model.config.num_heads
    intact, intact_next = answers(torch.ones(L, nh))
    token_change, next_change = np.zeros((L, nh)), np.zeros((L, nh))
    for layer in range(L):
        for head in range(nh):  # one pass per head, not the batched path
            keep = torch.ones(L, nh)
            keep[layer, head] = 0
            prob, is_next = answers(keep)
            token_change[layer, head] = float((prob - intact).mean())
            next_change[layer, head] = is_next - intact_next
    plot = w.evidence_plot
    np.testing.assert_allclose(plot.cells[0].get_array(), token_change, atol=1e-5)
    np.testing.assert_allclose(plot.cells[1].get_array(), next_change, atol=1e-5)
    for numbers, change in zip(plot.numbers, (token_change, next_change), strict=True):
        written = [float(t.get_text().replace("\u2212", "-")) for t in numbers]
        np.testing.assert_allclose(written, change.ravel(), atol=5e-4)
    if len(masked) == 1:
        base = text("ev_mlm_one", lang, token=masked[0], p=float(intact.mean()))
    else:
        base = text("ev_mlm_many", lang, n=len(masked), p=float(intact.mean()))
    assert plot.titles[0].get_text() == f"{text('ev_mlm_title', lang)}\n{base}"
    assert plot.titles[1].get_text().endswith(text("ev_nsp_base", lang, p=intact_next))


@pytest.mark.parametrize(("layer", "head"), [(0, 0), (0, 1), (1, 1), (1, -1)])
def test_the_maps_are_the_weights_their_norm_based_rows_and_the_rollout(small, layer, head):
    w = widget_on(small, "en", ["scored"])
    w.layer.value, w.head.value = layer, head
    tokens, segments, _ = masked_input(w)
    with torch.no_grad():
        *_, weights = w.model(tokens, segments, return_attention=True)
    weights = torch.stack(weights, 1)  # (1, L, nh, T, T), straight from the model
    _, norms = attention_norms(w.model, tokens, segments)
    norms = norms / norms.sum(-1, keepdim=True)
    pick = (lambda a: a[0, layer].mean(0)) if head == -1 else (lambda a: a[0, layer, head])
    raw, norm, rollout = (image.get_array() for image in w.evidence_plot.images)
    np.testing.assert_allclose(raw, pick(weights).numpy(), atol=1e-6)
    np.testing.assert_allclose(norm, pick(norms).numpy(), atol=1e-6)
    np.testing.assert_allclose(norm.sum(-1), 1, atol=1e-5)
    np.testing.assert_allclose(rollout, attention_rollout(weights)[0, layer].numpy(), atol=1e-6)
    position = w.masked.value[0]
    assert w.evidence_plot.query_labels.tokens[position] == "<mask>"
    verts = w.evidence_plot.rows[0].get_paths()[0].vertices  # the masked row, outlined
    assert verts[:, 1].min() == position - 0.5 and verts[:, 1].max() == position + 0.5


@pytest.mark.parametrize(("layer", "head"), [(1, 0), (0, 1), (1, -1)])
def test_the_chosen_head_is_outlined_in_both_grids(small, layer, head):
    w = widget_on(small, "en", ["final"])
    w.layer.value, w.head.value = layer, head
    plot = w.evidence_plot
    renderer = plot.figure.canvas.get_renderer()
    for ax, outline in zip(plot.grids, plot.outlines, strict=True):
        box = outline.get_window_extent(renderer)
        inside = [(row, h) for row in range(2) for h in range(2)
                  if box.contains(*ax.transData.transform((h, row)))]
        assert inside == ([(layer, 0), (layer, 1)] if head == -1 else [(layer, head)])


def test_the_model_runs_for_a_new_text_or_mask_only(small):
    w = widget_on(small, "en", ["final"])
    runs = []
    hook = w.model.encoder.blks[0].register_forward_hook(lambda *_: runs.append(1))
    try:
        for layer, head in ((1, 0), (0, 1), (1, -1)):
            w.layer.value, w.head.value = layer, head
        w.hide_specials.value = True
        w.hide_specials.value = False
        assert runs == []
        w.masked.value = (w.masked.options[0][1],)
        assert len(runs) == 2  # the weights and norms; every head switched off, in one batch
        w.text_a.value = "Then Peter made a great play."
        assert len(runs) == 5  # the other views' run, then the evidence's two
        w.view.value = "one"
        w.text_a.value = "Then Peter made a play."  # not on screen: the evidence waits
        assert len(runs) == 6
    finally:
        hook.remove()


def test_masked_tokens_are_content_tokens_and_stay_chosen_across_texts(small):
    w = widget_on(small, "en", ["final"])
    labels = [label for label, _ in w.masked.options]
    assert not any(special in label for label in labels for special in ("<cls>", "<sep>"))
    assert w.evidence.tokens[w.masked.value[0]] == "<mask>"
    assert w.evidence.originals == ["final"]
    w.text_a.value = "Then Peter scored."  # "final" moves: position 13 is now another token
    assert w.masked.value == (13,) and w.evidence.originals == [w.encoded.tokens[13]]
    w.text_b.value = ""
    w.text_a.value = "Then"  # no position 13 any more: the first content token
    assert w.masked.value == (1,)
    fresh = AttentionWidget(w.model, w.tokenizer, "en")
    assert fresh.masked.value == (1,)  # by default, one token: the first of sentence A


def test_no_token_masked_leaves_the_nsp_grid_and_says_what_to_do(small):
    w = widget_on(small, "zh", ["赛"])
    w.masked.value = ()
    plot = w.evidence_plot
    assert not plot.grids[0].get_visible() and plot.grids[1].get_visible()
    assert [o.get_visible() for o in plot.outlines] == [False, True]
    assert plot.notices[0].get_text() == text("ev_none_masked", "zh")
    assert plot.rows[0].get_paths() == []
    assert w.message == ""


def test_hidden_special_tokens_leave_the_maps_and_say_so(small):
    w = widget_on(small, "zh", ["球"])
    full = w.evidence_plot.images[1].get_array().copy()
    w.hide_specials.value = True
    kept = w.shown
    shown = w.evidence_plot.images[1].get_array()
    assert shown.shape == (len(kept), len(kept)) and "<sep>" not in w.evidence_plot.key_labels[0]\
        .tokens
    np.testing.assert_array_equal(shown, full[np.ix_(kept, kept)])
    assert w.evidence_plot.note.get_text() == text("rows_not_renormalised", "zh")


def test_every_label_is_in_the_reader_language(small, tmp_path):
    w = widget_on(small, "zh", ["球"])
    plot = w.evidence_plot
    labels = [ax.get_title() for ax in plot.maps] + [t.get_text() for t in plot.titles]
    labels += [plot.colorbar.ax.get_ylabel(), plot.maps[0].get_ylabel()]
    grid_names = [t.get_text() for ax in plot.grids for t in ax.texts[:2]]  # then numbers
    assert grid_names == [text("head", "zh"), text("layer", "zh")] * 2
    labels += grid_names
    assert labels[:3] == [text("ev_raw_title", "zh", layer=0, head=text("head_name", "zh",
                                                                          head=0)),
                          text("ev_norm_title", "zh"), text("ev_rollout_title", "zh", layer=0)]
    for label in labels:
        assert HAN.search(label), label
        # No English word: the formulas' P, α, f, x and the quoted token are not words.
        assert not re.findall(r"[A-Za-z]{2,}", label.replace("“球”", "")), label
    assert w.view.options[-1] == (text("view_evidence", "zh"), "evidence")
    assert w.masked.description == text("masked_tokens", "zh")
    svg = w.save(tmp_path / "evidence.svg").read_text("utf-8")
    assert text("ev_norm_title", "zh") in svg and text("ev_mlm_title", "zh") in svg


def test_a_model_without_trained_output_layers_shows_a_notice(minilm):
    model, tokenizer = minilm
    assert set(model.untrained_heads) >= {"mlm", "nsp"}
    w = AttentionWidget(model, tokenizer, "zh", text_a="The bank of the river.",
                        text_b="She sat down.")
    runs = []
    hook = model.encoder.blks[0].register_forward_hook(
        lambda module, args, out: runs.append(out[0].shape[0]))
    try:
        w.view.value = "evidence"
    finally:
        hook.remove()
    assert runs == [1]  # the maps' one pass; nothing switched off
    plot = w.evidence_plot
    assert [ax.get_visible() for ax in plot.grids] == [False, False]
    # Nothing of the grids is drawn over the notices: no cells, numbers or outline.
    assert not any(a.get_visible() for a in (*plot.cells, *plot.outlines, *plot.numbers[0]))
    assert [t.get_text() for t in plot.notices] == [text("ev_no_mlm", "zh"),
                                                   text("ev_no_nsp", "zh")]
    assert w.evidence.token_change is None and w.evidence.is_next_change is None
    assert plot.images[0].get_array().shape == (len(w.encoded.ids),) * 2  # the maps stay
    assert w.evidence_image.layout.display is None and w.message == ""


@pytest.mark.parametrize("fmt", ["png", "svg", "pdf"])
def test_the_view_saves_and_leaves_its_picture_in_the_notebook(small, tmp_path, fmt):
    w = widget_on(small, "zh", ["赛"])
    before = w.evidence_plot.png()
    data = w.save(tmp_path / f"evidence.{fmt}", dpi=200).read_bytes()
    if fmt == "png":
        width, height = struct.unpack(">II", data[16:24])
        size = w.evidence_plot.figure.get_size_inches() * 200
        assert (width, height) == pytest.approx(tuple(size), abs=1)
    elif fmt == "svg":
        assert re.search(r"<text[^>]*>[^<]*[\u4e00-\u9fff]", data.decode("utf-8"))
    else:
        assert data.startswith(b"%PDF") and b"FontFile2" in data
    assert w.evidence_plot.png() == before
    assert w.picture() == before  # the picture, not a widget repr


def test_labels_that_fit_and_the_masked_ones_always(small):
    tokens = [f"w{i}" for i in range(10)]
    assert shown_labels(tokens, [], 1) == tokens
    assert shown_labels(tokens, [], 3) == ["w0", "", "", "w3", "", "", "w6", "", "", "w9"]
    assert shown_labels(tokens, [4], 3) == ["w0", "", "", "", "w4", "", "", "w7", "", ""]
    w = widget_on(small, "en", ["final"])  # 23 tokens: every one labelled, at MIN_FONT
    assert w.evidence_plot.key_labels[2].tokens == w.evidence.tokens
    assert all(t.get_fontsize() >= MIN_FONT for t in w.evidence_plot.query_labels.texts)
    assert w.evidence_plot.figure.get_size_inches()[0] <= PAGE_WIDTH


def test_bad_input_is_named(small):
    w = widget_on(small, "en", ["final"])
    with pytest.raises(ValueError, match=r"head must be an integer in \[-1, 1\]"):
        plot_evidence(w.evidence, 0, 2)
    with pytest.raises(ValueError, match=r"layer must be an integer in \[0, 1\]"):
        plot_evidence(w.evidence, 2, 0)
    figure = plot_evidence(w.evidence, 1, 0, "en")
    assert not any(a.get_animated() for a in figure.findobj())  # a still figure to show once


@pytest.mark.parametrize("lang", ["en", "zh", "ja"])
def test_no_text_overlaps_another_or_leaves_the_figure(small, lang):
    w = widget_on(small, lang, ["球"] if lang == "zh" else ["final"])  # ja shows English
    w.head.value = -1  # the longest title
    plot = w.evidence_plot
    renderer = plot.figure.canvas.get_renderer()
    texts = [ax.title for ax in plot.maps] + plot.titles + [plot.figure.texts[0]]
    boxes = [t.get_window_extent(renderer) for t in texts]
    figure = plot.figure.bbox
    for box, t in zip(boxes, texts, strict=True):
        assert figure.x0 <= box.x0 and box.x1 <= figure.x1, t.get_text()
        assert all(t.get_fontsize() >= MIN_FONT for t in texts)
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b)
    grids = [ax.get_window_extent(renderer) for ax in plot.grids]
    for box in boxes:
        assert not any(box.overlaps(grid) for grid in grids)
