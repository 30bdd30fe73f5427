"""The polysemy explorer and the usage collector: hand-computed cosines and spreads."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from contextlens.analysis.explore import explore, spread, usage_similarity
from contextlens.analysis.usages import Usage, Usages, collect_usages, read_sentences
from contextlens.encoders.mixing import NeighbourAverage
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import (
    AmbiguousTargetError,
    EmptyInputError,
    InputError,
    TargetNotFoundError,
    TextDecodingError,
    UnknownOptionError,
)
from contextlens.vectors import EmbeddingTable

R = 1 / math.sqrt(2)


@pytest.fixture
def table():
    return EmbeddingTable(["bank", "money", "river"], [[1, 1], [1, 0], [0, 1]], name="toy")


SENTENCES = ["money bank", "river bank", "money river bank"]


def test_spread_of_a_hand_made_matrix():
    m = np.array([[1.0, 0.2, 0.6], [0.2, 1.0, 0.4], [0.6, 0.4, 1.0]])
    s = spread(m)
    assert s["mean_cosine"] == pytest.approx(0.4)
    assert s["spread"] == pytest.approx(0.6)
    assert (s["min_cosine"], s["max_cosine"]) == (0.2, 0.6)
    assert s["least_similar"] == [0, 1] and s["most_similar"] == [0, 2]


def test_spread_needs_two_usages():
    with pytest.raises(InputError, match="at least 2"):
        spread(np.ones((1, 1)))


def test_explore_one_word_with_neighbour_averaging(table):
    # alpha 0: bank becomes the mean of its neighbours: money [1, 0], river [0, 1], both [.5, .5]
    r = explore(NeighbourAverage(table), SENTENCES, "bank")
    (w,) = r["words"]
    assert r["layer_name"] == "mixed" and w["n_usages"] == 3
    np.testing.assert_allclose(w["matrix"], [[1, 0, R], [0, 1, R], [R, R, 1]], atol=1e-6)
    assert w["spread"] == pytest.approx(1 - 2 * R / 3, abs=1e-6)
    assert w["least_similar"] == [0, 1] and w["min_cosine"] == pytest.approx(0, abs=1e-6)


def test_static_layer_has_no_spread(table):
    w = explore(NeighbourAverage(table), SENTENCES, "bank", layer=0)["words"][0]
    np.testing.assert_allclose(w["matrix"], np.ones((3, 3)), atol=1e-6)
    assert w["spread"] == pytest.approx(0, abs=1e-6)


def test_several_words_use_the_sentences_that_contain_them(table):
    r = explore(NeighbourAverage(table), SENTENCES, ["bank", "money"])
    bank, money = r["words"]
    assert bank["positions"] == [0, 1, 2] and bank["skipped"] == []
    assert money["positions"] == [0, 2] and money["skipped"] == [1]
    # money's neighbours: bank [1, 1] vs mean(river, bank) [.5, 1]
    assert money["matrix"][0][1] == pytest.approx(1.5 / (math.sqrt(2) * math.sqrt(1.25)), abs=1e-6)


def test_one_word_missing_from_a_sentence_is_named(table):
    with pytest.raises(TargetNotFoundError, match=r"sentence 1 \('river money'\) lacks 'bank'.*skip"):  # [1]
        explore(NeighbourAverage(table), ["money bank", "river money", "bank river"], "bank")
    r = explore(NeighbourAverage(table), ["money bank", "river money", "bank river"], "bank", missing="skip")
    assert r["words"][0]["skipped"] == [1]


def test_a_word_with_one_usage_is_an_error(table):
    with pytest.raises(InputError, match="'money' has 1 usage"):
        explore(NeighbourAverage(table), ["money bank", "river bank"], ["bank", "money"])


def test_projection_is_added_and_checked(table):
    r = explore(NeighbourAverage(table), SENTENCES, ["bank", "river"], projection="pca")
    assert np.asarray(r["projection"]["points"]).shape == (5, 2)
    assert r["projection"]["word"] == ["bank"] * 3 + ["river"] * 2
    with pytest.raises(UnknownOptionError, match="valid values: pca, tsne, umap"):
        explore(NeighbourAverage(table), SENTENCES, "bank", projection="mds")


@settings(max_examples=25, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 6), st.just(3)),
              elements=st.floats(0.1, 10, allow_nan=False)))
def test_usage_cosine_matrix_is_symmetric_with_unit_diagonal(x):
    usages = [Usage(f"s{i}", i, 0, "w", (0, 1)) for i in range(len(x))]
    u = Usages("w", usages, x[:, None, :], ("static",))
    m = np.array(usage_similarity(u, 0)["matrix"])
    np.testing.assert_allclose(m, m.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(m), 1.0, atol=1e-12)


def test_collect_usages_occurrences(table):
    enc = StaticEncoder(table)
    with pytest.raises(AmbiguousTargetError, match="occurs 2 times"):
        collect_usages(enc, ["bank money bank"], "bank")
    assert collect_usages(enc, ["bank money bank"], "bank", occurrence=1).usages[0].index == 2
    u = collect_usages(enc, ["bank money bank", "river bank"], "bank", occurrence="all")
    assert [(x.position, x.index, x.occurrence) for x in u.usages] == [(0, 0, 0), (0, 2, 1), (1, 1, 0)]
    assert u.labels == ["S0 #0", "S0 #1", "S1"]  # the sentence, and the occurrence where it holds two
    one = collect_usages(enc, ["bank money bank", "river bank money bank"], "bank", occurrence=1)
    assert [x.occurrence for x in one.usages] == [1, 1] and one.labels == ["S0", "S1"]
    assert u.vectors.shape == (3, 1, 2)
    with pytest.raises(InputError, match="layer 1 is not available"):
        u.at(1)


def test_collect_usages_of_a_word_in_no_sentence(table):
    with pytest.raises(EmptyInputError, match="no sentence contains 'loan'"):
        collect_usages(StaticEncoder(table), ["money bank"], "loan", missing="skip")


def test_read_sentences(tmp_path):
    p = tmp_path / "s.txt"
    p.write_text("# usages of bank\n\nThe bank lends.\n  # indented comment\nA river bank.\n",
                 encoding="utf-8")
    assert read_sentences(p, ["One more bank."]) == ["The bank lends.", "A river bank.", "One more bank."]
    (tmp_path / "empty.txt").write_text("# nothing\n\n")
    with pytest.raises(EmptyInputError, match="holds no sentences"):
        read_sentences(tmp_path / "empty.txt")
    with pytest.raises(InputError, match="no such file"):
        read_sentences(tmp_path / "missing.txt")
    (tmp_path / "latin1.txt").write_bytes("café bank\n".encode("latin-1"))
    with pytest.raises(TextDecodingError, match="byte offset 3"):
        read_sentences(tmp_path / "latin1.txt")


def test_explore_names_each_usage_by_sentence_and_occurrence(table):
    r = explore(StaticEncoder(table), ["money bank", "bank river bank", "river"], "bank", occurrence="all",
                missing="skip")
    w = r["words"][0]
    assert (w["positions"], w["occurrences"], w["labels"]) == ([0, 1, 1], [0, 0, 1], ["S0", "S1 #0", "S1 #1"])


def test_a_word_twice_in_a_sentence_is_answered_with_what_the_analysis_takes(table):
    """The error offered occurrence='all' to every analysis, senses too, which refuses it."""
    twice = ["bank money bank", "river bank", "money bank"]
    with pytest.raises(AmbiguousTargetError) as err:
        explore(StaticEncoder(table), twice, "bank")
    assert "take every occurrence (pass occurrence='all')" in str(err.value)
    assert "take the first in each sentence (pass occurrence=0)" in str(err.value)
    assert len(explore(StaticEncoder(table), twice, "bank", occurrence="all")["words"][0]["labels"]) == 4
    from contextlens.analysis.senses import senses

    with pytest.raises(AmbiguousTargetError) as err:
        senses(StaticEncoder(table), twice, "bank")
    message = str(err.value)
    assert message.startswith("sentence 0 ('bank money bank'): 'bank' occurs 2 times")
    assert "'all'" not in message and "take the first in each sentence (pass occurrence=0)" in message
    with pytest.raises(InputError, match="senses takes one usage per sentence"):
        senses(StaticEncoder(table), twice, "bank", occurrence="all")
    assert senses(StaticEncoder(table), twice, "bank", occurrence=0)["n_usages"] == 3  # the advice works
