"""CoSimLex (Armendariz et al., LREC 2020; SemEval-2020 Task 3), ``cosimlex/cosimlex_en.csv``.

The published file is tab-separated with a header line; the columns read here are
``word1 word2 context1 context2 sim1 sim2`` (others, such as ``stdev1``, ``pvalue`` or
``word1_context1``, the inflected form of word1 in context 1, may follow, in any order).
Each context is a short passage with both words marked ``<strong>…</strong>``; the loader
removes the marks, keeps the text, and records which marked span is word1 and which
word2 (by the ``wordN_contextM`` columns when present, else by the words themselves).
``sim1`` / ``sim2`` are the mean annotator similarity (0-10) of the pair in each context.

>>> marked_spans("their <strong>presence</strong> is almost <strong>absence</strong>.")
('their presence is almost absence.', ((6, 14), (25, 32)))
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import EmptyInputError, FileFormatError
from ._io import parse_float
from .registry import DatasetMissingError, how_to_get, require

__all__ = ["CosimlexItem", "load_cosimlex", "marked_spans", "COSIMLEX_FILE", "COSIMLEX_COLUMNS"]

COSIMLEX_FILE = "cosimlex/cosimlex_{lang}.csv"
COSIMLEX_COLUMNS = ("word1", "word2", "context1", "context2", "sim1", "sim2")
_MARK = re.compile(r"<strong>(.*?)</strong>", re.DOTALL)


@dataclass(frozen=True)
class CosimlexItem:
    """One CoSimLex pair in its two contexts (marks removed): ``context1[a:b]`` for
    ``(a, b) = spans1[0]`` is word1 as it stands in context 1, ``spans1[1]`` word2."""

    word1: str
    word2: str
    context1: str
    context2: str
    spans1: tuple[tuple[int, int], tuple[int, int]]
    spans2: tuple[tuple[int, int], tuple[int, int]]
    sim1: float
    sim2: float


def marked_spans(context: str) -> tuple[str, tuple[tuple[int, int], ...]]:
    """``(text without the marks, char spans of the marked words in order)``."""
    text, spans, last = [], [], 0
    length = 0
    for m in _MARK.finditer(context):
        before = context[last:m.start()]
        text.append(before)
        length += len(before)
        word = m.group(1)
        spans.append((length, length + len(word)))
        text.append(word)
        length += len(word)
        last = m.end()
    text.append(context[last:])
    return "".join(text), tuple(spans)


def _assign(text: str, spans, words: tuple[str, str], forms: tuple[str | None, str | None]):
    """``(span of word1, span of word2)`` of the two marked spans, or None when they are
    not the two words: a span is a word when it is its form in this context (the
    ``wordN_contextM`` column) or, without that column, the word or a form of it (all but
    its last letter in common: *bank*, *banks*); in text order when both orders fit; when
    only one word is found, the other span is the other word."""
    seen = [text[a:b].lower() for a, b in spans]

    def fits(i: int, k: int) -> bool:
        if forms[k]:
            return seen[i] == forms[k].lower()
        word = words[k].lower()
        return seen[i] == word or seen[i].startswith(word[:max(1, len(word) - 1)])

    if fits(0, 0) and fits(1, 1):
        return spans[0], spans[1]
    if fits(1, 0) and fits(0, 1):
        return spans[1], spans[0]
    for i in (0, 1):  # one word found: the other span is the other word (*live* found, so *dying* is *die*)
        for k in (0, 1):
            if fits(i, k):
                return (spans[i], spans[1 - i]) if k == 0 else (spans[1 - i], spans[i])
    return None


def load_cosimlex(root: str | Path, path: str | Path | None = None, *,
                  lang: str = "en") -> list[CosimlexItem]:
    """The CoSimLex pairs of ``root/cosimlex/cosimlex_<lang>.csv``, or of ``path`` (a relative
    path is taken under ``root``). A missing column, a rating that is not a number, or a
    context without its two marked words raises FileFormatError naming the line."""
    root = Path(root)
    if path is None:
        (file,) = require(root, "cosimlex", COSIMLEX_FILE.format(lang=lang))
    else:
        file = Path(path) if Path(path).is_absolute() else root / path
        if not file.is_file():
            raise DatasetMissingError(f"CoSimLex file {file} does not exist; {how_to_get('cosimlex')}")
    with open(file, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        header = reader.fieldnames or []
        missing = [c for c in COSIMLEX_COLUMNS if c not in header]
        if missing:
            raise FileFormatError(file, 1,
                                  f"the header lacks {', '.join(missing)}; a CoSimLex file is tab-separated "
                                           f"with the columns {' '.join(COSIMLEX_COLUMNS)} ...")
        items = []
        for line_no, row in enumerate(reader, 2):
            if None in row or any(row[c] is None for c in COSIMLEX_COLUMNS):
                raise FileFormatError(file, line_no,
                                      f"expected {len(header)} tab-separated fields as the header "
                                                     "says")
            sims = [parse_float(row[c]) for c in ("sim1", "sim2")]
            if None in sims:
                raise FileFormatError(file, line_no,
                                      f"sim1 and sim2 must be numbers, got {row['sim1']!r} and "
                                                     f"{row['sim2']!r}")
            placed = []
            for k in (1, 2):
                text, spans = marked_spans(row[f"context{k}"])
                forms = (row.get(f"word1_context{k}") or None, row.get(f"word2_context{k}") or None)
                pair = _assign(text, spans, (row["word1"], row["word2"]), forms) if len(spans) == 2 else None
                if pair is None:
                    raise FileFormatError(file, line_no,
                                          f"context{k} must mark {row['word1']!r} and {row['word2']!r}"
                                          f" with <strong>...</strong> (found {len(spans)} "
                                          f"marked: {[text[a:b] for a, b in spans]})")
                placed.append((text, pair))
            (c1, s1), (c2, s2) = placed
            items.append(CosimlexItem(row["word1"], row["word2"], c1, c2, s1, s2, sims[0], sims[1]))
    if not items:
        raise EmptyInputError(f"{file} holds no CoSimLex pair")
    return items
