"""The top-level API: the library's own functions, one argument order, and a string where a
list of sentences or pairs is expected is an error (never a list of characters)."""

from __future__ import annotations

import inspect

import pytest

import contextlens
from contextlens.analysis import (
    attribution,
    explore,
    geometry,
    incontext,
    layers,
    neighbours,
    occlusion,
    ranking,
    senses,
    sentences,
)
from contextlens.encoders.mixing import NeighbourAverage
from contextlens.errors import InputError
from contextlens.vectors import EmbeddingTable

# verb: (the module that defines it, its positional parameters after the encoder)
VERBS = {
    "contextualize": (incontext, ["text", "word"]),
    "compare": (incontext, ["text1", "text2", "word"]),
    "layer_divergence": (layers, ["pairs", "word"]),
    "explore": (explore, ["sentences", "words"]),
    "senses": (senses, ["sentences", "word"]),
    "attribute": (attribution, ["text", "word"]),
    "rank_pairs": (ranking, ["pairs"]),
    "geometry": (geometry, ["sentences", "words"]),
    "contextual_neighbours": (neighbours, ["sentence", "word"]),
    "compare_sentences": (sentences, ["text1", "text2"]),
    "occlusion_vs_attention": (occlusion, ["text", "word"]),
}


@pytest.fixture
def encoder():
    table = EmbeddingTable(["money", "bank", "river"], [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    return NeighbourAverage(table)


@pytest.mark.parametrize("name", VERBS)
def test_a_top_level_verb_is_the_library_function(name):
    module, _ = VERBS[name]
    assert getattr(contextlens, name) is getattr(module, name) and name in contextlens.__all__


@pytest.mark.parametrize("name", VERBS)
def test_every_verb_takes_the_encoder_then_what_it_reads_then_the_word_then_options(name):
    module, positional = VERBS[name]
    params = list(inspect.signature(getattr(module, name)).parameters.values())
    assert params[0].name == "encoder"
    assert [p.name for p in params[1:] if p.kind is p.POSITIONAL_OR_KEYWORD] == positional
    assert all(p.kind is p.KEYWORD_ONLY for p in params[1 + len(positional):])


@pytest.mark.parametrize("call", [
    lambda e: contextlens.senses(e, "money bank", "bank"),
    lambda e: contextlens.explore(e, "money bank", "bank"),
    lambda e: contextlens.geometry(e, "money bank river"),
])
def test_one_string_for_a_list_of_sentences_is_an_error(call, encoder):
    with pytest.raises(InputError, match=r"give a list of sentences, not one string: \['money bank"):
        call(encoder)


def test_a_bare_pair_for_a_list_of_pairs_is_an_error(encoder):
    with pytest.raises(InputError, match="not one pair"):
        contextlens.layer_divergence(encoder, ("money bank", "river bank"), "bank")
    with pytest.raises(InputError, match="pair 1 is a str"):  # pairs[1]
        contextlens.layer_divergence(encoder, [("money bank", "river bank"), "bank river"], "bank")
    with pytest.raises(InputError, match="not one pair"):
        contextlens.rank_pairs(encoder, ("money", "river"))
    with pytest.raises(InputError, match="got str"):
        contextlens.rank_pairs(encoder, "money river")


def test_one_word_may_be_a_string(encoder):
    sentences = ["money bank", "river bank"]
    assert [w["word"] for w in contextlens.geometry(encoder, sentences, "bank")["words"]] == ["bank"]
    assert [w["word"] for w in contextlens.explore(encoder, sentences, "bank")["words"]] == ["bank"]
