"""Steps 2 and 3 of the kernel: window pairs added up, then the symmetric CSR, compiled.

**Pairs.** Every pair of positions at most ``window`` apart in a line adds ``w(d)`` to the
lower-triangle cell ``(hi, lo)`` of its two word ids: a dense triangle (cell
``hi * (hi + 1) / 2 + lo``) for ids below ``k``, an open-addressing table of
``hi << 32 | lo`` keys (linear probing, at most 3/4 full) for the rest. Table-bound pairs
are gathered in batches of 512 whose slots are touched before they are probed, so the
cache misses overlap instead of following one another (2x on Brown).

**CSR.** The cells of vocabulary words are re-labelled to their rows and bucketed by
column, then, scanning the columns in order, by row: every row comes out sorted with no
comparison sort. The symmetric matrix is written from that lower triangle ``L``: row
``r`` is L's row ``r`` (the diagonal doubled: a word repeated within the window counts
from both sides), then L's column ``r`` below the diagonal, sorted too because L's rows
are scanned in order.
"""

from __future__ import annotations

import numba
import numpy as np

from .jit import jit

__all__ = ["EMPTY", "renumber", "add_pairs", "rehash_pairs", "lower_by_column", "rows_from_columns",
           "symmetric"]

BATCH = 512  # pairs probed together in the pair table
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # an empty slot of the pair table
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LOW32 = np.uint64(0xFFFFFFFF)


@jit
def renumber(ids, rank):
    """``ids[i] = rank[ids[i]]`` where ``0 <= ids[i] < len(rank)``."""
    n = len(rank)
    for i in range(len(ids)):
        if 0 <= ids[i] < n:
            ids[i] = rank[ids[i]]


@jit
def add_pairs(ids, st, window, weights, dense, k, keys, vals):
    """Add ``weights[d]`` to the lower-triangle cell of every pair of ids ``d <= window``
    apart in a line, from position ``st[0]`` on; ``st[1]`` counts the table's entries.
    Returns 0 when done, 1 (stopping at a position) when the pair table needs to grow.

    Pairs bound for the table are gathered in batches and their slots touched before
    they are probed, so the cache misses overlap instead of following one another."""
    n = len(ids)
    n_pairs = st[1]
    limit = (3 * len(keys)) // 4 - BATCH - window  # so one more batch leaves it 3/4 full at most
    if n_pairs > limit:
        return 1
    batch = np.empty(BATCH + window, np.uint64)
    batch_w = np.empty(BATCH + window, vals.dtype)
    m = 0
    for i in range(st[0], n):
        a = ids[i]
        if a < 0:
            continue
        for d in range(1, window + 1):
            j = i + d
            if j >= n or ids[j] < 0:
                break
            b = ids[j]
            hi, lo = (a, b) if a >= b else (b, a)
            if hi < k:
                dense[((hi * (hi + 1)) >> 1) + lo] += weights[d]
            else:
                batch[m] = (np.uint64(hi) << np.uint64(32)) | np.uint64(lo)
                batch_w[m] = weights[d]
                m += 1
        if m >= BATCH:
            n_pairs += _insert(batch, batch_w, m, keys, vals)
            m = 0
            if n_pairs > limit:
                st[0], st[1] = i + 1, n_pairs
                return 1
    n_pairs += _insert(batch, batch_w, m, keys, vals)
    st[0], st[1] = n, n_pairs
    return 0


@numba.njit
def _insert(batch, batch_w, m, keys, vals):
    """Add ``batch_w[t]`` at key ``batch[t]`` for ``t < m``; returns the new entries."""
    mask = np.uint64(len(keys) - 1)
    touch = np.uint64(0)
    for t in range(m):  # independent loads: the misses overlap
        s = ((batch[t] * _GOLDEN) >> np.uint64(32)) & mask
        touch ^= keys[s] ^ np.uint64(vals[s] != 0)
    new = 0
    for t in range(m):
        key = batch[t]
        s = ((key * _GOLDEN) >> np.uint64(32)) & mask
        while keys[s] != key and keys[s] != EMPTY:
            s = (s + np.uint64(1)) & mask
        if keys[s] == EMPTY:
            keys[s] = key
            new += 1
        vals[s] += batch_w[t]
    return new + (touch == np.uint64(1) and m < 0)  # keeps the touching loop


