"""How alike two layers are: linear CKA between the layers of one model, or of two models,
over the same word usages.

**Linear CKA** (Kornblith, Norouzi, Lee & Hinton 2019, "Similarity of Neural Network
Representations Revisited", ICML, eq. for the linear kernel): for representations
``X (n, p)`` and ``Y (n, q)`` of the same ``n`` examples, each column centred,

    CKA(X, Y) = ‖YᵀX‖²_F / (‖XᵀX‖_F · ‖YᵀY‖_F)

It is 1 for ``X`` against itself, symmetric, and unchanged by an orthogonal transform or an
isotropic scaling of either side (not by other invertible linear maps).

**Debiased** (``debiased=True``): ``‖YᵀX‖²_F`` and the two norms are replaced by the unbiased
HSIC estimator of Song et al. (2012, JMLR), as Nguyen, Raghu & Kornblith (2021, ICLR)
propose against the upward bias of CKA when ``n`` is not much larger than the width; in
feature space, with ``r_x`` the squared row norms of the centred ``X`` (as in Kornblith's
reference code):

    hsic(X, Y) = ‖YᵀX‖²_F − n/(n−2)·(r_x · r_y) + ‖X‖²_F·‖Y‖²_F / ((n−1)(n−2))
    CKA_debiased = hsic(X, Y) / √(hsic(X, X) · hsic(Y, Y))

(it can be slightly negative for unrelated representations; it needs n ≥ 4).

**Usages** (:func:`layer_cka`): every whitespace token of the sentences (a token's vector is
the mean of the words contextlens's tokenizer finds in it, :mod:`contextlens.encoders.tokenized`),
read through the evaluation cache (task ``cka``), so a second model pair over the same
sentences never encodes again; tokens that either model gives no vector are left out. By
default the sentences are :func:`corpus_sample`: a seeded sample of the shared corpora.

>>> import numpy as np
>>> x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
>>> round(linear_cka(x, x), 6), round(linear_cka(x, 3 * x[:, ::-1]), 6)
(1.0, 1.0)
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..bounds import PAIR_BLOCK, check_stack
from ..encoders.base import Encoder
from ..encoders.targets import check_texts
from ..errors import DimensionError, EmptyInputError, InputError, check_int
from .layerstack import cached_layers

__all__ = ["linear_cka", "cka_matrix", "layer_cka", "corpus_sample", "CkaResult", "CORPORA", "CACHE_TASK",
           "DEFAULT_SENTENCES"]

log = logging.getLogger(__name__)
CACHE_TASK = "cka"
CORPORA = ("corpora/brown_plain.txt", "corpora/abc_plain.txt", "corpora/movie_reviews_plain.txt")
DEFAULT_SENTENCES = 500
MIN_TOKENS, MAX_TOKENS = 5, 60  # the sample's sentence lengths, in whitespace tokens


class _Side:
    """One representation ``x (n, p)``, kept as given (float16 included: it is not copied),
    and the terms CKA needs of it. Its centred rows are made :data:`~contextlens.bounds.PAIR_BLOCK`
    numbers at a time (:meth:`block`), in float64, so comparing two layers holds two blocks,
    not two centred copies of the layers."""

    def __init__(self, x: np.ndarray, debiased: bool):
        self.x = x
        self.mean = x.mean(axis=0, dtype=np.float64)
        self.debiased = debiased
        step = _step(self, self)
        self.rows = np.concatenate([np.einsum("ij,ij->i", b, b)  # (n,) squared row norms, centred
                                    for b in (self.block(i, step) for i in range(0, len(x), step))])
        self.total = float(self.rows.sum())  # ‖X‖²_F
        self.norm = float(np.sqrt(max(self.hsic(self, _cross(self, self)), 0.0)))

    def block(self, start: int, step: int) -> np.ndarray:
        """Rows ``start:start + step``, centred, in float64."""
        return np.asarray(self.x[start : start + step], dtype=np.float64) - self.mean

    def hsic(self, other: _Side, xty: float) -> float:
        """The dot-product similarity ``‖YᵀX‖²_F``, or its debiased estimate."""
        if not self.debiased:
            return xty
        n = len(self.x)
        return (xty - n / (n - 2.0) * float(self.rows @ other.rows)
                + self.total * other.total / ((n - 1.0) * (n - 2.0)))


def _step(a: _Side, b: _Side) -> int:
    """Rows per block when comparing ``a`` and ``b``: PAIR_BLOCK numbers of the wider."""
    return max(1, PAIR_BLOCK // max(a.x.shape[1], b.x.shape[1], 1))


def _cross(a: _Side, b: _Side) -> float:
    """``‖YᵀX‖²_F`` of the centred ``a`` (X) and ``b`` (Y), the product summed over blocks
    of rows."""
    step = _step(a, b)
    product = np.zeros((a.x.shape[1], b.x.shape[1]))
    for start in range(0, len(a.x), step):
        x = a.block(start, step)
        product += x.T @ (x if b is a else b.block(start, step))
    return float(np.einsum("ij,ij->", product, product))


def _check(x: np.ndarray, y: np.ndarray, debiased: bool) -> None:
    if x.ndim != 2 or y.ndim != 2 or len(x) != len(y):
        raise DimensionError(f"CKA needs (n, p) and (n, q) matrices over the same n examples, got {x.shape} "
                             f"and {y.shape}")
    if len(x) < (4 if debiased else 2):
        raise EmptyInputError(f"CKA needs at least {4 if debiased else 2} examples, got {len(x)}")


def _cka(a: _Side, b: _Side) -> float:
    if a.norm == 0 or b.norm == 0:
        return float("nan")  # a constant representation: CKA is undefined
    return float(a.hsic(b, _cross(a, b)) / (a.norm * b.norm))


def _blocks(layer: np.ndarray) -> range:
    """Where the blocks of :data:`~contextlens.bounds.PAIR_BLOCK` numbers of ``layer``'s rows start."""
    return range(0, len(layer), max(1, PAIR_BLOCK // max(layer.shape[1], 1)))


def _keep_rows_with_vectors(layer: np.ndarray, keep: np.ndarray) -> None:
    """Clear ``keep`` where a row of ``layer`` holds a NaN (no vector), a block at a time.

    >>> keep = np.ones(3, dtype=bool)
    >>> _keep_rows_with_vectors(np.array([[1.0, 2], [np.nan, 0], [3, 4]]), keep)
    >>> keep.tolist()
    [True, False, True]
    """
    step = _blocks(layer).step
    for start in _blocks(layer):
        keep[start : start + step] &= ~np.isnan(layer[start : start + step]).any(axis=1)


def _move_kept_rows_forward(layer: np.ndarray, keep: np.ndarray) -> None:
    """Move the rows of ``layer`` that ``keep`` marks to its front, in order, in place (a block
    at a time: a row only ever moves to a lower index, so no row is overwritten unread).

    >>> x = np.array([[1.0], [2], [3], [4]])
    >>> _move_kept_rows_forward(x, np.array([False, True, False, True]))
    >>> x[:2].tolist()
    [[2.0], [4.0]]
    """
    step, to = _blocks(layer).step, 0
    for start in _blocks(layer):
        rows = start + np.flatnonzero(keep[start : start + step])
        layer[to : to + len(rows)] = layer[rows]
        to += len(rows)


def linear_cka(x: np.ndarray, y: np.ndarray, *, debiased: bool = False) -> float:
    """Linear CKA of ``x (n, p)`` and ``y (n, q)`` (see the module docstring); NaN when
    either is constant over the examples."""
    x, y = np.asarray(x), np.asarray(y)
    _check(x, y, debiased)
    return _cka(_Side(x, debiased), _Side(y, debiased))


def cka_matrix(xs: Sequence[np.ndarray], ys: Sequence[np.ndarray] | None = None, *,
               debiased: bool = False) -> np.ndarray:
    """``(len(xs), len(ys))`` linear CKA of every pair (``ys`` None: ``xs`` against
    themselves, computed once per pair, with 1 on the diagonal). Each representation is
    centred once. The products run on one BLAS thread: on a shared CPU the threads wait for
    each other (7 layers of 11,000 × 384: 8.3 s wall and 1.8 s CPU on one thread, 34.7 s and
    8.1 s on two, with the load at 15 on 2 cores).

    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=(20, 3)), rng.normal(size=(20, 5))
    >>> m = cka_matrix([a, b])
    >>> m.shape, bool(np.allclose(m, m.T)), bool(np.allclose(np.diag(m), 1.0))
    ((2, 2), True, True)
    """
    from threadpoolctl import threadpool_limits

    for x in [*xs, *(ys or [])]:
        _check(np.asarray(x), np.asarray(xs[0]), debiased)
    with threadpool_limits(limits=1):
        left = [_Side(x, debiased) for x in xs]
        if ys is None:
            out = np.eye(len(left))
            for i in range(len(left)):
                for j in range(i + 1, len(left)):
                    out[i, j] = out[j, i] = _cka(left[i], left[j])
                if left[i].norm == 0:
                    out[i, i] = float("nan")
            return out
        right = [_Side(y, debiased) for y in ys]
        return np.array([[_cka(a, b) for b in right] for a in left])


def corpus_sample(root: str | Path, n: int = DEFAULT_SENTENCES, *, seed: int = 0) -> list[str]:
    """``n`` sentences drawn uniformly without replacement (``numpy.random.default_rng(seed)``)
    from the lines of the shared corpora (:data:`CORPORA`, in that order) that hold
    :data:`MIN_TOKENS` to :data:`MAX_TOKENS` whitespace tokens; lines that are not UTF-8 are
    skipped. Returned in corpus order. The corpora are read twice (counting the lines, then
    taking the chosen ones): only the chosen lines are kept."""
    from ..corpus.reading import iter_lines

    check_int("sentences", n, low=2, high=10**6, hint="how many corpus sentences to sample")
    check_int("seed", seed, low=0, high=2**32 - 1)
    root = Path(root)
    paths = [root / c for c in CORPORA]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise InputError(f"the shared corpora are missing: {', '.join(missing)}; point --data-dir (or "
                         "CONTEXTLENS_DATA) at the shared data, or give your own --sentences FILE")

    def lines():  # the lines of the right length, read again on each call: nothing else is kept
        return (line for line in iter_lines(paths, errors="skip")
                if MIN_TOKENS <= len(line.split()) <= MAX_TOKENS)

    count = sum(1 for _ in lines())
    if count < n:
        raise InputError(f"the corpora hold only {count} sentences of {MIN_TOKENS}-{MAX_TOKENS} tokens; "
                         f"ask for at most that many")
    chosen = np.sort(np.random.default_rng(seed).choice(count, size=n, replace=False)).tolist()
    out: list[str] = []
    for i, line in enumerate(lines()):
        if i == chosen[len(out)]:
            out.append(" ".join(line.split()))
            if len(out) == n:
                break
    return out


@dataclass(frozen=True)
class CkaResult:
    """Linear CKA between every layer of ``models[0]`` (rows of ``matrix``) and every layer of
    ``models[1]`` (columns; the same model when one encoder was given), over ``n_words``
    token usages of ``n_sentences`` sentences."""

    models: tuple[str, str]
    layers: tuple[tuple[int, ...], tuple[int, ...]]
    matrix: tuple[tuple[float, ...], ...]
    n_words: int
    n_sentences: int
    missing: int
    debiased: bool
    sentences: str

    def as_dict(self) -> dict[str, Any]:
        """``{models, layers: [[...], [...]], matrix, n_words, n_sentences, missing, debiased,
        sentences}``."""
        return {"models": list(self.models), "layers": [list(self.layers[0]), list(self.layers[1])],
                "matrix": [list(r) for r in self.matrix], "n_words": self.n_words,
                "n_sentences": self.n_sentences, "missing": self.missing, "debiased": self.debiased,
                "sentences": self.sentences}


def layer_cka(
    encoder: Encoder, sentences: Sequence[str], *, other: Encoder | None = None, debiased: bool = False,
    use_cache: bool = True, cache_root=None, source: str = "given sentences",
) -> CkaResult:
    """Linear CKA between the layers of ``encoder`` (and those of ``other``, when given) over
    every whitespace token of ``sentences``; ``source`` says where the sentences came from
    (it is reported as is)."""
    from ..encoders.encoding_cache import EncodingCache
    from .probing.run import model_name

    sentences = check_texts(sentences)
    items = [(tuple(s.split()), i) for s in sentences for i in range(len(s.split()))]
    if not items:
        raise EmptyInputError("the sentences hold no tokens")
    encoders = [encoder] if other is None else [encoder, other]
    caches = [EncodingCache(enc, root=cache_root, enabled=use_cache) for enc in encoders]
    check_stack(caches, len(items), what="the sentences", unit="tokens",
                todo="give fewer sentences (cka --sample N, or fewer lines in --sentences)")
    layer_ids, stacks = [], []  # per encoder: its layer numbers and (layers, tokens, dim)
    t0 = time.perf_counter()
    for enc, cache in zip(encoders, caches):
        what = f"the vectors of the tokens ({model_name(enc)})"
        stacks.append(cached_layers(cache, CACHE_TASK, items, what=what))
        layer_ids.append(tuple(int(k) for k in cache.layer_ids))
    keep = np.ones(len(items), dtype=bool)
    for layer in (layer for stack in stacks for layer in stack):
        _keep_rows_with_vectors(layer, keep)
    n = int(keep.sum())
    if n < (4 if debiased else 2):
        raise InputError(f"only {n} tokens have a vector in every layer; give more sentences")
    if n < len(items):
        for layer in (layer for stack in stacks for layer in stack):
            _move_kept_rows_forward(layer, keep)
    log.info("CKA over %d of %d tokens (%.1f s to read or encode)", n, len(items), time.perf_counter() - t0)
    t0 = time.perf_counter()
    matrix = cka_matrix([layer[:n] for layer in stacks[0]],
                        None if other is None else [layer[:n] for layer in stacks[1]], debiased=debiased)
    log.info("CKA of %d x %d layers in %.1f s", len(stacks[0]), len(stacks[-1]), time.perf_counter() - t0)
    names = [model_name(e) for e in encoders]
    return CkaResult((names[0], names[-1]), (layer_ids[0], layer_ids[-1]),
                     tuple(tuple(float(v) for v in row) for row in matrix), n, len(sentences), len(items) - n,
                     bool(debiased), source)
