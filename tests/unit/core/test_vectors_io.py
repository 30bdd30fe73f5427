"""Reading and writing embedding tables: every format both ways, gensim agreement,
auto-detection, atomic writes, and an error naming the line for every malformed file."""

import gzip
import tempfile
from pathlib import Path

import numpy as np
import pytest
from gensim.models import KeyedVectors
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from contextlens import errors, vectors_io
from contextlens.vectors import EmbeddingTable
from contextlens.vectors_io import detect_format, read_table, write_table

NAMES = ["t.npz", "t.txt", "t.vec", "t.txt.gz", "t.vec.gz", "t.bin", "t.bin.gz"]


@pytest.fixture
def table():
    keys = ["the", "bank", "Zürich", "東京", "naïve", "\"quoted\"", "#hash", "a,b", "nan", "1"]
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((len(keys), 7)).astype(np.float32)
    vectors[0] = [0.0, -0.0, 1e-7, 123456789.0, 1.5e-30, 1.8e19, -1.0]  # odd values, the longest vector
    vectors[1] = 0.0  # an all-zero row (NUL bytes in binary)
    return EmbeddingTable(keys, vectors, name="demo")


def assert_same(a: EmbeddingTable, b: EmbeddingTable):
    assert a.keys == b.keys
    np.testing.assert_array_equal(a.vectors.view(np.uint32), b.vectors.view(np.uint32))  # bit for bit


def write_bytes(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def text_file(tmp_path: Path, text: str, name: str = "v.txt") -> Path:
    return write_bytes(tmp_path, name, text.encode("utf-8"))


# -- round trips -------------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_round_trip_of_every_format(tmp_path, table, name):
    path = tmp_path / name
    table.save(path)
    back = EmbeddingTable.load(path)
    assert_same(back, table)
    assert back.name == ("demo" if name.endswith(".npz") else name)
    if name.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"


@pytest.mark.parametrize("name", ["g.txt", "g.glove", "g.txt.gz"])
def test_glove_round_trip_has_no_header(tmp_path, table, name):
    path = tmp_path / name
    write_table(table, path, format="glove")
    first = (gzip.open(path) if name.endswith(".gz") else open(path, "rb")).readline()
    assert first.startswith(b"the 0 -0 1e-7 123456790 ")
    assert detect_format(path) == "glove"
    assert_same(read_table(path), table)


def test_explicit_format_wins_over_the_suffix(tmp_path, table):
    path = tmp_path / "actually-npz.txt"
    write_table(table, path, format="npz")
    assert not (tmp_path / "actually-npz.txt.npz").exists()  # np.savez did not add a suffix
    assert_same(read_table(path, format="npz"), table)


def test_slow_path_reads_what_the_fast_path_reads(tmp_path, table, monkeypatch):
    for name in ("t.txt", "t.vec.gz"):
        table.save(tmp_path / name)
    write_table(table, tmp_path / "g.txt", format="glove")
    monkeypatch.setattr(vectors_io, "_fast_text", lambda *args: None)
    for name in ("t.txt", "t.vec.gz", "g.txt"):
        assert_same(read_table(tmp_path / name), table)


@pytest.mark.parametrize(
    "text",
    ["2 2\na 1 2\nb 3 4\n", "a 1 2\nb 3 4\n", "2 2\na 1 2 \nb 3 4 \n", "2 2\r\na 1 2\r\nb 3 4\r\n"],
    ids=["word2vec", "glove", "fasttext-trailing-space", "crlf"],
)
def test_common_files_take_the_fast_path(tmp_path, monkeypatch, text):
    monkeypatch.setattr(vectors_io, "_slow_text", None)  # calling the line-by-line parser fails
    t = read_table(text_file(tmp_path, text))
    assert t.keys == ("a", "b") and t.vectors.tolist() == [[1, 2], [3, 4]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a 1 2\nb 3 4\n\n\n", [[1, 2], [3, 4]]),  # trailing blank lines
        ("2 2\na 1 2 \nb 3 4\n", [[1, 2], [3, 4]]),  # trailing space on some lines only
        ("a 1_0 2\n", [[10, 2]]),  # what Python's float() accepts
        ("a 1 2", [[1, 2]]),  # no final newline
    ],
)
def test_unusual_but_valid_files_are_read(tmp_path, text, expected):
    assert read_table(text_file(tmp_path, text)).vectors.tolist() == expected


