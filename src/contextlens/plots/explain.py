"""Figures of the explanations inside a layer: what each block of each layer does (sublayers), the
faithfulness of each attribution method layer by layer, and patching over the layers. Each takes
the dict its library function returns."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ._base import plain_text, plt

__all__ = ["sublayer_bars", "faithfulness_lines", "patch_lines", "tuned_lens_lines"]

SHORT = {"attention": "att", "ffn": "ffn"}  # a stage's tick label


@plain_text
def sublayer_bars(result: Mapping, *, title: str = ""):
    """How far each block moved each usage (cosine distance), one bar per usage, the two lanes of a
    layer side by side; with two sentences, above, the cosine between the usages after each block
    (``sublayers``' result)."""
    rows, n = result["rows"], len(result["sentences"])
    two = n == 2
    size = (max(5.0, 0.35 * len(rows) + 2), 5.0 if two else 3.0)
    fig, axes = plt.subplots(2 if two else 1, 1, figsize=size, squeeze=False, sharex=True)
    x = np.arange(len(rows))
    labels = [f"{r['layer']} {SHORT.get(r['after'], r['after'])}" for r in rows]
    if two:
        ax = axes[0, 0]
        cosines = [result["start"]["cosine"], *[r["cosine"] for r in rows]]  # before the first block too
        ax.plot([-1, *x], cosines, marker="o", color="#1d2733")
        drop = result.get("largest_drop")
        if drop:
            where = (drop["layer"], drop["after"])
            at = next(i for i, r in enumerate(rows) if (r["layer"], r["after"]) == where)
            ax.axvspan(at - 0.5, at + 0.5, color="#ffe08a", alpha=0.6, lw=0)
        ax.set_ylabel("cosine of the usages")
        ax.spines[["top", "right"]].set_visible(False)
    ax = axes[-1, 0]
    width = 0.8 / n
    for u in range(n):
        ax.bar(x - 0.4 + width * (u + 0.5), [r["moved"][u] for r in rows], width, label=f"S{u}")
    ax.set_xticks(x, labels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("moved (1 − cos)")
    ax.spines[["top", "right"]].set_visible(False)
    if n > 1:
        ax.legend(fontsize=8)
    axes[0, 0].set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


@plain_text
def faithfulness_lines(result: Mapping, *, title: str = ""):
    """Each method's Spearman correlation with occlusion, layer by layer (``attributions``' result);
    undefined values are gaps."""
    layers = result["layers"]
    fig, ax = plt.subplots(figsize=(max(4.5, 0.5 * len(layers) + 2.5), 3.4))
    for m in result["methods"]:
        ax.plot([x["layer"] for x in layers], [np.nan if x["spearman"][m] is None else x["spearman"][m]
                                               for x in layers], marker="o", label=m)
    ax.set_ylim(-1.05, 1.05)
    ax.axhline(0.0, color="grey", lw=0.6, ls=":")
    ax.set_xlabel("layer")
    ax.set_ylabel("Spearman with occlusion")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(fontsize=7, loc="lower left", ncol=2)
    fig.tight_layout()
    return fig


@plain_text
def patch_lines(result: Mapping, *, title: str = ""):
    """The patched word's last-layer cosine to the donor's word and to the recipient's, per layer
    patched; dashed, the two words unpatched (``patch``'s result)."""
    rows = result["rows"]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.3 * len(rows) + 2), 3.2))
    layers = [r["layer"] for r in rows]
    ax.plot(layers, [r["cosine_to_donor"] for r in rows], marker="o", label="to the donor's word")
    ax.plot(layers, [r["cosine_to_recipient"] for r in rows], marker="o", label="to the recipient's word")
    ax.axhline(result["unpatched"], color="grey", lw=1, ls="--", label="unpatched")
    ax.set_xlabel(f"layer patched ({result['at']})")
    ax.set_ylabel("cosine at the last layer")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@plain_text
def tuned_lens_lines(result: Mapping, *, title: str = ""):
    """The logit lens beside the tuned lens (``lens --tuned``: ``LensResult.as_dict()`` with
    ``tuned``): the KL divergence from the final distribution per layer on held-out corpus text and,
    for each tracked word, its rank under either lens (solid: logit, dashed: tuned)."""
    tuned, layers = result["tuned"], result["layers"]
    words = [t["word"] for t in layers[0]["tracked"]]
    fig, axes = plt.subplots(1, 2 if words else 1, figsize=(9.0 if words else 4.8, 3.4), squeeze=False)
    ax = axes[0, 0]
    ax.plot(tuned["kl"]["layers"], tuned["kl"]["logit"], marker="o", label="logit lens")
    ax.plot(tuned["kl"]["layers"], tuned["kl"]["tuned"], marker="o", label="tuned lens")
    ax.set_xlabel("layer (0 = embedding output)")
    ax.set_ylabel("KL from the final distribution (nats)")
    ax.legend(fontsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    if words:
        ax = axes[0, 1]
        for j, w in enumerate(words):
            colour = f"C{j}"
            ax.plot([x["layer"] for x in layers], [x["tracked"][j]["rank"] for x in layers], color=colour,
                    marker="o", label=f"{w} (logit)")
            ax.plot([x["layer"] for x in tuned["layers"]], [x["tracked"][j]["rank"] for x in tuned["layers"]],
                    color=colour, ls="--", marker="s", label=f"{w} (tuned)")
        ax.set_yscale("log")
        ax.invert_yaxis()
        ax.set_xlabel("layer")
        ax.set_ylabel("rank of the first piece")
        ax.legend(fontsize=8)
        ax.spines[["top", "right"]].set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
