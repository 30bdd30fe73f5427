"""Encoding (what every encoder returns) and the Encoder protocol.

An :class:`Encoding` is one sentence: its words (with char spans), a stack of layers of
word vectors ``(n_layers + 1, n_words, dim)`` whose layer 0 is the static row, and, where
the encoder has them, attention weights ``(n_layers, heads, n_words, n_words)``.

>>> import numpy as np
>>> from contextlens.text import tokenize
>>> enc = Encoding("bank by bank", tokenize("bank by bank"), np.ones((2, 3, 4)))
>>> enc.n_layers, enc.dim, enc.find("bank", occurrence=1)
(1, 4, 2)
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import DimensionError, EmptyInputError, InputError, TargetNotFoundError
from ..text import Word, locate

__all__ = ["Encoding", "Encoder", "EncoderBase"]


@dataclass
class Encoding:
    """One encoded sentence.

    Attributes
    ----------
    text : the sentence as given.
    words : the words, with char spans into ``text``.
    layers : ``(n_layers + 1, n_words, dim)``; layer 0 is the static (table or
        embedding-matrix) row, layers 1..L are contextual.
    attention : ``(n_layers, heads, n_words, n_words)`` or None; row ``i`` of a head is
        the weight word ``i`` gives each word.
    layer_names : one label per layer (``"static"``, ``"mixed"``, ``"layer 3"``...).
    meta : encoder name and parameters, plus encoder-specific notes (e.g. skipped words).
    special_attention : ``(n_layers, heads, n_words)`` or None: the attention each word
        gave to special tokens ([CLS], [SEP], BOS...), which are not words; with it, each
        row of ``attention`` plus this share sums to 1.
    embeddings_output : ``(n_words, dim)`` or None: a transformer's ``hidden_states[0]``
        (embedding row + positions + LayerNorm), kept apart from layer 0, which is the raw
        embedding-matrix row.
    """

    text: str
    words: Sequence[Word]
    layers: np.ndarray  # (n_layers + 1, n_words, dim)
    attention: np.ndarray | None = None  # (n_layers, heads, n_words, n_words)
    layer_names: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    special_attention: np.ndarray | None = None  # (n_layers, heads, n_words)
    embeddings_output: np.ndarray | None = None  # (n_words, dim)

    def __post_init__(self) -> None:
        self.words = tuple(self.words)
        if self.layers.ndim != 3 or self.layers.shape[1] != len(self.words):
            raise DimensionError(
                f"layers must be (n_layers + 1, {len(self.words)} words, dim), got {self.layers.shape}"
            )
        n = len(self.words)
        if self.attention is not None and (
            self.attention.ndim != 4 or self.attention.shape[2:] != (n, n)
            or self.attention.shape[0] != self.n_layers
        ):
            raise DimensionError(
                f"attention must be ({self.n_layers} layers, heads, {n}, {n}), got {self.attention.shape}"
            )
        if self.special_attention is not None and (
            self.attention is None or self.special_attention.shape != self.attention.shape[:3]
        ):
            raise DimensionError(
                f"special_attention must be (n_layers, heads, {n}) like attention[..., 0], "
                f"got {self.special_attention.shape}"
            )
        if not self.layer_names:
            self.layer_names = ("static",) + tuple(f"layer {i}" for i in range(1, self.n_layers + 1))
        if len(self.layer_names) != self.layers.shape[0]:
            raise DimensionError(f"{len(self.layer_names)} layer names for {self.layers.shape[0]} layers")

    @property
    def n_layers(self) -> int:
        """Contextual layers (layer 0, the static row, is not counted)."""
        return self.layers.shape[0] - 1

    @property
    def dim(self) -> int:
        return self.layers.shape[2]

    @property
    def tokens(self) -> list[str]:
        return [w.text for w in self.words]

    def find(
        self, word: str | None = None, *, occurrence: int | None = None,
        span: tuple[int, int] | None = None,
    ) -> int:
        """Index of the target word (by text, text + occurrence, or char span).

        If the word is in the sentence but the encoder skipped it (not in its table),
        the error says so.
        """
        try:
            return locate(list(self.words), word, occurrence=occurrence, span=span)
        except TargetNotFoundError:
            skipped = self.meta.get("skipped", {})
            if word is not None and word.lower() in {k.lower() for k in skipped}:
                hints = next(v for k, v in skipped.items() if k.lower() == word.lower())
                hint = f"; close keys: {', '.join(hints)}" if hints else ""
                raise TargetNotFoundError(
                    f"{word!r} is in the sentence but not in {self.meta.get('vectors', 'the table')}"
                    f"{hint}"
                ) from None
            raise

    def weights(
        self, word: str | int, layer: int = -1, head: int | None = None, **where
    ) -> np.ndarray:
        """``(n_words,)``: the weight a word (text or index) gave every word at ``layer``.

        ``layer`` counts contextual layers from 1 (negative from the end: -1 = last);
        ``head=None`` averages over the heads.
        """
        if self.attention is None:
            raise InputError(
                f"this encoding ({self.meta.get('encoder', 'unknown encoder')}) has no "
                "attention weights; use a mixing or transformer encoder"
            )
        n_layers, heads = self.attention.shape[:2]
        if isinstance(layer, bool) or not isinstance(layer, numbers.Integral) or not (
            1 <= layer <= n_layers or -n_layers <= layer <= -1
        ):
            raise InputError(
                f"layer must be 1..{n_layers} (or -1 for the last), got {layer!r}; "
                "layer 0 is the static row and has no weights"
            )
        i = self.find(word, **where) if isinstance(word, str) else int(word)
        if not 0 <= i < len(self.words):
            raise InputError(f"word index {i} is out of range 0..{len(self.words) - 1}")
        rows = self.attention[layer - 1 if layer > 0 else layer, :, i, :]  # (heads, words)
        if head is None:
            return rows.mean(axis=0)
        if isinstance(head, numbers.Integral) and 0 <= head < heads:
            return rows[head]
        raise InputError(f"head must be None (average) or 0..{heads - 1}, got {head!r}")

    def vector(self, word: str | int, layer: int = -1, **where) -> np.ndarray:
        """The ``(dim,)`` vector of a word (text or index) at ``layer`` (default: last)."""
        i = word if isinstance(word, int) else self.find(word, **where)
        return self.layers[layer, i]


@runtime_checkable
class Encoder(Protocol):
    """Anything that turns sentences into :class:`Encoding` objects."""

    name: str

    def encode(self, texts: Sequence[str]) -> list[Encoding]: ...


class EncoderBase(ABC):
    """Shared plumbing: ``encode_one`` and input checks. Subclasses define ``_encode``."""

    name = "encoder"

    def params(self) -> dict[str, Any]:
        """The parameters recorded in each Encoding's ``meta``."""
        return {}

    def encode(self, texts: Sequence[str]) -> list[Encoding]:
        if isinstance(texts, str):
            texts = [texts]
        out = []
        for i, text in enumerate(texts):
            if not text or not text.strip():
                raise EmptyInputError(f"sentence {i + 1} is empty; give some words to encode")
            out.append(self._encode(text))
        return out

    def encode_one(self, text: str) -> Encoding:
        return self.encode([text])[0]

    @abstractmethod
    def _encode(self, text: str) -> Encoding:
        """Encode one non-empty sentence."""
