"""The sense probe: cluster a word's usages and see whether the clusters are its senses.

Usages are clustered agglomeratively on cosine distance with average linkage; with
``k="auto"`` the number of clusters is the one with the best silhouette (cosine) over
``2..min(k_max, n − 1)``, ties going to the smaller k. Cluster ids are numbered in order of
first appearance, so the first usage is always in cluster 0.

>>> import numpy as np
>>> x = np.array([[1.0, 0.1], [1.0, 0.0], [0.1, 1.0], [0.0, 1.0], [0.05, 1.0]])
>>> sc = SenseClusterer().fit(x)
>>> sc.k_, sc.labels_.tolist(), round(sc.silhouette_, 3)
(2, [0, 0, 1, 1, 1], 0.996)
>>> purity([0, 0, 1, 1], ["money", "money", "river", "money"])
0.75
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.metrics import adjusted_rand_score, silhouette_score

from ..encoders.base import Encoder, check_texts
from ..errors import DimensionError, InputError, ZeroVectorError, check_choice, check_int
from .projection import PROJECTIONS, check_points, project, run_here
from .usages import Usages, collect_usages

__all__ = ["SenseClusterer", "cluster_senses", "senses", "purity", "LINKAGES"]

LINKAGES = ("average", "complete", "single")
MAX_K = 100  # clusters k='auto' may try
log = logging.getLogger(__name__)


def _first_appearance(labels: np.ndarray) -> np.ndarray:
    """Relabel so ids are 0, 1, ... in order of first appearance."""
    order = {c: i for i, c in enumerate(dict.fromkeys(labels.tolist()))}
    return np.array([order[c] for c in labels.tolist()], dtype=int)


class SenseClusterer:
    """Agglomerative clustering of usage vectors on cosine distance (scikit-learn style).

    Parameters
    ----------
    k : the number of clusters (1..n), or ``"auto"`` (best silhouette over 2..min(k_max, n − 1)).
    linkage : ``"average"`` (default), ``"complete"`` or ``"single"``.
    k_max : the largest k tried by ``"auto"``.

    Learned attributes: ``labels_`` ``(n,)``, ``k_`` (the clusters found: fewer than asked
    only when usages are identical), ``silhouette_`` (None when k is 1 or
    n, where it is undefined), ``silhouette_by_k_`` (``{k: score}`` of every k tried; only
    the chosen k when k is given).
    """

    def __init__(self, k: int | str = "auto", linkage: str = "average", k_max: int = 8):
        self.k = k
        self.linkage = linkage
        self.k_max = k_max

    def _check(self, x: np.ndarray) -> np.ndarray:
        """``x`` as finite unit rows ``(n, dim)``: cosine distances do not change, and huge
        or tiny coordinates cannot overflow or vanish in them."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2:
            raise DimensionError(f"SenseClusterer.fit needs an (n_usages, dim) array, got {x.shape}")
        x = check_points(x, "usages")
        top = np.abs(x).max(axis=1, initial=0.0)  # (n,)
        zero = np.flatnonzero(top == 0)
        if zero.size:
            raise ZeroVectorError(f"usages {zero.tolist()} are zero vectors; cosine distance is undefined")
        x = x / top[:, None]
        x = x / np.linalg.norm(x, axis=1, keepdims=True)
        check_choice("linkage", self.linkage, LINKAGES)
        n = len(x)
        check_int("k_max", self.k_max, low=2, high=MAX_K, hint="the most clusters k='auto' tries")
        if self.k == "auto":
            if n < 3:
                raise InputError(f"k='auto' needs at least 3 usages to compare k = 2.. by silhouette, got {n}; give k")
        else:
            check_int("k", self.k, low=1, high=n, hint=f"or 'auto'; there are {n} usages")
        return x

    def _score(self, x: np.ndarray, labels: np.ndarray) -> float | None:
        n_clusters = len(set(labels.tolist()))
        if not 2 <= n_clusters <= len(x) - 1:
            return None
        return float(silhouette_score(x, labels, metric="cosine"))

    def fit(self, x: np.ndarray, y=None) -> SenseClusterer:
        x = self._check(x)  # (n, dim)
        n = len(x)
        if n == 1:
            tree = None
        else:
            tree = linkage(x, method=self.linkage, metric="cosine")  # (n - 1, 4)

        def cut(k: int) -> np.ndarray:
            if tree is None or k == 1:
                return np.zeros(n, dtype=int)
            return _first_appearance(fcluster(tree, t=k, criterion="maxclust"))

        if self.k == "auto":
            ks = range(2, min(self.k_max, n - 1) + 1)
            cuts = {k: cut(k) for k in ks}
            self.silhouette_by_k_ = {k: self._score(x, cuts[k]) for k in ks}
            scored = {k: s for k, s in self.silhouette_by_k_.items() if s is not None}
            best = max(scored, key=lambda k: (scored[k], -k)) if scored else 2
            self.k_, self.labels_ = best, cuts[best]
        else:
            self.k_, self.labels_ = int(self.k), cut(int(self.k))
            self.silhouette_by_k_ = {self.k_: self._score(x, self.labels_)}
        self.silhouette_ = self.silhouette_by_k_[self.k_]
        found = len(set(self.labels_.tolist()))
        if found != self.k_:  # identical usages cannot be split further
            log.warning("asked for %d clusters, found %d: some usages are identical", self.k_, found)
            self.k_ = found
        return self

    def fit_predict(self, x: np.ndarray, y=None) -> np.ndarray:
        return self.fit(x).labels_


