"""SCWS, Stanford's Contextual Word Similarities (Huang et al. 2012), ``scws/ratings.txt``.

Each line has 18 tab-separated fields: id, word1, POS1, word2, POS2, context1, context2,
the average rating and the 10 individual ratings. Each context is tokenised text with
its target marked ``<b> word </b>``; the loader removes the two markers and records the
target's token position.

>>> context_tokens("a <b> bank </b> loan")
(('a', 'bank', 'loan'), 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import FileFormatError
from ._io import numbered, parse_float
from .registry import DatasetMissingError, how_to_get, require

__all__ = ["ScwsItem", "load_scws", "context_tokens"]

_N_FIELDS = 18


@dataclass(frozen=True)
class ScwsItem:
    """One SCWS pair; ``context1[index1]`` is ``word1`` in its context (markers removed)."""

    id: str
    word1: str
    pos1: str
    word2: str
    pos2: str
    context1: tuple[str, ...]
    context2: tuple[str, ...]
    index1: int
    index2: int
    mean: float
    ratings: tuple[float, ...]


def context_tokens(context: str) -> tuple[tuple[str, ...], int]:
    """``(tokens without the <b> </b> markers, position of the marked word)``.

    Raises ValueError unless the context holds exactly one ``<b>`` followed by a ``</b>``
    with at least one token between them (for a multi-token target the position is its
    first token's).
    """
    tokens = context.split()
    opens = [i for i, t in enumerate(tokens) if t == "<b>"]
    closes = [i for i, t in enumerate(tokens) if t == "</b>"]
    if len(opens) != 1 or len(closes) != 1 or closes[0] <= opens[0] + 1:
        raise ValueError(f"expected the target marked once as '<b> word </b>', found {len(opens)} <b> "
                         f"and {len(closes)} </b>")
    start = opens[0]
    kept = tuple(t for i, t in enumerate(tokens) if i not in (opens[0], closes[0]))
    return kept, start


def load_scws(root: str | Path, path: str | Path | None = None) -> list[ScwsItem]:
    """The SCWS pairs from ``root/scws/ratings.txt``, or from ``path`` when given (e.g. the
    40-line sample ``scws/ratings.sample.txt``; a relative ``path`` is taken under
    ``root``). A line without 18 fields, a non-numeric rating or a context without its
    ``<b> </b>`` marks raises FileFormatError with the line number."""
    root = Path(root)
    if path is None:
        (file,) = require(root, "scws", "scws/ratings.txt")
    else:
        file = Path(path) if Path(path).is_absolute() else root / path
        if not file.is_file():
            raise DatasetMissingError(f"SCWS file {file} does not exist; {how_to_get('scws')}")
    items = []
    for line_no, line in numbered(file, what="SCWS pairs"):
        f = line.split("\t")
        if len(f) != _N_FIELDS:
            raise FileFormatError(file, line_no,
                                  f"expected {_N_FIELDS} tab-separated fields (id, word1, POS1, "
                                  "word2, POS2, context1, context2, mean, 10 ratings), got "
                                  f"{len(f)}")
        numbers = [parse_float(x) for x in f[7:]]
        if any(x is None for x in numbers):
            bad = f[7 + numbers.index(None)]
            raise FileFormatError(file, line_no, f"expected a numeric rating, got {bad!r}")
        contexts = []
        for k, context in ((1, f[5]), (2, f[6])):
            try:
                contexts.append(context_tokens(context))
            except ValueError as e:
                raise FileFormatError(file, line_no, f"context {k}: {e}") from None
        (c1, i1), (c2, i2) = contexts
        items.append(ScwsItem(f[0], f[1], f[2], f[3], f[4], c1, c2, i1, i2, numbers[0], tuple(numbers[1:])))
    return items
