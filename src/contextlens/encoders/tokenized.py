"""Vectors of target words in pre-tokenised sentences (what every benchmark reads).

The benchmark datasets give a sentence as tokens plus the index of the target token.
:func:`target_text` joins the tokens with single spaces and returns the target's char
span; :func:`target_vectors` encodes each distinct sentence once and reads, at every
layer kept, the vector of the word(s) overlapping that span.

- If our word tokeniser (:func:`contextlens.text.tokenize`) splits the target token into
  several words (``U.S.`` → ``U``, ``.``, ``S``, ``.``; a SemCor multiword
  ``take_place`` read as ``take place``), their vectors are **mean-pooled**.
- Underscores joining a multiword expression (SemCor's ``Fulton_County``) are read as
  spaces (``underscores=True``): the models and tables know the words, not the join.
- A target the encoder has no vector for (every overlapping word out of a static table's
  vocabulary, or given no sub-word piece) gives a row of NaN: the tasks count these as
  OOV instead of scoring a zero vector.
- Only the target words are asked of the encoder (``targets=``), which skips pooling the
  others and, for a static table, never fails on a sentence it knows no word of.

>>> target_text(("He", "sat", "by", "the", "river_bank", "."), 4)
('He sat by the river bank .', (14, 24))
>>> import numpy as np
>>> from contextlens.vectors import EmbeddingTable
>>> from contextlens.encoders.static import StaticEncoder
>>> table = EmbeddingTable(["river", "bank", "u", "s"], [[1, 0], [0, 1], [2, 0], [0, 2]])
>>> v = target_vectors(StaticEncoder(table),
...                    [(("the", "river_bank"), 1), (("in", "U.S."), 1), (("a", "zzz"), 1)])
>>> v.shape, v[0, 0].tolist(), v[1, 0].tolist(), bool(np.isnan(v[2]).all())
((3, 1, 2), [0.5, 0.5], [1.0, 1.0], True)
"""

from __future__ import annotations

import logging
import numbers
import re
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import EmptyInputError, InputError, check_int
from ..text import tokenize
from .base import layer_position

__all__ = ["target_text", "target_vectors", "layer_positions", "Item", "CHUNK"]

log = logging.getLogger(__name__)
Item = tuple[Sequence[str], int]  # (tokens, index of the target token)
CHUNK = 512  # distinct sentences per encode() call: progress is reported between chunks
_JOIN = re.compile(r"(?<=\S)_(?=\S)")


def target_text(tokens: Sequence[str], index: int, *,
                underscores: bool = True) -> tuple[str, tuple[int, int]]:
    """The sentence (tokens joined by spaces) and the target token's ``(start, end)`` span.

    >>> target_text(["Room", "and", "board", "."], 2)
    ('Room and board .', (9, 14))
    """
    tokens = [str(t) for t in tokens]
    if not tokens:
        raise EmptyInputError("an item has no tokens; each item needs a sentence and a target index")
    check_int("target index", index, low=0, high=len(tokens) - 1, hint=f"the tokens are {' '.join(tokens)!r}")
    if underscores:
        tokens = [_JOIN.sub(" ", t) for t in tokens]
    start = sum(len(t) + 1 for t in tokens[:index])
    return " ".join(tokens), (start, start + len(tokens[index]))


def layer_positions(layer_ids, layers) -> list[int]:
    """Positions in a stack of layers numbered ``layer_ids`` of the layer numbers
    ``layers`` (None or ``"all"``: every layer; negative numbers count from the top).

    >>> layer_positions((0, 4, 6), [6, 0]), layer_positions((0, 1, 2), None), layer_positions((0, 1, 2), -1)
    ([2, 0], [0, 1, 2], [2])
    """
    if layers is None or (isinstance(layers, str) and layers == "all"):
        return list(range(len(layer_ids)))
    items = [layers] if isinstance(layers, numbers.Integral) else list(layers)
    return [layer_position(layer_ids, k) for k in items]


def target_vectors(
    encoder, items: Sequence[Item], *, layers=None, underscores: bool = True,
    progress: Callable[[int, int], None] | None = None, dtype=np.float32,
) -> np.ndarray:
    """``(n, n_layers_kept, dim)``: each item's target vector at each layer kept.

    ``layers`` are layer numbers (None: all; 0 is the static or embedding row; negative
    numbers count from the top). A target without a vector gives a NaN row. ``progress``
    is called with ``(items done, items total)`` between chunks of sentences.

    Sentences are encoded once each (items sharing a sentence share the call), longest
    first in chunks of :data:`CHUNK`, asking the encoder for the target words only.
    """
    items = list(items)
    if not items:
        raise EmptyInputError("no items to encode")
    texts: dict[str, list[tuple[int, tuple[int, int]]]] = {}
    for n, (tokens, index) in enumerate(items):
        text, span = target_text(tokens, index, underscores=underscores)
        texts.setdefault(text, []).append((n, span))
    order = sorted(texts, key=len, reverse=True)
    keep = layer_positions(encoder.layer_ids, layers)
    out = np.full((len(items), len(keep), encoder.dim), np.nan, dtype=dtype)
    done = 0
    for c in range(0, len(order), CHUNK):
        chunk = order[c : c + CHUNK]
        words = []
        for text in chunk:
            ws = tokenize(text)
            words.append(sorted({i for _, (a, b) in texts[text] for i, w in enumerate(ws)
                                 if w.start < b and w.end > a}))
        encodings = encoder.encode(chunk, targets=words)
        for text, enc in zip(chunk, encodings):
            done += len(texts[text])
            starts = np.array([w.start for w in enc.words], dtype=np.int64)
            ends = np.array([w.end for w in enc.words], dtype=np.int64)
            for n, (a, b) in texts[text]:
                hit = np.flatnonzero((starts < b) & (ends > a))
                if hit.size:
                    out[n] = enc.layers[keep][:, hit].mean(axis=1)  # (layers kept, dim)
        if progress is not None:
            progress(done, len(items))
        log.debug("encoded %d/%d targets", done, len(items))
    if np.isnan(out).all():  # no sentence had a word the encoder knows
        raise InputError(f"{encoder.name} has a vector for no word of these "
                         f"{len(items)} item(s); check the vectors (language, case) or the data")
    return out
