"""Tokeniser, sentence splitter and target finding."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextlens.errors import AmbiguousTargetError, EmptyInputError, TargetNotFoundError
from contextlens.text import locate, split_sentences, tokenize, words_of


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I can't go, won't go.", ["I", "can't", "go", ",", "won't", "go", "."]),
        ("It’s the river’s bank", ["It’s", "the", "river’s", "bank"]),
        ("a state-of-the-art mother-in-law", ["a", "state-of-the-art", "mother-in-law"]),
        ("Pay $1,200.50 by 10:30 or 3/4", ["Pay", "$", "1,200.50", "by", "10:30", "or", "3/4"]),
        ("Crème brûlée in Zürich", ["Crème", "brûlée", "in", "Zürich"]),
        ("cafe\u0301 open", ["cafe\u0301", "open"]),  # decomposed accent stays in the word
        ("nice 👍🏽 day 👨‍👩‍👧!", ["nice", "👍🏽", "day", "👨‍👩‍👧", "!"]),
        ("«Bonjour» — dit-il…", ["«", "Bonjour", "»", "—", "dit-il", "…"]),
        ("Москва и 東京", ["Москва", "и", "東京"]),
        ("  ", []),
    ],
)
def test_tricky_words(text, expected):
    assert words_of(text) == expected


def test_punctuation_can_be_dropped_and_case_lowered():
    words = tokenize("The Bank, the BANK!", lower=True, punctuation=False)
    assert [w.text for w in words] == ["the", "bank", "the", "bank"]
    assert [(w.start, w.end) for w in words] == [(0, 3), (4, 8), (10, 13), (14, 18)]


@given(st.text(max_size=80))
def test_spans_point_into_the_original_text(text):
    words = tokenize(text)
    for w in words:
        assert text[w.start : w.end] == w.text
    starts = [w.start for w in words]
    assert starts == sorted(starts)
    assert all(a.end <= b.start for a, b in zip(words, words[1:]))
    # every non-space character is covered by exactly one word
    covered = set()
    for w in words:
        covered.update(range(w.start, w.end))
    assert all(i in covered for i, c in enumerate(text) if not c.isspace())


def test_sentence_split_keeps_abbreviations_and_initials():
    text = 'Mr. J. Smith went to the bank. "Was it open?" he asked. Yes!\n\nNew paragraph'
    parts = [text[a:b] for a, b in split_sentences(text)]
    assert parts == [
        "Mr. J. Smith went to the bank.",
        '"Was it open?" he asked.',
        "Yes!",
        "New paragraph",
    ]


def test_locate_by_text_occurrence_and_span():
    words = tokenize("The bank sold the bank")
    assert locate(words, "BANK", occurrence=0) == 1
    assert locate(words, "bank", occurrence=1) == 4
    assert locate(words, span=(18, 22)) == 4
    with pytest.raises(AmbiguousTargetError, match="occurs 2 times"):
        locate(words, "bank")
    with pytest.raises(TargetNotFoundError, match="its words are: The, bank, sold, the, bank"):
        locate(words, "river")
    with pytest.raises(TargetNotFoundError, match="occurrence must be 0..1"):
        locate(words, "bank", occurrence=2)
    with pytest.raises(TargetNotFoundError, match="overlaps 0 matching words"):
        locate(words, span=(100, 104))
    with pytest.raises(EmptyInputError):
        locate([], "bank")
