"""Every matplotlib figure shows user text as written: a ``$`` in a sentence or a word is a
dollar, never the start of mathematics (``$\\frac{a}{$`` used to stop the figure with a parse
error, ``$5 and $6`` to set "5 and " in italics)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from contextlens import plots

MONEY = "it cost $5 and $6 at the bank"
BROKEN = "the bank $\\frac{a}{$ closed"
WORDS = ["$x^2$", "bank", "$\\frac{a}{$"]


def _figures():
    lens = {
        "layers": [
            {"layer": i, "layer_name": f"layer {i}", "tracked": [{"word": w, "rank": 3 + i} for w in WORDS]}
            for i in range(3)
        ]
    }
    occlusion = {
        "layers": [
            {"layer_name": f"{BROKEN} {i}", "spearman_attention": 0.5, "spearman_rollout": None}
            for i in range(2)
        ]
    }
    attention = {
        "words": WORDS,
        "word": MONEY,
        "index": 1,
        "layer_names": [BROKEN],
        "per_head": np.full((1, 2, 3), 0.3),
        "mean": np.full((1, 3), 0.3),
        "rollout": None,
    }
    ranking = {
        "pairs": [{"static": 0.1, "contextual": 0.2}, {"static": 0.3, "contextual": 0.1}],
        "moved": [{"word1": "$a", "word2": "b$", "static": 0.1, "contextual": 0.2, "shift": 1}],
        "layer_name": BROKEN,
        "spearman": 0.5,
        "kendall_tau": 0.4,
        "inversions": 1,
    }
    geometry = {
        "layers": [
            {
                "name": BROKEN,
                **{
                    k: 0.1
                    for k in (
                        "anisotropy",
                        "self_similarity",
                        "intra_sentence",
                        "self_similarity_adjusted",
                        "intra_sentence_adjusted",
                    )
                },
            }
        ]
    }
    words = [{"word": w, "n_usages": 2, "spread": 0.2, "max_cosine": 0.9, "min_cosine": 0.5} for w in WORDS]
    bias = [SimpleNamespace(test=BROKEN, measure="$d$", model=MONEY, layer=0, effect_size=0.5, ci=None)]
    sublayers = {
        "sentences": [MONEY, BROKEN],
        "start": {"cosine": 0.9},
        "largest_drop": {"layer": 1, "after": "ffn"},
        "rows": [{"layer": 1, "after": after, "cosine": 0.8, "moved": [0.1, 0.2]}
                 for after in ("attention", "ffn")],
    }
    faithfulness = {"methods": ["raw", "rollout"],
                    "layers": [{"layer": i, "spearman": {"raw": 0.5, "rollout": None}} for i in (1, 2)]}
    patched = {"rows": [{"layer": i, "cosine_to_donor": 0.5, "cosine_to_recipient": 0.7} for i in (1, 2)],
               "unpatched": 0.6, "at": "layer"}
    tracked = [{"word": w, "rank": 3} for w in WORDS]
    tuned = {"layers": [{"layer": i, "tracked": tracked} for i in (0, 1)],
             "tuned": {"kl": {"layers": [0, 1], "logit": [2.0, 1.0], "tuned": [1.0, 0.5]},
                       "layers": [{"layer": i, "tracked": tracked} for i in (0, 1)]}}
    probe = {"task": "pos", "model": MONEY, "expected_layer": 0.5,
             "rows": [{"layer": i, "accuracy": 0.8, "control_accuracy": 0.6, "selectivity": 0.2}
                      for i in (0, 1)]}
    cka = {"models": [MONEY, BROKEN], "layers": [[0, 1], [0, 1]], "matrix": np.eye(2).tolist(),
           "debiased": False}
    return {
        "probe_lines": plots.probe_lines(probe),
        "cka_heatmap": plots.cka_heatmap(cka, title=MONEY),
        "sublayer_bars": plots.sublayer_bars(sublayers, title=MONEY),
        "faithfulness_lines": plots.faithfulness_lines(faithfulness, title=BROKEN),
        "patch_lines": plots.patch_lines(patched, title=MONEY),
        "tuned_lens_lines": plots.tuned_lens_lines(tuned, title=BROKEN),
        "cosine_heatmap": plots.cosine_heatmap(np.eye(3), [MONEY, BROKEN, "$x$"], title=BROKEN),
        "spread_bars": plots.spread_bars(words, title=MONEY),
        "projection_scatter": plots.projection_scatter(np.eye(3)[:, :2], WORDS, labels=[MONEY, BROKEN, "$"]),
        "attention_heads": plots.attention_heads(attention),
        "attention_matrix": plots.attention_matrix(np.eye(3), WORDS, title=BROKEN),
        "rank_scatter": plots.rank_scatter(ranking),
        "geometry_lines": plots.geometry_lines(geometry, title=MONEY),
        "effect_sizes": plots.effect_sizes(bias, title=BROKEN),
        "lens_ranks": plots.lens_ranks(lens, title=MONEY),
        "occlusion_lines": plots.occlusion_lines(occlusion, title=BROKEN),
        "weights_bar": plots.weights_bar([{"word": w, "weight": 0.3} for w in WORDS], title=MONEY),
        "layer_cosines": plots.layer_cosines(
            {MONEY: [1.0, 0.5], BROKEN: [1.0, 0.4]}, WORDS[:2], title=BROKEN
        ),
        "static_vs_contextual": plots.static_vs_contextual(
            np.eye(3)[:, :2], WORDS, ["static", "contextual", "probe"]
        ),
    }


def test_every_figure_shows_dollars_as_written(tmp_path):
    from matplotlib.text import Text

    figures = _figures()
    assert set(figures) == set(plots.__all__) - {
        "save_figure",
        "figure_format",
        "short",
        "FIGURE_FORMATS",
        "AXIS_NAMES",
    }
    for name, fig in figures.items():
        texts = [t for t in fig.findobj(Text) if "$" in t.get_text()]
        assert texts and all(not t.get_parse_math() for t in texts), name
        plots.save_figure(fig, tmp_path / f"{name}.png")  # drawn: a parse error would raise here
        assert (tmp_path / f"{name}.png").stat().st_size > 1000


def test_figures_outside_keep_matplotlibs_own_setting():
    import matplotlib

    before = matplotlib.rcParams["text.parse_math"]
    plots.weights_bar([{"word": "$x$", "weight": 1.0}])
    assert matplotlib.rcParams["text.parse_math"] == before
    pytest.importorskip("matplotlib.pyplot").close("all")
