"""The views drawn with Plotly: the projection of usages, layer divergence, the cosine
matrix of a word's usages, and its senses.

The last three take the result of the analysis that computes them
(:func:`~contextlens.analysis.layers.layer_divergence` or
:func:`~contextlens.analysis.incontext.compare`,
:func:`~contextlens.analysis.explore.explore`, :func:`~contextlens.analysis.senses.senses`)
and carry it as it is: the page draws those numbers. The projection view computes its
points here, from Encodings, with the library's own functions: every chosen projection
(PCA, t-SNE, UMAP) in 2-D and 3-D (:func:`~contextlens.analysis.projection.project`),
clusters (:class:`~contextlens.analysis.senses.SenseClusterer`) and each point's nearest
usages by cosine (:func:`~contextlens.analysis.similarity.cosine_matrix`).

>>> import numpy as np
>>> from contextlens.encoders.base import Encoding
>>> from contextlens.text import tokenize
>>> encs = [Encoding(t, tokenize(t), np.array([v])) for t, v in
...         [("bank loan", [[1.0, 0.2], [1, 0]]), ("bank river", [[0.2, 1], [0, 1]])]]
>>> v = projection_view(encs, layer=0, methods=["pca"], neighbours=2)
>>> v.data["points"]["word"], v.data["neighbours"]["index"]["shape"]
(['bank', 'loan', 'bank', 'river'], [4, 2])
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..analysis.projection import PROJECTIONS, project
from ..analysis.senses import SenseClusterer
from ..analysis.similarity import cosine_matrix
from ..analysis.usages import usage_labels
from ..encoders.base import Encoding
from ..errors import EmptyInputError, InputError, check_choice, check_int
from .base import View, need
from .packing import pack

__all__ = ["projection_view", "layers_view", "cosine_view", "senses_view"]

MAX_POINTS = 5000


def _methods(methods) -> list[str]:
    if methods is None:
        return [m for m in PROJECTIONS if m != "umap" or importlib.util.find_spec("umap") is not None]
    chosen = [check_choice("projection", m, PROJECTIONS) for m in ([methods] if isinstance(methods, str)
                                                                   else methods)]
    if not chosen:
        raise InputError(f"choose at least one projection of {', '.join(PROJECTIONS)}")
    return list(dict.fromkeys(chosen))


def projection_view(encodings: Sequence[Encoding], *, words: str | Sequence[str] | None = None,
                    layer: int = -1,
                    methods: Sequence[str] | None = None, neighbours: int = 10, seed: int = 0,
                    title: str = "") -> View:
    """Every usage of ``words`` (None: every word) in ``encodings`` at ``layer``, projected
    by each of ``methods`` (default PCA, t-SNE and, when installed, UMAP) to 2-D and 3-D;
    coloured in the view by sentence, word or cluster; clicking a point lists its
    ``neighbours`` nearest usages with their cosines, and a search box finds points by word."""
    encodings = list(encodings)
    wanted = None if words is None else {w.lower() for w in ([words] if isinstance(words, str) else words)}
    found = [(s, i) for s, e in enumerate(encodings) for i, w in enumerate(e.tokens)
             if wanted is None or w.lower() in wanted]
    if len(found) < 3:
        raise EmptyInputError(f"{len(found)} usage(s) found; a projection needs at least 3 points"
                              + ("" if wanted is None else f" (words: {', '.join(sorted(wanted))})"))
    if len(found) > MAX_POINTS:
        raise InputError(f"{len(found)} usages; the projection view shows at most {MAX_POINTS}: "
                         "choose words=")
    k = check_int("neighbours", neighbours, low=1, high=100)
    if len({encodings[s].layer_ids for s, _ in found}) != 1:
        raise InputError("the encodings have different layers; encode every sentence with one encoder")
    first = encodings[found[0][0]]
    pos = first.layer_position(layer)
    x = np.stack([encodings[s].layers[pos, i] for s, i in found]).astype(np.float64)  # (n, dim)
    coords = {m: {str(d): pack(project(x, m, seed=seed, dims=d), "float32") for d in (2, 3)}
              for m in _methods(methods)}
    cos = cosine_matrix(x)  # (n, n)
    np.fill_diagonal(cos, -np.inf)
    k = min(k, len(x) - 1)
    nearest = np.argsort(-cos, axis=1, kind="stable")[:, :k]  # (n, k)
    clusterer = SenseClusterer(k="auto").fit(x)
    data = {
        "layer": first.layer_ids[pos], "layer_name": first.layer_names[pos],
        "sentences": [e.text for e in encodings],
        "points": {"word": [encodings[s].tokens[i] for s, i in found], "sentence": [s for s, _ in found],
                   "position": [i for _, i in found]},
        "clusters": clusterer.labels_.tolist(), "k": clusterer.k_, "k_chosen_by": clusterer.k_chosen_by_,
        "cluster_method": clusterer.method, "coords": coords,
        "neighbours": {"index": pack(nearest, "uint32"), "cosine": pack(np.take_along_axis(cos, nearest, 1),
                                                                        "float64")},
        "initial": {"method": next(iter(coords)), "dims": 2,
                    "colour": "sentence" if wanted is None or len(wanted) == 1
                    else "word"},
    }
    return View("projection", data, title or f"usages at {data['layer_name']}")


def layers_view(result: Mapping[str, Any], *, title: str = "") -> View:
    """Cosine between a word's usages, layer by layer: the result of ``layer_divergence``
    (one line per pair of sentences, its sentences named 0 and 1 in the hovers),
    ``usage_divergence`` (one per two usages, named as the lab names them: S0, S0 #1) or
    ``compare`` (one pair, S0–S1)."""
    if "pairs" not in result and "cosine_by_layer" in result:
        result = {**result, "pairs": [{"label": "S0–S1", "sentences": result.get("sentences", []),
                                       "labels": ["S0", "S1"], "cosine_by_layer": result["cosine_by_layer"]}]}
    need(result, ("word", "layer_names", "pairs"), "layer_divergence, usage_divergence or compare")
    data = {"word": result["word"], "layer_names": list(result["layer_names"]),
            "layer_ids": list(result.get("layer_ids") or range(len(result["layer_names"]))),
            "pairs": [{"label": p["label"], "sentences": list(p.get("sentences", [])),
                       "labels": list(p.get("labels") or map(str, range(len(p.get("sentences", []))))),
                       "cosine_by_layer": list(p["cosine_by_layer"])} for p in result["pairs"]]}
    return View("layers", data, title or f"'{result['word']}' layer by layer")


def cosine_view(result: Mapping[str, Any], *, title: str = "") -> View:
    """The cosine matrix of each word's usages at one layer: the result of ``explore``; a
    usage is named as the lab names it (``labels``: S0, or S0 #1 beside another usage of S0)."""
    need(result, ("layer", "layer_name", "words"), "explore")
    keep = ("word", "matrix", "sentences", "positions", "spread", "mean_cosine", "min_cosine", "max_cosine")
    data = {"layer": result["layer"], "layer_name": result["layer_name"],
            "words": [{**{k: w[k] for k in keep},
                       "labels": w.get("labels") or usage_labels(w["positions"], w.get("occurrences"))}
                      for w in result["words"]]}
    return View("cosine", data, title or f"cosines of usages at {result['layer_name']}")


def senses_view(result: Mapping[str, Any], sentences: Sequence[str], *, title: str = "") -> View:
    """The senses of a word: its usages' clusters, listed, and (when ``senses`` was run
    with a projection) as points; ``sentences`` are the ones given to ``senses``."""
    need(result, ("word", "layer_name", "k", "labels", "clusters"), "senses")
    if len(result["labels"]) != len(sentences):
        raise InputError(f"{len(sentences)} sentences for {len(result['labels'])} labels; give the sentences "
                         "that were given to senses()")
    keep = ("word", "layer", "layer_name", "n_usages", "k", "k_chosen_by", "silhouette", "labels", "clusters",
            "skipped", "projection", "purity", "ari")
    data = {**{k: result[k] for k in keep if k in result}, "sentences": list(sentences)}
    return View("senses", data, title or f"senses of '{result['word']}'")
