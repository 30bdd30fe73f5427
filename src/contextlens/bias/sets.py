"""The four word sets of an association test, and reading them from a JSON file.

A sets file is one JSON object: ``{"X": [...], "Y": [...], "A": [...], "B": [...]}`` with an
optional ``"name"``. X and Y are the *target* sets (e.g. flowers, insects), A and B the
*attribute* sets (pleasant, unpleasant); the test asks whether X is closer to A, and Y to
B, than the other way round.

>>> s = WordSets("toy", X=("rose",), Y=("ant",), A=("love",), B=("filth",))
>>> s.sizes
(1, 1, 1, 1)
>>> s.as_dict()
{'X': ['rose'], 'Y': ['ant'], 'A': ['love'], 'B': ['filth']}
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import FileFormatError, InputError

__all__ = ["SET_KEYS", "WordSets", "read_sets", "parse_sets"]

SET_KEYS = ("X", "Y", "A", "B")


@dataclass(frozen=True)
class WordSets:
    """Target sets X, Y and attribute sets A, B (tuples of words) under a name."""

    name: str
    X: tuple[str, ...]
    Y: tuple[str, ...]
    A: tuple[str, ...]
    B: tuple[str, ...]

    def __post_init__(self) -> None:
        for key in SET_KEYS:
            object.__setattr__(self, key, tuple(getattr(self, key)))

    @property
    def sizes(self) -> tuple[int, int, int, int]:
        return len(self.X), len(self.Y), len(self.A), len(self.B)

    def as_dict(self) -> dict[str, list[str]]:
        return {key: list(getattr(self, key)) for key in SET_KEYS}


def _check_words(words, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(words, list) or not words:
        raise InputError(f'{where}: "{key}" must be a non-empty list of words')
    seen: set[str] = set()
    for i, w in enumerate(words):
        if not isinstance(w, str) or not w.strip():
            raise InputError(f'{where}: "{key}"[{i}] is {w!r}; every entry must be a non-empty word')
        if w in seen:
            raise InputError(f'{where}: "{key}" lists {w!r} twice; give each word once')
        seen.add(w)
    return tuple(words)


def _check_disjoint(sets: WordSets, where: str) -> None:
    for first, second in (("X", "Y"), ("A", "B")):
        both = sorted(set(getattr(sets, first)) & set(getattr(sets, second)))
        if both:
            raise InputError(f"{where}: {both[0]!r} is in both {first} and {second}; "
                             f"the two {'target' if first == 'X' else 'attribute'} sets must not share words")


def parse_sets(obj, *, where: str = "the sets", name: str | None = None) -> WordSets:
    """:class:`WordSets` from a parsed JSON object, with a message naming what is wrong.

    >>> parse_sets({"X": ["a"], "Y": ["b"], "A": ["c"]})
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: the sets: missing "B"; a sets object needs "X", "Y", "A" and "B" (lists of words) and may have "name"
    """
    if not isinstance(obj, dict):
        raise InputError(f'{where}: expected a JSON object {{"X": [...], "Y": [...], "A": [...], "B": [...]}}, '
                         f"got {type(obj).__name__}")
    hint = 'a sets object needs "X", "Y", "A" and "B" (lists of words) and may have "name"'
    unknown = sorted(set(obj) - {*SET_KEYS, "name"})
    if unknown:
        raise InputError(f"{where}: unknown key {unknown[0]!r}; {hint}")
    for key in SET_KEYS:
        if key not in obj:
            raise InputError(f'{where}: missing "{key}"; {hint}')
    label = obj.get("name", name or "custom")
    if not isinstance(label, str) or not label.strip():
        raise InputError(f'{where}: "name" must be a non-empty string, got {label!r}')
    sets = WordSets(label, *(_check_words(obj[key], key, where) for key in SET_KEYS))
    _check_disjoint(sets, where)
    return sets


def read_sets(path: str | os.PathLike) -> WordSets:
    """Read a sets file (see the module docstring); its name defaults to the file's stem."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such sets file; give a JSON file "
                         '{"X": [...], "Y": [...], "A": [...], "B": [...]}')
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as e:
        raise FileFormatError(path, None, f"not valid UTF-8 ({e.reason}); save the file as UTF-8") from None
    except json.JSONDecodeError as e:
        raise FileFormatError(path, e.lineno, f"not valid JSON: {e.msg} (column {e.colno})") from None
    try:
        return parse_sets(obj, where=str(path), name=path.stem)
    except InputError as e:
        raise FileFormatError(path, None, str(e).removeprefix(f"{path}: ")) from None

