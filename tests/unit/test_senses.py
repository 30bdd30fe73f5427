"""The sense probe: agglomerative clustering on cosine distance, silhouette, purity, ARI."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextlens.analysis.senses import SenseClusterer, cluster_senses, purity, senses
from contextlens.encoders.mixing import NeighbourAverage
from contextlens.errors import InputError, TargetNotFoundError, UnknownOptionError, ZeroVectorError
from contextlens.vectors import EmbeddingTable


def two_senses(n_each: int = 6, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """Toy usage vectors: a 'money' bundle and a 'river' bundle, interleaved."""
    rng = np.random.default_rng(seed)
    money = np.array([1.0, 0.1, 0.0, 0.2]) + 0.05 * rng.standard_normal((n_each, 4))
    river = np.array([0.0, 0.2, 1.0, 0.1]) + 0.05 * rng.standard_normal((n_each, 4))
    x = np.empty((2 * n_each, 4))
    x[0::2], x[1::2] = money, river
    return x, ["money", "river"] * n_each


def test_separates_two_obvious_clusters():
    x, gold = two_senses()
    model = SenseClusterer().fit(x)
    assert model.k_ == 2
    assert model.labels_.tolist() == [0, 1] * 6
    assert sorted(model.silhouette_by_k_) == list(range(2, 9))
    assert model.silhouette_ == max(model.silhouette_by_k_.values()) > 0.8
    r = cluster_senses(x, gold=gold)
    assert r["purity"] == 1.0 and r["ari"] == pytest.approx(1.0)


def test_silhouette_by_hand():
    # a=[1,0], b=[1,.5], c=[0,1]: clusters {a, b}, {c}; cosine distances ab 1-2/√5, bc 1-1/√5, ac 1
    x = np.array([[1.0, 0.0], [1.0, 0.5], [0.0, 1.0]])
    model = SenseClusterer(k=2).fit(x)
    d_ab, d_bc = 1 - 2 / math.sqrt(5), 1 - 1 / math.sqrt(5)
    s_a = (1 - d_ab) / 1
    s_b = (d_bc - d_ab) / d_bc
    assert model.labels_.tolist() == [0, 0, 1]
    assert model.silhouette_ == pytest.approx((s_a + s_b + 0) / 3)  # a singleton scores 0
    assert model.silhouette_by_k_ == {2: model.silhouette_}


def test_auto_k_range_stops_at_n_minus_one():
    x, _ = two_senses(n_each=2)
    assert sorted(SenseClusterer().fit(x).silhouette_by_k_) == [2, 3]


def test_purity_by_hand():
    assert purity([0, 0, 1, 1], ["a", "a", "b", "a"]) == 0.75
    assert purity([0, 1, 2], ["a", "a", "a"]) == 1.0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=2, max_size=12), st.permutations(["w", "x", "y", "z"]))
def test_ari_and_purity_are_one_for_a_perfect_clustering(clusters, names):
    gold = [names[c] for c in clusters]  # the same partition under other names
    x = np.eye(4)[clusters] + 0.01  # (n, 4) one direction per cluster
    r = cluster_senses(x, k=len(set(clusters)), gold=gold)
    assert r["purity"] == 1.0
    assert r["ari"] == pytest.approx(1.0)


def test_bad_k_and_inputs():
    x, _ = two_senses(n_each=2)
    with pytest.raises(InputError, match=r"k must be a whole number from 1 to 4, got 5; or 'auto'; there are 4 usages"):
        SenseClusterer(k=5).fit(x)
    with pytest.raises(InputError, match="at least 3 usages"):
        SenseClusterer().fit(x[:2])
    with pytest.raises(UnknownOptionError, match="valid values: average, complete, single"):
        SenseClusterer(linkage="ward").fit(x)
    with pytest.raises(InputError, match=r"k_max must be a whole number from 2 to 100, got 1000000000"):
        SenseClusterer(k_max=10**9).fit(x)
    with pytest.raises(ZeroVectorError, match=r"usages \[1\]"):
        SenseClusterer(k=2).fit(np.array([[1.0, 0], [0, 0], [0, 1]]))


def test_edge_k_has_no_silhouette():
    x, _ = two_senses(n_each=2)
    assert SenseClusterer(k=1).fit(x).silhouette_ is None
    assert SenseClusterer(k=4).fit(x).labels_.tolist() == [0, 1, 2, 3]


def test_identical_usages_give_fewer_clusters():
    model = SenseClusterer(k=3).fit(np.array([[1.0, 0], [1, 0], [2, 0], [0, 1]]))
    assert model.k_ == 2 and model.labels_.tolist() == [0, 0, 0, 1]
    assert model.silhouette_ == pytest.approx(0.75)  # three at distance 0 score 1, the singleton 0


def test_init_stores_parameters_only():
    model = SenseClusterer(k="nonsense", linkage="nonsense")
    assert (model.k, model.linkage, model.k_max) == ("nonsense", "nonsense", 8)
    assert not hasattr(model, "labels_")


@pytest.fixture
def encoder():
    table = EmbeddingTable(["bank", "money", "loan", "river", "water", "the"],
                           [[1, 1, 0], [1, 0, 0], [0.9, 0.1, 0], [0, 1, 0], [0.1, 0.9, 0], [0, 0, 1]])
    return NeighbourAverage(table, alpha=0.0)


SENTENCES = ["money bank", "river bank", "the loan bank", "the river", "water bank", "bank money"]


def test_senses_labels_follow_the_input_order(encoder):
    r = senses(encoder, SENTENCES, "bank", k=2, missing="skip",
               gold=["m", "r", "m", "r", "r", "m"], projection="pca")
    assert r["labels"] == [0, 1, 0, None, 1, 0]
    assert r["skipped"] == [3] and r["n_usages"] == 5
    assert [c["positions"] for c in r["clusters"]] == [[0, 2, 5], [1, 4]]
    assert r["clusters"][0]["gold"] == {"m": 3}
    assert r["purity"] == 1.0 and r["ari"] == pytest.approx(1.0)
    assert np.asarray(r["projection"]["points"]).shape == (5, 2)


def test_senses_errors(encoder):
    with pytest.raises(TargetNotFoundError, match=r"sentence 3 \('the river'\) lacks 'bank'"):  # SENTENCES[3]
        senses(encoder, SENTENCES, "bank")
    with pytest.raises(InputError, match="2 labels for 6 sentences"):
        senses(encoder, SENTENCES, "bank", gold=["a", "b"], missing="skip")
    with pytest.raises(InputError, match=r"k must be a whole number from 1 to 5, got 9"):
        senses(encoder, SENTENCES, "bank", k=9, missing="skip")
