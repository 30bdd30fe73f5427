"""EmbeddingTable: construction, read-only views, lazy norms, neighbours, analogies, restrict,
suggestions, and agreement with gensim's KeyedVectors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from contextlens.errors import (
    DimensionError,
    EmptyInputError,
    InputError,
    UnknownOptionError,
    UnknownWordError,
    ZeroVectorError,
)
from contextlens.vectors import EmbeddingTable, cosine


@pytest.fixture
def toy():
    # rows chosen so every cosine below is easy to compute by hand
    return EmbeddingTable(
        ["bank", "money", "river", "water", "zero"],
        [[1, 1, 0], [1, 0, 0], [0, 1, 0], [0, 2, 1], [0, 0, 0]],
        name="toy",
    )


@pytest.fixture(scope="module")
def random_table():
    rng = np.random.default_rng(7)
    keys = [f"w{i}" for i in range(300)]
    return EmbeddingTable(keys, rng.standard_normal((300, 16)), name="random")


# -- construction ------------------------------------------------------------------------
def test_construction_stores_float32_rows_in_key_order():
    t = EmbeddingTable([1, "b"], np.array([[1, 2], [3, 4]], dtype=np.float64))
    assert t.keys == ("1", "b")
    assert t.vectors.dtype == np.float32 and t.vectors.shape == (2, 2)
    assert t.key_to_index == {"1": 0, "b": 1}
    assert (len(t), t.dim, "b" in t, "c" in t) == (2, 2, True, False)
    assert repr(t) == "EmbeddingTable('table', 2 words, dim 2)"


@pytest.mark.parametrize(
    ("keys", "vectors", "error", "says"),
    [
        (["a", "b"], [1.0, 2.0], DimensionError, "2-D"),
        (["a", "b"], [[1.0, 2.0]], DimensionError, "2 keys but 1 vector rows"),
        (["a"], [[[1.0]]], DimensionError, "2-D"),
        (["a", "b", "a"], [[1.0], [2.0], [3.0]], InputError, "duplicate key 'a'"),
    ],
)
def test_construction_errors_say_what_is_wrong(keys, vectors, error, says):
    with pytest.raises(error, match=says):
        EmbeddingTable(keys, vectors)


# -- read-only views and lazy norms ------------------------------------------------------
def test_every_array_handed_out_is_read_only(toy):
    for array in (toy.vectors, toy.vector("bank"), toy.norms, toy.unit_vectors):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 5.0
    assert toy.vector("bank").tolist() == [1, 1, 0]


def test_construction_does_not_freeze_the_callers_array():
    mine = np.ones((2, 3), dtype=np.float32)
    EmbeddingTable(["a", "b"], mine)
    mine[0, 0] = 2.0  # the caller's array is theirs to change
    assert mine[0, 0] == 2.0


def test_norms_are_computed_lazily_and_once(monkeypatch):
    calls = []
    real_norm = np.linalg.norm

    def counting_norm(*args, **kwargs):
        calls.append(1)
        return real_norm(*args, **kwargs)

    monkeypatch.setattr(np.linalg, "norm", counting_norm)
    t = EmbeddingTable(["a", "b"], [[3, 4], [0, 2]])
    assert calls == []  # nothing computed at construction
    assert t.norms.tolist() == [5.0, 2.0]
    assert t.norms is t.norms and t.unit_vectors is t.unit_vectors
    assert len(calls) == 1
    np.testing.assert_allclose(t.unit_vectors, [[0.6, 0.8], [0.0, 1.0]])


# -- cosine and zero vectors -------------------------------------------------------------
def test_cosine_by_hand_and_its_errors():
    assert cosine(np.array([1.0, 0.0]), np.array([1.0, 1.0])) == pytest.approx(2 ** -0.5)
    with pytest.raises(DimensionError, match=r"\(2,\) and \(3,\)"):
        cosine(np.zeros(2), np.zeros(3))
    with pytest.raises(ZeroVectorError, match="zero vector"):
        cosine(np.array([1.0, 2.0]), np.zeros(2))


def test_zero_vector_cosine_raises_but_neighbours_still_work(toy):
    with pytest.raises(ZeroVectorError):
        toy.similarity("zero", "bank")
    with pytest.raises(ZeroVectorError):
        toy.most_similar("zero")
    with pytest.raises(ZeroVectorError):
        toy.most_similar(np.zeros(3))
    with pytest.raises(ZeroVectorError, match="'zero'"):
        toy.analogy("bank", "money", "zero")
    neighbours = dict(toy.most_similar("money", k=10))
    assert neighbours["zero"] == 0.0  # a zero row scores 0, it does not poison the ranking
    assert neighbours["bank"] == pytest.approx(2 ** -0.5, abs=1e-6)


# -- most_similar ------------------------------------------------------------------------
def test_most_similar_to_a_word_ranks_by_cosine_and_skips_the_word(toy):
    result = toy.most_similar("bank", k=3)
    assert [w for w, _ in result] == ["money", "river", "water"]
    assert [s for _, s in result] == pytest.approx([2 ** -0.5, 2 ** -0.5, 2 / 10 ** 0.5], abs=1e-6)
    assert len(toy.most_similar("bank", k=100)) == 4  # every other word, no more


def test_most_similar_to_a_vector_excludes_nothing_unless_asked(toy):
    assert [w for w, _ in toy.most_similar(np.array([1.0, 0.0, 0.0]), k=2)] == ["money", "bank"]
    got = toy.most_similar(np.array([1.0, 0.0, 0.0]), k=2, exclude=["money", "not-a-word"])
    assert [w for w, _ in got] == ["bank", "river"]
    with pytest.raises(DimensionError, match=r"needs \(3,\)"):
        toy.most_similar(np.ones(4))
    with pytest.raises(InputError, match="k must be a whole number >= 1, got 0"):
        toy.most_similar("bank", k=0)


def test_most_similar_matches_gensim(random_table):
    kv = random_table.to_gensim()
    for word in ("w0", "w17", "w250"):
        ours = random_table.most_similar(word, k=8)
        theirs = kv.most_similar(word, topn=8)
        assert [w for w, _ in ours] == [w for w, _ in theirs]
        np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-5)


@settings(max_examples=40, deadline=None)
@given(arrays(np.float32, (6, 3), elements=st.floats(-10, 10, width=32)))
def test_neighbour_scores_are_sorted_cosines(vectors):
    vectors[:, 0] += 20.0  # keep every row away from zero
    t = EmbeddingTable(list("abcdef"), vectors)
    result = t.most_similar("a", k=5)
    scores = [s for _, s in result]
    assert scores == sorted(scores, reverse=True)
    for word, score in result:
        assert score == pytest.approx(cosine(t.vector("a"), t.vector(word)), abs=1e-5)


# -- analogies ---------------------------------------------------------------------------
QUESTIONS = [("w1", "w2", "w3"), ("w10", "w200", "w33"), ("w299", "w0", "w150")]


@pytest.mark.parametrize("abc", QUESTIONS)
def test_3cosadd_matches_gensim_most_similar(random_table, abc):
    a, b, c = abc
    ours = random_table.analogy(a, b, c, k=5)
    theirs = random_table.to_gensim().most_similar(positive=[b, c], negative=[a], topn=5)
    assert [w for w, _ in ours] == [w for w, _ in theirs]
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=1e-5)


@pytest.mark.filterwarnings("ignore:Call to deprecated:DeprecationWarning")  # inside gensim
@pytest.mark.parametrize("abc", QUESTIONS)
def test_3cosmul_matches_gensim_most_similar_cosmul(random_table, abc):
    a, b, c = abc
    kv = random_table.to_gensim()
    ours = random_table.analogy(a, b, c, k=5, method="3cosmul")
    theirs = kv.most_similar_cosmul(positive=[b, c], negative=[a], topn=5)
    assert [w for w, _ in ours] == [w for w, _ in theirs]
    # gensim divides by (cos'(d, a) + 1e-6), contextlens by (cos'(d, a) + 1e-3) as in Levy &
    # Goldberg (2014); cos' = (1 + cos) / 2. Put gensim's scores on our epsilon to compare.
    rescaled = []
    for word, score in theirs:
        shifted = (1.0 + kv.similarity(word, a)) / 2.0
        rescaled.append(score * (shifted + 1e-6) / (shifted + 1e-3))
    np.testing.assert_allclose([s for _, s in ours], rescaled, atol=1e-5)


def test_analogy_restrict_matches_gensim_restrict_vocab(random_table):
    ours = random_table.analogy("w5", "w6", "w7", k=3, restrict=50)
    theirs = random_table.to_gensim().most_similar(
        positive=["w6", "w7"], negative=["w5"], topn=3, restrict_vocab=50)
    assert [w for w, _ in ours] == [w for w, _ in theirs]
    assert all(int(w[1:]) < 50 for w, _ in ours)


def test_analogy_by_hand_and_bad_method():
    t = EmbeddingTable(["man", "king", "woman", "queen", "apple"],
                       [[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 1], [1, -1, 1]])
    (word, score), = t.analogy("man", "king", "woman")
    # on unit rows: king - man + woman = (1/√2 - 1, 1/√2, 1); queen = (0, 1, 1) / √2
    target = np.array([2 ** -0.5 - 1, 2 ** -0.5, 1])
    expected = (2 ** -0.5 + 1) / (2 ** 0.5 * np.linalg.norm(target))  # 0.95857
    assert word == "queen" and score == pytest.approx(expected, abs=1e-6)
    with pytest.raises(UnknownOptionError, match="valid values: 3cosadd, 3cosmul"):
        t.analogy("man", "king", "woman", method="3cosdiv")


# -- restrict ----------------------------------------------------------------------------
def test_restrict_keeps_the_order_given_and_drops_repeats(toy):
    small = toy.restrict(["water", "bank", "water"])
    assert small.keys == ("water", "bank") and small.name == "toy"
    assert small.vectors.tolist() == [[0, 2, 1], [1, 1, 0]]


def test_restrict_missing_words(toy):
    with pytest.raises(UnknownWordError, match="'Water' is not in the table 'toy'; close keys: water"):
        toy.restrict(["bank", "Water"])
    assert toy.restrict(["bank", "Water"], missing="skip").keys == ("bank",)
    with pytest.raises(EmptyInputError, match="kept no words"):
        toy.restrict(["nope"], missing="skip")
    with pytest.raises(UnknownOptionError, match="valid values: error, skip"):
        toy.restrict(["bank"], missing="ignore")


# -- suggestions -------------------------------------------------------------------------
@pytest.fixture
def spelled():
    keys = ["bank", "BANK", "banks", "Paris", "paris", "receive", "river"]
    return EmbeddingTable(keys, np.eye(len(keys)), name="spelled")


@pytest.mark.parametrize(
    ("word", "expected"),
    [("Bank", ["bank", "BANK"]), ("PARIS", ["paris", "Paris"]), ("recieve", ["receive"]),
     ("bnak", ["bank"]), ("xyz", [])],
)
def test_suggest_offers_case_variants_then_close_spellings(spelled, word, expected):
    assert spelled.suggest(word) == expected


def test_suggest_looks_among_the_keys_of_the_same_first_letter_and_near_length():
    """The keys are grouped once by (first letter, length); the suggestions are those of the rule
    over every key: same first letter (any case), length within 2, difflib's ratio >= 0.7."""
    import difflib

    rng = np.random.default_rng(3)
    keys = sorted({"".join(rng.choice(list("abcAB"), size=int(rng.integers(1, 8)))) for _ in range(400)})
    table = EmbeddingTable(keys, np.ones((len(keys), 2)), name="letters")
    for word in ["abca", "Bacab", "ccc", "a", "abcabcab", "", "zz", "ABBA"]:
        pool = [k for k in keys if k[:1].lower() == word[:1].lower() and abs(len(k) - len(word)) <= 2]
        case = [v for v in (word.lower(), word.capitalize(), word.upper()) if v != word and v in keys]
        close = [k for k in difflib.get_close_matches(word, pool, n=3, cutoff=0.7) if k not in case]
        assert table.suggest(word) == (case + close)[:3], word


