"""The measures geometry adds, each checked against the paper's definition computed by hand:
maximum explainable variance and its baseline (Ethayarajh 2019), each dimension's share of
the expected cosine and the rogue dimensions, and standardization (Timkey & van Schijndel 2021)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from contextlens.analysis.geometry import (
    cross_sentence_pairs,
    dimension_contributions,
    geometry,
    max_explainable_variance,
    mean_pair_cosine,
    standardize_dimensions,
)
from contextlens.encoders.mixing import NeighbourAverage
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import InputError, ZeroVectorError
from contextlens.vectors import EmbeddingTable


def test_mev_by_hand():
    # rows [1,0] and [1,1]: XᵀX = [[2,1],[1,1]], eigenvalues (3 ± √5)/2: σ₁² / Σσ² = (3+√5)/6
    assert max_explainable_variance(np.array([[1.0, 0], [1, 1]])) == pytest.approx((3 + math.sqrt(5)) / 6)
    # the paper's matrix is not centred: two parallel vectors are fully explained by one direction
    assert max_explainable_variance(np.array([[1.0, 2], [3, 6]])) == pytest.approx(1.0)
    assert max_explainable_variance(np.eye(4)) == pytest.approx(0.25)
    with pytest.raises(ZeroVectorError):
        max_explainable_variance(np.zeros((2, 3)))


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 6)), elements=st.floats(-5, 5)))
def test_mev_is_the_top_eigenvalue_share_of_the_second_moment(x):
    gram = x.T @ x
    total = np.trace(gram)
    if total < 1e-9:
        return
    assert max_explainable_variance(x) == pytest.approx(np.linalg.eigvalsh(gram)[-1] / total)


def test_contributions_by_hand_and_their_sum_is_the_mean_cosine():
    # pair (0,1): units [.6,.8] and [.6,-.8] give [.36, -.64]; pair (0,2): [.6,.8]·[0,1] gives [0, .8]
    x = np.array([[3.0, 4], [3, -4], [0, 2]])
    pairs = np.array([[0, 1], [0, 2]])
    assert dimension_contributions(x, pairs) == pytest.approx([0.18, 0.08])
    assert dimension_contributions(x, pairs).sum() == pytest.approx(mean_pair_cosine(x, pairs))


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, (9, 4), elements=st.floats(0.1, 5)), st.integers(0, 1000))
def test_contributions_always_sum_to_the_anisotropy(x, seed):
    pairs = cross_sentence_pairs([3, 3, 3], n_pairs=5, seed=seed)
    assert dimension_contributions(x, pairs).sum() == pytest.approx(mean_pair_cosine(x, pairs))


def test_standardize_by_hand():
    z = standardize_dimensions(np.array([[0.0, 10, 1], [2, 10, 3], [4, 10, 8]]))
    # column 1: mean 2, population std √(8/3); column 2 constant: 0; column 3: mean 4, std √(26/3)
    assert z[:, 0] == pytest.approx([-2 / math.sqrt(8 / 3), 0, 2 / math.sqrt(8 / 3)])
    assert z[:, 1].tolist() == [0, 0, 0]
    assert z[:, 2] == pytest.approx(np.array([-3, -1, 4]) / math.sqrt(26 / 3))


@pytest.fixture
def rogue_table():
    # dimension 2 is a large constant offset (a "rogue" dimension): it dominates every cosine
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    vectors = np.concatenate([rng.normal(size=(30, 2)), np.full((30, 1), 20.0)], axis=1)
    vectors[:, 2] += rng.normal(scale=0.1, size=30)
    return EmbeddingTable(words, vectors, name="rogue")


def test_rogue_dimensions_and_standardize_on_a_table(rogue_table):
    sentences = [" ".join(f"w{(7 * s + k) % 30}" for k in range(6)) for s in range(10)]
    raw = geometry(StaticEncoder(rogue_table), sentences, n_pairs=10**6, n_rogue=2)
    (layer,) = raw["layers"]
    assert layer["anisotropy"] > 0.95 and raw["standardized"] is False and raw["anisotropy_exact"]
    top = layer["rogue"]
    assert [d["dimension"] for d in top][0] == 2 and top[0]["share"] > 0.95 and len(top) == 2
    every = geometry(StaticEncoder(rogue_table), sentences, n_pairs=10**6, n_rogue=3)["layers"][0]["rogue"]
    assert sum(d["contribution"] for d in every) == pytest.approx(layer["anisotropy"])
    assert [d["contribution"] for d in every] == sorted((d["contribution"] for d in every), reverse=True)
    z = geometry(StaticEncoder(rogue_table), sentences, n_pairs=10**6, standardize=True)
    (zl,) = z["layers"]
    assert z["standardized"] is True and abs(zl["anisotropy"]) < 0.2
    # by hand: the same measures on the z-scored words
    flat = np.stack([rogue_table.lookup(w) for s in sentences for w in s.split()])
    unit = standardize_dimensions(flat)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    sent = np.repeat(np.arange(10), 6)
    i, j = np.triu_indices(60, k=1)
    keep = sent[i] != sent[j]
    assert zl["anisotropy"] == pytest.approx(np.einsum("pd,pd->p", unit[i[keep]], unit[j[keep]]).mean())
    assert sum(d["contribution"] for d in zl["rogue"][:3]) == pytest.approx(zl["anisotropy"])  # 3 dims: all


def test_geometry_mev_and_its_baseline_by_hand():
    # static table, one layer: 'a' in both sentences is the same vector (MEV 1); the baseline is the
    # MEV of every word of the cross-sentence pairs: rows [1,0],[0,1],[1,0],[1,1]
    table = EmbeddingTable(["a", "b", "c"], [[1.0, 0], [0, 1], [1, 1]], name="toy")
    r = geometry(NeighbourAverage(table), ["a b", "a c"])
    static = r["layers"][0]
    baseline = (5 + math.sqrt(5)) / 10  # XᵀX = [[3,1],[1,2]]: (5+√5)/2 of 5
    assert static["mev"] == pytest.approx(1.0) and static["mev_baseline"] == pytest.approx(baseline)
    assert static["mev_adjusted"] == pytest.approx(1 - baseline)
    assert static["per_word"]["a"]["mev_adjusted"] == pytest.approx(1 - baseline)


def test_new_options_are_checked():
    table = EmbeddingTable(["a", "b"], [[1.0, 0], [0, 1]], name="toy")
    with pytest.raises(InputError, match="n_rogue must be a whole number from 1"):
        geometry(StaticEncoder(table), ["a b", "a b"], n_rogue=0)
    with pytest.raises(InputError, match="standardize"):
        geometry(StaticEncoder(table), ["a b", "a b"], standardize="yes")


def test_no_share_of_an_expected_cosine_that_is_not_positive(rogue_table):
    # standardized, the expected cosine over all cross-sentence pairs is slightly negative
    sentences = [" ".join(f"w{(7 * s + k) % 30}" for k in range(6)) for s in range(10)]
    (layer,) = geometry(StaticEncoder(rogue_table), sentences, n_pairs=10**6, standardize=True)["layers"]
    assert layer["anisotropy"] <= 0 and all(d["share"] is None for d in layer["rogue"])
