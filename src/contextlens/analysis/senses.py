"""The sense probe: cluster a word's usages and see whether the clusters are its senses.

How the usages are clustered (:class:`SenseClusterer`; the defaults were chosen on
sense-labelled usages, see ``benchmarks/index_senses.py --clustering`` and its section of
``benchmarks/RESULTS.md``):

- **centred**: each usage vector is scaled to unit length, the word's mean usage direction
  is subtracted and the rows are scaled to unit length again. Every usage of a word shares
  a large common direction (the word itself, and the anisotropy of the model's space), so
  raw cosines between usages sit close together and a clustering of them splits off a few
  outliers; centred, they spread out by what differs: the context.
- **spectral** clustering of the centred rows (:mod:`.spectral`: a self-tuning
  nearest-neighbour graph, k-means on its Laplacian's eigenvectors), with ``k="auto"``
  read from the **eigengap** over ``2..k_max``: it finds a small sense as readily as a large
  one, where silhouette favours two large halves (on minilm's last layer, silhouette with
  average linkage put the river *bank* of the shipped corpora, a tenth of its usages, with
  the banks of money). ``method="average"|"complete"|"single"`` clusters agglomeratively on
  cosine instead, ``k="auto"`` then choosing the best silhouette of the clustered rows.
- **silhouette** (``silhouette_``) is always measured in the model's own space (cosine
  between the usage vectors as given), so it compares across methods and settings;
  ``score_by_k_`` holds what chose k.
- at most ``max_clustered`` usages (default :data:`MAX_SAMPLE`) are clustered, a seeded
  sample when there are more; the others join the cluster whose centroid is nearest.

Cluster ids are numbered in order of first appearance, so the first usage is always in
cluster 0.

>>> import numpy as np
>>> x = np.array([[1.0, 0.1], [1.0, 0.0], [0.1, 1.0], [0.0, 1.0], [0.05, 1.0]])
>>> sc = SenseClusterer().fit(x)
>>> sc.k_, sc.k_chosen_by_, sc.labels_.tolist(), round(sc.silhouette_, 3)
(2, 'eigengap', [0, 0, 1, 1, 1], 0.996)
>>> sc.predict(np.array([[0.2, 1.0], [3.0, 0.5]])).tolist()
[1, 0]
>>> purity([0, 0, 1, 1], ["money", "money", "river", "money"])
0.75
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, Protocol

import numpy as np

from ..bounds import MAX_CLUSTERED, MAX_SENTENCES, MAX_SENTENCES_LIMIT
from ..encoders.base import Encoder
from ..encoders.targets import check_texts
from ..errors import (
    DimensionError,
    EmptyInputError,
    InputError,
    ZeroVectorError,
    ask,
    check_choice,
    check_int,
)
from ..text import tokenize
from .projection import COINCIDE, PROJECTIONS, check_points, project, run_here
from .spectral import eigengap_k, knn_cosine, laplacian_spectrum, self_tuning_affinity, spectral_labels
from .usages import Usage, every_word, usages_in

__all__ = ["SenseClusterer", "cluster_senses", "senses", "purity", "METHODS", "LINKAGES", "MAX_SAMPLE",
           "MAX_CLUSTERED", "MAX_SENTENCES", "MAX_SENTENCES_LIMIT"]

LINKAGES = ("average", "complete", "single")
METHODS = ("spectral", *LINKAGES)
MAX_K = 100  # clusters k='auto' may try
MAX_SAMPLE = 2_000  # usages clustered by default; the others join the nearest cluster
CHUNK = 64  # sentences encoded at once by senses(): one chunk's encodings (every layer) in memory
ASSIGN_BLOCK = 8_192  # rows assigned to their nearest centroid at once
NEIGHBOURS = 10  # of each usage in the spectral graph
SCALE_NEIGHBOUR = 7  # the neighbour whose distance is a usage's local scale (Zelnik-Manor & Perona)
log = logging.getLogger(__name__)


def _first_appearance(labels: np.ndarray) -> np.ndarray:
    """Relabel so ids are 0, 1, ... in order of first appearance."""
    order = {c: i for i, c in enumerate(dict.fromkeys(labels.tolist()))}
    return np.array([order[c] for c in labels.tolist()], dtype=int)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """``x`` with each row scaled to unit length (a row of zeros stays zero); scaled by its
    largest coordinate first, so huge or tiny values neither overflow nor vanish.

    >>> unit_rows(np.array([[3.0, 4.0], [0.0, 0.0], [1e300, 1e300]])).round(4).tolist()
    [[0.6, 0.8], [0.0, 0.0], [0.7071, 0.7071]]
    """
    top = np.abs(x).max(axis=1, initial=0.0, keepdims=True)  # (n, 1)
    x = x / np.where(top > 0, top, 1.0)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


class SenseClusterer:
    """Clusters usage vectors into senses (scikit-learn style; see the module's docstring).

    Parameters
    ----------
    k : the number of clusters (1..n), or ``"auto"`` (eigengap, or silhouette for the
        agglomerative methods, over 2..min(k_max, n − 1)).
    method : ``"spectral"`` (default), or an agglomerative linkage on cosine: ``"average"``,
        ``"complete"``, ``"single"``.
    k_max : the largest k tried by ``"auto"``.
    centre : subtract the mean usage direction before clustering (default True).
    neighbours : each usage's nearest usages in the spectral graph.
    seed : k-means' and the eigen-solver's seed.

    Learned attributes: ``labels_`` ``(n,)``, ``k_`` (the clusters found: fewer than asked
    only when usages coincide), ``k_chosen_by_`` (``"eigengap"``, ``"silhouette"`` or
    ``"given"``), ``score_by_k_`` (``{k: score}`` of every k ``"auto"`` compared; empty for a
    given k), ``silhouette_`` (in the model's space; None when k is 1 or n, where it is
    undefined), ``mean_`` (the mean unit row subtracted, zeros without centring) and
    ``centroids_`` ``(k, dim)`` (unit centroids in the clustered space, for :meth:`predict`).
    """

    def __init__(self, k: int | str = "auto", method: str = "spectral", k_max: int = 8, centre: bool = True,
                 neighbours: int = NEIGHBOURS, seed: int = 0):
        self.k = k
        self.method = method
        self.k_max = k_max
        self.centre = centre
        self.neighbours = neighbours
        self.seed = seed

    def _check(self, x: np.ndarray) -> np.ndarray:
        """``x`` as finite unit rows ``(n, dim)``, after checking every parameter."""
        x = np.asarray(x, dtype=np.float64)
        if x.ndim != 2:
            raise DimensionError(f"SenseClusterer.fit needs an (n_usages, dim) array, got {x.shape}")
        x = check_points(x, "usages")
        zero = np.flatnonzero(~np.abs(x).any(axis=1))
        if zero.size:
            raise ZeroVectorError(f"usages {zero.tolist()} are zero vectors; cosine distance is undefined")
        check_choice("clustering method", self.method, METHODS)
        n = len(x)
        check_int("usages clustered", n, low=1, high=MAX_CLUSTERED,
                  hint="cluster a sample and assign the others with predict() (cluster_senses does)")
        check_int("k_max", self.k_max, low=2, high=MAX_K, hint="the most clusters k='auto' tries")
        check_int("neighbours", self.neighbours, low=1, high=1000,
                  hint="each usage's neighbours in the graph")
        if self.k == "auto":
            if n < 3:
                raise InputError(f"k='auto' needs at least 3 usages to compare k = 2.., got {n}; give k")
        else:
            check_int("k", self.k, low=1, high=n, hint=f"or 'auto'; there are {n} usages")
        return unit_rows(x)

    def transform(self, x: np.ndarray) -> np.ndarray:
        """``(m, dim)``: rows ``x`` in the space the clustering sees: unit length, centred
        (minus ``mean_``) and unit length again; a row at the mean, which has no direction of
        its own, keeps its unit row."""
        x = unit_rows(np.asarray(x, dtype=np.float64))
        if not self.centre:
            return x
        z = unit_rows(x - self.mean_)
        flat = ~z.any(axis=1)
        z[flat] = x[flat]
        return z

    def fit(self, x: np.ndarray, y=None) -> SenseClusterer:
        x = self._check(x)  # (n, dim) unit rows
        n = len(x)
        self.mean_ = x.mean(axis=0) if self.centre else np.zeros(x.shape[1])
        z = self.transform(x)  # (n, dim)
        self.score_by_k_: dict[int, float | None] = {}
        auto_by = "eigengap" if self.method == "spectral" else "silhouette"
        self.k_chosen_by_ = "given" if self.k != "auto" else auto_by
        coincide = float(np.abs(x - x[0]).max()) < COINCIDE
        if n == 1 or self.k == 1 or coincide:
            k, labels = (1 if self.k == "auto" else int(self.k)), np.zeros(n, dtype=int)
        elif self.k == n:
            k, labels = n, np.arange(n)
        elif self.method == "spectral":
            k, labels = self._spectral(z)
        else:
            k, labels = self._agglomerative(z)
        self.labels_ = _first_appearance(labels)
        self.k_ = len(set(self.labels_.tolist()))
        if self.k_ != k:  # coinciding usages cannot be split further
            log.warning("asked for %d clusters, found %d: some usages coincide", k, self.k_)
        self.silhouette_ = _silhouette(x, self.labels_)
        self.centroids_ = np.stack([_unit_mean(z[self.labels_ == c]) for c in range(self.k_)])  # (k, dim)
        return self

    def _spectral(self, z: np.ndarray) -> tuple[int, np.ndarray]:
        """Spectral clustering of the distinct rows of ``z`` (copies of a usage always share
        a cluster; k-means weighs each row by its copies)."""
        rows, of, copies = np.unique(z, axis=0, return_inverse=True, return_counts=True)
        of = of.ravel()
        m = len(rows)
        if self.k == "auto" and m <= 2:
            return m, of
        k = min(self.k_max, m - 1) if self.k == "auto" else min(int(self.k), m)
        if k == m:  # as many clusters as distinct rows
            return int(self.k), of
        idx, dist = knn_cosine(rows, self.neighbours)
        affinity = self_tuning_affinity(idx, dist, SCALE_NEIGHBOUR)
        values, vectors = laplacian_spectrum(affinity, k + 1, seed=self.seed)
        if self.k == "auto":
            k, self.score_by_k_ = eigengap_k(values, 2, k)
        return k if self.k == "auto" else int(self.k), spectral_labels(vectors, k, copies, seed=self.seed)[of]

    def _agglomerative(self, z: np.ndarray) -> tuple[int, np.ndarray]:
        from scipy.cluster.hierarchy import fcluster, linkage

        tree = linkage(z, method=self.method, metric="cosine")  # (n - 1, 4)
        if self.k != "auto":
            return int(self.k), fcluster(tree, t=int(self.k), criterion="maxclust")
        ks = range(2, min(self.k_max, len(z) - 1) + 1)
        cuts = {k: fcluster(tree, t=k, criterion="maxclust") for k in ks}
        self.score_by_k_ = {k: _silhouette(z, c) for k, c in cuts.items()}
        scored = {k: s for k, s in self.score_by_k_.items() if s is not None}
        best = max(scored, key=lambda k: (scored[k], -k)) if scored else 2
        return best, cuts[best]

    def fit_predict(self, x: np.ndarray, y=None) -> np.ndarray:
        return self.fit(x).labels_

    def predict(self, x: np.ndarray) -> np.ndarray:
        """``(m,)``: the cluster of each new row ``x`` ``(m, dim)``: the one whose centroid is
        nearest by cosine, in the space the clustering saw (ties: the lower id)."""
        out = np.empty(len(x), dtype=int)
        for lo in range(0, len(x), ASSIGN_BLOCK):
            block = check_points(np.asarray(x[lo: lo + ASSIGN_BLOCK], dtype=np.float64), "usages")
            out[lo: lo + len(block)] = np.argmax(self.transform(block) @ self.centroids_.T, axis=1)
        return out


def _unit_mean(rows: np.ndarray) -> np.ndarray:
    mean = rows.mean(axis=0)
    norm = np.linalg.norm(mean)
    return mean / norm if norm > 0 else mean


def _silhouette(x: np.ndarray, labels: np.ndarray) -> float | None:
    """Mean silhouette (cosine) of ``labels`` over the rows ``x``; None unless 2..n − 1 clusters.
    The distances are read in blocks of at most 16 MiB."""
    from sklearn import config_context
    from sklearn.metrics import silhouette_score

    if not 2 <= len(set(labels.tolist())) <= len(x) - 1:
        return None
    with config_context(working_memory=16):
        return float(silhouette_score(x, labels, metric="cosine"))


def purity(clusters: Sequence[int], gold: Sequence) -> float:
    """Share of items whose gold label is their cluster's most common gold label."""
    if len(clusters) != len(gold) or not len(clusters):
        raise InputError(f"purity needs as many gold labels as cluster labels, got {len(gold)} and "
                         f"{len(clusters)}")
    by_cluster: dict[int, Counter] = {}
    for c, g in zip(clusters, gold, strict=True):
        by_cluster.setdefault(c, Counter())[g] += 1
    return sum(cnt.most_common(1)[0][1] for cnt in by_cluster.values()) / len(clusters)


def sample_rows(n: int, size: int, seed: int = 0) -> np.ndarray:
    """The sorted indices of a seeded sample of ``min(n, size)`` of ``n`` rows (all when ``n <= size``).

    >>> sample_rows(5, 10).tolist(), len(sample_rows(10_000, 3)), sample_rows(10_000, 3, seed=1).tolist()
    ([0, 1, 2, 3, 4], 3, [4730, 5117, 7551])
    """
    if n <= size:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=size, replace=False))


