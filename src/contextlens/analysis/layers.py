"""Layer divergence: how far two usages of a word drift apart, layer by layer.

For each pair of sentences, the cosine between the word's vectors at every layer
(:func:`~contextlens.analysis.similarity.cosine_by_layer`); layer 0 is the static row, the
baseline, so it is 1.0 whenever both usages are the same table row. Given pairs
(:func:`layer_divergence`) or every two usages of the word in a list of sentences
(:func:`usage_divergence`: what the lab draws; two in one sentence are a pair too).

>>> summarise_divergence([1.0, 0.8, 0.9, 0.5])
{'static_cosine': 1.0, 'final_cosine': 0.5, 'min_cosine': 0.5, 'min_layer': 3, 'drop': 0.5}
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..bounds import MAX_USAGE_PAIRS, check_encoding
from ..encoders.base import Encoder
from ..encoders.static import StaticEncoder
from ..encoders.targets import check_texts
from ..errors import (
    AmbiguousTargetError,
    EmptyInputError,
    InputError,
    LimitError,
    TargetNotFoundError,
    ask,
    numbered,
)
from ..vectors import EmbeddingTable, cosine
from .ranking import static_side
from .similarity import cosine_by_layer
from .usages import Usages, check_pairs, every_word, need_usages, usages_in

__all__ = ["layer_divergence", "summarise_divergence", "usage_divergence", "usage_pairs"]

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
        raise InputError(f"{numbered('pair', bad[0])} has {len(pairs[bad[0]])} sentence(s); each pair needs "
                         "exactly 2")
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
                raise type(err)(f"{numbered('pair', n)}, sentence {enc.text!r}: {err}") from None
        cos = cosine_by_layer(e1.layers[:, idx[0]], e2.layers[:, idx[1]])
        row = {"label": numbered("pair", n), "sentences": [e1.text, e2.text], "cosine_by_layer": cos,
               **summarise_divergence(cos, e1.layer_ids)}
        if static is not None:
            a, b = StaticEncoder(static, oov="error").static_vectors([e1.words[idx[0]].text,
                                                                      e2.words[idx[1]].text])
            row["static_cosine"] = cosine(a, b)
            row["drop"] = row["static_cosine"] - row["final_cosine"]
        rows.append(row)
        log.info("pair %d: %s", n, [round(c, 3) for c in cos])
    return {"word": word, "layer_names": list(encodings[0].layer_names),
            "layer_ids": list(encodings[0].layer_ids),
            "static": static_side(static, encodings[0]), "encoder": encodings[0].describe(), "pairs": rows}


def usage_pairs(usages: Usages) -> list[dict[str, Any]]:
    """Every two of ``usages``, in order, with their cosine at every layer.

    Each pair: ``{label, usages: [a, b], labels, indices, occurrences, sentences,
    cosine_by_layer, static_cosine, final_cosine, min_cosine, min_layer, drop}``: ``usages``
    the two usages' indices in ``usages``, ``labels`` theirs (``S0``, ``S0 #1``: see
    :func:`~contextlens.analysis.usages.usage_labels`), ``indices`` their sentences' (from
    0), ``occurrences`` which occurrence of the word each is in its sentence, ``label`` the
    two labels joined by an en dash.

    >>> from contextlens.analysis.usages import collect_usages
    >>> from contextlens.encoders.static import StaticEncoder
    >>> table = EmbeddingTable(["bank", "river"], [[1.0, 1.0], [0.0, 1.0]])
    >>> u = collect_usages(StaticEncoder(table), ["bank river bank", "river bank"], "bank", occurrence="all")
    >>> for p in usage_pairs(u):
    ...     print(p["label"], p["indices"], p["occurrences"], p["cosine_by_layer"])
    S0 #0–S0 #1 [0, 0] [0, 1] [1.0]
    S0 #0–S1 [0, 1] [0, 0] [1.0]
    S0 #1–S1 [0, 1] [1, 0] [1.0]
    """
    labels, rows = usages.labels, []
    for a, b in itertools.combinations(range(len(usages)), 2):
        ua, ub = usages.usages[a], usages.usages[b]
        cos = cosine_by_layer(usages.vectors[a], usages.vectors[b])
        rows.append({"label": f"{labels[a]}–{labels[b]}", "usages": [a, b],
                     "labels": [labels[a], labels[b]], "indices": [ua.position, ub.position],
                     "occurrences": [ua.occurrence, ub.occurrence],
                     "sentences": [ua.sentence, ub.sentence], "cosine_by_layer": cos,
                     **summarise_divergence(cos, usages.layer_ids)})
    return rows


def usage_divergence(
    encoder: Encoder, sentences: Sequence[str], word: str, *, occurrence: int | str | None = None,
    missing: str = "error",
) -> dict[str, Any]:
    """Cosine between every two usages of ``word`` in ``sentences``, at every layer: each
    pair of the sentences that hold it, or, with ``occurrence="all"``, each pair of its
    occurrences (two in one sentence included). The sentences are encoded once.

    ``occurrence``: None (the word once per sentence, else an error names the sentence),
    an index (from 0) or ``"all"``; ``missing``: ``"error"`` or ``"skip"`` (the sentences
    without the word are listed in ``skipped``). Returns ``{word, layer_names, layer_ids,
    static, encoder, usages: [{sentence, position, index, word, span, occurrence, label}],
    skipped, pairs}`` (:func:`usage_pairs`); at least two usages are needed, and at most
    ``MAX_USAGE_PAIRS`` pairs are compared.
    """
    sentences = check_texts(sentences)
    if not sentences:
        raise EmptyInputError(f"no sentences to look for {word!r} in; give at least two")
    check_encoding(encoder, sentences, todo="give fewer or shorter sentences")
    encodings = encoder.encode(sentences, targets=every_word(sentences))  # vectors only
    found = need_usages(usages_in(encodings, word, occurrence=occurrence, missing=missing,
                                  sentences=sentences, takes_all=True))
    n = len(found)
    if n * (n - 1) // 2 > MAX_USAGE_PAIRS:
        raise LimitError(f"{word!r} has {n:,} usages here, {n * (n - 1) // 2:,} pairs of them, over the "
                         f"limit of {MAX_USAGE_PAIRS:,} pairs compared at once: give fewer sentences, or "
                         f"take one occurrence per sentence ({ask('occurrence', 0)})")
    pairs = usage_pairs(found)
    log.info("%r: %d usages, %d pairs", word, len(found), len(pairs))
    return {"word": word, "layer_names": list(found.layer_names), "layer_ids": list(found.layer_ids),
            "static": static_side(None, encodings[found.usages[0].position]), "encoder": found.encoder,
            "usages": [{**u.as_dict(), "label": name}
                       for u, name in zip(found.usages, found.labels, strict=True)],
            "skipped": found.skipped, "pairs": pairs}
