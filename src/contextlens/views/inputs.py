"""The input stage: sub-word pieces, their token ids, the embedding row they select, and
what enters layer 1.

For each sentence, each word's pieces with their ids (a transformer's Encoding's
``pieces``), its layer-0 vector (the
embedding-matrix rows of its pieces, pooled), the vector that enters layer 1 (row +
position (+ LayerNorm): ``embeddings_output``) and its vector after the last layer, each
drawn as a strip of its dimensions. With ``word``, the word's usages are compared stage
by stage: the same ids select the same row (cosine 1 at layer 0); positions and then the
layers pull the usages apart (:func:`~contextlens.analysis.similarity.cosine_by_layer`).

>>> import numpy as np
>>> from contextlens.encoders.base import Encoding
>>> from contextlens.text import tokenize
>>> a = Encoding("bank loan", tokenize("bank loan"), np.array([[[1.0, 1], [1, 0]], [[1, 0.5], [1, 0]]]))
>>> b = Encoding("river bank", tokenize("river bank"), np.array([[[0.0, 1], [1, 1]], [[0, 1], [0.5, 1]]]))
>>> [round(s["cosine"], 3) for s in input_view([a, b], word="bank").data["comparison"][0]["stages"]]
[1.0, 0.8]
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..analysis.similarity import cosine_by_layer
from ..analysis.usages import usage_labels
from ..encoders.base import Encoding
from ..errors import EmptyInputError, InputError, TargetNotFoundError
from ..vectors import cosine
from .base import View
from .packing import pack
from .pieces import word_piece_labels

__all__ = ["input_view"]

MAX_INPUT_SENTENCES = 16


def _sentence(enc: Encoding) -> dict:
    pieces, ids = (None, None) if enc.pieces is None else (enc.pieces.tokens, enc.pieces.ids)
    real = bool(pieces) and len(pieces) == len(enc.words)
    return {
        "text": enc.text, "words": enc.tokens,
        "pieces": word_piece_labels(pieces, enc.tokens) if real else [[w] for w in enc.tokens],
        "raw_pieces": pieces if real else None,  # each piece as the tokenizer spells it (a tooltip)
        "piece_ids": ids if ids and len(ids) == len(enc.words) else None,
        "row": pack(enc.layers[0], "float32"),
        "entered": None if enc.embeddings_output is None else pack(enc.embeddings_output, "float32"),
        "last": pack(enc.layers[-1], "float32") if enc.n_layers else None, "last_name": enc.layer_names[-1],
    }


def _usages(enc: Encoding, word: str) -> list[int]:
    return [i for i, w in enumerate(enc.tokens) if w.lower() == word.lower()]


def _compare(encodings: Sequence[Encoding], word: str) -> list[dict]:
    found = [(s, i) for s, enc in enumerate(encodings) for i in _usages(enc, word)]
    if len(found) < 2:
        raise TargetNotFoundError(f"{word!r} occurs {len(found)} time(s) in these sentences; comparing its "
                                  "usages needs at least 2")
    labels = dict(zip(found, usage_labels([s for s, _ in found]), strict=True))  # S0, or S0 #1 beside S0 #0
    rows = []
    for (s, i), (t, j) in itertools.combinations(found, 2):
        a, b = encodings[s], encodings[t]
        stages = [{"name": f"{a.layer_names[0]} (layer 0)",
                   "cosine": cosine_by_layer(a.layers[:1, i], b.layers[:1, j])[0]}]
        if a.embeddings_output is not None and b.embeddings_output is not None:
            stages.append({"name": "entering layer 1 (+ positions, LayerNorm)",
                           "cosine": cosine(a.embeddings_output[i], b.embeddings_output[j])})
        by_layer = cosine_by_layer(a.layers[:, i], b.layers[:, j])
        stages += [{"name": name, "cosine": c} for name, c in zip(a.layer_names[1:], by_layer[1:])]
        ids = [None if e.pieces is None else e.pieces.ids for e in (a, b)]
        same = None if None in ids else ids[0][i] == ids[1][j]
        rows.append({"a": [s, i], "b": [t, j], "labels": [labels[s, i], labels[t, j]], "same_ids": same,
                     "stages": stages})
    return rows


def input_view(encodings: Sequence[Encoding], *, word: str | None = None, title: str = "") -> View:
    """The input stage of each sentence (see the module notes); with ``word``, its usages
    compared stage by stage."""
    encodings = list(encodings)
    if not encodings:
        raise EmptyInputError("give at least one encoding (encoder.encode([...]))")
    if len(encodings) > MAX_INPUT_SENTENCES:
        raise InputError(f"{len(encodings)} sentences; the input view shows at most {MAX_INPUT_SENTENCES}")
    if len({e.layer_ids for e in encodings}) > 1:
        raise InputError("the encodings have different layers; encode every sentence with one encoder")
    data = {
        "sentences": [_sentence(e) for e in encodings], "word": word,
        "comparison": None if word is None else _compare(encodings, word),
        "encoder": encodings[0].source,
    }
    return View("input", data, title or "input stage: pieces, ids, rows")
