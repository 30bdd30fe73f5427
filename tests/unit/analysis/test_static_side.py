"""A static table as the static side of rank, compare and layers, beside any encoder."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.analysis.incontext import compare
from contextlens.analysis.layers import layer_divergence
from contextlens.analysis.ranking import rank_descending, rank_pairs
from contextlens.encoders.mixing import SelfAttention
from contextlens.errors import UnknownWordError
from contextlens.vectors import EmbeddingTable, cosine

rng = np.random.default_rng(0)
WORDS = ["a", "sentence", "with", "bank", "river", "money", "loan", "water", "."]
MODEL = EmbeddingTable(WORDS, rng.normal(size=(len(WORDS), 5)), name="model-table")
STATIC = EmbeddingTable(["bank", "river", "money", "loan", "water", "Bank"], rng.normal(size=(6, 3)),
                        name="glove-ish")
PAIRS = [("bank", "river", 5.0), ("bank", "money", 6.0), ("money", "loan", 8.0), ("river", "water", 9.0)]


@pytest.fixture(scope="module")
def encoder():
    return SelfAttention(MODEL, projections="random", seed=2)


def test_rank_uses_the_tables_rows_for_the_static_side(encoder):
    out = rank_pairs(encoder, PAIRS, static=STATIC)
    assert out["static_side"] == {"source": "table", "vectors": "glove-ish"}
    expected = [cosine(STATIC.vector(a), STATIC.vector(b)) for a, b, _ in PAIRS]
    assert [r["static"] for r in out["pairs"]] == pytest.approx(expected)
    assert [r["static_rank"] for r in out["pairs"]] == rank_descending(expected).tolist()
    default = rank_pairs(encoder, PAIRS)
    assert default["static_side"]["source"] == "layer 0"
    assert [r["contextual"] for r in default["pairs"]] == pytest.approx([r["contextual"]
                                                                         for r in out["pairs"]])


def test_rank_words_missing_from_the_table(encoder):
    pairs = PAIRS + [("bank", "sentence", 1.0)]
    with pytest.raises(UnknownWordError, match="'sentence' is not in the static table 'glove-ish'"):
        rank_pairs(encoder, pairs, static=STATIC)
    out = rank_pairs(encoder, pairs, static=STATIC, missing="skip")
    assert out["n_pairs"] == 4 and out["skipped"][0]["word2"] == "sentence"


def test_compare_and_layers_take_the_tables_cosine(encoder):
    out = compare(encoder, "Bank by the river", "a bank with money", "bank", static=STATIC)
    assert out["static"]["forms"] == ["bank", "bank"]  # the encoder lower-cases its own lookups
    assert out["static"]["cosine"] == 1.0 and out["static"]["vectors"] == "glove-ish"
    lay = layer_divergence(encoder, [("bank river", "bank money")], "bank", static=STATIC)
    assert lay["static"]["source"] == "table" and lay["pairs"][0]["static_cosine"] == 1.0
    assert lay["pairs"][0]["drop"] == pytest.approx(1.0 - lay["pairs"][0]["final_cosine"])
