"""The bias audit's figure: effect size per test, per layer (WEAT, SEAT, CEAT rows)."""

from __future__ import annotations

from collections.abc import Sequence

from ._base import plain_text, plt

__all__ = ["effect_sizes"]


@plain_text
def effect_sizes(rows: Sequence, *, title: str = ""):
    """Effect size of each test (one line per test and model) against the layer; CEAT's
    95 % interval as error bars; a single layer gives one bar per test instead. ``rows``
    are :class:`~contextlens.bias.BiasResult` objects."""
    series: dict[str, list] = {}
    for r in rows:
        series.setdefault(f"{r.test} ({r.measure}, {r.model})", []).append(r)
    layers = sorted({r.layer if r.layer is not None else 0 for r in rows})
    if len(layers) == 1:
        fig, ax = plt.subplots(figsize=(max(4.0, 0.55 * len(rows) + 2), 3.4))
        labels = list(series)
        values = [series[k][0].effect_size for k in labels]
        errors = [[0.0 if r.ci is None else r.effect_size - r.ci[0] for r in (series[k][0] for k in labels)],
                  [0.0 if r.ci is None else r.ci[1] - r.effect_size for r in (series[k][0] for k in labels)]]
        ax.bar(range(len(labels)), values, yerr=errors, color=["#c44e52" if v > 0 else "#4c72b0"
                                                               for v in values],
               capsize=3)
        ax.set_xticks(range(len(labels)), labels, rotation=35, ha="right", fontsize=8)
        ax.set_xlabel(f"layer {layers[0]}")
    else:
        fig, ax = plt.subplots(figsize=(max(5.0, 0.5 * len(layers) + 3), 3.8))
        for label, rs in series.items():
            rs = sorted(rs, key=lambda r: r.layer)
            x = [r.layer for r in rs]
            y = [r.effect_size for r in rs]
            if all(r.ci is not None for r in rs):
                ax.errorbar(x, y, yerr=[[r.effect_size - r.ci[0] for r in rs],
                                        [r.ci[1] - r.effect_size for r in rs]],
                            marker="o", ms=3, capsize=2, label=label)
            else:
                ax.plot(x, y, marker="o", ms=3, label=label)
        ax.set_xticks(layers)
        ax.set_xlabel("layer (0 = static row)")
        ax.legend(fontsize=6, loc="center left", bbox_to_anchor=(1.0, 0.5))
    ax.axhline(0.0, color="black", lw=0.5)
    ax.set_ylabel("effect size d")
    ax.set_title(title, fontsize=10)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    return fig
