"""Two sentences compared as wholes: the course's last step, sentence vectors.

Each sentence is one vector per layer (:meth:`~contextlens.encoders.base.Encoding.sentence_vector`:
a transformer pools its pieces, as sentence-transformers does; a word-level encoder its
words); the result is their cosine at every layer, and at the one asked for.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..bounds import check_encoding
from ..encoders.base import SENTENCE_POOLINGS, Encoder
from ..errors import check_choice
from .similarity import cosine_by_layer

__all__ = ["compare_sentences"]

log = logging.getLogger(__name__)


def compare_sentences(encoder: Encoder, text1: str, text2: str, *, pooling: str = "mean",
                      layer: int = -1) -> dict[str, Any]:
    """Cosine between the sentence vectors of ``text1`` and ``text2``.

    Returns ``{sentences, pooling, layer, layer_name, cosine, layer_ids, layer_names,
    cosine_by_layer, encoder}``; at the last layer with a sentence-transformers model's own
    pooling (mean for MiniLM and MPNet), ``cosine`` is that model's sentence similarity.
    """
    check_choice("sentence pooling", pooling, SENTENCE_POOLINGS)
    position = encoder.layer_position(layer)  # a layer the encoder lacks fails before encoding
    check_encoding(encoder, [text1, text2], what="the two texts", todo="give shorter texts")
    e1, e2 = encoder.encode([text1, text2])
    a = np.stack([e1.sentence_vector(pooling, k) for k in e1.layer_ids])  # (layers, dim)
    b = np.stack([e2.sentence_vector(pooling, k) for k in e2.layer_ids])
    by_layer = cosine_by_layer(a, b)
    log.info("sentence cosine at layer %s: %.4f", e1.layer_ids[position], by_layer[position])
    return {"sentences": [text1, text2], "pooling": pooling, "layer": e1.layer_ids[position],
            "layer_name": e1.layer_names[position], "cosine": by_layer[position],
            "layer_ids": list(e1.layer_ids),
            "layer_names": list(e1.layer_names), "cosine_by_layer": by_layer, "encoder": e1.describe()}