def cluster_senses(
    x: np.ndarray, *, k: int | str = "auto", gold: Sequence | None = None, method: str = "spectral",
    k_max: int = 8, centre: bool = True, max_clustered: int = MAX_SAMPLE, seed: int = 0,
) -> dict[str, Any]:
    """Cluster ``(n_usages, dim)`` vectors; returns ``{k, k_chosen_by, method, centred,
    silhouette, score_by_k, labels, n_clustered}`` plus ``purity`` and ``ari`` (adjusted Rand
    index) when ``gold`` labels (one per usage) are given. Above ``max_clustered`` usages a
    seeded sample of that many is clustered (``n_clustered``; ``silhouette`` is the sample's)
    and each other usage joins the cluster with the nearest centroid.
    """
    check_int("max_clustered", max_clustered, low=2, high=MAX_CLUSTERED,
              hint="usages clustered; the others join the nearest cluster")
    if gold is not None and len(gold) != len(x):
        raise InputError(f"{len(gold)} gold labels for {len(x)} usages; give one label per usage")
    chosen = sample_rows(len(x), max_clustered, seed)
    model = SenseClusterer(k=k, method=method, k_max=k_max, centre=centre, seed=seed).fit(x[chosen])
    labels = np.empty(len(x), dtype=int)
    labels[chosen] = model.labels_
    rest = np.setdiff1d(np.arange(len(x)), chosen)
    if rest.size:
        log.info("clustered a sample of %d of %d usages; the others joined the nearest cluster",
                 len(chosen), len(x))
        labels[rest] = model.predict(x[rest])
    labels = _first_appearance(labels)
    out = {
        "k": model.k_, "k_chosen_by": model.k_chosen_by_, "method": method, "centred": bool(centre),
        "silhouette": model.silhouette_, "score_by_k": {str(kk): s for kk, s in model.score_by_k_.items()},
        "labels": labels.tolist(), "n_clustered": len(chosen),
    }
    if gold is not None:
        from sklearn.metrics import adjusted_rand_score

        gold = list(gold)
        out["purity"] = purity(out["labels"], gold)
        out["ari"] = float(adjusted_rand_score(gold, out["labels"]))
    return out


