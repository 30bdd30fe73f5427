"""Reading and writing :class:`~contextlens.vectors.EmbeddingTable` files in the ``FORMATS``:

- ``npz``: native; arrays ``keys`` (unicode), ``vectors`` (float32), ``name``; no pickles. A
  fastText table also keeps its n-grams: ``ngram_rows``, ``ngram_vectors`` and
  ``ngram_params`` (min_n, max_n, bucket); the text formats cannot, and drop them (logged).
- ``word2vec``: text; a header ``count dim``, then ``word v1 .. vdim`` per line (``.txt``,
  ``.vec``; fastText's trailing space is accepted).
- ``word2vec-binary``: the header, then per word its UTF-8 bytes, a space and ``dim`` little-
  endian float32 (``.bin``), as gensim's ``save_word2vec_format(binary=True)`` writes (a
  newline after a vector, as the C tool writes, is skipped).
- ``glove``: ``word2vec`` text without the header; ``dim`` comes from the first line.

All but ``npz`` may be gzipped (known by content when reading, by a final ``.gz`` when
writing). Values must be finite float32 and each vector at most
:data:`~contextlens.vectors.MAX_LENGTH` (1.8e19) long, so that its squared length and its
dot products hold in float32 (a row with 3e38 in it is refused, as 1e300 is). A single
space ends a word, so a word that holds a space (a
few hundred in GloVe 840B, e.g. ``". . ."``) cannot be read: its line has too many values.
Text is parsed by pyarrow's CSV reader (GloVe 6B 50d, 400k lines: about 2 s); if it refuses
a file, a line-by-line parser reads it again and accepts it or names the line at fault.

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.vec"
>>> write_table(EmbeddingTable(["bank", "river"], [[0.5, 1], [0, -2]]), path)
>>> print(path.read_text(), end="")
2 2
bank 0.5 1
river 0 -2
>>> read_table(path)
EmbeddingTable('tiny.vec', 2 words, dim 2)
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import math
import os
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .errors import EmptyInputError, FileFormatError, InputError, TextDecodingError, check_choice, check_int
from .files import atomic_output, check_input_file, read_error
from .ngrams import NgramVectors
from .vectors import EmbeddingTable, first_bad_value

__all__ = ["FORMATS", "detect_format", "read_table", "write_table"]

log = logging.getLogger(__name__)
FORMATS = ("npz", "word2vec", "word2vec-binary", "glove")
_SUFFIX_FORMATS = {".npz": "npz", ".bin": "word2vec-binary", ".txt": "word2vec", ".vec": "word2vec"}
_CONTROL_BYTES = frozenset(range(32)) - {9, 10, 13}  # never in text; common in float32 bytes
_CHUNK = 50_000  # rows per write batch
_PARSE = pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                            escape_char=False, ignore_empty_lines=False)
_WRITE = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
Rows = tuple[list[str], np.ndarray]  # words, (n, dim) float32
Locator = Callable[[int], tuple[int | None, str]]  # row -> (line or None, "line 7" / "entry 7")


# -- opening and sniffing ----------------------------------------------------------------
def _open(path: Path) -> BinaryIO:
    """The file's bytes, decompressed if it is gzip."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, "rb") if gz else open(path, "rb")


def _parse_header(line: bytes) -> tuple[int, int] | None:
    """``(count, dim)`` if ``line`` is a word2vec header, else None.

    >>> _parse_header(b"400000 50\\n"), _parse_header(b"the 0.418 0.25\\n")
    ((400000, 50), None)
    """
    parts = line.split()
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        return int(parts[0]), int(parts[1])
    return None


def _row_values(line: bytes) -> list[str] | None:
    """The value tokens of a text row, or None if the line is not UTF-8."""
    try:
        return line.decode("utf-8").rstrip().split(" ")[1:]
    except UnicodeDecodeError:
        return None


def _is_number(token: str) -> bool:
    with contextlib.suppress(ValueError):
        return float(token) is not None
    return False


