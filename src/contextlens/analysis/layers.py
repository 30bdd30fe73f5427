"""Layer divergence: how far two usages of a word drift apart, layer by layer.

For each pair of sentences, the cosine between the word's vectors at every layer
(:func:`~contextlens.analysis.similarity.cosine_by_layer`); layer 0 is the static row, the
baseline, so it is 1.0 whenever both usages are the same table row.

>>> summarise_divergence([1.0, 0.8, 0.9, 0.5])
{'static_cosine': 1.0, 'final_cosine': 0.5, 'min_cosine': 0.5, 'min_layer': 3, 'drop': 0.5}
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..bounds import check_encoding
from ..encoders.base import Encoder
from ..encoders.static import StaticEncoder
from ..errors import AmbiguousTargetError, EmptyInputError, InputError, TargetNotFoundError
from ..vectors import EmbeddingTable, cosine
from .ranking import static_side
from .similarity import cosine_by_layer
from .usages import check_pairs, every_word

__all__ = ["layer_divergence", "summarise_divergence"]

log = logging.getLogger(__name__)


def summarise_divergence(cosines: Sequence[float], layer_ids: Sequence[int] | None = None) -> dict[str, Any]:
    """``{static_cosine, final_cosine, min_cosine, min_layer, drop}`` of one pair's
    cosines by layer (``layer_ids``: the layer numbers, default 0, 1, ...); ``drop`` =
    static − final cosine (how much context pulled them apart)."""
    c = np.asarray(cosines, dtype=np.float64)  # (layers + 1,)
    if c.ndim != 1 or not len(c):
        raise InputError(f"need one cosine per layer, got shape {c.shape}")
    lo = int(c.argmin())
    return {"static_cosine": float(c[0]), "final_cosine": float(c[-1]), "min_cosine": float(c[lo]),
            "min_layer": lo if layer_ids is None else layer_ids[lo], "drop": float(c[0] - c[-1])}


def layer_divergence(
    encoder: Encoder, pairs: Sequence[tuple[str, str]], word: str, *,
    occurrences: tuple[int | None, int | None] = (None, None), static: EmbeddingTable | None = None,
) -> dict[str, Any]:
    """Cosine between ``word`` in the two sentences of each pair, at every layer.

    Returns ``{word, layer_names, static, encoder, pairs: [{label, sentences,
    cosine_by_layer, static_cosine, final_cosine, min_cosine, min_layer, drop}]}``; the
    label is ``"pair N"``. All sentences are encoded in one call, each once however many
    pairs it is in (the lab pairs each of 64 sentences with the 63 others). With a ``static`` table,
    each pair's ``static_cosine`` (and ``drop``) is that table's: the cosine of its rows for
    the word as written in the two sentences; ``static`` names the static side.
    """
    pairs = check_pairs(pairs)
    if not pairs:
        raise EmptyInputError("give at least one pair of sentences")
    bad = [i for i, p in enumerate(pairs) if len(p) != 2]
    if bad:
        raise InputError(f"pair {bad[0] + 1} has {len(pairs[bad[0]])} sentence(s); each pair needs exactly 2")
    unique = list(dict.fromkeys(t for p in pairs for t in p))
    check_encoding(encoder, unique, todo="give fewer or shorter sentences")
    encoded = dict(zip(unique, encoder.encode(unique, targets=every_word(unique))))  # vectors only
    encodings = [encoded[t] for p in pairs for t in p]
    rows = []
    for n, (e1, e2) in enumerate(zip(encodings[0::2], encodings[1::2], strict=True)):
        idx = []
        for enc, occ in ((e1, occurrences[0]), (e2, occurrences[1])):
            try:
                idx.append(enc.find(word, occurrence=occ))
            except (TargetNotFoundError, AmbiguousTargetError) as err:
                raise type(err)(f"pair {n + 1}, sentence {enc.text!r}: {err}") from None
        cos = cosine_by_layer(e1.layers[:, idx[0]], e2.layers[:, idx[1]])
        row = {"label": f"pair {n + 1}", "sentences": [e1.text, e2.text], "cosine_by_layer": cos,
               **summarise_divergence(cos, e1.layer_ids)}
        if static is not None:
            a, b = StaticEncoder(static, oov="error").static_vectors([e1.words[idx[0]].text, e2.words[idx[1]].text])
            row["static_cosine"] = cosine(a, b)
            row["drop"] = row["static_cosine"] - row["final_cosine"]
        rows.append(row)
        log.info("pair %d: %s", n + 1, [round(c, 3) for c in cos])
    return {"word": word, "layer_names": list(encodings[0].layer_names), "layer_ids": list(encodings[0].layer_ids),
            "static": static_side(static, encodings[0]), "encoder": dict(encodings[0].meta), "pairs": rows}
