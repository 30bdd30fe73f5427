"""Words with character spans, sentence splitting, and finding a target word.

Every later step keeps track of *where* a word came from, so tokens carry their
``(start, end)`` character span in the original text (never in a normalised copy).

>>> [w.text for w in tokenize("We sat on the river's bank, didn't we?")]
['We', 'sat', 'on', 'the', "river's", 'bank', ',', "didn't", 'we', '?']
>>> w = tokenize("A well-known café sold 1,200 ☕ in 2024.")[1]
>>> (w.text, w.start, w.end)
('well-known', 2, 12)
>>> [w.text for w in tokenize("A well-known café sold 1,200 ☕ in 2024.", lower=True)][2:]
['café', 'sold', '1,200', '☕', 'in', '2024', '.']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import AmbiguousTargetError, EmptyInputError, TargetNotFoundError

__all__ = ["Word", "tokenize", "split_sentences", "locate", "words_of", "split_lines", "normalize_newlines",
           "LINE_BREAKS"]

#: The one rule for where a line ends, in every reader (corpora, --sentences, word lists, pairs,
#: queries, sets of labels, datasets): ``\n``, ``\r\n`` or a lone ``\r``, nothing else. The
#: other characters ``str.splitlines`` breaks at (U+2028, U+2029, ``\x0b``, ``\x0c``,
#: ``\x1c``-``\x1e``, ``\x85``) can stand inside a sentence: they stay in the line.
LINE_BREAKS = ("\r\n", "\r", "\n")

# Combining marks (decomposed accents) belong to the letter before them.
_MARK = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
# Emoji modifiers, variation selectors and zero-width joiners glue symbols together.
_MOD = "\ufe0e\ufe0f\U0001f3fb-\U0001f3ff"
_GLUE = "\u200d" + _MOD
_TOKEN_RE = re.compile(
    rf"""
    \d+(?:[.,:/]\d+)+                          # numbers: 3.14  1,200  10:30  1/2
  | \w[\w{_MARK}]*(?:['’\-‐][\w{_MARK}]+)*     # words, contractions, hyphenated compounds
  | [^\w\s{_GLUE}][{_MOD}]*(?:\u200d[^\w\s][{_MOD}]*)*   # one symbol or emoji sequence
  | \S                                        # anything else (a stray joiner or modifier)
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Word:
    """A word of a text: its (possibly lower-cased) form and its character span."""

    text: str
    start: int
    end: int

    def __str__(self) -> str:
        return self.text


def tokenize(text: str, *, lower: bool = False, punctuation: bool = True) -> list[Word]:
    """Split ``text`` into words, keeping each word's span in ``text``.

    Contractions (``didn't``) and hyphenated compounds (``well-known``) stay one word;
    numbers keep their separators (``1,200``, ``3.14``); every other symbol (punctuation,
    an emoji with its modifiers) is a word of its own, unless ``punctuation=False``.

    >>> [(w.text, w.start, w.end) for w in tokenize("Hi, Bob!", punctuation=False)]
    [('Hi', 0, 2), ('Bob', 4, 7)]
    """
    words = []
    for m in _TOKEN_RE.finditer(text):
        token = m.group()
        if not punctuation and not any(c.isalnum() for c in token):
            continue
        words.append(Word(token.lower() if lower else token, m.start(), m.end()))
    return words


def words_of(text: str, **kwargs) -> list[str]:
    """The word strings of :func:`tokenize`.

    >>> words_of("Deposited money, bank.", lower=True)
    ['deposited', 'money', ',', 'bank', '.']
    """
    return [w.text for w in tokenize(text, **kwargs)]


def normalize_newlines(text: str) -> str:
    r"""``text`` with every line break of the rule (:data:`LINE_BREAKS`) written ``\n``.

    >>> normalize_newlines("a\r\nb\rc\nd\u2028e")
    'a\nb\nc\nd\u2028e'
    """
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def split_lines(text: str) -> list[str]:
    r"""The lines of ``text``, without their line breaks: a line ends at ``\n``, ``\r\n`` or
    ``\r`` (:data:`LINE_BREAKS`) and nowhere else, unlike ``str.splitlines``; a break at the
    very end starts no empty line.

    >>> split_lines("one\r\ntwo\rthree\n\nfour\u2028still four\x0cand\x85this\n")
    ['one', 'two', 'three', '', 'four\u2028still four\x0cand\x85this']
    >>> split_lines(""), split_lines("\n"), split_lines("no break")
    ([], [''], ['no break'])
    """
    lines = normalize_newlines(text).split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr vs etc e.g i.e cf fig no vol inc ltd co corp jan feb mar "
    "apr jun jul aug sep sept oct nov dec u.s u.k".split()
)
_NONSPACE_RE = re.compile(r"\S")
_BOUNDARY_RE = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s+|$)")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences in ``text``.

    A sentence ends at ``.``, ``!``, ``?`` or ``…`` (plus closing quotes or brackets)
    followed by white space, unless the word before the period is a common abbreviation
    or a single letter (an initial), or the next word starts in lower case (``"Why?" he
    asked``); blank lines always end a sentence.

    >>> text = "Dr. Smith sat by the bank. It rained!  Then the river rose"
    >>> [text[a:b] for a, b in split_sentences(text)]
    ['Dr. Smith sat by the bank.', 'It rained!', 'Then the river rose']
    """
    spans: list[tuple[int, int]] = []
    for para in re.finditer(r"\S(?:.|\n(?!\s*\n))*", text):
        start = para.start()
        for m in _BOUNDARY_RE.finditer(text, para.start(), para.end()):
            before = text[start : m.start()].split()
            last = before[-1].lower().rstrip(".") if before else ""
            if m.group().startswith(".") and (last in _ABBREVIATIONS or len(last) == 1):
                continue
            nxt = _NONSPACE_RE.search(text, m.end(), para.end())
            if nxt and nxt.group().islower():
                continue
            spans.append((start, m.end()))
            start = nxt.start() if nxt else para.end()
        if start < para.end():
            spans.append((start, len(text[: para.end()].rstrip())))
    return [(a, b) for a, b in spans if b > a]


def locate(
    words: list[Word],
    target: str | None = None,
    *,
    occurrence: int | None = None,
    span: tuple[int, int] | None = None,
) -> int:
    """Index of the target word in ``words``.

    Choose it by text (case-insensitive), by text and ``occurrence`` (0-based, for a word
    that occurs twice), or by a character ``span`` that overlaps exactly one word.

    >>> ws = tokenize("The bank by the bank")
    >>> locate(ws, "bank", occurrence=1)
    4
    >>> locate(ws, span=(4, 8))
    1
    >>> locate(ws, "bank")
    Traceback (most recent call last):
    ...
    contextlens.errors.AmbiguousTargetError: 'bank' occurs 2 times (words 1, 4, at characters 4-8, 16-20); choose one with occurrence=0..1 or a char span
    """  # noqa: E501 (a doctest's expected output, printed whole)
    if not words:
        raise EmptyInputError("the text has no words; give a non-empty sentence")
    if span is not None:
        a, b = span
        hits = [i for i, w in enumerate(words) if w.start < b and a < w.end]
        if target is not None:
            hits = [i for i in hits if words[i].text.lower() == target.lower()]
        if len(hits) != 1:
            found = ", ".join(f"{w.text!r}@{w.start}-{w.end}" for w in words)
            raise TargetNotFoundError(
                f"char span {a}-{b} overlaps {len(hits)} matching words, not one; "
                f"the words are: {found}"
            )
        return hits[0]
    if target is None:
        raise TargetNotFoundError("give the target word, or a char span")
    hits = [i for i, w in enumerate(words) if w.text.lower() == target.lower()]
    if not hits:
        listed = ", ".join(w.text for w in words)
        raise TargetNotFoundError(f"{target!r} is not a word of the text; its words are: {listed}")
    if occurrence is None:
        if len(hits) > 1:
            where = ", ".join(f"{words[i].start}-{words[i].end}" for i in hits)
            raise AmbiguousTargetError(
                f"{target!r} occurs {len(hits)} times (words {', '.join(map(str, hits))}, "
                f"at characters {where}); choose one with occurrence=0..{len(hits) - 1} "
                "or a char span"
            )
        return hits[0]
    if not 0 <= occurrence < len(hits):
        raise TargetNotFoundError(
            f"{target!r} occurs {len(hits)} time(s); occurrence must be 0..{len(hits) - 1}, "
            f"not {occurrence}"
        )
    return hits[occurrence]
