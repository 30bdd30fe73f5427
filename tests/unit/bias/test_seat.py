"""SEAT's sentences are May et al.'s, SEAT is WEAT on the sentence vectors, CEAT's corpus
contexts follow the case rule and, on a static table, give back WEAT; layer-0 WEAT of an
encoder is WEAT on its static rows."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.bias import (
    WordSets,
    association_test,
    ceat_by_layer,
    contexts_from_corpus,
    pick_sentences,
    seat,
    seat_sentences,
    sentences_for,
    weat_encoder,
    weat_table,
)
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import InputError
from contextlens.vectors import EmbeddingTable

# sent-bias tests/sent-weat7.jsonl (May et al. 2019), the published sentences of two math words
ALGEBRA = ("This is an algebra.", "That is an algebra.", "There is an algebra.", "Here is an algebra.",
           "The algebra is here.", "The algebra is there.", "A algebra is a thing.", "It is a algebra.",
           "These are algebras.", "Those are algebras.", "They are algebras.", "The algebras are here.",
           "The algebras are there.", "Algebras are things.")
EQUATIONS_PLURAL = ("These are equationses.", "Those are equationses.", "They are equationses.",
                    "The equationses are here.", "The equationses are there.", "Equationses are things.")
WOMAN = ("This is a woman.", "That is a woman.", "There is a woman.", "Here is a woman.",
         "The woman is here.",
         "The woman is there.", "A woman is a person.", "These are women.", "Those are women.",
         "They are women.", "The women are here.", "The women are there.", "Women are people.")

TABLE = EmbeddingTable(["rose", "tulip", "ant", "flea", "love", "filth", "this", "is", "a", "the", "are"],
                       [[1, 0, 0], [0.8, 0.6, 0], [0, 1, 0], [0.6, 0.8, 0], [1, 0.1, 0], [0.1, 1, 0],
                        [0, 0, 1], [0, 0.2, 1], [0.3, 0, 1], [0, 0, 0.5], [0.2, 0.2, 1]], name="toy")
SETS = WordSets("toy", X=("rose", "tulip"), Y=("ant", "flea"), A=("love",), B=("filth",))


def test_sentences_are_the_published_ones():
    assert sentences_for("algebra") == ALGEBRA
    assert sentences_for("equations")[-6:] == EQUATIONS_PLURAL  # May et al.'s naive plural, kept
    assert sentences_for("woman") == WOMAN  # a person word: "A woman is a person.", "Women are people."
    assert sentences_for("Amanda")[-2:] == ("Amanda is a person.", "The person's name is Amanda.")
    assert sentences_for("children")[0] == "This is a child."  # a plural noun, singular first
    assert sentences_for("kill") == ("This will kill.", "This did kill.", "This can kill.", "This may kill.",
                                     "That will kill.", "That did kill.", "That can kill.", "That may kill.")
    assert seat_sentences(SETS).sizes == (28, 28, 4, 4)  # 14 per noun, 4 per mass noun


def test_seat_is_weat_on_the_sentence_vectors():
    encoder = StaticEncoder(TABLE)
    r = seat(encoder, SETS, permutations=1000)
    sentences = seat_sentences(SETS)
    # by hand: a static encoder's sentence vector is the mean of the rows of the words it knows
    def vec(s):
        rows = [TABLE.vectors[TABLE.index(w)] for w in s.lower().rstrip(".").split() if w in TABLE]
        return np.mean(rows, axis=0)
    X, Y, A, B = ([vec(s) for s in getattr(sentences, k)] for k in "XYAB")
    direct = association_test(X, Y, A, B, permutations=1000)
    assert (r.measure, r.model, r.layer, r.n_x, r.n_a) == ("seat", "static over toy", 0, 28, 4)
    assert r.effect_size == pytest.approx(direct.effect_size, abs=1e-6) and r.p_value == direct.p.p
    assert r.effect_size > 1  # flowers nearer love than insects are, through the sentences too


def test_layer0_weat_of_an_encoder_is_weat_on_its_rows():
    sets = WordSets("toy", X=("rose", "tulip", "lily"), Y=("ant", "flea"), A=("love",), B=("filth",))
    r = weat_encoder(StaticEncoder(TABLE), sets)
    expected = weat_table(TABLE, sets)
    assert (r.effect_size, r.p_value, r.missing.X, r.layer) == (expected.effect_size, expected.p_value,
                                                                ("lily",), 0)


def test_pick_sentences_case_rule_and_seeded_bound():
    lines = ["Rose sat", "a rose", "the ROSE", "Bill paid the bill", "bill and bill", "none"]
    assert pick_sentences(lines, ["rose", "Bill", "gone"]) == {"rose": [(0, 0), (1, 1), (2, 1)],
                                                                 "Bill": [(3, 0)]}
    two = pick_sentences(lines, ["rose"], per_word=2, seed=1)["rose"]
    assert len(two) == 2 and set(two) < {(0, 0), (1, 1), (2, 1)} and two == sorted(two)
    assert pick_sentences(lines, ["rose"], per_word=2, seed=1) == {"rose": two}  # seeded
    with pytest.raises(InputError):
        pick_sentences(lines, ["rose"], per_word=0)


def test_ceat_over_a_static_table_is_its_weat():
    """Every context of a word is its table row, so every draw is the same WEAT (τ² = 0)."""
    lines = ["the rose is a rose", "this tulip", "an ant", "the flea", "love is", "filth", "a tulip ."]
    contexts = contexts_from_corpus(StaticEncoder(TABLE), lines,
                                    [w for k in "XYAB" for w in getattr(SETS, k)])
    assert list(contexts) == [0] and {w: len(v) for w, v in contexts[0].items()} == {
        "rose": 1, "tulip": 2, "ant": 1, "flea": 1, "love": 1, "filth": 1}
    (r,) = ceat_by_layer(contexts, SETS, model="toy", samples=50)
    assert r.effect_size == pytest.approx(weat_table(TABLE, SETS).effect_size, abs=1e-9)
    assert (r.tau2, r.samples, r.layer) == (0.0, 50, 0)
