"""fastText's character n-grams: which n-grams a word has, their hash, and the trained
n-gram vectors a table keeps to compose a vector for a word it lacks
(:meth:`contextlens.vectors.EmbeddingTable.lookup`).

>>> ng = NgramVectors(3, 4, 2_000_000, [fasttext_hash(b"ban") % 2_000_000], [[1.0, 2.0]])
>>> [g.decode() for g in fasttext_ngrams("banks", 3, 3)], ng.compose("banks").tolist()
(['<ba', 'ban', 'ank', 'nks', 'ks>'], [1.0, 2.0])
"""

from __future__ import annotations

import numpy as np

from .errors import DimensionError, InputError

__all__ = ["NgramVectors", "fasttext_ngrams", "fasttext_hash"]


def fasttext_ngrams(word: str, min_n: int, max_n: int) -> list[bytes]:
    """The character n-grams fastText hashes for ``word``: of ``<word>`` in UTF-8, every run
    of ``min_n``..``max_n`` characters (never a lone ``<`` or ``>``), as Facebook's
    ``Dictionary::computeSubwords`` and gensim's ``compute_ngrams_bytes``.

    >>> [g.decode() for g in fasttext_ngrams("bank", 3, 4)]
    ['<ba', '<ban', 'ban', 'bank', 'ank', 'ank>', 'nk>']
    """
    data = f"<{word}>".encode()
    starts = [i for i, b in enumerate(data) if b & 0xC0 != 0x80]  # where characters begin
    ends = starts[1:] + [len(data)]
    out = []
    for a, i in enumerate(starts):
        for n in range(1, max_n + 1):
            if a + n > len(starts):
                break
            j = ends[a + n - 1]
            if n >= min_n and not (n == 1 and (i == 0 or j == len(data))):
                out.append(data[i:j])
    return out


def fasttext_hash(data: bytes) -> int:
    """fastText's 32-bit FNV-1a hash of an n-gram, bytes sign-extended as C ``char`` (as
    Facebook's ``Dictionary::hash`` and gensim's ``ft_hash_bytes``).

    >>> fasttext_hash(b"<ba"), fasttext_hash("é".encode())
    (1671058126, 1023043777)
    """
    h = 2166136261
    for b in data:
        h = ((h ^ ((b - 256 if b > 127 else b) & 0xFFFFFFFF)) * 16777619) & 0xFFFFFFFF
    return h


class NgramVectors:
    """fastText's character n-gram vectors: ``rows`` (sorted bucket numbers) and their
    ``vectors`` ``(len(rows), dim)``, for n-grams of ``min_n``..``max_n`` characters hashed
    into ``bucket`` buckets.

    Only the buckets some vocabulary word uses are kept (the others were never trained:
    gensim would hand out their random initial values). A word's composed vector is the
    mean of its n-grams' vectors, each n-gram counted as often as it occurs, as gensim's
    ``FastTextKeyedVectors.get_vector`` for a word it lacks, over the kept buckets.

    >>> ng = NgramVectors(3, 3, 10, [fasttext_hash(b"<ab") % 10], [[2.0, 0.0]])
    >>> ng.compose("ab").tolist(), ng.compose("zz") is None
    ([2.0, 0.0], True)
    """

    def __init__(self, min_n: int, max_n: int, bucket: int, rows, vectors):
        self.min_n, self.max_n, self.bucket = int(min_n), int(max_n), int(bucket)
        rows = np.asarray(rows, dtype=np.int64)  # (n,)
        vectors = np.array(vectors, dtype=np.float32, order="C")  # (n, dim)
        if not 1 <= self.min_n <= self.max_n or self.bucket < 1:
            raise InputError(f"n-grams need 1 <= min_n <= max_n and bucket >= 1, "
                             f"got {min_n}, {max_n}, {bucket}")
        if rows.ndim != 1 or vectors.ndim != 2 or len(rows) != len(vectors):
            raise DimensionError(f"n-gram rows {rows.shape} and vectors {vectors.shape} do not match")
        order = np.argsort(rows, kind="stable")
        self.rows, self.vectors = rows[order], vectors[order]
        distinct = not np.any(np.diff(self.rows) == 0)
        if len(rows) and (not distinct or self.rows[0] < 0 or self.rows[-1] >= self.bucket):
            raise InputError(f"n-gram rows must be distinct bucket numbers 0..{self.bucket - 1}")
        self.rows.flags.writeable = self.vectors.flags.writeable = False

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def compose(self, word: str) -> np.ndarray | None:
        """The mean vector of ``word``'s trained n-grams, or None when it has none."""
        grams = fasttext_ngrams(word, self.min_n, self.max_n)
        hashes = np.array([fasttext_hash(g) % self.bucket for g in grams], dtype=np.int64)
        where = np.searchsorted(self.rows, hashes)
        last = len(self.rows) - 1
        found = where[(where <= last) & (self.rows[np.minimum(where, last)] == hashes)]
        if not len(found):
            return None
        return self.vectors[found].mean(axis=0)
