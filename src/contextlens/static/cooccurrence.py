"""Word-word co-occurrence counts, built vectorised from a streamed corpus.

For every pair of token positions ``i < j`` in one sentence (one line) with
``j - i <= window``, the matrix gets ``w(j - i)`` added at ``[t_i, t_j]`` *and* at
``[t_j, t_i]``: a symmetric window, ``w(d) = 1`` (``weighting="none"``) or ``1/d``
(``"harmonic"``, as GloVe counts). A word repeated within the window adds to the diagonal
(twice per pair of positions, once from each side). Windows never cross a line break.

Out-of-vocabulary tokens (rarer than ``min_count``, or cut by ``max_vocab``) **keep their
positions** and are simply not counted: they do not bring the words around them closer
together. This equals the plain loop::

    for tokens in sentences:
        for i in range(len(tokens)):
            for j in range(max(0, i - window), min(len(tokens), i + window + 1)):
                if j != i and tokens[i] in vocab and tokens[j] in vocab:
                    counts[tokens[i]][tokens[j]] += w(abs(i - j))

How it is built (never a per-token Python dict of dicts): the corpus is read once, in
blocks of whole lines, by one of two engines that give the same counts
(``engine=``):

- ``"numba"``, the default when numba is installed (``pip install 'contextlens[fast]'``):
  the compiled kernel of :mod:`~contextlens.static.kernel` tokenises each block,
  maps tokens to ids and adds up the window pairs as it reads, so its memory follows the
  number of distinct pairs, not the corpus length;
- ``"numpy"``: each block becomes one ``str.split`` and one C-level dictionary lookup per
  token, giving a compact int32 stream of provisional word ids (``-2`` marks a line
  break; spilled to a temporary file past 256 MiB). After the vocabulary is chosen the
  stream is re-labelled and, for each offset ``d`` in ``1..window``, positions ``i`` and
  ``i + d`` are paired with numpy in segments of about 130,000 positions
  (:class:`~contextlens.static.pairs.PairCounter`).

Both choose the vocabulary the same way, from the word frequencies: most frequent first,
ties alphabetical (or all alphabetical), then ``min_count`` and ``max_vocab``.

The worked example of the course text (16 short phrases, window 3, raw counts over the
alphabetical vocabulary):

>>> phrases = ["deposited money bank", "bank approved loan", "sat bank river"]
>>> co = cooccurrence_matrix(phrases, window=3, vocab_order="alphabetical")
>>> co.vocab[:4], co.n_tokens, co.n_sentences
(['approved', 'bank', 'deposited', 'loan'], 9, 3)
>>> co.counts[co.index("bank")].toarray().astype(int).tolist()
[[1, 0, 1, 1, 1, 1, 1]]
"""

from __future__ import annotations

import difflib
import functools
import itertools
import logging
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..corpus.reading import TOKENIZERS, ProgressHook, ReadStats, _lines, _sentences, iter_text_blocks
from ..errors import (
    EmptyInputError,
    InputError,
    MissingDependencyError,
    UnknownWordError,
    check_choice,
    check_int,
)
from ..vectors import EmbeddingTable
from .pairs import SEP as _SEP
from .pairs import PairCounter

__all__ = [
    "Cooccurrence",
    "KernelStatus",
    "prepare_kernel",
    "cooccurrence_matrix",
    "count_table",
    "dense_rows",
    "WEIGHTINGS",
    "VOCAB_ORDERS",
]

log = logging.getLogger(__name__)

WEIGHTINGS = ("none", "harmonic")
ENGINES = ("auto", "numba", "numpy")
VOCAB_ORDERS = ("frequency", "alphabetical")
_OOV = -1  # a token outside the vocabulary
_SEGMENT_TOKENS = 1 << 17  # pairs are counted over segments of about this many positions
_SPILL_BYTES = 256 << 20  # an id stream larger than this goes to a temporary file
MAX_DENSE_BYTES = 2 << 30  # dense_rows() refuses tables larger than this


