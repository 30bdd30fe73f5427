"""All-words WSD: 1-nearest-neighbour sense embeddings learnt from SemCor (LMMS-style).

The plain 1-NN of Loureiro & Jorge (2019); their extensions (WordNet propagation,
glosses, static vectors) are :mod:`contextlens.evaluation.lmms`, run by :func:`run_wsd` with
``method="lmms"``:

1. every tagged term of SemCor is encoded in its sentence; a sense key's embedding is the
   mean of the vectors of its occurrences (:func:`sense_embeddings`), at one *view* of
   the layers: an int (one layer of the Encoding stack) or ``"last4"`` (the mean of the
   last four layers, what LMMS uses for BERT);
2. a test instance's candidates are the WordNet senses of its lemma and POS; the answer
   is the candidate seen in SemCor whose embedding is most cosine-similar to the
   instance's vector (:func:`nearest_sense`); with no candidate seen, the most frequent
   sense (WordNet's first) is the fallback (``fallback=True``) or no answer is given.

Scoring is the framework's ``Scorer.java`` (:func:`score_wsd`).

>>> gold = {"a": {"k1"}, "b": {"k2", "k3"}, "c": {"k4"}}
>>> s = score_wsd(gold, {"a": ["k1"], "b": ["k3", "k9"], "x": ["k1"]})
>>> s["precision"], s["recall"], round(s["f1"], 4), s["answered"]
(0.75, 0.5, 0.6, 2)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ..encoders.base import layer_position
from ..encoders.tokenized import target_vectors
from ..errors import EmptyInputError, InputError, check_choice, check_int

__all__ = ["score_wsd", "score_by_pos", "view_vectors", "sense_embeddings", "semcor_sense_embeddings",
           "nearest_sense", "VIEWS", "parse_view", "run_wsd", "WSD_METHODS"]

log = logging.getLogger(__name__)
VIEWS = ("last4",)  # named views; any int is a single layer
SENTENCE_CHUNK = 1024


def score_wsd(gold: Mapping[str, Iterable[str]], answers: Mapping[str, Iterable[str]]) -> dict:
    """Precision, recall and F1 exactly as the framework's ``Scorer.java``.

    An answered instance that the gold lacks is ignored; an instance with several answers
    counts ``(answers in gold) / (answers)`` correct and the rest wrong; precision =
    correct / (correct + wrong), recall = correct / (gold instances), F1 their harmonic
    mean (0 when both are 0).

    >>> score_wsd({"a": ["k1"], "b": ["k2"]}, {"a": ["k1"]})["f1"]
    0.6666666666666666
    """
    gold_sets = {k: set(v) for k, v in gold.items()}
    if not gold_sets:
        raise EmptyInputError("the gold standard holds no instance; check the gold key file")
    ok = notok = 0.0
    answered = 0
    for key, given in answers.items():
        given = set(given)
        if key not in gold_sets or not given:
            continue
        answered += 1
        good = sum(1 for a in given if a in gold_sets[key])
        ok += good / len(given)
        notok += (len(given) - good) / len(given)
    precision = ok / (ok + notok) if ok + notok > 0 else 0.0
    recall = ok / len(gold_sets)
    f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
    return {"precision": precision, "recall": recall, "f1": f1, "n": len(gold_sets), "answered": answered}


def parse_view(view) -> int | str:
    """``"last4"``, or a layer position as an int (``"3"`` → 3).

    >>> parse_view("last4"), parse_view("-1"), parse_view(2)
    ('last4', -1, 2)
    """
    if isinstance(view, str) and view in VIEWS:
        return view
    try:
        return int(view)
    except (TypeError, ValueError):
        raise InputError(f"unknown layer view {view!r}; give a layer number or one of: "
                         f"{', '.join(VIEWS)}") from None


def view_vectors(vectors: np.ndarray, view) -> np.ndarray:
    """``(n, dim)`` from ``(n, layers, dim)``: one layer, or the mean of the last four.

    >>> v = np.arange(10.0).reshape(1, 5, 2)
    >>> view_vectors(v, "last4").tolist(), view_vectors(v, 0).tolist()
    ([[5.0, 6.0]], [[0.0, 1.0]])
    """
    view = parse_view(view)
    n_layers = vectors.shape[1]
    if view == "last4":
        return vectors[:, max(0, n_layers - 4):].mean(axis=1)
    if not -n_layers <= view < n_layers:
        raise InputError(f"layer {view} does not exist: the encoder gives layers 0..{n_layers - 1}")
    return vectors[:, view]


def sense_embeddings(
    encoder, sentences: Iterable, *, views: Sequence = ("last4",), limit: int | None = None,
    progress: Callable[[int], None] | None = None, only_keys: Collection[str] | None = None,
) -> dict:
    """Mean vector of each sense key over the tagged instances of ``sentences``.

    ``sentences`` are :class:`WsdSentence` objects whose instances carry gold ``keys``
    (SemCor); an instance with several keys adds its vector to each. ``limit`` keeps the
    first sentences only. ``only_keys``: learn these senses only; a sentence without an
    instance tagged with one of them is never encoded, which leaves the embeddings of these
    keys as a full pass gives them.
    Returns ``{view: {"keys": (k,) str, "vectors": (k, dim), "encoded": sentences encoded,
    "counts": (k,)}}``; ``progress`` gets the number of sentences done.
    """
    views = [parse_view(v) for v in views]
    sums: dict = {v: {} for v in views}
    counts: dict[str, int] = {}
    chunk: list = []
    done = encoded = 0
    wanted = None if only_keys is None else frozenset(only_keys)

    def flush():
        items, keys = [], []
        for sent in chunk:
            for inst in sent.instances:
                ks = tuple(inst.keys) if wanted is None else tuple(k for k in inst.keys if k in wanted)
                if ks:
                    items.append((sent.tokens, inst.index))
                    keys.append(ks)
        if not items:
            return
        vectors = target_vectors(encoder, items)  # (items, layers, dim)
        for v in views:
            rows = view_vectors(vectors, v).astype(np.float64)  # (items, dim)
            acc = sums[v]
            for row, ks in zip(rows, keys):
                if np.isnan(row).any():
                    continue
                for k in ks:
                    if k in acc:
                        acc[k] += row
                    else:
                        acc[k] = row.copy()
        for row, ks in zip(view_vectors(vectors, views[0]), keys):
            if not np.isnan(row).any():
                for k in ks:
                    counts[k] = counts.get(k, 0) + 1

    for sent in sentences:
        if limit is not None and done >= limit:
            break
        done += 1
        if wanted is not None and all(wanted.isdisjoint(inst.keys) for inst in sent.instances):
            continue
        chunk.append(sent)
        encoded += 1
        if len(chunk) >= SENTENCE_CHUNK:
            flush()
            chunk = []
            if progress is not None:
                progress(done)
    flush()
    if progress is not None:
        progress(done)
    if not counts:
        raise EmptyInputError("no tagged instance with a vector in the training sentences (SemCor); "
                              "check the data, or raise semcor_limit")
    out = {}
    for v in views:
        keys = sorted(sums[v])
        out[v] = {"keys": np.array(keys), "sentences": done, "encoded": encoded,
                  "counts": np.array([counts[k] for k in keys]),
                  "vectors": np.stack([sums[v][k] / counts[k] for k in keys]).astype(np.float32)}
    return out


def nearest_sense(vector: np.ndarray, candidates: Sequence[str],
                  embeddings: Mapping[str, np.ndarray]) -> str | None:
    """The candidate whose sense embedding has the highest cosine with ``vector``
    (None when no candidate has an embedding, or the vector is missing).

    >>> emb = {"bank%1": np.array([1.0, 0.0]), "bank%2": np.array([0.0, 1.0])}
    >>> nearest_sense(np.array([0.2, 0.9]), ["bank%1", "bank%2", "bank%3"], emb)
    'bank%2'
    >>> nearest_sense(np.array([0.2, 0.9]), ["bank%3"], emb) is None
    True
    """
    seen = [k for k in candidates if k in embeddings]
    if not seen or np.isnan(vector).any():
        return None
    m = np.stack([embeddings[k] for k in seen]).astype(np.float64)  # (seen, dim)
    norms = np.linalg.norm(m, axis=1) * np.linalg.norm(vector)
    sims = (m @ vector) / np.where(norms > 0, norms, 1.0)
    return seen[int(np.argmax(sims))]


def semcor_sense_embeddings(cache, root, views, semcor_limit, progress, only_keys=None) -> dict:
    """Sense embeddings per view, from the cache where stored, else one SemCor pass
    (over the sentences holding one of ``only_keys`` when given)."""
    from .. import datasets
    from ..encoders.encoding_cache import key_of

    spec = {"limit": semcor_limit, "root": str(Path(root).resolve())}
    full = {v: key_of({"view": v, **spec}) for v in views}  # a pass over all of SemCor serves any split
    names = full if only_keys is None else {v: key_of({"view": v, **spec, "keys": key_of(sorted(only_keys))})
                                             for v in views}
    out = {}
    for v in views:
        for name in dict.fromkeys((full[v], names[v])):
            stored = cache.load_array("semcor", name) if cache is not None else None
            if stored is not None:
                out[v] = stored
                break
    missing = [v for v in views if v not in out]
    if missing:
        encoder = cache.encoder
        log.info("encoding SemCor for sense embeddings (views %s)", missing)
        if progress is not None:
            progress(0)  # the pass starts: a progress display starts its clock here, not at the first chunk
        start = time.perf_counter()
        fresh = sense_embeddings(encoder, datasets.load_semcor(root), views=missing, limit=semcor_limit,
                                 progress=progress, only_keys=only_keys)
        seconds = time.perf_counter() - start
        for v, arrays in fresh.items():
            arrays.update(seconds=np.array(seconds), sentences=np.array(arrays.pop("sentences")),
                          encoded=np.array(arrays.pop("encoded")))
            out[v] = arrays
            if cache is not None:
                cache.save_array("semcor", names[v], **arrays)
    return out


def check_gold_keys(wn, gold: Mapping[str, Iterable[str]], name: str) -> None:
    """Raise when gold keys are unknown to WordNet (a version mismatch or a broken file)."""
    from nltk.corpus.reader.wordnet import WordNetError

    bad = []
    for inst, keys in gold.items():
        for k in keys:
            try:
                wn.lemma_from_key(k)
            except (WordNetError, ValueError, KeyError):
                bad.append(f"{inst}: {k}")
    if bad:
        raise InputError(f"{len(bad)} gold sense key(s) of {name} are unknown to this WordNet "
                         f"(e.g. {'; '.join(bad[:3])}); the framework needs WordNet 3.0")


def score_by_pos(gold: Mapping[str, Iterable[str]], answers: Mapping[str, Iterable[str]],
                 pos: Mapping[str, str]) -> dict[str, float]:
    """F1 (``Scorer.java``'s) per part of speech: ``pos`` maps each gold instance to its POS.

    >>> score_by_pos({"a": ["k1"], "b": ["k2"]}, {"a": ["k1"], "b": ["k9"]}, {"a": "NOUN", "b": "VERB"})
    {'NOUN': 1.0, 'VERB': 0.0}
    """
    out = {}
    for tag in dict.fromkeys(pos[i] for i in gold):
        ids = [i for i in gold if pos[i] == tag]
        out[tag] = score_wsd({i: gold[i] for i in ids}, {i: answers[i] for i in ids if i in answers})["f1"]
    return out


WSD_METHODS = ("lmms", "1nn")
#: the rows of ``method="lmms"`` after MFS and 1-NN: each adds a part to the sense embeddings
LMMS_ROWS = (("+propagation", ("propagation",)), ("+glosses", ("propagation", "glosses")),
             ("+static", ("propagation", "glosses", "static")))


def run_wsd(
    cache, root, *, split: str = "semeval2007", views: Sequence = ("last4",), semcor_limit: int | None = None,
    progress: Callable[[str, int, int | None], None] | None = None, all_senses: bool = False,
    method: str = "lmms", static=None,
) -> list[dict]:
    """Rows ``{split, method, layer, precision, recall, f1, n, answered, pos_f1}``: the MFS
    baseline, then per view 1-NN over SemCor's senses with (``1nn+mfs``) and without
    (``1nn``) the MFS fallback, and with ``method="lmms"`` (the default) each step of LMMS
    in full (:mod:`contextlens.evaluation.lmms`), each adding to the one before: ``+propagation``
    (1-NN over every WordNet sense, SemCor's embeddings propagated: LMMS-1024),
    ``+glosses`` (LMMS-2048), ``+static`` (LMMS-2348; ``static``: the table of the static
    part, default GloVe 6B-50d). ``cache`` is an
    :class:`~contextlens.encoders.encoding_cache.EncodingCache`; ``progress(stage, done, total)``.

    Only the senses the split can ask for (its lemmas' candidates; with LMMS, the SemCor
    senses their propagation reads, :func:`~contextlens.evaluation.lmms.needed_semcor_keys`)
    are learnt, so SemCor sentences holding none of them are not encoded (on
    semeval2007 with 1-NN: 23,428 of 37,176 sentences); the answers are the same as with
    every sense. ``all_senses=True`` learns every sense of SemCor (one pass that any split
    can reuse from the cache, and that any later request reads)."""
    from .. import datasets
    from .lmms import DEFAULT_STATIC, SOURCES, rank_senses, sense_parts, static_parts

    check_choice("WSD method", method, WSD_METHODS)
    views = [parse_view(v) for v in views]
    if semcor_limit is not None:
        check_int("semcor_limit", semcor_limit, low=1, hint="SemCor sentences to learn senses from")
    sentences, gold = datasets.load_wsd_eval(root, split)
    items, instances = [], []
    for sent in sentences:
        for inst in sent.instances:
            items.append((sent.tokens, inst.index))
            instances.append(inst)
    if not instances:
        raise EmptyInputError(f"the WSD set {split!r} has no instance to disambiguate")
    wn = datasets.wordnet(root)
    check_gold_keys(wn, gold, split)
    candidates, mfs = [], {}
    for inst in instances:
        keys = datasets.candidate_keys(wn, inst.lemma, inst.pos)
        if not keys:
            raise InputError(f"instance {inst.id}: lemma {inst.lemma!r} ({inst.pos}) has no sense in "
                             "WordNet; check the data file's lemma and pos attributes")
        candidates.append(keys)
        mfs[inst.id] = [datasets.most_frequent_key(wn, inst.lemma, inst.pos)]
    pos = {inst.id: inst.pos for inst in instances}
    rows = [{"split": split, "method": "mfs", "layer": None, **score_wsd(gold, mfs),
             "pos_f1": score_by_pos(gold, mfs, pos)}]
    ids = cache.layer_ids
    # layer numbers → indices of the layer axis (an unknown layer fails here, before the long
    # SemCor pass); -1 and 6 become one index, so they share a cache entry
    views = list(dict.fromkeys(v if v == "last4" else layer_position(ids, v) for v in views))
    vectors = cache.targets(f"wsd-{split}", items, progress=progress and (lambda k, n: progress(split, k, n)))
    union = list(dict.fromkeys(k for cands in candidates for k in cands))
    only = None if all_senses else set(union)
    if method == "lmms" and not all_senses:  # the keys LMMS's propagation to the candidates reads: one pass
        from .lmms import needed_semcor_keys, tagged_keys

        only = set(needed_semcor_keys(datasets.wordnet_graph(root), tagged_keys(root, semcor_limit),
                                      [datasets.wordnet_graph(root).key_row[k] for k in union]))
    senses = semcor_sense_embeddings(cache, root, views, semcor_limit,
                                     progress and (lambda k: progress("SemCor sentences", k, None)), only)
    parts = {}
    if method == "lmms":
        static = DEFAULT_STATIC if static is None else static
        parts = sense_parts(cache, root, union, views, static=static, semcor_limit=semcor_limit,
                            progress=progress)
        lemma_static = dict(zip(dict.fromkeys(i.lemma for i in instances), static_parts(
            _table(static), list(dict.fromkeys(i.lemma for i in instances)))))
    for v in views:
        table = dict(zip(senses[v]["keys"].tolist(), senses[v]["vectors"]))
        x = view_vectors(vectors, v)  # (instances, dim)
        plain, backed, unseen = {}, {}, 0
        for inst, row, cands in zip(instances, x, candidates):
            answer = nearest_sense(row, cands, table)
            if answer is None:
                unseen += 1
                backed[inst.id] = mfs[inst.id]
            else:
                plain[inst.id] = backed[inst.id] = [answer]
        pass_info = {name: float(senses[v][name]) for name in ("seconds", "encoded") if name in senses[v]}
        pass_info.setdefault("encoded", float(senses[v]["sentences"]))  # caches from before the filter
        layer = v if v == "last4" else ids[v]
        for name, answers in (("1nn", plain), ("1nn+mfs", backed)):
            rows.append({"split": split, "method": name, "layer": layer, **score_wsd(gold, answers),
                         "pos_f1": score_by_pos(gold, answers, pos), "unseen": unseen, "senses": len(table),
                         **{f"semcor_{k}": value for k, value in pass_info.items()}})
        if method != "lmms":
            continue
        p = parts[v]
        coverage = {name: int((p.source == i).sum()) for i, name in enumerate(SOURCES)}
        for name, steps in LMMS_ROWS:
            answers, uncovered = {}, 0
            for inst, row, cands in zip(instances, x, candidates):
                ranked = rank_senses(p, row, cands, steps, lemma_static=lemma_static[inst.lemma])
                if ranked:
                    answers[inst.id] = [ranked[0][0]]
                else:
                    uncovered += 1
            rows.append({"split": split, "method": name, "layer": layer, **score_wsd(gold, answers),
                         "pos_f1": score_by_pos(gold, answers, pos), "unseen": uncovered,
                         "candidate_sources": coverage})
    return rows


def _table(static):
    from ..encoders.registry import resolve_vectors

    return resolve_vectors(static)