def purity(clusters: Sequence[int], gold: Sequence) -> float:
    """Share of items whose gold label is their cluster's most common gold label."""
    if len(clusters) != len(gold) or not len(clusters):
        raise InputError(f"purity needs as many gold labels as cluster labels, got {len(gold)} and {len(clusters)}")
    by_cluster: dict[int, Counter] = {}
    for c, g in zip(clusters, gold, strict=True):
        by_cluster.setdefault(c, Counter())[g] += 1
    return sum(cnt.most_common(1)[0][1] for cnt in by_cluster.values()) / len(clusters)


def cluster_senses(
    x: np.ndarray, *, k: int | str = "auto", gold: Sequence | None = None, linkage: str = "average",
    k_max: int = 8,
) -> dict[str, Any]:
    """Cluster ``(n_usages, dim)`` vectors; returns ``{k, k_chosen_by, silhouette,
    silhouette_by_k, labels}`` plus ``purity`` and ``ari`` (adjusted Rand index) when
    ``gold`` labels (one per usage) are given."""
    model = SenseClusterer(k=k, linkage=linkage, k_max=k_max).fit(x)
    out = {
        "k": model.k_, "k_chosen_by": "silhouette" if k == "auto" else "given",
        "silhouette": model.silhouette_,
        "silhouette_by_k": {str(kk): s for kk, s in model.silhouette_by_k_.items()},
        "labels": model.labels_.tolist(),
    }
    if gold is not None:
        gold = list(gold)
        if len(gold) != len(model.labels_):
            raise InputError(f"{len(gold)} gold labels for {len(model.labels_)} usages; give one label per usage")
        out["purity"] = purity(out["labels"], gold)
        out["ari"] = float(adjusted_rand_score(gold, out["labels"]))
    return out


def _clusters(usages: Usages, labels: list[int], gold: list | None) -> list[dict[str, Any]]:
    rows = []
    for c in sorted(set(labels)):
        members = [i for i, lab in enumerate(labels) if lab == c]
        row = {"id": c, "size": len(members), "positions": [usages.usages[i].position for i in members],
               "sentences": [usages.usages[i].sentence for i in members]}
        if gold is not None:
            row["gold"] = dict(Counter(gold[i] for i in members).most_common())
        rows.append(row)
    return rows


def senses(
    encoder: Encoder, sentences: Sequence[str], word: str, *, k: int | str = "auto",
    gold: Sequence | None = None, layer: int = -1, occurrence: int | None = None,
    missing: str = "error", projection: str | None = None, linkage: str = "average",
    k_max: int = 8, seed: int = 0, run: Callable = run_here,
) -> dict[str, Any]:
    """Cluster the usages of ``word`` in ``sentences`` (one usage per sentence).

    ``gold``: one label per input sentence (aligned with ``sentences``). ``run(fn, *args,
    **kwargs)`` calls the numeric steps (clustering, projection): here by default; the lab
    passes its worker processes. Returns
    ``{word, layer, layer_name, n_usages, k, k_chosen_by, silhouette, silhouette_by_k,
    labels, clusters, skipped, encoder}`` (+ ``purity``, ``ari`` with gold; +
    ``projection: {method, points}`` with a projection). ``labels`` has one entry per
    input sentence, in input order: its cluster id, or None for a skipped sentence.
    """
    sentences = check_texts(sentences)
    if projection is not None:
        check_choice("projection", projection, PROJECTIONS)
    if gold is not None and len(gold) != len(sentences):
        raise InputError(
            f"{len(gold)} labels for {len(sentences)} sentences; give one label per sentence, "
            "in the same order (blank lines and # comments are ignored in both files)"
        )
    if occurrence == "all":
        raise InputError("senses takes one usage per sentence; choose occurrence=0, 1, ...")
    usages = collect_usages(encoder, sentences, word, occurrence=occurrence, missing=missing)
    x = usages.at(layer)  # (n_usages, dim)
    gold_kept = None if gold is None else [gold[p] for p in usages.positions]
    result = run(cluster_senses, x, k=k, gold=gold_kept, linkage=linkage, k_max=k_max)
    by_position = dict(zip(usages.positions, result["labels"], strict=True))
    out = {
        "word": word, "layer": usages.layer_id(layer), "layer_name": usages.layer_name(layer), "n_usages": len(usages),
        **result,
        "labels": [by_position.get(p) for p in range(len(sentences))],
        "clusters": _clusters(usages, result["labels"], gold_kept),
        "skipped": [s["position"] for s in usages.skipped], "encoder": usages.encoder,
    }
    if projection is not None:
        out["projection"] = {"method": projection, "points": run(project, x, projection, seed=seed).tolist(),
                             "positions": usages.positions}
    return out