def detect_format(path: str | os.PathLike) -> str:
    """The format of ``path``: ``.npz`` and ``.bin`` (``.bin.gz``) by suffix, else by content.

    A first line of two integers is a word2vec header; the rest is binary unless its first
    line is a word and ``dim`` numbers, or is UTF-8 with no control bytes in the next 64 KiB.
    Any other first line starts a GloVe file. Pass ``format=`` to ``read_table`` where this
    guesses wrong: a GloVe file starting ``1 2``, a binary one of a word or two.
    """
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes[-2:]]
    if suffixes[-1:] == [".npz"]:
        return "npz"
    if suffixes[-1:] == [".bin"] or suffixes == [".bin", ".gz"]:
        return "word2vec-binary"
    with _open(path) as f:
        header, sample = _parse_header(f.readline()), f.read(1 << 16)
    if header is None or header[1] < 1:  # "0 0" can only be a GloVe row
        return "glove"
    values = _row_values(sample.split(b"\n", 1)[0])
    text_row = values is not None and len(values) == header[1] and all(map(_is_number, values))
    binary = values is None or bool(_CONTROL_BYTES.intersection(sample))
    return "word2vec-binary" if binary and not text_row else "word2vec"


# -- reading -----------------------------------------------------------------------------
def read_table(path: str | os.PathLike, format: str | None = None, *, limit: int | None = None,
               name: str | None = None) -> EmbeddingTable:
    """Read an EmbeddingTable from ``path``: ``format`` is one of ``FORMATS`` or None to detect it.

    ``limit`` keeps the first ``limit`` words (files are usually sorted by frequency); ``name``
    labels the table (default: the name stored in an ``.npz``, else the file name).
    """
    path = Path(path)
    if format is not None:
        check_choice("vector file format", format, FORMATS)
    if limit is not None:
        check_int("limit", limit, low=1, hint="the number of words to keep")
    check_input_file(path, "vector file", "give the file itself (.npz, word2vec text or binary, GloVe text)")
    start, stored, ngrams = time.perf_counter(), None, None  # stored: the name in an .npz
    try:
        fmt = format or detect_format(path)
        if fmt == "npz":
            keys, vectors, stored, ngrams = _read_npz(path)
            keys, vectors = keys[:limit], vectors[:limit]
        elif fmt == "word2vec-binary":
            keys, vectors = _read_binary(path, limit)
        else:
            keys, vectors = _read_text(path, fmt == "word2vec", limit)
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise FileFormatError(path, None, f"damaged or truncated gzip data ({exc}); fetch it again") from None
    except OSError as exc:  # EIO (/proc/self/mem), a failing disk: the path, not "a file"
        raise read_error(path, exc) from None
    table = EmbeddingTable(keys, vectors, name=name or stored or path.name, ngrams=ngrams)
    log.info("read %s (%s): %d words, dim %d, in %.2f s", path, fmt, len(table), table.dim,
             time.perf_counter() - start)
    return table


def _check_rows(path: Path, words: Sequence[str], vectors: np.ndarray, locate: Locator) -> np.ndarray:
    """``vectors`` as float32, or raise if a value is not a finite float32 (NaN, infinity,
    or beyond ±3.4e38 in a float64 file), a vector is longer than
    :data:`~contextlens.vectors.MAX_LENGTH` (its squared length overflows float32), or a
    word is empty, holds NUL or is repeated (``locate``: see Locator)."""
    def fail(i: int, problem: str) -> FileFormatError:
        line, label = locate(i)
        return FileFormatError(path, line, problem if line else f"{label}: {problem}")
    with np.errstate(over="ignore"):  # beyond float32: inf, reported next
        as32 = vectors.astype(np.float32, copy=False)
    bad = first_bad_value(vectors, as32)
    if bad is not None:
        i, j, why = bad
        todo = ("scale the vectors down, or fix or drop the word" if np.isfinite(as32[i, j])
                else "a vector file holds finite float32 values")
        raise fail(i, f"value {j + 1} of {words[i]!r} is {why}; {todo}")
    if "" in words:
        raise fail(words.index(""), "empty word (does the line start with a space?)")
    if "\x00" in "".join(words):
        i = next(i for i, w in enumerate(words) if "\x00" in w)
        raise fail(i, f"the word {words[i]!r} holds a NUL byte (\\x00); the file is damaged or not a "
                      "vector file: fetch or write it again")
    if len(set(words)) < len(words):
        seen: dict[str, int] = {}
        j = next(j for j, w in enumerate(words) if seen.setdefault(w, j) != j)
        raise fail(j, f"duplicate word {words[j]!r} (first at {locate(seen[words[j]])[1]}); keep one")
    return as32


