"""Tables that fit the width they are printed at, and never cut a number.

Rich fits a table that is too wide by narrowing columns, and when that is not enough it
narrows every column, numbers included: ``0.86…``, or ``0.8`` over ``62`` on two lines. So
the layout is done here, once, before Rich draws (:class:`FitTable`):

- a column whose every cell is a number (``0.862``, ``-1,204``, ``7.8e-05``, ``0.91–0.92``,
  ``8/8/8/8``) keeps its full width: numbers are never wrapped or cut;
- any other column wraps at spaces, and folds a word longer than the column, but is never
  narrower than its longest number or word with digits it could only cut blindly (so
  ``all 12,870`` never splits ``12,870``, nor a usage id or ``corpus.txt:13``) nor, unless
  the table would not fit otherwise, than its longest word up to :data:`WORD` characters (a
  long path folds, a name does not);
- a column given a width (``widths``: long sentences) stays on one line, cut with an
  ellipsis at that width, and may narrow further down to :data:`SENTENCE_MIN`;
- when even the narrowest layout is too wide, the columns after the first are split into
  several tables, one under the other, each repeating the first column (the row labels)
  and saying which columns it holds: every number is printed, whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

__all__ = ["NUMBER", "SENTENCE_MIN", "WORD", "FOLD", "Limits", "is_number", "limits", "fit_widths",
           "split_columns", "part_title", "wrap_cell", "cut_line", "FitTable"]

NUMBER = re.compile(r"[-+−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:e[-+]?\d+)?%?")
_UNIT = r"(?:\s?(?:[KMGTP]i?B|B|[mµn]?s|min|h))?"  # a size or a duration: "2.7 GiB", "512 B", "0.01 s"
_CELL = re.compile(rf"{NUMBER.pattern}{_UNIT}(?:\s*[–/-]\s*{NUMBER.pattern}{_UNIT})*")
SENTENCE_MIN = 12  # a one-line sentence column is cut down to this many characters before the table splits
WORD = 12  # a text column folds words longer than this, not shorter ones, while the table fits
FOLD = 6  # where it does not: text columns fold their words down to this width before the table splits
_NUMERIC = re.compile(r"[\d.,]*\d")  # a run of digits (with their points and commas) a break must not split
_SOFT = re.compile(r"(?<=[/\\_-])")  # where a long word may break: after a slash, backslash, _ or -
EDGE = 1  # the table's left border
PER_COLUMN = 3  # each column's padding (one space each side) and its right border


class Limits(NamedTuple):
    """A column's narrowest and natural width (characters), and whether it may wrap;
    ``floor``: how narrow a text column may go, folding its words, before the table splits."""

    low: int
    high: int
    kind: str  # number | text | line (a one-line text cut with an ellipsis)
    floor: int = 0  # 0: low

    def folded(self) -> Limits:
        """These limits with the words of a text column allowed to fold down to ``floor``."""
        return self._replace(low=self.floor or self.low)


def is_number(cell: str) -> bool:
    """Whether a cell is a number (or numbers joined by a dash or slash), as tables print them.

    >>> [is_number(c) for c in ("0.862", "-1,204", "7.8e-05", "0.91–0.92", "8/8/8/8", "+0.581", "12%")]
    [True, True, True, True, True, True, True]
    >>> [is_number(c) for c in ("2.7 GiB", "512 B", "0.01 s", "3 min")]  # sizes and durations stay whole
    [True, True, True, True]
    >>> [is_number(c) for c in ("", "layer 3", "is 1.000", "–")]
    [False, False, False, False]
    """
    return _CELL.fullmatch(cell.strip()) is not None


def limits(header: str, cells: Sequence[str], width: int | None = None) -> Limits:
    """The limits of a column of ``cells`` under ``header``; ``width``: a one-line column cut
    at that many characters.

    >>> limits("cosine", ["0.862", "1.000"])
    Limits(low=6, high=6, kind='number', floor=0)
    >>> limits("sentence", ["We sat on the bank of the river."], width=20)
    Limits(low=12, high=20, kind='line', floor=0)
    >>> limits("p from", ["all 12,870", "sampled 100,000"])
    Limits(low=7, high=15, kind='text', floor=7)
    """
    lines = [line for c in (header, *cells) for line in c.splitlines() or [""]]
    high = max(len(line) for line in lines)
    words = header.split()
    if width is not None:
        return Limits(min(SENTENCE_MIN, high, width), min(high, width), "line")
    longest_word = max([len(w) for w in words] or [1])
    filled = [c for c in cells if c.strip() and c.strip() != "–"]
    if filled and all(is_number(c) for c in filled):  # whole, on one line: the header may wrap
        return Limits(max([longest_word, *(len(c) for c in cells)]), high, "number")
    numeric_words = [len(w) for c in cells for w in c.split() if is_number(w.strip("()[]{}'\",;:"))
                     or (any(ch.isdigit() for ch in w) and not _SOFT.search(w))]  # numbers, ids, file:line
    short_words = [min(len(w), WORD) for c in cells for w in c.split()]  # a word under WORD stays whole
    floor = min(max([FOLD, *numeric_words]), high)
    return Limits(min(max([longest_word, *numeric_words, *short_words]), high), high, "text", floor)


def fit_widths(cols: Sequence[Limits], room: int) -> list[int] | None:
    """Column widths that fit in ``room`` characters of cells (borders and padding taken
    off already), each between its limits; None when even the narrowest do not fit. The
    room left over the narrowest widths goes to the columns that can use it, in
    proportion to how much wider they would be.

    >>> fit_widths([Limits(6, 6, "number"), Limits(10, 50, "text")], 80)
    [6, 50]
    >>> fit_widths([Limits(6, 6, "number"), Limits(10, 50, "text"), Limits(12, 40, "line")], 46)
    [6, 21, 19]
    >>> fit_widths([Limits(30, 30, "number"), Limits(30, 30, "number")], 50) is None
    True
    """
    low = sum(c.low for c in cols)
    if low > room:
        return None
    slack = [c.high - c.low for c in cols]
    extra = min(room - low, sum(slack))
    total = sum(slack)
    widths = [c.low + (s * extra // total if total else 0) for c, s in zip(cols, slack)]
    for i in sorted(range(len(cols)), key=lambda i: -slack[i]):  # the rounding's leftover, widest first
        if sum(widths) < low + extra and widths[i] < cols[i].high:
            widths[i] += 1
    return widths


def split_columns(cols: Sequence[Limits], room: int, keep: int = 1) -> list[list[int]]:
    """The columns' indices in groups that each fit in ``room`` (cell characters of a
    whole table: each group's own borders are taken off here) beside the ``keep`` first
    columns, which every group repeats. A column too wide to fit even alone gets a group
    of its own.

    >>> cols = [Limits(8, 8, "text")] + [Limits(5, 5, "number")] * 5
    >>> split_columns(cols, 8 + 5 * 3 + 4 * PER_COLUMN)
    [[0, 1, 2, 3], [0, 4, 5]]
    """
    first = list(range(keep))
    groups: list[list[int]] = []
    current: list[int] = []
    for i in range(keep, len(cols)):
        trial = [*first, *current, i]
        if current and sum(cols[j].low for j in trial) + PER_COLUMN * (len(trial) - 1) > room:
            groups.append([*first, *current])
            current = []
        current.append(i)
    groups.append([*first, *current])
    return groups




def _safe_cut(text: str, at: int) -> int:
    """The last position at or before ``at`` that is not inside a run of digits of ``text``
    (``at`` itself when the run is longer than ``at``: it has to be cut somewhere).

    >>> _safe_cut("mpnet-0.0.1", 9), _safe_cut("x" * 20, 9)
    (6, 9)
    """
    for m in _NUMERIC.finditer(text):
        if m.start() < at < m.end():
            return m.start() if m.start() > 0 else at
    return at


def wrap_cell(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters: broken at spaces, a longer word
    after a slash, ``_`` or ``-`` where it can, and never inside a number that fits.

    >>> wrap_cell("/root/.cache/contextlens/models/mpnet-0.0.1", 21)
    ['/root/.cache/', 'contextlens/models/', 'mpnet-0.0.1']
    >>> wrap_cell("all-MiniLM-L6-v2: BERT, 6 layers, 384 dims", 16)
    ['all-MiniLM-L6-', 'v2: BERT, 6', 'layers, 384 dims']
    """
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        pieces = []
        for word in paragraph.split():
            while len(word) > width:  # a soft break that fits, else a cut outside a number
                soft = [m.start() for m in _SOFT.finditer(word) if 0 < m.start() <= width]
                cut = soft[-1] if soft else _safe_cut(word, width)
                pieces.append((word[:cut], False))
                word = word[cut:]
            pieces.append((word, True))
        line, line_ended = "", True
        for piece, ends_word in pieces:
            joined = f"{line} {piece}" if line and line_ended else line + piece
            if line and len(joined) > width:
                lines.append(line)
                line = piece
            else:
                line = joined
            line_ended = ends_word
        lines.append(line)
    return lines


