"""Neighbour averaging (context.mixers) and the NeighbourAverage encoder."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from contextlens.context.attention import (
    exclude_self_mask,
    random_projections,
    scaled_dot_product_attention,
    window_mask,
)
from contextlens.context.mixers import check_alpha, neighbour_average, neighbour_weights
from contextlens.encoders.mixing import NeighbourAverage, SelfAttention
from contextlens.errors import DimensionError, InputError
from contextlens.vectors import EmbeddingTable


def weights_for(enc, word, **kw):
    """(word, weight) pairs of the weights ``word`` gave every word."""
    return [(w, float(x)) for w, x in zip(enc.tokens, enc.weights(word, **kw), strict=True)]


FAST = settings(max_examples=60, deadline=None)
finite = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
alphas = st.floats(0.0, 1.0)
windows = st.one_of(st.none(), st.integers(1, 4))


@st.composite
def sentences(draw, min_n=2, max_n=6, max_d=5):
    n = draw(st.integers(min_n, max_n))
    d = draw(st.integers(1, max_d))
    return draw(hnp.arrays(np.float64, (n, d), elements=finite))


# -- pure functions ------------------------------------------------------------------------
def test_neighbour_weights_hand_computed():
    np.testing.assert_allclose(
        neighbour_weights(4, alpha=0.4, window=1),
        [[0.4, 0.6, 0, 0], [0.3, 0.4, 0.3, 0], [0, 0.3, 0.4, 0.3], [0, 0, 0.6, 0.4]],
    )
    np.testing.assert_allclose(neighbour_weights(3, alpha=0.25), [
        [0.25, 0.375, 0.375], [0.375, 0.25, 0.375], [0.375, 0.375, 0.25]])


def test_neighbour_average_hand_computed():
    x = np.array([[3.0, 0.0], [0.0, 6.0], [3.0, 3.0]])  # (words, dim)
    out, w = neighbour_average(x)  # alpha 0: each word is the mean of the other two
    np.testing.assert_allclose(out, [[1.5, 4.5], [3.0, 1.5], [1.5, 3.0]])
    np.testing.assert_array_equal(np.diag(w), 0.0)
    out, _ = neighbour_average(x, alpha=1.0)
    np.testing.assert_array_equal(out, x)


@FAST
@given(sentences(), alphas, windows)
def test_weights_are_a_distribution_and_out_is_weights_at_x(x, alpha, window):
    out, w = neighbour_average(x, alpha, window)
    assert (w >= 0).all()
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_allclose(np.diag(w), alpha)
    np.testing.assert_array_equal(out, w @ x)


@FAST
@given(sentences(), windows)
def test_averaging_is_attention_with_equal_weights(x, window):
    """The design's point: uniform averaging = attention whose scores are all equal."""
    n = len(x)
    mask = exclude_self_mask(n) & (window_mask(n, window) if window is not None else True)
    att_out, att_w = scaled_dot_product_attention(x, x, x, mask=mask, scale=0.0)
    avg_out, avg_w = neighbour_average(x, 0.0, window)
    np.testing.assert_allclose(avg_w, att_w, atol=1e-15)
    np.testing.assert_allclose(avg_out, att_out, atol=1e-12)
    # equal q.k scores (q = 0) at the default scale give the same weights too
    _, zero_q = scaled_dot_product_attention(np.zeros_like(x), x, x, mask=mask)
    np.testing.assert_allclose(avg_w, zero_q, atol=1e-15)


@FAST
@given(sentences(), alphas)
def test_alpha_blends_self_and_attention_average(x, alpha):
    out, _ = neighbour_average(x, alpha)
    ctx, _ = scaled_dot_product_attention(x, x, x, mask=exclude_self_mask(len(x)), scale=0.0)
    np.testing.assert_allclose(out, alpha * x + (1 - alpha) * ctx, atol=1e-12)


@FAST
@given(sentences(), alphas, st.randoms(use_true_random=False))
def test_whole_sentence_average_is_permutation_equivariant(x, alpha, rnd):
    perm = np.array(rnd.sample(range(len(x)), len(x)))
    out, w = neighbour_average(x, alpha)
    out_p, w_p = neighbour_average(x[perm], alpha)
    np.testing.assert_allclose(out_p, out[perm], atol=1e-12)
    np.testing.assert_allclose(w_p, w[perm][:, perm])


