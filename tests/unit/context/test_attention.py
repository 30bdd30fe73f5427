"""Scaled dot-product attention, masks, positions and heads (contextlens.context.attention)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from contextlens.context.attention import (
    causal_mask,
    exclude_self_mask,
    multi_head_attention,
    random_projections,
    scaled_dot_product_attention,
    sinusoidal_positions,
    softmax,
    window_mask,
)
from contextlens.errors import DimensionError, InputError
from tests.missing import need

FAST = settings(max_examples=60, deadline=None)
finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)


@st.composite
def sentences(draw, max_n=6, max_d=5):
    """A sentence's static rows: (n, d) floats."""
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, max_d))
    return draw(hnp.arrays(np.float64, (n, d), elements=finite))


@st.composite
def masks(draw, n):
    """A random (n, n) mask in which every row keeps at least one position."""
    m = draw(hnp.arrays(bool, (n, n)))
    keep = draw(hnp.arrays(np.int64, (n,), elements=st.integers(0, n - 1)))
    m[np.arange(n), keep] = True
    return m


# -- softmax ---------------------------------------------------------------------------------
def test_softmax_hand_computed():
    np.testing.assert_allclose(softmax(np.array([0.0, math.log(3.0)])), [0.25, 0.75])
    w = softmax(np.array([[0.0, 0.0], [math.log(4.0), 0.0]]), axis=0)
    np.testing.assert_allclose(w, [[0.2, 0.5], [0.8, 0.5]])


@FAST
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 4), st.integers(1, 6)), elements=finite),
       finite)
def test_softmax_is_a_distribution_and_shift_invariant(scores, c):
    w = softmax(scores)
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)
    np.testing.assert_allclose(softmax(scores + c), w, atol=1e-12)


def test_softmax_huge_scores_do_not_overflow():
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        w = softmax(np.array([[1e4, 1e4 - math.log(3.0)], [-1e4, 1e4]]))
    np.testing.assert_allclose(w, [[0.75, 0.25], [0.0, 1.0]])
    w32 = softmax(np.array([3e4, 3e4], dtype=np.float32))
    assert w32.dtype == np.float32 and np.isfinite(w32).all()


@FAST
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float64, (n, n), elements=finite), masks(n))))
def test_softmax_masked_entries_get_exactly_zero(case):
    scores, mask = case
    w = softmax(scores, mask=mask)
    assert (w[~mask] == 0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)


def test_softmax_neg_inf_score_counts_as_masked():
    np.testing.assert_array_equal(softmax(np.array([-np.inf, 0.0, 0.0])), [0.0, 0.5, 0.5])


def test_softmax_fully_masked_row_is_an_error_naming_the_row():
    mask = np.array([[True, False], [False, False]])
    with pytest.raises(InputError, match="row 1 "):
        softmax(np.zeros((2, 2)), mask=mask)
    batched = np.ones((2, 3, 3), dtype=bool)
    batched[1, 2] = False
    with pytest.raises(InputError, match=r"row \(1, 2\)"):
        softmax(np.zeros((2, 3, 3)), mask=batched)
    with pytest.raises(InputError, match="masked out"):
        softmax(np.full(3, -np.inf))


def test_softmax_bad_input():
    with pytest.raises(InputError, match="NaN"):
        softmax(np.array([0.0, np.nan]))
    with pytest.raises(InputError, match="boolean"):
        softmax(np.zeros((2, 2)), mask=np.zeros((2, 2)))
    with pytest.raises(DimensionError, match=r"\(3,\)"):
        softmax(np.zeros((2, 2)), mask=np.ones(3, dtype=bool))
    with pytest.raises(DimensionError, match="scalar"):
        softmax(np.float64(1.0))


# -- scaled dot-product attention -------------------------------------------------------------
def test_attention_hand_computed():
    q = np.array([[1.0, 1.0]])                              # (1, 2)
    k = v = np.array([[2.0, 0.0], [0.0, 0.0], [1.0, 1.0]])  # (3, 2)
    out, w = scaled_dot_product_attention(q, k, v)
    scores = np.array([2.0, 0.0, 2.0]) / math.sqrt(2)
    expected = np.exp(scores) / np.exp(scores).sum()
    np.testing.assert_allclose(w, [expected])
    np.testing.assert_allclose(out, [expected @ v])


def test_attention_scale_overrides_one_over_sqrt_dk():
    q, k = np.array([[1.0, 0.0]]), np.array([[1.0, 0.0], [0.0, 0.0]])
    _, w = scaled_dot_product_attention(q, k, k, scale=math.log(3.0))
    np.testing.assert_allclose(w, [[0.75, 0.25]])
    _, uniform = scaled_dot_product_attention(q, k, k, scale=0.0)
    np.testing.assert_array_equal(uniform, [[0.5, 0.5]])
    with pytest.raises(InputError, match="finite"):
        scaled_dot_product_attention(q, k, k, scale=float("inf"))


