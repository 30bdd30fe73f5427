"""The head view and the model view: who attends to whom, per layer and head; and the views of a
sentence's attention, chosen once (:func:`attention_views`).

Both draw the same data (:class:`AttentionData`), at the level of words (an Encoding's
word-level attention) and, when the encoder's :class:`~contextlens.encoders.qk.AttentionParts`
are given, of the sub-word pieces the model really attends over, special tokens included.

What is stored, and said in the view: per layer, per head and for the mean of the heads,
the weights at or above a threshold (default 0.01: a fainter line is invisible),
quantised to 1/65535 (:mod:`contextlens.views.packing`), with the share of the weight
they hold; at most :data:`ENTRY_BUDGET` weights in all, so that a 60-word sentence of a
12-layer, 12-head model stays under 2 MB even when its attention is spread thin (the
threshold then rises, and the view says to what); the share each word gives the special
tokens ([CLS], [SEP], BOS...) exactly; and attention rollout
(:func:`~contextlens.analysis.attribution.attention_rollout`), which ignores heads, as a
row of its own.

>>> import numpy as np
>>> from contextlens.encoders.base import Encoding
>>> from contextlens.text import tokenize
>>> att = np.array([[[[0.5, 0.3], [0.2, 0.6]]]], dtype=np.float32)  # (1 layer, 1 head, 2, 2)
>>> enc = Encoding("bank river", tokenize("bank river"), np.ones((2, 2, 3)), att,
...                special_attention=np.array([[[0.2, 0.2]]], dtype=np.float32))
>>> data = attention_data(enc)
>>> (data.words.weights.dense()[0, 0].round(3).tolist(),
...  data.words.special_share.unpack()[0, 0].astype(float).round(3).tolist())
([[0.5, 0.3], [0.2, 0.6]], [0.2, 0.2])

:func:`attention_views` is the one choice of views for a sentence: what ``contextlens attention --html``
writes and the lab's attention card shows.

>>> from contextlens.analysis.toy import COURSE_VECTORS, toy_table
>>> from contextlens.encoders.mixing import SelfAttention
>>> [v.kind for v in attention_views(SelfAttention(toy_table(COURSE_VECTORS)), "bank loan river", "bank")]
['head', 'model', 'neuron']
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..analysis.attribution import attention_rollout
from ..encoders.base import Encoding
from ..encoders.qk import AttentionParts
from ..errors import InputError, check_choice, check_float
from .base import View, short
from .neuron import neuron_view
from .packing import Packed, SparseWeights, pack, quantise, sparsify
from .pieces import parts_labels, piece_title, word_piece_labels

__all__ = ["attention_views", "AttentionLevel", "AttentionData", "attention_data", "head_view", "model_view",
           "DEFAULT_THRESHOLD", "ENTRY_BUDGET"]

DEFAULT_THRESHOLD = 0.01  # weights below it are not drawn (and not stored)
# stored weights at most (the threshold rises to fit): 4 characters each, ~1.4 MB of page
ENTRY_BUDGET = 350_000
LEVELS = ("words", "pieces")


@dataclass(frozen=True)
class AttentionLevel:
    """The attention at one level (words or pieces), every layer and head.

    ``weights`` is ``(layers, heads + 1, n, n)``, the last "head" being the mean of the
    heads; ``special_share`` ``(layers, heads + 1, n)`` the exact share each token gave the
    special tokens (None when unknown); ``rollout`` ``(layers, n, n + 1 if rollout_special
    else n)``, the last column being the special tokens as one node.
    """

    tokens: tuple[str, ...]  # as shown: a piece without its tokenizer's markers (views.pieces)
    titles: tuple[str, ...]  # a tooltip per token: its pieces and their ids, or the piece's id and spelling
    special: tuple[bool, ...]  # per token: a special token or padding
    token_words: tuple[tuple[int, ...], ...]  # per token, the words (indices) it belongs to
    weights: SparseWeights
    special_share: Packed | None
    rollout: Packed
    rollout_special: bool


@dataclass(frozen=True)
class AttentionData:
    """What the head view and the model view draw (see the module notes)."""

    sentence: str
    layer_ids: tuple[int, ...]  # the contextual layers
    layer_names: tuple[str, ...]
    heads: int
    words: AttentionLevel
    pieces: AttentionLevel | None
    threshold: float
    encoder: str
    note: str  # e.g. windowed attention


def _with_mean(a: np.ndarray) -> np.ndarray:
    """``(layers, heads, ...)`` → ``(layers, heads + 1, ...)``, the mean over heads last."""
    return np.concatenate([a, a.mean(axis=1, keepdims=True)], axis=1)


def _word_titles(enc: Encoding) -> tuple[str, ...]:
    """Per word, its pieces (as :mod:`~contextlens.views.pieces` shows them) and their token
    ids (a transformer's Encoding), else the word."""
    pieces, ids = (None, None) if enc.pieces is None else (enc.pieces.tokens, enc.pieces.ids)
    if not pieces or len(pieces) != len(enc.words):
        return tuple(enc.tokens)
    out = []
    for k, (word, labels) in enumerate(zip(enc.tokens, word_piece_labels(pieces, enc.tokens))):
        shown = ([piece_title(lab, p, i) for lab, p, i in zip(labels, pieces[k], ids[k])] if ids
                 else [piece_title(lab, p, None) for lab, p in zip(labels, pieces[k])])
        out.append(f"{word}: " + " ".join(shown))
    return tuple(out)


def _level(tokens, titles, special, token_words, att, special_share, threshold, budget) -> AttentionLevel:
    weights = sparsify(_with_mean(att), threshold, budget=budget)  # (layers, heads + 1, n, n)
    n = att.shape[-1]
    roll = attention_rollout(att, special_share)  # (layers, m, m)
    return AttentionLevel(
        tuple(tokens), tuple(titles), tuple(bool(s) for s in special), tuple(token_words), weights,
        None if special_share is None else pack(_with_mean(special_share), "float32"),
        quantise(roll[:, :n, :]), special_share is not None,
    )


def _piece_level(enc: Encoding, parts: Sequence[AttentionParts], threshold, budget) -> AttentionLevel:
    ids = tuple(p.layer for p in parts)
    if ids != tuple(enc.layer_ids[1:]) or any(p.text != enc.text or p.padding for p in parts):
        raise InputError(
            f"the attention parts are of layers {ids} of {parts[0].text if parts else ''!r}; the piece view "
            f"needs every layer of the encoding ({enc.layer_ids[1:]}) of the same sentence, with no padding: "
            "encoder.attention_parts(text)"
        )
    first = parts[0]
    att = np.stack([p.weights for p in parts]).astype(np.float64)  # (layers, heads, T, T)
    special = np.array(first.special)
    # (layers, heads, T): to special tokens, which are also tokens here
    share = att[..., special].sum(axis=-1)
    labels, titles = parts_labels(first)
    level = _level(labels, titles, special, first.token_words, att, None, threshold, budget)
    return replace(level, special_share=pack(_with_mean(share), "float32"))


def attention_data(encoding: Encoding, parts: Sequence[AttentionParts] | None = None, *,
                   threshold: float = DEFAULT_THRESHOLD, budget: int = ENTRY_BUDGET) -> AttentionData:
    """The data of the head and model views for one sentence: its word-level attention
    and, with ``parts`` (``encoder.attention_parts(text)``: every layer), its pieces'.
    ``threshold``: the smallest weight stored; ``budget``: the most weights stored over
    both levels (the threshold of a level rises to fit)."""
    att = encoding.attention_weights().astype(np.float64)  # (layers, heads, n, n)
    threshold = check_float("threshold", threshold, low=0.0, high=1.0)
    special = None if encoding.special_attention is None else encoding.special_attention.astype(np.float64)
    n = len(encoding.words)
    t = len(parts[0].tokens) if parts else 0
    share = n * n / (n * n + t * t)  # the levels split the budget by their sizes
    words = _level(encoding.tokens, _word_titles(encoding), [False] * n, [(i,) for i in range(n)], att,
                   special, threshold, max(1, int(budget * share)))
    pieces = _piece_level(encoding, parts, threshold, max(1, int(budget * (1 - share)))) if parts else None
    return AttentionData(
        encoding.text, tuple(encoding.layer_ids[1:]), tuple(encoding.layer_names[1:]), int(att.shape[1]),
        words, pieces, threshold, encoding.source,
        str(encoding.meta.get("attention", "")),
    )


def _heads(heads, n_heads: int) -> list[int] | str:
    if heads in ("mean", "all"):
        return heads
    items = [heads] if isinstance(heads, numbers.Integral) else list(heads)
    if not items or not all(isinstance(h, numbers.Integral) and not isinstance(h, bool) and 0 <= h < n_heads
                            for h in items):
        raise InputError(f"heads must be 'mean', 'all' or head numbers 0..{n_heads - 1}, got {heads!r}")
    return sorted({int(h) for h in items})


def head_view(encoding: Encoding, parts: Sequence[AttentionParts] | None = None, *, layer: int = -1,
              heads="mean", level: str = "words", specials: bool = False,
              threshold: float = DEFAULT_THRESHOLD, title: str = "") -> View:
    """Lines from each word to the words it attends to (opacity = weight) at ``layer``,
    for ``heads`` (``"mean"``, ``"all"`` or head numbers); hovering a word keeps its
    lines and prints the weights. ``level`` (``words`` or ``pieces``, which needs
    ``parts``) and ``specials`` (special tokens as columns of their own) are the view's
    starting state: all of them can be changed in the view."""
    data = attention_data(encoding, parts, threshold=threshold)
    check_choice("level", level, LEVELS if data.pieces else ("words",))
    initial = {"layer": encoding.attention_index(layer), "heads": _heads(heads, data.heads), "level": level,
               "specials": bool(specials)}
    return View("head", {"attention": data, "initial": initial},
                title or f"head view: {short(encoding.text)}")


def model_view(encoding: Encoding, parts: Sequence[AttentionParts] | None = None, *,
               word: str | int | None = None,
               level: str = "words", threshold: float = DEFAULT_THRESHOLD, title: str = "", **where) -> View:
    """A grid of thumbnails, one per layer × head (and the mean of the heads), with
    attention rollout as a row of its own: the whole matrix, or with ``word`` the lines
    from that word (``where``: ``occurrence=`` or ``span=``). Click a thumbnail to open
    it as a head view."""
    data = attention_data(encoding, parts, threshold=threshold)
    check_choice("level", level, LEVELS if data.pieces else ("words",))
    index = None if word is None else encoding._index(word, where)
    initial = {"word": index, "level": level}
    return View("model", {"attention": data, "initial": initial},
                title or f"model view: {short(encoding.text)}")


def attention_views(encoder, text: str, word: str | int | None = None, *, layer: int | None = -1,
                    head: int | None = None, occurrence: int | None = None) -> list[View]:
    """The head view (``layer``: a contextual layer number, None or -1 the last; ``head``:
    one head, None the mean of the heads), the model view of ``word`` and, where the
    encoder has queries and keys, the neuron view of ``word`` and ``head`` (default 0) at
    ``layer``. Sub-word pieces and special tokens are included where the encoder has them.

    The other experiments have one view each and their callers build it directly
    (``layers_view(layer_divergence(...))``, ``senses_view(senses(...), texts)``)."""
    layer = -1 if layer is None else layer
    enc = encoder.encode([text])[0]
    index = enc.attention_index(layer)
    parts = encoder.attention_parts(text) if encoder.has_attention_parts else None
    where = {} if occurrence is None else {"occurrence": occurrence}
    out = [head_view(enc, parts, layer=layer, heads="mean" if head is None else [head]),
           model_view(enc, parts, word=word, **where)]
    if parts is not None:
        out.append(neuron_view(parts[index], head=head or 0, word=word, occurrence=occurrence or 0))
    return out