letters = st.characters(exclude_characters=" \n\r\x00", exclude_categories=["Cs"])
word = st.text(letters, min_size=1, max_size=8)
keys_strategy = st.lists(word, min_size=1, max_size=6, unique=True)


@settings(max_examples=25, deadline=None)
@given(data=st.data(), keys=keys_strategy, dim=st.integers(1, 5))
def test_random_tables_round_trip_in_every_format(data, keys, dim):
    limit = float(np.float32(8e18))  # x √5 dims: vectors up to 1.79e19 long, within MAX_LENGTH
    finite = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-limit, max_value=limit)
    t = EmbeddingTable(keys, data.draw(arrays(np.float32, (len(keys), dim), elements=finite)))
    with tempfile.TemporaryDirectory() as tmp:
        for name in NAMES:
            t.save(Path(tmp, name))
            assert_same(read_table(Path(tmp, name)), t)
        write_table(t, Path(tmp, "g.txt"), format="glove")
        assert_same(read_table(Path(tmp, "g.txt"), format="glove"), t)


def test_name_and_limit(tmp_path, table):
    for name in ("t.txt", "t.bin", "t.npz"):
        table.save(tmp_path / name)
        assert read_table(tmp_path / name, limit=3).keys == table.keys[:3]
    assert read_table(tmp_path / "t.txt", name="mine").name == "mine"
    with pytest.raises(errors.InputError, match="limit must be a whole number >= 1, got 0"):
        read_table(tmp_path / "t.txt", limit=0)


# -- gensim ------------------------------------------------------------------------------
@pytest.mark.parametrize("binary", [False, True])
def test_files_written_by_gensim_read_the_same_as_gensim_reads_them(tmp_path, table, binary):
    path = tmp_path / ("g.bin" if binary else "g.txt")
    table.to_gensim().save_word2vec_format(str(path), binary=binary)
    kv = KeyedVectors.load_word2vec_format(str(path), binary=binary)
    ours = read_table(path)
    assert list(ours.keys) == kv.index_to_key
    np.testing.assert_array_equal(ours.vectors, kv.vectors)
    if binary:  # and what we write is byte for byte what gensim writes
        ours.save(tmp_path / "again.bin")
        assert (tmp_path / "again.bin").read_bytes() == path.read_bytes()


@pytest.mark.parametrize(("name", "fmt"), [("t.txt", None), ("t.vec.gz", None), ("t.bin", None),
                                           ("t.bin.gz", None), ("g.txt", "glove")])
def test_files_we_write_read_the_same_in_gensim(tmp_path, table, name, fmt):
    write_table(table, tmp_path / name, format=fmt)
    kv = KeyedVectors.load_word2vec_format(str(tmp_path / name), binary=".bin" in name,
                                           no_header=fmt == "glove")
    assert kv.index_to_key == list(table.keys)
    np.testing.assert_array_equal(kv.vectors, table.vectors)


def test_binary_with_c_tool_newlines_is_read(tmp_path):
    body = b"".join(w + b" " + np.array(v, "<f4").tobytes() + b"\n"
                    for w, v in [(b"a", [1, 2]), (b"b", [3, 4])])
    t = read_table(write_bytes(tmp_path, "c.bin", b"2 2\n" + body))
    assert t.keys == ("a", "b") and t.vectors.tolist() == [[1, 2], [3, 4]]


