"""Adding up word pairs into a sparse symmetric matrix, vectorised (for co-occurrence counts).

A segment of a word-id stream (``-2``: line break, ``-1``: a token outside the
vocabulary) is paired with itself at offsets ``1..window``; each pair ``(a, b)`` counts
once in the lower triangle ``L`` at ``[max(a, b), min(a, b)]``, and the result is
``L + L.T`` (so a word repeated within the window counts twice on the diagonal).

>>> counter = PairCounter(n_words=3, window=2, harmonic=False, int_dtype=np.int32)
>>> counter.add_segment(np.array([0, 1, 0, -2, 2, -1, 1], dtype=np.int32))
>>> counter.result().toarray().tolist()  # the -1 keeps 2 and 1 two apart: counted
[[2, 2, 0], [2, 0, 1], [0, 1, 0]]
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["PairCounter", "SEP"]

SEP = -2  # a line break in the id stream
_DENSE_CELLS = 1 << 21  # pairs of the k most frequent words, k(k+1)/2 <= this, go to a dense block


def _key_dtype(limit: int):
    return np.uint32 if limit < 2**32 else np.uint64


class PairCounter:
    """Adds up word pairs as a lower triangle ``L`` (row ``hi`` >= column ``lo``), so that
    the counts are ``L + L.T``. Pairs of the ``k`` most frequent words go to a dense
    triangular block (``np.bincount``; cell ``hi * (hi + 1) / 2 + lo``), the rest to sorted
    integer keys ``hi * V + lo`` turned straight into CSR, merged like a log-structured
    store."""

    def __init__(self, n_words: int, window: int, harmonic: bool, int_dtype):
        self.v, self.window, self.harmonic = n_words, window, harmonic
        k = int((np.sqrt(8 * _DENSE_CELLS + 1) - 1) / 2)  # k * (k + 1) / 2 <= _DENSE_CELLS
        self.k = min(n_words, k)
        self.dtype = np.float64 if harmonic else int_dtype
        self.dense = np.zeros(self.k * (self.k + 1) // 2, self.dtype)
        self.parts: list[sp.csr_matrix] = []

    def add_segment(self, ids: np.ndarray) -> None:
        v, k, window = self.v, self.k, self.window
        cells = len(self.dense)
        sid = np.cumsum(ids == SEP, dtype=np.int32)  # (n,) line number within the segment
        valid = ids >= 0
        dense_keys, dense_w, rest_keys = [], [], []
        key_dtype = _key_dtype(v * v * (window if self.harmonic else 1))
        for d in range(1, window + 1):
            m = valid[:-d] & valid[d:] & (sid[:-d] == sid[d:])
            a, b = ids[:-d][m], ids[d:][m]
            lo, hi = np.minimum(a, b), np.maximum(a, b)
            top = np.minimum(hi, k)
            dense_keys.append(((top * (top + 1)) >> 1) + lo)  # pairs with hi >= k land past `cells`
            if self.harmonic:
                dense_w.append(np.full(len(lo), 1.0 / d))
            rest = hi >= k
            keys = hi[rest].astype(key_dtype) * key_dtype(v) + lo[rest].astype(key_dtype)
            if self.harmonic:
                keys = keys * key_dtype(window) + key_dtype(d - 1)
            rest_keys.append(keys)
        weights = np.concatenate(dense_w) if self.harmonic else None
        self.dense += np.bincount(np.concatenate(dense_keys), weights, minlength=cells + v)[:cells].astype(
            self.dtype, copy=False)
        self._push(self._sorted_csr(np.concatenate(rest_keys)))

    def _sorted_csr(self, keys: np.ndarray) -> sp.csr_matrix:
        v = self.v
        if len(keys) == 0:
            return sp.csr_matrix((v, v), dtype=self.dtype)
        keys.sort()
        start = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
        n = np.diff(np.append(start, len(keys)))
        keys = keys[start]
        if self.harmonic:  # keys are (pair, d - 1): weigh each run by 1/d, then merge pairs
            data = n / (keys % self.window + 1.0)
            keys = keys // self.window
            start = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
            data, keys = np.add.reduceat(data, start), keys[start]
        else:
            data = n.astype(self.dtype)
        return _canonical_csr(data, keys // v, keys % v, v)

    def _push(self, m: sp.csr_matrix) -> None:
        self.parts.append(m)
        while len(self.parts) > 1 and self.parts[-2].nnz <= 2 * self.parts[-1].nnz:
            top = self.parts.pop()
            self.parts[-1] = self.parts[-1] + top

    def result(self) -> sp.csr_matrix:
        cell = np.flatnonzero(self.dense)  # cell = hi * (hi + 1) / 2 + lo, lo <= hi < k
        hi = ((np.sqrt(8 * cell + 1) - 1) // 2).astype(np.int64)
        hi -= hi * (hi + 1) // 2 > cell  # guard the float square root
        hi += (hi + 1) * (hi + 2) // 2 <= cell
        lower = _canonical_csr(self.dense[cell].astype(self.dtype), hi, cell - hi * (hi + 1) // 2, self.v)
        self.dense = None
        for part in self.parts:
            lower = lower + part
        full = lower + lower.T
        full.sort_indices()
        return full.tocsr()


def _canonical_csr(data, rows, cols, v: int) -> sp.csr_matrix:
    """CSR from entries already sorted by (row, col), without duplicates."""
    indptr = np.zeros(v + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=v), out=indptr[1:])
    m = sp.csr_matrix((data, cols.astype(np.int32), indptr), shape=(v, v))
    m.has_canonical_format = True
    return m
