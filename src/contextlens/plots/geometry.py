"""Figures of the geometry of a model's vectors: static vs contextual cosines of word pairs
(ranking), and anisotropy, intra-sentence similarity and self-similarity by layer. Each takes the
dict the analysis function returns and gives back a Figure."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ._base import plain_text, plt

__all__ = ["rank_scatter", "geometry_lines"]


@plain_text
def rank_scatter(result: Mapping, *, title: str = ""):
    """Static vs contextual cosine of each word pair; the pairs that moved most are named."""
    rows = result["pairs"]
    s = np.array([r["static"] for r in rows])
    c = np.array([r["contextual"] for r in rows])
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    ax.scatter(s, c, s=25, color="#4c72b0", zorder=3)
    lo, hi = min(s.min(), c.min()), max(s.max(), c.max())
    ax.plot([lo, hi], [lo, hi], color="grey", lw=0.7, ls=":")
    for r in result["moved"]:
        ax.annotate(f"{r['word1']}–{r['word2']} ({r['shift']:+g})", (r["static"], r["contextual"]),
                    textcoords="offset points", xytext=(4, 3), fontsize=7, color="#c44e52")
    ax.set_xlabel("static cosine (layer 0)")
    ax.set_ylabel(f"contextual cosine ({result['layer_name']})")
    rho, tau = result["spearman"], result["kendall_tau"]
    stats = f"ρ = {rho:.3f}, τ = {tau:.3f}" if rho is not None and tau is not None else "ρ, τ undefined"
    ax.set_title(title or f"{stats}, {result['inversions']} inversions", fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


@plain_text
def geometry_lines(result: Mapping, *, title: str = ""):
    """Anisotropy, intra-sentence similarity and mean self-similarity by layer; dashed:
    the anisotropy-adjusted values."""
    layers = result["layers"]
    x = range(len(layers))
    fig, ax = plt.subplots(figsize=(max(4.5, 0.5 * len(layers) + 2.5), 3.4))
    ax.plot(x, [r["anisotropy"] for r in layers], marker="o", color="grey", label="anisotropy")
    for key, color in (("self_similarity", "#c44e52"), ("intra_sentence", "#4c72b0")):
        label = key.replace("_", "-")
        ax.plot(x, [r[key] for r in layers], marker="o", color=color, label=label)
        ax.plot(x, [r[f"{key}_adjusted"] for r in layers], ls="--", marker=".", color=color,
                label=f"{label} (adjusted)")
    ax.axhline(0.0, color="black", lw=0.5)
    ax.set_xticks(list(x), [r["name"] for r in layers], rotation=30, ha="right")
    ax.set_ylabel("cosine")
    ax.legend(fontsize=7, loc="best")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
