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

from contextlens.corpus import iter_sentences
from contextlens.errors import ContextLensError
from contextlens.vectors import EmbeddingTable
from contextlens.vectors_io import read_table

FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
ALLOWANCE = 16 << 20  # bytes any read may use beyond what the file justifies (read buffers: pyarrow asks 4 MiB)
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
    except (OSError, EOFError, ValueError, zlib.error):  # a damaged gzip stream justifies no more than its bytes
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


@pytest.mark.parametrize(("name", "fmt"), [("t.npz", None), ("t.txt", None), ("t.bin", None), ("t.txt.gz", None),
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
        assert sentences and all(tokens and all(isinstance(t, str) and t for t in tokens) for tokens in sentences)
        assert not any("\x00" in t for tokens in sentences for t in tokens)

    run()
