"""Matplotlib figures. Each function takes data (as the analysis functions return it) and
returns a Figure; :func:`save_figure` writes PNG, SVG or PDF by the file's suffix,
atomically.

The figures live in submodules named by subject, as the views are (``usages``: a word's usages,
one or many; ``attention``: attention grids; ``geometry``: pair rankings and layer-wise geometry;
``predict``: the logit lens and occlusion; ``bias``: the bias audit; ``explain``: inside a layer;
``probes``: what each layer knows); everything is re-exported
here, so ``from contextlens import plots; plots.save_figure(...)`` is the way to use them.

Floor 9 (ARCHITECTURE.md): imports only ``errors`` and ``files`` of contextlens, with matplotlib
and numpy: a figure takes the plain data an analysis returns, never an encoder or an Encoding.
"""

from ._base import FIGURE_FORMATS, figure_format, save_figure, short
from .attention import attention_heads, attention_matrix
from .bias import effect_sizes
from .explain import faithfulness_lines, patch_lines, sublayer_bars, tuned_lens_lines
from .geometry import geometry_lines, rank_scatter
from .predict import lens_ranks, occlusion_lines
from .probes import cka_heatmap, probe_lines
from .usages import (
    AXIS_NAMES,
    cosine_heatmap,
    layer_cosines,
    projection_scatter,
    spread_bars,
    static_vs_contextual,
    weights_bar,
)

__all__ = [
    "save_figure", "figure_format", "short", "weights_bar", "layer_cosines", "static_vs_contextual",
    "cosine_heatmap", "spread_bars", "projection_scatter", "attention_heads", "attention_matrix",
    "rank_scatter", "geometry_lines", "effect_sizes", "lens_ranks", "occlusion_lines", "FIGURE_FORMATS",
    "AXIS_NAMES",
    "sublayer_bars", "faithfulness_lines", "patch_lines", "tuned_lens_lines", "probe_lines", "cka_heatmap",
]
