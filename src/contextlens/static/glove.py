"""GloVe (Pennington, Socher & Manning 2014), trained with numpy.

Minimises the weighted least squares

    J = Σ_ij f(X_ij) (w_i · w̃_j + b_i + b̃_j − log X_ij)²,
    f(x) = (x / x_max)^α if x < x_max else 1

over the nonzero entries of a co-occurrence matrix ``X`` (usually the 1/distance-weighted,
window-10 counts the reference implementation uses: ``cooccurrence_matrix(corpus,
window=10, weighting="harmonic")``).

Training follows the reference C code (``glove.c``): vectors and biases start
uniform in (−0.5, 0.5) / dim, AdaGrad with squared-gradient sums starting at 1, per-entry
gradients clipped to ±100, the entries shuffled every epoch, the reported cost
``½ Σ f·diff²`` divided by the number of entries. The loop is vectorised over mini-batches
of entries: a batch's gradients for a repeated row are summed (``np.bincount``), and the
squared-gradient sum is updated before the step, which keeps large batches stable.

>>> import numpy as np
>>> X = np.array([[0, 8, 1], [8, 0, 1], [1, 1, 0]], dtype=float)
>>> model = GloVe(dim=2, epochs=50, seed=0).fit(X)
>>> len(model.loss_history_), model.vectors_.shape
(50, (3, 2))
>>> bool(model.loss_history_[-1] < model.loss_history_[0])
True
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from ..errors import DimensionError, EmptyInputError, InputError, check_choice, check_float, check_int
from ..vectors import EmbeddingTable

__all__ = ["GloVe", "VECTOR_CHOICES"]

log = logging.getLogger(__name__)

VECTOR_CHOICES = ("sum", "word")


class GloVe:
    """GloVe word vectors, scikit-learn style: ``GloVe(dim=50).fit(cooccurrence)``.

    Parameters
    ----------
    dim : vector size.
    epochs : passes over the nonzero entries (the reference uses 25 below 300 dims).
    x_max, alpha : the weighting function f.
    learning_rate : AdaGrad's initial step (0.05, as the reference).
    batch_size : entries per vectorised update.
    vectors : ``"sum"`` (``W + W̃``, the reference's ``-model 2``) or ``"word"`` (``W``).
    grad_clip : per-entry gradient clip.
    seed : seeds initialisation and shuffling.

    Attributes (after ``fit``)
    --------------------------
    vectors_ : ``(V, dim)`` float32 final vectors; ``word_vectors_``, ``context_vectors_``,
    ``word_biases_``, ``context_biases_`` : the parameters; ``loss_history_`` : mean cost per
    entry, one per epoch; ``vocab_`` : the words (when fit on a Cooccurrence) or None.
    """

    def __init__(self, dim: int = 50, epochs: int = 25, x_max: float = 100.0,
                 alpha: float = 0.75, learning_rate: float = 0.05, batch_size: int = 8192,
                 vectors: str = "sum", grad_clip: float = 100.0, seed: int = 0):
        self.dim = dim
        self.epochs = epochs
        self.x_max = x_max
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.vectors = vectors
        self.grad_clip = grad_clip
        self.seed = seed

    def _check(self) -> None:
        check_choice("vectors", self.vectors, VECTOR_CHOICES)
        check_int("dim", self.dim, low=1, high=10_000)
        check_int("epochs", self.epochs, low=1, high=10_000)
        check_int("batch_size", self.batch_size, low=1, high=1 << 24)
        check_int("seed", self.seed, low=0, high=2**32 - 1)
        check_float("x_max", self.x_max, low=1e-6, high=1e12,
                    hint="the count where the weight reaches 1 (100 in GloVe)")
        check_float("alpha", self.alpha, low=1e-3, high=10.0, hint="the weighting exponent (0.75 in GloVe)")
        check_float("learning_rate", self.learning_rate, low=1e-12, high=10.0)
        check_float("grad_clip", self.grad_clip, low=1e-6, high=1e12)

    def fit(self, cooccurrence, progress: Callable[[int], None] | None = None) -> GloVe:
        """Train on a :class:`~contextlens.static.cooccurrence.Cooccurrence` or a square
        (sparse or dense) count matrix; returns ``self``. ``progress(epochs_done)`` is called
        after each epoch."""
        self._check()
        self.vocab_ = getattr(cooccurrence, "vocab", None)
        m = sp.coo_matrix(getattr(cooccurrence, "counts", cooccurrence), dtype=np.float64)
        if m.shape[0] != m.shape[1]:
            raise DimensionError(f"GloVe needs a square word-word matrix, got shape {m.shape}")
        m.sum_duplicates()
        keep = m.data > 0
        if not keep.any():
            raise EmptyInputError("the co-occurrence matrix has no positive entry to fit")
        if (m.data < 0).any():
            raise InputError("co-occurrence counts must not be negative")
        rows, cols, x = m.row[keep].astype(np.int64), m.col[keep].astype(np.int64), m.data[keep]
        log_x = np.log(x).astype(np.float32)
        weight = np.where(x < self.x_max, (x / self.x_max) ** self.alpha, 1.0).astype(np.float32)
        n_words, dim, n = m.shape[0], self.dim, len(x)
        rng = np.random.default_rng(self.seed)

        def init(*shape):  # uniform(-0.5, 0.5) / dim, as glove.c
            return (rng.random(shape, np.float32) - 0.5) / dim

        # word vectors, context vectors, word biases, context biases; AdaGrad sums start at 1
        w, c, bw, bc = init(n_words, dim), init(n_words, dim), init(n_words), init(n_words)
        self._gradsq = [np.ones_like(a) for a in (w, c, bw, bc)]
        self.loss_history_ = []
        for epoch in range(self.epochs):
            order = rng.permutation(n)
            i, j, lx, wt = rows[order], cols[order], log_x[order], weight[order]
            cost = 0.0
            for s in range(0, n, self.batch_size):
                e = s + self.batch_size
                cost += self._step(w, c, bw, bc, i[s:e], j[s:e], lx[s:e], wt[s:e])
            self.loss_history_.append(cost / n)
            log.debug("GloVe epoch %d/%d: cost %.6f", epoch + 1, self.epochs, cost / n)
            if progress is not None:
                progress(epoch + 1)
        del self._gradsq
        log.info("GloVe: %d words, %d entries, dim %d, %d epochs, final cost %.6f",
                 n_words, n, dim, self.epochs, self.loss_history_[-1])
        self.word_vectors_, self.context_vectors_ = w, c
        self.word_biases_, self.context_biases_ = bw, bc
        self.vectors_ = w + c if self.vectors == "sum" else w.copy()
        self.n_entries_ = n
        return self

    def _step(self, w, c, bw, bc, i, j, log_x, weight) -> float:
        """One AdaGrad step on a batch of entries (i, j); returns the batch's cost."""
        wi, cj = w[i], c[j]  # (B, dim)
        diff = np.einsum("bd,bd->b", wi, cj) + bw[i] + bc[j] - log_x  # (B,)
        fdiff = weight * diff
        cost = 0.5 * float(fdiff @ diff)
        clip = self.grad_clip
        grad_w = np.clip(fdiff[:, None] * cj, -clip, clip)  # d cost / d w_i, per entry
        grad_c = np.clip(fdiff[:, None] * wi, -clip, clip)  # d cost / d c_j
        grad_b = np.clip(fdiff, -clip, clip)  # d cost / d b_i = d cost / d b_j
        gs_w, gs_c, gs_bw, gs_bc = self._gradsq
        self._adagrad(w, bw, gs_w, gs_bw, i, grad_w, grad_b)
        self._adagrad(c, bc, gs_c, gs_bc, j, grad_c, grad_b)
        return cost

    def _adagrad(self, vec, bias, gs_vec, gs_bias, idx, grad, grad_b) -> None:
        """Sum each touched row's gradients, add their squares to its AdaGrad sums, step."""
        b = len(idx)
        # a (V, B) 0/1 matrix whose product sums each row's gradients (scipy, linear time),
        # kept to the rows this batch touches
        summer = sp.csr_matrix((np.ones(b, np.float32), (idx, np.arange(b))), shape=(len(vec), b))
        rows = np.flatnonzero(np.diff(summer.indptr))
        summer = summer[rows]
        g, gb = summer @ grad, summer @ grad_b
        sq = gs_vec[rows] + summer @ (grad * grad)
        sq_b = gs_bias[rows] + summer @ (grad_b * grad_b)
        step, step_b = g / np.sqrt(sq), gb / np.sqrt(sq_b)
        gs_vec[rows], gs_bias[rows] = sq, sq_b
        if np.isfinite(step).all() and np.isfinite(step_b).all():
            vec[rows] -= self.learning_rate * step
            bias[rows] -= self.learning_rate * step_b

    def to_table(self, keys=None, name: str = "glove") -> EmbeddingTable:
        """The fitted vectors as an :class:`EmbeddingTable` (keys: the fitted vocabulary,
        or ``keys`` when fit on a bare matrix)."""
        if not hasattr(self, "vectors_"):
            raise InputError("this GloVe model is not fitted yet; call fit() first")
        keys = keys if keys is not None else self.vocab_
        if keys is None:
            raise InputError("the model was fit on a bare matrix; pass keys= (one word per row)")
        return EmbeddingTable(keys, self.vectors_, name=name)

    def __repr__(self) -> str:
        return (f"GloVe(dim={self.dim}, epochs={self.epochs}, x_max={self.x_max}, "
                f"alpha={self.alpha}, learning_rate={self.learning_rate}, seed={self.seed})")
