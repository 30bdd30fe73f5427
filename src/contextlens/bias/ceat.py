"""CEAT (Guo & Caliskan, AIES 2021): WEAT over many sampled contexts of each word, combined.

Each of ``samples`` draws picks, for every word of X, Y, A and B, one of its contextual
vectors at random (uniformly, independently per draw, as the authors' ``ceat_meta``), and
computes that draw's WEAT effect size ``ES_i`` and in-sample variance ``V_i`` (the sample
variance of s(w, A, B) over X ∪ Y). :func:`~contextlens.bias.meta.random_effects` combines
them (DerSimonian–Laird): the combined effect size, its 95 % interval, one-sided p, and the
heterogeneity (Q, τ², I²). Guo & Caliskan draw 10,000 samples.

Two properties of that recipe to keep in mind when reading the numbers: V_i is the
variance of the association scores s, not the sampling variance of ES_i, so τ² (and
whether it is 0) depends on the scale of the cosines as well as on how much the ES_i
spread; and the draws reuse the same few words, so the interval narrows as
1/sqrt(samples): it measures how far the contexts drawn move the effect size, not how it
would change with other words.

A word with no context is missing, as a word a static table lacks. Where the contexts come
from is one function, :func:`contexts_from_store` (the usage index); everything else works
on a plain ``{word: (contexts, dim) array}``.

With one context per word every draw is the same, so the spread is nil (τ² = 0) and the
combined effect size is the WEAT effect size of those vectors:

>>> ctx = {"x1": [[1.0, 0.0]], "x2": [[0.6, 0.8]], "y1": [[0.0, 1.0]], "y2": [[0.8, 0.6]],
...        "a": [[1.0, 0.0]], "b": [[0.0, 1.0]]}
>>> sets = WordSets("toy", X=("x1", "x2"), Y=("y1", "y2"), A=("a",), B=("b",))
>>> r = ceat(ctx, sets, model="toy", layer=6, samples=20)
>>> round(r.effect_size, 4), r.tau2, r.samples, r.layer
(0.9608, 0.0, 20, 6)
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

import numpy as np

from .. import bounds
from ..errors import InputError
from .meta import random_effects
from .result import BiasResult
from .sets import SET_KEYS, WordSets
from .stats import _TIE_TOLERANCE, _unit_rows
from .weat import MIN_WORDS

__all__ = ["DEFAULT_SAMPLES", "default_samples", "ceat_samples", "ceat", "ceat_by_layer",
           "contexts_from_store"]

log = logging.getLogger(__name__)
DEFAULT_SAMPLES = 10_000  # Guo & Caliskan's N


def _split(contexts: Mapping[str, np.ndarray], sets: WordSets, min_words: int):
    """``(found, missing)`` WordSets: the words with at least one context, and the rest."""
    found, missing = [], []
    for key in SET_KEYS:
        words = getattr(sets, key)
        have = tuple(w for w in words if w in contexts and len(contexts[w]))
        found.append(have)
        missing.append(tuple(w for w in words if w not in have))
        least = min_words if key in ("X", "Y") else 1
        if len(have) < least:
            raise InputError(f"test {sets.name!r}: set {key} needs at least {least} word(s) with contexts, "
                             f"but has {len(have)} (no contexts: {', '.join(missing[-1]) or 'none'}); "
                             "index these words, or a larger corpus")
    return WordSets(sets.name, *found), WordSets(sets.name, *missing)


def default_samples(n_words: int, dim: int) -> int:
    """The draws CEAT makes when none are asked for: Guo & Caliskan's 10,000, or fewer when
    that many draws of ``n_words`` vectors of ``dim`` numbers would pass
    :data:`~contextlens.bounds.MAX_CEAT_CELLS` (never fewer than
    :data:`~contextlens.bounds.MIN_CEAT_SAMPLES`; the result states how many).

    >>> default_samples(32, 768), default_samples(40_000, 768)
    (10000, 1000)
    """
    return max(bounds.MIN_CEAT_SAMPLES, min(DEFAULT_SAMPLES, bounds.MAX_CEAT_CELLS // max(n_words * dim, 1)))


def ceat_samples(contexts: Mapping[str, np.ndarray], sets: WordSets, *, samples: int | None = DEFAULT_SAMPLES,
                 seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(effects, variances)``, each ``(samples,)``: one WEAT per draw of one context per word.

    Every word of ``sets`` must have at least one context (see :func:`ceat` for missing ones).
    The draws are those of one ``rng.integers(contexts of the word)`` per word (X, Y, A, B in
    order) per sample; they are drawn and their WEATs computed in blocks, as batched
    products over the drawn unit vectors (10,000 draws of 8+8 words by 8+8 in a second or
    two, where one draw at a time took 3.5 ms each), each block holding at most
    :data:`~contextlens.bounds.CEAT_BLOCK_CELLS` numbers of drawn vectors. A word's mean
    cosine to A is its dot product with the mean of A's unit vectors, so no (words, A)
    matrix is formed. ``samples=None``: :func:`default_samples`.
    """
    stacks = [_unit_rows(np.asarray(contexts[w], dtype=np.float64), f"the contexts of {w!r}")
              for key in SET_KEYS for w in getattr(sets, key)]
    counts = np.array([len(c) for c in stacks])  # (words,)
    dim = stacks[0].shape[1]
    if samples is None:
        samples = default_samples(len(stacks), dim)
    if samples < 2:
        raise InputError(f"samples must be at least 2 (Guo & Caliskan draw 10,000), got {samples}")
    rng = np.random.default_rng(seed)
    offsets = np.cumsum([0, *counts[:-1]])  # where each word's contexts start in `units`
    units = np.concatenate(stacks)
    parts = np.cumsum([0, *(len(getattr(sets, key)) for key in SET_KEYS)])  # X, Y, A, B columns of a draw
    n_x, n_xy = parts[1], parts[2]
    effects, variances = np.empty(samples), np.empty(samples)
    block = max(1, bounds.CEAT_BLOCK_CELLS // (len(stacks) * dim))  # draws per block
    for start in range(0, samples, block):
        # (draws, words)
        rows = rng.integers(0, counts, size=(min(block, samples - start), len(counts))) + offsets
        drawn = units[rows]  # (draws, words, dim)
        direction = drawn[:, parts[2] : parts[3]].mean(1) - drawn[:, parts[3] :].mean(1)  # (draws, dim)
        scores = np.einsum("nwd,nd->nw", drawn[:, :n_xy], direction)  # (draws, |X| + |Y|): s(w, A, B)
        std = scores.std(axis=1, ddof=1)
        if np.any(std <= _TIE_TOLERANCE * np.abs(scores).max(axis=1, initial=1.0)):
            raise InputError("every target word has the same association score in a draw of contexts; the "
                             "effect size is undefined")
        effects[start : start + len(rows)] = (scores[:, :n_x].mean(1) - scores[:, n_x:].mean(1)) / std
        variances[start : start + len(rows)] = std**2
    return effects, variances


def ceat(contexts: Mapping[str, np.ndarray], sets: WordSets, *, model: str, layer: int | None,
         samples: int | None = None, seed: int = 0, min_words: int = MIN_WORDS) -> BiasResult:
    """CEAT of ``sets`` over ``{word: (contexts, dim) vectors}`` of one model layer
    (``samples=None``: :func:`default_samples`, stated in the result)."""
    found, missing = _split(contexts, sets, min_words)
    if missing.sizes != (0, 0, 0, 0):
        log.info("%s: words without contexts: %s", sets.name, missing.as_dict())
    effects, variances = ceat_samples(contexts, found, samples=samples, seed=seed)
    r = random_effects(effects, variances)
    return BiasResult(sets.name, "ceat", model, layer, r.effect, r.p_value, r.ci, *found.sizes, missing,
                      samples=len(effects), q=r.q, tau2=r.tau2, i2=r.i2)


def ceat_by_layer(contexts: Mapping[int, Mapping[str, np.ndarray]], sets: WordSets, *, model: str,
                  samples: int | None = None, seed: int = 0, min_words: int = MIN_WORDS) -> list[BiasResult]:
    """:func:`ceat` at each layer of ``{layer: {word: (contexts, dim)}}``, in layer order,
    every layer with the same seed (so the same draws of context indices where the words
    have the same contexts at every layer, as from one corpus)."""
    return [ceat(contexts[layer], sets, model=model, layer=layer, samples=samples, seed=seed,
                 min_words=min_words)
            for layer in sorted(contexts)]


def contexts_from_store(store, words, layer: int, *, limit: int | None = None) -> dict[str, np.ndarray]:
    """``{word: (usages, dim)}`` from a usage index (:class:`contextlens.index.store.UsageStore`):
    the one place CEAT touches the store; a word with no usage is left out."""
    out = {}
    for w in dict.fromkeys(words):
        _, vectors = store.vectors_of(w, layer, limit=limit)  # (usages, dim)
        if len(vectors):
            out[w] = vectors
    return out