@pytest.mark.parametrize("alpha", [-0.1, 1.1, float("nan"), "0.5", True, None])
def test_bad_alpha_is_a_clear_error(alpha):
    with pytest.raises(InputError,
                       match=r"alpha must be a finite number from 0 to 1, got .*; the weight a word keeps"):
        check_alpha(alpha)
    with pytest.raises(InputError, match="alpha"):
        neighbour_average(np.ones((2, 2)), alpha=alpha)


def test_no_context_words_is_an_error_not_nan():
    with pytest.raises(InputError, match="word 0 has no context words"):
        neighbour_average(np.ones((1, 3)))
    with pytest.raises(InputError, match="window=0"):
        neighbour_average(np.ones((3, 2)), alpha=0.5, window=0)
    out, w = neighbour_average(np.arange(6.0).reshape(3, 2), alpha=1.0, window=0)
    np.testing.assert_array_equal(w, np.eye(3))


def test_bad_window_and_shape():
    with pytest.raises(InputError, match="window"):
        neighbour_average(np.ones((3, 2)), window=-2)
    with pytest.raises(DimensionError, match="words, dim"):
        neighbour_average(np.ones(3))


# -- the NeighbourAverage encoder ----------------------------------------------------------
@pytest.fixture
def table():
    return EmbeddingTable(
        ["sat", "bank", "river", "money"], [[2, 0, 0], [1, 1, 0], [0, 4, 0], [0, 0, 3]], name="toy"
    )


def test_encoder_layers_weights_and_meta(table):
    enc = NeighbourAverage(table, alpha=0.5, window=1).encode_one("Sat bank, river money")
    assert enc.layer_names == ("static", "mixed")
    assert enc.layers.shape == (2, 4, 3) and enc.attention.shape == (1, 1, 4, 4)
    np.testing.assert_array_equal(enc.layers[0], table.vectors[[0, 1, 2, 3]])
    np.testing.assert_allclose(enc.vector("bank"), [1.0, 1.5, 0.0])  # .5 bank + .25 (sat+river)
    np.testing.assert_allclose(enc.attention[0, 0], neighbour_weights(4, 0.5, 1))
    assert enc.meta["encoder"] == "average" and enc.meta["vectors"] == "toy"
    assert enc.meta["params"] == {"encoder": "average", "vectors": "toy", "table": table.fingerprint(),
                                  "alpha": 0.5, "window": 1, "lowercase": True,
                                  "lowercase_option": "auto", "oov": "skip"}
    assert enc.meta["skipped"] == {",": []}
    assert weights_for(enc, "bank") == [("sat", 0.25), ("bank", 0.5), ("river", 0.25),
                                        ("money", 0.0)]


def test_encoder_equals_attention_encoder_with_scale_zero(table):
    text = "money sat bank river"
    avg = NeighbourAverage(table).encode_one(text)
    att = SelfAttention(table, include_self=False, scale=0.0).encode_one(text)
    np.testing.assert_allclose(avg.layers, att.layers, atol=1e-6)
    np.testing.assert_allclose(avg.attention, att.attention, atol=1e-7)


def test_encoder_one_word_left_is_a_clear_error(table):
    with pytest.raises(InputError, match=r"'bank'.*no context words"):
        NeighbourAverage(table).encode_one("the bank")  # 'the' is skipped
    enc = NeighbourAverage(table, alpha=1.0).encode_one("the bank")
    np.testing.assert_array_equal(enc.layers[1], enc.layers[0])


def test_encoder_validates_options_early(table):
    with pytest.raises(InputError, match="alpha"):
        NeighbourAverage(table, alpha=2)
    with pytest.raises(InputError, match="window"):
        NeighbourAverage(table, window=-1)
    with pytest.raises(InputError, match="oov"):
        NeighbourAverage(table, oov="ignore")


