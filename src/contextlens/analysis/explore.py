"""The polysemy explorer: how alike are a word's usages, and which words spread most.

For one word, the pairwise cosine matrix of its usages (one per sentence) at a layer;
for several words, each word's *spread*: ``1 − mean off-diagonal cosine`` of its usages,
with the least and most similar pair. A word whose vector barely depends on its context
has spread ≈ 0; static vectors (layer 0) always give exactly 0.

>>> import numpy as np
>>> s = spread(np.array([[1.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 1.0]]))
>>> round(s["spread"], 4), s["min_cosine"], s["max_cosine"], s["least_similar"]
(0.7, 0.1, 0.5, [0, 2])
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..bounds import MAX_MATRIX_USAGES, check_encoding
from ..encoders.base import Encoder
from ..encoders.targets import check_texts
from ..errors import EmptyInputError, InputError, ask, check_choice, check_size
from .projection import PROJECTIONS, check_points, project, run_here
from .similarity import cosine_matrix
from .usages import MISSING_POLICIES, Usages, every_word, need_usages, usages_in

__all__ = ["spread", "usage_similarity", "explore"]

log = logging.getLogger(__name__)


def spread(matrix: np.ndarray) -> dict[str, Any]:
    """Summary of a cosine matrix's off-diagonal: ``{spread, mean_cosine, min_cosine,
    max_cosine, least_similar, most_similar}`` (the last two are index pairs ``[i, j]``)."""
    m = np.asarray(matrix, dtype=np.float64)  # (n, n)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or len(m) < 2:
        raise InputError(f"spread needs a square cosine matrix of at least 2 usages, got {m.shape}")
    i, j = np.triu_indices(len(m), k=1)
    off = m[i, j]  # (n (n - 1) / 2,)
    lo, hi = int(off.argmin()), int(off.argmax())
    mean = float(off.mean())
    return {
        "spread": 1.0 - mean, "mean_cosine": mean,
        "min_cosine": float(off[lo]), "max_cosine": float(off[hi]),
        "least_similar": [int(i[lo]), int(j[lo])], "most_similar": [int(i[hi]), int(j[hi])],
    }


def usage_similarity(usages: Usages, layer: int = -1) -> dict[str, Any]:
    """Cosine matrix of ``usages`` at ``layer`` and its :func:`spread`.

    Returns ``{word, layer, layer_name, n_usages, sentences, positions, occurrences, labels,
    matrix, spread, mean_cosine, min_cosine, max_cosine, least_similar, most_similar}``;
    ``matrix`` is a list of lists, row ``i`` = usage ``i`` (in the order of ``sentences``);
    usage ``i`` is occurrence ``occurrences[i]`` of the word in sentence ``positions[i]``, and
    ``labels[i]`` names it so (:func:`~contextlens.analysis.usages.usage_labels`: ``S0 #1``).
    """
    need_usages(usages)
    check_size(f"{usages.word!r}", len(usages), MAX_MATRIX_USAGES, "usages",
               why="its cosine matrix holds the square of the usages",
               todo="give fewer sentences that contain it (a sample of them)")
    x = check_points(usages.at(layer), f"usages of {usages.word!r}")  # (n_usages, dim)
    m = cosine_matrix(x)  # (n_usages, n_usages)
    return {
        "word": usages.word, "layer": usages.layer_id(layer), "layer_name": usages.layer_name(layer),
        "n_usages": len(usages), "sentences": usages.sentences, "positions": usages.positions,
        "occurrences": [u.occurrence for u in usages.usages], "labels": usages.labels,
        "matrix": m.tolist(), **spread(m),
    }


def explore(
    encoder: Encoder, sentences: Sequence[str], words: str | Sequence[str], *, layer: int = -1,
    occurrence: int | str | None = None, missing: str | None = None, projection: str | None = None,
    seed: int = 0, run: Callable = run_here,
) -> dict[str, Any]:
    """Compare the usages of one or several words across ``sentences`` at ``layer``.

    Each word's usages are the sentences that contain it. ``missing`` defaults to
    ``"error"`` for one word (every sentence must contain it) and ``"skip"`` for several.
    ``occurrence`` picks the occurrence when a sentence has the word twice (None: an
    error says so; ``"all"``: each occurrence is a usage). With ``projection``
    (pca | tsne | umap) every usage of every word is also projected to 2-D, through
    ``run(project, ...)`` (here by default; the lab passes its worker processes).

    Returns ``{layer, layer_name, layer_names, sentences, encoder, words: [one
    usage_similarity dict per word, plus "skipped"]}`` and, with a projection,
    ``projection: {method, points (n, 2), word (n,), sentence (n,)}``.
    """
    words = [words] if isinstance(words, str) else list(words)
    if not words:
        raise EmptyInputError("give at least one word to explore")
    if projection is not None:
        check_choice("projection", projection, PROJECTIONS)
    missing = missing or ("error" if len(words) == 1 else "skip")
    check_choice("missing-word policy", missing, MISSING_POLICIES)
    sentences = check_texts(sentences)
    if not sentences:
        raise EmptyInputError(f"no sentences given; {ask('sentences')}")
    check_encoding(encoder, sentences, todo="give fewer or shorter sentences")
    encodings = encoder.encode(sentences, targets=every_word(sentences))  # vectors only
    per_word, found = [], []
    for word in dict.fromkeys(words):
        u = usages_in(encodings, word, occurrence=occurrence, missing=missing, sentences=sentences,
                      takes_all=True)
        row = usage_similarity(u, layer)
        row["skipped"] = [s["position"] for s in u.skipped]
        per_word.append(row)
        found.append(u)
        log.info("%r: %d usages, spread %.3f", word, len(u), row["spread"])
    result = {
        "layer": per_word[0]["layer"], "layer_name": per_word[0]["layer_name"],
        "layer_names": list(found[0].layer_names), "layer_ids": list(found[0].layer_ids),
        "sentences": sentences, "encoder": found[0].encoder, "words": per_word,
    }
    if projection is not None:
        x = np.concatenate([u.at(layer) for u in found])  # (all usages, dim)
        result["projection"] = {
            "method": projection, "points": run(project, x, projection, seed=seed).tolist(),
            "word": [u.word for u in found for _ in range(len(u))],
            "sentence": [s for u in found for s in u.sentences],
        }
    return result
