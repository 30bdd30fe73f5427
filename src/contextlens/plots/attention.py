"""Figures of attention: the words × words weights of one layer, and the weights one word gave
every word, per layer and head (with the mean over heads and the rollout). Each takes the arrays or
the dict the analysis function returns and gives back a Figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ._base import heat, plain_text, plt

__all__ = ["attention_matrix", "attention_heads"]


@plain_text
def attention_matrix(matrix, words: Sequence[str], *, special: Sequence[float] | None = None,
                     title: str = ""):
    """Words × words heatmap (row = the word attending), plus a ``[special]`` column."""
    m = np.asarray(matrix, dtype=np.float64)  # (n, n)
    cols = list(words)
    if special is not None:
        m = np.hstack([m, np.asarray(special, dtype=np.float64)[:, None]])
        cols.append("[special]")
    fig, ax = plt.subplots(figsize=(min(14, 2.5 + 0.6 * len(cols)), min(12, 2 + 0.5 * len(words))))
    im = heat(ax, m, cols, list(words), cmap="Blues", vmin=0.0, vmax=max(1e-9, m.max()))
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
        heat(ax, m, cols, rows, cmap="Blues", vmin=0.0, vmax=1.0, annotate=m.size <= 120)
        ax.set_title(name, fontsize=9, loc="left")
        ax.get_xticklabels()[result["index"]].set_color("#c44e52")
    height = sum(heights) + 1.2
    fig.suptitle(title or f"what {result['word']!r} attended to", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.2 / height))  # keep 0.2 in for the title
    return fig
