"""PPMI (with smoothing and shift) by hand, and the SVD embeddings' algebra."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from contextlens.errors import EmptyInputError, InputError, UnknownOptionError
from contextlens.static.cooccurrence import cooccurrence_matrix
from contextlens.static.ppmi import ppmi, svd_embeddings


def test_2x2_by_hand_with_context_smoothing():
    x = np.array([[0, 2], [2, 4]])
    pa = np.array([2**0.75, 6**0.75]) / (2**0.75 + 6**0.75)  # smoothed P(c)
    expected = [[0.0, math.log(0.25 / (0.25 * pa[1]))], [math.log(0.25 / (0.75 * pa[0])), 0.0]]
    np.testing.assert_allclose(ppmi(x).toarray(), expected)
    assert ppmi(x).toarray()[0, 1] == pytest.approx(0.3637, abs=1e-4)


def test_3x3_by_hand_with_shift_and_no_smoothing():
    x = np.array([[1, 2, 0], [2, 0, 3], [0, 3, 1]])
    # N = 12, row and column sums 3, 5, 4: PMI = log(x * 12 / (row * col)); shift k = 1.5
    # (0,0): log(12/9) < log 1.5 -> 0; (0,1): log(24/15 / 1.5); (1,2): log(36/20 / 1.5); (2,2) < 0
    a, b = math.log(1.6 / 1.5), math.log(1.8 / 1.5)
    expected = [[0, a, 0], [a, 0, b], [0, b, 0]]
    np.testing.assert_allclose(ppmi(x, alpha=1.0, shift=1.5).toarray(), expected)
    unshifted = ppmi(x, alpha=1.0).toarray()
    assert unshifted[0, 0] == pytest.approx(math.log(12 / 9))


def test_ppmi_is_sparse_nonnegative_and_accepts_a_cooccurrence():
    co = cooccurrence_matrix(["a b c", "a b", "c d"], window=1)
    m = ppmi(co)
    assert sp.issparse(m) and m.shape == co.counts.shape
    assert m.nnz <= co.counts.nnz and (m.data > 0).all()


def test_ppmi_bad_input():
    with pytest.raises(EmptyInputError):
        ppmi(np.zeros((2, 2)))
    with pytest.raises(InputError, match="negative"):
        ppmi(np.array([[1, -1], [0, 1]]))
    with pytest.raises(InputError, match="alpha"):
        ppmi(np.eye(2), alpha=0)
    with pytest.raises(InputError, match="shift"):
        ppmi(np.eye(2), shift=0.5)


@pytest.fixture(scope="module")
def matrix():
    rng = np.random.default_rng(3)
    return sp.random(60, 50, density=0.2, random_state=rng, format="csr")


def test_eigenvalue_weighting(matrix):
    u, s, _ = np.linalg.svd(matrix.toarray(), full_matrices=False)
    w0 = svd_embeddings(matrix, 5, p=0.0)
    w1 = svd_embeddings(matrix, 5, p=1.0)
    half = svd_embeddings(matrix, 5)
    np.testing.assert_allclose(w0.T @ w0, np.eye(5), atol=1e-5)  # U has orthonormal columns
    np.testing.assert_allclose(np.linalg.norm(w1, axis=0), s[:5], rtol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(half, axis=0), np.sqrt(s[:5]), rtol=1e-5)
    np.testing.assert_allclose(np.abs(w0), np.abs(u[:, :5]), atol=1e-5)


@pytest.mark.parametrize("solver", ["randomized", "arpack"])
def test_solvers_agree_with_the_exact_svd(solver):
    rng = np.random.default_rng(0)
    u, _ = np.linalg.qr(rng.normal(size=(60, 30)))
    v, _ = np.linalg.qr(rng.normal(size=(50, 30)))
    spectrum = np.array([10.0, 8, 6, 4] + [0.5 / (i + 1) for i in range(26)])
    matrix = sp.csr_matrix(u * spectrum @ v.T)  # well separated leading singular values
    exact = svd_embeddings(matrix, 4, p=1.0, solver="dense")
    approx = svd_embeddings(matrix, 4, p=1.0, solver=solver, seed=1)
    np.testing.assert_allclose(approx, exact, atol=2e-3)  # signs fixed the same way


def test_deterministic_and_signs_fixed(matrix):
    a = svd_embeddings(matrix, 3, solver="randomized", seed=7)
    b = svd_embeddings(matrix, 3, solver="randomized", seed=7)
    np.testing.assert_array_equal(a, b)
    rows = np.abs(a).argmax(axis=0)
    assert (a[rows, range(3)] > 0).all()


def test_svd_bad_input(matrix):
    with pytest.raises(InputError, match="at most 50"):
        svd_embeddings(matrix, 51)
    with pytest.raises(InputError, match="dim must be a whole number from 1 to 50, got 0"):
        svd_embeddings(matrix, 0)
    with pytest.raises(InputError, match=r"p must be a finite number from 0 to 1, got 2"):
        svd_embeddings(matrix, 2, p=2)
    with pytest.raises(UnknownOptionError, match="randomized"):
        svd_embeddings(matrix, 2, solver="lanczos")
