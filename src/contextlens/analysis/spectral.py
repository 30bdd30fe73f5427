"""Self-tuning spectral clustering of unit vectors, with the number of clusters read from the eigengap.

The sense probe's default clustering (:class:`~contextlens.analysis.senses.SenseClusterer`),
written as small pure functions. For unit rows ``z`` (``n × dim``):

1. **Graph** (:func:`knn_cosine`, :func:`self_tuning_affinity`): each point's ``neighbours``
   nearest points by cosine distance ``d = 1 − z_i · z_j``, weighted with Zelnik-Manor &
   Perona's local scaling (*Self-tuning spectral clustering*, NIPS 2004):
   ``A_ij = exp(−d_ij² / (σ_i σ_j))``, ``σ_i`` = the distance from ``i`` to its
   ``scale_neighbour``-th nearest point (7 in the paper); an edge is kept when either end
   has the other among its nearest (``A = max(A, Aᵀ)``). The local scale lets a small,
   tight group of points (a rare sense) be as connected inside as a large one.
2. **Spectrum** (:func:`laplacian_spectrum`): the smallest eigenvalues and eigenvectors of
   the normalised Laplacian ``L = I − D^-½ A D^-½`` (dense below :data:`DENSE_MAX` points,
   else ARPACK on the sparse graph).
3. **k** (:func:`eigengap_k`): the k in ``k_min..k_max`` with the largest gap
   ``λ_{k+1} − λ_k`` (von Luxburg, *A tutorial on spectral clustering*, 2007, §8.3): k groups
   with few edges between them give k eigenvalues near 0 and then a jump, whatever the
   groups' sizes (silhouette, by contrast, rewards splits into large, compact halves).
4. **Labels** (:func:`spectral_labels`): rows of the first k eigenvectors scaled to unit
   length, then k-means (Ng, Jordan & Weiss, NIPS 2002), seeded.

Memory and time grow with ``n × neighbours`` except the nearest-neighbour search, which
reads the ``n × n`` cosines in blocks of rows, at most :data:`BLOCK_FLOATS` floats at once.

>>> z = np.array([[1.0, 0.0], [0.99, 0.14], [0.98, 0.2], [0.0, 1.0], [0.14, 0.99], [0.2, 0.98]])
>>> z = z / np.linalg.norm(z, axis=1, keepdims=True)
>>> idx, dist = knn_cosine(z, 2)
>>> idx.tolist()
[[1, 2], [2, 0], [1, 0], [4, 5], [5, 3], [4, 3]]
>>> values, vectors = laplacian_spectrum(self_tuning_affinity(idx, dist, 2), 4)
>>> k, gaps = eigengap_k(values, k_max=3)
>>> k, spectral_labels(vectors, k).tolist()
(2, [1, 1, 1, 0, 0, 0])
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import sparse
from scipy.linalg import eigh
from scipy.sparse.linalg import eigsh

__all__ = ["knn_cosine", "self_tuning_affinity", "laplacian_spectrum", "eigengap_k", "spectral_labels",
           "BLOCK_FLOATS", "DENSE_MAX"]

BLOCK_FLOATS = 2**22  # cosines knn_cosine holds at once (32 MiB)
DENSE_MAX = 500  # up to this many points the Laplacian's eigenvalues come from a dense solver
TINY = 1e-12  # a local scale of 0 (duplicated points) is read as this


def knn_cosine(z: np.ndarray, neighbours: int) -> tuple[np.ndarray, np.ndarray]:
    """``(indices, distances)``, both ``(n, neighbours)``: each unit row's nearest other rows
    by cosine distance, nearest first (ties: lower index first).

    >>> knn_cosine(np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]]), 1)[0].tolist()
    [[2], [2], [1]]
    """
    n = len(z)
    neighbours = min(int(neighbours), n - 1)
    idx = np.empty((n, neighbours), dtype=np.int64)
    dist = np.empty((n, neighbours))
    block = max(1, BLOCK_FLOATS // n)
    for lo in range(0, n, block):
        d = 1.0 - z[lo: lo + block] @ z.T  # (block, n)
        rows = np.arange(len(d))
        d[rows, lo + rows] = np.inf  # not its own neighbour
        near = np.argpartition(d, neighbours - 1, axis=1)[:, :neighbours] if neighbours < n - 1 else \
            np.argsort(d, axis=1)[:, :neighbours]
        near_d = np.take_along_axis(d, near, axis=1)
        order = np.lexsort((near, near_d), axis=1)  # by distance, then index
        idx[lo: lo + len(d)] = np.take_along_axis(near, order, axis=1)
        dist[lo: lo + len(d)] = np.clip(np.take_along_axis(near_d, order, axis=1), 0.0, 2.0)
    return idx, dist


def self_tuning_affinity(idx: np.ndarray, dist: np.ndarray, scale_neighbour: int = 7) -> sparse.csr_matrix:
    """The symmetric ``(n, n)`` sparse affinity ``exp(−d_ij² / (σ_i σ_j))`` over the
    nearest-neighbour graph of :func:`knn_cosine` (see the module's docstring).

    >>> a = self_tuning_affinity(np.array([[1], [0], [1]]), np.array([[0.5], [0.5], [1.0]]), 1)
    >>> a.toarray().round(3).tolist()
    [[0.0, 0.368, 0.0], [0.368, 0.0, 0.135], [0.0, 0.135, 0.0]]
    """
    n, m = idx.shape
    sigma = np.maximum(dist[:, min(scale_neighbour, m) - 1], TINY)  # (n,)
    rows = np.repeat(np.arange(n), m)
    cols = idx.ravel()
    weights = np.exp(-dist.ravel() ** 2 / (sigma[rows] * sigma[cols]))
    a = sparse.csr_matrix((weights, (rows, cols)), shape=(n, n))
    return a.maximum(a.T).tocsr()


def laplacian_spectrum(affinity: sparse.spmatrix, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` smallest eigenvalues ``(count,)`` (ascending) of the normalised Laplacian of
    ``affinity`` and their eigenvectors ``(n, count)``. A point with no edge has degree 1."""
    n = affinity.shape[0]
    degree = np.asarray(affinity.sum(axis=1)).ravel()
    scale = 1.0 / np.sqrt(np.where(degree > 0, degree, 1.0))
    m = sparse.diags(scale) @ affinity @ sparse.diags(scale)  # D^-1/2 A D^-1/2, (n, n)
    count = min(count, n)
    if n <= DENSE_MAX:
        values, vectors = eigh(np.eye(n) - m.toarray(), subset_by_index=[0, count - 1])
    else:
        v0 = np.random.default_rng(seed).uniform(0.5, 1.5, n)
        top, vectors = eigsh(m, k=count, which="LA", v0=v0)
        order = np.argsort(-top, kind="stable")
        values, vectors = 1.0 - top[order], vectors[:, order]
    return np.clip(values, 0.0, 2.0), vectors


def eigengap_k(values: np.ndarray, k_min: int = 2, k_max: int = 8) -> tuple[int, dict[int, float]]:
    """``(k, {k: gap})``: the k in ``k_min..k_max`` whose gap ``values[k] − values[k−1]`` (the
    (k+1)-th minus the k-th smallest eigenvalue) is largest, ties to the smaller k.

    >>> eigengap_k(np.array([0.0, 0.01, 0.02, 0.6, 0.7]), k_max=4)
    (3, {2: 0.01, 3: 0.58, 4: 0.1})
    """
    k_max = min(k_max, len(values) - 1)
    gaps = {k: round(float(values[k] - values[k - 1]), 6) for k in range(k_min, k_max + 1)}
    return max(gaps, key=lambda k: (gaps[k], -k)), gaps


def spectral_labels(vectors: np.ndarray, k: int, weights: np.ndarray | None = None,
                    seed: int = 0) -> np.ndarray:
    """``(n,)`` cluster ids: k-means (10 seeded starts; rows weighted by ``weights``) on the
    rows of the first ``k`` eigenvectors scaled to unit length (rows of zeros stay zero)."""
    from sklearn.cluster import KMeans

    emb = vectors[:, :k]
    norms = np.linalg.norm(emb, axis=1, keepdims=True)
    emb = emb / np.where(norms > 0, norms, 1.0)
    with warnings.catch_warnings():  # fewer distinct rows than k: fewer clusters, reported by the caller
        warnings.simplefilter("ignore")
        return KMeans(n_clusters=k, n_init=10, random_state=seed).fit_predict(emb, sample_weight=weights)
