"""The compiled co-occurrence kernel (numba): tokens, word ids and window pairs in one pass.

The same counts as :mod:`~contextlens.static.cooccurrence`'s numpy engine, for the same
rules, with the per-token work outside the interpreter. :class:`KernelCounter` takes the
corpus block by block (whole lines, as UTF-8 bytes) through three compiled steps:

1. tokens -> provisional word ids, first-seen order (:mod:`.tokens`): ``str.split()``'s
   white space, or :func:`contextlens.text.tokenize`'s pattern on an ASCII block; a
   non-ASCII block under ``tokenizer="words"`` is tokenised by that function and re-joined
   with spaces, and lower-casing is ``str.lower()`` on the block, so whatever the kernel
   cannot do exactly is done by the code the numpy engine uses;
2. window pairs added up in a lower triangle (:mod:`.pairs`): a dense triangle for the
   ``k`` words most frequent in the first block, a hash table for the rest. Pairs are
   counted for every token: restricting the table to the vocabulary at the end equals not
   counting out-of-vocabulary tokens (they keep their positions either way), so memory
   follows the number of distinct pairs, not the length of the corpus;
3. the symmetric CSR of the vocabulary's rows, sorted by bucketing (:mod:`.pairs`).

Raw counts add up in int32 while ``window * tokens < 2**31`` (no cell can overflow), then
in int64; harmonic weights in float64. Importing this package runs the kernel once on a
tiny text, which compiles it the first time (about 20 s; then it is cached on disk, see
:mod:`.jit`) and loads it in every process, so a numba that cannot run fails at import
and :func:`~contextlens.static.cooccurrence.cooccurrence_matrix` falls back to numpy.

Floor: imports only ``errors``, ``files``, ``disk_cache`` and ``corpus`` (its line and sentence
splitting) of contextlens, with numba and numpy.

>>> counter = KernelCounter(window=1, harmonic=False)
>>> counter.add_block("b a b\\n\\na\\n", lower=False, tokenizer="whitespace")
>>> counter.words(), counter.counts.tolist(), counter.n_tokens, counter.n_sentences
(['b', 'a'], [2, 2], 4, 2)
>>> counter.matrix(np.array([1, 0]), np.int32).toarray().tolist()  # rows: a, b
[[0, 2], [2, 0]]
"""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ...corpus.reading import _lines, _sentences
from ...progress import step
from .jit import is_cached
from .pairs import EMPTY, add_pairs, lower_by_column, rehash_pairs, renumber, rows_from_columns, symmetric
from .tokens import COUNT, IDS, LINES, NEED, POOL, POS, TOKENS, WORDS, map_tokens, rehash_words, sort_words

__all__ = ["KernelCounter", "kernel_tokens", "cache_location"]

log = logging.getLogger(__name__)

