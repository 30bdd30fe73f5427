"""One word in context: the weights it gave its neighbours, how its vector moved toward
probe words, and how two of its usages compare layer by layer.

These functions return plain, JSON-ready dicts: the CLI and the web app only present them.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..encoders.base import Encoder, Encoding
from ..errors import InputError
from ..vectors import EmbeddingTable, cosine
from .similarity import cosine_by_layer

__all__ = ["word_weights", "contextualize", "compare"]

log = logging.getLogger(__name__)


def word_weights(
    encoding: Encoding, index: int, *, layer: int = -1, head: int | None = None
) -> list[dict[str, Any]]:
    """``[{word, position, weight}]``: the weight word ``index`` gave every word at ``layer``
    (mean over heads unless ``head`` is given); empty for an encoder without weights.
    """
    if encoding.attention is None:
        return []
    row = encoding.weights(index, layer=layer, head=head)
    return [{"word": w.text, "position": j, "weight": float(row[j])} for j, w in enumerate(encoding.words)]


def _probe_rows(table: EmbeddingTable | None, static: np.ndarray, contextual: np.ndarray, probes):
    if not probes:
        return []
    if table is None:
        raise InputError(
            "probe words are compared with a static table's vectors; use --vectors (a table) for "
            "probes, or compare two usages with `compare`/`layers` when using a model"
        )
    rows = []
    for p in probes:
        v = table.vector(p)
        rows.append({
            "probe": p,
            "static_cosine": cosine(static, v),
            "contextual_cosine": cosine(contextual, v),
        })
    return rows


def contextualize(
    encoder: Encoder, text: str, word: str | None = None, *, probes: list[str] = (),
    occurrence: int | None = None, span: tuple[int, int] | None = None, layer: int = -1,
) -> dict[str, Any]:
    """Encode ``text`` and describe ``word`` in it.

    Returns ``{"sentence", "word", "index", "words", "encoder", "layer", "weights",
    "probes"}``: ``weights`` lists ``{word, position, weight}`` (the attention or averaging
    weight the word gave each word, itself included), ``probes`` lists ``{probe,
    static_cosine, contextual_cosine}`` (cosine of the word's static vector, layer 0, and of
    its vector at ``layer`` with each probe word's static vector).
    """
    enc = encoder.encode([text])[0]
    i = enc.find(word, occurrence=occurrence, span=span)
    static, contextual = enc.layers[0, i], enc.layers[layer, i]
    table = getattr(encoder, "table", None)
    result = {
        "sentence": text,
        "word": enc.words[i].text,
        "index": i,
        "span": [enc.words[i].start, enc.words[i].end],
        "words": enc.tokens,
        "encoder": dict(enc.meta),
        "layer": enc.layer_names[layer],
        "weights": word_weights(enc, i, layer=layer) if enc.n_layers else [],
        "probes": _probe_rows(table, static, contextual, list(probes)),
    }
    log.info("contextualised %r in %r with %s", result["word"], text, enc.meta.get("encoder"))
    return result


def compare(
    encoder: Encoder, text1: str, text2: str, word: str, *,
    occurrences: tuple[int | None, int | None] = (None, None),
) -> dict[str, Any]:
    """Cosine between ``word`` in ``text1`` and in ``text2`` at every layer.

    Returns ``{"word", "sentences", "layer_names", "cosine_by_layer", "encoder"}``; layer 0
    is the static row, so its cosine is 1.0 whenever the word is the same table row.
    """
    e1, e2 = encoder.encode([text1, text2])
    i1 = e1.find(word, occurrence=occurrences[0])
    i2 = e2.find(word, occurrence=occurrences[1])
    return {
        "word": word,
        "sentences": [text1, text2],
        "layer_names": list(e1.layer_names),
        "cosine_by_layer": cosine_by_layer(e1.layers[:, i1], e2.layers[:, i2]),
        "encoder": dict(e1.meta),
    }