def _read_text(path: Path, header: bool, limit: int | None) -> Rows:
    with _open(path) as f:
        first = f.readline()
        data_line = f.readline() if header else first
    if not first:
        raise EmptyInputError(f"{path} is empty; a vector file needs 'word v1 .. vdim' lines")
    n = dim = None
    if header:
        parsed = _parse_header(first)
        if parsed is None or parsed[1] < 1:
            raise FileFormatError(path, 1, f"expected a word2vec header 'count dim', found "
                                  f"{first[:60]!r}; for a file without one use format='glove'")
        n, dim = parsed
        found = len(_row_values(data_line) or [])
        if data_line.strip() and found != dim:  # checked before anything is sized by the header
            raise FileFormatError(path, 2, f"the header says {dim} values per word but line 2 holds {found}; "
                                  "correct line 1 (or fetch the file again)")
    hint = "; line 1 looks like a word2vec header: use format='word2vec'" if (
        not header and _parse_header(first)) else ""
    fast_dim = dim or len(_row_values(data_line) or [])
    trailing = data_line.rstrip(b"\r\n").endswith(b" ")
    got = _fast_text(path, int(header), fast_dim, trailing, limit) if fast_dim else None
    if got is not None and not np.isfinite(got[1]).all():
        got = None  # read again in float64, to name a value beyond float32 as it is written
    words, vectors = got or _slow_text(path, dim, limit, hint)
    if not words:
        raise EmptyInputError(f"{path} holds no vectors; add 'word v1 .. vdim' lines")
    expected = n if limit is None or n is None else min(n, limit)
    if expected is not None and len(words) != expected:
        raise FileFormatError(path, 1, f"the header says {n} words but the file holds {len(words)} "
                              f"vector lines; correct line 1 to '{len(words)} {dim}' (or fetch it again)")
    first_row = 1 + int(header)
    return words, _check_rows(path, words, vectors, lambda i: (first_row + i, f"line {first_row + i}"))


def _fast_text(path: Path, skip: int, dim: int, trailing: bool, limit: int | None) -> Rows | None:
    """Parse with pyarrow's CSV reader; None if it refuses the file."""
    names = ["word", *map(str, range(dim))] + (["end"] if trailing else [])
    types = {c: pa.float32() for c in names[1:dim + 1]} | {"word": pa.string(), "end": pa.string()}
    words, blocks = [], []  # blocks: (rows, dim) each
    try:
        with _open(path) as src:
            for batch in pacsv.open_csv(
                src, parse_options=_PARSE,
                read_options=pacsv.ReadOptions(column_names=names, skip_rows=skip, block_size=1 << 22),
                convert_options=pacsv.ConvertOptions(column_types=types, null_values=[], check_utf8=True),
            ):
                if trailing and not pc.all(pc.equal(batch.column(dim + 1), "")).as_py():
                    return None
                words += batch.column(0).to_pylist()
                blocks.append(np.column_stack([c.to_numpy() for c in batch.columns[1:dim + 1]]))
                if limit is not None and len(words) >= limit:
                    break
    except (pa.ArrowException, OSError):
        return None
    vectors = np.concatenate(blocks)[:limit] if blocks else np.empty((0, dim), np.float32)
    return words[:limit], vectors