@dataclass
class Cooccurrence:
    """Co-occurrence counts of a corpus.

    Attributes
    ----------
    vocab : the words, in row (and column) order.
    counts : ``(V, V)`` symmetric CSR matrix; integer counts, or float64 for
        ``weighting="harmonic"``.
    word_counts : ``(V,)`` int64 corpus frequency of each word.
    n_tokens, n_sentences : tokens (in and out of the vocabulary) and non-blank lines read.
    window, weighting : how the counts were made.
    read_stats : files read and lines skipped (``errors="skip"``).
    """

    vocab: list[str]
    counts: sp.csr_matrix
    word_counts: np.ndarray
    n_tokens: int
    n_sentences: int
    window: int = 5
    weighting: str = "none"
    read_stats: ReadStats = field(default_factory=ReadStats)

    @functools.cached_property
    def key_to_index(self) -> dict[str, int]:
        return {w: i for i, w in enumerate(self.vocab)}

    def __len__(self) -> int:
        return len(self.vocab)

    def index(self, word: str) -> int:
        """Row of ``word``; an unknown word raises with close words suggested."""
        try:
            return self.key_to_index[word]
        except KeyError:
            close = difflib.get_close_matches(word, self.vocab, n=3)
            raise UnknownWordError(word, close, "the co-occurrence vocabulary") from None

    def to_table(self, name: str | None = None) -> EmbeddingTable:
        """The raw count rows as a dense float32 :class:`EmbeddingTable` (``(V, V)``)."""
        return EmbeddingTable(self.vocab, dense_rows(self.counts), name=name or "counts")


def dense_rows(matrix: sp.spmatrix) -> np.ndarray:
    """``matrix`` as a dense float32 array, refusing one too large for memory.

    >>> dense_rows(sp.csr_matrix(np.eye(2))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    n_bytes = matrix.shape[0] * matrix.shape[1] * 4
    if n_bytes > MAX_DENSE_BYTES:
        raise InputError(
            f"a dense {matrix.shape[0]}x{matrix.shape[1]} table needs {n_bytes / 2**30:.1f} GiB; "
            f"lower max_vocab (or raise min_count), or use a dense method such as ppmi-svd"
        )
    return matrix.astype(np.float32).toarray()


# -- reading: text -> provisional id stream ---------------------------------------------------
def _sentinel(text: str) -> str:
    """A character that does not occur in ``text`` (so it cannot be part of a token)."""
    for code in itertools.chain([0], range(0xE000, 0xF900)):
        if chr(code) not in text:
            return chr(code)
    raise InputError("a corpus block uses every private-use character; split the file")


def _choose_vocab(counts: np.ndarray, min_count: int, max_vocab: int | None,
                  alphabetical: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Provisional ids of the kept words, most frequent first, ties alphabetical
    (``alphabetical(ids)`` sorts ids by their words)."""
    alpha = alphabetical(np.flatnonzero(counts >= min_count))
    order = alpha[np.argsort(-counts[alpha], kind="stable")]
    return order[:max_vocab] if max_vocab is not None else order


# -- counting: id stream -> sparse matrix ------------------------------------------------------
def _segments(arrays: Iterable[np.ndarray], remap: np.ndarray) -> Iterator[np.ndarray]:
    """Re-labelled stream pieces of about ``_SEGMENT_TOKENS`` (each ends at a line break)."""
    buf: list[np.ndarray] = []
    size = 0
    for a in arrays:
        buf.append(np.where(a >= 0, remap[np.maximum(a, 0)], a).astype(np.int32, copy=False))
        size += len(a)
        if size >= _SEGMENT_TOKENS:
            yield np.concatenate(buf)
            buf, size = [], 0
    if buf:
        yield np.concatenate(buf)