@jit
def rehash_pairs(keys, vals, size):
    """The pair table's entries in a table of ``size`` slots."""
    new_keys = np.full(size, EMPTY, np.uint64)
    new_vals = np.zeros(size, vals.dtype)
    mask = np.uint64(size - 1)
    for t in range(len(keys)):
        key = keys[t]
        if key != EMPTY:
            s = ((key * _GOLDEN) >> np.uint64(32)) & mask
            while new_keys[s] != EMPTY:
                s = (s + np.uint64(1)) & mask
            new_keys[s] = key
            new_vals[s] = vals[t]
    return new_keys, new_vals


@jit
def lower_by_column(dense, k, keys, vals, rows, v):
    """The vocabulary's lower-triangle cells ``(r >= c)``, re-labelled by ``rows``
    (provisional id -> row, -1 if out of the vocabulary), bucketed by column ``c``:
    ``(colptr, r, x)``."""
    colptr = np.zeros(v + 1, np.int64)
    _cells(dense, k, keys, vals, rows, colptr, colptr, colptr, colptr, True)
    for c in range(v):
        colptr[c + 1] += colptr[c]
    rr = np.empty(colptr[v], np.int32)
    xx = np.empty(colptr[v], dense.dtype)
    fill = colptr[:-1].copy()
    _cells(dense, k, keys, vals, rows, colptr, rr, xx, fill, False)
    return colptr, rr, xx


@numba.njit
def _cells(dense, k, keys, vals, rows, colptr, rr, xx, fill, count):
    """Count (``count``) or write the cells of :func:`lower_by_column`."""
    cell = 0
    for hi in range(k):
        rh = rows[hi]
        if rh < 0:
            cell += hi + 1
            continue
        for lo in range(hi + 1):
            x = dense[cell]
            cell += 1
            rl = rows[lo]
            if x != 0 and rl >= 0:
                r, c = max(rh, rl), min(rh, rl)
                if count:
                    colptr[c + 1] += 1
                else:
                    rr[fill[c]], xx[fill[c]] = r, x
                    fill[c] += 1
    for t in range(len(keys)):
        key = keys[t]
        if key != EMPTY:
            ra, rb = rows[np.int64(key >> np.uint64(32))], rows[np.int64(key & _LOW32)]
            if ra >= 0 and rb >= 0:
                r, c = max(ra, rb), min(ra, rb)
                if count:
                    colptr[c + 1] += 1
                else:
                    rr[fill[c]], xx[fill[c]] = r, vals[t]
                    fill[c] += 1


@jit
def rows_from_columns(colptr, rr, xx, v):
    """The same cells as row-sorted CSR ``(rowptr, cols, data)``: scanning columns in
    order and appending to rows leaves every row sorted."""
    rowptr = np.zeros(v + 1, np.int64)
    for t in range(len(rr)):
        rowptr[rr[t] + 1] += 1
    for r in range(v):
        rowptr[r + 1] += rowptr[r]
    fill = rowptr[:-1].copy()
    cols = np.empty(len(rr), np.int32)
    data = np.empty(len(rr), xx.dtype)
    for c in range(v):
        for t in range(colptr[c], colptr[c + 1]):
            r = rr[t]
            cols[fill[r]], data[fill[r]] = c, xx[t]
            fill[r] += 1
    return rowptr, cols, data


@jit
def symmetric(rowptr, cols, data, v, like):
    """``L + Lᵀ`` as sorted CSR ``(indptr, indices, values)`` from row-sorted
    lower-triangle CSR ``L``; the values take ``like``'s dtype. Row r is L's row r, then
    L's column r below the diagonal (rows scanned in order, so sorted too)."""
    indptr = np.zeros(v + 1, np.int64)
    for r in range(v):
        indptr[r + 1] += rowptr[r + 1] - rowptr[r]
        for t in range(rowptr[r], rowptr[r + 1]):
            if cols[t] != r:
                indptr[cols[t] + 1] += 1
    for r in range(v):
        indptr[r + 1] += indptr[r]
    fill = np.empty(v, np.int64)
    indices = np.empty(indptr[v], np.int32)
    out = np.empty(indptr[v], like.dtype)
    for r in range(v):
        p = indptr[r]
        for t in range(rowptr[r], rowptr[r + 1]):
            indices[p] = cols[t]
            out[p] = 2 * data[t] if cols[t] == r else data[t]
            p += 1
        fill[r] = p
    for r in range(v):
        for t in range(rowptr[r], rowptr[r + 1]):
            c = cols[t]
            if c != r:
                indices[fill[c]], out[fill[c]] = r, data[t]
                fill[c] += 1
    return indptr, indices, out
