"""What the learner sees: figures (``plot_*`` returns a matplotlib ``Figure``), tables, and
widgets that redraw the same figures in place. Nothing here is needed to train a model."""

from bertlib.viz import fonts  # noqa: F401 (first: it imports matplotlib, quietly)
from bertlib.viz.attention import (
    AllHeadsPlot,
    AttentionPlot,
    AttentionView,
    plot_all_heads,
    plot_attention,
)
from bertlib.viz.attention_widget import AttentionWidget
from bertlib.viz.embeddings import EmbeddingParts, EmbeddingPlot, plot_input_representation
from bertlib.viz.finetune import FineTunePlot, FineTuneWidget, ScoredClassifier
from bertlib.viz.masks import (
    ChipsPlot,
    MaskTally,
    TallyPlot,
    plot_mask_chips,
    plot_mask_tally,
    tally_masks,
)
from bertlib.viz.modelview import ModelViewPlot, plot_model_view
from bertlib.viz.nsp import NSPPlot, plot_nsp
from bertlib.viz.querykey import QueryKeyPlot, QueryKeySteps, plot_query_key, query_key_steps
from bertlib.viz.similarity import plot_similarity
from bertlib.viz.style import new_figure
from bertlib.viz.timelapse import TimeLapsePlot
from bertlib.viz.timelapse_widget import TimeLapseWidget
from bertlib.viz.training import LossPlot
from bertlib.viz.widgets import InputRepresentationWidget, MaskingWidget, NSPWidget

__all__ = [
    "AllHeadsPlot", "AttentionPlot", "AttentionView", "AttentionWidget", "ChipsPlot",
    "EmbeddingParts", "EmbeddingPlot", "FineTunePlot", "FineTuneWidget",
    "InputRepresentationWidget", "LossPlot", "MaskTally", "MaskingWidget", "ModelViewPlot",
    "NSPPlot", "NSPWidget", "QueryKeyPlot", "QueryKeySteps", "ScoredClassifier", "TallyPlot",
    "TimeLapsePlot", "TimeLapseWidget", "new_figure", "plot_all_heads", "plot_attention",
    "plot_input_representation", "plot_mask_chips", "plot_mask_tally", "plot_model_view",
    "plot_nsp", "plot_query_key", "plot_similarity", "query_key_steps", "tally_masks",
]
