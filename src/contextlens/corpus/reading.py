"""Stream a corpus from disk (or memory) without holding it in memory.

A corpus is one sentence per line, tokens separated by white space (the layout of the
shared corpora). A line ends at ``\n``, ``\r\n`` or a lone ``\r`` and nowhere else
(:data:`contextlens.text.LINE_BREAKS`, the rule of every reader): U+2028, U+2029, form feeds
and the like stay inside a line. It can be given as

- a file path (``str`` or :class:`os.PathLike`), plain or ``.gz``;
- a directory: every regular text file inside it, recursively, in sorted path order
  (names ending in ``.txt``, ``.text``, ``.tok``, ``.tokens``, ``.sents`` or with no suffix,
  each optionally followed by ``.gz``; hidden files and directories are skipped);
- a list or tuple of such paths (:class:`pathlib.Path` objects, or strings that name
  existing files or look like file names: a ``/`` or a text-file suffix and no space);
- an in-memory iterable of strings, each one line (a line break inside a string starts a
  new line, as in a file): handy for tests and worked examples. A list mixing file names and
  text lines is refused.

Bytes are decoded as UTF-8 (a leading byte-order mark is dropped). With
``errors="strict"`` (the default) a bad byte raises :class:`~contextlens.errors.TextDecodingError`
naming the file, its byte offset (in the decompressed stream for ``.gz``) and line; with
``errors="skip"`` the line is skipped, counted in a :class:`ReadStats` the caller passes in,
and logged.

>>> list(iter_sentences(["Bank of the river", "", "the Bank lends"], lower=True))
[['bank', 'of', 'the', 'river'], ['the', 'bank', 'lends']]
>>> list(iter_lines(["a b", "c\\nd\\re\\u2028f"]))
['a b', 'c', 'd', 'e\u2028f']
"""

from __future__ import annotations

import gzip
import logging
import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import EmptyInputError, FileFormatError, InputError, TextDecodingError, check_choice
from ..files import read_error
from ..text import normalize_newlines, words_of

__all__ = [
    "ReadStats",
    "SentenceStream",
    "ProgressHook",
    "TOKENIZERS",
    "ERROR_MODES",
    "resolve_source",
    "corpus_files",
    "iter_text_blocks",
    "iter_lines",
    "iter_sentences",
    "longest_sentence",
]

log = logging.getLogger(__name__)

TOKENIZERS = ("whitespace", "words")
ERROR_MODES = ("strict", "skip")
TEXT_SUFFIXES = frozenset({"", ".txt", ".text", ".tok", ".tokens", ".sents"})
BLOCK_BYTES = 1 << 20  # bytes read (or characters gathered) per block
MAX_SKIPPED_LISTED = 10_000  # (file, line) pairs kept in ReadStats.skipped; the count is exact

#: ``progress(n)``: called now and then during long work so a caller (the CLI) can draw a
#: bar; ``n`` is a running count of sentences processed: sentences read, then, for methods
#: that train, sentences trained on (each epoch adds the corpus' sentences again).
ProgressHook = Callable[[int], None]


@dataclass
class ReadStats:
    """What a pass over a corpus read; pass one in with ``stats=`` and read it afterwards.

    ``skipped`` lists ``(file, line number)`` of skipped lines (1-based; at most
    ``MAX_SKIPPED_LISTED`` of them, ``n_skipped`` is always exact).
    """

    files: list[str] = field(default_factory=list)
    n_lines: int = 0
    n_skipped: int = 0
    skipped: list[tuple[str, int]] = field(default_factory=list)

    def _skip(self, path: str, line: int) -> None:
        self.n_skipped += 1
        if len(self.skipped) < MAX_SKIPPED_LISTED:
            self.skipped.append((path, line))


@dataclass(frozen=True)
class _Source:
    """A corpus resolved once: either ``paths`` (files, in reading order) or ``items``."""

    name: str
    paths: tuple[Path, ...] = ()
    items: Iterable[str] | None = None

    @property
    def one_shot(self) -> bool:
        return self.items is not None and iter(self.items) is self.items


def _is_text_file(path: Path) -> bool:
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    return Path(name).suffix.lower() in TEXT_SUFFIXES


