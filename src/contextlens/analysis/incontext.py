"""One word in context: the weights it gave its neighbours, how its vector moved toward
probe words, and how two of its usages compare layer by layer.

These functions return plain, JSON-ready dicts: the CLI and the web app only present them.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..bounds import check_encoding
from ..encoders.base import Encoder, Encoding
from ..encoders.static import StaticEncoder
from ..errors import TargetNotFoundError
from ..text import locate, tokenize
from ..vectors import EmbeddingTable, cosine
from .ranking import static_side
from .similarity import cosine_by_layer

__all__ = ["word_weights", "contextualize", "compare", "usage_vectors"]

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


def _probe_rows(encoder: Encoder, static: np.ndarray, contextual: np.ndarray, probes) -> list[dict[str, Any]]:
    """Each probe word's static row (the encoder's layer 0, out of context) against the
    word's static and contextual vectors."""
    if not probes:
        return []
    rows = encoder.static_vectors(probes)  # (probes, dim)
    return [{"probe": p, "static_cosine": cosine(static, v), "contextual_cosine": cosine(contextual, v)}
            for p, v in zip(probes, rows, strict=True)]


def contextualize(
    encoder: Encoder, text: str, word: str | None = None, *, probes: list[str] = (),
    occurrence: int | None = None, span: tuple[int, int] | None = None, layer: int = -1,
) -> dict[str, Any]:
    """Encode ``text`` and describe ``word`` in it.

    Returns ``{"sentence", "word", "index", "words", "encoder", "layer", "layer_name",
    "weights", "probes"}``: ``weights`` lists ``{word, position, weight}`` (the attention or
    averaging weight the word gave each word at ``layer``, itself included), ``probes``
    lists ``{probe, static_cosine, contextual_cosine}`` (cosine of the word's static
    vector, layer 0, and of its vector at ``layer`` with each probe word's static row).
    """
    position = encoder.layer_position(layer)  # a layer the encoder lacks fails before encoding
    check_encoding(encoder, [text], what="the text", todo="give a shorter text")
    enc = encoder.encode([text])[0]
    i = enc.find(word, occurrence=occurrence, span=span)
    static, contextual = enc.layers[0, i], enc.layers[position, i]
    result = {
        "sentence": text,
        "word": enc.words[i].text,
        "index": i,
        "span": [enc.words[i].start, enc.words[i].end],
        "words": enc.tokens,
        "encoder": enc.describe(),
        "layer": enc.layer_ids[position],
        "layer_name": enc.layer_names[position],
        "weights": word_weights(enc, i, layer=layer) if position else [],
        "probes": _probe_rows(encoder, static, contextual, list(probes)),
    }
    log.info("contextualised %r in %r with %s", result["word"], text, enc.meta.get("encoder"))
    return result


def usage_vectors(encoder: Encoder, text: str, word: str, occurrence: int | None = None) -> Encoding:
    """``text`` encoded for one usage of ``word`` only: an Encoding of that one word (no
    attention), so a long text costs its windows' vectors, not words x words weights.

    The usage is found in the text's words first, so a missing or ambiguous word is named
    before any encoding; a word the encoder has no vector for (not in the table, no
    sub-word piece) is an error too.
    """
    i = locate(tokenize(text), word, occurrence=occurrence)
    enc = encoder.encode([text], targets=[[i]])[0]
    if not enc.words:
        skipped = enc.meta.get("skipped", {})
        hints = next((v for k, v in skipped.items() if k.lower() == word.lower()), [])
        hint = f"; close keys: {', '.join(hints)}" if hints else ""
        raise TargetNotFoundError(f"{word!r} is in the sentence but not in "
                                  f"{enc.meta.get('vectors', 'the table')}{hint}")
    return enc


def compare(
    encoder: Encoder, text1: str, text2: str, word: str, *,
    occurrences: tuple[int | None, int | None] = (None, None), static: EmbeddingTable | None = None,
) -> dict[str, Any]:
    """Cosine between ``word`` in ``text1`` and in ``text2`` at every layer.

    Returns ``{"word", "sentences", "layer_names", "layer_ids", "cosine_by_layer",
    "static", "encoder"}``; layer 0 is the static row, so its cosine is 1.0 whenever the word
    is the same table row. With a ``static`` table, ``static`` is ``{source, vectors, forms,
    cosine}``: the cosine of the table rows of the word as the encoder read it in each sentence (1.0
    for one form; a cased table tells *Bank* from *bank*); else it names layer 0. Only the two
    usages are encoded (:func:`usage_vectors`), so texts of any length work.
    """
    e1 = usage_vectors(encoder, text1, word, occurrences[0])  # one word each
    e2 = usage_vectors(encoder, text2, word, occurrences[1])
    side = static_side(static, e1)
    if static is not None:
        forms = [e1.words[0].text, e2.words[0].text]
        rows = StaticEncoder(static, oov="error").static_vectors(forms)  # (2, dim)
        side.update(forms=forms, cosine=cosine(rows[0], rows[1]))
    return {
        "word": word,
        "sentences": [text1, text2],
        "layer_names": list(e1.layer_names),
        "layer_ids": list(e1.layer_ids),
        "cosine_by_layer": cosine_by_layer(e1.layers[:, 0], e2.layers[:, 0]),
        "static": side,
        "encoder": e1.describe(),
    }
