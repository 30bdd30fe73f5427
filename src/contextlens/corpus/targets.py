"""Find the usages of target words in a streamed corpus.

A corpus (files, ``.gz``, directories, or in-memory lines; see :mod:`contextlens.corpus.reading`)
is read as a stream of :class:`Sentence` s: with ``layout="lines"`` each non-blank line is
one sentence; with ``layout="text"`` lines are joined into paragraphs (a blank line ends
one) and cut by :func:`contextlens.text.split_sentences`. Sentences are numbered from 0
inside their document, so a sentence's ``(doc, number)`` does not depend on how the
stream is batched or on which machine reads it.

A target occurrence is a word of :func:`contextlens.text.tokenize` that a
:class:`WordMatcher` maps to a target: ``exact`` (same text), ``lower`` (same text
lower-cased), ``lemma`` (the lower-cased word or one of its WordNet base forms, by
nltk's morphy, is a target). Each usage gets a stable id, a hash of
``(doc, sentence number, char span, target)``:

>>> m = WordMatcher(["bank"], match="lower")
>>> s = Sentence("d.txt", 0, "The Bank by the bank.")
>>> [(u.word, u.form, u.start, u.end) for u in find_usages(s, m)]
[('bank', 'Bank', 4, 8), ('bank', 'bank', 16, 20)]
>>> usage_id("d.txt", 0, 4, 8, "bank")
'3060f1fefc5c12c1'
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import EmptyInputError, InputError, check_choice
from ..files import read_text_file
from ..text import split_lines, split_sentences, tokenize
from .reading import ReadStats, iter_lines, resolve_source

__all__ = [
    "MATCHES", "LAYOUTS", "Sentence", "Occurrence", "WordMatcher", "usage_id", "iter_corpus_sentences",
    "find_usages", "read_word_list", "count_words",
]

log = logging.getLogger(__name__)
MATCHES = ("exact", "lower", "lemma")
LAYOUTS = ("lines", "text")
_MORPHY_POS = ("n", "v", "a", "r")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of the corpus: its document, its number in it (from 0), its text."""

    doc: str
    number: int
    text: str


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One occurrence of a target: ``word`` is the target, ``form`` the text as written."""

    usage_id: str
    word: str
    form: str
    start: int
    end: int


def usage_id(doc: str, number: int, start: int, end: int, word: str) -> str:
    """A 16-hex-digit id, the same on every run and machine for the same usage."""
    key = f"{doc}\x1f{number}\x1f{start}\x1f{end}\x1f{word}".encode()
    return hashlib.blake2b(key, digest_size=8).hexdigest()


class WordMatcher:
    """Maps a corpus word to the target it is a usage of (or None).

    ``words``: the targets; ``match``: ``exact``, ``lower`` or ``lemma``; ``wordnet``: an
    nltk WordNet reader (needed by ``lemma``; see :func:`contextlens.datasets.wordnet.wordnet`).

    >>> WordMatcher(["Bank"], match="exact")("bank") is None
    True
    >>> WordMatcher(["Bank", "bank"], match="lower").words
    ('bank',)
    """

    def __init__(self, words: Iterable[str], match: str = "lower", wordnet=None):
        self.match = check_choice("match", match, MATCHES)
        cleaned = [w.strip() for w in words if w and w.strip()]
        if match != "exact":
            cleaned = [w.lower() for w in cleaned]
        self.words = tuple(dict.fromkeys(cleaned))
        if not self.words:
            raise EmptyInputError("the word list is empty; give target words (e.g. --words bank,spring)")
        if match == "lemma" and wordnet is None:
            raise InputError("match='lemma' needs WordNet (wordnet=...; the CLI reads "
                             "$CONTEXTLENS_DATA/wordnet)")
        self._targets = frozenset(self.words)
        self._wordnet = wordnet
        self._cache: dict[str, str | None] = {}

    def __call__(self, token: str) -> str | None:
        if self.match == "exact":
            return token if token in self._targets else None
        low = token.lower()
        if low in self._targets:
            return low
        if self.match == "lower" or not low.isalpha():
            return None
        if low not in self._cache:
            if len(self._cache) > 200_000:  # bounded memory over a long corpus
                self._cache.clear()
            self._cache[low] = self._lemma(low)
        return self._cache[low]

    def _lemma(self, low: str) -> str | None:
        for pos in _MORPHY_POS:
            base = self._wordnet.morphy(low, pos)
            if base in self._targets:
                return base
        return None


def find_usages(sentence: Sentence, matcher: WordMatcher) -> list[Occurrence]:
    """The target occurrences in one sentence, in text order."""
    found = []
    for w in tokenize(sentence.text):
        target = matcher(w.text)
        if target is not None:
            found.append(Occurrence(usage_id(sentence.doc, sentence.number, w.start, w.end, target),
                               target, w.text, w.start, w.end))
    return found


def _doc_lines(path, errors: str, stats: ReadStats) -> Iterator[str]:
    """The lines of one document; an empty document yields nothing (and is logged)."""
    try:
        yield from iter_lines(path, errors=errors, stats=stats)
    except EmptyInputError:
        log.warning("%s: no non-blank line, nothing to index", path)


def _sentences_of(doc: str, lines: Iterator[str], layout: str) -> Iterator[Sentence]:
    number = 0
    if layout == "lines":
        for line in lines:
            if line.strip():
                yield Sentence(doc, number, line.strip())
                number += 1
        return
    para: list[str] = []
    for line in _with_end(lines):
        if line.strip():
            para.append(line.strip())
            continue
        if para:
            text = " ".join(para)
            for a, b in split_sentences(text):
                yield Sentence(doc, number, text[a:b])
                number += 1
            para = []


def _with_end(lines: Iterator[str]) -> Iterator[str]:
    yield from lines
    yield ""


def iter_corpus_sentences(corpus, *, layout: str = "lines", errors: str = "skip",
                          stats: ReadStats | None = None) -> Iterator[Sentence]:
    """Stream the sentences of a corpus, document by document (files in sorted order).

    ``doc`` is the file path as found (or ``"<memory>"`` for in-memory lines). Lines that
    are not UTF-8 are skipped and counted in ``stats`` with their file and line
    (``errors="skip"``, the default) or raise (``"strict"``). Empty files are skipped.
    Raises :class:`~contextlens.errors.EmptyInputError` when no sentence was found at all.

    >>> [(s.number, s.text) for s in iter_corpus_sentences(["Hi there. Bye now.", "", "Ok."], layout="text")]
    [(0, 'Hi there.'), (1, 'Bye now.'), (2, 'Ok.')]
    """
    check_choice("layout", layout, LAYOUTS)
    check_choice("errors", errors, ("strict", "skip"))
    src = resolve_source(corpus)  # missing paths fail now
    seen: set[str] = set()
    for p in src.paths:
        real = os.path.abspath(p)
        if real in seen:
            raise InputError(f"{p} is given twice (its usages would get the same ids); give each file once")
        seen.add(real)
    stats = stats if stats is not None else ReadStats()
    return _stream(src, layout, errors, stats)


def _stream(src, layout: str, errors: str, stats: ReadStats) -> Iterator[Sentence]:
    n = 0
    docs = [(src.name, src)] if src.items is not None else [(str(p), p) for p in src.paths]
    for name, source in docs:
        doc = "<memory>" if src.items is not None else name
        for sentence in _sentences_of(doc, _doc_lines(source, errors, stats), layout):
            n += 1
            yield sentence
    if not n:
        why = f" ({stats.n_skipped} line(s) skipped as not UTF-8)" if stats.n_skipped else ""
        raise EmptyInputError(f"{src.name}: the corpus has no sentence{why}; give text files with one "
                              "sentence per line (or free text with layout='text')")


def read_word_list(path: str | Path) -> list[str]:
    """Target words from a file: one per line or comma-separated; ``#`` starts a comment."""
    path = Path(path)
    text = read_text_file(path, "word-list file", "give a file with one word per line")
    words = []
    for line in split_lines(text):
        line = line.split("#", 1)[0]
        words += [w.strip() for w in line.split(",") if w.strip()]
    if not words:
        raise EmptyInputError(f"{path}: the word list is empty; put one target word per line")
    return words


def count_words(sentences: Iterable[Sentence], min_count: int = 5, lower: bool = True) -> list[str]:
    """The alphabetic words seen at least ``min_count`` times, most frequent first (``--all-words``).

    >>> count_words([Sentence("d", 0, "a bank, a bank."), Sentence("d", 1, "A river")], min_count=2)
    ['a', 'bank']
    """
    counts: Counter = Counter()
    for s in sentences:
        counts.update(w.text.lower() if lower else w.text for w in tokenize(s.text) if w.text.isalpha())
    return sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
