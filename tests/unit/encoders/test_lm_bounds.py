"""The shortcuts that keep predict and the lens bounded give the plain rules' answers: the
tail a next word is read after is cut to its last white space, and the fill-mask rule is
vectorised."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from contextlens.encoders.wordprob import (
    WordProbability,
    ends_word,
    first_piece_words,
    local_tail,
    next_word,
    piece_classes,
)

PIECES = ["", " bank", "bank", "'s", ".", ",", "-", " ", "ing", " 1", "2", ",3", "\ufffd", "!", " well",
          "-known", "\u200d", "é", "\u0301"]
TEXT = st.text(alphabet=st.sampled_from(list("ab1 ,.-'’\u00e9\u0301\u200d😀") + ["\n", "\t"]), max_size=30)


@settings(max_examples=400, deadline=None)
@given(tail=TEXT, added=st.lists(st.sampled_from(PIECES), max_size=4))
def test_the_local_tail_answers_as_the_whole_tail(tail, added):
    text = "".join(added)
    assert next_word(local_tail(tail), text) == next_word(tail, text)


@settings(max_examples=150, deadline=None)
@given(tail=TEXT, added=st.sampled_from([" bank", " well-", "1", " 1,", "a", "'"]))
def test_ends_word_after_the_local_tail_is_the_same(tail, added):
    classes = piece_classes(PIECES)
    np.testing.assert_array_equal(ends_word(local_tail(tail), added, PIECES, classes),
                                  ends_word(tail, added, PIECES, classes))


def _first_piece_words_loop(probs, words, pieces, k):
    """The rule as it was written first: one pass over the pieces, most probable first."""
    total: dict[str, float] = {}
    used: dict[str, list[str]] = {}
    for i in np.argsort(-probs, kind="stable"):
        w = words[i]
        if w is not None:
            total[w] = total.get(w, 0.0) + float(probs[i])
            used.setdefault(w, []).append(pieces[i])
    best = sorted(total, key=lambda w: -total[w])[:k]
    return [WordProbability(w, total[w], tuple(used[w])) for w in best]


def test_the_vectorised_fill_mask_rule_is_the_loop():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 200))
        vocab = [f"w{i}" for i in range(int(rng.integers(1, 30)))]
        words = [None if rng.random() < 0.3 else vocab[int(rng.integers(len(vocab)))] for _ in range(n)]
        probs = rng.random(n)
        probs[rng.random(n) < 0.3] = 0.0  # ties at zero
        probs[rng.random(n) < 0.2] = 0.25  # and elsewhere
        pieces = [f"p{i}" for i in range(n)]
        k = int(rng.integers(1, 40))
        fast, loop = (
            first_piece_words(probs, words, pieces, k),
            _first_piece_words_loop(probs, words, pieces, k),
        )
        assert [(w.word, w.pieces) for w in fast] == [(w.word, w.pieces) for w in loop]
        np.testing.assert_allclose([w.probability for w in fast], [w.probability for w in loop], rtol=1e-12)
