"""Figures of what a model expects: a word's rank under the logit lens layer by layer, and
occlusion beside attention."""

from __future__ import annotations

from collections.abc import Mapping

from ._base import plain_text, plt

__all__ = ["lens_ranks", "occlusion_lines"]


@plain_text
def lens_ranks(result: Mapping, *, title: str = ""):
    """The rank (log scale, 1 at the top) of each tracked word at every layer of a logit
    lens result (``LensResult.as_dict()``)."""
    layers = result["layers"]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.3 * len(layers) + 2), 3.2))
    for j, word in enumerate(t["word"] for t in layers[0]["tracked"]):
        ax.plot([x["layer"] for x in layers], [x["tracked"][j]["rank"] for x in layers], marker="o",
                label=word)
    ax.set_yscale("log")
    ax.invert_yaxis()  # rank 1 on top
    ax.set_xlabel("layer (0 = embedding output)")
    ax.set_ylabel("rank of the first piece")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    if layers[0]["tracked"]:
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


@plain_text
def occlusion_lines(result: Mapping, *, title: str = ""):
    """Spearman between occlusion effect and attention (mean over heads, rollout) per
    layer (``occlusion_vs_attention``'s result); undefined values are gaps."""
    layers = result["layers"]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(layers) + 2), 3.2))
    names = [x["layer_name"] for x in layers]
    for key, label in (("spearman_attention", "attention (mean over heads)"),
                       ("spearman_rollout", "rollout")):
        ax.plot(range(len(layers)), [float("nan") if x[key] is None else x[key] for x in layers], marker="o",
                label=label)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylim(-1.05, 1.05)
    ax.axhline(0.0, color="grey", lw=0.6, ls=":")
    ax.set_ylabel("Spearman with occlusion")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    return fig
