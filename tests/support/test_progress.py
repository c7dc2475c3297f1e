"""The training loops' progress bar: tqdm's, which in a notebook ends as the finished bar."""

import io
import warnings

import nbformat
import numpy as np
import PIL.Image
from nbclient import NotebookClient

from bertlib.support.progress import ProgressBar, bar_picture
from bertlib.viz.style import DPI, PAGE_WIDTH


def test_outside_a_notebook_it_is_the_text_bar():
    out = io.StringIO()
    bar = ProgressBar(total=4, desc="pretraining", file=out, ascii=True)
    for _ in range(4):
        bar.update(1)
    bar.close()
    assert "pretraining: 100%" in out.getvalue()
    assert "4/4" in out.getvalue()


def test_the_picture_shows_the_text_on_both_sides_of_the_bar():
    png = bar_picture("fine-tuning: 100%|##########| 5/5 [00:01<00:00, 4.9step/s]", 1.0)
    image = np.asarray(PIL.Image.open(io.BytesIO(png)).convert("RGB"))
    height, width, _ = image.shape
    assert width > 300 and 20 < height < 60
    green = (image == (0, 158, 115)).all(axis=-1).sum()  # the full bar, Okabe-Ito green
    assert green > 0.1 * width * height


def test_a_long_line_breaks_under_the_bar_within_the_page():
    """ja/06's losses beside the bar made a picture 1,132 px wide, shown scaled down to the
    output's 848 px, its text 9 px: the count, rate and losses go under the bar instead."""
    with warnings.catch_warnings():  # measured with the CJK font: no "Glyph missing"
        warnings.simplefilter("error")
        png = bar_picture("事前学習: 100%|██████████| 300/300 [00:19<00:00, 17.49ステップ/s, "
                          "マスク言語モデルの損失=2.384, 次文予測の損失=0.510, 文ペア/s=2233]", 1.0)
    width, height = PIL.Image.open(io.BytesIO(png)).size
    assert width <= round(PAGE_WIDTH * DPI) and height > 54  # two lines, shown at its own size
    short = bar_picture("fine-tuning: 100%|##########| 5/5 [00:01<00:00, 4.9step/s]", 1.0)
    assert PIL.Image.open(io.BytesIO(short)).size[1] <= 54  # one line where it fits


def test_a_saved_notebook_keeps_the_finished_bar():
    """In a kernel, the saved output is the bar's last state, 100% with its count and a
    picture, not the 0% it showed when it appeared."""
    code = ("from bertlib.support.progress import ProgressBar\n"
            "bar = ProgressBar(total=3, desc='pretraining')\n"
            "for _ in range(3):\n"
            "    bar.update(1)\n"
            "bar.close()")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    NotebookClient(nb, kernel_name="python3", timeout=60).execute()
    [output] = nb.cells[0].outputs
    assert "pretraining: 100%" in output.data["text/plain"]
    assert "3/3" in output.data["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" in output.data
    assert output.data["image/png"]
