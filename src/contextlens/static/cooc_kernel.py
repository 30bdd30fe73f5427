"""The compiled co-occurrence kernel (numba): tokens, word ids and window pairs in one pass.

The same counts as :mod:`~contextlens.static.cooccurrence`'s numpy path, for the same
rules, with the per-token work outside the interpreter. Each text block (whole lines,
UTF-8 bytes) goes through three compiled steps:

1. **tokens → ids**: a byte scanner splits on exactly the characters ``str.split()``
   splits on (``"\\n"`` ends a line, the other 28 white-space code points are read from
   their UTF-8 bytes) and looks each token up in an open-addressing hash table of byte
   strings (FNV-1a), giving provisional ids in first-seen order (``-2`` marks a line
   break). ``tokenizer="words"`` on an ASCII block uses a scanner that follows
   :func:`contextlens.text.tokenize`'s pattern on ASCII; a block with other characters is
   tokenised by that function and re-joined with spaces. Lower-casing is ``str.lower()``
   on the block, before the kernel sees it.
2. **pairs**: every pair of positions at most ``window`` apart in a line adds ``w(d)`` to
   the lower-triangle cell of its two provisional ids: a dense triangle for the ``k`` ids
   ranked most frequent in the first block, an open-addressing table of ``hi << 32 | lo``
   keys for the rest. Pairs are counted for every token: restricting the table to the
   vocabulary at the end equals not counting out-of-vocabulary tokens (they keep their
   positions either way), so memory grows with the distinct pairs, not the corpus.
3. **CSR**: the cells of vocabulary words are re-labelled to their rows, bucketed by
   column, then by row (so every row comes out sorted without a comparison sort), and the
   symmetric matrix is written from that lower triangle (a diagonal cell counts twice).

Compiled code is cached on disk (numba ``cache=True``) in ``$NUMBA_CACHE_DIR`` when set,
else in contextlens' cache directory (``contextlens.files.cache_dir("numba")``, so a
read-only install still caches), else next to this file; with no writable place it
compiles in every process, with a warning.

>>> counter = KernelCounter(window=1, harmonic=False)
>>> counter.add_block("b a b\\n\\na\\n", lower=False, tokenizer="whitespace")
>>> counter.words(), counter.counts.tolist(), counter.n_tokens, counter.n_sentences
(['b', 'a'], [2, 2], 4, 2)
>>> counter.matrix(np.array([1, 0]), np.int32).toarray().tolist()  # rows: a, b
[[0, 2], [2, 0]]
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numba
import numpy as np
import scipy.sparse as sp
from numba.core import config as numba_config

from ..corpus import _lines, _sentences
from ..files import cache_dir

__all__ = ["KernelCounter", "kernel_tokens", "cache_location"]

log = logging.getLogger(__name__)

_SEP = -2  # a line break in the id stream
_BATCH = 512  # pairs probed together in the pair table
_PAIR_SLOTS = 1 << 20  # the pair table's first size (it doubles when 3/4 full)
_WORD_SLOTS = 1 << 15  # the word tables' first size (they double when full)
_INT32_LIMIT = 2**31  # raw counts widen to int64 once window * tokens reaches this
_DENSE_CELLS = 1 << 21  # the dense triangle of the first-block top k ids: k(k+1)/2 <= this
_EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)  # an empty slot of the pair table
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_LOW32 = np.uint64(0xFFFFFFFF)
# byte classes, ordered so that "<= _LETTER" is \w (on ASCII) and ">= _SPACE" ends a token
_DIGIT, _LETTER, _NUM_SEP, _JOINER, _OTHER, _WIDE, _SPACE, _NEWLINE = range(8)


def _byte_classes() -> np.ndarray:
    cls = np.full(256, _OTHER, np.uint8)  # other ASCII symbols, and bytes of non-ASCII characters
    for c in range(128):
        ch = chr(c)
        cls[c] = (_NEWLINE if ch == "\n" else _SPACE if ch.isspace() else _DIGIT if ch.isdigit()
                  else _LETTER if ch.isalnum() or ch == "_" else _NUM_SEP if ch in ".,:/"
                  else _JOINER if ch in "'-" else _OTHER)
    cls[[0xC2, 0xE1, 0xE2, 0xE3]] = _WIDE  # the lead bytes of the non-ASCII white space
    return cls


_CLASS = _byte_classes()
# the int64 state of _map_tokens: position, ids written, words, pool bytes used, tokens,
# non-blank lines, current line has a token, bytes the pool must grow by
_POS, _IDS, _WORDS, _POOL, _TOKENS, _LINES, _IN_LINE, _NEED = range(8)


def _jit(fn):
    """``numba.njit(cache=True)`` with the cache in the place the module docstring gives."""
    saved = numba_config.CACHE_DIR
    try:
        if not saved:
            try:
                numba_config.CACHE_DIR = str(cache_dir("numba"))
            except OSError:
                pass  # numba's own choice: next to this file, else its user-wide directory
        try:
            return numba.njit(cache=True, nogil=True)(fn)
        except RuntimeError as exc:  # "cannot cache function ...: no locator available"
            log.warning("numba cannot cache the co-occurrence kernel (%s); it compiles in "
                        "every process. Set NUMBA_CACHE_DIR to a writable folder", exc)
            return numba.njit(nogil=True)(fn)
    finally:
        numba_config.CACHE_DIR = saved


# -- 1. tokens -> provisional ids ---------------------------------------------------------------
@numba.njit
def _wide_space(buf, i):
    """Bytes of the non-ASCII white-space character at ``buf[i]`` (0: none there)."""
    n, b = len(buf), buf[i]
    if b == 0xC2:  # U+0085, U+00A0
        return 2 if i + 1 < n and (buf[i + 1] == 0x85 or buf[i + 1] == 0xA0) else 0
    if i + 2 >= n:
        return 0
    b1, b2 = buf[i + 1], buf[i + 2]
    if b == 0xE1:  # U+1680
        return 3 if b1 == 0x9A and b2 == 0x80 else 0
    if b == 0xE2:  # U+2000..U+200A, U+2028, U+2029, U+202F; U+205F
        if b1 == 0x80 and (b2 <= 0x8A or b2 == 0xA8 or b2 == 0xA9 or b2 == 0xAF):
            return 3
        return 3 if b1 == 0x81 and b2 == 0x9F else 0
    if b == 0xE3:  # U+3000
        return 3 if b1 == 0x80 and b2 == 0x80 else 0
    return 0


@numba.njit
def _ascii_word_end(buf, i):
    """End of the ASCII token starting at ``buf[i]`` under text.tokenize's pattern:
    ``\\d+(?:[.,:/]\\d+)+``, else ``\\w+(?:['-]\\w+)*``, else one symbol."""
    n = len(buf)
    if _CLASS[buf[i]] == _DIGIT:
        j = i
        while j < n and _CLASS[buf[j]] == _DIGIT:
            j += 1
        groups = 0
        while j + 1 < n and _CLASS[buf[j]] == _NUM_SEP and _CLASS[buf[j + 1]] == _DIGIT:
            j += 1
            while j < n and _CLASS[buf[j]] == _DIGIT:
                j += 1
            groups += 1
        if groups:
            return j
    if _CLASS[buf[i]] <= _LETTER:
        j = i
        while j < n and _CLASS[buf[j]] <= _LETTER:
            j += 1
        while j + 1 < n and _CLASS[buf[j]] == _JOINER and _CLASS[buf[j + 1]] <= _LETTER:
            j += 1
            while j < n and _CLASS[buf[j]] <= _LETTER:
                j += 1
        return j
    return i + 1


@_jit
def _map_tokens(buf, words, st, ids, slots, hashes, starts, lens, counts, pool):
    """Split ``buf`` into tokens and look each up, adding new words; write the ids
    (``-2``: line break) to ``ids``.

    ``st`` (int64) carries the state in and out: position in ``buf``, ids written, words,
    pool bytes used, tokens, non-blank lines, whether the current line has a token.
    Returns 0 when ``buf`` is done, else stops before a new word the tables have no room
    for: 1 (the word arrays are full), 2 (the slot table is half full), 3 (the pool has
    no room for ``st[_NEED]`` more bytes); the caller grows them and calls again.
    """
    n = len(buf)
    i, k, n_words, pool_used = st[_POS], st[_IDS], st[_WORDS], st[_POOL]
    n_tokens, n_lines, in_line = st[_TOKENS], st[_LINES], st[_IN_LINE]
    mask = np.uint64(len(slots) - 1)
    status = 0
    while i < n:
        c = _CLASS[buf[i]]
        if c == _SPACE:
            i += 1
            continue
        if c == _NEWLINE:
            ids[k] = _SEP
            k += 1
            i += 1
            n_lines += in_line
            in_line = 0
            continue
        if c == _WIDE:
            w = _wide_space(buf, i)
            if w:
                i += w
                continue
        s = i
        h = _FNV_OFFSET
        if words:
            i = _ascii_word_end(buf, s)
            for t in range(s, i):
                h = (h ^ np.uint64(buf[t])) * _FNV_PRIME
        else:
            while i < n:
                c = _CLASS[buf[i]]
                if c >= _SPACE or (c == _WIDE and _wide_space(buf, i) > 0):
                    break
                h = (h ^ np.uint64(buf[i])) * _FNV_PRIME
                i += 1
        size = i - s
        j = h & mask
        while True:
            w = slots[j]
            if w < 0:
                break
            if hashes[w] == h and lens[w] == size:
                p = starts[w]
                t = 0
                while t < size and pool[p + t] == buf[s + t]:
                    t += 1
                if t == size:
                    break
            j = (j + np.uint64(1)) & mask
        if w < 0:  # a new word: room for it?
            status = 1 if n_words == len(hashes) else 2 if 2 * (n_words + 1) > len(slots) else 0
            if status == 0 and pool_used + size + 1 > len(pool):
                status, st[_NEED] = 3, size + 1
            if status:
                i = s
                break
            w = n_words
            pool[pool_used:pool_used + size] = buf[s:i]
            pool[pool_used + size] = 0x0A
            hashes[w], starts[w], lens[w], counts[w] = h, pool_used, size, 0
            pool_used += size + 1
            n_words += 1
            slots[j] = w
        counts[w] += 1
        ids[k] = w
        k += 1
        n_tokens += 1
        in_line = 1
    if status == 0:
        n_lines += in_line
        in_line = 0
    st[_POS], st[_IDS], st[_WORDS], st[_POOL] = i, k, n_words, pool_used
    st[_TOKENS], st[_LINES], st[_IN_LINE] = n_tokens, n_lines, in_line
    return status


@_jit
def _rehash(hashes, n_words, size):
    """A slot table of ``size`` (a power of two) holding ids ``0..n_words-1``."""
    slots = np.full(size, -1, np.int32)
    mask = np.uint64(size - 1)
    for k in range(n_words):
        j = hashes[k] & mask
        while slots[j] >= 0:
            j = (j + np.uint64(1)) & mask
        slots[j] = k
    return slots


# -- 2. pairs -----------------------------------------------------------------------------------
@_jit
def _renumber(ids, rank):
    """``ids[i] = rank[ids[i]]`` where ``0 <= ids[i] < len(rank)``."""
    n = len(rank)
    for i in range(len(ids)):
        if 0 <= ids[i] < n:
            ids[i] = rank[ids[i]]


@_jit
def _add_pairs(ids, st, window, weights, dense, k, keys, vals):
    """Add ``weights[d]`` to the lower-triangle cell of every pair of ids ``d <= window``
    apart in a line, from position ``st[0]`` on; ``st[1]`` counts the table's entries.
    Returns 0 when done, 1 (stopping at a position) when the pair table needs to grow.

    Pairs bound for the table are gathered in batches and their slots touched before
    they are probed, so the cache misses overlap instead of following one another."""
    n = len(ids)
    n_pairs = st[1]
    limit = (3 * len(keys)) // 4 - _BATCH - window  # so one more batch leaves it 3/4 full at most
    if n_pairs > limit:
        return 1
    batch = np.empty(_BATCH + window, np.uint64)
    batch_w = np.empty(_BATCH + window, vals.dtype)
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
        if m >= _BATCH:
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
        while keys[s] != key and keys[s] != _EMPTY:
            s = (s + np.uint64(1)) & mask
        if keys[s] == _EMPTY:
            keys[s] = key
            new += 1
        vals[s] += batch_w[t]
    return new + (touch == np.uint64(1) and m < 0)  # keeps the touching loop


@_jit
def _rehash_pairs(keys, vals, size):
    """The pair table's entries in a table of ``size`` slots."""
    new_keys = np.full(size, _EMPTY, np.uint64)
    new_vals = np.zeros(size, vals.dtype)
    mask = np.uint64(size - 1)
    for t in range(len(keys)):
        key = keys[t]
        if key != _EMPTY:
            s = ((key * _GOLDEN) >> np.uint64(32)) & mask
            while new_keys[s] != _EMPTY:
                s = (s + np.uint64(1)) & mask
            new_keys[s] = key
            new_vals[s] = vals[t]
    return new_keys, new_vals


# -- 3. CSR -------------------------------------------------------------------------------------
@_jit
def _lower_by_column(dense, k, keys, vals, rows, v):
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
    """Count (``count``) or write the cells of :func:`_lower_by_column`."""
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
        if key != _EMPTY:
            ra, rb = rows[np.int64(key >> np.uint64(32))], rows[np.int64(key & _LOW32)]
            if ra >= 0 and rb >= 0:
                r, c = max(ra, rb), min(ra, rb)
                if count:
                    colptr[c + 1] += 1
                else:
                    rr[fill[c]], xx[fill[c]] = r, vals[t]
                    fill[c] += 1


@_jit
def _rows_from_columns(colptr, rr, xx, v):
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


@_jit
def _symmetric(rowptr, cols, data, v, like):
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


# -- the counter --------------------------------------------------------------------------------
class KernelCounter:
    """Word frequencies and pair counts of a corpus fed block by block (see the module
    docstring). ``matrix(rows, int_dtype)`` gives the symmetric counts of the words
    ``rows`` (provisional ids, in row order)."""

    def __init__(self, window: int, harmonic: bool):
        self.window, self.harmonic = window, harmonic
        # raw counts add up in int32 until they might not fit (then int64); harmonic in float64
        dtype = np.float64 if harmonic else np.int32
        self.weights = np.array([0.0] + [1.0 / d for d in range(1, window + 1)]).astype(dtype)
        if not harmonic:
            self.weights[1:] = 1
        self._st = np.zeros(8, np.int64)  # _map_tokens' state
        self._slots = np.full(2 * _WORD_SLOTS, -1, np.int32)  # the tables double when full
        self._hashes = np.zeros(_WORD_SLOTS, np.uint64)
        self._starts = np.zeros(_WORD_SLOTS, np.int64)
        self._lens = np.zeros(_WORD_SLOTS, np.int32)
        self._counts = np.zeros(_WORD_SLOTS, np.int64)
        self._pool = np.zeros(16 * _WORD_SLOTS, np.uint8)  # each word's UTF-8 bytes and "\n"
        self._dense: np.ndarray | None = None  # set up after the first block
        self._k = 0
        self._rank = np.zeros(0, np.int32)  # (first block's words,) their rank by frequency there
        self._keys = np.full(_PAIR_SLOTS, _EMPTY, np.uint64)
        self._vals = np.zeros(_PAIR_SLOTS, dtype)
        self._n_pairs = 0

    @property
    def n_tokens(self) -> int:
        return int(self._st[_TOKENS])

    @property
    def n_sentences(self) -> int:
        return int(self._st[_LINES])

    @property
    def counts(self) -> np.ndarray:
        """``(words,)`` int64 frequency of each provisional id."""
        return self._counts[: self._st[_WORDS]]

    def words(self) -> list[str]:
        """The words, by provisional id."""
        if self._st[_WORDS] == 0:
            return []
        return self._pool[: self._st[_POOL] - 1].tobytes().decode("utf-8", "surrogatepass").split("\n")

    def add_block(self, text: str, lower: bool, tokenizer: str) -> None:
        """Count the tokens and pairs of one block of whole lines."""
        ids = self.ids(text, lower, tokenizer)
        if self._dense is None:  # the first block: rank its words, set the dense triangle up
            n = int(self._st[_WORDS])
            self._rank = np.empty(n, np.int32)
            self._rank[np.argsort(-self._counts[:n], kind="stable")] = np.arange(n, dtype=np.int32)
            self._k = int((np.sqrt(8 * _DENSE_CELLS + 1) - 1) / 2)
            self._dense = np.zeros(self._k * (self._k + 1) // 2, self.weights.dtype)
        ids = self._pair_ids(ids)
        if self.weights.dtype == np.int32 and self.window * self.n_tokens >= _INT32_LIMIT:
            # a cell holds at most window * tokens: widen before it can overflow
            self.weights, self._dense, self._vals = (a.astype(np.int64)
                                                     for a in (self.weights, self._dense, self._vals))
        st = np.zeros(2, np.int64)
        st[1] = self._n_pairs
        while _add_pairs(ids, st, self.window, self.weights, self._dense, self._k, self._keys, self._vals):
            self._keys, self._vals = _rehash_pairs(self._keys, self._vals, 2 * len(self._keys))
        self._n_pairs = int(st[1])

    def ids(self, text: str, lower: bool, tokenizer: str) -> np.ndarray:
        """The provisional ids of the tokens of ``text`` (``-2``: line break), adding new
        words and counting every token."""
        if lower:
            text = text.lower()
        ascii_words = tokenizer == "words" and text.isascii()
        if tokenizer == "words" and not ascii_words:  # Python tokenises; the kernel splits on spaces
            text = "\n".join(map(" ".join, _sentences(_lines([text]), False, tokenizer)))
        buf = np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8)
        ids = np.empty(len(buf) + 1, np.int32)
        st = self._st
        st[_POS] = st[_IDS] = 0
        while status := _map_tokens(buf, ascii_words, st, ids, self._slots, self._hashes, self._starts,
                                    self._lens, self._counts, self._pool):
            if status == 1:
                self._hashes, self._starts, self._lens, self._counts = (
                    np.concatenate([a, np.zeros_like(a)])
                    for a in (self._hashes, self._starts, self._lens, self._counts))
            elif status == 2:
                self._slots = _rehash(self._hashes, st[_WORDS], 2 * len(self._slots))
            else:
                self._pool = np.concatenate([self._pool, np.zeros(max(len(self._pool), st[_NEED]), np.uint8)])
        return ids[: st[_IDS]]

    def _pair_ids(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` (changed in place) as the pair tables number words: the first block's
        words most frequent first (so that the dense triangle holds the pairs of the
        frequent words), the words first seen later as they are."""
        _renumber(ids, self._rank)
        return ids

    def close(self) -> None:
        """Free the pair tables (:meth:`matrix` frees them too)."""
        self._dense = self._keys = self._vals = None

    def matrix(self, rows: np.ndarray, int_dtype) -> sp.csr_matrix:
        """``(V, V)`` symmetric CSR counts of the words ``rows`` (provisional ids, in row
        order); integers of ``int_dtype``, or float64 for harmonic weighting. Frees the
        pair tables."""
        v = len(rows)
        row_of = np.full(self._st[_WORDS], -1, np.int32)  # pair-table id -> row
        row_of[self._pair_ids(rows.astype(np.int32))] = np.arange(v, dtype=np.int32)  # a copy
        dense = self._dense if self._dense is not None else np.zeros(0, self.weights.dtype)
        colptr, rr, xx = _lower_by_column(dense, self._k, self._keys, self._vals, row_of, v)
        self.close()
        rowptr, cols, data = _rows_from_columns(colptr, rr, xx, v)
        del colptr, rr, xx
        like = np.empty(0, np.float64 if self.harmonic else int_dtype)
        indptr, indices, out = _symmetric(rowptr, cols, data, v, like)
        m = sp.csr_matrix((out, indices, indptr), shape=(v, v))
        m.has_canonical_format = True
        return m


def kernel_tokens(text: str, tokenizer: str = "whitespace", lower: bool = False) -> list[list[str]]:
    r"""The tokens the kernel counts in ``text``, line by line (blank lines left out).

    >>> kernel_tokens("a  bé\u3000c\n\n d\r")
    [['a', 'bé', 'c'], ['d']]
    >>> kernel_tokens("We didn't pay 1,200.50 -- well-known_x!", tokenizer="words")
    [['We', "didn't", 'pay', '1,200.50', '-', '-', 'well-known_x', '!']]
    """
    counter = KernelCounter(1, False)
    ids = counter.ids(text, lower, tokenizer)
    words = counter.words()
    lines: list[list[str]] = [[]]
    for i in ids.tolist():
        if i < 0:
            lines.append([])
        else:
            lines[-1].append(words[i])
    return [line for line in lines if line]


def cache_location() -> Path | None:
    """The folder the compiled kernel is cached in (None: not cached)."""
    path = getattr(getattr(_map_tokens, "_cache", None), "cache_path", None)
    return Path(path) if path else None


def _load() -> None:
    """Count a tiny text once, at import: this compiles the kernel on the very first run
    (then it is cached) and loads it in every process, so a numba that cannot run fails
    here and the caller falls back to the numpy path."""
    start = time.perf_counter()
    counter = KernelCounter(2, False)
    counter.add_block("a b a\n", False, "whitespace")
    counter.matrix(np.arange(2), np.int32)
    misses = sum(f.stats.cache_misses.get(sig, 0) for f in (_map_tokens, _add_pairs) for sig in f.signatures)
    if misses:
        log.info("compiled the co-occurrence kernel in %.1f s (cached in %s)",
                 time.perf_counter() - start, cache_location())


_load()