def _clusters(usages: list[Usage], labels: list[int], gold: list | None) -> list[dict[str, Any]]:
    rows = []
    for c in sorted(set(labels)):
        members = [i for i, lab in enumerate(labels) if lab == c]
        row = {"id": c, "size": len(members), "positions": [usages[i].position for i in members],
               "sentences": [usages[i].sentence for i in members]}
        if gold is not None:
            row["gold"] = dict(Counter(gold[i] for i in members).most_common())
        rows.append(row)
    return rows


class LayerUsages(NamedTuple):
    """A word's usages at one layer: what :func:`collect_layer` keeps."""

    usages: list[Usage]
    vectors: np.ndarray  # (n_usages, dim) float32
    skipped: list[int]  # positions of the sentences without the word (missing="skip")
    layer: int  # the layer number
    layer_name: str
    encoder: dict  # the first encoding's meta


def _kept_words(sentences: list[str], word: str, occurrence) -> list[list[int] | None]:
    """Per sentence, the indices of ``word``'s occurrences when the one used is known from
    the words alone (the sentence is encoded keeping only them: no attention weights, no
    other word's vectors), else None (encoded whole, so its error or skip says why).

    >>> _kept_words(["the bank", "a bank by the bank", "the river"], "bank", None)
    [[1], None, None]
    >>> _kept_words(["the bank", "a bank by the bank"], "bank", 1)
    [None, [1, 4]]
    """
    out = []
    for text in sentences:
        hits = [i for i, w in enumerate(tokenize(text)) if w.text.lower() == word.lower()]
        known = len(hits) == 1 if occurrence is None else 0 <= occurrence < len(hits)
        out.append(hits if hits and known else None)
    return out


