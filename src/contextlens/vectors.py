"""EmbeddingTable: one plain container for static word vectors.

In the style of gensim's ``KeyedVectors``: ``keys``, ``vectors`` (``(n, dim)`` float32),
``key_to_index``; unit-norm vectors are computed lazily, once; every array handed out is
a read-only view.

>>> t = EmbeddingTable(["bank", "money", "river"], [[1, 1], [1, 0], [0, 1]])
>>> round(t.similarity("bank", "money"), 4)
0.7071
>>> t.most_similar("money", k=1)
[('bank', 0.7071067690849304)]

A table trained by fastText also holds its character n-gram vectors
(:class:`~contextlens.ngrams.NgramVectors`), and then composes a vector for a word it lacks
from them, wherever a word is looked up (:meth:`EmbeddingTable.lookup`, the one hook every
lookup goes through).
"""

from __future__ import annotations

import difflib
import logging
import os
from collections.abc import Iterable, Sequence

import numpy as np

from .errors import (
    DimensionError,
    EmptyInputError,
    InputError,
    UnknownWordError,
    ZeroVectorError,
    check_choice,
    check_int,
)
from .ngrams import NgramVectors

__all__ = ["EmbeddingTable", "cosine", "first_bad_value", "ANALOGY_METHODS", "COSMUL_EPSILON",
           "MAX_LENGTH"]

log = logging.getLogger(__name__)
ANALOGY_METHODS = ("3cosadd", "3cosmul")
COSMUL_EPSILON = 1e-3  # Levy & Goldberg (2014); gensim's most_similar_cosmul uses 1e-6
SCANS_BEFORE_INDEX = 16  # lookups by scanning a packaged table's keys before its word index is built


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of two vectors, in [-1, 1]; a zero vector is an error, not NaN.

    Identical vectors give exactly 1.0 (the same table row in two sentences), not a
    rounding error away from it.

    >>> cosine(np.array([1.0, 0.0]), np.array([1.0, 1.0]))
    0.7071067811865475
    >>> cosine(np.array([0.1, 0.7, 0.3]), np.array([0.1, 0.7, 0.3]))
    1.0
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise DimensionError(f"cosine needs two 1-D vectors of one length, got {a.shape} and {b.shape}")
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0:
        raise ZeroVectorError(
            "cosine of a zero vector is undefined; the word has no co-occurrences or no "
            "context to mix in (check the window, min_count, or the sentence)"
        )
    if np.array_equal(a, b):
        return 1.0
    return float(np.clip(a @ b / (na * nb), -1.0, 1.0))


def _readonly(a: np.ndarray) -> np.ndarray:
    view = a.view()
    view.flags.writeable = False
    return view


#: The longest vector a table holds: float32's largest value is this length squared, so
#: every squared length, and every dot product of two rows (Cauchy-Schwarz), stays finite
#: in float32 arithmetic. A row just beyond it (3e38 in one place, or 1e20) loads as
#: float32 but overflows in the first norm or cosine. (Norms summed in float64 would never
#: overflow, 3.4e38 squared is far inside float64, so refusing only non-finite float64
#: norms would refuse nothing.)
MAX_LENGTH = float(np.sqrt(np.finfo(np.float32).max))  # 1.8446743e19


def first_bad_value(original: np.ndarray, as_float32: np.ndarray) -> tuple[int, int, str] | None:
    """``(row, column, why)`` of the first value of ``(n, dim)`` ``as_float32`` that is not
    finite (``original``: the same values before the cast, to name the one that overflowed),
    else the largest value of the first row longer than :data:`MAX_LENGTH`, or None.

    >>> x = np.array([[1.0, 2.0], [1e300, np.nan]])
    >>> with np.errstate(over="ignore"):
    ...     first_bad_value(x, x.astype(np.float32))
    (1, 0, '1e+300, beyond the float32 range (±3.4e38)')
    >>> y = np.array([[1.0, 2.0], [3e38, 1.0]], dtype=np.float32)
    >>> first_bad_value(y, y)
    (1, 0, '3e+38, which makes its vector 3e+38 long: beyond 1.8e+19, the longest whose squared length float32 holds (its norm and cosines would overflow)')
    """  # noqa: E501 (a doctest's expected output, printed whole)
    bad = ~np.isfinite(as_float32)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        value = original[i, j]
        why = (f"{value:g}, beyond the float32 range (±3.4e38)" if np.isfinite(value)
               else f"{value}, not a finite number")
        return i, j, why
    largest = max(as_float32.max(), -as_float32.min()) if as_float32.size else 0.0
    if largest * np.sqrt(as_float32.shape[1]) <= MAX_LENGTH:
        return None  # no row can be longer (the common case: one pass, no copy)
    lengths = _norms(as_float32)  # (n,), in float64
    long = np.flatnonzero(lengths > MAX_LENGTH)
    if not long.size:
        return None
    i = int(long[0])
    j = int(np.argmax(np.abs(as_float32[i])))
    return i, j, (f"{original[i, j]:g}, which makes its vector {lengths[i]:.2g} long: "
                  f"beyond {MAX_LENGTH:.2g}, the longest whose squared length float32 holds "
                  "(its norm and cosines would overflow)")


