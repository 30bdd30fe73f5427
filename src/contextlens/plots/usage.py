"""Figures of one word in context: the weights it gave, its cosines by layer, and its
static and contextual vectors in 2-D."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ._base import plain_text, plt

__all__ = ["weights_bar", "layer_cosines", "static_vs_contextual"]


@plain_text
def weights_bar(weights: Sequence[Mapping], *, title: str = "", highlight: int | None = None):
    """Bar chart of ``[{word, weight}, ...]`` (the weights one word gave its neighbours)."""
    words = [w["word"] for w in weights]
    values = [w["weight"] for w in weights]
    fig, ax = plt.subplots(figsize=(max(3.5, 0.6 * len(words) + 1.5), 2.8))
    colors = ["#c44e52" if i == highlight else "#4c72b0" for i in range(len(words))]
    bars = ax.bar(range(len(words)), values, color=colors)
    ax.bar_label(bars, labels=[f"{v:.3f}" for v in values], fontsize=8)
    ax.set_xticks(range(len(words)), words, rotation=30, ha="right")
    ax.set_ylim(0, max(1.0, max(values, default=0) * 1.15))
    ax.set_ylabel("weight")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


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
