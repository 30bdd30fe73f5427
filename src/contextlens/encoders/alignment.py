"""Sub-word pieces → words: alignment, pooling weights, word-level attention, windows.

A transformer sees *pieces* (``bank``, ``##s``, ``Ġriver``, ``[CLS]``); contextlens speaks
of the *words* of :func:`contextlens.text.tokenize`. These pure functions (no torch) map
one to the other through the character spans a fast tokenizer reports for each piece
(``return_offsets_mapping=True``).

Rules (the transformer encoder documents the same):

- a piece belongs to every word its span overlaps, after trimming white space from the
  span (byte-level BPE reports ``" river"`` for ``Ġriver``); almost always that is one
  word, but a merged piece such as GPT-2's ``?"`` covers two;
- special pieces ([CLS], [SEP], BOS...) and pieces that cover only white space belong to
  no word; the attention words give them is the *special share*;
- a word no piece covers (the tokenizer dropped it, e.g. a control character in BERT's
  WordPiece) is *missing*: the encoder leaves it out of the Encoding and names it in
  ``meta["skipped"]``.

>>> from contextlens.text import tokenize
>>> text = "Didn't  bank?"
>>> words = tokenize(text)                      # Didn't | bank | ?
>>> offsets = [(0, 3), (3, 4), (4, 5), (5, 6), (6, 8), (8, 12), (12, 13)]  # Did ' n t ␣ ␣bank ?
>>> al = align_pieces(text, words, offsets)
>>> al.word_pieces, al.piece_words[4], al.missing
(((0, 1, 2, 3), (5,), (6,)), (), ())
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, check_choice, check_int
from ..text import Word

__all__ = [
    "POOLINGS",
    "pool_terms",
    "Alignment",
    "trim_span",
    "align_pieces",
    "pooling_weights",
    "attention_matrices",
    "aggregate_attention",
    "window_attention",
    "plan_windows",
    "assign_windows",
]

POOLINGS = ("mean", "first", "last")


@dataclass(frozen=True)
class Alignment:
    """Which words each piece covers and which pieces each word has.

    ``piece_words[p]``: the word indices piece ``p`` covers (empty for special and
    white-space pieces); ``word_pieces[w]``: the piece indices of word ``w``, ascending.
    """

    piece_words: tuple[tuple[int, ...], ...]
    word_pieces: tuple[tuple[int, ...], ...]

    @property
    def missing(self) -> tuple[int, ...]:
        """Words that got no piece at all."""
        return tuple(w for w, ps in enumerate(self.word_pieces) if not ps)

    def restrict(self, start: int, end: int, before: int = 0, after: int = 0) -> Alignment:
        """The alignment of pieces ``start:end`` alone, shifted by ``before`` special pieces
        in front and followed by ``after`` special pieces (a window of a long text).

        Words keep their indices; a word with no piece in the window has none here. It
        costs the window, not the text: only the window's words are stored.

        >>> al = Alignment(((0,), (0,), (1,), (2,)), ((0, 1), (2,), (3,)))
        >>> al.restrict(2, 4, before=1, after=1)
        Alignment(piece_words=((), (1,), (2,), ()), word_pieces=((), (1,), (2,)))
        """
        piece_words = ((),) * before + self.piece_words[start:end] + ((),) * after
        covered = [w for ws in piece_words for w in ws]
        first = min(covered, default=0)
        local: list[list[int]] = [[] for _ in range(max(covered, default=-1) + 1 - first)]
        for p, ws in enumerate(piece_words):
            for w in ws:
                local[w - first].append(p)
        return Alignment(piece_words, _WindowWords(len(self.word_pieces), first, tuple(map(tuple, local))))


class _WindowWords(Sequence):
    """``word_pieces`` of a window of a long text: every word keeps its index (there are
    ``n`` of them) but only words ``first..`` have pieces, and only they are stored."""

    def __init__(self, n: int, first: int, pieces: tuple[tuple[int, ...], ...]):
        self._n, self._first, self._pieces = n, first, pieces

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, w):
        if isinstance(w, slice):
            return tuple(self[i] for i in range(*w.indices(self._n)))
        if not -self._n <= w < self._n:
            raise IndexError(f"word {w} of {self._n}")
        i = (w % self._n) - self._first
        return self._pieces[i] if 0 <= i < len(self._pieces) else ()

    def __eq__(self, other) -> bool:
        return isinstance(other, Sequence) and tuple(self) == tuple(other)

    def __repr__(self) -> str:
        return repr(tuple(self))


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``start:end`` past white space at both ends (empty span: ``(start, start)``).

    >>> trim_span("on the bank", 2, 6)
    (3, 6)
    >>> trim_span("a  b", 1, 3)
    (3, 3)
    """
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def align_pieces(
    text: str,
    words: Sequence[Word],
    offsets: Sequence[tuple[int, int]],
    special: Sequence[int | bool] | None = None,
) -> Alignment:
    """Align pieces (their char ``offsets`` into ``text``) to ``words``.

    ``special[p]`` true marks piece ``p`` as a special token (belongs to no word, whatever
    its offsets). Runs in O(pieces + words) for the usual one-word pieces.

    >>> from contextlens.text import tokenize
    >>> text = 'the river?"'
    >>> ws = tokenize(text)                         # the | river | ? | "
    >>> al = align_pieces(text, ws, [(0, 0), (0, 3), (3, 9), (9, 11)], special=[1, 0, 0, 0])
    >>> al.piece_words
    ((), (0,), (1,), (2, 3))
    """
    ends = [w.end for w in words]
    piece_words: list[tuple[int, ...]] = []
    word_pieces: list[list[int]] = [[] for _ in words]
    for p, (a, b) in enumerate(offsets):
        if special is not None and special[p]:
            piece_words.append(())
            continue
        a, b = trim_span(text, int(a), int(b))
        covered = []
        w = bisect.bisect_right(ends, a)  # first word ending after a
        while a < b and w < len(words) and words[w].start < b:
            covered.append(w)
            word_pieces[w].append(p)
            w += 1
        piece_words.append(tuple(covered))
    return Alignment(tuple(piece_words), tuple(tuple(ps) for ps in word_pieces))


