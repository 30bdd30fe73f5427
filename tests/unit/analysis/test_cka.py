"""Linear CKA (Kornblith et al. 2019) and its debiased estimator: the properties the paper
states, small cases worked by hand, and the debiased form against Song et al.'s unbiased
HSIC computed from the Gram matrices."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextlens.analysis.cka import cka_matrix, corpus_sample, linear_cka
from contextlens.errors import DimensionError, EmptyInputError, InputError


def _orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    q, r = np.linalg.qr(rng.normal(size=(d, d)))
    return q * np.sign(np.diag(r))


def test_one_dimension_is_the_squared_correlation_by_hand():
    # x centred: [-1, 0, 1]; y = [1, 0, 0] centred: [2/3, -1/3, -1/3]
    # (xᵀy)² = 1, ‖x‖² = 2, ‖y‖² = 2/3: CKA = 1 / (2 · 2/3) = 3/4
    x, y = np.array([[1.0], [2], [3]]), np.array([[1.0], [0], [0]])
    assert linear_cka(x, y) == pytest.approx(0.75)
    assert linear_cka(x, y) == pytest.approx(np.corrcoef(x[:, 0], y[:, 0])[0, 1] ** 2)


def test_two_by_one_by_hand():
    # X's columns [1,-1,0,0] and [0,0,1,-1] are centred and orthogonal; y = [1,-1,1,-1]
    # ‖Xᵀy‖² = 2² + 2² = 8, ‖XᵀX‖_F = ‖diag(2, 2)‖ = √8, ‖yᵀy‖ = 4: CKA = 8 / (4√8) = 1/√2
    x = np.array([[1.0, 0], [-1, 0], [0, 1], [0, -1]])
    y = np.array([[1.0], [-1], [1], [-1]])
    assert linear_cka(x, y) == pytest.approx(1 / math.sqrt(2))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(5, 40), st.integers(1, 8), st.integers(1, 8),
       st.floats(0.01, 100), st.booleans())
def test_the_properties_kornblith_et_al_state(seed, n, p, q, scale, debiased):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(n, p)), rng.normal(size=(n, q)) + rng.normal(size=(n, 1))
    assert linear_cka(x, x, debiased=debiased) == pytest.approx(1.0)
    base = linear_cka(x, y, debiased=debiased)
    assert linear_cka(y, x, debiased=debiased) == pytest.approx(base)  # symmetric
    assert linear_cka(x @ _orthogonal(p, rng), y, debiased=debiased) == pytest.approx(base)  # orthogonal
    assert linear_cka(scale * x, y, debiased=debiased) == pytest.approx(base)  # isotropic scaling
    assert linear_cka(x + rng.normal(size=p), y, debiased=debiased) == pytest.approx(base)  # translation
    if not debiased:
        assert -1e-12 <= base <= 1 + 1e-12


def test_not_invariant_to_any_invertible_linear_map():
    # CKA is meant to change under a non-isotropic scaling (unlike CCA): stretch one column
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    y[:, 0] += 2 * x[:, 0]
    assert linear_cka(x @ np.diag([10.0, 1, 1]), y) != pytest.approx(linear_cka(x, y), abs=1e-3)


def _song_unbiased_hsic(kx: np.ndarray, ky: np.ndarray) -> float:
    """Song et al. (2012), eq. 5: HSIC_1 on Gram matrices with zeroed diagonals."""
    n = len(kx)
    kx, ky = kx.copy(), ky.copy()
    np.fill_diagonal(kx, 0)
    np.fill_diagonal(ky, 0)
    one = np.ones(n)
    return (np.trace(kx @ ky) + (one @ kx @ one) * (one @ ky @ one) / ((n - 1) * (n - 2))
            - 2 / (n - 2) * (one @ kx @ ky @ one)) / (n * (n - 3))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_debiased_equals_song_et_al_on_the_gram_matrices(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.normal(size=(12, 5)), rng.normal(size=(12, 3))
    y[:, 0] += x[:, 0]
    xc, yc = x - x.mean(0), y - y.mean(0)
    kx, ky = xc @ xc.T, yc @ yc.T
    expected = _song_unbiased_hsic(kx, ky) / math.sqrt(
        _song_unbiased_hsic(kx, kx) * _song_unbiased_hsic(ky, ky)
    )
    assert linear_cka(x, y, debiased=True) == pytest.approx(expected)
    assert linear_cka(x, y, debiased=True) < linear_cka(x, y)  # the plain estimate is biased upward


def test_debiased_is_near_zero_for_independent_wide_representations():
    # n = 30 examples of 200 features: plain CKA is far above 0 for unrelated data, debiased is not
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(30, 200)), rng.normal(size=(30, 200))
    assert linear_cka(x, y) > 0.5
    assert abs(linear_cka(x, y, debiased=True)) < 0.1


def test_matrix_matches_pairs_and_is_symmetric():
    rng = np.random.default_rng(4)
    xs = [rng.normal(size=(20, d)) for d in (2, 3, 4)]
    ys = [rng.normal(size=(20, 5)), xs[1]]
    within = cka_matrix(xs)
    assert np.allclose(within, within.T) and np.allclose(np.diag(within), 1)
    assert within[0, 2] == pytest.approx(linear_cka(xs[0], xs[2]))
    across = cka_matrix(xs, ys, debiased=True)
    assert across.shape == (3, 2) and across[1, 1] == pytest.approx(1.0)
    assert across[2, 0] == pytest.approx(linear_cka(xs[2], ys[0], debiased=True))


def test_constant_representation_and_bad_shapes():
    x = np.ones((5, 2))
    assert math.isnan(linear_cka(x, np.arange(10.0).reshape(5, 2)))
    assert math.isnan(cka_matrix([x, np.eye(5)])[0, 0])
    with pytest.raises(DimensionError, match="same n examples"):
        linear_cka(np.ones((5, 2)), np.ones((4, 2)))
    with pytest.raises(EmptyInputError, match="at least 4 examples"):
        linear_cka(np.eye(3), np.eye(3), debiased=True)


def test_corpus_sample_is_seeded_and_says_what_is_missing(tmp_path):
    with pytest.raises(InputError, match="shared corpora are missing: .*brown_plain.txt.*--sentences FILE"):
        corpus_sample(tmp_path, 3)
    (tmp_path / "corpora").mkdir()
    lines = [" ".join(f"w{i}" for i in range(5 + k % 3)) + f" s{k}" for k in range(40)]
    for name in ("brown_plain.txt", "abc_plain.txt", "movie_reviews_plain.txt"):
        (tmp_path / "corpora" / name).write_text("\n".join(lines + ["too short",
                                                                    " ".join(["x"] * 61)]) + "\n")
    one = corpus_sample(tmp_path, 10, seed=5)
    assert one == corpus_sample(tmp_path, 10, seed=5) and one != corpus_sample(tmp_path, 10, seed=6)
    assert len(one) == 10 and all(5 <= len(s.split()) <= 60 for s in one)
    with pytest.raises(InputError, match="hold only 120 sentences"):
        corpus_sample(tmp_path, 121)


def test_layer_cka_is_a_top_level_verb_in_the_usual_order():
    import inspect

    import contextlens
    from contextlens.analysis.cka import layer_cka

    assert contextlens.layer_cka is layer_cka and "layer_cka" in contextlens.__all__
    params = list(inspect.signature(layer_cka).parameters.values())
    assert [p.name for p in params[:2]] == ["encoder", "sentences"]
    assert all(p.kind is p.KEYWORD_ONLY for p in params[2:])
