"""The issue's acceptance test: the 16-phrase "bank" corpus, static vs contextual.

Raw co-occurrence counts (window 3, alphabetical vocabulary) are the static vectors; the
contextual "bank" comes from the real encoders (NeighbourAverage, SelfAttention). Every
figure must come out exactly, rounded to 3 decimals.
"""

from __future__ import annotations

import math

import pytest

from contextlens.encoders.mixing import NeighbourAverage, SelfAttention
from contextlens.encoders.static import StaticEncoder
from contextlens.static.cooccurrence import count_table
from contextlens.vectors import cosine
from contextlens.walkthrough import worked_example_corpus


def weights_for(enc, word, **kw):
    """(word, weight) pairs of the weights ``word`` gave every word."""
    return [(w, float(x)) for w, x in zip(enc.tokens, enc.weights(word, **kw), strict=True)]


CORPUS = worked_example_corpus()  # the 16 phrases, packaged for the demo
FINANCE, RIVER = "deposited money bank", "sat bank river"


def test_the_corpus_is_the_course_texts():
    assert len(CORPUS) == 16
    assert CORPUS[0] == "deposited money bank" and CORPUS[-1] == "fish swim near bank"
    assert sum(p.split().count("bank") for p in CORPUS) == 16


@pytest.fixture(scope="module")
def table():
    return count_table(CORPUS, window=3, vocab_order="alphabetical")


def test_the_table_is_raw_counts_over_the_sorted_vocabulary(table):
    vocab = sorted({w for s in CORPUS for w in s.split()})
    assert list(table.keys) == vocab
    assert table.dim == len(vocab)


def test_static_bank_is_ambiguous(table):
    enc = StaticEncoder(table).encode_one(FINANCE)
    bank = enc.vector("bank", layer=0)
    assert round(cosine(bank, table.vector("money")), 3) == 0.115
    assert round(cosine(bank, table.vector("river")), 3) == 0.227


@pytest.mark.parametrize(
    ("sentence", "to_money", "to_river"),
    [(FINANCE, 0.943, 0.694), (RIVER, 0.696, 0.969)],
)
def test_neighbour_average_excluding_bank_separates_the_senses(table, sentence, to_money,
                                                                to_river):
    enc = NeighbourAverage(table, alpha=0.0, window=None).encode_one(sentence)
    assert (enc.layers[0] == table.vectors[[table.index(w) for w in sentence.split()]]).all()
    bank = enc.vector("bank", layer=1)
    assert round(cosine(bank, table.vector("money")), 3) == to_money
    assert round(cosine(bank, table.vector("river")), 3) == to_river


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [(RIVER, {"sat": 0.374, "river": 0.626}), (FINANCE, {"deposited": 0.5, "money": 0.5})],
)
def test_attention_excluding_self_weighs_the_neighbours(table, sentence, expected):
    encoder = SelfAttention(table, include_self=False)
    enc = encoder.encode_one(sentence)
    assert enc.meta["params"]["effective_scale"] == pytest.approx(1 / math.sqrt(table.dim))
    weights = dict(weights_for(enc, "bank"))
    assert weights.pop("bank") == 0.0
    assert {w: round(x, 3) for w, x in weights.items()} == expected