# -- the SelfAttention encoder and weights_for ---------------------------------------------
def test_attention_encoder_layers_and_meta(table):
    enc = SelfAttention(table, include_self=False).encode_one("sat bank river")
    assert enc.layer_names == ("static", "attention 1")
    assert enc.layers.shape == (2, 3, 3) and enc.attention.shape == (1, 1, 3, 3)
    x = table.vectors[:3].astype(np.float64)
    ref_out, ref_w = scaled_dot_product_attention(x, x, x, mask=exclude_self_mask(3))
    np.testing.assert_allclose(enc.layers[1], ref_out, rtol=1e-6)
    np.testing.assert_allclose(enc.attention[0, 0], ref_w, rtol=1e-6)
    params = enc.meta["params"]
    assert params["include_self"] is False and params["projections"] is None
    assert params["scale"] is None and params["effective_scale"] == pytest.approx(3 ** -0.5)
    assert enc.meta["encoder"] == "attention" and enc.meta["vectors"] == "toy"


def test_attention_encoder_masks_and_stacked_layers(table):
    enc = SelfAttention(table, causal=True, window=1, n_layers=2).encode_one(
        "sat bank river money")
    assert enc.attention.shape == (2, 1, 4, 4)
    allowed = np.tril(np.ones((4, 4), bool)) & (np.abs(np.subtract.outer(range(4), range(4))) <= 1)
    assert (enc.attention[:, 0][:, ~allowed] == 0).all()
    layer1 = enc.layers[1].astype(np.float64)
    ref, _ = scaled_dot_product_attention(layer1, layer1, layer1, mask=allowed)
    np.testing.assert_allclose(enc.layers[2], ref, rtol=1e-5)
    assert weights_for(enc, 2, layer=-1)[2][1] == pytest.approx(float(enc.attention[1, 0, 2, 2]))
    with pytest.raises(InputError, match=r"word 0 \('sat'\) may attend to no word"):
        SelfAttention(table, causal=True, include_self=False).encode_one("sat bank")


def test_attention_encoder_positions_break_permutation_symmetry(table):
    plain = SelfAttention(table)
    a, b = plain.encode_one("sat bank river"), plain.encode_one("river bank sat")
    np.testing.assert_allclose(b.layers[1], a.layers[1][::-1], rtol=1e-6)
    pos = SelfAttention(table, positions="sinusoidal")
    c, d = pos.encode_one("sat bank river"), pos.encode_one("river bank sat")
    np.testing.assert_array_equal(c.layers[0], a.layers[0])  # layer 0 stays the table row
    assert not np.allclose(d.layers[1], c.layers[1][::-1], atol=1e-3)


def test_attention_encoder_heads_and_projections():
    table = EmbeddingTable(["a", "b", "c"], np.arange(12.0).reshape(3, 4) / 10)
    two = SelfAttention(table, heads=2).encode_one("a b c")
    assert two.attention.shape == (1, 2, 3, 3) and two.dim == 4
    rnd = SelfAttention(table, heads=2, projections="random", d_head=3, seed=5)
    again = SelfAttention(table, heads=2, projections="random", d_head=3, seed=5)
    other = SelfAttention(table, heads=2, projections="random", d_head=3, seed=6)
    e1, e2, e3 = (m.encode_one("a b c") for m in (rnd, again, other))
    np.testing.assert_array_equal(e1.attention, e2.attention)
    assert not np.allclose(e1.attention, e3.attention)
    assert e1.meta["params"]["d_head"] == 3 and e1.dim == 4
    w_q = np.ones((2, 4, 5))
    custom = SelfAttention(table, heads=2, projections=(w_q, w_q, None)).encode_one("a b c")
    assert custom.meta["params"]["projection_shapes"] == [[2, 4, 5], [2, 4, 5], None]
    avg = [w for _, w in weights_for(custom, 0)]
    np.testing.assert_allclose(avg, custom.attention[0, :, 0].mean(axis=0))
    assert weights_for(custom, 0, head=1) == [
        (t, float(w)) for t, w in zip("abc", custom.attention[0, 1, 0], strict=True)]


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"heads": 0}, InputError, "heads must be a whole number from 1 to 3, got 0"),
        ({"heads": 2}, DimensionError, "dim 3 does not divide into 2 heads"),
        ({"n_layers": 0}, InputError, "n_layers"),
        ({"window": -1}, InputError, "window"),
        ({"positions": "sinusoid"}, InputError, "did you mean 'sinusoidal'"),
        ({"projections": "rand"}, InputError, "valid values: random"),
        ({"d_head": 2}, InputError, "d_head applies only to projections='random'"),
        ({"projections": (np.ones((1, 3, 2)),) * 3}, DimensionError, "keep the table's dim 3"),
        ({"projections": (np.ones((1, 2, 2)), None, None)}, DimensionError, "w_q must be"),
        ({"scale": float("nan")}, InputError, "scale"),
        ({"include_self": "no"}, InputError, "include_self must be True or False"),
    ],
)
def test_attention_encoder_validates_options_early(table, kwargs, error, message):
    with pytest.raises(error, match=message):
        SelfAttention(table, **kwargs)


