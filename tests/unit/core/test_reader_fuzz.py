"""Fuzzing the readers: vector files (.npz, word2vec text and binary, GloVe text, gzipped
or not) and corpora, mutated (truncated, bit-flipped, NUL bytes, wrong or huge headers).
Every mutant gives a correct table or sentences, or one ContextLensError: never another
exception, and never an allocation out of proportion to the file.

Deterministic (``derandomize``) and bounded: a few seconds per reader."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contextlens.bias import read_sets  # imported before tracemalloc starts: SciPy is slow to import under it
from contextlens.corpus.reading import iter_sentences
from contextlens.errors import ContextLensError
from contextlens.vectors import EmbeddingTable
from contextlens.vectors_io import read_table

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
# bytes any read may use beyond what the file justifies (read buffers: pyarrow asks 4 MiB)
ALLOWANCE = 16 << 20
PER_BYTE = 64  # what one byte of (decompressed) data may cost while parsing: floats, lists, strings


def good_table() -> EmbeddingTable:
    rng = np.random.default_rng(5)
    keys = ["the", "bank", "river", "Zürich", "a,b", "1", "nan", "東京"]
    return EmbeddingTable(keys, rng.standard_normal((len(keys), 5)).astype(np.float32), name="fuzz")


@pytest.fixture(scope="module")
def originals(tmp_path_factory) -> dict[str, bytes]:
    root = tmp_path_factory.mktemp("fuzz")
    out = {}
    for name, fmt in (("t.npz", None), ("t.txt", None), ("t.bin", None), ("t.txt.gz", None),
                      ("t.bin.gz", None), ("g.txt", "glove")):
        good_table().save(root / name, format=fmt)
        out[name] = (root / name).read_bytes()
    return out


HEADERS = [b"999999999999 5\n", b"1 999999999999\n", b"8 0\n", b"-3 5\n", b"8 5 5\n", b"eight five\n", b"\n",
           b"0 5\n", b"8 4\n", b"9 5\n", b"\x00\x00 5\n"]


@st.composite
def mutants(draw, data: bytes) -> bytes:
    """``data`` truncated, bit-flipped, with NUL bytes or a duplicated line put in, or its
    first line replaced by a wrong or huge header (one to three of these)."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "flip", "nul", "header", "duplicate", "splice"]))
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1))
        if kind == "truncate":
            data = data[:at]
        elif kind == "flip":
            data = data[:at] + bytes([data[at] ^ (1 << draw(st.integers(0, 7)))]) + data[at + 1:]
        elif kind == "nul":
            data = data[:at] + b"\x00" * draw(st.integers(1, 4)) + data[at:]
        elif kind == "header":
            cut = data.find(b"\n") + 1
            data = draw(st.sampled_from(HEADERS)) + (data[cut:] if cut else data)
        elif kind == "duplicate":
            end = data.find(b"\n", at)
            start = data.rfind(b"\n", 0, at) + 1
            data = data[:end + 1] + data[start:end + 1] + data[end + 1:] if end > 0 else data
        else:  # a random chunk of the file written over another place
            size = draw(st.integers(1, 64))
            src = draw(st.integers(0, len(data) - 1))
            data = data[:at] + data[src:src + size] + data[at + size:]
    return data


def justified(data: bytes) -> int:
    try:
        size = max(len(data), len(gzip.decompress(data))) if data[:2] == b"\x1f\x8b" else len(data)
    # a damaged gzip stream justifies no more than its bytes
    except (OSError, EOFError, ValueError, zlib.error):
        size = len(data)
    return ALLOWANCE + PER_BYTE * size


@pytest.fixture(scope="module", autouse=True)
def traced():
    """tracemalloc on for the whole module, started and stopped once: stopping it while
    other threads allocate can crash CPython 3.11 (the race of gh-128679), so never per read."""
    tracemalloc.start()
    yield
    tracemalloc.stop()


