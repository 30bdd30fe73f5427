"""Layer divergence: cosine between two usages at every layer, static baseline first."""

from __future__ import annotations

import math

import pytest

from contextlens.analysis.layers import layer_divergence, summarise_divergence, usage_divergence
from contextlens.encoders.mixing import NeighbourAverage, SelfAttention
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import (
    AmbiguousTargetError,
    EmptyInputError,
    InputError,
    LimitError,
    TargetNotFoundError,
)
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


def test_every_two_usages_are_the_pairs_of_sentences_that_hold_the_word(table):
    """What the lab's layers card draws: the word once per sentence, each pair of those sentences,
    named by their indices (as the JSON numbers them), the numbers of ``layer_divergence``."""
    sentences = ["money bank", "river money", "river bank", "money river bank"]
    r = usage_divergence(NeighbourAverage(table), sentences, "bank", missing="skip")
    assert [p["label"] for p in r["pairs"]] == ["S0–S2", "S0–S3", "S2–S3"]
    assert [p["indices"] for p in r["pairs"]] == [[0, 2], [0, 3], [2, 3]]
    assert [s["position"] for s in r["skipped"]] == [1]
    assert [u["label"] for u in r["usages"]] == ["S0", "S2", "S3"]
    want = layer_divergence(NeighbourAverage(table), [(sentences[i], sentences[j]) for i, j in
                                                      ((0, 2), (0, 3), (2, 3))], "bank")
    for got, pair in zip(r["pairs"], want["pairs"], strict=True):
        assert got["cosine_by_layer"] == pytest.approx(pair["cosine_by_layer"], abs=1e-12)
        assert got["sentences"] == pair["sentences"] and got["drop"] == pytest.approx(pair["drop"])
    assert r["layer_names"] == ["static", "mixed"] and r["layer_ids"] == [0, 1]


def test_a_sentence_holding_the_word_twice_gives_a_pair_of_its_own(table):
    """With occurrence "all" (what the lab sends), the two occurrences of one sentence are two
    usages, compared with each other too, named by sentence and occurrence."""
    sentences = ["bank money bank river", "river bank"]
    enc = NeighbourAverage(table, window=1)
    r = usage_divergence(enc, sentences, "bank", occurrence="all")
    assert [p["label"] for p in r["pairs"]] == ["S0 #0–S0 #1", "S0 #0–S1", "S0 #1–S1"]
    assert [(p["indices"], p["occurrences"]) for p in r["pairs"]] == [
        ([0, 0], [0, 1]), ([0, 1], [0, 0]), ([0, 1], [1, 0])]
    # window 1: bank #0 becomes money [1, 0], bank #1 the mean of money and river [.5, .5], S1's river [0, 1]
    assert [c for p in r["pairs"] for c in p["cosine_by_layer"]] == pytest.approx(
        [1.0, math.sqrt(0.5), 1.0, 0.0, 1.0, math.sqrt(0.5)], abs=1e-6)
    for p in r["pairs"]:  # each is the pair of those occurrences of layer_divergence
        (i, j), (a, b) = p["indices"], p["occurrences"]
        one = layer_divergence(enc, [(sentences[i], sentences[j])], "bank", occurrences=(a, b))
        assert p["cosine_by_layer"] == pytest.approx(one["pairs"][0]["cosine_by_layer"], abs=1e-12)


def test_usage_divergence_errors_say_what_works(table):
    enc = NeighbourAverage(table)
    with pytest.raises(AmbiguousTargetError, match=r"sentence 0 \('bank money bank'\): .*occurrence='all'"):
        usage_divergence(enc, ["bank money bank", "river bank"], "bank")
    with pytest.raises(TargetNotFoundError, match=r"sentence 1 \('river money'\) lacks 'bank'.*'skip'"):
        usage_divergence(enc, ["money bank", "river money"], "bank")
    with pytest.raises(InputError, match="'bank' has 1 usage"):
        usage_divergence(enc, ["money bank", "river money"], "bank", missing="skip")
    with pytest.raises(EmptyInputError):
        usage_divergence(enc, [], "bank")
    many = ["bank money " * 100 + "river", "river bank"]  # 101 usages: 5,050 pairs
    with pytest.raises(LimitError,
                       match=r"'bank' has 101 usages here, 5,050 pairs of them, over the limit of "
                                         r"5,000 pairs compared at once: .*occurrence=0"):
        usage_divergence(enc, many, "bank", occurrence="all")
    assert len(usage_divergence(enc, many, "bank", occurrence=0)["pairs"]) == 1  # the advice works
