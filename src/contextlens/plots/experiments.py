"""Figures of the experiments: usage cosine heatmaps, spreads, projected usages, attention
grids, static-vs-contextual pair rankings and layer-wise geometry. Each takes the dict (or
arrays) the analysis function returns and gives back a Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ._base import plain_text, plt, short

__all__ = [
    "cosine_heatmap", "spread_bars", "projection_scatter", "attention_heads", "attention_matrix",
    "rank_scatter", "geometry_lines", "AXIS_NAMES",
]

AXIS_NAMES = {"pca": "PC", "tsne": "t-SNE", "umap": "UMAP"}
_PALETTE = plt.get_cmap("tab10")


def _heat(ax, m: np.ndarray, xlabels, ylabels, *, cmap="viridis", vmin=None, vmax=None, annotate=None):
    im = ax.imshow(m, cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(xlabels)), xlabels, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(ylabels)), ylabels, fontsize=8)
    if annotate is None:
        annotate = m.size <= 150
    if annotate:
        for (r, c), v in np.ndenumerate(m):
            red, green, blue, _ = im.cmap(im.norm(v))
            light = 0.299 * red + 0.587 * green + 0.114 * blue > 0.5  # text contrasts with the cell
            ax.text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7, color="black" if light else "white")
    return im


@plain_text
def cosine_heatmap(matrix, labels: Sequence[str], *, names: Sequence[str] | None = None, title: str = ""):
    """Heatmap of a usage cosine matrix ``(n, n)``; ``labels`` are the sentences, ``names`` the
    usages' names (explore's ``labels``: ``S0``, ``S0 #1``; default their indices, from 0)."""
    m = np.asarray(matrix, dtype=np.float64)
    n = len(m)
    names = [str(i) for i in range(n)] if names is None else [str(x) for x in names]
    fig, ax = plt.subplots(figsize=(min(14, 3.5 + 0.55 * n), min(12, 2.5 + 0.45 * n)))
    rows = [f"{name}: {short(s, 36)}" for name, s in zip(names, labels, strict=True)]
    im = _heat(ax, m, names, rows, vmin=min(0.0, m.min()), vmax=1.0)
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
    ax.set_xticks(range(len(words)), names, rotation=30, ha="right")
    ax.set_ylabel("spread = 1 − cosine")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig


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
        ax.scatter(pts[idx, 0], pts[idx, 1], s=50, color=_PALETTE(k % 10), label=f"{group_name} {g}".strip(), zorder=3)
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


@plain_text
def attention_matrix(matrix, words: Sequence[str], *, special: Sequence[float] | None = None, title: str = ""):
    """Words × words heatmap (row = the word attending), plus a ``[special]`` column."""
    m = np.asarray(matrix, dtype=np.float64)  # (n, n)
    cols = list(words)
    if special is not None:
        m = np.hstack([m, np.asarray(special, dtype=np.float64)[:, None]])
        cols.append("[special]")
    fig, ax = plt.subplots(figsize=(min(14, 2.5 + 0.6 * len(cols)), min(12, 2 + 0.5 * len(words))))
    im = _heat(ax, m, cols, list(words), cmap="Blues", vmin=0.0, vmax=max(1e-9, m.max()))
    ax.set_xlabel("attended word")
    ax.set_ylabel("attending word")
    fig.colorbar(im, ax=ax, label="weight", shrink=0.8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


@plain_text
def attention_heads(result: Mapping, *, title: str = ""):
    """The weights one word gave every word: one row per (layer, head), then the mean over
    heads per layer and, when present, the rollout per layer (analysis.attribution dict)."""
    words = list(result["words"])
    per_head = np.asarray(result["per_head"], dtype=np.float64)  # (layers, heads, n)
    n_layers, heads, _ = per_head.shape
    names = result["layer_names"]
    panels = [("per head", per_head.reshape(n_layers * heads, -1),
               [f"{names[layer]} · h{h}" for layer in range(n_layers) for h in range(heads)],
               None if result.get("special_share") is None else np.ravel(result["special_share"]))]
    if heads > 1:
        panels.append(("mean over heads", np.asarray(result["mean"]), names, result.get("special_mean")))
    if result.get("rollout") is not None:
        panels.append(("rollout", np.asarray(result["rollout"]), names, result.get("rollout_special")))
    cols = words + (["[special]"] if panels[0][3] is not None else [])
    heights = [max(1.2, 0.28 * len(p[1]) + 0.6) for p in panels]
    fig, axes = plt.subplots(len(panels), 1, figsize=(min(14, 3 + 0.6 * len(cols)), sum(heights) + 1.2),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, (name, m, rows, special) in zip(axes[:, 0], panels, strict=True):
        if special is not None:
            m = np.hstack([m, np.asarray(special, dtype=np.float64)[:, None]])
        _heat(ax, m, cols, rows, cmap="Blues", vmin=0.0, vmax=1.0, annotate=m.size <= 120)
        ax.set_title(name, fontsize=9, loc="left")
        ax.get_xticklabels()[result["index"]].set_color("#c44e52")
    height = sum(heights) + 1.2
    fig.suptitle(title or f"what {result['word']!r} attended to", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.2 / height))  # keep 0.2 in for the title
    return fig


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
