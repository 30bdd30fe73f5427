"""One exception hierarchy for contextlens.

Every message says what was wrong *and* what to do about it. The CLI turns any
:class:`ContextLensError` into a one-line message and exit code 2; the web app into a
4xx JSON body.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ContextLensError(Exception):
    """Base class of every error contextlens raises on purpose."""


class InputError(ContextLensError, ValueError):
    """The input (text, file, option, array) is not usable as given."""


class EmptyInputError(InputError):
    """A corpus, sentence, word list or file held nothing to work on."""


class UnknownOptionError(InputError):
    """An enumerated option got a value outside its valid set."""


class UnknownWordError(InputError):
    """A word is not a key of an embedding table."""

    def __init__(self, word: str, suggestions: Iterable[str] = (), where: str = "the table"):
        self.word = word
        self.suggestions = list(suggestions)
        hint = f"; close keys: {', '.join(self.suggestions)}" if self.suggestions else ""
        super().__init__(f"{word!r} is not in {where}{hint}")


class TargetNotFoundError(InputError):
    """The target word does not occur in the sentence (or not at that position)."""


class AmbiguousTargetError(InputError):
    """The target word occurs more than once and no occurrence was chosen."""


class FileFormatError(InputError):
    """A file could not be parsed; the message names the file and the line."""

    def __init__(self, path: object, line: int | None, problem: str):
        self.path, self.line = path, line
        where = f"{path}, line {line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {problem}")


class TextDecodingError(InputError):
    """A file is not valid UTF-8; the message names the file and the byte offset."""

    def __init__(self, path: object, offset: int, detail: str = ""):
        self.path, self.offset = path, offset
        extra = f" ({detail})" if detail else ""
        super().__init__(
            f"{path}: not valid UTF-8 at byte offset {offset}{extra}; "
            "re-encode the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)"
        )


class DimensionError(InputError):
    """Arrays whose shapes do not fit together."""


class ZeroVectorError(InputError):
    """A cosine was asked of a vector whose norm is zero."""


class MissingDependencyError(ContextLensError, ImportError):
    """An optional dependency is not installed; names the extra that brings it."""

    def __init__(self, module: str, extra: str, feature: str):
        super().__init__(
            f"{feature} needs the Python package {module!r}, which is not installed; "
            f"install it with: pip install 'contextlens[{extra}]'"
        )


def check_choice(name: str, value: str, choices: Iterable[str]) -> str:
    """Return ``value`` if it is one of ``choices``, else raise a message listing them.

    >>> check_choice("pooling", "mean", ["mean", "first", "last"])
    'mean'
    >>> check_choice("pooling", "max", ["mean", "first", "last"])
    Traceback (most recent call last):
    ...
    contextlens.errors.UnknownOptionError: unknown pooling 'max'; valid values: mean, first, last
    """
    options = list(choices)
    if value not in options:
        close = difflib.get_close_matches(str(value), options, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UnknownOptionError(
            f"unknown {name} {value!r}{hint}; valid values: {', '.join(options)}"
        )
    return value
