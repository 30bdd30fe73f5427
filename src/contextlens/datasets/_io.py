"""Reading the dataset files: strict UTF-8, line numbers, and one wording for errors."""

from __future__ import annotations

from pathlib import Path

from ..errors import EmptyInputError
from ..files import read_text_file
from ..text import split_lines

__all__ = ["read_lines", "numbered", "parse_float"]


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file, without line ends or BOM.

    A line ends at ``\\n``, ``\\r\\n`` or ``\\r`` only (:func:`contextlens.text.split_lines`;
    ``str.splitlines`` would also split on form feeds and Unicode separators that can sit
    inside a sentence). A byte that is not UTF-8 raises
    :class:`~contextlens.errors.TextDecodingError` with its offset.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> _ = p.write_bytes(b"a b\\r\\nc\\x0cd\\re\\n")
    >>> read_lines(p)
    ['a b', 'c\\x0cd', 'e']
    """
    return split_lines(read_text_file(path, "dataset file", "check the data folder (contextlens data list)"))


def numbered(path: Path, *, what: str, skip_comments: bool = False) -> list[tuple[int, str]]:
    """``(line number, line)`` for the non-blank lines of ``path`` (1-based numbers).

    Raises :class:`~contextlens.errors.EmptyInputError` when nothing is left: an empty
    split is an error, never a silent zero.
    """
    rows = [(i, line) for i, line in enumerate(read_lines(path), 1)
            if line.strip() and not (skip_comments and line.startswith("#"))]
    if not rows:
        raise EmptyInputError(f"{path} holds no {what}; the file is empty")
    return rows


def parse_float(text: str) -> float | None:
    """``float(text)`` or None when ``text`` is not a (finite or not) number.

    >>> parse_float("6.77"), parse_float("Human (mean)")
    (6.77, None)
    """
    try:
        return float(text)
    except ValueError:
        return None