def test_attention_mask_true_means_may_attend():
    x = np.eye(3)
    _, w = scaled_dot_product_attention(x, x, x, mask=exclude_self_mask(3))
    np.testing.assert_array_equal(np.diag(w), 0.0)
    np.testing.assert_allclose(w[0, 1:], 0.5)


def test_attention_matches_pytorch_bool_mask_convention():
    torch = need("torch")
    rng = np.random.default_rng(1)
    q, k, v = rng.normal(size=(3, 2, 4, 3))  # (2 heads, 4 words, 3 dims) each
    mask = causal_mask(4) & window_mask(4, 1)
    out, _ = scaled_dot_product_attention(q, k, v, mask=mask)
    ref = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(mask)
    )
    np.testing.assert_allclose(out, ref.numpy(), atol=1e-10)


def test_attention_batched_heads_equal_a_loop():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 3, 4, 5))  # (heads, n, d_k)
    v = rng.normal(size=(3, 4, 2))        # (heads, n, d_v)
    out, w = scaled_dot_product_attention(q, k, v, mask=causal_mask(4))
    assert out.shape == (3, 4, 2) and w.shape == (3, 4, 4)
    for h in range(3):
        o, wh = scaled_dot_product_attention(q[h], k[h], v[h], mask=causal_mask(4))
        np.testing.assert_allclose(out[h], o)
        np.testing.assert_allclose(w[h], wh)


@pytest.mark.parametrize(
    ("q", "k", "v", "message"),
    [
        ((2, 3), (4, 2), (4, 3), r"q has shape \(2, 3\) and k \(4, 2\)"),
        ((2, 3), (4, 3), (5, 3), r"k has shape \(4, 3\) and v \(5, 3\)"),
        ((3,), (4, 3), (4, 3), r"q must be at least 2-D"),
        ((2, 2, 3), (3, 4, 3), (3, 4, 3), r"leading dims"),
    ],
)
def test_attention_shape_errors_name_the_shapes(q, k, v, message):
    with pytest.raises(DimensionError, match=message):
        scaled_dot_product_attention(np.ones(q), np.ones(k), np.ones(v))


def test_attention_mask_shape_error():
    x = np.ones((3, 2))
    with pytest.raises(DimensionError, match=r"mask of shape \(2, 2\)"):
        scaled_dot_product_attention(x, x, x, mask=causal_mask(2))


@FAST
@given(sentences())
def test_attention_weights_are_distributions(x):
    _, w = scaled_dot_product_attention(x, x, x)
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)


@FAST
@given(sentences(), st.floats(0.1, 3.0))
def test_equal_scores_give_a_plain_average(x, scale):
    q = np.zeros_like(x)  # every q·k is 0
    out, w = scaled_dot_product_attention(q, x, x, scale=scale)
    np.testing.assert_allclose(w, 1.0 / len(x))
    np.testing.assert_allclose(out, np.broadcast_to(x.mean(axis=0), x.shape), atol=1e-12)


@FAST
@given(sentences(), st.randoms(use_true_random=False))
def test_permuting_words_permutes_outputs(x, rnd):
    perm = np.array(rnd.sample(range(len(x)), len(x)))
    out, w = scaled_dot_product_attention(x, x, x)
    out_p, w_p = scaled_dot_product_attention(x[perm], x[perm], x[perm])
    np.testing.assert_allclose(out_p, out[perm], atol=1e-9)
    np.testing.assert_allclose(w_p, w[perm][:, perm], atol=1e-12)


@FAST
@given(sentences())
def test_causal_weights_are_zero_above_the_diagonal(x):
    _, w = scaled_dot_product_attention(x, x, x, mask=causal_mask(len(x)))
    assert (w[np.triu_indices(len(x), k=1)] == 0).all()
    assert w[0, 0] == 1.0


@FAST
@given(sentences().flatmap(lambda x: st.tuples(st.just(x), masks(len(x)))))
def test_masked_positions_get_zero_weight(case):
    x, mask = case
    out, w = scaled_dot_product_attention(x, x, x, mask=mask)
    assert (w[~mask] == 0).all()
    np.testing.assert_allclose(out, w @ x)


