"""2-D and 3-D projections of vectors for plots: PCA (and t-SNE / UMAP for larger point sets).

>>> import numpy as np
>>> x = np.array([[0.0, 0, 0], [2, 0, 0], [0, 1, 0]])
>>> project(x).shape, project(x, dims=3).shape
((3, 2), (3, 3))
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, MissingDependencyError, check_choice

__all__ = ["project", "PROJECTIONS"]

PROJECTIONS = ("pca", "tsne", "umap")


def project(x: np.ndarray, method: str = "pca", *, seed: int = 0, dims: int = 2) -> np.ndarray:
    """Project ``(n, dim)`` points to ``(n, dims)`` (``dims`` 2 or 3).

    PCA is exact and deterministic (components signed so the largest coordinate of each is
    positive); t-SNE and UMAP are seeded. With fewer than ``dims`` dimensions of variation
    the missing axes are zero.
    """
    check_choice("projection", method, PROJECTIONS)
    if dims not in (2, 3):
        raise InputError(f"a projection has 2 or 3 dimensions, got {dims!r}")
    x = np.asarray(x, dtype=np.float64)  # (n, dim)
    if x.ndim != 2 or len(x) < 2:
        raise InputError(f"a projection needs at least 2 points as an (n, dim) array, got {x.shape}")
    if method == "pca":
        centred = x - x.mean(axis=0)
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        vt = vt[:dims]
        signs = np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(axis=1)])
        out = centred @ (vt * signs[:, None]).T
        if out.shape[1] < dims:
            out = np.hstack([out, np.zeros((len(x), dims - out.shape[1]))])
        return out
    if method == "tsne":
        from sklearn.manifold import TSNE

        perplexity = max(1.0, min(30.0, (len(x) - 1) / 3))
        return TSNE(dims, perplexity=perplexity, random_state=seed, init="pca").fit_transform(x)
    try:
        import umap
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise MissingDependencyError("umap-learn", "umap", "UMAP projection") from e
    n_neighbors = max(2, min(15, len(x) - 1))
    return umap.UMAP(n_components=dims, n_neighbors=n_neighbors, random_state=seed).fit_transform(x)