def test_unknown_word_error_lists_suggestions(spelled):
    with pytest.raises(UnknownWordError) as info:
        spelled.vector("recieve")
    assert str(info.value) == "'recieve' is not in the table 'spelled'; close keys: receive"
    assert info.value.suggestions == ["receive"] and info.value.word == "recieve"
    with pytest.raises(UnknownWordError, match=r"^'xyz' is not in the table 'spelled'$"):
        spelled.index("xyz")


# -- gensim ------------------------------------------------------------------------------
def test_gensim_round_trip(random_table):
    kv = random_table.to_gensim()
    assert kv.index_to_key == list(random_table.keys)
    np.testing.assert_array_equal(kv.vectors, random_table.vectors)
    back = EmbeddingTable.from_gensim(kv, name="again")
    assert back.keys == random_table.keys and back.name == "again"
    np.testing.assert_array_equal(back.vectors, random_table.vectors)


def test_the_longest_vectors_allowed_give_true_cosines_and_longer_ones_are_refused():
    """A vector whose squared length overflows float32 (1e30 here, 3e38 in the audit) is
    refused when the table is made: loaded, it overflowed in the first float32 sum or
    norm of some consumer (warnings, then 'the cosine of a zero vector')."""
    import json

    from contextlens.vectors import MAX_LENGTH

    big = 1.3e19  # c is 1.84e19 long: just within MAX_LENGTH
    t = EmbeddingTable(["a", "b", "c"], [[big, 0.0], [0.0, big], [big, big]])
    got = t.most_similar("c", k=2)
    assert [w for w, _ in got] == ["a", "b"] and got[0][1] == pytest.approx(2 ** -0.5, rel=1e-6)
    json.dumps(got, allow_nan=False)  # what --json prints
    assert t.norms.tolist() == pytest.approx([big, big, big * 2**0.5], rel=1e-6) and t.norms[2] < MAX_LENGTH
    with np.errstate(all="raise"):  # float32 arithmetic on the table overflows nowhere
        assert np.isfinite(t.vectors @ t.vectors.T).all() and np.isfinite(t.vectors.sum(axis=0)).all()
    for rows in ([[1e30, 0.0], [0.0, 1.0]], [[1.0, 0.0], [big, 1.4e19]], [[3e38, 1.0], [1.0, 1.0]]):
        with pytest.raises(InputError, match=r"value 1 of the vector of 'a' is .*, which makes its vector .* "
                                             r"long: beyond 1.8e\+19|value 2 of the vector of 'b'"):
            EmbeddingTable(["a", "b"], rows)
