"""LMMS's gloss embeddings (Loureiro & Jorge, ACL 2019; ``emb_glosses.py`` of
github.com/danlou/LMMS, branch LMMS_ACL19): each WordNet sense's sentence ``"<its lemma> -
<the synset's lemmas, ' , '-joined> - <definition>"`` (:func:`gloss_text`) encoded by the
model, the sense's vector being the mean over every word of the sentence at one layer
view (bert-as-service's ``REDUCE_MEAN``: lemma and definition tokens alike). One sentence
per sense key: 206,949 for WordNet 3.0; cached by blocks (:func:`gloss_embeddings`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["gloss_text", "gloss_embeddings", "GLOSS_BLOCK", "GLOSS_VERSION"]

log = logging.getLogger(__name__)
GLOSS_BLOCK = 2048  # senses per cached block of gloss embeddings (WordNet order)
GLOSS_VERSION = 1  # bump when gloss_text or the pooling changes
_CHUNK = 128  # gloss sentences per encode() call (the Encodings of every layer are held meanwhile)


def gloss_text(name: str, names: Sequence[str], definition: str) -> str:
    """LMMS's gloss sentence of one sense: its lemma, the synset's lemmas, the definition
    (underscores of multiword lemmas read as spaces).

    >>> gloss_text("globe", ["Earth", "earth", "world", "globe"], "the 3rd planet from the sun")
    'globe - Earth , earth , world , globe - the 3rd planet from the sun'
    >>> gloss_text("bank_holiday", ["bank_holiday"], "a public holiday")
    'bank holiday - bank holiday - a public holiday'
    """
    def fix(lemma: str) -> str:
        return lemma.replace("_", " ")

    return f"{fix(name)} - {' , '.join(fix(n) for n in names)} - {definition}"


def _gloss_texts(graph, rows: Sequence[int]) -> list[str]:
    return [gloss_text(graph.names[r], graph.lemma_names[graph.key_synset[r]].split(),
                       graph.definitions[graph.key_synset[r]]) for r in rows]


def _encode_glosses(encoder, texts: list[str], views: Sequence, dtype) -> dict:
    """``{view: (len(texts), dim)}``: each text's mean word vector at each view."""
    from .wsd import view_vectors

    out = {v: np.zeros((len(texts), encoder.dim), dtype=np.float32) for v in views}
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)  # less padding per batch
    for c in range(0, len(order), _CHUNK):
        idx = order[c:c + _CHUNK]
        for i, enc in zip(idx, encoder.encode([texts[i] for i in idx])):
            words = np.transpose(enc.layers, (1, 0, 2))  # (words, layers, dim)
            for v in views:
                out[v][i] = view_vectors(words, v).mean(axis=0) if len(words) else np.nan
    return {v: a.astype(dtype) for v, a in out.items()}


def gloss_embeddings(cache, graph, rows: Sequence[int] | None, views: Sequence, *,
                     progress: Callable[[int, int], None] | None = None) -> dict:
    """``{view: (len(rows), dim) float32}``: the gloss embeddings of the sense rows ``rows``
    of ``graph`` (None: every sense of WordNet), at each layer view (a layer *index* of
    the encoder's stack, or ``"last4"``).

    Cached in the encoder's folder of the evaluation cache (``cache``: an
    :class:`~contextlens.encoders.encoding_cache.EncodingCache`). All of WordNet is encoded and kept by
    blocks of :data:`GLOSS_BLOCK` senses in WordNet order (a killed run keeps its finished
    blocks), and later requests read the blocks they touch; a request for some senses,
    while the blocks are not all there, encodes those senses only and keeps them under a
    name made of their sentences. ``progress(done, total)`` counts senses.
    """
    from ..encoders.encoding_cache import key_of

    whole = rows is None
    rows = np.arange(len(graph.keys)) if whole else np.asarray(rows, dtype=np.int64)
    views = list(dict.fromkeys(views))
    dtype = np.dtype(cache.dtype).name
    start = time.perf_counter()

    def block_name(block: int, view) -> str:
        return key_of(["gloss-block", GLOSS_VERSION, str(view), dtype, graph.digest, GLOSS_BLOCK, block])

    out = {v: np.zeros((len(rows), cache.encoder.dim), dtype=np.float32) for v in views}
    complete, done = True, 0
    for b in np.unique(rows // GLOSS_BLOCK).tolist():  # one block in memory at a time
        lo, hi = b * GLOSS_BLOCK, min((b + 1) * GLOSS_BLOCK, len(graph.keys))
        stored = {v: cache.load_array("glosses", block_name(b, v)) for v in views}
        missing = [v for v in views if stored[v] is None]
        if missing and not whole:
            complete = False
            break
        if missing:
            fresh = _encode_glosses(cache.encoder, _gloss_texts(graph, range(lo, hi)), missing, cache.dtype)
            for v in missing:
                cache.save_array("glosses", block_name(b, v), vectors=fresh[v])
                stored[v] = {"vectors": fresh[v]}
        where = np.flatnonzero(rows // GLOSS_BLOCK == b)
        for v in views:
            out[v][where] = np.asarray(stored[v]["vectors"], dtype=np.float32)[rows[where] - lo]
        done += len(where)
        if progress is not None:
            progress(done, len(rows))
    if not complete:
        distinct = sorted(set(rows.tolist()))  # named by the set asked for, whatever the order
        texts = _gloss_texts(graph, distinct)
        names = {v: key_of(["gloss", GLOSS_VERSION, str(v), dtype, texts]) for v in views}
        found = {v: cache.load_array("glosses", names[v]) for v in views}
        missing = [v for v in views if found[v] is None]
        if missing:
            fresh = {}
            for c in range(0, len(texts), GLOSS_BLOCK):  # in parts, for the progress
                part = _encode_glosses(cache.encoder, texts[c:c + GLOSS_BLOCK], missing, cache.dtype)
                for v in missing:
                    fresh.setdefault(v, []).append(part[v])
                if progress is not None:
                    progress(min(c + GLOSS_BLOCK, len(texts)), len(texts))
            for v in missing:
                found[v] = {"vectors": np.concatenate(fresh[v])}
                cache.save_array("glosses", names[v], vectors=found[v]["vectors"])
        at = {r: i for i, r in enumerate(distinct)}
        take = [at[r] for r in rows.tolist()]
        for v in views:
            out[v] = np.asarray(found[v]["vectors"], dtype=np.float32)[take]
    log.info("gloss embeddings of %d senses in %.1f s", len(rows), time.perf_counter() - start)
    return out