def pooling_weights(
    alignment: Alignment, pooling: str = "mean", words: Sequence[int] | None = None
) -> tuple[list[int], list[int], list[float]]:
    """Sparse pooling: triples ``(out_row, piece, weight)`` with
    ``vector[out_row] = Σ weight · piece_vector[piece]``.

    ``words`` chooses which words to pool (default: all), ``out_row`` counts them in that
    order. ``mean`` averages a word's pieces, ``first`` / ``last`` take one piece. A word
    without pieces gets no triple (its row stays zero): leave it out first.

    >>> al = Alignment(((), (0,), (0,), (1,)), ((1, 2), (3,)))
    >>> pooling_weights(al, "mean")
    ([0, 0, 1], [1, 2, 3], [0.5, 0.5, 1.0])
    >>> pooling_weights(al, "last", words=[1, 0])
    ([0, 1], [3, 2], [1.0, 1.0])
    """
    check_choice("pooling", pooling, POOLINGS)
    rows: list[int] = []
    cols: list[int] = []
    weights: list[float] = []
    for out, w in enumerate(range(len(alignment.word_pieces)) if words is None else words):
        pieces = alignment.word_pieces[w]
        if not pieces:
            continue
        if pooling == "first":
            pieces = pieces[:1]
        elif pooling == "last":
            pieces = pieces[-1:]
        share = 1.0 / len(pieces)
        for p in pieces:
            rows.append(out)
            cols.append(p)
            weights.append(share)
    return rows, cols, weights


def pool_terms(terms: np.ndarray, rows: np.ndarray, weights: np.ndarray, n_rows: int) -> np.ndarray:
    """Apply :func:`pooling_weights`' triples to gathered pieces: ``out[r] = Σ weight ·
    terms[t]`` over the terms ``t`` of row ``r``; ``rows`` never decrease (as
    ``pooling_weights`` gives them), a row with no term stays zero. One ``np.add.reduceat``:
    single-threaded, so it does not wait for threads a busy machine has descheduled
    (``torch.index_add_`` did, 28 % of an ONNX Runtime pass at load 12).

    terms : ``(n_terms, dim)``, the piece of each triple; returns ``(n_rows, dim)``.

    >>> terms = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> pool_terms(terms, np.array([0, 0, 2]), np.array([0.5, 0.5, 1.0]), 3)
    array([[2., 3.],
           [0., 0.],
           [5., 6.]], dtype=float32)
    """
    out = np.zeros((n_rows, terms.shape[1]), dtype=np.float32)
    if len(rows) == 0:
        return out
    if np.any(np.diff(rows) < 0):
        raise InputError("pooling rows must not decrease (give them in pooling_weights' order)")
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])  # first term of each row
    out[rows[starts]] = np.add.reduceat(terms * weights[:, None].astype(terms.dtype), starts, axis=0)
    return out


