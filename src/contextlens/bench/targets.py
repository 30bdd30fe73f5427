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

>>> target_text(("He", "sat", "by", "the", "river_bank", "."), 4)
('He sat by the river bank .', (14, 24))
>>> import numpy as np
>>> from contextlens.vectors import EmbeddingTable
>>> from contextlens.encoders.static import StaticEncoder
>>> table = EmbeddingTable(["river", "bank", "u", "s"], [[1, 0], [0, 1], [2, 0], [0, 2]])
>>> v = target_vectors(StaticEncoder(table), [(("the", "river_bank"), 1), (("in", "U.S."), 1), (("a", "zzz"), 1)])
>>> v.shape, v[0, 0].tolist(), v[1, 0].tolist(), bool(np.isnan(v[2]).all())
((3, 1, 2), [0.5, 0.5], [1.0, 1.0], True)
"""

from __future__ import annotations

import logging
import numbers
import re
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import EmptyInputError, InputError
from ..text import tokenize

__all__ = ["target_text", "target_vectors", "encoding_layer_names", "Item", "CHUNK"]

log = logging.getLogger(__name__)
Item = tuple[Sequence[str], int]  # (tokens, index of the target token)
CHUNK = 512  # distinct sentences per encode() call: progress is reported between chunks
_JOIN = re.compile(r"(?<=\S)_(?=\S)")


def target_text(tokens: Sequence[str], index: int, *, underscores: bool = True) -> tuple[str, tuple[int, int]]:
    """The sentence (tokens joined by spaces) and the target token's ``(start, end)`` span.

    >>> target_text(["Room", "and", "board", "."], 2)
    ('Room and board .', (9, 14))
    """
    tokens = [str(t) for t in tokens]
    if not tokens:
        raise EmptyInputError("an item has no tokens; each item needs a sentence and a target index")
    if isinstance(index, bool) or not isinstance(index, numbers.Integral) or not 0 <= index < len(tokens):
        raise InputError(f"target index {index!r} is out of range 0..{len(tokens) - 1} for {' '.join(tokens)!r}")
    if underscores:
        tokens = [_JOIN.sub(" ", t) for t in tokens]
    start = sum(len(t) + 1 for t in tokens[:index])
    return " ".join(tokens), (start, start + len(tokens[index]))


def _is_transformer(encoder) -> bool:
    return type(encoder).__name__ == "TransformerEncoder"


def _layer_index(layers, n_layers: int) -> list[int]:
    """Positions in an Encoding's layer stack (0 = static row; negative from the end)."""
    if layers is None or layers == "all":
        return list(range(n_layers))
    items = [layers] if isinstance(layers, numbers.Integral) else list(layers)
    out = []
    for k in items:
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not -n_layers <= k < n_layers:
            raise InputError(f"layer {k!r} does not exist: the encoding has layers 0..{n_layers - 1}")
        out.append(int(k) % n_layers)
    return out


def encoding_layer_names(encoder, sample: str = "word") -> tuple[str, ...]:
    """The names of the layers the encoder returns (``("static", "mixed")``...)."""
    return tuple(encoder.encode([sample])[0].layer_names)


def target_vectors(
    encoder, items: Sequence[Item], *, layers=None, underscores: bool = True,
    progress: Callable[[int, int], None] | None = None, dtype=np.float32,
) -> np.ndarray:
    """``(n, n_layers_kept, dim)``: each item's target vector at each layer kept.

    ``layers`` are positions in the Encoding's layer stack (None: all; 0 is the static or
    embedding row; with a :class:`TransformerEncoder` built with ``layers="all"`` they are
    the model's layer numbers). A target without a vector gives a NaN row. ``progress`` is
    called with ``(items done, items total)`` between chunks of sentences.

    Sentences are encoded once each (items sharing a sentence share the call), longest
    first in chunks of :data:`CHUNK`; a TransformerEncoder is asked only for the target
    words (``words=``), which skips pooling the others.
    """
    items = list(items)
    if not items:
        raise EmptyInputError("no items to encode")
    texts: dict[str, list[tuple[int, tuple[int, int]]]] = {}
    for n, (tokens, index) in enumerate(items):
        text, span = target_text(tokens, index, underscores=underscores)
        texts.setdefault(text, []).append((n, span))
    order = sorted(texts, key=len, reverse=True)
    out: np.ndarray | None = None
    keep: list[int] | None = None
    done = 0
    transformer = _is_transformer(encoder)
    for c in range(0, len(order), CHUNK):
        chunk = order[c : c + CHUNK]
        if transformer:
            words = []
            for text in chunk:
                ws = tokenize(text)
                words.append(sorted({i for _, (a, b) in texts[text] for i, w in enumerate(ws)
                                     if w.start < b and w.end > a}))
            encodings = encoder.encode(chunk, words=words)
        else:
            encodings = [_encode_or_none(encoder, text) for text in chunk]
        for text, enc in zip(chunk, encodings):
            done += len(texts[text])
            if enc is None:
                continue
            if out is None:
                keep = _layer_index(layers, enc.layers.shape[0])
                out = np.full((len(items), len(keep), enc.dim), np.nan, dtype=dtype)
            starts = np.array([w.start for w in enc.words], dtype=np.int64)
            ends = np.array([w.end for w in enc.words], dtype=np.int64)
            for n, (a, b) in texts[text]:
                hit = np.flatnonzero((starts < b) & (ends > a))
                if hit.size:
                    out[n] = enc.layers[keep][:, hit].mean(axis=1)  # (layers kept, dim)
        if progress is not None:
            progress(done, len(items))
        log.debug("encoded %d/%d targets", done, len(items))
    if out is None:  # no sentence had a word the encoder knows
        raise InputError(f"{getattr(encoder, 'name', 'the encoder')} has a vector for no word of these "
                         f"{len(items)} item(s); check the vectors (language, case) or the data")
    return out


def _encode_or_none(encoder, text: str):
    """One sentence's Encoding, or None when the encoder knows none of its words."""
    try:
        return encoder.encode([text])[0]
    except EmptyInputError:
        raise
    except InputError as err:
        log.debug("no vector for any word of %r: %s", text, err)
        return None