# -- auto-detection ----------------------------------------------------------------------
def binary_bytes(words, vectors) -> bytes:
    rows = [w.encode() + b" " + np.asarray(v, "<f4").tobytes() for w, v in zip(words, vectors)]
    return f"{len(words)} {len(vectors[0])}\n".encode() + b"".join(rows)


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("v.txt", b"2 2\na 1 2\nb 3 4\n", "word2vec"),
        ("v.vec.gz", b"2 2\na 1 2\nb 3 4\n", "word2vec"),
        ("v.txt", b"a 1 2\nb 3 4\n", "glove"),
        ("v.gz", b"a 1 2\nb 3 4\n", "glove"),
        ("v.w2v", binary_bytes(["a", "b"], [[0.25, -1.5], [3.0, 4.0]]), "word2vec-binary"),
        ("v.txt", binary_bytes(["a"], [[0.0]]), "word2vec-binary"),
        ("v.w2v.gz", binary_bytes(["a", "b"], [[0.1, 0.2], [0.3, 0.4]]), "word2vec-binary"),
        ("v.bin", b"2 2\na 1 2\nb 3 4\n", "word2vec-binary"),  # the suffix says so
        ("v.npz", b"", "npz"),
        ("v.txt", b"", "glove"),  # reading it then says the file is empty
        ("v.txt", b"0 0\n1 2\n", "glove"),  # a header cannot declare dimension 0
    ],
)
def test_auto_detection(tmp_path, name, data, expected):
    assert detect_format(write_bytes(tmp_path, name, data)) == expected


def test_detected_binary_without_bin_suffix_reads(tmp_path):
    path = write_bytes(tmp_path, "v.w2v", binary_bytes(["a", "b"], [[0.25, -1.5], [3.0, 4.0]]))
    assert read_table(path).vectors.tolist() == [[0.25, -1.5], [3.0, 4.0]]


def test_unknown_format_lists_the_valid_ones(tmp_path, table):
    with pytest.raises(errors.UnknownOptionError, match="values: npz, word2vec, word2vec-binary, glove"):
        read_table(text_file(tmp_path, "a 1\n"), format="fasttext")
    with pytest.raises(errors.UnknownOptionError, match="did you mean 'word2vec'"):
        write_table(table, tmp_path / "x.txt", format="word2vek")
    with pytest.raises(errors.InputError, match="missing.txt: no such vector file"):
        read_table(tmp_path / "missing.txt")


# -- malformed files ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "fmt", "line", "says"),
    [
        ("3 2\na 1 2\nb 1 2 3\nc 1 2\n", None, 3,
         "expected 2 values after the word 'b' (as the header says), found 3"),
        ("a 1 2\nb 1\n", None, 2, "expected 2 values after the word 'b' (as on line 1), found 1"),
        ("2 2\na 1 2\nb 1 x2\n", None, 3, "value 2 of 'b': 'x2' is not a number"),
        ("a 1 2 3\nb 1  2\n", None, 2, "value 2 of 'b': is empty (two spaces in a row?)"),
        ("a 1,5 2\n", None, 1, "value 1 of 'a': '1,5' is not a number"),
        ("3 2\na 1 2\nb 1 2\n", None, 1, "the header says 3 words but the file holds 2 vector lines; "
         "correct line 1 to '2 2'"),
        ("1 2\na 1 2\nb 1 2\n", None, 1, "the header says 1 words but the file holds 2"),
        ("a 1 2\nb 1 2\nc 3 3\na 3 4\n", None, 4, "duplicate word 'a' (first at line 1)"),
        ("2 2\nb 1 2\nb 3 4\n", None, 3, "duplicate word 'b' (first at line 2)"),
        ("a 1 2\nb nan 2\n", None, 2, "value 1 of 'b' is nan, not a finite number"),
        ("a 1 2\nb 2 1e39\n", None, 2, "value 2 of 'b' is 1e+39, beyond the float32 range"),
        ("a 1 2\n 1 2\n", None, 2, "empty word"),
        ("a 1 2\n\nb 3 4\n", None, 2, "blank line between vectors"),
        ("a 1 2\n. . . 3 4\n", None, 2,
         "found 4; a word with spaces in it (as some in GloVe 840B) cannot be read"),
        ("2 2\na 1 2\nb 3 4\n", "glove", 2,
         "expected 1 values after the word 'a' (as on line 1), found 2; line 1 looks like a "
         "word2vec header: use format='word2vec'"),
        ("two 2\na 1 2\n", "word2vec", 1, "expected a word2vec header 'count dim'"),
        ("2 0\na\nb\n", "word2vec", 1, "expected a word2vec header 'count dim'"),
        ("lonely\n", None, 1, "no values after 'lonely'"),
    ],
)
@pytest.mark.parametrize("name", ["v.txt", "v.txt.gz"])
def test_malformed_text_names_the_file_and_line(tmp_path, name, text, fmt, line, says):
    path = text_file(tmp_path, text, name)
    with pytest.raises(errors.FileFormatError) as info:
        read_table(path, format=fmt)
    assert (info.value.path, info.value.line) == (path, line)
    assert str(info.value).startswith(f"{path}, line {line}: ")
    assert says in str(info.value)