def attention_matrices(
    alignment: Alignment, rows: Sequence[int] | None = None, cols: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``query (rows, pieces)`` and ``key (pieces, cols + 1)`` for word-level attention.

    ``query[i]`` averages the pieces of word ``rows[i]`` (a word without pieces: a zero
    row); ``key[p]`` hands piece ``p``'s column to its words, split equally when it covers
    several, or to the last column (the special share) when it covers none (a share for a
    word outside ``cols`` goes there too). ``rows`` and ``cols`` default to every word;
    every row of ``key`` sums to 1, so the sum of an attention row over pieces is kept.

    >>> q, k = attention_matrices(Alignment(((), (0,), (0, 1)), ((1, 2), (2,))))
    >>> q.tolist(), k.tolist()
    ([[0.0, 0.5, 0.5], [0.0, 0.0, 1.0]], [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])
    >>> attention_matrices(Alignment(((), (0,), (0, 1)), ((1, 2), (2,))), rows=[1], cols=[1])[1].tolist()
    [[0.0, 1.0], [0.0, 1.0], [0.5, 0.5]]
    """
    rows = range(len(alignment.word_pieces)) if rows is None else rows
    cols = range(len(alignment.word_pieces)) if cols is None else cols
    n_pieces, column = len(alignment.piece_words), {w: j for j, w in enumerate(cols)}
    query = np.zeros((len(rows), n_pieces))  # (rows, pieces)
    key = np.zeros((n_pieces, len(column) + 1))  # (pieces, cols + special)
    for i, w in enumerate(rows):
        pieces = alignment.word_pieces[w]
        if pieces:
            query[i, list(pieces)] = 1.0 / len(pieces)
    for p, ws in enumerate(alignment.piece_words):
        if ws:
            for w in ws:
                key[p, column.get(w, len(column))] += 1.0 / len(ws)
        else:
            key[p, len(column)] = 1.0
    return query, key


def aggregate_attention(
    attention: np.ndarray, query: np.ndarray, key: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Piece attention ``(..., pieces, pieces)`` → word attention ``(..., words, words)``
    and the special share ``(..., words)``, in the attention's dtype (float32 at least).

    A query word's row is the mean of its pieces' rows; a key word's column is the sum of
    its pieces' columns; so each word row plus its special share sums to 1 when each piece
    row does. ``query`` and ``key`` are mostly zeros (a piece belongs to one word or two),
    so they are multiplied as sparse matrices: time and memory grow with the pieces, not
    with pieces x pieces x words.

    >>> att = np.array([[0.5, 0.25, 0.25], [0.2, 0.4, 0.4], [0.0, 0.5, 0.5]])
    >>> q, k = attention_matrices(Alignment(((), (0,), (1,)), ((1,), (2,))))
    >>> words, special = aggregate_attention(att, q, k)
    >>> words.tolist(), special.tolist()
    ([[0.4, 0.4], [0.5, 0.5]], [0.2, 0.0])
    """
    import scipy.sparse as sp

    dtype = np.result_type(attention.dtype, np.float32)
    q = sp.csr_matrix(query.astype(dtype))  # (words, pieces)
    kt = sp.csr_matrix(key.T.astype(dtype))  # (cols + 1, pieces)
    flat = np.asarray(attention, dtype=dtype).reshape(-1, *attention.shape[-2:])  # (..., pieces, pieces)
    out = np.empty((len(flat), kt.shape[0], len(query)), dtype=dtype)  # (..., cols + 1, words)
    for i, a in enumerate(flat):  # one matrix at a time: no copy of the whole stack
        out[i] = kt @ (q @ a).T
    mixed = out.swapaxes(-1, -2).reshape(*attention.shape[:-2], len(query), kt.shape[0])
    return mixed[..., :-1], mixed[..., -1]


def window_attention(attention: np.ndarray, alignment: Alignment,
                     rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray, list[int]]:
    """The word attention of words ``rows`` inside one window of a long text, from the
    window's piece attention ``(..., pieces, pieces)`` and its ``alignment`` (see
    :meth:`Alignment.restrict`): ``words (..., rows, cols)``, ``special (..., rows)`` and
    ``cols``, the words with a piece in the window, ascending. Words outside the window
    get no column: time and memory grow with the window, not with the text.

    >>> al = Alignment(((), (7,), (8,), ()), ((),) * 7 + ((1,), (2,)))  # words 7 and 8 of a long text
    >>> att = np.array([[0.4, 0.2, 0.2, 0.2], [0.1, 0.6, 0.2, 0.1], [0.1, 0.3, 0.5, 0.1], [0.25] * 4])
    >>> words, special, cols = window_attention(att, al, [8])
    >>> cols, words.round(3).tolist(), special.round(3).tolist()
    ([7, 8], [[0.3, 0.5]], [0.2])
    """
    cols = sorted({w for ws in alignment.piece_words for w in ws})
    words, special = aggregate_attention(attention, *attention_matrices(alignment, rows, cols))
    return words, special, cols


def _allowed_cuts(alignment: Alignment) -> list[bool]:
    """``ok[p]``: a window may start or end just before piece ``p`` without splitting a word."""
    n = len(alignment.piece_words)
    blocked = [0] * (n + 2)
    for pieces in alignment.word_pieces:
        if len(pieces) > 1:  # cuts strictly inside the word's first..last piece are blocked
            blocked[pieces[0] + 1] += 1
            blocked[pieces[-1] + 1] -= 1
    ok, depth = [], 0
    for p in range(n + 1):
        depth += blocked[p]
        ok.append(depth == 0)
    return ok


def plan_windows(
    alignment: Alignment, capacity: int, stride: int | None = None
) -> list[tuple[int, int]]:
    """Piece ranges ``[start, end)`` of at most ``capacity`` pieces covering every piece,
    overlapping, never splitting a word.

    Each window after the first starts about ``stride`` pieces (default ``capacity // 2``)
    after the previous start, at the nearest cut that keeps words whole, so consecutive
    windows overlap by about ``capacity - stride`` pieces.

    >>> al = Alignment(tuple((i,) for i in range(10)), tuple((i,) for i in range(10)))
    >>> plan_windows(al, 4)
    [(0, 4), (2, 6), (4, 8), (6, 10)]
    >>> plan_windows(al, 20)
    [(0, 10)]
    """
    n = len(alignment.piece_words)
    check_int("window capacity", capacity, low=1,
              hint="pieces a window holds (max_length less the special pieces)")
    stride = max(1, capacity // 2) if stride is None else check_int(
        "stride", stride, low=1, high=capacity,
        hint="pieces between window starts, at most the window capacity")
    if n <= capacity:
        return [(0, n)]
    ok = _allowed_cuts(alignment)
    windows: list[tuple[int, int]] = []
    start = 0
    while True:
        if start + capacity >= n:
            windows.append((start, n))
            return windows
        end = next((c for c in range(start + capacity, start, -1) if ok[c]), None)
        if end is None:
            word = next(w for w, ps in enumerate(alignment.word_pieces) if start in ps)
            raise InputError(
                f"word {word} has more pieces than a window holds ({capacity}); "
                "raise max_length"
            )
        windows.append((start, end))
        before = [c for c in range(start + 1, min(start + stride, end) + 1) if ok[c]]
        start = before[-1] if before else next(c for c in range(start + 1, end + 1) if ok[c])


def assign_windows(windows: Sequence[tuple[int, int]], alignment: Alignment) -> list[int]:
    """For each word, the window in which it is most central (ties: the earlier window).

    Centrality is the smaller of the pieces before the word and after it in the window;
    ``-1`` for a word without pieces. Windows come in order (as :func:`plan_windows` gives
    them), so each word looks only at the few windows around it: linear in the text.

    >>> al = Alignment(tuple((i,) for i in range(6)), tuple((i,) for i in range(6)))
    >>> assign_windows([(0, 4), (2, 6)], al)
    [0, 0, 0, 1, 1, 1]
    """
    assigned = []
    lo = 0  # the first window that can still hold a word (ends after its last piece)
    for pieces in alignment.word_pieces:
        if not pieces:
            assigned.append(-1)
            continue
        first, last = pieces[0], pieces[-1]
        while lo < len(windows) and windows[lo][1] <= last:
            lo += 1
        best, best_score, k = -1, -1, lo
        while k < len(windows) and windows[k][0] <= first:
            a, b = windows[k]
            if last < b and min(first - a, b - 1 - last) > best_score:
                best, best_score = k, min(first - a, b - 1 - last)
            k += 1
        assigned.append(best)
    return assigned