def cut_line(text: str, width: int) -> str:
    """``text`` on one line of at most ``width`` characters, cut with an ellipsis before
    any number the cut would split.

    >>> cut_line("He stepped down after 35 years on the committee.", 24)
    'He stepped down after …'
    >>> cut_line("short", 24)
    'short'
    """
    text = " ".join(text.split())
    if len(text) <= width:
        return text
    return text[:_safe_cut(text, width - 1)] + "…"


class FitTable:
    """A table of plain-text cells that lays itself out for the width it is printed at
    (see the module docstring); print it with a Rich console."""

    def __init__(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], align: str,
                 widths: dict[int, int] | None = None):
        self.title, self.columns, self.rows, self.align = title, list(columns), [list(r) for r in rows], align
        self.widths = widths or {}
        self.limits = [limits(col, [r[i] for r in self.rows], self.widths.get(i))
                       for i, col in enumerate(self.columns)]

    def _table(self, indices: Sequence[int], widths: Sequence[int], title: str):
        from rich.table import Table
        from rich.text import Text

        t = Table(title=Text(title) if title else None, title_justify="left")
        for i, w in zip(indices, widths):
            t.add_column(Text("\n".join(wrap_cell(self.columns[i], w))),
                         justify="left" if self.align[i] == "l"
                         else "right", width=w, no_wrap=True, overflow="fold")
        for row in self.rows:
            t.add_row(*[Text(self._cell(row[i], self.limits[i].kind, w)) for i, w in zip(indices, widths)])
        return t

    @staticmethod
    def _cell(text: str, kind: str, width: int) -> str:
        """A cell laid out by us, in lines that fit ``width`` (Rich then only draws it)."""
        if kind == "line":
            return cut_line(text, width)
        if kind == "text":
            return "\n".join(wrap_cell(text, width))
        return text

    def __rich_console__(self, console, options):
        room = options.max_width - EDGE - PER_COLUMN * len(self.columns)
        widths = fit_widths(self.limits, room) or fit_widths([c.folded() for c in self.limits], room)
        if widths is not None:
            yield self._table(range(len(self.columns)), widths, self.title)
            return
        groups = split_columns(self.limits, options.max_width - EDGE - PER_COLUMN)
        for n, group in enumerate(groups):
            cols = [self.limits[i] for i in group]
            room = options.max_width - EDGE - PER_COLUMN * len(group)
            yield self._table(group, fit_widths(cols, room) or [c.low for c in cols],
                              part_title(self.title, group, len(self.columns), first=n == 0))


def part_title(title: str, group: Sequence[int], n: int, first: bool) -> str:
    """The title of one part of a table split by columns (0-based ``group``, ``n`` columns).

    >>> part_title("WEAT", [0, 1, 2], 4, first=True), part_title("WEAT", [0, 3], 4, first=False)
    ('WEAT (columns 1–3 of 4; the rest below)', '(continued: column 4 of 4)')
    """
    shown = group[1:] or group
    where = f"column {shown[0] + 1}" if len(shown) == 1 else f"columns {shown[0] + 1}–{shown[-1] + 1}"
    return (f"{title} (columns 1–{group[-1] + 1} of {n}; the rest below)" if first
            else f"(continued: {where} of {n})")