def collect_layer(encoder: Encoder, sentences: list[str], word: str, layer: int, *, occurrence=None,
                  missing: str = "error") -> LayerUsages:
    """The usages of ``word`` at ``layer``, encoded :data:`CHUNK` sentences at a time keeping
    only that layer and only the word (:func:`_kept_words`; the other sentences every word,
    without attention weights), so memory grows with the usages, not with sentences × layers
    × words (as :func:`~contextlens.analysis.usages.collect_usages` holds them); same errors."""
    usages: list[Usage] = []
    rows: list[np.ndarray] = []
    skipped: list[int] = []
    first = None
    for lo in range(0, len(sentences), CHUNK):
        part = sentences[lo: lo + CHUNK]
        keep = _kept_words(part, word, occurrence)
        # a sentence whose usage is not known from its words keeps every word (its error or skip
        # says why), never attention weights (every_word)
        every = every_word([t for t, k in zip(part, keep) if k is None])[::-1]
        encodings = encoder.encode(part, targets=[k if k is not None else every.pop() for k in keep])
        for i, (enc, wanted) in enumerate(zip(encodings, keep)):
            if wanted is not None and not len(enc.words):  # the encoder could not keep it (not in its table)
                encodings[i] = encoder.encode([part[i]])[0]  # one sentence whole: the error says why
        try:
            got = usages_in(encodings, word, occurrence=occurrence, missing=missing, sentences=part, start=lo)
        except EmptyInputError:  # no sentence of this chunk has the word (missing="skip"): others may
            skipped += range(lo, lo + len(part))
            continue
        if first is None:
            first = got
        usages += got.usages
        rows.append(got.at(layer).astype(np.float32))
        skipped += [s["position"] for s in got.skipped]
    if first is None:
        raise EmptyInputError(f"no sentence contains {word!r}; give sentences that use it")
    return LayerUsages(usages, np.concatenate(rows), skipped, first.layer_id(layer), first.layer_name(layer),
                       first.encoder)


