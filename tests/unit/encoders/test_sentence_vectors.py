"""Sentence vectors of word-level encoders: the mean (or max) of the words' vectors, per
layer; none when only some words were kept."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.encoders.base import Encoding
from contextlens.encoders.mixing import NeighbourAverage
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import DimensionError, InputError, UnknownOptionError
from contextlens.text import tokenize
from contextlens.vectors import EmbeddingTable

TABLE = EmbeddingTable(["bank", "river", "money"], [[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]], name="toy")


def test_static_sentence_vector_is_the_mean_of_the_words_found():
    enc = StaticEncoder(TABLE).encode(["The bank by the river"])[0]  # 'the', 'by' are not in the table
    np.testing.assert_allclose(enc.sentence_vector("mean", normalize=False), [0.5, 1.0])
    np.testing.assert_allclose(enc.sentence_vector("mean"), np.array([0.5, 1.0]) / np.hypot(0.5, 1.0),
                               rtol=1e-6)
    np.testing.assert_allclose(enc.sentence_vector("max", normalize=False), [1.0, 2.0])
    with pytest.raises(InputError, match="no \\[CLS\\] piece"):
        enc.sentence_vector("cls")
    with pytest.raises(UnknownOptionError, match="sentence pooling"):
        enc.sentence_vector("sum")


def test_mixing_sentence_vectors_follow_each_layer():
    enc = NeighbourAverage(TABLE, alpha=0.5).encode(["bank river money"])[0]
    for layer in (0, 1):
        np.testing.assert_allclose(enc.sentence_vector("mean", layer, normalize=False),
                                   enc.layers[layer].mean(0), rtol=1e-6)


def test_no_sentence_vector_when_only_some_words_were_kept():
    enc = StaticEncoder(TABLE).encode(["bank river money"], targets={"bank"})[0]
    with pytest.raises(InputError, match="only some words were kept"):
        enc.sentence_vector()


def test_sentence_vectors_are_shape_checked():
    with pytest.raises(DimensionError, match="sentence_vectors"):
        Encoding("a b", tokenize("a b"), np.ones((2, 2, 3)), sentence_vectors={"mean": np.ones((1, 3))})


def test_compare_sentences_is_the_cosine_of_the_pooled_vectors():
    from contextlens.analysis.sentences import compare_sentences

    out = compare_sentences(NeighbourAverage(TABLE, alpha=0.5), "bank river", "money bank", layer=0)
    a, b = np.array([0.5, 1.0]), np.array([2.0, 0.5])  # the mean rows of each sentence at layer 0
    assert out["layer"] == 0 and out["layer_ids"] == [0, 1]
    assert out["cosine"] == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    assert out["cosine_by_layer"][0] == out["cosine"]
