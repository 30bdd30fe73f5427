"""Layer divergence: cosine between two usages at every layer, static baseline first."""

from __future__ import annotations

import math

import pytest

from contextlens.analysis.layers import layer_divergence, summarise_divergence
from contextlens.encoders.mixing import NeighbourAverage, SelfAttention
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import AmbiguousTargetError, EmptyInputError, InputError, TargetNotFoundError
from contextlens.vectors import EmbeddingTable


@pytest.fixture
def table():
    return EmbeddingTable(["bank", "money", "river"], [[1, 1], [1, 0], [0, 1]], name="toy")


def test_summary_by_hand():
    s = summarise_divergence([1.0, 0.4, 0.7])
    assert s == {"static_cosine": 1.0, "final_cosine": 0.7, "min_cosine": 0.4, "min_layer": 1,
                 "drop": pytest.approx(0.3)}


def test_several_pairs_by_hand(table):
    # alpha 0: bank becomes its neighbours' mean: money [1,0], river [0,1], both [.5,.5]
    r = layer_divergence(NeighbourAverage(table),
                         [("money bank", "river bank"), ("money bank", "money river bank")], "bank")
    assert r["layer_names"] == ["static", "mixed"]
    first, second = r["pairs"]
    assert first["label"] == "pair 0" and first["sentences"] == ["money bank", "river bank"]  # pairs[0]
    assert first["cosine_by_layer"] == pytest.approx([1.0, 0.0], abs=1e-6)
    assert second["cosine_by_layer"] == pytest.approx([1.0, 1 / math.sqrt(2)], abs=1e-6)
    assert first["drop"] == pytest.approx(1.0) and first["min_layer"] == 1


def test_every_layer_is_reported(table):
    r = layer_divergence(SelfAttention(table, n_layers=3), [("money bank", "river bank")], "bank")
    cos = r["pairs"][0]["cosine_by_layer"]
    assert len(cos) == 4 and cos[0] == pytest.approx(1.0)
    assert len(layer_divergence(StaticEncoder(table), [("money bank", "river bank")], "bank")
               ["pairs"][0]["cosine_by_layer"]) == 1


def test_errors_name_the_pair(table):
    enc = NeighbourAverage(table)
    with pytest.raises(TargetNotFoundError, match=r"pair 1, sentence 'money river': 'bank' is not"):
        layer_divergence(enc, [("money bank", "river bank"), ("money bank", "money river")], "bank")
    with pytest.raises(AmbiguousTargetError, match="pair 0"):
        layer_divergence(enc, [("bank money bank", "river bank")], "bank")
    assert layer_divergence(enc, [("bank money bank", "river bank")], "bank",
                            occurrences=(1, None))["pairs"][0]["cosine_by_layer"][0] == pytest.approx(1.0)
    with pytest.raises(InputError, match="pair 0 has 3 sentence"):
        layer_divergence(enc, [("a", "b", "c")], "bank")
    with pytest.raises(EmptyInputError):
        layer_divergence(enc, [], "bank")

