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
import sys
from dataclasses import dataclass
from pathlib import Path

from ..errors import FileFormatError, InputError
from ..files import read_text_file

__all__ = ["SET_KEYS", "WordSets", "read_sets", "parse_sets"]

SET_KEYS = ("X", "Y", "A", "B")
SETS_HINT = 'give a JSON file {"X": [...], "Y": [...], "A": [...], "B": [...]}'


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


def _check_text(text: str, label: str, where: str) -> None:
    r"""A lone surrogate (``"\ud800"`` in JSON) is no character: refuse it by name.

    >>> _check_text("caf\udce9", '"X"[0]', "s.json")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: s.json: "X"[0] is 'caf\udce9', which holds a lone surrogate (U+DCE9), not a character; write the character itself, or both halves of its \u escape pair
    """  # noqa: E501 (a doctest's expected output, printed whole)
    bad = next((c for c in text if "\ud800" <= c <= "\udfff"), None)
    if bad is not None:
        raise InputError(f"{where}: {label} is {_shown(text)}, which holds a lone surrogate "
                         f"(U+{ord(bad):04X}), not a character; write the character itself, or both halves "
                         "of its \\u escape pair")


def _check_words(words, key: str, where: str) -> tuple[str, ...]:
    if not isinstance(words, list) or not words:
        raise InputError(f'{where}: "{key}" must be a non-empty list of words')
    seen: set[str] = set()
    for i, w in enumerate(words):
        if not isinstance(w, str) or not w.strip():
            raise InputError(f'{where}: "{key}"[{i}] is {_shown(w)}; every entry must be a non-empty word')
        _check_text(w, f'"{key}"[{i}]', where)
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
    """  # noqa: E501 (a doctest's expected output, printed whole)
    if not isinstance(obj, dict):
        raise InputError(f'{where}: expected a JSON object {{"X": [...], "Y": [...], "A": [...], "B": '
                         f'[...]}}, '
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
        raise InputError(f'{where}: "name" must be a non-empty string, got {_shown(label)}')
    _check_text(label, '"name"', where)
    sets = WordSets(label, *(_check_words(obj[key], key, where) for key in SET_KEYS))
    _check_disjoint(sets, where)
    return sets


def _shown(value, most: int = 60) -> str:
    """``repr(value)``, cut to ``most`` characters (a 5,000-digit number, a long list).

    >>> _shown(10**80)
    '100000000000000000000000000000000000000000000000000000000000... (81 characters)'
    """
    try:
        text = repr(value)
    except ValueError:  # an int beyond Python's int-to-str limit
        return f"a number of more than {sys.get_int_max_str_digits():,} digits"
    except RecursionError:  # lists in lists, nearly as deep as JSON is read
        return "a value nested too deeply to show"
    return text if len(text) <= most else f"{text[:most]}... ({len(text):,} characters)"


def read_sets(path: str | os.PathLike) -> WordSets:
    """Read a sets file (see the module docstring); its name defaults to the file's stem.

    Every way a file can fail is one :class:`~contextlens.errors.InputError` naming it: not a
    regular file, not UTF-8, not JSON, nested deeper than Python parses, a number longer than
    Python converts, a lone surrogate, or sets that do not fit (:func:`parse_sets`).
    """
    path = Path(path)
    text = read_text_file(path, "sets file", SETS_HINT)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise FileFormatError(path, e.lineno, f"not valid JSON: {e.msg} (column {e.colno})") from None
    except RecursionError:
        raise FileFormatError(path, None, "nested too deeply to read (lists in lists, thousands deep); "
                              + SETS_HINT) from None
    except ValueError as e:  # a number beyond Python's int-to-str limit (4,300 digits)
        raise FileFormatError(path, None, f"not usable JSON ({str(e).split(';')[0]}); a sets file holds "
                              "words, not numbers; " + SETS_HINT) from None
    try:
        return parse_sets(obj, where=str(path), name=path.stem)
    except InputError as e:
        raise FileFormatError(path, None, str(e).removeprefix(f"{path}: ")) from None