@pytest.mark.parametrize("text", ["", "0 3\n", "\n\n", "2 2\n\n"])
def test_files_without_vectors_are_empty_input(tmp_path, text):
    with pytest.raises(errors.EmptyInputError, match="empty|no vectors"):
        read_table(text_file(tmp_path, text))


@pytest.mark.parametrize(
    ("name", "data", "offset", "says"),
    [
        ("v.txt", b"2 2\na 1 2\ncaf\xe9 3 4\n", 13, "byte offset 13 (line 3, byte 0xe9)"),  # Latin-1 é
        ("v.txt.gz", b"2 2\na 1 2\ncaf\xe9 3 4\n", 13, "byte offset 13 (line 3, byte 0xe9)"),
        ("g.txt", b"a 1 2\nb 3 4\nna\xefve 5 6\n", 14, "byte offset 14 (line 3, byte 0xef)"),
        ("w.txt", b"2 2\nna\xefve 1 2\nb 3 4\n", 6, "byte offset 6 "),  # detection says binary here
    ],
)
def test_non_utf8_text_gives_the_byte_offset(tmp_path, name, data, offset, says):
    with pytest.raises(errors.TextDecodingError) as info:
        read_table(write_bytes(tmp_path, name, data))
    assert info.value.offset == offset and says in str(info.value)


@pytest.fixture
def binary(tmp_path, table) -> bytes:
    table.save(tmp_path / "good.bin")
    return (tmp_path / "good.bin").read_bytes()


def test_truncated_binary_or_a_wrong_count_says_which_entry_and_byte(tmp_path, binary, table):
    last = len(binary) - (1 + 1 + 4 * table.dim)  # the last entry: the word "1", a space, 7 floats
    for name in ("cut.bin", "cut.bin.gz"):
        with pytest.raises(errors.FileFormatError) as info:
            read_table(write_bytes(tmp_path, name, binary[:-10]))
        assert info.value.line is None
        assert (f"entry 10 of 10, byte offset {last}: the word and its 28-byte vector run past "
                "the end of the file") in str(info.value)
        assert "truncated or its header count is wrong" in str(info.value)
    more = b"11" + binary[2:]  # header "11 7" over 10 entries
    says = f"entry 11 of 11, byte offset {len(more)}: the file ends here"
    with pytest.raises(errors.FileFormatError, match=says):
        read_table(write_bytes(tmp_path, "more.bin", more))
    with pytest.raises(errors.FileFormatError) as info:  # header "9 7" over 10 entries
        read_table(write_bytes(tmp_path, "less.bin", b"9" + binary[2:]))
    assert info.value.line == 1
    assert f"the header says 9 words but data goes on after entry 9, at byte {last - 1}" in str(info.value)