def check_read(path: Path, data: bytes, fmt: str | None) -> None:
    path.write_bytes(data)
    before = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    try:
        table = read_table(path, format=fmt)
    except ContextLensError:
        table = None
    finally:
        peak = tracemalloc.get_traced_memory()[1] - before
    assert peak <= justified(data), f"{peak:,} bytes to read {len(data):,}"
    if table is not None:  # whatever was read is a correct table
        assert table.vectors.dtype == np.float32 and table.vectors.ndim == 2 and table.dim >= 1
        assert len(table.keys) == len(set(table.keys)) == len(table.vectors) >= 1
        assert np.isfinite(table.vectors).all()
        assert all(k and "\x00" not in k for k in table.keys)


@pytest.mark.parametrize(("name", "fmt"), [("t.npz", None), ("t.txt", None), ("t.bin", None),
                                           ("t.txt.gz", None),
                                           ("t.bin.gz", None), ("g.txt", "glove"), ("g.txt", None)])
def test_mutated_vector_files_give_a_table_or_one_clear_error(originals, tmp_path, name, fmt):
    base = originals[name]
    path = tmp_path / name

    @FUZZ
    @given(mutants(base))
    def run(data):
        check_read(path, data, fmt)

    run()


def test_the_originals_read_back_exactly(originals, tmp_path):
    for name, data in originals.items():
        (tmp_path / name).write_bytes(data)
        table = read_table(tmp_path / name, format="glove" if name.startswith("g.") else None)
        assert table.keys == good_table().keys
        np.testing.assert_array_equal(table.vectors, good_table().vectors)


CORPUS = "We sat on the bank .\nThe bank raised its rates .\n\nA spring by the river bank\nZürich 東京 café\n"


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("errors", ["strict", "skip"])
def test_mutated_corpora_give_sentences_or_one_clear_error(tmp_path, gz, errors):
    raw = CORPUS.encode("utf-8")
    base = gzip.compress(raw, mtime=0) if gz else raw
    path = tmp_path / ("c.txt.gz" if gz else "c.txt")

    @FUZZ
    @given(mutants(base))
    def run(data):
        path.write_bytes(data)
        try:
            sentences = list(iter_sentences(path, errors=errors))
        except ContextLensError:
            return
        assert sentences and all(tokens and all(isinstance(t, str) and t for t in tokens)
                                 for tokens in sentences)
        assert not any("\x00" in t for tokens in sentences for t in tokens)

    run()


# -- the one line rule, whatever the line breaks --------------------------------------------------
INSIDE = "\u2028\u2029\x0b\x0c\x1c\x1d\x1e\x85\u00a0\t "  # never a line break, whatever str.splitlines says
line_text = st.text(st.one_of(st.sampled_from(INSIDE), st.characters(
    codec="utf-8", exclude_characters="\r\n\x00\ufeff")), max_size=12)


@FUZZ
@given(lines=st.lists(line_text, min_size=1, max_size=8),
       breaks=st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=8, max_size=8),
       last=st.booleans(), block=st.integers(1, 16))
def test_every_reader_ends_lines_at_lf_crlf_or_cr_only(tmp_path, lines, breaks, last, block):
    from contextlens.analysis.usages import numbered_lines
    from contextlens.corpus.reading import iter_lines, iter_text_blocks
    from contextlens.datasets._io import read_lines
    from contextlens.text import split_lines

    last = last or lines[-1] == ""  # an unended last line that is empty is no line at all
    breaks = list(breaks)
    for i in reversed(range(len(lines) - 1)):  # "\r" then "\n" around an empty line is one "\r\n": from the
        if breaks[i] == "\r" and not lines[i + 1] and breaks[i + 1][0] == "\n":  # end, so that a run of them
            breaks[i] = "\n"  # ("\r", "\r", "\n" around two empty lines) is undone whole
    text = "".join(line + brk for line, brk in zip(lines, breaks))
    text = text if last else text[: len(text) - len(breaks[len(lines) - 1])]
    path = tmp_path / "lines.txt"
    path.write_bytes(text.encode("utf-8"))
    assert split_lines(text) == lines and read_lines(path) == lines
    assert numbered_lines(path) == [(n, s) for n, line in enumerate(lines, 1)
                                    if (s := line.strip()) and not s.startswith("#")]
    if any(line.strip() for line in lines):  # a corpus of blank lines is an error of its own
        assert list(iter_lines(path)) == lines
        assert "".join(iter_text_blocks(path, block_bytes=block)).split("\n")[: len(lines)] == lines


