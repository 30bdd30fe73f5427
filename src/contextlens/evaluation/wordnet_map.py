"""Map induced senses (clusters of a word's usages) to WordNet senses.

Every WordNet sense of the word gets its LMMS embedding (:mod:`contextlens.evaluation.lmms`:
the mean contextual vector of its SemCor occurrences, propagated through WordNet to the
senses SemCor never tags, with the gloss embedding beside it), computed with the model
that made the clustered vectors, at their layer; each cluster is then matched to the
senses nearest its centroid (the normalised mean of its members' unit vectors), as LMMS
matches a usage. :func:`map_centroids` is the one mapping: ``contextlens index senses
--wordnet`` gives it the index's model (:func:`contextlens.index.senses.index_encoder`),
``contextlens senses --wordnet`` the model of the experiment's encoder (:func:`model_encoder`,
through :class:`WordNetNamer`).

The SemCor pass reads the sentences holding the senses the propagation to the word's
senses needs (a few hundred; a cached pass over all of SemCor serves every word), cached
with the evaluation caches (the :class:`~contextlens.encoders.encoding_cache.EncodingCache` of the
all-layers task encoder, shared with ``contextlens eval wsd``); it and the word's glosses
are encoded once, then read from the cache. Layer numbers agree: layer ``k`` (0 =
embedding row, 1..L the model's layers) is position ``k`` of that encoder's layer stack.

>>> centroids = np.array([[1.0, 0.1], [0.0, 1.0]])
>>> sense_vectors = np.array([[0.0, 2.0], [3.0, 0.0]])
>>> [[(j, round(s, 3)) for j, s in row] for row in rank_senses(centroids, sense_vectors, top=1)]
[[(1, 0.995)], [(0, 1.0)]]
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmptyInputError, InputError
from .lmms import SOURCES

__all__ = ["WordNetCandidates", "wordnet_candidates", "wordnet_model", "model_encoder", "map_centroids",
           "rank_senses", "WordNetNamer", "TOP"]

log = logging.getLogger(__name__)
TOP = 3  # WordNet senses shown per cluster
_RULE = "the data folder is --data-dir, else $CONTEXTLENS_DATA, else ~/.cache/contextlens/data"


@dataclass
class WordNetCandidates:
    """A word's WordNet senses, checked before any model is loaded."""

    word: str
    lemma: str  # the WordNet lemma whose senses these are (the word, or its base form)
    keys: list[str]  # sense keys, in WordNet order per POS (NOUN, VERB, ADJ, ADV)
    root: Path  # the data folder
    wn: Any  # the nltk WordNet reader


def rank_senses(centroids: np.ndarray, senses: np.ndarray, top: int = TOP) -> list[list[tuple[int, float]]]:
    """Per centroid ``(centroids: (c, dim))``, ``(row of senses, cosine)`` of its ``top``
    most similar sense vectors ``(senses: (s, dim))``, best first."""
    c = centroids / np.maximum(np.linalg.norm(centroids, axis=1, keepdims=True), 1e-12)
    s = senses / np.maximum(np.linalg.norm(senses, axis=1, keepdims=True), 1e-12)
    sims = c @ s.T  # (c, s)
    out = []
    for row in sims:
        order = np.argsort(-row, kind="stable")[:top]
        out.append([(int(j), float(row[j])) for j in order])
    return out


def wordnet_candidates(word: str, layer: int, data_dir: str | os.PathLike | None = None, *,
                       layers_said: str) -> WordNetCandidates:
    """The WordNet sense keys of ``word`` (every POS WordNet has it as), after checking
    that ``layer`` is contextual (``layers_said``: which layers there are, for the message)
    and that the data folder holds WordNet and SemCor."""
    from .. import datasets

    if int(layer) == 0:
        raise InputError("layer 0 is the model's embedding row: one vector per word form whatever the sense, "
                         f"so it cannot be matched to WordNet senses; cluster a contextual layer (--layer, "
                         f"{layers_said})")
    root = datasets.resolve_data_dir(data_dir)
    try:
        wn = datasets.wordnet(root)
        datasets.require(root, "semcor", datasets.SEMCOR_ARCHIVE)
    except datasets.DatasetMissingError as e:
        raise datasets.DatasetMissingError(
            f"mapping senses to WordNet needs WordNet 3.0 (wordnet/index.sense, wordnet/data.noun, ...) and "
            f"SemCor 3.0 ({datasets.SEMCOR_ARCHIVE}) in the data folder ({_RULE}): {e}") from None
    lemma, keys = datasets.word_senses(wn, word)
    if not keys:
        raise InputError(f"{word!r} has no sense in WordNet {wn.get_version()} ({root / 'wordnet'}), as a "
                         "noun, verb, adjective or adverb, nor a base form that has: nothing to map its "
                         "senses to")
    return WordNetCandidates(word, lemma, keys, root, wn)


def wordnet_model(encoder) -> str:
    """The model of ``encoder``, whose SemCor pass and glosses give the sense embeddings;
    a static table or a mixing encoder has none, and is refused."""
    params = encoder.params()
    if params.get("model") is None:
        raise InputError(f"WordNet senses need a transformer (--model minilm, or another model): the sense "
                         "embeddings are made by encoding SemCor and WordNet's glosses with the model "
                         f"itself, and this encoder ({params.get('encoder', encoder.name)}) is a static "
                         "table or a mixing method over one; give --model, or drop --wordnet")
    return str(params["model"])


def model_encoder(encoder):
    """The all-layers task encoder of ``encoder``'s model (:func:`wordnet_model`), in its
    engine and precision: its SemCor pass and glosses are the evaluation caches'."""
    from .runner import make_task_encoder

    params = encoder.params()
    return make_task_encoder(model=wordnet_model(encoder), precision=params.get("precision"),
                             engine=params.get("engine"))


