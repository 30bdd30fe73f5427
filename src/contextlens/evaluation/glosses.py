"""LMMS's gloss embeddings (Loureiro & Jorge, ACL 2019; ``emb_glosses.py`` of
github.com/danlou/LMMS, branch LMMS_ACL19): each WordNet sense's sentence ``"<its lemma> -
<the synset's lemmas, ' , '-joined> - <definition>"`` (:func:`gloss_text`) encoded by the
model, the sense's vector being the mean over every word of the sentence at one layer
view (bert-as-service's ``REDUCE_MEAN``: lemma and definition tokens alike). One sentence
per sense key: 206,949 for WordNet 3.0; cached per sense (:func:`gloss_embeddings`), so
no sense is encoded twice for one encoder and view.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from ..errors import InputError

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


def _encode_glosses(encoder, texts: list[str], views: Sequence, dtype,
                    tick: Callable[[int], None] | None = None) -> dict:
    """``{view: (len(texts), dim)}``: each text's mean word vector at each view, the texts
    run longest first (little padding per batch); ``tick(done)`` after each chunk."""
    from .wsd import view_vectors

    out = {v: np.zeros((len(texts), encoder.dim), dtype=np.float32) for v in views}
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)  # less padding per batch
    for c in range(0, len(order), _CHUNK):
        idx = order[c:c + _CHUNK]
        for i, enc in zip(idx, encoder.encode([texts[i] for i in idx])):
            words = np.transpose(enc.layers, (1, 0, 2))  # (words, layers, dim)
            for v in views:
                out[v][i] = view_vectors(words, v).mean(axis=0) if len(words) else np.nan
        if tick is not None:
            tick(c + len(idx))
    return {v: a.astype(dtype) for v, a in out.items()}


class _Stored(NamedTuple):
    """The senses of one block stored at one view: ``rows`` (k,) offsets into the block,
    ascending, and their ``vectors`` (k, dim) as the cache stores them."""

    rows: np.ndarray
    vectors: np.ndarray


def _block_names(graph, block: int, view, dtype: str) -> tuple[str, str]:
    """The cache names of one block at one view: the whole block (every sense, in WordNet
    order, as version 1 stored it) and the block's senses so far (some of them)."""
    from ..encoders.encoding_cache import key_of

    spec = [str(view), dtype, graph.digest, GLOSS_BLOCK, block]
    return key_of(["gloss-block", GLOSS_VERSION, *spec]), key_of(["gloss-senses", GLOSS_VERSION, *spec])


def _load_block(cache, graph, block: int, view, dtype: str, size: int) -> _Stored:
    """What the cache holds of one block (``size`` senses) at one view; nothing when absent."""
    whole, some = _block_names(graph, block, view, dtype)
    found = cache.load_array("glosses", whole)
    if found is not None and len(found["vectors"]) == size:
        return _Stored(np.arange(size), found["vectors"])
    found = cache.load_array("glosses", some)
    if found is not None and len(found["rows"]) == len(found["vectors"]):
        return _Stored(found["rows"].astype(np.int64), found["vectors"])
    return _Stored(np.zeros(0, dtype=np.int64), np.zeros((0, cache.encoder.dim), dtype=cache.dtype))


def _merge_rows(old: _Stored, rows: np.ndarray, vectors: np.ndarray) -> _Stored:
    """``old`` with the senses ``rows`` (offsets, with their ``vectors``) it lacks added,
    in ascending order; a sense it holds keeps its vector.

    >>> m = _merge_rows(_Stored(np.array([1, 4]), np.array([[1.0], [4.0]])), np.array([4, 2]),
    ...                np.array([[9.0], [2.0]]))
    >>> m.rows.tolist(), m.vectors.ravel().tolist()
    ([1, 2, 4], [1.0, 2.0, 4.0])
    """
    new = ~np.isin(rows, old.rows)
    all_rows = np.concatenate([old.rows, rows[new]])
    order = np.argsort(all_rows, kind="stable")
    vectors = np.concatenate([np.asarray(old.vectors), np.asarray(vectors, dtype=old.vectors.dtype)[new]])
    return _Stored(all_rows[order], vectors[order])


def _save_block(cache, graph, block: int, view, dtype: str, size: int, rows: np.ndarray,
                vectors: np.ndarray) -> None:
    """Add the senses ``rows`` (offsets) to what the cache holds of the block, read again
    just before (another run may have added senses meanwhile); a block with every sense is
    stored whole."""
    stored = _merge_rows(_load_block(cache, graph, block, view, dtype, size), rows, vectors)
    whole, some = _block_names(graph, block, view, dtype)
    if len(stored.rows) == size:
        cache.save_array("glosses", whole, vectors=stored.vectors)
    else:
        cache.save_array("glosses", some, rows=stored.rows.astype(np.int32), vectors=stored.vectors)


