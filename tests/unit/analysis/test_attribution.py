"""Attention attribution and rollout, checked by hand on tiny attention maps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from contextlens.analysis.attribution import attention_attribution, attention_rollout, attribute
from contextlens.encoders.base import Encoding
from contextlens.encoders.mixing import SelfAttention
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import DimensionError, InputError
from contextlens.text import tokenize
from contextlens.vectors import EmbeddingTable

# layer 1 as two heads whose mean is [[0, .5, .5], [1, 0, 0], [0, 1, 0]]; layer 2 one map twice
HEADS_1 = [[[0, 1, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 1], [1, 0, 0], [0, 1, 0]]]
LAYER_2 = [[0, 1, 0], [0.5, 0, 0.5], [0, 0, 1]]
ATTENTION = np.array([HEADS_1, [LAYER_2, LAYER_2]], dtype=float)  # (2 layers, 2 heads, 3, 3)


def test_rollout_by_hand_two_layers_three_words():
    # Â1 = .5·A1 + .5·I = [[.5,.25,.25],[.5,.5,0],[0,.5,.5]]; Â2 = [[.5,.5,0],[.25,.5,.25],[0,0,1]]
    roll = attention_rollout(ATTENTION)
    np.testing.assert_allclose(roll[0], [[0.5, 0.25, 0.25], [0.5, 0.5, 0], [0, 0.5, 0.5]])
    # Â2 · Â1, row by row
    np.testing.assert_allclose(roll[1], [[0.5, 0.375, 0.125], [0.375, 0.4375, 0.1875], [0, 0.5, 0.5]])


def test_rollout_with_the_special_node():
    # one layer, one head: word 0 gives .5 to word 1 and .5 to [CLS]/[SEP]; word 1 gives 1 to word 0
    att = np.array([[[[0.0, 0.5], [1.0, 0.0]]]])
    special = np.array([[[0.5, 0.0]]])
    roll = attention_rollout(np.concatenate([att, att]), np.concatenate([special, special]))
    hat = np.array([[0.5, 0.25, 0.25], [0.5, 0.5, 0], [0, 0, 1]])
    np.testing.assert_allclose(roll[0], hat)
    np.testing.assert_allclose(roll[1], hat @ hat)  # [.375,.25,.375], [.5,.375,.125], [0,0,1]
    np.testing.assert_allclose(roll[1][0], [0.375, 0.25, 0.375])
    np.testing.assert_allclose(roll[1][2], [0, 0, 1])  # the special node keeps its attention


def test_rows_without_special_share_are_renormalised():
    # rows summing to .5 (half went to unlisted special tokens) read as if they summed to 1
    half = attention_rollout(np.array([[[[0.25, 0.25], [0.5, 0.0]]]]))
    np.testing.assert_allclose(half[0], [[0.75, 0.25], [0.5, 0.5]])


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 3), st.integers(1, 3), st.just(4), st.just(4)),
              elements=st.floats(0.01, 1.0)), st.booleans())
def test_rollout_rows_sum_to_one(raw, with_special):
    special = raw[..., 0] if with_special else None
    roll = attention_rollout(raw, special)
    assert roll.shape == (raw.shape[0], 4 + with_special, 4 + with_special)
    np.testing.assert_allclose(roll.sum(axis=-1), 1.0, atol=1e-9)
    assert (roll >= 0).all()


def test_rollout_bad_shapes():
    with pytest.raises(DimensionError):
        attention_rollout(np.ones((2, 3, 3)))
    with pytest.raises(DimensionError, match="special_attention"):
        attention_rollout(np.ones((1, 1, 2, 2)), np.ones((1, 2)))


def hand_encoding(special: bool) -> Encoding:
    words = tokenize("the river bank")
    layers = np.random.default_rng(0).random((3, 3, 4))  # (2 layers + 1, 3 words, 4 dims)
    att = ATTENTION * (0.8 if special else 1.0)
    share = np.full((2, 2, 3), 0.2) if special else None
    return Encoding("the river bank", words, layers, att, special_attention=share)


def test_attribution_of_a_hand_made_encoding():
    r = attention_attribution(hand_encoding(special=True), "the", rollout=True, layer=1, head=1)
    assert r["index"] == 0 and r["heads"] == 2 and r["layer_names"] == ["layer 1", "layer 2"]
    np.testing.assert_allclose(r["per_head"], 0.8 * ATTENTION[:, :, 0, :])
    np.testing.assert_allclose(r["mean"], [[0, 0.4, 0.4], [0, 0.8, 0]])
    np.testing.assert_allclose(r["special_mean"], [0.2, 0.2])
    assert np.asarray(r["special_share"]).shape == (2, 2)
    # rollout row of 'the' + its special share sum to 1 at every layer
    np.testing.assert_allclose(np.sum(r["rollout"], axis=1) + r["rollout_special"], 1.0)
    sel = r["selected"]
    assert sel["layer"] == 1 and sel["head"] == 1
    np.testing.assert_allclose(sel["matrix"], 0.8 * np.array(HEADS_1[1]))
    np.testing.assert_allclose(sel["special"], [0.2, 0.2, 0.2])
    assert np.asarray(sel["rollout_matrix"]).shape == (3, 3)


def test_attribution_matches_encoding_weights():
    table = EmbeddingTable(["sat", "bank", "river"], [[2, 0], [1, 1], [0, 4]])
    enc = SelfAttention(table, heads=2, n_layers=2).encode_one("sat bank river")
    r = attribute(SelfAttention(table, heads=2, n_layers=2), "sat bank river", "bank", layer=-1)
    np.testing.assert_allclose(r["mean"][1], enc.weights("bank", layer=2), atol=1e-6)
    assert r["special_share"] is None and r["selected"]["layer"] == 2
    assert "rollout" not in r and r["encoder"]["encoder"] == "attention"


def test_attribution_errors():
    table = EmbeddingTable(["sat", "bank", "river"], [[2, 0], [1, 1], [0, 4]])
    with pytest.raises(InputError, match="no attention weights"):
        attribute(StaticEncoder(table), "sat bank", "bank")
    enc = hand_encoding(special=False)
    with pytest.raises(InputError, match="layer 0 is the static row"):
        attention_attribution(enc, "bank", layer=0)
    with pytest.raises(InputError, match="give the layer too"):
        attention_attribution(enc, "bank", head=0)
    with pytest.raises(InputError, match=r"head must be a whole number from 0 to 1, got 2"):
        attention_attribution(enc, "bank", layer=1, head=2)
