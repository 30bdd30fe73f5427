"""Co-occurrence counts: the course's worked example, and equality with a plain loop."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextlens.errors import EmptyInputError, InputError, UnknownOptionError, UnknownWordError
from contextlens.static import cooccurrence as co_module
from contextlens.static import pairs
from contextlens.static.cooccurrence import cooccurrence_matrix, count_table, dense_rows

WORKED = [
    "deposited money bank", "bank approved loan", "opened account bank", "withdrew cash bank",
    "bank charged fee", "bank transferred funds", "loan from bank", "money in bank",
    "sat bank river", "fished along bank water", "boat drifted toward bank",
    "river bank covered mud", "birds nested bank stream", "swam near bank river",
    "bank overgrown reeds", "fish swim near bank",
]


def course_loop(corpus, window):
    """The course text's dict-of-dicts loop, verbatim in spirit."""
    cooc = defaultdict(lambda: defaultdict(int))
    for sentence in corpus:
        tokens = sentence.split()
        for i, tok in enumerate(tokens):
            start, end = max(0, i - window), min(len(tokens), i + window + 1)
            for j in range(start, end):
                if j != i:
                    cooc[tok][tokens[j]] += 1
    return cooc


def plain_loop(sentences, window, weighting, vocab):
    """The documented semantics: out-of-vocabulary tokens keep their positions."""
    counts = defaultdict(float)
    for tokens in sentences:
        for i in range(len(tokens)):
            for j in range(max(0, i - window), min(len(tokens), i + window + 1)):
                if j != i and tokens[i] in vocab and tokens[j] in vocab:
                    counts[tokens[i], tokens[j]] += 1.0 if weighting == "none" else 1.0 / abs(i - j)
    return counts


def as_dense(counts, vocab):
    index = {w: i for i, w in enumerate(vocab)}
    out = np.zeros((len(vocab), len(vocab)))
    for (a, b), x in counts.items():
        out[index[a], index[b]] = x
    return out


def test_worked_example_static_cosines():
    table = count_table(WORKED, window=3, vocab_order="alphabetical")
    assert round(table.similarity("bank", "money"), 3) == 0.115
    assert round(table.similarity("bank", "river"), 3) == 0.227
    words = sorted({w for s in WORKED for w in s.split()})
    assert list(table.keys) == words
    loop = course_loop(WORKED, 3)
    expected = np.array([[loop[w][c] for c in words] for w in words], dtype=np.float32)
    np.testing.assert_array_equal(table.vectors, expected)


def test_frequency_order_breaks_ties_alphabetically():
    co = cooccurrence_matrix(["b a c", "c b", "d"])
    assert co.vocab == ["b", "c", "a", "d"]
    assert co.word_counts.tolist() == [2, 2, 1, 1]
    assert co.n_tokens == 6 and co.n_sentences == 3


@pytest.mark.parametrize("weighting", ["none", "harmonic"])
@pytest.mark.parametrize("min_count,max_vocab", [(1, None), (2, None), (1, 3)])
def test_equals_the_plain_loop_with_oov_positions_kept(weighting, min_count, max_vocab):
    corpus = ["a b rare c a", "b b a", "x y z a", "", "c rare rare b a c"]
    co = cooccurrence_matrix(corpus, window=2, weighting=weighting, min_count=min_count,
                             max_vocab=max_vocab)
    expected = plain_loop([s.split() for s in corpus], 2, weighting, set(co.vocab))
    np.testing.assert_allclose(co.counts.toarray(), as_dense(expected, co.vocab))
    assert (co.counts != co.counts.T).nnz == 0


def test_windows_do_not_cross_lines_and_oov_does_not_bridge():
    co = cooccurrence_matrix(["a x b", "x", "c"], window=1, min_count=1)
    x = co.index("x")
    assert co.counts[co.index("a"), co.index("b")] == 0  # distance 2
    assert co.counts[co.index("b"), co.index("c")] == 0  # different lines
    assert co.counts[x, x] == 0
    rare = cooccurrence_matrix(["a x b", "x"], window=1, min_count=2)
    assert rare.vocab == ["x"] and rare.counts.nnz == 0


def test_repeated_word_counts_twice_on_the_diagonal():
    co = cooccurrence_matrix(["a a"], window=1)
    assert co.counts.toarray().tolist() == [[2]]
    assert course_loop(["a a"], 1)["a"]["a"] == 2


