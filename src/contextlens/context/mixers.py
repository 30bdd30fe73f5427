"""Neighbour averaging: the simplest training-free contextualiser.

``f(w_i) = α·e(w_i) + (1 − α)·mean{e(w_j) : j ∈ C_i}`` with the context window
``C_i = {j ≠ i : |i − j| ≤ window}`` (``window=None``: the whole sentence). It is attention
whose weights are uniform over ``C_i`` (see :func:`neighbour_weights`), so it returns the
same ``(out, weights)`` pair as :func:`~contextlens.context.attention.scaled_dot_product_attention`.

>>> x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (words, dim)
>>> out, w = neighbour_average(x, alpha=0.5, window=1)
>>> w
array([[0.5 , 0.5 , 0.  ],
       [0.25, 0.5 , 0.25],
       [0.  , 0.5 , 0.5 ]])
>>> out  # out = w @ x
array([[0.5 , 0.5 ],
       [0.5 , 0.75],
       [0.5 , 1.  ]])
"""

from __future__ import annotations

import numpy as np

from ..errors import DimensionError, InputError, check_float
from .attention import check_window, exclude_self_mask, window_mask

__all__ = ["check_alpha", "neighbour_weights", "neighbour_average"]


def check_alpha(alpha: float) -> float:
    """``alpha`` as a float if it lies in [0, 1], else a clear error.

    >>> check_alpha(0.25)
    0.25
    >>> check_alpha(1.5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: alpha must be a finite number from 0 to 1, got 1.5; the weight a word keeps ...
    """  # noqa: E501 (a doctest's expected output, printed whole)
    return check_float("alpha", alpha, low=0.0, high=1.0, hint="the weight a word keeps of its own vector")


def neighbour_weights(n: int, alpha: float = 0.0, window: int | None = None) -> np.ndarray:
    """``(n, n)`` mixing weights: ``α`` on the diagonal, ``(1 − α)/|C_i|`` on ``C_i``.

    Every row sums to 1. A word with no context (a one-word sentence, or ``window=0``)
    is an error unless ``alpha=1``: an average over nothing is undefined.

    >>> neighbour_weights(3)
    array([[0. , 0.5, 0.5],
           [0.5, 0. , 0.5],
           [0.5, 0.5, 0. ]])
    >>> neighbour_weights(1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: word 0 has no context words (1 word(s), window=None), ...
    """
    alpha = check_alpha(alpha)
    window = check_window(window)
    context = exclude_self_mask(n)  # (n, n)
    if window is not None:
        context &= window_mask(n, window)
    sizes = context.sum(axis=1)  # (n,) |C_i|
    if alpha < 1.0 and (sizes == 0).any():
        i = int(np.argmax(sizes == 0))
        raise InputError(
            f"word {i} has no context words ({n} word(s), window={window}), so with "
            f"alpha={alpha} < 1 its mixed vector would be an average over nothing; use a "
            "longer sentence, a larger window, or alpha=1"
        )
    weights = context * ((1.0 - alpha) / np.maximum(sizes, 1))[:, None]  # (n, n)
    weights[np.diag_indices(n)] = alpha
    return weights


def neighbour_average(x, alpha: float = 0.0, window: int | None = None):
    """Mix each row of ``x (n, dim)`` with the mean of its neighbours.

    Returns ``out (n, dim)`` and ``weights (n, n)`` with ``out = weights @ x``; row ``i`` of
    ``weights`` is ``α`` at ``i`` and ``(1 − α)/|C_i|`` at each context word.

    >>> out, w = neighbour_average(np.array([[2.0], [4.0], [9.0]]), window=1)
    >>> out.ravel()  # word 1 averages words 0 and 2; the ends copy their one neighbour
    array([4. , 5.5, 4. ])
    """
    x = np.asarray(x)
    if x.ndim != 2 or not np.issubdtype(x.dtype, np.number) or x.dtype == bool:
        raise DimensionError(f"x must be a numeric (words, dim) array, got shape {x.shape}")
    weights = neighbour_weights(x.shape[0], alpha, window)
    return weights @ x, weights