def test_weights_for_errors(table):
    from contextlens.encoders.static import StaticEncoder

    with pytest.raises(InputError, match="no attention weights"):
        weights_for(StaticEncoder(table).encode_one("sat bank"), 0)
    enc = SelfAttention(table).encode_one("sat bank")
    with pytest.raises(InputError, match="layer 0 is the static row"):
        weights_for(enc, 0, layer=0)
    with pytest.raises(InputError, match="head must be"):
        weights_for(enc, 0, head=1)
    with pytest.raises(InputError, match="out of range"):
        weights_for(enc, 5)


def test_random_projections_set_the_head_size_whatever_the_dim(table):
    enc = SelfAttention(table, heads=2, projections="random", seed=1)  # dim 3, 2 heads: values 2 + 1 dims
    assert enc.params()["d_head"] == 1 and enc.params()["effective_scale"] == 1.0
    out = enc.encode_one("sat bank river")
    x = out.layers[0].astype(np.float64)
    w_q, w_k, _ = random_projections(3, heads=2, d_head=1, seed=(1, 0))
    for h, cols in enumerate([[0, 1], [2]]):  # head h mixes its own slice of the dims, weighted its own way
        ref, weights = scaled_dot_product_attention(x @ w_q[h], x @ w_k[h], x[:, cols])
        np.testing.assert_allclose(out.layers[1][:, cols], ref, rtol=1e-5)
        np.testing.assert_allclose(out.attention[0, h], weights, rtol=1e-5)
    with pytest.raises(DimensionError,
                       match="dim 3 does not divide into 2 heads: a head without query and key"):
        SelfAttention(table, heads=2)
    w = np.ones((2, 3, 2))
    w_v = np.ones((2, 3, 1))
    with pytest.raises(DimensionError, match="2 heads x 1 = 2 dims"):
        SelfAttention(table, heads=2, projections=(w, w, w_v))


@pytest.mark.parametrize(("encoder", "most"), [(NeighbourAverage, "4,378"), (SelfAttention, "3,861")])
def test_a_text_too_long_for_pairwise_weights_is_refused_naming_the_limit(table, encoder, most):
    text = " ".join(["sat bank river"] * 2000)  # 6,000 words
    with pytest.raises(InputError, match=rf"text 0 \('sat bank river sat.*…'\) has 6,000 words: its "
                       rf"attention weights \(1 layer x 1 head x "
                       rf"6,000 x 6,000\) would take .* GiB, over the 512 MiB limit \({most} words with 1 "
                       rf"layer x 1 head\); use a shorter text"):
        encoder(table).encode([text])
    assert encoder(table).encode([" ".join(["sat bank river"] * 300)])[0].attention.shape == (1, 1, 900, 900)


def test_every_word_level_encoder_names_its_source_and_describes_itself(table):
    """``source`` is the table's name for a static encoder and for a mixer over it (it was empty);
    ``describe()`` is the JSON record the analyses report: ``meta`` itself, no pieces."""
    from contextlens.encoders.static import StaticEncoder

    for encoder in (StaticEncoder(table), NeighbourAverage(table), SelfAttention(table, n_layers=2)):
        enc = encoder.encode_one("Sat bank, river money")
        assert enc.source == "toy" and enc.pieces is None
        assert enc.describe() == enc.meta and enc.describe() is not enc.meta
    assert StaticEncoder(table).encode(["sat bank", "river"], targets=["bank"])[0].source == "toy"
