"""Self-similarity, intra-sentence similarity and anisotropy on tiny hand-made arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from contextlens.analysis.geometry import (
    cross_sentence_pairs,
    geometry,
    intra_sentence_similarity,
    mean_pair_cosine,
    self_similarity,
)
from contextlens.encoders.mixing import NeighbourAverage, SelfAttention
from contextlens.errors import EmptyInputError, InputError, ZeroVectorError
from contextlens.vectors import EmbeddingTable

R = 1 / math.sqrt(2)


def test_self_similarity_skips_pairs_from_one_sentence():
    x = np.array([[1.0, 0], [1, 0], [0, 1]])
    # pairs (0,1) cos 1 and (0,2) cos 0 cross sentences; (1,2) share sentence 1
    assert self_similarity(x, [0, 1, 1]) == pytest.approx(0.5)
    with pytest.raises(InputError, match="2 different sentences"):
        self_similarity(x, [0, 0, 0])


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    arrays(np.float64, (n, 3), elements=st.floats(0.1, 5)), st.lists(st.integers(0, 3), min_size=n,
                                                                     max_size=n))))
def test_self_similarity_equals_the_mean_over_listed_pairs(case):
    x, ids = case
    i, j = np.triu_indices(len(x), k=1)
    keep = np.asarray(ids)[i] != np.asarray(ids)[j]
    assume(keep.any())
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    brute = np.einsum("pd,pd->p", unit[i[keep]], unit[j[keep]]).mean()
    assert self_similarity(x, ids) == pytest.approx(brute)


def test_intra_sentence_similarity_by_hand():
    # [[1,0],[0,1]]: mean [.5,.5], each word at 45°; [[1,0],[3,0]]: all parallel;
    # a 1-word sentence is left out
    sentences = [np.array([[1.0, 0], [0, 1]]), np.array([[1.0, 0], [3, 0]]), np.array([[0.0, 1]])]
    assert intra_sentence_similarity(sentences) == pytest.approx((R + 1) / 2)
    with pytest.raises(ZeroVectorError, match="mean vector"):
        intra_sentence_similarity([np.array([[1.0, 0], [-1, 0]])])


def test_cross_sentence_pairs_exact_and_sampled():
    assert cross_sentence_pairs([1, 2]).tolist() == [[0, 1], [0, 2]]
    sizes = [5, 7, 3]
    sent = np.repeat([0, 1, 2], sizes)
    sample = cross_sentence_pairs(sizes, n_pairs=20, seed=3)
    assert sample.shape == (20, 2)
    assert (sent[sample[:, 0]] != sent[sample[:, 1]]).all()
    np.testing.assert_array_equal(sample, cross_sentence_pairs(sizes, n_pairs=20, seed=3))
    assert len(cross_sentence_pairs(sizes, n_pairs=1000)) == (15 ** 2 - 25 - 49 - 9) // 2
    with pytest.raises(InputError, match="2 different sentences"):
        cross_sentence_pairs([4])


def test_mean_pair_cosine_by_hand():
    x = np.array([[1.0, 0], [0, 2], [1, 1]])
    assert mean_pair_cosine(x, np.array([[0, 1], [0, 2]])) == pytest.approx(R / 2)


@pytest.fixture
def table():
    return EmbeddingTable(["a", "b", "c"], [[1, 0], [0, 1], [1, 1]], name="toy")


def test_geometry_by_hand(table):
    # alpha 0: each word becomes its neighbour. Layer 0: a=[1,0] b=[0,1] | a=[1,0] c=[1,1];
    # layer 1: a=[0,1] b=[1,0] | a=[1,1] c=[1,0]. 'a' is the only word in 2 sentences.
    r = geometry(NeighbourAverage(table), ["a b", "a c"])
    assert r["words"] == [{"word": "a", "sentences": 2, "occurrences": 2}]
    assert r["anisotropy_pairs"] == 4 and r["anisotropy_exact"]
    static, mixed = r["layers"]
    aniso = (1 + R + 0 + R) / 4  # both layers: cross pairs (a,a), (a,c), (b,a), (b,c)
    intra = (R + (1 / math.sqrt(1.25) + 1.5 / (math.sqrt(2) * math.sqrt(1.25))) / 2) / 2
    assert static["anisotropy"] == pytest.approx(aniso) and mixed["anisotropy"] == pytest.approx(aniso)
    assert (static["intra_sentence"] == pytest.approx(intra)
            and mixed["intra_sentence"] == pytest.approx(intra))
    assert static["self_similarity"] == pytest.approx(1.0)
    assert mixed["self_similarity"] == pytest.approx(R)
    # MEV of a = [[0,1],[1,1]]: σ₁² = (3+√5)/2 of Σσ² = 3; baseline: all 4 words [[0,1],[1,0],[1,1],[1,0]]
    mev, mev_base = (3 + math.sqrt(5)) / 6, (5 + math.sqrt(5)) / 10
    assert mixed["per_word"]["a"] == {"raw": pytest.approx(R), "adjusted": pytest.approx(R - aniso),
                                      "mev": pytest.approx(mev),
                                      "mev_adjusted": pytest.approx(mev - mev_base)}
    assert static["self_similarity_adjusted"] == pytest.approx(1 - aniso)
    assert mixed["intra_sentence_adjusted"] == pytest.approx(intra - aniso)


def test_geometry_word_choice(table):
    enc = SelfAttention(table, n_layers=2)
    sentences = ["a b .", "a c .", "b c a"]
    r = geometry(enc, sentences)
    assert [w["word"] for w in r["words"]] == ["a", "b", "c"]  # not the punctuation
    assert len(r["layers"]) == 3 and r["layers"][0]["self_similarity"] == pytest.approx(1.0)
    assert [w["word"] for w in geometry(enc, sentences, ["B"])["words"]] == ["b"]
    assert geometry(enc, sentences, min_count=3)["words"][0]["word"] == "a"
    with pytest.raises(InputError, match=r"'zebra' \(0\)"):
        geometry(enc, sentences, ["a", "zebra"])
    with pytest.raises(InputError, match="no word occurs in 2 or more"):
        geometry(enc, ["a b", "c"])
    with pytest.raises(EmptyInputError):
        geometry(enc, ["a b"])


def test_geometry_sampling_is_seeded(table):
    enc = SelfAttention(table)
    sentences = ["a b c a", "b c a", "c a b b", "a a c"]
    one = geometry(enc, sentences, n_pairs=10, seed=1)
    assert one["anisotropy_pairs"] == 10 and not one["anisotropy_exact"]
    assert one == geometry(enc, sentences, n_pairs=10, seed=1)
