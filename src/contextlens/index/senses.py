"""Induce a word's senses from its usages in an index.

The usages' vectors are clustered (:class:`contextlens.analysis.senses.SenseClusterer`:
agglomerative on cosine, k by silhouette or given); each cluster is described by

- its most typical sentences: the usages nearest the cluster's centroid (cosine);
- its most distinctive context words: the words within ``window`` words of the usages,
  ranked by local mutual information, ``LMI(w, c) = n(w, c) · log(p(w | c) / p(w))``
  (PMI weighted by the count, so one-off words do not top the list; Evert 2005).

>>> contexts = [["river", "water"], ["river", "mud"], ["money", "loan"], ["money", "rate"]]
>>> distinctive_words(contexts, [0, 0, 1, 1], top=1)
{0: [('river', 2, 1.386)], 1: [('money', 2, 1.386)]}
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..analysis.senses import SenseClusterer
from ..errors import InputError, check_int
from ..text import tokenize
from .search import _target
from .store import UsageReader, open_store

__all__ = ["induce_senses", "distinctive_words", "context_words", "typical", "centroid"]

log = logging.getLogger(__name__)
#: function words left out of the context words (they are frequent everywhere)
STOPWORDS = frozenset(
    "a an the and or but if then of in on at to for from by with without about into onto over under as is "
    "are was were be been being am do does did done have has had having it its it's this that these those "
    "there here he she they we you i me him her them us my your his their our mine yours not no nor so too "
    "very can could will would shall should may might must which who whom whose what when where why how all "
    "any both each few more most other some such only own same than just also up down out off again s t".split()
)
MAX_USAGES = 2000  # agglomerative clustering is O(n²) in memory: a deterministic sample above this
MAX_USAGES_LIMIT = 10_000  # the most max_usages may ask for: 400 MB of pairwise distances


def context_words(sentence: str, start: int, end: int, window: int = 5,
                  stopwords: frozenset[str] = STOPWORDS) -> list[str]:
    """The lower-cased alphabetic words (not ``stopwords``) within ``window`` words of the
    span ``start:end``.

    >>> context_words("We sat on the bank of the river .", 14, 18, window=3)
    ['sat', 'river']
    """
    words = tokenize(sentence)
    at = next((i for i, w in enumerate(words) if w.start == start and w.end == end), None)
    if at is None:
        return []
    near = words[max(0, at - window): at] + words[at + 1: at + 1 + window]
    return [t for t in (w.text.lower() for w in near) if t.isalpha() and t not in stopwords]


def distinctive_words(contexts: Sequence[Sequence[str]], labels: Sequence[int], *, top: int = 8,
                      min_count: int = 2) -> dict[int, list[tuple[str, int, float]]]:
    """Per cluster, ``(word, count in cluster, LMI)`` of its ``top`` most distinctive context
    words (a word must occur ``min_count`` times in the cluster)."""
    if len(contexts) != len(labels):
        raise InputError(f"{len(contexts)} contexts for {len(labels)} labels; give one per usage")
    total: Counter = Counter()
    by_cluster: dict[int, Counter] = {}
    for ctx, lab in zip(contexts, labels):
        total.update(ctx)
        by_cluster.setdefault(int(lab), Counter()).update(ctx)
    n = sum(total.values())
    out = {}
    for lab in sorted(by_cluster):
        counts = by_cluster[lab]
        size = sum(counts.values())
        scored = []
        for w, c in counts.items():
            if c >= min_count:
                lmi = c * math.log((c / size) / (total[w] / n))
                if lmi > 0:
                    scored.append((w, c, round(lmi, 3)))
        out[lab] = sorted(scored, key=lambda t: (-t[2], -t[1], t[0]))[:top]
    return out


def typical(x: np.ndarray, members: np.ndarray, n: int) -> list[tuple[int, float]]:
    """``(row, cosine to the centroid)`` of the ``n`` members of a cluster nearest its centroid.

    >>> x = np.array([[1.0, 0.0], [1.0, 0.3], [1.0, 0.6], [0.0, 1.0]])
    >>> [(i, round(s, 3)) for i, s in typical(x, np.array([0, 1, 2]), 2)]
    [(1, 1.0), (2, 0.966)]
    """
    unit = x[members] / np.linalg.norm(x[members], axis=1, keepdims=True)  # (m, dim)
    sims = unit @ centroid(x, members)  # (m,)
    order = np.argsort(-sims, kind="stable")[:n]
    return [(int(members[i]), float(sims[i])) for i in order]


def centroid(x: np.ndarray, members: np.ndarray) -> np.ndarray:
    """``(dim,)``: the unit-length mean of the members' unit vectors (rows of ``x``).

    >>> centroid(np.array([[2.0, 0.0], [0.0, 3.0]]), np.array([0, 1])).round(3).tolist()
    [0.707, 0.707]
    """
    unit = x[members] / np.linalg.norm(x[members], axis=1, keepdims=True)  # (m, dim)
    mean = unit.mean(axis=0)
    return mean / np.linalg.norm(mean)


def induce_senses(db: str | os.PathLike | UsageReader, word: str, *, k: int | str = "auto",
                  layer: int | None = None, max_usages: int = MAX_USAGES, n_sentences: int = 3,
                  n_words: int = 8, window: int = 5, k_max: int = 8, wordnet: bool = False,
                  data_dir: str | os.PathLike | None = None, progress: Callable[[int], None] | None = None,
                  ) -> dict[str, Any]:
    """Cluster ``word``'s usages in the index into senses and describe each.

    Returns ``{word, layer, n_usages, n_total, k, k_chosen_by, silhouette,
    silhouette_by_k, senses: [{id, size, share, typical: [{usage_id, sentence, doc,
    similarity}], context_words: [{word, count, lmi}]}]}``, senses largest first. Above
    ``max_usages`` usages, a deterministic sample (the lowest usage ids) is clustered.

    ``wordnet=True`` also maps each sense to WordNet (:mod:`.wordnet_map`; needs WordNet
    and SemCor in ``data_dir``, see :func:`~contextlens.bench.datasets.resolve_data_dir`):
    each sense gets ``wordnet: [{key, synset, gloss, similarity, semcor_count}]`` (its
    best WordNet senses by cosine with its centroid) and the result ``wordnet_lemma`` and
    ``wordnet_unseen: [{key, synset, gloss}]`` (the word's senses SemCor never tags);
    ``progress`` then gets the SemCor sentences read (on a cache miss only).
    """
    check_int("max_usages", max_usages, low=2, high=MAX_USAGES_LIMIT,
              hint="how many of the word's usages are clustered (clustering holds usages x usages distances)")
    check_int("n_sentences", n_sentences, low=0, high=1000, hint="typical sentences shown per sense")
    check_int("n_words", n_words, low=0, high=1000, hint="context words shown per sense")
    check_int("window", window, low=1, high=1000, hint="words each side counted as context")
    store = db if isinstance(db, UsageReader) else open_store(db)
    target = _target(store, word)
    col_layer = store.layers[-1] if layer is None else layer
    if wordnet:  # data, layer and lemma checked before any work
        from .wordnet_map import wordnet_candidates

        store.layer_column(col_layer)  # a layer the index lacks fails here
        candidates = wordnet_candidates(store, target, col_layer, data_dir)
    store.refresh()
    total = store.count(target)
    rows, x = store.vectors_of(target, col_layer, limit=max_usages)  # x: (n, dim)
    if len(rows) < 2:
        raise InputError(f"{word!r} has {total} usage(s) in {store.path}; sense induction needs at "
                         "least 2 (3 with k='auto'): index a larger corpus")
    x = x.astype(np.float64)
    model = SenseClusterer(k=k, k_max=k_max).fit(x)
    labels = model.labels_
    contexts = [context_words(r["sentence"], r["start"], r["end"], window) for r in rows]
    words = distinctive_words(contexts, labels.tolist(), top=n_words)
    senses, centroids = [], []
    for c in sorted(set(labels.tolist()), key=lambda c: (-(labels == c).sum(), c)):
        members = np.flatnonzero(labels == c)
        senses.append({
            "id": int(c), "size": int(len(members)), "share": round(len(members) / len(rows), 4),
            "typical": [{"usage_id": rows[i]["usage_id"], "sentence": rows[i]["sentence"], "doc": rows[i]["doc"],
                         "similarity": round(s, 4)} for i, s in typical(x, members, n_sentences)],
            "context_words": [{"word": w, "count": n, "lmi": s} for w, n, s in words.get(int(c), [])],
        })
        centroids.append(centroid(x, members))
    out = {"word": target, "layer": col_layer, "model": store.params["model"], "n_usages": len(rows),
           "n_total": total, "k": model.k_, "k_chosen_by": "silhouette" if k == "auto" else "given",
           "silhouette": model.silhouette_,
           "silhouette_by_k": {str(kk): s for kk, s in model.silhouette_by_k_.items()}, "senses": senses}
    if wordnet:
        from .wordnet_map import map_centroids

        mapped = map_centroids(store, candidates, col_layer, np.stack(centroids), progress=progress)
        for sense, best in zip(senses, mapped["senses"]):
            sense["wordnet"] = best
        out.update(wordnet_lemma=mapped["lemma"], wordnet_unseen=mapped["unseen"])
    return out
