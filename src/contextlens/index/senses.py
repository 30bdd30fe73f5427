"""Induce a word's senses from its usages in an index.

A sample of the word's usages is clustered (:class:`contextlens.analysis.senses.SenseClusterer`:
centred, spectral, k by eigengap or given; the usages with the lowest ids, which are hashes,
so a fixed pseudo-random sample of at most ``max_usages``); every other usage is read in
batches and joins the sense whose centroid is nearest, so the senses' sizes and members
cover all the word's usages while memory and time stay bounded by the sample. Each sense is
described by

- its most typical sentences: the sample's usages nearest the sense's centroid (cosine, in the
  space the clustering sees: centred);
- its most distinctive context words: the words within ``window`` words of the sample's usages,
  ranked by local mutual information, ``LMI(w, c) = n(w, c) · log(p(w | c) / p(w))``
  (PMI weighted by the count, so one-off words do not top the list; Evert 2005);
- its members: every usage (id, document, sentence number, sentence, cosine to the
  centroid), up to :data:`MAX_MEMBERS` usages of the word (above, the sample's only).

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

from ..analysis.senses import MAX_CLUSTERED, MAX_SAMPLE, SenseClusterer
from ..errors import InputError, check_int
from ..passes.rows import ROW_COLUMNS
from ..text import tokenize
from .reader import UsageReader, open_store
from .search import _target
from .store import _sql_str

__all__ = ["induce_senses", "index_encoder", "distinctive_words", "context_words", "typical", "centroid",
           "sample_ids", "MAX_MEMBERS"]

log = logging.getLogger(__name__)
#: function words left out of the context words (they are frequent everywhere)
STOPWORDS = frozenset(
    "a an the and or but if then of in on at to for from by with without about into onto over under as is "
    "are was were be been being am do does did done have has had having it its it's this that these those "
    "there here he she they we you i me him her them us my your his their our mine yours not no nor so too "
    "very can could will would shall should may might must which who whom whose what when where why how all "
    "any both each few more most other some such only own same than just also up down out off again "
    "s t".split()
)
MAX_MEMBERS = 200_000  # usages listed as members (about 1 KB each in memory); above, the sample's only
BATCH = 8_192  # usages read at once from the index


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


def sample_ids(store: UsageReader, word: str, size: int) -> list[str]:
    """The ``size`` lowest usage ids of ``word`` (sorted), read in batches: memory holds
    ``size`` + one batch of ids, however many usages the word has."""
    kept = np.array([], dtype="S16")
    query = store.table.search().where(f"word = {_sql_str(word)}").select(["usage_id"]).limit(None)
    for batch in query.to_batches(BATCH):
        ids = np.asarray(batch.column("usage_id").to_pylist(), dtype="S16")
        kept = np.sort(np.concatenate([kept, ids]))[:size]
    return [i.decode() for i in kept]


def _rows(store: UsageReader, where: str, col: str):
    """Batches of ``(rows, vectors (m, dim) float32)`` of the usages matching ``where``."""
    dim = int(store.params["dim"])
    query = store.table.search().where(where).select([*ROW_COLUMNS, col]).limit(None)
    for batch in query.to_batches(BATCH):
        x = batch.column(col).flatten().to_numpy(zero_copy_only=False).reshape(-1, dim).astype(np.float32)
        yield batch.drop_columns([col]).to_pylist(), x


def _member(row: dict, similarity: float) -> dict[str, Any]:
    return {"usage_id": row["usage_id"], "doc": row["doc"], "sentence_no": row["sentence_no"],
            "start": row["start"], "end": row["end"], "sentence": row["sentence"],
            "similarity": round(similarity, 4)}


def induce_senses(db: str | os.PathLike | UsageReader, word: str, *, k: int | str = "auto",
                  layer: int | None = None, max_usages: int = MAX_SAMPLE, n_sentences: int = 3,
                  n_words: int = 8, window: int = 5, k_max: int = 8, wordnet: bool = False,
                  data_dir: str | os.PathLike | None = None, progress: Callable[[int], None] | None = None,
                  ) -> dict[str, Any]:
    """Cluster ``word``'s usages in the index into senses and describe each.

    Returns ``{word, layer, model, n_usages, n_total, n_clustered, members_listed, k,
    k_chosen_by, method, silhouette, score_by_k, senses: [{id, size, share, typical:
    [{usage_id, sentence, doc, similarity}], context_words: [{word, count, lmi}], members:
    [{usage_id, doc, sentence_no, start, end, sentence, similarity}]}]}``, senses largest
    first, members most similar first. ``n_clustered``: the sample clustered (at most
    ``max_usages``, the lowest usage ids); the others joined the nearest sense; sizes count
    all ``n_usages`` (= ``n_total``) usages; ``members_listed``: ``"all"``, or
    ``"sample"`` above :data:`MAX_MEMBERS` usages.

    ``wordnet=True`` also maps each sense to WordNet (:mod:`contextlens.evaluation.wordnet_map`; needs WordNet
    and SemCor in ``data_dir``, see :func:`~contextlens.datasets.resolve_data_dir`):
    each sense gets ``wordnet: [{key, synset, gloss, similarity, semcor_count, source}]``
    (its best WordNet senses by cosine with its centroid) and the result ``wordnet_lemma``
    and ``wordnet_unseen: [{key, synset, gloss}]`` (the word's senses with no embedding);
    ``progress`` then gets the SemCor sentences read (on a cache miss only).
    """
    check_int("max_usages", max_usages, low=2, high=MAX_CLUSTERED,
              hint="how many of the word's usages are clustered (the others join the nearest sense)")
    check_int("n_sentences", n_sentences, low=0, high=1000, hint="typical sentences shown per sense")
    check_int("n_words", n_words, low=0, high=1000, hint="context words shown per sense")
    check_int("window", window, low=1, high=1000, hint="words each side counted as context")
    store = db if isinstance(db, UsageReader) else open_store(db)
    target = _target(store, word)
    col_layer = store.layers[-1] if layer is None else layer
    col = store.layer_column(col_layer)  # a layer the index lacks fails here
    if wordnet:  # data, layer and lemma checked before any work
        from ..evaluation.wordnet_map import wordnet_candidates

        candidates = wordnet_candidates(target, col_layer, data_dir,
                                        layers_said=f"{store.path} stores layers "
                                                    f"{', '.join(map(str, store.layers))}")
    store.refresh()
    total = store.count(target)
    ids = sample_ids(store, target, max_usages)
    if len(ids) < 2:
        raise InputError(f"{word!r} has {total} usage(s) in {store.path}; sense induction needs at "
                         "least 2 (3 with k='auto'): index a larger corpus")
    in_word = f"word = {_sql_str(target)}"
    last = _sql_str(ids[-1])
    rows, parts = [], []
    for got, x in _rows(store, f"{in_word} AND usage_id <= {last}", col):
        rows += got
        parts.append(x)
    order = np.argsort([r["usage_id"] for r in rows], kind="stable")
    rows, x = [rows[i] for i in order], np.concatenate(parts)[order].astype(np.float64)  # x: (n, dim)
    model = SenseClusterer(k=k, k_max=k_max).fit(x)
    labels = model.labels_
    contexts = [context_words(r["sentence"], r["start"], r["end"], window) for r in rows]
    words = distinctive_words(contexts, labels.tolist(), top=n_words)
    ranked = sorted(range(model.k_), key=lambda c: (-(labels == c).sum(), c))
    z = model.transform(x)  # (n, dim): typical sentences and members' similarity as the clustering sees them
    listed = "all" if total <= MAX_MEMBERS else "sample"
    sizes = np.bincount(labels, minlength=model.k_)
    members: list[list[dict[str, Any]]] = [[] for _ in range(model.k_)]
    sims = z @ model.centroids_.T  # (n, k)
    for i, (row, c) in enumerate(zip(rows, labels)):
        members[c].append(_member(row, float(sims[i, c])))
    for got, batch in _rows(store, f"{in_word} AND usage_id > {last}", col):  # every other usage, in batches
        sim = model.transform(batch) @ model.centroids_.T  # (m, k)
        near = sim.argmax(axis=1)  # model.predict(batch)
        sizes += np.bincount(near, minlength=model.k_)
        if listed == "all":
            for row, c, s in zip(got, near, sim[np.arange(len(near)), near]):
                members[c].append(_member(row, float(s)))
    n_all = int(sizes.sum())
    senses = []
    for c in ranked:
        in_c = np.flatnonzero(labels == c)
        senses.append({
            "id": int(c), "size": int(sizes[c]), "share": round(int(sizes[c]) / n_all, 4),
            "typical": [{"usage_id": rows[i]["usage_id"], "sentence": rows[i]["sentence"],
                         "doc": rows[i]["doc"],
                         "similarity": round(s, 4)} for i, s in typical(z, in_c, n_sentences)],
            "context_words": [{"word": w, "count": n, "lmi": s} for w, n, s in words.get(int(c), [])],
            "members": sorted(members[c], key=lambda m: (-m["similarity"], m["usage_id"])),
        })
    out = {"word": target, "layer": col_layer, "model": store.params["model"], "n_usages": n_all,
           "n_total": total, "n_clustered": len(rows), "members_listed": listed, "k": model.k_,
           "k_chosen_by": model.k_chosen_by_, "method": model.method, "silhouette": model.silhouette_,
           "score_by_k": {str(kk): s for kk, s in model.score_by_k_.items()}, "senses": senses}
    if wordnet:
        from ..evaluation.wordnet_map import map_centroids

        # (k, dim), in the model's space
        centroids = np.stack([centroid(x, np.flatnonzero(labels == c)) for c in ranked])
        mapped = map_centroids(index_encoder(store, col_layer), candidates, col_layer, centroids,
                               progress=progress)
        for sense, best in zip(senses, mapped["senses"]):
            sense["wordnet"] = best
        out.update(wordnet_lemma=mapped["lemma"], wordnet_unseen=mapped["unseen"])
    return out


def index_encoder(store: UsageReader, layer: int):
    """The all-layers encoder of the index's model (the one the evaluation caches use),
    checked against what the index stores."""
    from ..evaluation.runner import make_task_encoder

    model = store.params.get("model")
    if not model:
        raise InputError(f"{store.path} records no model: WordNet mapping needs the transformer the index "
                         "was built with; rebuild the index with `contextlens index build --model ...`")
    try:
        encoder = make_task_encoder(model=model)
    except InputError as e:
        raise InputError(f"{store.path} was built with model {model!r}, which cannot be loaded here ({e}); "
                         "WordNet mapping encodes SemCor with the index's own model: install it "
                         "(`contextlens models install ...`) or use an index built with an available "
                         "transformer") from None
    dim = int(store.params.get("dim", encoder.dim))
    if dim != encoder.dim:
        raise InputError(f"the model {model!r} loaded here does not give the {dim}-dimensional vectors "
                         f"stored in {store.path}; WordNet mapping needs the transformer the index was built "
                         "with")
    if layer not in encoder.layer_ids:
        raise InputError(f"layer {layer} of {store.path} does not exist in {model!r} "
                         f"(layers {encoder.layer_ids[0]}..{encoder.layer_ids[-1]})")
    return encoder
