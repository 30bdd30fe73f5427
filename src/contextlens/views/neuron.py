"""The neuron view (the arithmetic of one weight) and the mask view (why masks use −∞).

Both read an encoder's :class:`~contextlens.encoders.qk.AttentionParts` for one layer:

- the **neuron view**, for a chosen token and head, lists every key: its vector ``k``,
  the elementwise product ``q∘k``, the raw score ``q·k``, the scaled score ``q·k · scale``
  (``1/√d``), any bias (MPNet's relative positions), the mask (0 or −∞) and the softmax,
  next to the weight the encoder itself computed;
- the **mask view** shows the scaled scores of a head as a matrix under a mask (the one the
  encoder applied, a causal one, or none) and the weights after the softmax, with the
  masked scores set to −∞ (exactly 0 weight) or, on a toggle, to 0: then weight *leaks* to
  the positions the mask should hide, and the view says how much.

The page computes the scores and softmaxes from the vectors it is given, in float64, as
the library does (:meth:`AttentionParts.scores`, :meth:`AttentionParts.softmax`); the
browser tests check its numbers against those.

>>> import numpy as np
>>> from contextlens.encoders.qk import AttentionParts
>>> x = np.array([[[0.5, 0.5], [0.9, 0.1]]])
>>> parts = AttentionParts("bank loan", ("bank", "loan"), ((0,), (1,)), ("bank", "loan"), 1, "attention 1",
...                        x, x, 2 ** -0.5, np.tril(np.ones((2, 2), bool)),
...                        np.array([[[1.0, 0.0], [0.5, 0.5]]]))
>>> leaked_weight(parts.scores()[0], parts.allowed).round(4).tolist()  # bank, filled with 0, gives loan:
[0.4125, 0.0]
"""

from __future__ import annotations

import numpy as np

from ..context.attention import softmax
from ..encoders.qk import AttentionParts
from ..errors import InputError, check_int
from .base import View, short
from .packing import pack
from .pieces import parts_labels

__all__ = ["neuron_view", "mask_view", "leaked_weight"]


def leaked_weight(scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """``(rows,)``: the weight each row gives masked positions when masked scores are
    set to 0 instead of −∞ (with −∞ it is exactly 0)."""
    weights = softmax(np.where(allowed, scores, 0.0))  # (rows, cols)
    return (weights * ~np.asarray(allowed)).sum(axis=-1)


def _head(parts: AttentionParts, head: int) -> int:
    return check_int("head", head, low=0, high=parts.heads - 1)


def _common(parts: AttentionParts) -> dict:
    labels, titles = parts_labels(parts)  # pieces without their tokenizer's markers; tooltips
    return {
        "sentence": parts.text, "layer": parts.layer, "layer_name": parts.layer_name, "tokens": labels,
        "titles": titles,
        "token_words": [list(ws) for ws in parts.token_words], "words": list(parts.words),
        "token_ids": None if parts.token_ids is None else list(parts.token_ids),
        "special": list(parts.special),
        "padding": parts.padding, "heads": parts.heads, "d_head": parts.d_head, "scale": parts.scale,
        "allowed": pack(parts.allowed, "uint8"),
        "bias": None if parts.bias is None else pack(parts.bias),
    }


def neuron_view(parts: AttentionParts, *, head: int = 0, word: str | int | None = None, occurrence: int = 0,
                title: str = "") -> View:
    """For the first token of ``word`` (its text or word index; default the first word)
    and ``head``: each key's ``k``, ``q∘k``, ``q·k``, the scaled score, bias, mask and
    softmax, beside the encoder's own weight. The view lets one pick another token or head."""
    head = _head(parts, head)
    token = parts.token_of(0 if word is None else word, occurrence)
    data = {**_common(parts), "queries": pack(parts.queries), "keys": pack(parts.keys),
            "weights": pack(parts.weights), "initial": {"head": head, "token": token}}
    return View("neuron", data, title or f"neuron view: {short(parts.text)} ({parts.layer_name})")


def mask_view(parts: AttentionParts, *, head: int = 0, fill: str = "-inf", mask: str = "model",
              title: str = "") -> View:
    """The scaled scores of ``head`` under a mask (``model``: the encoder's own, ``causal``
    or ``none``) and the softmax with masked scores at −∞ (``fill="-inf"``) or 0
    (``fill="0"``, which leaks weight to them); both can be switched in the view."""
    head = _head(parts, head)
    if fill not in ("-inf", "0") or mask not in ("model", "causal", "none"):
        raise InputError(f"fill must be '-inf' or '0' and mask 'model', 'causal' or 'none', got {fill!r}, "
                         f"{mask!r}")
    scores = parts.scores()  # (heads, T, T)
    if not np.isfinite(scores).all():
        raise InputError("the scores are not all finite; check the vectors")
    data = {**_common(parts), "scores": pack(scores), "initial": {"head": head, "fill": fill, "mask": mask}}
    return View("mask", data, title or f"mask view: {short(parts.text)} ({parts.layer_name})")
