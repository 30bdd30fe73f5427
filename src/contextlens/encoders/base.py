"""Encoding (what every encoder returns) and Encoder (what every encoder implements).

An :class:`Encoding` is one sentence: its words (with char spans), a stack of layers of
word vectors ``(layers, n_words, dim)`` whose first layer is the static row, and, where
the encoder has them, attention weights ``(layers - 1, heads, n_words, n_words)``.

**Layers** are named by number, the same way everywhere (library, CLI, lab, JSON):
``layer_ids`` lists the layers of a stack, ``0`` being the static row (a table row or a
transformer's embedding-matrix row) and the others the model's own layer numbers; a
negative number counts from the top (``-1`` = the last layer kept). :func:`layer_position`
is the one rule that turns a layer number into an index of the stack.

>>> import numpy as np
>>> from contextlens.text import tokenize
>>> enc = Encoding("bank by bank", tokenize("bank by bank"), np.ones((3, 3, 4)), layer_ids=(0, 4, 6))
>>> enc.n_layers, enc.dim, enc.find("bank", occurrence=1), enc.layer_position(6), enc.layer_position(-2)
(2, 4, 2, 2, 1)
>>> enc
Encoding('bank by bank', 3 words, layers (0, 4, 6) × 4 dims)

**Sentence vectors**: ``Encoding.sentence_vector(pooling, layer)`` pools the whole sentence
at a layer: a transformer pools its *pieces* (special tokens included, as
sentence-transformers does: ``mean``, ``cls``, ``max``); every other encoder pools its
words (``mean``, ``max``).

**The protocol** (:class:`Encoder`): ``encode(texts, *, targets=None)``, ``dim``,
``layer_ids`` and ``params()``; ``targets`` (the words to keep in each text) is resolved
here, once, by :func:`~contextlens.encoders.targets.select_targets`, and
``static_vectors(words)`` gives a word's
static row out of context.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import (
    DimensionError,
    InputError,
    TargetNotFoundError,
    ZeroVectorError,
    ask,
    check_choice,
)
from ..text import Word, locate, tokenize
from .targets import Targets, check_texts, select_targets

if TYPE_CHECKING:
    from .qk import AttentionParts

__all__ = ["Encoding", "Encoder", "WordPieces", "layer_position", "layer_number", "contextual_layers",
           "SENTENCE_POOLINGS", "word_sentence_vectors"]

#: how a sentence vector pools: the mean, the first piece ([CLS] / BOS), the elementwise max
SENTENCE_POOLINGS = ("mean", "cls", "max")


def layer_position(layer_ids: Sequence[int], layer: int) -> int:
    """The index of layer ``layer`` in a stack whose layers are ``layer_ids``.

    ``layer`` is a layer number (0 = the static row, then the model's own numbers) or a
    negative number counting from the top (-1 = the last layer of the stack).

    >>> layer_position((0, 1, 2, 3), -1), layer_position((0, 4, 6), 4), layer_position((0, 4, 6), 0)
    (3, 1, 0)
    >>> layer_position((0, 4, 6), 5)
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: layer 5 is not available: the layers are 0, 4, 6 (or -3..-1 from the top)
    """
    ids = tuple(layer_ids)
    n = len(ids)
    if isinstance(layer, bool) or not isinstance(layer, numbers.Integral):
        raise InputError(f"a layer is a whole number (0 = static row, -1 = last), got {layer!r}")
    if layer < 0:
        if -n <= layer:
            return n + int(layer)
    elif layer in ids:
        return ids.index(layer)
    shown = ", ".join(map(str, ids)) if n <= 40 else f"{ids[0]}..{ids[-1]}"
    raise InputError(f"layer {layer} is not available: the layers are {shown} (or -{n}..-1 from the top)")


def layer_number(layer_ids: Sequence[int], layer: int) -> int:
    """The layer number that ``layer`` names in a stack whose layers are ``layer_ids`` (a
    negative number counts from the top), checked as :func:`layer_position` checks it.

    >>> layer_number((0, 4, 6), -1), layer_number((0, 4, 6), 4), layer_number((0, 4, 6), -3)
    (6, 4, 0)
    """
    return tuple(layer_ids)[layer_position(layer_ids, layer)]


def contextual_layers(layers, n: int) -> tuple[int, ...]:
    """The contextual layers (1..n) of an ``n``-layer model that ``layers`` asks to keep, ascending:
    None or ``"all"`` every one, an int or a list of ints (negative: from the top; 0, the static
    row, is always kept and so dropped here).

    >>> contextual_layers(None, 3), contextual_layers([-1, 0, 1], 6), contextual_layers(2, 4)
    ((1, 2, 3), (1, 6), (2,))
    """
    if layers is None or layers == "all":
        return tuple(range(1, n + 1))
    items = [layers] if isinstance(layers, numbers.Integral) else layers
    if isinstance(items, str) or not all(isinstance(k, numbers.Integral) and not isinstance(k, bool)
                                         for k in items):
        raise InputError(f"layers must be None, 'all', an int or a list of ints, got {layers!r}")
    out = set()
    for k in items:
        if not -n <= k <= n:
            raise InputError(f"layer {k} does not exist: the model has layers 0..{n} (or -1..-{n})")
        out.add(int(k) if k >= 0 else n + 1 + int(k))
    return tuple(sorted(out - {0}))


@dataclass(frozen=True)
class WordPieces:
    """A transformer's pieces of each word of an Encoding: ``tokens[i]`` the piece strings
    of word ``i``, ``ids[i]`` their ids in the model's vocabulary.

    >>> WordPieces((("river", "##bank"),), ((2314, 9299),)).ids[0]
    (2314, 9299)
    """

    tokens: tuple[tuple[str, ...], ...]
    ids: tuple[tuple[int, ...], ...]


@dataclass
class Encoding:
    """One encoded sentence.

    Attributes
    ----------
    text : the sentence as given.
    words : the words, with char spans into ``text``.
    layers : ``(n_layers + 1, n_words, dim)``; ``layers[0]`` is the static (table or
        embedding-matrix) row, the others are contextual.
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
    layer_ids : the layer number of each layer of the stack (default ``0, 1, 2...``): 0 is
        the static row, the others the model's own layer numbers.
    source : what made it, as a user names it: the model's name (a transformer), else the
        vectors' (table's) name (a static encoder, a mixer over a table), else the encoder's kind.
    pieces : a transformer's :class:`WordPieces` of each word, or None (a word-level encoder).
    sentence_vectors : ``{pooling: (n_layers + 1, dim)}``, the whole sentence pooled at each
        layer (see :meth:`sentence_vector`); empty when the encoder could not compute them
        (``meta["sentence"]`` says why); None when it left them to :meth:`Encoder.encode`,
        which pools the words of a whole sentence (:func:`word_sentence_vectors`).
    """

    text: str
    words: Sequence[Word]
    layers: np.ndarray  # (n_layers + 1, n_words, dim)
    attention: np.ndarray | None = None  # (n_layers, heads, n_words, n_words)
    layer_names: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)
    special_attention: np.ndarray | None = None  # (n_layers, heads, n_words)
    embeddings_output: np.ndarray | None = None  # (n_words, dim)
    layer_ids: tuple[int, ...] = ()
    sentence_vectors: dict[str, np.ndarray] | None = None  # pooling -> (n_layers + 1, dim)
    source: str = ""
    pieces: WordPieces | None = None

    def __post_init__(self) -> None:
        self.words = tuple(self.words)
        if self.pieces is not None and len(self.pieces.ids) != len(self.words):
            raise DimensionError(f"pieces must hold one entry per word ({len(self.words)}), "
                                 f"got {len(self.pieces.ids)}")
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
        self.layer_ids = tuple(int(k) for k in self.layer_ids) or tuple(range(self.layers.shape[0]))
        if len(self.layer_ids) != self.layers.shape[0] or self.layer_ids[0] != 0 or any(
            a >= b for a, b in zip(self.layer_ids, self.layer_ids[1:])
        ):
            raise DimensionError(
                f"layer_ids must start at 0 and rise, one per layer ({self.layers.shape[0]}), got "
                f"{self.layer_ids}"
            )
        if not self.layer_names:
            self.layer_names = ("static",) + tuple(f"layer {i}" for i in self.layer_ids[1:])
        if len(self.layer_names) != self.layers.shape[0]:
            raise DimensionError(f"{len(self.layer_names)} layer names for {self.layers.shape[0]} layers")
        for pooling, v in (self.sentence_vectors or {}).items():
            if pooling not in SENTENCE_POOLINGS or v.shape != (self.layers.shape[0], self.dim):
                raise DimensionError(f"sentence_vectors[{pooling!r}] must be one of {SENTENCE_POOLINGS} with "
                                     f"shape {(self.layers.shape[0], self.dim)} (layers, dim), got "
                                     f"{getattr(v, 'shape', v)}")

    def __repr__(self) -> str:
        text = self.text if len(self.text) <= 40 else self.text[:39] + "…"
        att = "" if self.attention is None else f", attention {self.attention.shape[1]} heads"
        return f"Encoding({text!r}, {len(self.words)} words, layers {self.layer_ids} × {self.dim} dims{att})"

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

    def layer_position(self, layer: int) -> int:
        """The index in ``layers`` of layer number ``layer`` (negative: from the top)."""
        return layer_position(self.layer_ids, layer)

    def layer_name(self, layer: int) -> str:
        return self.layer_names[self.layer_position(layer)]

    def layer_number(self, layer: int) -> int:
        """The layer number ``layer`` names (negative: from the top): :func:`layer_number`."""
        return layer_number(self.layer_ids, layer)

    def attention_weights(self) -> np.ndarray:
        """``attention`` ``(n_layers, heads, n_words, n_words)``, or the one clear error when the
        encoding has none (a static encoder; only some words kept, which ``meta["attention"]`` says)."""
        if self.attention is None:
            why = f" ({self.meta['attention']})" if self.meta.get("attention") else ""
            who = self.meta.get("encoder", "unknown encoder")
            raise InputError(f"this encoding ({who}) gives no attention weights{why}; "
                             f"{ask('method', 'attention', 'average')}, or a transformer model")
        return self.attention

    def attention_index(self, layer: int) -> int:
        """The index in ``attention`` of layer number ``layer`` (negative: from the top): its
        position in the stack less one, layer 0 (the static row) having no weights.

        >>> att = np.full((2, 1, 2, 2), 0.5)  # (layers, heads, words, words)
        >>> enc = Encoding("a b", tokenize("a b"), np.ones((3, 2, 1)), att, layer_ids=(0, 3, 5))
        >>> enc.attention_index(5), enc.attention_index(-2), enc.attention_at(-2)[0, 0].tolist()
        (1, 0, [0.5, 0.5])
        """
        self.attention_weights()
        pos = self.layer_position(layer)
        if pos == 0:
            raise InputError(f"layer 0 is the static row and has no attention; choose one of "
                             f"{', '.join(map(str, self.layer_ids[1:]))} (or -1 for the last)")
        return pos - 1

    def attention_at(self, layer: int) -> np.ndarray:
        """``(heads, n_words, n_words)``: the attention weights of layer number ``layer``
        (negative: from the top), with the errors of :meth:`attention_index`."""
        return self.attention_weights()[self.attention_index(layer)]

    def describe(self) -> dict[str, Any]:
        """The JSON record of the encoder that made this encoding, as every analysis reports it
        (``"encoder"``): ``meta``, with a transformer's pieces of each word (``pieces``,
        ``piece_ids``, lists) after ``skipped``.

        >>> enc = Encoding("a b", tokenize("a b"), np.ones((1, 2, 1)), meta={"model": "m", "skipped": {}},
        ...                pieces=WordPieces((("a",), ("Ġb",)), ((64,), (275,))))
        >>> enc.describe()
        {'model': 'm', 'skipped': {}, 'pieces': [['a'], ['Ġb']], 'piece_ids': [[64], [275]]}
        """
        if self.pieces is None:
            return dict(self.meta)
        pieces = {"pieces": [list(t) for t in self.pieces.tokens],
                  "piece_ids": [list(i) for i in self.pieces.ids]}
        out: dict[str, Any] = {}
        for key, value in self.meta.items():
            out[key] = value
            if key == "skipped":
                out.update(pieces)
        return out if "pieces" in out else {**out, **pieces}

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

    def _index(self, word: str | int, where: dict) -> int:
        i = self.find(word, **where) if isinstance(word, str) else word
        if isinstance(i, bool) or not isinstance(i, numbers.Integral) or not 0 <= i < len(self.words):
            raise InputError(f"word index {i!r} is out of range 0..{len(self.words) - 1}")
        return int(i)

    def weights(
        self, word: str | int, layer: int = -1, head: int | None = None, **where
    ) -> np.ndarray:
        """``(n_words,)``: the weight a word (text or index) gave every word at ``layer``
        (a contextual layer number; -1 = the last); ``head=None`` averages over the heads."""
        rows = self.attention_at(layer)[:, self._index(word, where), :]  # (heads, words)
        if head is None:
            return rows.mean(axis=0)
        if isinstance(head, numbers.Integral) and not isinstance(head, bool) and 0 <= head < len(rows):
            return rows[head]
        raise InputError(f"head must be None (average) or 0..{len(rows) - 1}, got {head!r}")

    def vector(self, word: str | int, layer: int = -1, **where) -> np.ndarray:
        """The ``(dim,)`` vector of a word (text or index) at ``layer`` (default: the last)."""
        return self.layers[self.layer_position(layer), self._index(word, where)]

    def sentence_vector(self, pooling: str = "mean", layer: int = -1, *,
                        normalize: bool = True) -> np.ndarray:
        """The ``(dim,)`` vector of the whole sentence at ``layer``, pooled by ``pooling``
        (``mean``, ``cls``, ``max``), scaled to unit length unless ``normalize=False``:
        with a sentence-transformers model's own pooling (mean for MiniLM and MPNet) it is
        the vector that model's pipeline gives.

        >>> enc = Encoding("a b", tokenize("a b"), np.array([[[3.0, 0.0], [1.0, 4.0]]]),
        ...                sentence_vectors=word_sentence_vectors(np.array([[[3.0, 0.0], [1.0, 4.0]]])))
        >>> enc.sentence_vector("mean").round(4).tolist(), enc.sentence_vector("max",
        ...                                                              normalize=False).tolist()
        ([0.7071, 0.7071], [3.0, 4.0])
        """
        check_choice("sentence pooling", pooling, SENTENCE_POOLINGS)
        if not self.sentence_vectors:
            why = self.meta.get("sentence", "only some words were kept (targets=)")
            raise InputError(f"this encoding has no sentence vectors ({why}); encode the whole sentence",
                             cli=f"this text has no sentence vector ({why}); give a shorter text")
        if pooling not in self.sentence_vectors:
            raise InputError(f"{pooling} pooling is not available for this encoding (only "
                             f"{', '.join(self.sentence_vectors)}): a word-level encoder has no [CLS] piece")
        v = self.sentence_vectors[pooling][self.layer_position(layer)]
        if not normalize:
            return v
        norm = float(np.linalg.norm(v))
        if norm == 0:
            raise ZeroVectorError("the sentence vector is all zeros; it has no direction to normalise")
        return (v / norm).astype(v.dtype)

    def select(self, indices: Sequence[int], note: str) -> Encoding:
        """This encoding restricted to the words at ``indices``; attention is dropped (a
        row over a subset of the words would not sum to 1), ``note`` says why."""
        keep = list(indices)
        pieces = self.pieces and WordPieces(tuple(self.pieces.tokens[i] for i in keep),
                                            tuple(self.pieces.ids[i] for i in keep))
        return replace(
            self, words=[self.words[i] for i in keep], layers=self.layers[:, keep], pieces=pieces,
            attention=None, special_attention=None,
            embeddings_output=None if self.embeddings_output is None else self.embeddings_output[keep],
            meta={**self.meta, "attention": note} if self.attention is not None else dict(self.meta),
        )


class Encoder(ABC):
    """What every encoder implements; callers use only this, never a class name.

    - ``encode(texts, *, targets=None)``: one :class:`Encoding` per text; ``targets``
      keeps only some words (see :func:`~contextlens.encoders.targets.select_targets`; then
      ``attention`` is None);
    - ``dim``: the vector size; ``layer_ids``: the layer numbers every Encoding's stack
      holds (0 = static row);
    - ``params()``: what identifies the encoder and its settings (recorded in each
      Encoding's ``meta``, keys of caches and index metadata);
    - ``static_vectors(words)``: each word's static row (layer 0), out of any sentence;
    - ``sentence_vectors(texts)``: each whole text pooled to one vector per layer;
    - ``causal``: whether a word's vector is computed from the words before it only (a causal
      LM, self-attention with ``causal=True``): then later words cannot change it.

    Subclasses implement ``_encode_texts(texts, chosen)``, which receives non-empty texts
    and, per text, None or the word indices (into ``tokenize(text)``) to keep.
    """

    name = "encoder"
    causal = False  # the encoders that read only earlier words set it

    @property
    @abstractmethod
    def dim(self) -> int:
        """The size of every vector."""

    @property
    @abstractmethod
    def layer_ids(self) -> tuple[int, ...]:
        """The layer numbers of every Encoding's stack: 0 (the static row), then the others."""

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """What identifies this encoder: its kind, model or table, and settings."""

    @abstractmethod
    def static_vectors(self, words: Sequence[str]) -> np.ndarray:
        """``(len(words), dim)``: each word's static row (layer 0), out of context."""

    @abstractmethod
    def _encode_texts(self, texts: list[str], chosen: list[list[int] | None]) -> list[Encoding]:
        """Encode non-empty texts, keeping per text every word (None) or the chosen ones."""

    def encode(self, texts: Sequence[str], *, targets: Targets = None) -> list[Encoding]:
        """One :class:`Encoding` per text; ``targets``: which words to keep (default all)."""
        texts = check_texts(texts)
        if not texts:
            return []
        chosen = select_targets(targets, texts, [tokenize(t) for t in texts])
        encodings = self._encode_texts(texts, chosen)
        for enc, keep in zip(encodings, chosen):
            if enc.sentence_vectors is None and keep is None and len(enc.words):
                enc.sentence_vectors = word_sentence_vectors(enc.layers)
        return encodings

    def sentence_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """``(layers, texts, dim)``: each whole text as one vector per layer of ``layer_ids``,
        here the mean of its words' vectors; a transformer pools all its pieces instead
        (:meth:`TransformerEncoder.sentence_vectors`, as sentence-transformers does).

        >>> from contextlens.encoders.static import StaticEncoder
        >>> from contextlens.vectors import EmbeddingTable
        >>> enc = StaticEncoder(EmbeddingTable(["a", "b"], [[3.0, 0.0], [1.0, 4.0]]))
        >>> enc.sentence_vectors(["a b", "b"]).tolist()
        [[[2.0, 2.0], [1.0, 4.0]]]
        """
        encodings = self.encode(texts)
        for text, e in zip(texts, encodings):
            if not len(e.words):
                raise InputError(f"{self.name} finds no word it knows in {text!r}, so it has no sentence "
                                 "vector")
        return np.stack([e.layers.mean(axis=1) for e in encodings], axis=1)  # (layers, texts, dim)

    def encode_one(self, text: str, *, targets: Targets = None) -> Encoding:
        """``encode([text])[0]``; ``targets`` (word indices, spans or words) for this text."""
        if targets is not None and not isinstance(targets, str | set | frozenset) and not (
            isinstance(targets, list | tuple) and all(isinstance(s, str) for s in targets)
        ):
            targets = [list(targets)]
        return self.encode([text], targets=targets)[0]

    def layer_position(self, layer: int) -> int:
        """The index of ``layer`` in the stacks this encoder returns (checked before encoding)."""
        return layer_position(self.layer_ids, layer)

    #: whether :meth:`attention_parts` gives queries and keys (self-attention, transformers)
    has_attention_parts = False

    def attention_parts(self, text: str, *, layers: Sequence[int] | None = None,
                        pad: int = 0) -> list[AttentionParts]:
        """An optional capability (:attr:`has_attention_parts`): the queries, keys, scale, bias and mask of
        each of ``layers`` (contextual layer numbers; None = every one) for ``text``, at the level
        where the encoder attends, with ``pad`` padding tokens appended (see
        :class:`~contextlens.encoders.qk.AttentionParts`). Encoders without queries and keys
        say so."""
        raise InputError(
            f"this encoder ({self.name}) has no queries and keys; use a self-attention encoder "
            "(method 'attention') or a transformer model"
        )


def word_sentence_vectors(layers: np.ndarray) -> dict[str, np.ndarray]:
    """A word-level encoder's sentence vectors: the mean and the elementwise max of its
    words' vectors, per layer; ``layers`` is ``(n_layers + 1, n_words, dim)``.

    >>> {k: v.tolist() for k, v in word_sentence_vectors(np.array([[[1.0, 2.0], [3.0, 0.0]]])).items()}
    {'mean': [[2.0, 1.0]], 'max': [[3.0, 2.0]]}
    """
    return {"mean": layers.mean(axis=1), "max": layers.max(axis=1)}
