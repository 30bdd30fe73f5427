"""One exception hierarchy for contextlens.

Every message says what was wrong *and* what to do about it. The CLI turns any
:class:`ContextLensError` into a one-line message and exit code 2; the web app into a
4xx JSON body.

A message that tells the user to set a parameter says so with :func:`ask`, never with one
front end's spelling of it: the library's text reads ``pass missing='skip'``, the CLI's
``add --skip-missing``, the lab's ``send "missing": "skip"``; each front end phrases the
marked instruction through :func:`phrase` (an API answer that named a CLI flag sent its
users to options they do not have).

A message that names an item of a list the user gave (a sentence, a pair, a text) names
it with :func:`numbered`: by its index in that list, from 0, as the JSON, the lab, the
views and the CLI's tables number it.
"""

from __future__ import annotations

import difflib
import importlib
import json
import math
import numbers
import re
from collections.abc import Callable, Iterable

#: an instruction to set a parameter, inside a message: NAME, then its values as JSON (see :func:`ask`)
_ASK = re.compile("\x02([A-Za-z_]\\w*)((?:\x1f[^\x02\x03\x1f]*)*)\x03")


def ask(name: str, *values) -> str:
    """An instruction, inside an error message, to set the parameter ``name`` (the library's
    keyword) to one of ``values`` (none: to give it at all), phrased by each front end
    (:func:`phrase`); in the library's own words (``str`` of the error) it reads:

    >>> str(InputError(f"or skip such sentences: {ask('missing', 'skip')}"))
    "or skip such sentences: pass missing='skip'"
    >>> str(InputError(f"{ask('method', 'attention', 'average')}, or a transformer"))
    "pass method='attention' or 'average', or a transformer"
    """
    return "\x02" + name + "".join("\x1f" + json.dumps(v) for v in values) + "\x03"


def library_phrase(name: str, values: list) -> str:
    """How the library itself words :func:`ask`: its keyword and Python values."""
    return f"pass {name}" if not values else f"pass {name}=" + " or ".join(repr(v) for v in values)


def phrase(message: object, style: Callable[[str, list], str] = library_phrase) -> str:
    """``message`` (an error, or its text) with each :func:`ask` instruction worded by
    ``style(name, values)``.

    >>> phrase(InputError(f"no layer: {ask('layer')}"), lambda name, values: f"use --{name}")
    'no layer: use --layer'
    """
    text = Exception.__str__(message) if isinstance(message, BaseException) else str(message)
    return _ASK.sub(lambda m: style(m.group(1), [json.loads(v) for v in m.group(2).split("\x1f")[1:]]), text)


def numbered(what: str, index: int, text: str | None = None, width: int = 60) -> str:
    """How a message names item ``index`` of a list the user gave (``what``: sentence, pair,
    text): by its index in that list, from 0 (what the JSON, the lab and the views show), with
    the text itself, cut to ``width`` characters, when there is one.

    >>> numbered("sentence", 1, "We sat on the bank of the river.")
    "sentence 1 ('We sat on the bank of the river.')"
    >>> numbered("pair", 0), numbered("text", 2, "a bank " * 20, width=12)
    ('pair 0', "text 2 ('a bank a ba…')")
    """
    if text is None:
        return f"{what} {index}"
    shown = text if len(text) <= width else text[: width - 1] + "…"
    return f"{what} {index} ({shown!r})"


class ContextLensError(Exception):
    """Base class of every error contextlens raises on purpose.

    ``cli``: the message for a command-line user, when what to do differs there (a library
    keyword such as ``attention=False`` is no option of any command); the CLI prints it
    instead of ``str(err)``.

    >>> err = InputError("too long; pass attention=False", cli="too long; give a shorter text")
    >>> str(err), err.cli, InputError("x").cli
    ('too long; pass attention=False', 'too long; give a shorter text', None)
    """

    cli: str | None = None

    def __init__(self, *args, cli: str | None = None):
        super().__init__(*args)
        self.cli = cli

    # any :func:`ask` instruction in the library's terms (front ends call :func:`phrase`)
    def __str__(self) -> str:
        return phrase(self)


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


class OutputPathError(InputError):
    """An output path cannot be written (no such folder, a file in the way, no permission,
    a read-only or full disk); the message names the path and what to do."""


class DimensionError(InputError):
    """Arrays whose shapes do not fit together."""


class ZeroVectorError(InputError):
    """A cosine was asked of a vector whose norm is zero."""


class LimitError(InputError):
    """An input is larger than a bound of work or memory (:mod:`contextlens.bounds`); the
    message names the bound and what to do (the lab answers it with HTTP 422)."""