class SenseNamer(Protocol):
    """What :func:`senses` asks of ``wordnet=``: a namer of clusters from a floor above the
    analyses (:class:`contextlens.evaluation.wordnet_map.WordNetNamer` names them by WordNet
    senses), so that this module needs neither the evaluation's data nor its models."""

    def prepare(self, encoder: Encoder, word: str, layer: int) -> Any:
        """Check ``encoder``, ``word`` and ``layer`` (a layer number) before any encoding; return
        what :meth:`name` needs."""

    def name(self, prepared: Any, layer: int, centroids: np.ndarray) -> dict[str, Any]:
        """``{"senses": [one list of named senses per centroid], "lemma", "unseen"}`` for the
        clusters' ``centroids`` (k, dim) at ``layer``."""


def senses(
    encoder: Encoder, sentences: Sequence[str], word: str, *, k: int | str = "auto",
    gold: Sequence | None = None, layer: int = -1, occurrence: int | None = None,
    missing: str = "error", projection: str | None = None, method: str = "spectral",
    k_max: int = 8, seed: int = 0, max_sentences: int = MAX_SENTENCES, run: Callable = run_here,
    wordnet: SenseNamer | None = None,
) -> dict[str, Any]:
    """Cluster the usages of ``word`` in ``sentences`` (one usage per sentence).

    ``gold``: one label per input sentence (aligned with ``sentences``). ``run(fn, *args,
    **kwargs)`` calls the numeric steps (clustering, projection): here by default; the lab
    passes its worker processes. At most ``max_sentences`` sentences are read (each is
    encoded: times in ``benchmarks/RESULTS.md``); above :data:`MAX_SAMPLE` usages a
    seeded sample is clustered and projected (``n_clustered``). Returns
    ``{word, layer, layer_name, n_usages, n_clustered, k, k_chosen_by, method, centred,
    silhouette, score_by_k, labels, clusters, skipped, encoder}`` (+ ``purity``, ``ari``
    with gold; + ``projection: {method, points, positions}`` with a projection). ``labels``
    has one entry per input sentence, in input order: its cluster id, or None for a
    skipped sentence.

    ``wordnet``, a :class:`SenseNamer` (:class:`contextlens.evaluation.wordnet_map.WordNetNamer`:
    what ``contextlens index senses --wordnet`` does), names each cluster by WordNet senses: each
    cluster gets ``wordnet: [{key, synset, gloss, similarity, semcor_count, source}]`` (the senses
    nearest its centroid, best first), the result ``wordnet_lemma`` and ``wordnet_unseen: [{key,
    synset, gloss}]`` (the word's senses with no embedding). The namer checks the encoder, the
    layer and its data before any encoding.
    """
    sentences = check_texts(sentences)
    check_int("max_sentences", max_sentences, low=1, high=MAX_SENTENCES_LIMIT,
              hint="sentences encoded")
    if len(sentences) > max_sentences:
        raise InputError(f"{len(sentences):,} sentences given; senses encodes at most {max_sentences:,} "
                         f"unless asked for more (each is encoded, which takes time): "
                         f"{ask('max_sentences', len(sentences))}, or give fewer sentences")
    if projection is not None:
        check_choice("projection", projection, PROJECTIONS)
    check_choice("clustering method", method, METHODS)
    if gold is not None and len(gold) != len(sentences):
        raise InputError(
            f"{len(gold)} labels for {len(sentences)} sentences; give one label per sentence, "
            "in the same order (blank lines and # comments are ignored in both files)"
        )
    if occurrence == "all":
        raise InputError("senses takes one usage per sentence; choose occurrence=0, 1, ...")
    position = encoder.layer_position(layer)  # a layer the encoder lacks fails before any encoding
    if wordnet is not None:  # the model, the layer, the data and the word checked before any encoding
        prepared = wordnet.prepare(encoder, word, encoder.layer_ids[position])
    found = collect_layer(encoder, sentences, word, layer, occurrence=occurrence, missing=missing)
    n = len(found.usages)
    if k == "auto" and n < 3:
        raise EmptyInputError(f"only {n} sentence{'' if n == 1 else 's'} contain{'s' if n == 1 else ''} "
                              f"{word!r}: "
                              "telling its senses apart needs at least 3 usages; add sentences that use it")
    positions = [u.position for u in found.usages]
    gold_kept = None if gold is None else [gold[p] for p in positions]
    result = run(cluster_senses, found.vectors, k=k, gold=gold_kept, method=method, k_max=k_max, seed=seed)
    by_position = dict(zip(positions, result["labels"], strict=True))
    out = {
        "word": word, "layer": found.layer, "layer_name": found.layer_name, "n_usages": n, **result,
        "labels": [by_position.get(p) for p in range(len(sentences))],
        "clusters": _clusters(found.usages, result["labels"], gold_kept),
        "skipped": found.skipped, "encoder": found.encoder,
    }
    if wordnet is not None:
        labels = np.array(result["labels"])
        centroids = np.stack([_unit_mean(unit_rows(found.vectors[labels == c]))  # (k, dim)
                              for c in sorted(set(result["labels"]))])
        mapped = wordnet.name(prepared, found.layer, centroids)
        for cluster, best in zip(out["clusters"], mapped["senses"], strict=True):
            cluster["wordnet"] = best
        out.update(wordnet_lemma=mapped["lemma"], wordnet_unseen=mapped["unseen"])
    if projection is not None:
        shown = sample_rows(n, MAX_SAMPLE, seed)
        out["projection"] = {"method": projection, "positions": [positions[i] for i in shown],
                             "points": run(project, found.vectors[shown], projection, seed=seed).tolist()}
    return out
