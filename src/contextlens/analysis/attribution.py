"""Attention attribution: what a word attended to, per layer and head, and by rollout.

Attention rollout (Abnar & Zuidema 2020) follows attention through the layers, counting
the residual connection: per layer ``Â = 0.5·A + 0.5·I`` with ``A`` the mean over heads,
rows renormalised to 1, and ``rollout_l = Â_l ··· Â_1``; row ``i`` of ``rollout_l`` is how
much word ``i`` at layer ``l`` draws on each input word.

Special tokens ([CLS], [SEP], BOS...) are not words, but a transformer gives them much
attention. When ``special_attention`` (each word's share to them, per layer and head) is
known, rollout treats all special tokens as **one extra node** (last row/column) that keeps
its attention to itself: its row of ``A`` is ``[0, ..., 0, 1]``. Attention that reaches
the special tokens so stays there, and ``rollout[l, i, -1]`` is the share of word ``i``'s
layer-``l`` vector that flowed through special tokens. (What the special tokens themselves
attended to is not in an Encoding, so it cannot be followed further.) Without it, each
row of ``A`` is renormalised over the words.

>>> import numpy as np
>>> a = np.array([[[[0.0, 1.0], [1.0, 0.0]]]])  # (1 layer, 1 head, 2 words, 2 words)
>>> attention_rollout(a)[-1].tolist()
[[0.5, 0.5], [0.5, 0.5]]
>>> a = np.array([[[[0.0, 0.5], [1.0, 0.0]]]])  # word 0 gave the other half to [CLS]
>>> attention_rollout(a, np.array([[[0.5, 0.0]]]))[-1].tolist()
[[0.5, 0.25, 0.25], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]]
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from ..bounds import check_encoding
from ..encoders.base import Encoder, Encoding
from ..errors import DimensionError, InputError, ask, check_float, check_int

__all__ = ["attention_rollout", "attention_attribution", "attribute", "RESIDUAL"]

RESIDUAL = 0.5  # weight of the identity (the residual connection) in rollout


def _renormalise(m: np.ndarray) -> np.ndarray:
    sums = m.sum(axis=-1, keepdims=True)
    if np.any(sums <= 0):
        raise InputError("an attention row sums to 0; rollout needs every word to attend somewhere")
    return m / sums


def attention_rollout(
    attention: np.ndarray, special_attention: np.ndarray | None = None, *, residual: float = RESIDUAL,
) -> np.ndarray:
    """Cumulative rollout after each layer: ``(n_layers, m, m)``.

    ``attention`` is ``(n_layers, heads, n, n)``; ``special_attention`` ``(n_layers,
    heads, n)`` or None. ``m = n + 1`` with special attention (the last node is the special
    tokens, see the module notes), else ``m = n``. Every row sums to 1.
    """
    a = np.asarray(attention, dtype=np.float64)
    if a.ndim != 4 or a.shape[2] != a.shape[3]:
        raise DimensionError(f"attention must be (n_layers, heads, n, n), got {a.shape}")
    check_float("residual", residual, low=0.0, high=1.0, hint="the weight of the residual connection")
    mean = a.mean(axis=1)  # (layers, n, n)
    n_layers, n = mean.shape[:2]
    if special_attention is not None:
        s = np.asarray(special_attention, dtype=np.float64)
        if s.shape != a.shape[:3]:
            raise DimensionError(f"special_attention must be {a.shape[:3]}, got {s.shape}")
        aug = np.zeros((n_layers, n + 1, n + 1))  # (layers, n + 1, n + 1)
        aug[:, :n, :n] = mean
        aug[:, :n, n] = s.mean(axis=1)
        aug[:, n, n] = 1.0  # the special node keeps its attention to itself
        mean = aug
    m = mean.shape[1]
    hat = _renormalise((1 - residual) * _renormalise(mean) + residual * np.eye(m))  # (layers, m, m)
    out = np.empty_like(hat)
    acc = np.eye(m)
    for layer in range(n_layers):
        acc = hat[layer] @ acc
        out[layer] = acc
    return out


def attention_attribution(
    encoding: Encoding, word: str | int, *, occurrence: int | None = None, layer: int | None = None,
    head: int | None = None, rollout: bool = False,
) -> dict[str, Any]:
    """The weights ``word`` gave every word, per layer and head.

    Returns ``{sentence, word, index, words, layer_names and layer_ids (the contextual layers), heads,
    per_head (layers × heads × words), mean (layers × words), special_share (layers × heads,
    or None), special_mean (layers, or None)}``; with ``rollout``, ``rollout`` (layers ×
    words: the word's row of the cumulative rollout) and ``rollout_special`` (layers, or
    None). With ``layer`` (a contextual layer number; -1 = last), ``selected = {layer, layer_name, head
    (None = mean), matrix (words × words), special (words, or None), rollout_matrix (words ×
    words, or None), rollout_special (words, or None)}``; ``special`` columns are the share
    each word gave the special tokens.
    """
    att = np.asarray(encoding.attention_weights(), dtype=np.float64)  # (layers, heads, n, n)
    special = encoding.special_attention  # (layers, heads, n) | None
    n_layers, heads, n = att.shape[:3]
    i = (check_int("word index", word, low=0, high=n - 1) if isinstance(word, numbers.Integral)
         else encoding.find(word, occurrence=occurrence))
    if head is not None:
        check_int("head", head, low=0, high=heads - 1, hint="or None for the mean over heads")
    if head is not None and layer is None:
        raise InputError(f"a head is chosen within a layer; give the layer too ({ask('layer')})")
    out: dict[str, Any] = {
        "sentence": encoding.text, "word": encoding.words[i].text, "index": i, "words": encoding.tokens,
        "layer_names": list(encoding.layer_names[1:]), "layer_ids": list(encoding.layer_ids[1:]),
        "heads": heads, "per_head": att[:, :, i, :].tolist(), "mean": att[:, :, i, :].mean(axis=1).tolist(),
        "special_share": None if special is None else special[:, :, i].tolist(),
        "special_mean": None if special is None else special[:, :, i].mean(axis=1).tolist(),
    }
    roll = attention_rollout(att, special) if rollout else None  # (layers, m, m)
    if roll is not None:
        out["rollout"] = roll[:, i, :n].tolist()
        out["rollout_special"] = None if special is None else roll[:, i, n].tolist()
    if layer is not None:
        li = encoding.attention_index(layer)
        mat = att[li].mean(axis=0) if head is None else att[li, head]  # (n, n)
        spec = None
        if special is not None:
            spec = (special[li].mean(axis=0) if head is None else special[li, head]).tolist()
        out["selected"] = {
            "layer": encoding.layer_ids[li + 1], "layer_name": encoding.layer_names[li + 1], "head": head,
            "matrix": mat.tolist(), "special": spec,
            "rollout_matrix": None if roll is None else roll[li, :n, :n].tolist(),
            "rollout_special": None if roll is None or special is None else roll[li, :n, n].tolist(),
        }
    return out


def attribute(
    encoder: Encoder, text: str, word: str | int, *, occurrence: int | None = None, layer: int | None = None,
    head: int | None = None, rollout: bool = False,
) -> dict[str, Any]:
    """Encode ``text`` and run :func:`attention_attribution` on ``word`` (same options),
    adding the encoder's ``meta`` as ``encoder``."""
    check_encoding(encoder, [text], what="the text", todo="give a shorter text")
    enc = encoder.encode([text])[0]
    found = attention_attribution(enc, word, occurrence=occurrence, layer=layer, head=head, rollout=rollout)
    return {**found, "encoder": enc.describe()}