def gloss_embeddings(cache, graph, rows: Sequence[int] | None, views: Sequence, *,
                     progress: Callable[[int, int], None] | None = None) -> dict:
    """``{view: (len(rows), dim) float32}``: the gloss embeddings of the sense rows ``rows``
    of ``graph`` (None: every sense of WordNet), at each layer view (a layer *index* of
    the encoder's stack, or ``"last4"``).

    Cached per sense in the encoder's folder of the evaluation cache (``cache``: an
    :class:`~contextlens.encoders.encoding_cache.EncodingCache`), by blocks of
    :data:`GLOSS_BLOCK` senses in WordNet order: a request encodes only the senses no
    earlier request encoded (another split's candidates, another word's senses, all of
    WordNet after some words), all at once sorted by length, and adds them to their blocks
    after every :data:`GLOSS_BLOCK` senses (a killed run keeps what it encoded). A vector
    is stored in the cache's dtype, so a first run and a rerun give the same numbers.
    ``progress(done, total)`` counts the senses to encode (none: no call).
    """
    whole = rows is None
    n_keys, dim = len(graph.keys), cache.encoder.dim
    rows = np.arange(n_keys) if whole else np.asarray(rows, dtype=np.int64).reshape(-1)
    bad = rows[(rows < 0) | (rows >= n_keys)]
    if len(bad):
        raise InputError(f"sense row {int(bad[0])} is not a sense of this WordNet (rows 0..{n_keys - 1}); "
                         "give rows of its graph (graph.key_row[key])")
    views = list(dict.fromkeys(views))
    dtype = np.dtype(cache.dtype).name
    start = time.perf_counter()
    out = {v: np.zeros((len(rows), dim), dtype=np.float32) for v in views}
    wanted = np.unique(rows)
    order = np.argsort(rows, kind="stable")
    by_row = rows[order]  # the asked rows ascending; order[i]: where by_row[i] was asked

    def size_of(b: int) -> int:
        return min((b + 1) * GLOSS_BLOCK, n_keys) - b * GLOSS_BLOCK

    def fill(view, senses: np.ndarray, vectors: np.ndarray) -> None:
        """Copy the vectors of ``senses`` (ascending sense rows of one block) to every place
        of ``rows`` that asks for one of them."""
        if not len(senses):
            return
        lo, hi = np.searchsorted(by_row, [senses[0], senses[-1] + 1])
        asked = by_row[lo:hi]
        i = np.minimum(np.searchsorted(senses, asked), len(senses) - 1)
        hit = senses[i] == asked
        out[view][order[lo:hi][hit]] = np.asarray(vectors, dtype=np.float32)[i[hit]]

    missing: dict = {v: [] for v in views}  # view -> sense rows the cache lacks
    for b in np.unique(wanted // GLOSS_BLOCK).tolist():  # one block in memory at a time
        lo = b * GLOSS_BLOCK
        here = wanted[(wanted >= lo) & (wanted < lo + size_of(b))]
        for v in views:
            stored = _load_block(cache, graph, b, v, dtype, size_of(b))
            fill(v, lo + stored.rows, stored.vectors)
            missing[v].append(here[~np.isin(here - lo, stored.rows)])
    missing = {v: np.concatenate(m) if m else np.zeros(0, dtype=np.int64) for v, m in missing.items()}
    todo = np.unique(np.concatenate([np.zeros(0, dtype=np.int64), *missing.values()]))  # once for every view
    if progress is not None and len(todo):  # a request the cache answers whole shows no bar
        progress(0, len(todo))
    for c in range(0, len(todo), GLOSS_BLOCK):  # stored after each part: a killed run keeps its parts
        part = todo[c:c + GLOSS_BLOCK]
        fresh = _encode_glosses(cache.encoder, _gloss_texts(graph, part.tolist()), views, cache.dtype,
                                progress and (lambda k, c=c: progress(c + k, len(todo))))
        for v in views:
            new = np.isin(part, missing[v])
            senses, vectors = part[new], fresh[v][new]
            for b in np.unique(senses // GLOSS_BLOCK).tolist():
                inside = senses // GLOSS_BLOCK == b
                _save_block(cache, graph, b, v, dtype, size_of(b), senses[inside] - b * GLOSS_BLOCK,
                            vectors[inside])
            fill(v, senses, vectors)
    log.info("gloss embeddings of %d senses (%d encoded) in %.1f s", len(rows), len(todo),
             time.perf_counter() - start)
    return out