def _norms(vectors: np.ndarray) -> np.ndarray:
    """``(n,)`` Euclidean norms of float32 rows, summed in float64 (a float32 sum of squares
    overflows from values of about 1e19), a block of rows at a time.

    >>> big = np.array([[3.0, 4.0], [0.0, 1.0]], dtype=np.float32) * np.float32(2.0**100)  # squares: 1e61
    >>> (_norms(big) / 2.0**100).tolist()
    [5.0, 1.0]
    """
    out = np.empty(len(vectors), dtype=np.float64)
    for s in range(0, len(vectors), 1 << 16):
        block = vectors[s:s + (1 << 16)].astype(np.float64)  # (rows, dim)
        out[s:s + len(block)] = np.linalg.norm(block, axis=1)
    return out


class EmbeddingTable:
    """Static word vectors: ``keys[i]`` has the vector ``vectors[i]``.

    Parameters
    ----------
    keys : the words, unique, without the NUL character (which an ``.npz`` cannot keep at
        the end of a word).
    vectors : ``(len(keys), dim)`` array-like of finite numbers, stored as float32 (a value
        beyond its range, ±3.4e38, is an error, not infinity); ``dim >= 1``.
    name : a label shown in reports (a file name or a packaged name).
    ngrams : fastText's :class:`NgramVectors`, to compose words the table lacks (or None).
    """

    def __init__(self, keys: Sequence[str], vectors, *, name: str | None = None,
                 ngrams: NgramVectors | None = None):
        keys = [str(k) for k in keys]
        given = vectors if isinstance(vectors, np.ndarray) else np.asarray(vectors)
        with np.errstate(over="ignore"):  # a value beyond float32 becomes inf: reported below
            vectors = np.array(given, dtype=np.float32, order="C")  # (n, dim), our own copy
        if vectors.ndim != 2:
            raise DimensionError(f"vectors must be a 2-D (words, dim) array, got shape {vectors.shape}")
        if len(keys) != vectors.shape[0]:
            raise DimensionError(f"{len(keys)} keys but {vectors.shape[0]} vector rows; give one row per key")
        if vectors.shape[1] == 0 and len(keys):
            raise DimensionError("the vectors have 0 dimensions; a table needs at least one value per word")
        bad = first_bad_value(given.reshape(vectors.shape), vectors)
        if bad is not None:
            raise InputError(f"value {bad[1] + 1} of the vector of {keys[bad[0]]!r} is {bad[2]}; "
                             "give finite float32 values (fix or drop the word)")
        if "\x00" in "".join(keys):
            bad_key = next(k for k in keys if "\x00" in k)
            raise InputError(f"the word {bad_key!r} holds the NUL character (\\x00), which no vector file "
                             "keeps; clean the words (a corpus holding NUL bytes is damaged or not text)")
        key_to_index = {k: i for i, k in enumerate(keys)}
        if len(key_to_index) != len(keys):
            seen: set[str] = set()
            dup = next(k for k in keys if k in seen or seen.add(k))
            raise InputError(f"duplicate key {dup!r}; every word must appear once")
        self._setup(tuple(keys), vectors, name, key_to_index, ngrams)

    def _setup(self, keys: tuple[str, ...], vectors: np.ndarray, name: str | None,
               key_to_index: dict[str, int] | None, ngrams: NgramVectors | None = None) -> None:
        self._keys = keys
        self._vectors = vectors
        self._vectors.flags.writeable = False
        self._key_to_index = key_to_index
        self._scans = 0  # lookups answered by scanning the keys (while key_to_index is not built)
        self.name = name or "table"
        if ngrams is not None and ngrams.dim != self.dim:
            raise DimensionError(f"the n-gram vectors have dim {ngrams.dim}, the table {self.dim}")
        self.ngrams = ngrams
        self._unit: np.ndarray | None = None
        self._norms: np.ndarray | None = None
        self._fingerprint: str | None = None
        self._spellings: dict[tuple[str, int], list[str]] | None = None  # suggest()'s keys, built once

    @classmethod
    def _checked_elsewhere(cls, keys: Sequence[str], vectors: np.ndarray, *, name: str) -> EmbeddingTable:
        """A table over ``vectors`` itself (a C-contiguous float32 array nobody else holds) whose
        keys are known unique and values finite: a packaged table, which its tests check
        (tests/integration/test_packaged_tables.py). No copy and no checks, and the word index
        is built on demand, so ``contextlens neighbours bank`` does not pay for 400,000 keys it
        never looks up."""
        if vectors.dtype != np.float32 or not vectors.flags.c_contiguous or vectors.shape[0] != len(keys):
            raise DimensionError(f"a packaged table needs C-contiguous float32 ({len(keys)}, dim) vectors, "
                                 f"got {vectors.dtype} {vectors.shape}")
        table = cls.__new__(cls)
        table._setup(tuple(keys), vectors, name, None)
        return table

    @property
    def key_to_index(self) -> dict[str, int]:
        """``{word: row}``, built on first use."""
        if self._key_to_index is None:
            self._key_to_index = dict(zip(self._keys, range(len(self._keys))))
        return self._key_to_index

    def _row(self, word: object) -> int | None:
        """The row of ``word``, or None. Until the word index is built (a packaged table), the
        first few lookups scan the keys, which are in frequency order, so a common word is
        found in microseconds; after :data:`SCANS_BEFORE_INDEX` of them the index is built."""
        if self._key_to_index is None and self._scans < SCANS_BEFORE_INDEX:
            self._scans += 1
            try:
                return self._keys.index(word)
            except ValueError:
                return None
        return self.key_to_index.get(word)  # type: ignore[arg-type]

    # -- container -------------------------------------------------------------------------
    @property
    def keys(self) -> tuple[str, ...]:
        return self._keys

    @property
    def vectors(self) -> np.ndarray:
        """``(n, dim)`` float32, read-only."""
        return self._vectors

    @property
    def dim(self) -> int:
        return int(self._vectors.shape[1])

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, word: object) -> bool:
        return self._row(word) is not None

    def __repr__(self) -> str:
        return f"EmbeddingTable({self.name!r}, {len(self)} words, dim {self.dim})"

    def fingerprint(self) -> str:
        """A short hash of the keys and vectors (about a thousand rows sampled evenly),
        computed once: what tells two tables apart in caches and index metadata.

        >>> EmbeddingTable(["a"], [[1.0]]).fingerprint() == EmbeddingTable(["a"], [[2.0]]).fingerprint()
        False
        """
        if self._fingerprint is None:
            import hashlib

            step = max(1, len(self) // 997)
            digest = hashlib.sha256(np.ascontiguousarray(self._vectors[::step]).tobytes())
            digest.update("\n".join(self._keys[::step]).encode())
            digest.update(f"{len(self)}x{self.dim}".encode())
            self._fingerprint = digest.hexdigest()[:16]
        return self._fingerprint

    @property
    def norms(self) -> np.ndarray:
        """``(n,)`` Euclidean norms, computed once."""
        if self._norms is None:
            self._norms = _readonly(_norms(self._vectors))
        return self._norms

    @property
    def unit_vectors(self) -> np.ndarray:
        """``(n, dim)`` rows scaled to unit length (zero rows stay zero), computed once."""
        if self._unit is None:
            norms = self.norms
            unit = np.empty_like(self._vectors)  # (n, dim) float32
            for s in range(0, len(unit), 1 << 16):
                safe = np.where(norms[s:s + (1 << 16)] > 0, norms[s:s + (1 << 16)], 1.0)
                unit[s:s + len(safe)] = self._vectors[s:s + len(safe)] / safe[:, None]
            self._unit = _readonly(unit)
        return self._unit

    def index(self, word: str) -> int:
        """Row of ``word``; an unknown word raises with close keys suggested."""
        row = self._row(word)
        if row is None:
            raise UnknownWordError(word, self.suggest(word), where=f"the table {self.name!r}")
        return row

    def lookup(self, word: str) -> np.ndarray | None:
        """The ``(dim,)`` read-only vector of ``word``: its row, else (a fastText table) the
        mean of its character n-grams' vectors, else None. Every lookup goes through here."""
        row = self._row(word)
        if row is not None:
            return self._vectors[row]
        composed = self.ngrams.compose(word) if self.ngrams is not None else None
        return None if composed is None else _readonly(composed)

    def vector(self, word: str) -> np.ndarray:
        """The ``(dim,)`` read-only vector of ``word`` (composed from n-grams when the table
        has them and lacks the word); an unknown word raises with close keys suggested."""
        v = self.lookup(word)
        if v is None:
            raise UnknownWordError(word, self.suggest(word), where=f"the table {self.name!r}")
        return v

    def suggest(self, word: str, n: int = 3) -> list[str]:
        """Keys that look like ``word`` (case variants first, then close spellings)."""
        out = [v for v in (word.lower(), word.capitalize(), word.upper()) if v != word and v in self]
        if self._spellings is None:  # the keys by (first letter, length), so that a word's close
            self._spellings = {}  # spellings are looked for among a few thousand keys, not 400,000
            for k in self._keys:
                self._spellings.setdefault((k[:1].lower(), len(k)), []).append(k)
        first = word[:1].lower()
        pool = [k for size in range(len(word) - 2, len(word) + 3)
                for k in self._spellings.get((first, size), ())]
        out += [k for k in difflib.get_close_matches(word, pool, n=n, cutoff=0.7) if k not in out]
        return out[:n]

    # -- similarity ------------------------------------------------------------------------
    def similarity(self, a: str, b: str) -> float:
        """Cosine between the vectors of two words."""
        return cosine(self.vector(a), self.vector(b))

    def _query_vector(self, query: str | np.ndarray) -> np.ndarray:
        if isinstance(query, str):
            return self.vector(query)
        q = np.asarray(query, dtype=np.float32)
        if q.shape != (self.dim,):
            raise DimensionError(f"query vector has shape {q.shape}; this table needs ({self.dim},)")
        return q

    def cosines(self, query: str | np.ndarray) -> np.ndarray:
        """``(n,)`` cosine of ``query`` (a word or a vector) with every key."""
        q = self._query_vector(query)
        nq = float(_norms(q[None])[0])
        if nq == 0:
            what = f"the vector of {query!r}" if isinstance(query, str) else "the query vector"
            raise ZeroVectorError(f"{what} is all zeros, so its cosine with any word is undefined; "
                                  "ask about another word")
        return self.unit_vectors @ (q.astype(np.float64) / nq).astype(np.float32)

    def most_similar(
        self, query: str | np.ndarray, k: int = 10, *, exclude: Iterable[str] = ()
    ) -> list[tuple[str, float]]:
        """The ``k`` keys most cosine-similar to ``query`` (a word is excluded from its own list).

        >>> t = EmbeddingTable(["a", "b", "c"], [[1, 0], [1, 0.1], [0, 1]])
        >>> [w for w, _ in t.most_similar(np.array([1.0, 0.0]), k=2)]
        ['a', 'b']
        >>> [w for w, _ in t.most_similar("a", k=1, exclude=["b"])]
        ['c']
        """
        sims = self.cosines(query)
        skip = {self.index(w) for w in exclude if w in self}
        if isinstance(query, str) and query in self:
            skip.add(self.index(query))
        return self._top(sims, k, skip)

    def _top(self, scores: np.ndarray, k: int, skip: set[int]) -> list[tuple[str, float]]:
        k = check_int("k", k, low=1)
        scores = scores.astype(np.float64, copy=True)
        if skip:
            scores[list(skip)] = -np.inf
        k = min(k, len(scores) - len(skip))
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self._keys[i], float(scores[i])) for i in top]

    def analogy(
        self, a: str, b: str, c: str, *, k: int = 1, method: str = "3cosadd",
        restrict: int | None = None,
    ) -> list[tuple[str, float]]:
        """``a`` is to ``b`` as ``c`` is to ...? (``man : king :: woman : queen``).

        ``3cosadd`` ranks by cos(d, b - a + c) on unit vectors (Mikolov et al. 2013, as
        gensim's ``most_similar(positive=[b, c], negative=[a])``); ``3cosmul`` by
        cos(d,b)·cos(d,c) / (cos(d,a) + ε) with cosines shifted to [0, 1] (ε = 0.001, Levy &
        Goldberg 2014; gensim's ``most_similar_cosmul`` uses 1e-6, which changes
        the scores but rarely the answer). ``a``, ``b`` and ``c`` are never answers; ``restrict`` keeps only
        the first ``restrict`` keys as candidates (tables are usually frequency-sorted).

        >>> t = EmbeddingTable(["man", "king", "woman", "queen", "apple"],
        ...                    [[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1], [1, -1, 1]])
        >>> t.analogy("man", "king", "woman")[0][0]
        'queen'
        >>> t.analogy("man", "king", "woman", method="3cosmul")[0][0]
        'queen'
        """
        check_choice("analogy method", method, ANALOGY_METHODS)
        given = [self.vector(w).astype(np.float64) for w in (a, b, c)]  # (composed for a fastText table)
        norms = [float(np.linalg.norm(v)) for v in given]
        if min(norms) == 0:
            raise ZeroVectorError(f"one of {a!r}, {b!r}, {c!r} has a zero vector; no analogy is defined")
        ua, ub, uc = (v / n for v, n in zip(given, norms))
        unit = self.unit_vectors
        if method == "3cosadd":
            target = ub - ua + uc
            norm = float(np.linalg.norm(target))
            scores = unit @ (target / norm) if norm > 0 else np.zeros(len(self))
        else:
            ca, cb, cc = ((unit @ u + 1.0) / 2.0 for u in (ua, ub, uc))
            scores = cb * cc / (ca + COSMUL_EPSILON)
        skip = {self.key_to_index[w] for w in (a, b, c) if w in self}
        if restrict is not None:
            check_int("restrict", restrict, low=1, hint="the first (most frequent) keys to search")
            skip |= set(range(min(restrict, len(self)), len(self)))
        return self._top(np.asarray(scores), k, skip)

    # -- derived tables --------------------------------------------------------------------
    def restrict(self, words: Iterable[str], *, missing: str = "error") -> EmbeddingTable:
        """A new table with only ``words`` (in the order given).

        ``missing="skip"`` drops words the table lacks instead of raising.
        """
        check_choice("missing", missing, ("error", "skip"))
        words = list(dict.fromkeys(words))
        if missing == "skip":
            words = [w for w in words if w in self]
        rows = [self.index(w) for w in words]
        if not rows:
            raise EmptyInputError("restrict() kept no words; none of them are in the table")
        return EmbeddingTable(words, self._vectors[rows], name=self.name, ngrams=self.ngrams)

    # -- I/O ------------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | os.PathLike, *, format: str | None = None) -> EmbeddingTable:
        """Read a table: ``.npz``, word2vec text or binary, or GloVe text (auto-detected)."""
        from .vectors_io import read_table

        return read_table(path, format=format)

    def save(self, path: str | os.PathLike, *, format: str | None = None) -> None:
        """Write the table atomically; the format follows the suffix unless given."""
        from .vectors_io import write_table

        write_table(self, path, format=format)

    def to_gensim(self):
        """The same vectors as a gensim ``KeyedVectors``."""
        from gensim.models import KeyedVectors

        kv = KeyedVectors(self.dim)
        kv.add_vectors(list(self._keys), np.array(self._vectors))
        return kv

    @classmethod
    def from_gensim(cls, kv, *, name: str | None = None) -> EmbeddingTable:
        """Wrap a gensim ``KeyedVectors`` (copies its keys and vectors); a fastText one
        brings the n-gram vectors its vocabulary trained (see :class:`NgramVectors`)."""
        ngrams = None
        if getattr(kv, "vectors_ngrams", None) is not None and getattr(kv, "bucket", 0):
            rows = np.unique(np.concatenate([np.asarray(b, dtype=np.int64) for b in kv.buckets_word] or [[]]))
            ngrams = NgramVectors(kv.min_n, kv.max_n, kv.bucket, rows, kv.vectors_ngrams[rows])
        return cls(list(kv.index_to_key), kv.vectors, name=name, ngrams=ngrams)
