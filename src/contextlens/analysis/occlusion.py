"""Is attention an explanation? Occlusion measured beside attention.

For a target word, each other word is left out of the sentence in turn (:func:`occlude`)
and the target's vector is encoded again: how far it moved at each layer (cosine distance,
``1 − cos``) is that word's *occlusion effect*. Beside it stand the attention the target
gave that word at the same layer (mean over heads) and the attention rollout (Abnar &
Zuidema 2020, :func:`~contextlens.analysis.attribution.attention_rollout`), and per layer
the Spearman correlation between effect and attention across the words. A high rank
correlation says attention ranks the words as their removal does; a low one that it does
not (Jain & Wallace 2019 found it low for RNN attention).

>>> occlude("We sat on the bank.", 3)  # "the" left out
('We sat on bank.', 4)
>>> occlude("We sat on the bank.", 4)  # "bank": the space before it goes with it
('We sat on the.', 5)
"""

from __future__ import annotations

import logging
import math
import warnings
from typing import Any

import numpy as np
from scipy import stats

from ..bounds import check_encoding
from ..encoders.base import Encoder
from ..errors import InputError
from ..text import tokenize
from .attribution import attention_rollout

__all__ = ["occlude", "occlusion_vs_attention", "cosine_distance"]

log = logging.getLogger(__name__)


def occlude(text: str, index: int) -> tuple[str, int]:
    """``text`` without word ``index`` (of :func:`~contextlens.text.tokenize`) and the
    white space that separated it (the run after it, else the run before it); also how many
    characters every later word moved left."""
    words = tokenize(text)
    if not 0 <= index < len(words):
        raise InputError(f"word index {index} is out of range 0..{len(words) - 1}")
    start, end = words[index].start, words[index].end
    if end < len(text) and text[end].isspace():
        while end < len(text) and text[end].isspace():
            end += 1
    else:
        while start > 0 and text[start - 1].isspace():
            start -= 1
    return text[:start] + text[end:], end - start


def cosine_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``1 − cos`` row by row of two ``(n, dim)`` arrays (0 = the same direction).

    >>> cosine_distance(np.array([[1.0, 0.0], [1.0, 1.0]]),
    ...                 np.array([[2.0, 0.0], [-1.0, -1.0]])).round(12).tolist()
    [0.0, 2.0]
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    cos = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    return 1.0 - np.clip(cos, -1.0, 1.0)


def _spearman(x, y) -> float | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a constant column: undefined
        value = float(stats.spearmanr(x, y)[0]) if len(x) > 1 else math.nan
    return None if math.isnan(value) else value


def occlusion_vs_attention(encoder: Encoder, text: str, word: str, *,
                           occurrence: int | None = None) -> dict[str, Any]:
    """Occlusion effects of every other word on ``word`` in ``text``, beside attention.

    Returns ``{sentence, word, index, others: [{word, position}], layers: [{layer,
    layer_name, occlusion, attention, rollout, spearman_attention, spearman_rollout}],
    encoder}``: one entry per contextual layer, lists in the order of ``others``.
    ``occlusion`` is the target's cosine distance to itself with that word left out;
    ``attention`` the weight the target gave it (mean over heads); ``rollout`` its share
    by attention rollout. Correlations that are undefined (fewer than 2 words, constant
    values) are None. For a causal encoder (``encoder.causal``: a word is computed from the
    words before it only) a later word's effect and attention are 0 by construction, not
    evidence: the correlations are over the earlier words (``correlated``: their positions
    in ``others``), and ``causal`` is True.
    """
    n = len(tokenize(text))
    check_encoding(encoder, [text] * n, what=f"occlusion of a {n:,}-word text (encoded once per word)",
                   todo="give a shorter text: occlusion encodes it once per word, so its cost grows as the "
                        "square of the words")
    full = encoder.encode([text])[0]
    full.attention_weights()  # the clear error of an encoder with none, before encoding once per word
    i = full.find(word, occurrence=occurrence)
    target = full.words[i]
    words = tokenize(text)
    position = next(p for p, w in enumerate(words) if (w.start, w.end) == (target.start, target.end))
    others = [j for j, w in enumerate(full.words) if j != i]
    if not others:
        raise InputError(f"{text!r} has no other word to leave out; give a sentence")
    texts, spans = [], []
    for j in others:
        p = next(q for q, w in enumerate(words)
                 if (w.start, w.end) == (full.words[j].start, full.words[j].end))
        occluded, shift = occlude(text, p)
        moved = shift if p < position else 0
        texts.append(occluded)
        spans.append([(target.start - moved, target.end - moved)])
    encodings = encoder.encode(texts, targets=spans)
    missing = [t for t, e in zip(texts, encodings) if len(e.words) != 1]
    if missing:
        raise InputError(f"{target.text!r} got no vector in {missing[0]!r}; choose another word")
    moved_vectors = np.stack([e.layers[:, 0] for e in encodings], 1)  # (layers + 1, others, dim)
    n = len(full.words)
    roll = attention_rollout(full.attention, full.special_attention)[:, i, :n]  # (layers, words)
    mean = full.attention[:, :, i, :].mean(axis=1)  # (layers, words)
    causal = bool(encoder.causal)
    scored = [k for k, j in enumerate(others) if not causal or j < i]  # the words that can move the target
    layers = []
    for pos in range(1, full.layers.shape[0]):
        effect = cosine_distance(np.repeat(full.layers[pos, i][None], len(others), 0), moved_vectors[pos])
        att, rol = mean[pos - 1, others], roll[pos - 1, others]
        layers.append({"layer": full.layer_ids[pos], "layer_name": full.layer_names[pos],
                       "occlusion": effect.tolist(), "attention": att.tolist(), "rollout": rol.tolist(),
                       "spearman_attention": _spearman(effect[scored], att[scored]),
                       "spearman_rollout": _spearman(effect[scored], rol[scored])})
    log.info("occlusion vs attention for %r: spearman %s", target.text,
             [r["spearman_attention"] for r in layers])
    return {"sentence": text, "word": target.text, "index": i,
            "others": [{"word": full.words[j].text, "position": j} for j in others],
            "layers": layers, "causal": causal, "correlated": scored, "encoder": full.describe()}
