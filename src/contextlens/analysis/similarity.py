"""Cosines between usages: one pair across layers, or all usages at one layer.

>>> import numpy as np
>>> cosine_matrix(np.array([[1.0, 0.0], [1.0, 1.0]])).round(4).tolist()
[[1.0, 0.7071], [0.7071, 1.0]]
"""

from __future__ import annotations

import numpy as np

from ..errors import DimensionError, ZeroVectorError
from ..vectors import cosine

__all__ = ["cosine_matrix", "cosine_by_layer"]


def cosine_matrix(x: np.ndarray) -> np.ndarray:
    """``(n, n)`` cosines between the rows of ``(n, dim)`` ``x``; zero rows are an error."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise DimensionError(f"cosine_matrix needs an (n, dim) array, got {x.shape}")
    norms = np.linalg.norm(x, axis=1)
    if np.any(norms == 0):
        raise ZeroVectorError(f"rows {np.flatnonzero(norms == 0).tolist()} are zero vectors")
    unit = x / norms[:, None]
    return np.clip(unit @ unit.T, -1.0, 1.0)


def cosine_by_layer(a: np.ndarray, b: np.ndarray) -> list[float]:
    """Cosine between two usages at every layer: ``a``, ``b`` are ``(layers, dim)``.

    >>> cosine_by_layer(np.array([[1.0, 0], [1, 0]]), np.array([[1.0, 0], [0, 1]]))
    [1.0, 0.0]
    """
    if a.shape != b.shape:
        raise DimensionError(f"the two usages have shapes {a.shape} and {b.shape}; use one encoder")
    return [cosine(x, y) for x, y in zip(a, b, strict=True)]