def _slow_text(path: Path, dim: int | None, limit: int | None, hint: str) -> Rows:
    """Line by line: the rows (float64, so that _check_rows can name a value beyond float32),
    or an error naming the line; ``dim`` is the header's (GloVe: None)."""
    header, why = dim is not None, "as the header says"
    words: list[str] = []
    rows: list[list[float]] = []
    blank = 0
    with _open(path) as f:
        offset = len(f.readline()) if header else 0
        for lineno, raw in enumerate(f, 1 + header):
            at, offset = offset, offset + len(raw)
            if limit is not None and len(words) >= limit:
                break
            try:
                text = raw.decode("utf-8").rstrip()
            except UnicodeDecodeError as exc:
                detail = f"line {lineno}, byte {raw[exc.start]:#04x}"
                raise TextDecodingError(path, at + exc.start, detail) from None
            if not text:
                blank = blank or lineno
                continue
            if blank:
                raise FileFormatError(path, blank, "blank line between vectors; delete it")
            word, *values = text.split(" ")
            if dim is None:
                dim, why = len(values), f"as on line {lineno}"
            if len(values) != dim or not values:
                if len(values) > dim and not _is_number(values[0]):
                    hint += "; a word with spaces in it (as some in GloVe 840B) cannot be read"
                problem = f"expected {dim} values after the word {word!r} ({why}), found {len(values)}"
                raise FileFormatError(path, lineno, (problem if dim else f"no values after {word!r}") + hint)
            try:
                rows.append([float(v) for v in values])
            except ValueError:
                j = next(j for j, v in enumerate(values) if not _is_number(v))
                what = f"{values[j]!r} is not a number" if values[j] else "is empty (two spaces in a row?)"
                raise FileFormatError(path, lineno, f"value {j + 1} of {word!r}: {what}") from None
            words.append(word)
    return words, np.array(rows, dtype=np.float64).reshape(len(rows), dim or 0)  # _check_rows: float32