# -- sets files: surrogates, deep nesting, huge numbers, odd line endings -------------------------
SETS = (
    '{"name": "toy",\n "X": ["rose", "tulip"],\n "Y": ["ant", "wasp"],\n "A": ["love"],\n "B": ["filth"]}\n'
)


@st.composite
def sets_mutants(draw) -> bytes:
    text = SETS
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["surrogate", "deep", "number", "breaks", "bytes"]))
        if kind == "surrogate":  # a lone \udXXX escape into a word or the name
            at = text.index('"', draw(st.integers(0, len(text) - 30))) + 1
            text = text[:at] + f"\\u{draw(st.integers(0xD800, 0xDFFF)):04x}" + text[at:]
        elif kind == "deep":
            depth = draw(st.sampled_from([900, 5_000, 100_000]))
            text = text.replace('"rose"', "[" * depth + '"rose"' + "]" * depth, 1)
        elif kind == "number":
            text = text.replace('"tulip"', draw(st.sampled_from(["7" * 5000, "1e999", "-0", "1" * 4301])), 1)
        elif kind == "breaks":
            text = text.replace("\n", draw(st.sampled_from(["\r", "\r\n", "\u2028", "\x85", "\x0c"])))
        else:
            return draw(mutants(text.encode("utf-8")))
    return text.encode("utf-8")


@FUZZ
@given(sets_mutants())
def test_mutated_sets_files_give_sets_or_one_clear_error(tmp_path, data):
    path = tmp_path / "sets.json"
    path.write_bytes(data)
    try:
        sets = read_sets(path)
    except ContextLensError as err:
        assert "\n" not in str(err) and len(str(err)) < 1000
        str(err).encode("utf-8")  # the message itself prints
        return
    for words in sets.as_dict().values():
        assert words and all(isinstance(w, str) and w.strip() for w in words)
        "".join(words).encode("utf-8")
    sets.name.encode("utf-8")


# -- distillation checkpoints: damaged anywhere, they resume or give one clear error -------------
@pytest.fixture(scope="module")
def checkpoint_bytes(tmp_path_factory) -> tuple[bytes, object]:
    from contextlens.encoders.mixing import NeighbourAverage
    from contextlens.passes.distill import distill
    from tests.unit.corpus.test_distill import CORPUS, TABLE

    encoder, root = NeighbourAverage(TABLE, alpha=0.5), tmp_path_factory.mktemp("ckpt")

    def stop(done, usages):
        if done >= 24:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        distill(CORPUS, encoder, root / "t.npz", min_count=1, chunk_size=8, progress=stop)
    return (root / "t.npz.distill.npz").read_bytes(), encoder


def test_mutated_checkpoints_resume_or_give_one_clear_error(checkpoint_bytes, tmp_path):
    from contextlens.passes.distill import distill
    from tests.unit.corpus.test_distill import CORPUS

    base, encoder = checkpoint_bytes

    @settings(FUZZ, max_examples=40)
    @given(mutants(base))
    def run(data):
        (tmp_path / "t.npz.distill.npz").write_bytes(data)
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        try:
            result = distill(CORPUS, encoder, tmp_path / "t.npz", min_count=1, chunk_size=8)
        except ContextLensError as err:
            assert str(err).startswith(str(tmp_path / "t.npz.distill.npz")), err
            return
        finally:
            assert tracemalloc.get_traced_memory()[1] - before <= justified(base)
        assert 0 <= result.resumed_at <= len(CORPUS)

    run()