class _NumpyCounter:
    """The numpy engine: provisional word ids (first-seen order) and the id stream, read
    block by block and kept (or spilled); :meth:`matrix` pairs it with
    :class:`~contextlens.static.pairs.PairCounter` once the vocabulary is known."""

    def __init__(self, window: int, harmonic: bool) -> None:
        self.window, self.harmonic = window, harmonic
        self.index: defaultdict[str, int] = defaultdict(itertools.count().__next__)
        self.counts = np.zeros(0, np.int64)
        self.n_tokens = 0  # tokens read
        self.n_sentences = 0
        self._arrays: list[np.ndarray] = []
        self._files: list[Path] = []
        self._bytes = 0
        self._tmp: tempfile.TemporaryDirectory | None = None

    def add_block(self, text: str, lower: bool, tokenizer: str) -> None:
        if lower:
            text = text.lower()
        if not text.endswith("\n"):
            text += "\n"
        sep = _sentinel(text)
        if tokenizer == "whitespace":
            tokens = text.replace("\n", f" {sep} ").split()
        else:
            tokens = []
            for sentence in _sentences(_lines([text]), False, tokenizer):
                tokens += sentence
                tokens.append(sep)
        old = self.index.get(sep)
        self.index[sep] = _SEP
        try:
            ids = np.fromiter(map(self.index.__getitem__, tokens), np.int32, len(tokens))
        finally:
            if old is None:
                del self.index[sep]
            else:
                self.index[sep] = old
        is_tok = ids >= 0
        self.n_tokens += int(is_tok.sum())
        self.n_sentences += int(is_tok[0]) + int(np.count_nonzero(is_tok[1:] & ~is_tok[:-1]))
        block_counts = np.bincount(ids[is_tok], minlength=len(self.index))
        if len(self.counts) < len(block_counts):
            self.counts = np.concatenate(
                [self.counts, np.zeros(len(block_counts) - len(self.counts), np.int64)])
        self.counts[: len(block_counts)] += block_counts
        self._store(ids)

    def _store(self, ids: np.ndarray) -> None:
        self._bytes += ids.nbytes
        if self._tmp is None and self._bytes > _SPILL_BYTES:
            self._tmp = tempfile.TemporaryDirectory(prefix="contextlens-ids-")
            log.info("id stream over %d MiB: spilling it to %s", _SPILL_BYTES >> 20, self._tmp.name)
            for a in self._arrays:
                self._spill(a)
            self._arrays = []
        if self._tmp is None:
            self._arrays.append(ids)
        else:
            self._spill(ids)

    def _spill(self, ids: np.ndarray) -> None:
        path = Path(self._tmp.name, f"{len(self._files):08d}.npy")
        np.save(path, ids)
        self._files.append(path)

    def arrays(self) -> Iterator[np.ndarray]:
        yield from self._arrays
        for path in self._files:
            yield np.load(path)

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()

    def words(self) -> list[str]:
        return list(self.index)

    def alphabetical(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` in the alphabetical order of their words."""
        words = self.words()
        return np.array(sorted(ids.tolist(), key=words.__getitem__), dtype=np.int64)

    def matrix(self, rows: np.ndarray, int_dtype) -> sp.csr_matrix:
        """Counts of the words ``rows`` (provisional ids, in row order)."""
        by_freq = np.argsort(-self.counts[rows], kind="stable")  # the dense block wants these first
        remap = np.full(len(self.index), _OOV, np.int32)
        remap[rows[by_freq]] = np.arange(len(rows), dtype=np.int32)
        counter = PairCounter(len(rows), self.window, self.harmonic, int_dtype)
        for segment in _segments(self.arrays(), remap):
            counter.add_segment(segment)
        counts = counter.result()
        if np.any(by_freq != np.arange(len(rows))):
            back = np.argsort(by_freq)
            counts = counts[back][:, back].tocsr()
            counts.sort_indices()
        return counts


_KERNEL_FAILURE: list[Exception] = []  # why the compiled kernel is unavailable, once known


def _counter(engine: str, window: int, harmonic: bool):
    """The counting engine: the compiled kernel (``numba``) or the numpy path."""
    if engine != "numpy" and not _KERNEL_FAILURE:
        try:
            from .kernel import KernelCounter
        except ImportError as exc:
            _KERNEL_FAILURE.append(MissingDependencyError("numba", "fast", 'engine="numba"'))
            log.debug("counting with numpy: numba is not available (%s)", exc)
        except Exception as exc:  # numba is installed but cannot compile or load the kernel
            _KERNEL_FAILURE.append(exc)
            log.warning("counting with numpy: the compiled kernel failed to load (%s: %s)",
                        type(exc).__name__, exc)
        else:
            return KernelCounter(window, harmonic)
    if engine == "numba":
        raise _KERNEL_FAILURE[0]
    return _NumpyCounter(window, harmonic)


class KernelStatus(NamedTuple):
    """Whether the compiled counting kernel is ready (:func:`prepare_kernel`)."""

    ready: bool  # False: counting uses the numpy path
    compiled: bool  # compiled now (it was not in numba's cache)
    where: str | None  # the folder it is cached in
    why: str  # one line for a user


def prepare_kernel() -> KernelStatus:
    """Load the compiled counting kernel, compiling it into numba's on-disk cache if it is
    not there yet, so that no later ``static build`` compiles in front of its user (about
    20 s of CPU; run by ``contextlens models install``, hence ``make setup``)."""
    counter = _counter("auto", 1, False)
    if not isinstance(counter, _NumpyCounter):
        from . import kernel

        where = kernel.cache_location()
        done = "compiled and cached" if kernel.COMPILED_AT_IMPORT else "already compiled"
        return KernelStatus(True, kernel.COMPILED_AT_IMPORT, str(where) if where else None,
                            f"counting kernel: {done}"
                            + (f" in {where}" if where else " (numba cannot cache it)"))
    reason = _KERNEL_FAILURE[0] if _KERNEL_FAILURE else None
    return KernelStatus(False, False, None, f"counting kernel: not available ({reason}); counting uses numpy")


def cooccurrence_matrix(
    corpus,
    *,
    window: int = 5,
    weighting: str = "none",
    min_count: int = 1,
    max_vocab: int | None = None,
    vocab_order: str = "frequency",
    lower: bool = False,
    tokenizer: str = "whitespace",
    errors: str = "strict",
    progress: ProgressHook | None = None,
    engine: str = "auto",
) -> Cooccurrence:
    """Count how often each pair of words occurs within ``window`` tokens of each other.

    Parameters
    ----------
    corpus : a path, a directory, a list of paths, or an iterable of strings (see
        :mod:`contextlens.corpus.reading`); read once.
    window : the largest distance counted, on each side (``>= 1``).
    weighting : ``"none"`` (each pair counts 1) or ``"harmonic"`` (a pair at distance d
        counts 1/d).
    min_count : words rarer than this are out of the vocabulary (their positions stay).
    max_vocab : keep at most this many of the most frequent words.
    vocab_order : ``"frequency"`` (most frequent first, ties alphabetical) or
        ``"alphabetical"``.
    lower, tokenizer, errors : as in :func:`contextlens.corpus.reading.iter_sentences`.
    progress : a :data:`~contextlens.corpus.reading.ProgressHook`, called with the number of
        sentences read after each block.
    engine : ``"numba"`` (the compiled kernel of :mod:`~contextlens.static.kernel`;
        needs ``contextlens[fast]``), ``"numpy"``, or ``"auto"`` (numba when installed).
        Both give the same counts.
    """
    check_choice("weighting", weighting, WEIGHTINGS)
    check_choice("vocab_order", vocab_order, VOCAB_ORDERS)
    check_int("window", window, low=1)
    check_int("min_count", min_count, low=1)
    if max_vocab is not None:
        check_int("max_vocab", max_vocab, low=1)
    check_choice("tokenizer", tokenizer, TOKENIZERS)
    check_choice("engine", engine, ENGINES)
    stats = ReadStats()
    blocks = iter_text_blocks(corpus, errors=errors, stats=stats)
    counter = _counter(engine, window, weighting == "harmonic")
    try:
        for text in blocks:
            counter.add_block(text, lower, tokenizer)
            if progress is not None:
                progress(counter.n_sentences)
        if counter.n_tokens == 0:
            raise EmptyInputError("the corpus has no tokens")
        words, all_counts = counter.words(), counter.counts
        rows = _choose_vocab(all_counts, min_count, max_vocab, counter.alphabetical)
        if len(rows) == 0:
            raise EmptyInputError(
                f"no word occurs at least min_count={min_count} times (the most frequent "
                f"occurs {int(all_counts.max())} times); lower min_count"
            )
        if vocab_order == "alphabetical":
            rows = counter.alphabetical(rows)
        vocab = list(map(words.__getitem__, rows.tolist()))
        int_dtype = np.int32 if 2 * window * counter.n_tokens < 2**31 else np.int64
        counts = counter.matrix(rows, int_dtype)
    finally:
        counter.close()
    log.info(
        "co-occurrence counts (%s): %d words (of %d types), %d nonzero pairs, %d tokens, %d lines, "
        "window %d (%s)", type(counter).__name__, len(rows), len(words), counts.nnz,
        counter.n_tokens, counter.n_sentences, window, weighting,
    )
    return Cooccurrence(
        vocab=vocab, counts=counts, word_counts=all_counts[rows], n_tokens=counter.n_tokens,
        n_sentences=counter.n_sentences, window=window, weighting=weighting, read_stats=stats,
    )


def count_table(corpus, window: int = 5, **kw) -> EmbeddingTable:
    """Raw co-occurrence count vectors as an :class:`EmbeddingTable` (one dense float32
    row over the vocabulary per word). ``**kw`` go to :func:`cooccurrence_matrix`.

    >>> t = count_table(["deposited money bank", "sat bank river"], window=3,
    ...                 vocab_order="alphabetical")
    >>> t.keys
    ('bank', 'deposited', 'money', 'river', 'sat')
    >>> t.vector("bank").tolist()
    [0.0, 1.0, 1.0, 1.0, 1.0]
    """
    return cooccurrence_matrix(corpus, window=window, **kw).to_table()