def _read_binary(path: Path, limit: int | None) -> Rows:
    with _open(path) as f:
        data = f.read()
    if not data:
        raise EmptyInputError(f"{path} is empty; a word2vec binary file starts with 'count dim'")
    nl = data.find(b"\n", 0, 100)
    header = _parse_header(data[:nl]) if nl >= 0 else None
    if header is None or header[1] < 1:
        raise FileFormatError(path, 1, f"expected a header 'count dim', found {data[:40]!r}")
    n, dim = header
    want = n if limit is None else min(n, limit)
    if want == 0:
        raise EmptyInputError(f"{path} holds no vectors (its header says {n} words)")
    nbytes, size, pos = 4 * dim, len(data), nl + 1
    words: list[str] = []
    offsets: list[int] = []  # byte offset of each vector (grows with the file, not the header)
    for i in range(want):
        while pos < size and data[pos] == 10:  # the C tool ends each vector with a newline
            pos += 1
        space = data.find(b" ", pos, pos + (1 << 16))
        if space < 0 or space + 1 + nbytes > size:
            problem = "the file ends here" if pos >= size else (
                f"the word and its {nbytes}-byte vector run past the end of the file ({size} bytes)")
            raise FileFormatError(path, None, f"entry {i + 1} of {n}, byte offset {pos}: {problem}; "
                                  "the file is truncated or its header count is wrong")
        try:
            words.append(data[pos:space].decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise TextDecodingError(path, pos + exc.start, f"in the word of entry {i + 1}") from None
        offsets.append(space + 1)
        pos = space + 1 + nbytes
    if want == n and data[pos:].strip():
        raise FileFormatError(path, 1, f"the header says {n} words but data goes on after entry {n}, "
                              f"at byte {pos}; correct the count (a text file? use format='word2vec')")
    buf = np.frombuffer(data, dtype=np.uint8)
    vectors = np.empty((want, dim), dtype=np.float32)  # (want, dim)
    columns, at = np.arange(nbytes), np.array(offsets, dtype=np.int64)  # (want,)
    step = max(1, (1 << 21) // nbytes)  # gather (step, nbytes) indices at a time: about 16 MiB
    for s in range(0, want, step):
        vectors[s:s + step] = buf[at[s:s + step, None] + columns].view("<f4")
    return words, _check_rows(  # an entry begins 1 + len(word) bytes before its vector
        path, words, vectors,
        lambda i: (None, f"entry {i + 1} (byte {offsets[i] - 1 - len(words[i].encode())})"))


_DEFLATE_RATIO = 1100  # deflate expands at most about 1032 times


def _check_npz_sizes(path: Path, members: Sequence[str]) -> None:
    """Raise unless each ``.npy`` member's header declares no more bytes than the member
    holds (and the member no more than its compressed size allows): ``np.load`` allocates
    what a header declares before it reads a byte, so a damaged header could ask for
    terabytes."""
    import numpy.lib.format as npy

    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            if info.filename.removesuffix(".npy") not in members:
                continue
            limit = info.compress_size * (1 if info.compress_type == zipfile.ZIP_STORED else _DEFLATE_RATIO)
            if info.file_size > limit + 1024:
                raise FileFormatError(path, None, f"member {info.filename!r} claims {info.file_size:,} bytes "
                                      f"from {info.compress_size:,} stored; the archive is damaged")
            with z.open(info) as f:
                version = npy.read_magic(f)
                read_header = {(1, 0): npy.read_array_header_1_0,
                               (2, 0): npy.read_array_header_2_0}.get(version)
                if read_header is None:
                    raise ValueError(f"unsupported .npy version {version} in {info.filename}")
                shape, _, dtype = read_header(f)
            declared = math.prod(shape) * dtype.itemsize
            if declared > info.file_size:
                raise FileFormatError(path, None, f"member {info.filename!r} declares {shape} {dtype} "
                                      f"({declared:,} bytes) but holds {info.file_size:,}; the archive is "
                                      "damaged")


_NGRAM_ARRAYS = ("ngram_rows", "ngram_vectors", "ngram_params")


def _read_npz(path: Path) -> tuple[list[str], np.ndarray, str | None, NgramVectors | None]:
    try:
        _check_npz_sizes(path, ("keys", "vectors", "name", *_NGRAM_ARRAYS))
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in ("keys", "vectors", "name", *_NGRAM_ARRAYS) if k in z.files}
    except FileFormatError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError) as exc:
        raise FileFormatError(path, None, f"not a readable .npz archive ({exc})") from None
    keys, vectors = arrays.get("keys"), arrays.get("vectors")  # (n,), (n, dim)
    if keys is None or keys.ndim != 1 or keys.dtype.kind != "U":
        raise FileFormatError(path, None, "no 1-D unicode array 'keys'; an EmbeddingTable .npz holds "
                              "'keys', 'vectors' and 'name' (see EmbeddingTable.save)")
    if vectors is None or vectors.ndim != 2 or len(vectors) != len(keys) or vectors.dtype.kind != "f":
        found = "none" if vectors is None else f"{vectors.dtype} {vectors.shape}"
        raise FileFormatError(path, None, f"'vectors' must be floats ({len(keys)}, dim), found {found}")
    if not len(keys):
        raise EmptyInputError(f"{path} holds no vectors")
    if vectors.shape[1] == 0:
        raise FileFormatError(path, None,
                              "'vectors' has 0 dimensions; a table needs at least one value per word")
    words = keys.tolist()
    vectors = _check_rows(path, words, vectors, lambda i: (None, f"key {i}"))
    ngrams = None
    if any(k in arrays for k in _NGRAM_ARRAYS):
        try:
            min_n, max_n, bucket = (int(x) for x in arrays["ngram_params"])
            ngrams = NgramVectors(min_n, max_n, bucket, arrays["ngram_rows"], arrays["ngram_vectors"])
        except (KeyError, ValueError, TypeError) as exc:
            raise FileFormatError(path, None,
                                  f"damaged fastText n-grams ({exc}); save the table again") from None
    return words, vectors, str(arrays.get("name", "")) or None, ngrams