def _model_task_encoder(model: str, layer: int):
    from .runner import make_task_encoder

    encoder = make_task_encoder(model=model)
    if layer not in encoder.layer_ids:
        raise InputError(f"layer {layer} does not exist in {model!r} "
                         f"(layers {encoder.layer_ids[0]}..{encoder.layer_ids[-1]})")
    return encoder


@contextlib.contextmanager
def _semcor_step(name: str, once: str, progress: Callable[[int], None] | None):
    """``report(stage, done, total)`` for :func:`~contextlens.evaluation.lmms.sense_parts`: the
    SemCor pass (reported only on a cache miss) becomes a :func:`contextlens.progress.step`,
    started at its first report, so that a warm cache reports nothing; ``progress`` also
    gets the SemCor sentences read. (The glosses of one word are a block encoded in a
    moment, reported when done: no step.)"""
    from ..progress import step

    with contextlib.ExitStack() as stack:
        running = []

        def report(stage: str, done: int, total: int | None = None) -> None:
            if stage != "SemCor sentences":
                return
            if not running:
                running.append(stack.enter_context(step(f"reading SemCor for the sense embeddings of {name}",
                                                        unit="sentences", once=once)))
            running[0].update(done)
            if progress is not None:
                progress(done)

        yield report


def map_centroids(model, candidates: WordNetCandidates, layer: int, centroids: np.ndarray, *,
                  top: int = TOP, use_cache: bool = True,
                  progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Match each cluster centroid ``(clusters, dim)`` (vectors of ``model`` at ``layer``)
    to the WordNet senses of ``candidates``, by LMMS's 1-NN over every one of them
    (:mod:`contextlens.evaluation.lmms`: SemCor's embeddings propagated through WordNet, and
    the glosses). ``model``: a model name, or its all-layers task encoder
    (:func:`index_encoder`, :func:`model_encoder`).

    Returns ``{"senses": [[{key, synset, gloss, similarity, semcor_count, source}] per
    centroid, top first], "unseen": [{key, synset, gloss}] (candidates without an
    embedding: none, but for a WordNet whose lexicographer file SemCor never reaches),
    "lemma", "candidates": n}``. The SemCor pass, when not cached, runs as a progress step
    (:mod:`contextlens.progress`); ``progress`` gets the number of SemCor sentences read
    (only on a cache miss: the first time per model, layer and word).
    """
    from ..encoders.encoding_cache import EncodingCache
    from ..evaluation.lmms import rank_senses, sense_parts

    encoder = _model_task_encoder(model, layer) if isinstance(model, str) else model
    cache = EncodingCache(encoder, enabled=use_cache)
    view = encoder.layer_position(layer)  # the index of the layer axis of the task's arrays
    steps = ("propagation", "glosses")
    once = f"once per model, layer and word, then cached in {cache.root}"
    try:
        with _semcor_step(f"{encoder.name}, layer {layer}", once, progress) as report:
            parts = sense_parts(cache, candidates.root, candidates.keys, [view], steps=steps,
                                progress=report)[view]
    except EmptyInputError as e:
        raise InputError(f"no sense embedding can be made for {candidates.lemma!r}: {e}") from None
    seen = [k for k in candidates.keys if parts.source[parts.index[k]] >= 0]
    if not seen:
        raise InputError(f"none of the {len(candidates.keys)} WordNet senses of {candidates.lemma!r} has a "
                         "sense embedding: there is nothing to compare with")
    senses = []
    for c in np.asarray(centroids, dtype=np.float64):
        ranked = rank_senses(parts, c, seen, steps)[:top]
        senses.append([{**_describe(candidates.wn, k), "similarity": round(s, 4),
                        "semcor_count": int(parts.semcor_count[parts.index[k]]),
                        "source": SOURCES[parts.source[parts.index[k]]]} for k, s in ranked])
    unseen = [_describe(candidates.wn, k) for k in candidates.keys if k not in seen]
    log.info("%r: %d WordNet senses, %d tagged in SemCor, %d with an embedding", candidates.lemma,
             len(candidates.keys), int((parts.semcor_count > 0).sum()), len(seen))
    return {"senses": senses, "unseen": unseen, "lemma": candidates.lemma, "candidates": len(candidates.keys)}


def _describe(wn, key: str) -> dict[str, str]:
    synset = wn.lemma_from_key(key).synset()
    return {"key": key, "synset": synset.name(), "gloss": synset.definition()}


class WordNetNamer:
    """Names the clusters of :func:`contextlens.analysis.senses.senses` by WordNet senses (its
    ``wordnet=``; :class:`~contextlens.analysis.senses.SenseNamer`): the encoder's model and the
    word's senses are checked first (:func:`wordnet_model`, :func:`wordnet_candidates`, with
    WordNet and SemCor read from ``data_dir``, else ``$CONTEXTLENS_DATA``), then each centroid is
    matched by :func:`map_centroids`."""

    def __init__(self, data_dir: str | os.PathLike | None = None):
        self.data_dir = data_dir

    def prepare(self, encoder, word: str, layer: int) -> tuple[Any, WordNetCandidates]:
        said = (f"{wordnet_model(encoder)} gives contextual layers "
                f"{', '.join(map(str, encoder.layer_ids[1:]))}")
        candidates = wordnet_candidates(word, layer, self.data_dir, layers_said=said)
        return model_encoder(encoder), candidates

    def name(self, prepared: tuple[Any, WordNetCandidates], layer: int,
             centroids: np.ndarray) -> dict[str, Any]:
        task, candidates = prepared
        return map_centroids(task, candidates, layer, centroids)