def test_binary_errors_name_the_entry(tmp_path):
    dup = binary_bytes(["a", "a"], [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(errors.FileFormatError, match=r"entry 2 \(byte 14\): duplicate word 'a' "
                       r"\(first at entry 1 \(byte 4\)\)"):
        read_table(write_bytes(tmp_path, "dup.bin", dup))
    with pytest.raises(errors.FileFormatError, match=r"entry 2 \(byte 14\): value 2 of 'b' is inf"):
        read_table(write_bytes(tmp_path, "inf.bin", binary_bytes(["a", "b"], [[1, 2], [3, np.inf]])))
    latin = b"2 2\n" + "é".encode("latin-1") + b" " + bytes(8) + b"b " + bytes(8)
    with pytest.raises(errors.TextDecodingError, match="byte offset 4 .in the word of entry 1"):
        read_table(write_bytes(tmp_path, "latin.bin", latin))
    with pytest.raises(errors.FileFormatError, match="line 1: expected a header 'count dim'"):
        read_table(write_bytes(tmp_path, "nohead.bin", b"a " + bytes(8)))
    with pytest.raises(errors.EmptyInputError):
        read_table(write_bytes(tmp_path, "empty.bin", b""))


@pytest.mark.parametrize(
    ("contents", "says"),
    [
        ({"keys": np.array(["a"], dtype=object), "vectors": np.ones((1, 2))}, "not a readable .npz"),
        ({"words": np.array(["a"]), "vectors": np.ones((1, 2))}, "no 1-D unicode array 'keys'"),
        ({"keys": np.array(["a", "b"]), "vectors": np.ones((3, 2))},
         r"'vectors' must be floats \(2, dim\), found float64 \(3, 2\)"),
        ({"keys": np.array(["a", "a"]), "vectors": np.ones((2, 2))},
         r"key 1: duplicate word 'a' \(first at key 0\)"),
        (None, "not a readable .npz archive"),  # a text file named .npz
    ],
)
def test_broken_npz_archives(tmp_path, contents, says):
    path = tmp_path / "t.npz"
    if contents:
        np.savez(path, **contents)
    else:
        path.write_text("a 1 2\n")
    with pytest.raises(errors.FileFormatError, match=says):
        read_table(path)


def test_damaged_gzip_is_a_format_error(tmp_path, table):
    table.save(tmp_path / "t.vec.gz")
    data = (tmp_path / "t.vec.gz").read_bytes()
    (tmp_path / "cut.vec.gz").write_bytes(data[: len(data) // 2])
    with pytest.raises(errors.FileFormatError, match="damaged or truncated gzip data"):
        read_table(tmp_path / "cut.vec.gz")


# -- writing -----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["t.txt", "t.vec.gz"])
def test_failed_write_leaves_no_file(tmp_path, table, monkeypatch, name):
    real, calls = vectors_io._format_rows, []

    def fail_on_second_chunk(block):  # the first chunk is already in the temporary file
        calls.append(block)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(block)

    monkeypatch.setattr(vectors_io, "_CHUNK", 3)
    monkeypatch.setattr(vectors_io, "_format_rows", fail_on_second_chunk)
    with pytest.raises(RuntimeError, match="disk full"):
        table.save(tmp_path / name)
    assert list(tmp_path.iterdir()) == []  # neither the file nor a temporary one


def test_failed_write_keeps_the_old_file(tmp_path, table, monkeypatch):
    path = tmp_path / "t.bin"
    table.save(path)
    before = path.read_bytes()

    def broken(f, *args):
        f.write(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(vectors_io, "_write_w2v", broken)
    with pytest.raises(OSError, match="disk full"):
        EmbeddingTable(["x"], [[1.0]]).save(path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["t.bin"]


@pytest.mark.parametrize(
    ("keys", "vectors", "name", "error", "says"),
    [
        (["new york"], [[1.0]], "t.txt", errors.InputError, "the word 'new york' is empty or holds a space"),
        (["a\nb"], [[1.0]], "t.bin", errors.InputError, "line break"),
        (["a", ""], [[1.0], [2.0]], "t.npz", errors.InputError, "the word '' is empty"),
        (["a", "b"], [[1.0], [np.nan]], "t.npz", errors.InputError, "value 1 of the vector of 'b' is nan"),
        (["a"], [[1.0]], "t.csv", errors.InputError, "cannot tell the vector file format"),
        (["a"], [[1.0]], "t.gz", errors.InputError, "cannot tell the vector file format"),
        (["a"], [[1.0]], "t.npz.gz", errors.InputError, "already a zip archive"),
        ([], np.zeros((0, 2)), "t.txt", errors.EmptyInputError, "no words"),
    ],
)
def test_write_refuses_what_cannot_be_read_back(tmp_path, keys, vectors, name, error, says):
    with pytest.raises(error, match=says):
        EmbeddingTable(keys, vectors).save(tmp_path / name)
    assert list(tmp_path.iterdir()) == []


def test_words_with_spaces_can_go_to_npz(tmp_path):
    t = EmbeddingTable(["new york", "a\nb"], [[1.0, 2.0], [3.0, 4.0]])
    t.save(tmp_path / "t.npz")
    assert_same(read_table(tmp_path / "t.npz"), t)


def test_gzip_output_is_reproducible(tmp_path, table):
    table.save(tmp_path / "a.txt.gz")
    table.save(tmp_path / "b.txt.gz")
    assert (tmp_path / "a.txt.gz").read_bytes() == (tmp_path / "b.txt.gz").read_bytes()


# -- what does not round-trip is refused on reading, with where it is ---------------------
@pytest.mark.parametrize("name", NAMES)
def test_a_vector_too_long_for_float32_arithmetic_is_refused_at_load(tmp_path, name):
    """3e38 is a float32 but its square is not: such a row loaded, then a norm or cosine
    overflowed (warnings, and 'the cosine of a zero vector'). The bound is on the row's
    length, so 1e19 in each of three places (length 1.7e19) still loads."""
    ok = np.array([[1.0, 2.0, 3.0], [1e19, 1e19, 1e19]], dtype=np.float32)
    write_table(EmbeddingTable(["a", "b"], ok), tmp_path / f"ok-{name}")
    np.testing.assert_array_equal(read_table(tmp_path / f"ok-{name}").vectors, ok)
    for row in ([3e38, 1.0, 0.0], [1.1e19, 1.1e19, 1.1e19]):
        big = np.array([[1.0, 2.0, 3.0], row], dtype=np.float32)
        path = tmp_path / name
        write_table(EmbeddingTable._checked_elsewhere(["a", "b"], big, name="x"), path)  # written as it was
        with pytest.raises(errors.FileFormatError) as err:
            read_table(path)
        message = str(err.value)
        assert f"value 1 of 'b' is {row[0]:g}, which makes its vector" in message
        assert "beyond 1.8e+19, the longest whose squared length float32 holds" in message
        assert "\n" not in message
    with pytest.raises(errors.InputError, match=r"value 1 of the vector of 'b' is 3e\+38, which makes its"):
        EmbeddingTable(["a", "b"], [[1.0, 2.0], [3e38, 0.0]])


def test_values_beyond_float32_in_a_float64_npz_are_refused(tmp_path):
    path = tmp_path / "big.npz"
    np.savez(path, keys=np.array(["a", "b"]), vectors=np.array([[1.0, 2.0], [3.0, 1e300]]),
             name=np.array("x"))
    with pytest.raises(errors.FileFormatError,
                       match=r"key 1: value 2 of 'b' is 1e\+300, beyond the float32 range"):
        read_table(path)
    with pytest.raises(errors.InputError,
                       match=r"value 1 of the vector of 'a' is -1e\+39, beyond the float32"):
        EmbeddingTable(["a"], [[-1e39]])


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("v.txt", b"2 2\nbank 1 2\nba\x00nk 3 4\n", r"line 3: the word 'ba\\x00nk' holds a NUL byte"),
        ("g.txt", b"bank 1 2\nbank\x00 3 4\n", r"line 2: the word 'bank\\x00' holds a NUL byte"),
        ("v.bin", binary_bytes(["bank", "ba\x00nk"], [[1, 2], [3, 4]]),
         r"entry 2 \(byte 17\): the word 'ba\\x00nk'"),
    ],
)
def test_words_holding_nul_are_refused_with_their_line(tmp_path, name, data, says):
    with pytest.raises(errors.FileFormatError, match=says):
        read_table(write_bytes(tmp_path, name, data), format="glove" if name.startswith("g") else None)


def test_npz_keys_holding_nul_are_refused_and_never_written(tmp_path):
    path = tmp_path / "nul.npz"
    np.savez(path, keys=np.array(["bank", "ba\x00nk"]), vectors=np.ones((2, 2), np.float32),
             name=np.array("x"))
    with pytest.raises(errors.FileFormatError, match=r"key 1: the word 'ba\\x00nk' holds a NUL byte"):
        read_table(path)
    with pytest.raises(errors.InputError, match=r"the word 'bank\\x00' holds the NUL character"):
        EmbeddingTable(["bank\x00", "bank"], np.ones((2, 2)))  # in .npz it would come back as 'bank'


def test_a_folder_is_not_no_such_file(tmp_path):
    with pytest.raises(errors.InputError, match="is a folder, not a vector file; give the file itself"):
        read_table(tmp_path)


def test_zero_dimensions_are_refused_when_read_or_built(tmp_path):
    path = tmp_path / "zero.npz"
    np.savez(path, keys=np.array(["a", "b"]), vectors=np.zeros((2, 0), np.float32), name=np.array("x"))
    with pytest.raises(errors.FileFormatError, match="'vectors' has 0 dimensions"):
        read_table(path)
    with pytest.raises(errors.DimensionError, match="the vectors have 0 dimensions"):
        EmbeddingTable(["a"], np.zeros((1, 0)))


def _peak_bytes(fn) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        fn()
    except errors.ContextLensError:
        pass
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("huge.bin", b"999999999999 3\na " + bytes(12),
         "entry 2 of 999999999999, byte offset 29: the file ends here"),
        ("wide.bin", b"1 999999999999\na " + bytes(12),
         "entry 1 of 1, byte offset 15: the word and its 3999999999996-byte vector run past"),
        ("wide.txt", b"1 999999999999\na 1 2\n",
         "line 2: the header says 999999999999 values per word but line 2 holds 2"),
    ],
)
def test_huge_declared_sizes_fail_without_allocating_them(tmp_path, name, data, says):
    path = write_bytes(tmp_path, name, data)
    with pytest.raises(errors.FileFormatError, match=says):
        read_table(path)
    assert _peak_bytes(lambda: read_table(path)) < 1 << 20


def test_an_npz_header_declaring_terabytes_is_refused_before_loading(tmp_path):
    import io
    import zipfile

    import numpy.lib.format as npy

    member = io.BytesIO()
    npy.write_array_header_1_0(member, {"descr": "<f4", "fortran_order": False, "shape": (10**9, 1000)})
    member.write(bytes(64))
    keys = io.BytesIO()
    np.save(keys, np.array(["a"]))
    path = tmp_path / "forged.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("keys.npy", keys.getvalue())
        z.writestr("vectors.npy", member.getvalue())
    with pytest.raises(errors.FileFormatError,
                       match=r"member 'vectors.npy' declares \(1000000000, 1000\) float32 "
                       r"\(4,000,000,000,000 bytes\) but holds"):
        read_table(path)
    assert _peak_bytes(lambda: read_table(path)) < 1 << 20
