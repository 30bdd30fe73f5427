"""Map the senses induced from a usage index to WordNet senses.

Each WordNet sense of the word gets a SemCor sense embedding, LMMS-style (the mean
contextual vector of the sense key over its tagged occurrences in SemCor; see
:mod:`contextlens.bench.wsd`), computed with the index's own model at the layer of the
clustered vectors; each induced cluster is then matched to the senses whose embedding
is most cosine-similar to its centroid (the normalised mean of its members' unit vectors).

Only the SemCor sentences holding one of the word's sense keys are encoded (a few dozen
to a few hundred), and the result is cached with the evaluation caches
(:class:`~contextlens.bench.cache.EncodingCache` of the all-layers task encoder), so a
SemCor pass of ``contextlens eval wsd`` for the same model is reused. Layer numbers agree:
an index layer ``k`` (0 = embedding row, 1..L the model's layers) is position ``k`` of
that encoder's layer stack.

>>> centroids = np.array([[1.0, 0.1], [0.0, 1.0]])
>>> sense_vectors = np.array([[0.0, 2.0], [3.0, 0.0]])
>>> [[(j, round(s, 3)) for j, s in row] for row in rank_senses(centroids, sense_vectors, top=1)]
[[(1, 0.995)], [(0, 1.0)]]
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmptyInputError, InputError
from .store import UsageReader

__all__ = ["WordNetCandidates", "wordnet_candidates", "map_centroids", "rank_senses", "TOP"]

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


def wordnet_candidates(store: UsageReader, word: str, layer: int,
                       data_dir: str | os.PathLike | None = None) -> WordNetCandidates:
    """The WordNet sense keys of ``word`` (every POS WordNet has it as), after checking
    that the data folder holds WordNet and SemCor and that ``layer`` is contextual."""
    from ..bench import datasets

    if int(layer) == 0:
        raise InputError("layer 0 is the model's embedding row: one vector per word form whatever the sense, so "
                         "it cannot be matched to WordNet senses; cluster a contextual layer (--layer, "
                         f"{store.path} stores layers {', '.join(map(str, store.layers))})")
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
        raise InputError(f"{word!r} has no sense in WordNet {wn.get_version()} ({root / 'wordnet'}), as a noun, "
                         "verb, adjective or adverb, nor a base form that has: nothing to map its senses to")
    return WordNetCandidates(word, lemma, keys, root, wn)


def _task_encoder(store: UsageReader, layer: int):
    """The all-layers encoder of the index's model (the one the evaluation caches use)."""
    from ..bench.runner import make_task_encoder

    model = store.params.get("model")
    if not model:
        raise InputError(f"{store.path} records no model: WordNet mapping needs the transformer the index was built "
                         "with; rebuild the index with `contextlens index build --model ...`")
    try:
        encoder = make_task_encoder(model=model)
    except InputError as e:
        raise InputError(f"{store.path} was built with model {model!r}, which cannot be loaded here ({e}); WordNet "
                         "mapping encodes SemCor with the index's own model: install it (`contextlens models "
                         "install ...`) or use an index built with an available transformer") from None
    dim = int(store.params.get("dim", encoder.dim))
    if dim != encoder.dim:
        raise InputError(f"the model {model!r} loaded here does not give the {dim}-dimensional vectors stored in "
                         f"{store.path}; WordNet mapping needs the transformer the index was built with")
    if layer not in encoder.layer_ids:
        raise InputError(f"layer {layer} of {store.path} does not exist in {model!r} "
                         f"(layers {encoder.layer_ids[0]}..{encoder.layer_ids[-1]})")
    return encoder


def map_centroids(store: UsageReader, candidates: WordNetCandidates, layer: int, centroids: np.ndarray, *,
                  top: int = TOP, use_cache: bool = True,
                  progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Match each cluster centroid ``(clusters, dim)`` (vectors of ``store`` at ``layer``)
    to the WordNet senses of ``candidates``.

    Returns ``{"senses": [[{key, synset, gloss, similarity, semcor_count}] per centroid,
    top first], "unseen": [{key, synset, gloss}] (candidates never tagged in SemCor),
    "lemma", "candidates": n}``. ``progress`` gets the number of SemCor sentences read
    (only on a cache miss).
    """
    from ..bench.cache import EncodingCache
    from ..bench.wsd import semcor_sense_embeddings

    encoder = _task_encoder(store, layer)
    cache = EncodingCache(encoder, enabled=use_cache)
    wanted = set(candidates.keys)
    view = encoder.layer_position(layer)  # the index of the layer axis of the task's arrays
    try:
        table = semcor_sense_embeddings(cache, candidates.root, [view], None, progress, wanted)[view]
    except EmptyInputError as e:
        raise InputError(f"none of the {len(wanted)} WordNet senses of {candidates.lemma!r} is tagged in SemCor, so "
                         f"there is no sense embedding to compare with ({e})") from None
    row = {k: i for i, k in enumerate(table["keys"].tolist()) if k in wanted}
    seen = [k for k in candidates.keys if k in row]
    if not seen:
        raise InputError(f"none of the {len(wanted)} WordNet senses of {candidates.lemma!r} is tagged in SemCor: "
                         "there is no sense embedding to compare with")
    vectors = table["vectors"][[row[k] for k in seen]].astype(np.float64)  # (seen, dim)
    counts = table["counts"][[row[k] for k in seen]]
    ranked = rank_senses(np.asarray(centroids, dtype=np.float64), vectors, top)
    senses = [[{**_describe(candidates.wn, seen[j]), "similarity": round(s, 4),
                "semcor_count": int(counts[j])} for j, s in r] for r in ranked]
    unseen = [_describe(candidates.wn, k) for k in candidates.keys if k not in row]
    log.info("%r: %d WordNet senses, %d seen in SemCor", candidates.lemma, len(candidates.keys), len(seen))
    return {"senses": senses, "unseen": unseen, "lemma": candidates.lemma, "candidates": len(candidates.keys)}


def _describe(wn, key: str) -> dict[str, str]:
    synset = wn.lemma_from_key(key).synset()
    return {"key": key, "synset": synset.name(), "gloss": synset.definition()}