def _expand(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        found = []
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            found += [
                Path(root, f) for f in sorted(files)
                if not f.startswith(".") and _is_text_file(Path(root, f)) and Path(root, f).is_file()
            ]
        if not found:
            raise EmptyInputError(
                f"{path}: the directory holds no text files (read are names ending in "
                f"{', '.join(sorted(s for s in TEXT_SUFFIXES if s))} or with no suffix, "
                "optionally .gz)"
            )
        return found
    if path.exists():
        raise InputError(f"{path}: not a regular file or directory; give a text file or a folder")
    raise InputError(f"{path}: no such file or directory; check the corpus path")


def corpus_files(path: str | os.PathLike) -> list[Path]:
    """The files a corpus path is read from: the file itself, or a folder's text files (see
    the module docstring); none when there is no such path or no text file in it.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("a.txt", "b.npz", ".hidden.txt"):
    ...     _ = (root / name).write_text("x")
    >>> [p.name for p in corpus_files(root)]
    ['a.txt']
    """
    try:
        return _expand(Path(path))
    except InputError:
        return []


_PATH_ENDINGS = tuple(sorted(s for s in TEXT_SUFFIXES if s)) + (".gz",)


def _looks_like_path(item) -> bool:
    if isinstance(item, os.PathLike):
        return True
    if not isinstance(item, str) or not item or any(c.isspace() for c in item):
        return False
    return os.path.exists(item) or "/" in item or os.sep in item or item.lower().endswith(_PATH_ENDINGS)


def _names_files(items: list | tuple) -> bool:
    """Whether a list names files (True) or holds text lines (False); a mix is an error.

    Path objects, existing paths and strings that look like file names (a ``/``, or a
    text-file suffix, and no white space) are paths. Long lists are judged by their first
    item.
    """
    sample = items if len(items) <= 1000 else items[:1]
    kinds = {_looks_like_path(item) for item in sample}
    if kinds == {True, False}:
        paths = [str(i) for i in sample if _looks_like_path(i)][:3]
        raise InputError(
            f"the corpus list mixes file names ({', '.join(paths)}) with text lines; give "
            "either files (paths) or sentences (strings), not both"
        )
    return kinds == {True}


def resolve_source(source) -> _Source:
    """Check a corpus argument and list its files (see the module docstring for the forms).

    Missing paths fail here, before any reading starts.
    """
    if isinstance(source, _Source):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        return _Source(str(path), tuple(_expand(path)))
    if isinstance(source, (bytes, bytearray)):
        raise InputError("a corpus cannot be bytes; give a path, a list of paths or of strings")
    if isinstance(source, (list, tuple)) and _names_files(source):
        paths = [Path(s) for s in source]
        return _Source(", ".join(map(str, paths)), tuple(p for path in paths for p in _expand(path)))
    if not isinstance(source, Iterable):
        raise InputError(
            f"a corpus must be a path, a list of paths or an iterable of strings, not "
            f"{type(source).__name__}"
        )
    if isinstance(source, (list, tuple)):
        if not source:
            raise EmptyInputError("the corpus is an empty list; give at least one file or sentence")
        return _Source(f"<in-memory corpus of {len(source)} lines>", items=source)
    return _Source("<in-memory corpus>", items=source)


_BREAK_BYTES = re.compile(rb"\r\n?|\n")  # the line rule on UTF-8 bytes (no multi-byte character holds them)


def _breaks(raw: bytes) -> int:
    """How many line breaks (``\\n``, ``\\r\\n``, ``\\r``) ``raw`` holds.

    >>> _breaks(b"a\\r\\nb\\rc\\nd")
    3
    """
    return raw.count(b"\n") + raw.count(b"\r") - raw.count(b"\r\n")


def _last_break(buf: bytes) -> int:
    """The index just past the last whole line break of ``buf``, or -1: a ``\\r`` as the very
    last byte waits for the next read (it may be the first half of ``\\r\\n``).

    >>> _last_break(b"a\\nb\\rc"), _last_break(b"a\\nb\\r"), _last_break(b"a\\r\\nb"), _last_break(b"ab")
    (4, 2, 3, -1)
    """
    end = max(buf.rfind(b"\n"), buf.rfind(b"\r", 0, len(buf) - 1))
    return end + 1 if end >= 0 else -1


def _decode(raw: bytes, path: str, offset: int, first_line: int, errors: str,
            stats: ReadStats) -> str:
    """Decode a block of whole lines; a line that is not UTF-8 or holds a NUL byte (a word
    holding NUL would not survive a vector file) raises (strict) or is skipped (skip)."""
    where = " of the decompressed text" if path.endswith(".gz") else ""
    nul = raw.find(b"\x00")
    try:
        text = raw.decode("utf-8") if nul < 0 else raw[:nul].decode("utf-8")  # a bad byte before a NUL first
    except UnicodeDecodeError as exc:
        if errors == "strict":
            line = first_line + _breaks(raw[: exc.start])
            raise TextDecodingError(
                path, offset + exc.start,
                f"line {line}{where}; or skip such lines: errors='skip' (CLI: --skip-bad-lines)"
            ) from None
    else:
        if nul < 0:
            return normalize_newlines(text)
        if errors == "strict":
            raise FileFormatError(
                path, first_line + _breaks(raw[:nul]),
                f"a NUL byte (\\x00) at byte offset {offset + nul}{where}: the file is damaged or not "
                "text; remove the NUL bytes (tr -d '\\000'), or skip such lines: errors='skip' "
                "(CLI: --skip-bad-lines)")
    good = []
    lines = _BREAK_BYTES.split(raw)  # the last: what follows the last break ('' when raw ends with one)
    for i, line in enumerate(lines):
        try:
            if b"\x00" in line:
                raise UnicodeDecodeError("utf-8", line, line.find(b"\x00"), len(line), "NUL byte")
            good.append(line.decode("utf-8") + ("\n" if i < len(lines) - 1 else ""))
        except UnicodeDecodeError:
            stats._skip(path, first_line + i)
            log.debug("%s, line %d: not valid UTF-8 or holds a NUL byte, skipped", path, first_line + i)
    return "".join(good)


def _file_blocks(path: Path, errors: str, stats: ReadStats,
                 block_bytes: int) -> Iterator[str]:
    """Yield the decoded blocks of whole lines of one file."""
    name = str(path)
    opener = gzip.open if path.name.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            carry, offset, line_no = b"", 0, 1
            first = True
            while True:
                data = f.read(block_bytes)
                buf = carry + data
                if first and buf.startswith(b"\xef\xbb\xbf"):
                    buf, offset = buf[3:], 3
                first = False
                if not data:
                    if buf:
                        yield _decode(buf, name, offset, line_no, errors, stats)
                    return
                cut = _last_break(buf)
                if cut < 0:
                    carry = buf
                    continue
                raw, carry = buf[:cut], buf[cut:]
                yield _decode(raw, name, offset, line_no, errors, stats)
                offset += cut
                line_no += _breaks(raw)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise FileFormatError(path, None, f"not a readable gzip file ({exc})") from None
    except OSError as exc:  # EIO (/proc/self/mem), no permission, a network file system that fails
        raise read_error(path, exc, "give a regular text file") from None


def _item_blocks(items: Iterable[str], block_chars: int, errors: str, stats: ReadStats,
                 name: str) -> Iterator[str]:
    batch: list[str] = []
    size = 0
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise InputError(
                f"in-memory corpus item {i} is a {type(item).__name__}, not a string; "
                "give one sentence per string"
            )
        if "\x00" in item:
            if errors == "strict":
                raise InputError(f"in-memory corpus item {i} holds the NUL character (\\x00); remove it, "
                                 "or skip such items: errors='skip'")
            stats._skip(name, i + 1)
            continue
        item = normalize_newlines(item)
        batch.append(item)
        size += len(item) + 1
        if size >= block_chars:
            yield "\n".join(batch) + "\n"
            batch, size = [], 0
    if batch:
        yield "\n".join(batch) + "\n"


def iter_text_blocks(
    source, *, errors: str = "strict", stats: ReadStats | None = None,
    block_bytes: int | None = None,
) -> Iterator[str]:
    """Yield the corpus as decoded text blocks of whole lines (each ends with ``"\\n"``,
    except perhaps the very last), every line break written ``"\\n"`` (a ``\\r\\n`` or a lone
    ``\\r`` of the file too: :func:`contextlens.text.normalize_newlines`).

    The fast path for vectorised readers (one ``str.split`` per block instead of one per
    line). Raises :class:`~contextlens.errors.EmptyInputError` if the corpus has no
    non-blank line.

    >>> list(iter_text_blocks(["a b", "c\\r\\nd\\re"]))
    ['a b\\nc\\nd\\ne\\n']
    """
    check_choice("errors", errors, ERROR_MODES)
    src = resolve_source(source)
    stats = stats if stats is not None else ReadStats()
    return _blocks(src, errors, stats, block_bytes or BLOCK_BYTES)


def _blocks(src: _Source, errors: str, stats: ReadStats, block_bytes: int) -> Iterator[str]:
    content = False
    if src.items is not None:
        stats.files.append(src.name)
        parts: Iterable[str] = _item_blocks(src.items, block_bytes, errors, stats, src.name)
    else:
        parts = _paths_blocks(src.paths, errors, stats, block_bytes)
    for text in parts:
        if not text:  # every line of the block skipped
            continue
        stats.n_lines += text.count("\n") + (0 if text.endswith("\n") else 1)
        if not content and text and not text.isspace():
            content = True
        yield text
    if stats.n_skipped:
        first_path, first_line = stats.skipped[0]
        log.warning(
            "skipped %d line(s) that are not valid UTF-8 or hold a NUL byte (first: %s, line %d)",
            stats.n_skipped, first_path, first_line,
        )
    if not content:
        why = f" ({stats.n_skipped} line(s) skipped: not UTF-8, or a NUL byte)" if stats.n_skipped else ""
        raise EmptyInputError(f"{src.name}: the corpus has no non-blank line{why}; give a "
                              "file with one sentence per line")


def _paths_blocks(paths, errors, stats, block_bytes) -> Iterator[str]:
    for path in paths:
        stats.files.append(str(path))
        yield from _file_blocks(path, errors, stats, block_bytes)


def iter_lines(source, *, errors: str = "strict", stats: ReadStats | None = None) -> Iterator[str]:
    """Yield the corpus line by line, without the line breaks (``\\n``, ``\\r\\n``, ``\\r``).

    Blank lines are yielded too. ``stats`` (a :class:`ReadStats`) is filled as reading goes.

    >>> st = ReadStats()
    >>> list(iter_lines(["one", "", "two"], stats=st)), st.n_lines
    (['one', '', 'two'], 3)
    """
    blocks = iter_text_blocks(source, errors=errors, stats=stats)  # validates now
    return _lines(blocks)


def _lines(blocks: Iterator[str]) -> Iterator[str]:
    for text in blocks:
        lines = text.split("\n")
        if text.endswith("\n"):
            lines.pop()
        yield from lines


def iter_sentences(
    source, *, lower: bool = False, tokenizer: str = "whitespace", errors: str = "strict",
    stats: ReadStats | None = None,
) -> Iterator[list[str]]:
    """Yield each non-blank line as a list of tokens.

    ``tokenizer="whitespace"`` splits on white space (the shared corpora are tokenised
    already); ``"words"`` uses :func:`contextlens.text.tokenize` (contractions and
    hyphenated words stay whole, punctuation is split off).

    >>> list(iter_sentences(["We didn't sit.", "Bank"], tokenizer="words", lower=True))
    [['we', "didn't", 'sit', '.'], ['bank']]
    """
    check_choice("tokenizer", tokenizer, TOKENIZERS)
    lines = iter_lines(source, errors=errors, stats=stats)
    return _sentences(lines, lower, tokenizer)


def _sentences(lines: Iterator[str], lower: bool, tokenizer: str) -> Iterator[list[str]]:
    for line in lines:
        if tokenizer == "whitespace":
            tokens = (line.lower() if lower else line).split()
        else:
            tokens = words_of(line, lower=lower)
        if tokens:
            yield tokens


def longest_sentence(source, *, tokenizer: str = "whitespace", errors: str = "strict") -> int:
    """The most tokens on one line of the corpus (one pass; lines skipped with
    ``errors="skip"`` do not count).

    >>> longest_sentence(["a b", "c d e", ""]), longest_sentence(["We didn't sit."], tokenizer="words")
    (3, 4)
    """
    check_choice("tokenizer", tokenizer, TOKENIZERS)
    longest = 0
    for text in iter_text_blocks(source, errors=errors):
        if tokenizer == "whitespace":
            longest = max(longest, max(len(line.split()) for line in text.split("\n")))
        else:
            longest = max(longest, max(len(words_of(line)) for line in text.split("\n")))
    return longest


class SentenceStream:
    """A restartable iterable of token lists over a corpus (what gensim needs).

    Each ``iter()`` reads the corpus again from the start; ``stats`` describes the last
    pass. A one-shot iterator (a generator) is refused: it could be read only once.

    >>> s = SentenceStream(["a b", "c"])
    >>> list(s) == list(s) == [['a', 'b'], ['c']]
    True
    """

    def __init__(self, source, *, lower: bool = False, tokenizer: str = "whitespace",
                 errors: str = "strict"):
        check_choice("tokenizer", tokenizer, TOKENIZERS)
        check_choice("errors", errors, ERROR_MODES)
        self.source = resolve_source(source)
        if self.source.one_shot:
            raise InputError(
                "this corpus is a one-shot iterator but has to be read several times; "
                "give a list, a file or a directory"
            )
        self.lower, self.tokenizer, self.errors = lower, tokenizer, errors
        self.stats = ReadStats()

    def __iter__(self) -> Iterator[list[str]]:
        self.stats = ReadStats()
        return iter_sentences(self.source, lower=self.lower, tokenizer=self.tokenizer,
                              errors=self.errors, stats=self.stats)

    def __repr__(self) -> str:
        return f"SentenceStream({self.source.name!r})"
