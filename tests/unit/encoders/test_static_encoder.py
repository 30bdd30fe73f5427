"""StaticEncoder: table lookup with spans, case handling and out-of-vocabulary words."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.encoders.base import Encoder
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import (
    EmptyInputError,
    InputError,
    TargetNotFoundError,
    UnknownOptionError,
    UnknownWordError,
)
from contextlens.vectors import EmbeddingTable


@pytest.fixture
def lower_table():
    return EmbeddingTable(["the", "bank", "river", "money", "banks"],
                          np.arange(10.0).reshape(5, 2), name="lower.txt")


@pytest.fixture
def cased_table():
    return EmbeddingTable(["The", "Bank", "bank", "river"], np.arange(8.0).reshape(4, 2),
                          name="cased.txt")


def test_looks_up_rows_and_keeps_original_spans(lower_table):
    text = "The RIVER  bank"
    enc = StaticEncoder(lower_table).encode_one(text)
    assert enc.tokens == ["the", "river", "bank"]
    assert [text[w.start : w.end] for w in enc.words] == ["The", "RIVER", "bank"]
    assert enc.layers.shape == (1, 3, 2) and enc.layer_names == ("static",)
    assert enc.attention is None and enc.n_layers == 0
    np.testing.assert_array_equal(enc.layers[0], lower_table.vectors[[0, 2, 1]])
    np.testing.assert_array_equal(enc.vector("river"), lower_table.vector("river"))


def test_meta_names_encoder_vectors_and_params(lower_table):
    enc = StaticEncoder(lower_table, oov="skip").encode_one("bank")
    assert enc.meta == {
        "encoder": "static", "vectors": "lower.txt", "skipped": {},
        "params": {"encoder": "static", "vectors": "lower.txt", "table": lower_table.fingerprint(),
                   "lowercase": True, "lowercase_option": "auto", "oov": "skip"},
    }


def test_auto_lowercase_follows_the_table(lower_table, cased_table):
    assert StaticEncoder(lower_table).lowercase is True
    auto = StaticEncoder(cased_table)
    assert auto.lowercase is False
    assert auto.encode_one("The Bank bank").tokens == ["The", "Bank", "bank"]
    forced = StaticEncoder(cased_table, lowercase=True).encode_one("The Bank bank")
    assert forced.tokens == ["bank", "bank"]  # 'the' is not a key of the cased table
    assert forced.meta["params"]["lowercase_option"] is True
    kept = StaticEncoder(lower_table, lowercase=False).encode_one("The bank")
    assert kept.tokens == ["bank"] and kept.meta["skipped"] == {"The": ["the"]}


def test_skip_records_suggestions_and_find_explains(lower_table):
    enc = StaticEncoder(lower_table).encode_one("the bamk by the river")
    assert enc.tokens == ["the", "the", "river"]
    assert enc.meta["skipped"] == {"bamk": ["bank"], "by": []}
    with pytest.raises(TargetNotFoundError, match=r"'bamk' is in the sentence but not in "
                                                  r"lower\.txt; close keys: bank$"):
        enc.find("bamk")


def test_oov_error_raises_with_suggestions(lower_table):
    with pytest.raises(UnknownWordError, match=r"'bamk' is not in the table 'lower\.txt'; "
                                               r"close keys: bank") as info:
        StaticEncoder(lower_table, oov="error").encode_one("the bamk")
    assert info.value.suggestions[0] == "bank"


def test_every_word_oov_is_an_input_error(lower_table):
    with pytest.raises(InputError, match=r"none of the words of 'Zut, alors' .*'lower\.txt'"):
        StaticEncoder(lower_table).encode_one("Zut, alors")


def test_bad_options_and_empty_sentences(lower_table):
    with pytest.raises(UnknownOptionError, match="valid values: skip, error"):
        StaticEncoder(lower_table, oov="drop")
    with pytest.raises(InputError, match="lowercase"):
        StaticEncoder(lower_table, lowercase="yes")
    with pytest.raises(InputError, match="EmbeddingTable"):
        StaticEncoder({"bank": [1.0]})
    with pytest.raises(EmptyInputError, match="sentence 1 is empty"):  # the list's [1]
        StaticEncoder(lower_table).encode(["bank", "  "])


def test_encodes_many_sentences_and_is_an_encoder(lower_table):
    encoder = StaticEncoder(lower_table)
    assert isinstance(encoder, Encoder)
    encs = encoder.encode(["the bank", "money"])
    assert [e.tokens for e in encs] == [["the", "bank"], ["money"]]
    with pytest.raises(InputError, match="a list of sentences, not one string"):
        encoder.encode("river")  # a string would be read character by character
    assert encoder.encode_one("river").tokens == ["river"]
