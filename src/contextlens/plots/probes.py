"""Figures of what each layer knows: a probe's accuracy per layer beside its control task, and the
CKA of every two layers. Each takes the dict its library function's result gives (``as_dict()``)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ._base import heat, plain_text, plt

__all__ = ["probe_lines", "cka_heatmap"]


@plain_text
def probe_lines(result: Mapping, *, title: str = ""):
    """Accuracy (solid) and control-task accuracy (dashed) per layer, selectivity below, and the
    expected layer as a dotted line (``probe(...).as_dict()``; Hewitt & Liang 2019, Tenney et
    al. 2019)."""
    rows = result["rows"]
    layers = [r["layer"] for r in rows]
    fig, (top, low) = plt.subplots(2, 1, figsize=(max(4.5, 0.3 * len(rows) + 2.5), 4.6), sharex=True,
                                   gridspec_kw={"height_ratios": [2, 1]})
    top.plot(layers, [r["accuracy"] for r in rows], marker="o", label=f"{result['task']} probe")
    top.plot(layers, [r["control_accuracy"] for r in rows], marker="o", ls="--", color="grey",
             label="control task")
    top.set_ylabel("accuracy")
    top.legend(fontsize=8)
    low.bar(layers, [r["selectivity"] for r in rows], color="#4c72b0")
    low.axhline(0.0, color="grey", lw=0.6)
    low.set_ylabel("selectivity")
    low.set_xlabel("layer")
    expected = result.get("expected_layer")
    for ax in (top, low):
        if expected is not None:
            ax.axvline(expected, color="#c44e52", ls=":", lw=1.2)
        ax.spines[["top", "right"]].set_visible(False)
    if expected is not None:
        top.annotate(f"expected layer {expected:.2f}", (expected, 1.0), xycoords=("data", "axes fraction"),
                     fontsize=8, color="#c44e52", ha="left", va="top", xytext=(3, -2),
                     textcoords="offset points")
    top.set_title(title or f"{result['task']}: {result['model']}", fontsize=10)
    fig.tight_layout()
    return fig


@plain_text
def cka_heatmap(result: Mapping, *, title: str = ""):
    """Linear CKA of every layer of one model against every layer of another (or the same)
    model, rows the first (``layer_cka(...).as_dict()``; Kornblith et al. 2019)."""
    m = np.asarray(result["matrix"], dtype=np.float64)
    (a, b), (rows, cols) = result["models"], result["layers"]
    fig, ax = plt.subplots(figsize=(min(14, 3.5 + 0.35 * len(cols)), min(12, 2.5 + 0.3 * len(rows))))
    im = heat(ax, m, [str(c) for c in cols], [str(r) for r in rows], vmin=0.0, vmax=1.0)
    fig.colorbar(im, ax=ax, label=f"{'debiased ' if result.get('debiased') else ''}linear CKA", shrink=0.8)
    ax.set_ylabel(f"layer of {a}")
    ax.set_xlabel(f"layer of {b}")
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
