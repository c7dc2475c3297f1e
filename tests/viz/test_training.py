"""The loss plot that grows while train_bert runs."""

import pytest

from bertlib.support.i18n import set_language
from bertlib.train import TrainHistory
from bertlib.viz import LossPlot


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


def test_loss_plot_language_defaults_to_the_edition_language():
    assert LossPlot().ax.get_xlabel() == "step"
    set_language("zh")
    assert LossPlot().ax.get_xlabel() == "训练步数"
    with pytest.raises(ValueError, match="lang must be one of"):
        LossPlot(lang="fr")
