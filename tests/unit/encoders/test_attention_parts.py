"""Queries and keys of the training-free attention: softmax(q·k · scale, mask) must give
the encoder's own weights back, whatever its heads, projections, positions and masks."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.encoders.mixing import NeighbourAverage, SelfAttention
from contextlens.encoders.qk import AttentionParts, pick_layers
from contextlens.errors import DimensionError, InputError
from contextlens.vectors import EmbeddingTable

WORDS = ["the", "bank", "river", "loan", "money", "sat"]
TEXT = "the bank sat by the river"  # "by" is not in the table


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(3)
    return EmbeddingTable(WORDS, rng.normal(size=(len(WORDS), 4)), name="random")


@pytest.mark.parametrize("options", [
    {},
    {"include_self": False},
    {"causal": True},
    {"window": 1, "positions": "sinusoidal"},
    {"heads": 2},
    {"heads": 2, "projections": "random", "d_head": 3, "n_layers": 2},
    {"scale": 0.7, "n_layers": 3, "positions": "sinusoidal"},
])
def test_the_parts_give_the_encoders_weights_back(table, options):
    encoder = SelfAttention(table, **options)
    enc = encoder.encode([TEXT])[0]
    parts = encoder.attention_parts(TEXT)
    assert [p.layer for p in parts] == list(enc.layer_ids[1:])
    for p, weights in zip(parts, enc.attention, strict=True):
        assert p.tokens == tuple(enc.tokens) == p.words  # "by" was skipped, as in the Encoding
        assert p.heads == encoder.heads and p.bias is None and p.padding == 0
        np.testing.assert_allclose(p.softmax(), p.weights, atol=1e-12)
        np.testing.assert_allclose(p.weights, weights, atol=1e-6)  # the Encoding holds float32
        np.testing.assert_array_equal(p.allowed, encoder.mask(len(enc.words)))
        assert p.scale == encoder.params()["effective_scale"]


def test_without_projections_q_and_k_are_the_rows(table):
    encoder = SelfAttention(table)
    p = encoder.attention_parts("bank river")[0]
    # the lookup's float32 rows
    rows = np.array([table.vector("bank"), table.vector("river")], dtype=np.float32)
    np.testing.assert_array_equal(p.queries[0], rows)
    np.testing.assert_array_equal(p.keys[0], rows)
    np.testing.assert_allclose(p.raw_scores()[0], rows.astype(float) @ rows.T.astype(float), atol=1e-12)
    assert p.scale == pytest.approx(0.5)  # 1/√4


def test_padding_is_masked_out_and_zero_fill_leaks(table):
    encoder = SelfAttention(table, causal=True)
    p = encoder.attention_parts("bank river loan", pad=2)[0]
    assert (p.tokens[-2:] == ("[PAD]", "[PAD]") and p.token_words[-2:] == ((), ())
            and p.special == (False,) * 3 + (True,) * 2)
    assert not p.allowed[:, 3:].any()
    assert p.allowed[:3, :3].tolist() == np.tril(np.ones((3, 3), bool)).tolist()
    np.testing.assert_allclose(p.softmax(), p.weights, atol=1e-12)
    unpadded = encoder.attention_parts("bank river loan")[0]
    np.testing.assert_allclose(p.weights[:, :3, :3], unpadded.weights, atol=1e-12)  # padding changes nothing
    leaked = p.softmax(fill=0.0)
    assert (leaked[:, ~p.allowed] > 0).all()  # e^0 = 1: weight on the positions the mask hides
    s = p.scores()[0, 0]  # bank, causal: sees only itself; with 0 fill, 4 masked zeros
    assert leaked[0, 0, 0] == pytest.approx(np.exp(s[0]) / (np.exp(s[0]) + 4), rel=1e-12)


def test_a_layer_is_chosen_by_number(table):
    encoder = SelfAttention(table, n_layers=3)
    assert [p.layer_name
            for p in encoder.attention_parts(TEXT, layers=[-1, 1])] == ["attention 3", "attention 1"]
    with pytest.raises(InputError, match="layer 0 is the static row"):
        encoder.attention_parts(TEXT, layers=[0])
    with pytest.raises(InputError, match="layer 4 is not available"):
        encoder.attention_parts(TEXT, layers=[4])
    assert pick_layers((0, 4, 6), ("static", "layer 4", "layer 6"), None) == [(4, "layer 4"), (6, "layer 6")]


def test_tokens_of_words(table):
    p = SelfAttention(table).attention_parts("the bank and the river")[0]
    assert p.token_of("the") == 0 and p.token_of("the", occurrence=1) == 2 and p.token_of(3) == 3
    with pytest.raises(InputError, match="'loan' .* is not in"):
        p.token_of("loan")


def test_encoders_without_queries_and_keys_say_so(table):
    with pytest.raises(InputError, match="has no queries and keys"):
        NeighbourAverage(table).attention_parts(TEXT)
    with pytest.raises(InputError, match="pad must be"):
        SelfAttention(table).attention_parts(TEXT, pad=-1)
    with pytest.raises(InputError, match="give a list of sentences|is empty|not a string"):
        SelfAttention(table).attention_parts("  ")


def test_parts_are_shape_checked():
    q = np.zeros((1, 2, 3))
    ok = dict(text="a b", tokens=("a", "b"), token_words=((0,), (1,)), words=("a", "b"), layer=1,
              layer_name="l",
              queries=q, keys=q, scale=1.0, allowed=np.ones((2, 2), bool), weights=np.full((1, 2, 2), 0.5))
    AttentionParts(**ok)
    with pytest.raises(DimensionError, match="queries and keys"):
        AttentionParts(**{**ok, "keys": np.zeros((1, 3, 3))})
    with pytest.raises(DimensionError, match="boolean mask"):
        AttentionParts(**{**ok, "allowed": np.ones((2, 2))})
    with pytest.raises(DimensionError, match="weights and bias"):
        AttentionParts(**{**ok, "bias": np.zeros((2, 2))})