# -- writing -----------------------------------------------------------------------------
def write_table(table: EmbeddingTable, path: str | os.PathLike, format: str | None = None) -> None:
    """Write ``table`` to ``path`` atomically: a failure leaves no file (and an old one intact).

    The format follows the suffix unless given: ``.npz`` native, ``.bin`` word2vec binary,
    ``.txt``/``.vec`` word2vec text with a header (``format="glove"``: none); a final ``.gz``
    compresses. Values are written in the shortest text that reads back as the same float32.
    """
    path = Path(path)
    suffixes = [s.lower() for s in path.suffixes]
    gz = suffixes[-1:] == [".gz"]
    if format is not None:
        check_choice("vector file format", format, FORMATS)
    fmt = format or _SUFFIX_FORMATS.get(suffixes[-1 - gz] if len(suffixes) > gz else "")
    if fmt is None:
        raise InputError(f"cannot tell the vector file format from the name {path.name!r}; end it in "
                         f".npz, .bin, .txt or .vec (+ .gz), or pass format= one of {', '.join(FORMATS)}")
    if fmt == "npz" and gz:
        raise InputError(f"{path.name}: an .npz is already a zip archive; drop the .gz")
    if len(table) == 0:
        raise EmptyInputError("the table has no words; there is nothing to save")
    breaks = fmt != "npz"  # the word2vec and GloVe formats end a word at a space or line break
    bad = next((w for w in table.keys if not w or breaks and (" " in w or "\n" in w or "\r" in w)), None)
    if bad is not None:
        raise InputError(f"the word {bad!r} is empty or holds a space or line break, which the {fmt} "
                         "format cannot store; rename it (only .npz keeps spaces and line breaks)")
    if breaks and not _utf8(table.keys):
        bad = next(w for w in table.keys if not _utf8([w]))
        raise InputError(f"the word {bad!r} holds a lone surrogate, which UTF-8 (the {fmt} format) cannot "
                         "store; clean the word, or save as .npz")
    with atomic_output(path) as tmp, _create(tmp, gz) as f:
        if fmt == "npz":  # written to a file object: np.savez would add ".npz" to a name
            ng = table.ngrams
            extra = {} if ng is None else {"ngram_rows": ng.rows, "ngram_vectors": ng.vectors,
                                           "ngram_params": np.array([ng.min_n, ng.max_n, ng.bucket])}
            np.savez(f, keys=np.array(table.keys, dtype=str), vectors=table.vectors,
                     name=np.array(table.name), **extra)
        else:
            if table.ngrams is not None:
                log.warning("%s: the %s format holds no n-grams; words %s lacks will not be composed "
                            "(save as .npz to keep them)", path, fmt, table.name)
            _write_w2v(f, table, fmt)
    log.info("wrote %s (%s): %d words, dim %d", path, fmt, len(table), table.dim)


def _utf8(words: Sequence[str]) -> bool:
    """Whether every word can be written as UTF-8 (a lone surrogate such as ``"\\ud800"`` cannot).

    >>> _utf8(["bank", "東京"]), _utf8(["a\\ud800"])
    (True, False)
    """
    try:
        "".join(words).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@contextlib.contextmanager
def _create(path: Path, gz: bool) -> Iterator[BinaryIO]:
    """``path`` open for writing; gzip level 4 (fast), no name, mtime 0: same table, same bytes."""
    with open(path, "wb") as raw, (gzip.GzipFile("", "wb", 4, raw, mtime=0)
                                   if gz else contextlib.nullcontext(raw)) as f:
        yield f


def _format_rows(block: np.ndarray) -> list[str]:
    """Each row of ``block`` ``(rows, dim)`` as space-separated shortest round-trip floats.

    >>> _format_rows(np.array([[0.1, 1.0], [-2.5, 1e-7]], dtype=np.float32))
    ['0.1 1', '-2.5 1e-7']
    """
    columns = np.ascontiguousarray(block.T)  # (dim, rows)
    buf = pa.BufferOutputStream()
    pacsv.write_csv(pa.table({str(j): columns[j] for j in range(len(columns))}), buf, _WRITE)
    return buf.getvalue().to_pybytes().decode("ascii").split("\n")[:len(block)]


def _write_w2v(f: BinaryIO, table: EmbeddingTable, fmt: str) -> None:
    n, dim = table.vectors.shape
    if fmt != "glove":
        f.write(f"{n} {dim}\n".encode())
    for s in range(0, n, _CHUNK):
        keys, block = table.keys[s:s + _CHUNK], table.vectors[s:s + _CHUNK]  # block: (rows, dim)
        if fmt == "word2vec-binary":
            little = block.astype("<f4", copy=False)
            f.write(b"".join(w.encode() + b" " + v.tobytes() for w, v in zip(keys, little)))
        else:
            f.write("".join(f"{w} {v}\n" for w, v in zip(keys, _format_rows(block))).encode())