class MissingDependencyError(ContextLensError, ImportError):
    """An optional dependency is not installed; names the extra that brings it."""

    def __init__(self, module: str, extra: str, feature: str):
        super().__init__(
            f"{feature} needs the Python package {module!r}, which is not installed; "
            f"install it with: pip install 'contextlens[{extra}]'"
        )


def import_optional(module: str, extra: str, feature: str, *needs: str):
    """``module`` imported (after the modules it ``needs``), or a :class:`MissingDependencyError`
    naming the ``extra`` that brings it: the one way an optional dependency is imported.

    >>> import_optional("json", "web", "Reading JSON").__name__
    'json'
    >>> import_optional("no_such_module", "index", "The usage index")
    Traceback (most recent call last):
    ...
    contextlens.errors.MissingDependencyError: The usage index needs the Python package 'no_such_module', \
which is not installed; install it with: pip install 'contextlens[index]'
    """
    try:
        for name in needs:
            importlib.import_module(name)
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(module, extra, feature) from None


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


def _bounds(low, high) -> str:
    if low is not None and high is not None:
        return f" from {low:,} to {high:,}" if isinstance(low, int) else f" from {low:g} to {high:g}"
    if low is not None:
        return f" >= {low:,}" if isinstance(low, int) else f" >= {low:g}"
    if high is not None:
        return f" <= {high:,}" if isinstance(high, int) else f" <= {high:g}"
    return ""


def check_int(name: str, value, *, low: int | None = None, high: int | None = None, hint: str = "") -> int:
    """Return ``value`` if it is a whole number within ``low..high`` (either may be None),
    else a message naming the bounds (and ``hint``: what to do).

    >>> check_int("window", 5, low=1, high=100)
    5
    >>> check_int("window", 10**9, low=1, high=100,
    ...           hint="a window wider than the longest sentence adds nothing")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: window must be a whole number from 1 to 100, got 1000000000; a window wider than the longest sentence adds nothing
    >>> check_int("heads", True, low=1)
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: heads must be a whole number >= 1, got True
    """  # noqa: E501 (a doctest's expected output, printed whole)
    ok = not isinstance(value, bool) and isinstance(value, numbers.Integral)
    if not ok or (low is not None and value < low) or (high is not None and value > high):
        raise InputError(f"{name} must be a whole number{_bounds(low, high)}, got {value!r}"
                         + (f"; {hint}" if hint else ""))
    return int(value)


def check_float(name: str, value, *, low: float | None = None, high: float | None = None,
                hint: str = "") -> float:
    """Return ``value`` as a float if it is a finite number within ``low..high``, else a
    message naming the bounds (NaN and infinities are never accepted).

    >>> check_float("alpha", 0.25, low=0.0, high=1.0)
    0.25
    >>> check_float("alpha", float("nan"), low=0.0, high=1.0)
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: alpha must be a finite number from 0 to 1, got nan
    """
    ok = not isinstance(value, bool) and isinstance(value, numbers.Real) and math.isfinite(value)
    if not ok or (low is not None and value < low) or (high is not None and value > high):
        raise InputError(f"{name} must be a finite number{_bounds(low, high)}, got {value!r}"
                         + (f"; {hint}" if hint else ""))
    return float(value)


def check_bool(name: str, value) -> bool:
    """Return ``value`` if it is True or False (numpy's too), else a message.

    >>> check_bool("include_self", 1)
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: include_self must be True or False, got 1
    """
    if isinstance(value, bool):
        return value
    import numpy as np  # only here: the CLI imports this module before numpy is needed

    if isinstance(value, np.bool_):
        return bool(value)
    raise InputError(f"{name} must be True or False, got {value!r}")


def check_size(what: str, value: int, limit: int, unit: str, *, why: str = "", todo: str) -> int:
    """Return ``value`` if it is at most ``limit``, else a :class:`LimitError` naming the
    size, the bound, why it exists and what to do.

    >>> check_size("--track", 3, 100, "words", todo="track fewer words")
    3
    >>> check_size("--track", 1_000, 100, "words", why="each costs a pass over the vocabulary per layer",
    ...            todo="track fewer words per run")
    Traceback (most recent call last):
    ...
    contextlens.errors.LimitError: --track has 1,000 words, over the limit of 100 words (each costs a pass over the vocabulary per layer); track fewer words per run
    """  # noqa: E501 (a doctest's expected output, printed whole)
    if value > limit:
        because = f" ({why})" if why else ""
        raise LimitError(f"{what} has {value:,} {unit}, over the limit of {limit:,} {unit}{because}; {todo}")
    return value
