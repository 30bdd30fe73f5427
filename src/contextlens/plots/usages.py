"""Figures of a word's usages: the weights one usage gave its neighbours, the cosines of two
usages by layer, its static and contextual vectors in 2-D, the cosine heatmap of many usages, the
spread of each word's usages and their projection coloured by cluster. Each takes the dict (or
arrays) the analysis function returns and gives back a Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ._base import heat, plain_text, plt, short

__all__ = [
    "weights_bar", "layer_cosines", "static_vs_contextual", "cosine_heatmap", "spread_bars",
    "projection_scatter", "AXIS_NAMES",
]

AXIS_NAMES = {"pca": "PC", "tsne": "t-SNE", "umap": "UMAP"}
_PALETTE = plt.get_cmap("tab10")


def _bars_done(fig, ax, names: Sequence[str], *, ylabel: str, title: str):
    """Finish a bar chart: the bars named (slanted), the y axis labelled, the title set, the top and
    right frame removed, laid out; returns ``fig``."""
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


@plain_text
def weights_bar(weights: Sequence[Mapping], *, title: str = "", highlight: int | None = None):
    """Bar chart of ``[{word, weight}, ...]`` (the weights one word gave its neighbours)."""
    words = [w["word"] for w in weights]
    values = [w["weight"] for w in weights]
    fig, ax = plt.subplots(figsize=(max(3.5, 0.6 * len(words) + 1.5), 2.8))
    colors = ["#c44e52" if i == highlight else "#4c72b0" for i in range(len(words))]
    bars = ax.bar(range(len(words)), values, color=colors)
    ax.bar_label(bars, labels=[f"{v:.3f}" for v in values], fontsize=8)
    ax.set_ylim(0, max(1.0, max(values, default=0) * 1.15))
    return _bars_done(fig, ax, words, ylabel="weight", title=title)


@plain_text
def layer_cosines(series: Mapping[str, Sequence[float]], layer_names: Sequence[str], *, title: str = ""):
    """Cosine between two usages at every layer, one line per pair (label → values)."""
    fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(layer_names) + 2), 3.2))
    for label, values in series.items():
        ax.plot(range(len(values)), values, marker="o", label=label)
    ax.set_xticks(range(len(layer_names)), layer_names, rotation=30, ha="right")
    ax.set_ylabel("cosine")
    ax.set_ylim(min(0.0, *(min(v) for v in series.values())) - 0.05, 1.05)
    ax.axhline(1.0, color="grey", lw=0.6, ls=":")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    if max(map(len, series), default=0) > 20:  # long labels: the legend goes right of the axes
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False)
    else:
        ax.legend(fontsize=8, loc="lower left")
    return fig


@plain_text
def static_vs_contextual(
    points: np.ndarray, labels: Sequence[str], kinds: Sequence[str], *,
    arrows: Sequence[tuple[int, int]] = (), title: str = "",
):
    """2-D scatter of projected vectors.

    ``points`` is ``(n, 2)``; ``kinds[i]`` ("static", "contextual", "probe"...) picks the
    marker; ``arrows`` are (from, to) index pairs, drawn from a static vector to its
    contextualised version.
    """
    styles = {"static": ("o", "#4c72b0"), "contextual": ("*", "#c44e52"), "probe": ("s", "#55a868")}
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    for kind in dict.fromkeys(kinds):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        marker, color = styles.get(kind, ("^", "#8172b2"))
        ax.scatter(points[idx, 0], points[idx, 1], marker=marker, color=color, s=60, label=kind, zorder=3)
    for i, label in enumerate(labels):
        ax.annotate(label, points[i], textcoords="offset points", xytext=(4, 4), fontsize=8)
    for a, b in arrows:
        ax.annotate("", points[b], points[a], arrowprops={"arrowstyle": "->", "color": "grey", "lw": 0.8})
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


@plain_text
def cosine_heatmap(matrix, labels: Sequence[str], *, names: Sequence[str] | None = None, title: str = ""):
    """Heatmap of a usage cosine matrix ``(n, n)``; ``labels`` are the sentences, ``names`` the
    usages' names (explore's ``labels``: ``S0``, ``S0 #1``; default their indices, from 0)."""
    m = np.asarray(matrix, dtype=np.float64)
    n = len(m)
    names = [str(i) for i in range(n)] if names is None else [str(x) for x in names]
    fig, ax = plt.subplots(figsize=(min(14, 3.5 + 0.55 * n), min(12, 2.5 + 0.45 * n)))
    rows = [f"{name}: {short(s, 36)}" for name, s in zip(names, labels, strict=True)]
    im = heat(ax, m, names, rows, vmin=min(0.0, m.min()), vmax=1.0)
    fig.colorbar(im, ax=ax, label="cosine", shrink=0.8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


@plain_text
def spread_bars(words: Sequence[Mapping], *, title: str = ""):
    """Bars of each word's spread (1 − mean cosine of its usages), with whiskers from the
    most similar pair (1 − max cosine) to the least similar one (1 − min cosine)."""
    names = [f"{w['word']} ({w['n_usages']})" for w in words]
    values = np.array([w["spread"] for w in words])
    low = values - np.array([1 - w["max_cosine"] for w in words])
    high = np.array([1 - w["min_cosine"] for w in words]) - values
    fig, ax = plt.subplots(figsize=(max(3.5, 0.8 * len(words) + 1.5), 3.2))
    ax.bar(range(len(words)), values, color="#4c72b0", yerr=[low, high], capsize=4, ecolor="grey")
    return _bars_done(fig, ax, names, ylabel="spread = 1 − cosine", title=title)


@plain_text
def projection_scatter(
    points, groups: Sequence, *, labels: Sequence[str] | None = None, method: str = "pca",
    group_name: str = "cluster", title: str = "",
):
    """2-D scatter of projected usages ``(n, 2)`` coloured by ``groups`` (cluster ids,
    words...); ``labels`` (e.g. sentences) annotate the points when there are 30 or fewer."""
    pts = np.asarray(points, dtype=np.float64)
    fig, ax = plt.subplots(figsize=(6, 4.8))
    for k, g in enumerate(dict.fromkeys(groups)):
        idx = [i for i, x in enumerate(groups) if x == g]
        ax.scatter(pts[idx, 0], pts[idx, 1], s=50, color=_PALETTE(k % 10), label=f"{group_name} {g}".strip(),
                   zorder=3)
    if labels is not None and len(labels) <= 30:
        for i, text in enumerate(labels):
            ax.annotate(short(text, 28), pts[i], textcoords="offset points", xytext=(4, 3), fontsize=7)
    axis = AXIS_NAMES.get(method, method)
    ax.set_xlabel(f"{axis} 1")
    ax.set_ylabel(f"{axis} 2")
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