_PAIR_SLOTS = 1 << 20  # the pair table's first size (it doubles when 3/4 full)
_WORD_SLOTS = 1 << 15  # the word tables' first size (they double when full)
_DENSE_CELLS = 1 << 21  # the dense triangle: k(k + 1) / 2 <= this
_INT32_LIMIT = 2**31  # raw counts widen to int64 once window * tokens reaches this


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
        self._st = np.zeros(8, np.int64)  # map_tokens' state
        self._slots = np.full(2 * _WORD_SLOTS, -1, np.int32)  # the tables double when full
        self._table = np.zeros((_WORD_SLOTS, 4), np.int64)  # hash, start in the pool, length, count
        self._pool = np.zeros(16 * _WORD_SLOTS, np.uint8)  # each word's UTF-8 bytes and "\n"
        self._dense: np.ndarray | None = None  # set up after the first block
        self._k = 0
        self._rank = np.zeros(0, np.int32)  # (first block's words,) their rank by frequency there
        self._keys = np.full(_PAIR_SLOTS, EMPTY, np.uint64)
        self._vals = np.zeros(_PAIR_SLOTS, dtype)
        self._n_pairs = 0

    @property
    def n_tokens(self) -> int:
        return int(self._st[TOKENS])

    @property
    def n_sentences(self) -> int:
        return int(self._st[LINES])

    @property
    def counts(self) -> np.ndarray:
        """``(words,)`` int64 frequency of each provisional id."""
        return self._table[: self._st[WORDS], COUNT]

    def words(self) -> list[str]:
        """The words, by provisional id."""
        if self._st[WORDS] == 0:
            return []
        return self._pool[: self._st[POOL] - 1].tobytes().decode("utf-8", "surrogatepass").split("\n")

    def alphabetical(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` (provisional) in the alphabetical order of their words."""
        return sort_words(self._pool, self._table, ids.astype(np.int64))

    def add_block(self, text: str, lower: bool, tokenizer: str) -> None:
        """Count the tokens and pairs of one block of whole lines."""
        ids = self.ids(text, lower, tokenizer)
        if self._dense is None:  # the first block: rank its words, set the dense triangle up
            n = int(self._st[WORDS])
            self._rank = np.empty(n, np.int32)
            self._rank[np.argsort(-self.counts, kind="stable")] = np.arange(n, dtype=np.int32)
            self._k = int((np.sqrt(8 * _DENSE_CELLS + 1) - 1) / 2)
            self._dense = np.zeros(self._k * (self._k + 1) // 2, self.weights.dtype)
        ids = self._pair_ids(ids)
        if self.weights.dtype == np.int32 and self.window * self.n_tokens >= _INT32_LIMIT:
            # a cell holds at most window * tokens: widen before it can overflow
            self.weights, self._dense, self._vals = (a.astype(np.int64)
                                                     for a in (self.weights, self._dense, self._vals))
        st = np.zeros(2, np.int64)
        st[1] = self._n_pairs
        while add_pairs(ids, st, self.window, self.weights, self._dense, self._k, self._keys, self._vals):
            self._keys, self._vals = rehash_pairs(self._keys, self._vals, 2 * len(self._keys))
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
        st[POS] = st[IDS] = 0
        while status := map_tokens(buf, ascii_words, st, ids, self._slots, self._table, self._pool):
            if status == 1:
                self._table = np.concatenate([self._table, np.zeros_like(self._table)])
            elif status == 2:
                self._slots = rehash_words(self._table, st[WORDS], 2 * len(self._slots))
            else:
                self._pool = np.concatenate([self._pool, np.zeros(max(len(self._pool), st[NEED]), np.uint8)])
        return ids[: st[IDS]]

    def _pair_ids(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` (changed in place) as the pair tables number words: the first block's
        words most frequent first (so that the dense triangle holds the pairs of the
        frequent words), the words first seen later as they are."""
        renumber(ids, self._rank)
        return ids

    def close(self) -> None:
        """Free the pair tables (:meth:`matrix` frees them too)."""
        self._dense = self._keys = self._vals = None

    def matrix(self, rows: np.ndarray, int_dtype) -> sp.csr_matrix:
        """``(V, V)`` symmetric CSR counts of the words ``rows`` (provisional ids, in row
        order); integers of ``int_dtype``, or float64 for harmonic weighting. Frees the
        pair tables."""
        v = len(rows)
        row_of = np.full(self._st[WORDS], -1, np.int32)  # pair-table id -> row
        row_of[self._pair_ids(rows.astype(np.int32))] = np.arange(v, dtype=np.int32)  # a copy
        dense = self._dense if self._dense is not None else np.zeros(0, self.weights.dtype)
        colptr, rr, xx = lower_by_column(dense, self._k, self._keys, self._vals, row_of, v)
        self.close()
        rowptr, cols, data = rows_from_columns(colptr, rr, xx, v)
        del colptr, rr, xx
        like = np.empty(0, np.float64 if self.harmonic else int_dtype)
        indptr, indices, out = symmetric(rowptr, cols, data, v, like)
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
    path = getattr(getattr(map_tokens, "_cache", None), "cache_path", None)
    return Path(path) if path else None


def _load() -> bool:
    """Count a tiny text once, at import, through every compiled step of raw counts
    (table growth and word sorting included): this compiles them on the very first run
    (then they are cached) and loads them in every process, so a numba that cannot run
    fails here and the caller falls back to the numpy path. A compile is reported as a
    progress step (:mod:`contextlens.progress`), function by function. True when it compiled."""
    steps = (map_tokens, rehash_words, sort_words, renumber, add_pairs, rehash_pairs, lower_by_column,
             rows_from_columns, symmetric)
    cold = not all(is_cached(f) for f in steps)
    where = cache_location()
    report = (step("compiling the counting kernel", total=len(steps), unit="functions",
                   once=f"once, then cached in {where}" if where else None) if cold
              else contextlib.nullcontext())
    counter = KernelCounter(2, False)
    stages = (lambda: counter.add_block("a b a\n", False, "whitespace"),  # map_tokens, renumber, add_pairs
              lambda: counter.alphabetical(np.arange(2)),
              lambda: rehash_words(counter._table, 2, len(counter._slots)),
              lambda: rehash_pairs(counter._keys, counter._vals, len(counter._keys)),
              lambda: counter.matrix(np.arange(2), np.int32))  # lower_by_column, rows_from_columns, symmetric
    with report as s:
        for run in stages:
            run()
            if s is not None:
                s.update(sum(bool(f.signatures) for f in steps))
    return cold


#: whether importing this package compiled the kernel (False: loaded from numba's cache)
COMPILED_AT_IMPORT = _load()