# -- masks and positions ------------------------------------------------------------------
def test_masks_hand_computed_and_combined():
    np.testing.assert_array_equal(causal_mask(3), np.tril(np.ones((3, 3), bool)))
    np.testing.assert_array_equal(exclude_self_mask(3), ~np.eye(3, dtype=bool))
    np.testing.assert_array_equal(window_mask(3, 0), np.eye(3, dtype=bool))
    both = causal_mask(4) & window_mask(4, 1) & exclude_self_mask(4)
    np.testing.assert_array_equal(np.argwhere(both), [[1, 0], [2, 1], [3, 2]])
    assert causal_mask(0).shape == (0, 0)


@pytest.mark.parametrize("window", [-1, 1.5, "2", True])
def test_window_mask_rejects_bad_windows(window):
    with pytest.raises(InputError, match="window"):
        window_mask(3, window)


def test_sinusoidal_positions_follow_vaswani():
    pe = sinusoidal_positions(5, 4)
    pos = np.arange(5)
    np.testing.assert_allclose(pe[:, 0], np.sin(pos))
    np.testing.assert_allclose(pe[:, 1], np.cos(pos))
    np.testing.assert_allclose(pe[:, 2], np.sin(pos / 100.0))  # 10000 ** (2/4) = 100
    np.testing.assert_allclose(pe[:, 3], np.cos(pos / 100.0))
    odd = sinusoidal_positions(3, 5)
    assert odd.shape == (3, 5)
    np.testing.assert_allclose(odd[:, 4], np.sin(pos[:3] / 10000.0 ** (4 / 5)))
    np.testing.assert_allclose(odd[:, 2], np.sin(pos[:3] / 10000.0 ** (2 / 5)))
    np.testing.assert_allclose(odd[:, 3], np.cos(pos[:3] / 10000.0 ** (2 / 5)))
    with pytest.raises(InputError, match="dim"):
        sinusoidal_positions(3, 0)


# -- heads and projections ----------------------------------------------------------------
def test_one_head_is_plain_self_attention():
    x = np.random.default_rng(2).normal(size=(4, 6))
    out, w = multi_head_attention(x, heads=1)
    ref_out, ref_w = scaled_dot_product_attention(x, x, x)
    np.testing.assert_allclose(out, ref_out)
    np.testing.assert_allclose(w, ref_w[None])


def test_heads_without_projections_work_on_slices():
    x = np.random.default_rng(3).normal(size=(4, 6))
    out, w = multi_head_attention(x, heads=3, mask=causal_mask(4))
    assert out.shape == (4, 6) and w.shape == (3, 4, 4)
    for h in range(3):
        part = x[:, 2 * h : 2 * h + 2]
        o, wh = scaled_dot_product_attention(part, part, part, mask=causal_mask(4))
        np.testing.assert_allclose(out[:, 2 * h : 2 * h + 2], o)
        np.testing.assert_allclose(w[h], wh)


def test_projected_heads_are_concatenated():
    x = np.random.default_rng(4).normal(size=(3, 4))
    w_q, w_k, w_v = random_projections(4, heads=2, d_head=3, seed=7)
    out, w = multi_head_attention(x, 2, w_q, w_k, w_v)
    assert out.shape == (3, 6)
    for h in range(2):
        o, wh = scaled_dot_product_attention(x @ w_q[h], x @ w_k[h], x @ w_v[h])
        np.testing.assert_allclose(out[:, 3 * h : 3 * h + 3], o)
        np.testing.assert_allclose(w[h], wh)


def test_multi_head_errors():
    x = np.ones((2, 5))
    with pytest.raises(DimensionError, match="dim 5 does not divide into 2 heads"):
        multi_head_attention(x, heads=2)
    for heads in (0, -1, 1.5, True):
        with pytest.raises(InputError, match="heads"):
            multi_head_attention(x, heads=heads)
    with pytest.raises(DimensionError, match=r"w_q must be \(heads=1, dim=5, d_head\)"):
        multi_head_attention(x, 1, w_q=np.ones((1, 4, 2)), w_k=np.ones((1, 5, 2)))
    with pytest.raises(DimensionError, match="words, dim"):
        multi_head_attention(np.ones(5))


def test_random_projections_are_seeded_and_scaled():
    a = random_projections(64, heads=4, seed=3)
    b = random_projections(64, heads=4, seed=3)
    c = random_projections(64, heads=4, seed=4)
    assert all(w.shape == (4, 64, 16) for w in a)
    assert all((p == r).all() for p, r in zip(a, b, strict=True))
    assert not (a[0] == c[0]).all()
    assert abs(float(np.std(np.stack(a))) - 1 / 8) < 0.01  # normal / sqrt(64)
    assert random_projections(3, heads=4)[0].shape == (4, 3, 1)
