"""Positive PMI with context-distribution smoothing, and truncated SVD of it.

Following Levy, Goldberg & Dagan (2015), "Improving Distributional Similarity with Lessons
Learned from Word Embeddings":

- ``PPMI(w, c) = max(log(P(w, c) / (P(w) · P_α(c))) − log k, 0)`` where
  ``P_α(c) = #(c)^α / Σ_c' #(c')^α`` smooths the context distribution (``α = 0.75``) and
  ``k`` (``shift``) is the shift of SGNS's ``k`` negative samples (``k = 1``: no shift);
- ``W = U_d · Σ_d^p``: the ``d`` leading left singular vectors, weighted by the singular
  values to the power ``p`` (``p = 1``: classic SVD; ``p = 0.5``: symmetric; ``p = 0``: U only).

Worked example (a 2 × 2 count matrix, computed by hand): row sums 2, 6; smoothed context
probabilities ``P_α = (2^.75, 6^.75) / (2^.75 + 6^.75) = (0.3049, 0.6951)``;
``PMI(0, 1) = log((2/8) / ((2/8) · 0.6951)) = 0.3637``,
``PMI(1, 0) = log((2/8) / ((6/8) · 0.3049)) = 0.0891``,
``PMI(1, 1) = log((4/8) / ((6/8) · 0.6951)) = −0.0417``, clipped to 0:

>>> import numpy as np
>>> ppmi(np.array([[0, 2], [2, 4]])).toarray().round(4)
array([[0.    , 0.3637],
       [0.0891, 0.    ]])
>>> ppmi(np.array([[0, 2], [2, 4]]), alpha=1.0).toarray().round(4)  # log(4/3) both ways
array([[0.    , 0.2877],
       [0.2877, 0.    ]])
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp

from ..errors import DimensionError, EmptyInputError, InputError, check_choice, check_float, check_int

__all__ = ["ppmi", "svd_embeddings", "SVD_SOLVERS"]

log = logging.getLogger(__name__)

SVD_SOLVERS = ("auto", "dense", "randomized", "arpack")
_DENSE_CELLS = 4_000_000  # "auto" uses an exact dense SVD up to this many matrix cells


def _as_csr(matrix) -> sp.csr_matrix:
    counts = getattr(matrix, "counts", matrix)  # a Cooccurrence, or a matrix
    m = sp.csr_matrix(counts, dtype=np.float64)
    if m.ndim != 2:
        raise DimensionError(f"need a 2-D (words, contexts) matrix, got shape {m.shape}")
    return m


def ppmi(counts, alpha: float = 0.75, shift: float = 1.0) -> sp.csr_matrix:
    """Positive (shifted) PMI of a ``(words, contexts)`` count matrix, as float64 CSR.

    ``counts`` may be dense, sparse, or a :class:`~contextlens.static.cooccurrence.Cooccurrence`.
    ``alpha`` smooths the context distribution (1.0: none); ``shift`` is ``k`` in
    ``max(PMI − log k, 0)``. Only nonzero counts can have a nonzero PPMI, so the result is
    at most as dense as ``counts``.
    """
    check_float("alpha", alpha, low=0.01, high=10.0,
                hint="the context smoothing exponent: 0.75 is usual, 1 is none")
    check_float("shift", shift, low=1.0, high=1e6, hint="the k of k negative samples; 1 = no shift")
    m = _as_csr(counts)
    m.sum_duplicates()
    m.eliminate_zeros()
    if m.nnz == 0:
        raise EmptyInputError("the count matrix is all zeros; there is nothing to weigh")
    if m.data.min() < 0:
        raise InputError("counts must not be negative")
    row_sum = np.asarray(m.sum(axis=1)).ravel()  # (words,)
    col = np.asarray(m.sum(axis=0)).ravel() ** alpha  # (contexts,)
    p_context = col / col.sum()
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    # P(w,c) / (P(w) P_a(c)) = (x/N) / ((row/N) p_a(c)) = x / (row * p_a(c))
    pmi = np.log(m.data) - np.log(row_sum[rows]) - np.log(p_context[m.indices]) - np.log(shift)
    out = sp.csr_matrix((np.maximum(pmi, 0.0), m.indices.copy(), m.indptr.copy()), shape=m.shape)
    out.eliminate_zeros()
    return out


def svd_embeddings(matrix, dim: int, p: float = 0.5, seed: int = 0,
                   solver: str = "auto") -> np.ndarray:
    """``(rows, dim)`` float32 embeddings ``U_d · Σ_d^p`` from a truncated SVD of ``matrix``.

    ``solver``: ``"dense"`` (exact LAPACK SVD), ``"randomized"`` (Halko et al., through
    scikit-learn), ``"arpack"`` (scipy's ``svds``), or ``"auto"`` (dense for small
    matrices, randomized otherwise). Deterministic: seeded, and each singular vector's sign
    is fixed so that its largest-magnitude entry is positive.

    >>> m = np.diag([3.0, 2.0, 1.0])
    >>> svd_embeddings(m, 2, p=1.0).round(3).tolist()
    [[3.0, 0.0], [0.0, 2.0], [0.0, 0.0]]
    >>> svd_embeddings(m, 2, p=0.0).round(3).tolist()
    [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    """
    from sklearn.utils.extmath import randomized_svd, svd_flip

    check_choice("SVD solver", solver, SVD_SOLVERS)
    m = _as_csr(matrix)
    limit = min(m.shape)
    most = limit if solver != "arpack" else limit - 1
    check_int("dim", dim, low=1, high=max(most, 1),
              hint=f"a {m.shape[0]}x{m.shape[1]} matrix has at most {most} singular vectors to keep")
    check_float("p", p, low=0.0, high=1.0, hint="the eigenvalue weight: W = U·Σ^p")
    if solver == "auto":
        solver = "dense" if m.shape[0] * m.shape[1] <= _DENSE_CELLS or dim == limit else "randomized"
    if solver == "dense":
        u, s, vt = np.linalg.svd(m.toarray(), full_matrices=False)
        u, s, vt = u[:, :dim], s[:dim], vt[:dim]
    elif solver == "randomized":
        # float32 halves the memory traffic of the sparse products, which dominate the time
        u, s, vt = randomized_svd(m.astype(np.float32), dim, random_state=seed, flip_sign=False)
    else:
        from scipy.sparse.linalg import svds

        v0 = np.random.default_rng(seed).uniform(-1, 1, limit)
        u, s, vt = svds(m, k=dim, v0=v0, random_state=seed)
        u, s, vt = u[:, ::-1], s[::-1], vt[::-1]
    u, vt = svd_flip(u, vt, u_based_decision=True)
    log.info("SVD (%s) of a %dx%d matrix to %d dims, top singular value %.4g",
             solver, m.shape[0], m.shape[1], dim, s[0] if len(s) else 0.0)
    return (u * s**p).astype(np.float32)