@settings(max_examples=40, deadline=None)
@given(
    sentences=st.lists(st.lists(st.sampled_from("abcdefghij"), max_size=9), min_size=1, max_size=12),
    window=st.integers(1, 4),
    weighting=st.sampled_from(["none", "harmonic"]),
    min_count=st.integers(1, 3),
)
def test_property_equals_loop_through_dense_and_sparse_paths(sentences, window, weighting, min_count):
    sentences = [s for s in sentences if s] or [["a"]]
    corpus = [" ".join(s) for s in sentences]
    if not any(sum(s.count(w) for s in sentences) >= min_count for w in "abcdefghij"):
        return
    original = pairs._DENSE_CELLS
    pairs._DENSE_CELLS = 6  # a 3-word dense block: pairs of rarer words take the sorted path
    try:
        co = cooccurrence_matrix(corpus, window=window, weighting=weighting, min_count=min_count)
    finally:
        pairs._DENSE_CELLS = original
    expected = plain_loop(sentences, window, weighting, set(co.vocab))
    np.testing.assert_allclose(co.counts.toarray(), as_dense(expected, co.vocab))


def test_many_blocks_segments_and_a_spilled_stream_give_the_same_counts(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(60)]
    lines = [" ".join(rng.choice(words, size=rng.integers(1, 12))) for _ in range(400)]
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines) + "\n")
    whole = cooccurrence_matrix(path, window=3, weighting="harmonic")
    monkeypatch.setattr("contextlens.corpus.reading.BLOCK_BYTES", 64)
    monkeypatch.setattr(co_module, "_SEGMENT_TOKENS", 50)
    monkeypatch.setattr(co_module, "_SPILL_BYTES", 100)
    monkeypatch.setattr(pairs, "_DENSE_CELLS", 100)
    pieces = cooccurrence_matrix(path, window=3, weighting="harmonic")
    assert pieces.vocab == whole.vocab
    np.testing.assert_allclose(pieces.counts.toarray(), whole.counts.toarray())
    expected = plain_loop([s.split() for s in lines], 3, "harmonic", set(whole.vocab))
    np.testing.assert_allclose(whole.counts.toarray(), as_dense(expected, whole.vocab))


def test_words_tokenizer_lower_and_progress():
    seen = []
    co = cooccurrence_matrix(["The bank, the RIVER."], window=1, lower=True, tokenizer="words",
                             progress=seen.append)
    assert co.vocab == ["the", ",", ".", "bank", "river"]
    assert co.counts[co.index("bank"), co.index(",")] == 1
    assert seen == [1]


def test_a_nul_character_is_refused_not_counted_as_a_word():
    with pytest.raises(InputError, match="corpus item 1 holds the NUL character"):
        cooccurrence_matrix(["a b", "a \x00 b"], window=1)
    # a word holding NUL would not survive
    co = cooccurrence_matrix(["a b", "a \x00 b"], window=1, errors="skip")
    assert co.vocab == ["a", "b"] and co.n_sentences == 1  # a vector file (.npz drops a trailing NUL)


def test_bad_arguments():
    with pytest.raises(InputError, match="window must be a whole number >= 1"):
        cooccurrence_matrix(["a b"], window=0)
    with pytest.raises(UnknownOptionError, match="none, harmonic"):
        cooccurrence_matrix(["a b"], weighting="linear")
    with pytest.raises(UnknownOptionError, match="frequency, alphabetical"):
        cooccurrence_matrix(["a b"], vocab_order="random")
    with pytest.raises(EmptyInputError, match="lower min_count"):
        cooccurrence_matrix(["a b"], min_count=5)
    with pytest.raises(UnknownWordError, match="bank"):
        cooccurrence_matrix(["banks b"]).index("bank")


def test_dense_rows_refuses_huge_tables(monkeypatch):
    monkeypatch.setattr(co_module, "MAX_DENSE_BYTES", 10)
    co = cooccurrence_matrix(["a b c"])
    with pytest.raises(InputError, match="max_vocab"):
        dense_rows(co.counts)


@pytest.mark.parametrize("method,dim", [("counts", None), ("ppmi", None), ("ppmi-svd", 4),
                                        ("word2vec", 4), ("fasttext", 4), ("glove", 4)])
def test_build_table_every_method(tmp_path, method, dim):
    from contextlens.static.build import build_table

    path = tmp_path / "c.txt"
    path.write_text("\n".join(WORKED) + "\n")
    extra = {"epochs": 2} if method in ("word2vec", "fasttext", "glove") else {}
    if method in ("word2vec", "fasttext"):
        extra["workers"] = 1
    table = build_table([str(path)], method, dim=dim, min_count=2, **extra)
    assert "bank" in table and table.name == method
    assert table.dim == (len(table) if dim is None else dim)


def test_build_table_refuses_options_that_do_not_apply():
    from contextlens.static.build import build_table

    with pytest.raises(InputError, match="dim does not apply to method 'counts'"):
        build_table(WORKED, "counts", dim=50)
    with pytest.raises(InputError, match="epochs does not apply to method 'ppmi-svd'"):
        build_table(WORKED, "ppmi-svd", epochs=3)
    with pytest.raises(InputError, match="weighting does not apply to method 'word2vec'"):
        build_table(WORKED, "word2vec", weighting="harmonic")
    with pytest.raises(UnknownOptionError, match="did you mean 'glove'"):
        build_table(WORKED, "gloves")
