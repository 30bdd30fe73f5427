"""Pieces → words: alignment, pooling weights, word-level attention, sliding windows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextlens.encoders.alignment import (
    Alignment,
    aggregate_attention,
    align_pieces,
    assign_windows,
    attention_matrices,
    plan_windows,
    pooling_weights,
    trim_span,
    window_attention,
)
from contextlens.errors import InputError, UnknownOptionError
from contextlens.text import tokenize


def test_wordpiece_offsets_of_tricky_words():
    # as minilm's WordPiece splits it: didn ' t | well - known | 1 , 200 | café | ☕ | anti ##dis...
    text = "didn't well-known 1,200 café ☕ antidisestablishment"
    offsets = [(0, 0), (0, 4), (4, 5), (5, 6), (7, 11), (11, 12), (12, 17), (18, 19), (19, 20),
               (20, 23), (24, 28), (29, 30), (31, 35), (35, 38), (38, 41), (41, 43), (43, 47),
               (47, 51), (0, 0)]
    special = [1] + [0] * 17 + [1]
    al = align_pieces(text, tokenize(text), offsets, special)
    assert al.word_pieces == ((1, 2, 3), (4, 5, 6), (7, 8, 9), (10,), (11,), (12, 13, 14, 15, 16, 17))
    assert al.piece_words[0] == al.piece_words[18] == ()
    assert al.missing == ()


def test_byte_level_offsets_with_leading_space_and_merged_punctuation():
    # as GPT-2 style BPE reports them: 'Ġbank' covers " bank"; '?"' covers two words; 'Ġ' alone
    text = 'The  bank?" ☕'
    offsets = [(0, 3), (3, 4), (4, 9), (9, 11), (11, 13), (12, 13), (12, 13)]
    al = align_pieces(text, tokenize(text), offsets)
    assert [w.text for w in tokenize(text)] == ["The", "bank", "?", '"', "☕"]
    assert al.piece_words == ((0,), (), (1,), (2, 3), (4,), (4,), (4,))
    assert al.word_pieces == ((0,), (2,), (3,), (3,), (4, 5, 6))


def test_a_word_without_pieces_is_missing():
    text = "bank \x07 river"
    al = align_pieces(text, tokenize(text), [(0, 0), (0, 4), (7, 12), (0, 0)], [1, 0, 0, 1])
    assert al.missing == (1,)
    assert pooling_weights(al, "mean") == ([0, 2], [1, 2], [1.0, 1.0])  # no triple for word 1


def test_trim_span():
    assert trim_span(" bank ", 0, 6) == (1, 5)
    assert trim_span("  ", 0, 2) == (2, 2)
    assert trim_span("bank", 1, 3) == (1, 3)


@pytest.mark.parametrize(
    "pooling, expected",
    [("mean", ([0, 0, 0, 1], [1, 2, 3, 4], [1 / 3] * 3 + [1.0])),
     ("first", ([0, 1], [1, 4], [1.0, 1.0])),
     ("last", ([0, 1], [3, 4], [1.0, 1.0]))],
)
def test_pooling_weights(pooling, expected):
    al = Alignment(((), (0,), (0,), (0,), (1,), ()), ((1, 2, 3), (4,)))
    assert pooling_weights(al, pooling) == expected


def test_pooling_weights_subset_and_bad_option():
    al = Alignment(((0,), (1,), (1,)), ((0,), (1, 2)))
    assert pooling_weights(al, "mean", words=[1]) == ([0, 0], [1, 2], [0.5, 0.5])
    with pytest.raises(UnknownOptionError, match="mean, first, last"):
        pooling_weights(al, "max")


def test_attention_aggregation_by_hand():
    # pieces: [CLS] bank ##s river [SEP]; words: banks (pieces 1, 2), river (3)
    al = Alignment(((), (0,), (0,), (1,), ()), ((1, 2), (3,)))
    att = np.array([
        [0.2, 0.2, 0.2, 0.2, 0.2],
        [0.1, 0.3, 0.2, 0.3, 0.1],
        [0.0, 0.5, 0.1, 0.2, 0.2],
        [0.3, 0.1, 0.1, 0.4, 0.1],
        [0.2, 0.2, 0.2, 0.2, 0.2],
    ])
    q, k = attention_matrices(al)
    words, special = aggregate_attention(att, q, k)
    # banks' row: mean of piece rows 1 and 2; column banks = pieces 1 + 2
    np.testing.assert_allclose(words, [[(0.5 + 0.6) / 2, (0.3 + 0.2) / 2], [0.2, 0.4]])
    np.testing.assert_allclose(special, [(0.2 + 0.2) / 2, 0.4])
    np.testing.assert_allclose(words.sum(1) + special, 1.0)


@st.composite
def pieces_of(draw):
    """A text, and pieces splitting each word at random, with optional leading spaces,
    white-space-only pieces and special pieces at both ends."""
    words = draw(st.lists(st.sampled_from(["bank", "river's", "well-known", "1,200", "café", "☕", "?"]),
                          min_size=1, max_size=8))
    text = "  ".join(words)
    spans = [(w.start, w.end) for w in tokenize(text)]
    offsets, expected = [(0, 0)], []
    for a, b in spans:
        cuts = sorted(draw(st.sets(st.integers(a + 1, b - 1), max_size=3)) if b - a > 1 else [])
        bounds = [a, *cuts, b]
        mine = []
        for s, e in zip(bounds, bounds[1:]):
            lead = s == a and s >= 2 and draw(st.booleans())  # 'Ġword' style: span starts at a space
            mine.append(len(offsets))
            offsets.append((s - 1 if lead else s, e))
        expected.append(tuple(mine))
        if draw(st.booleans()):
            offsets.append((b, min(b + 1, len(text))))  # a white-space piece (or empty at the end)
    offsets.append((0, 0))
    special = [1] + [0] * (len(offsets) - 2) + [1]
    return text, offsets, special, tuple(expected)


@settings(max_examples=60, deadline=None)
@given(pieces_of(), st.integers(0, 2**32 - 1))
def test_alignment_recovers_words_and_rows_sum_to_one(case, seed):
    text, offsets, special, expected = case
    al = align_pieces(text, tokenize(text), offsets, special)
    assert al.word_pieces == expected
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(2, 3, len(offsets), len(offsets)))
    att = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    words, share = aggregate_attention(att, *attention_matrices(al))
    assert words.shape == (2, 3, len(expected), len(expected))
    np.testing.assert_allclose(words.sum(-1) + share, 1.0, atol=1e-12)
    assert (words >= 0).all() and (share >= 0).all()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=30), st.integers(4, 12), st.data())
def test_windows_cover_everything_whole_words_and_overlap(sizes, capacity, data):
    starts = np.cumsum([0, *sizes])
    al = Alignment(tuple((w,) for w, n in enumerate(sizes) for _ in range(n)),
                   tuple(tuple(range(starts[w], starts[w + 1])) for w in range(len(sizes))))
    stride = data.draw(st.one_of(st.none(), st.integers(1, capacity)))
    windows = plan_windows(al, capacity, stride)
    n = len(al.piece_words)
    assert windows[0][0] == 0 and windows[-1][1] == n
    for (a, b), (c, _) in zip(windows, windows[1:]):
        assert a < c <= b, "consecutive windows advance and leave no gap"
    cut_points = {int(s) for s in starts}
    for a, b in windows:
        assert 0 < b - a <= capacity and a in cut_points and b in cut_points  # no word split
    owner = assign_windows(windows, al)
    for w, k in enumerate(owner):
        a, b = windows[k]
        assert a <= starts[w] and starts[w + 1] <= b


def test_windows_prefer_the_most_central_window_and_fail_clearly():
    al = Alignment(tuple((i,) for i in range(10)), tuple((i,) for i in range(10)))
    assert plan_windows(al, 6, 3) == [(0, 6), (3, 9), (6, 10)]
    # ties: the earlier window
    assert assign_windows([(0, 6), (3, 9), (6, 10)], al) == [0, 0, 0, 0, 0, 1, 1, 1, 2, 2]
    long_word = Alignment(((0,),) * 5, ((0, 1, 2, 3, 4),))
    with pytest.raises(InputError, match="more pieces than a window holds"):
        plan_windows(long_word, 3)
    with pytest.raises(InputError, match="stride"):
        plan_windows(al, 4, 5)


def test_restrict_to_a_window():
    al = Alignment(((0,), (0,), (1,), (), (2,)), ((0, 1), (2,), (4,)))
    sub = al.restrict(2, 5, before=1, after=1)
    assert sub.piece_words == ((), (1,), (), (2,), ())
    assert sub.word_pieces == ((), (1,), (3,)) and len(sub.word_pieces) == 3 and sub.word_pieces[-1] == (3,)
    assert assign_windows([(0, 3), (2, 5)], al) == [0, 0, 1]


def test_a_window_of_a_long_text_costs_the_window_not_the_text():
    import tracemalloc

    n = 200_000  # words, one piece each; the window holds 16 of them
    al = Alignment(tuple((w,) for w in range(n)), tuple((w,) for w in range(n)))
    rng = np.random.default_rng(0)
    att = rng.random((2, 3, 18, 18), dtype=np.float32)
    att /= att.sum(-1, keepdims=True)  # (layers, heads, pieces, pieces): [CLS] + 16 + [SEP]
    tracemalloc.start()
    window = al.restrict(100_000, 100_016, before=1, after=1)
    words, special, cols = window_attention(att, window, range(100_004, 100_012))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 256 * 1024  # the old dense aggregation held (heads, words, all words) float64
    assert (cols == list(range(100_000, 100_016)) and words.shape == (2, 3, 8, 16)
            and words.dtype == np.float32)
    np.testing.assert_allclose(words.sum(-1) + special, 1.0, rtol=1e-5)
    np.testing.assert_allclose(words[..., 0, :], att[..., 5, 1:17], rtol=1e-6)  # one piece per word: the same
    assert (len(window.word_pieces) == n and window.word_pieces[99_999] == ()
            and window.word_pieces[100_000] == (1,))
