"""Corpus streaming: files, .gz, directories, lists, in-memory text; UTF-8 errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from contextlens.corpus.reading import ReadStats, SentenceStream, iter_lines, iter_sentences, iter_text_blocks
from contextlens.errors import (
    EmptyInputError,
    FileFormatError,
    InputError,
    TextDecodingError,
    UnknownOptionError,
)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_file_gz_directory_and_list_give_the_same_lines(tmp_path):
    plain = write(tmp_path / "a.txt", b"one two\r\nthree\n\nfour")
    gz = tmp_path / "b.txt.gz"
    with gzip.open(gz, "wb") as f:
        f.write(b"five six\n")
    assert list(iter_lines(plain)) == ["one two", "three", "", "four"]
    assert list(iter_lines(gz)) == ["five six"]
    both = ["one two", "three", "", "four", "five six"]
    assert list(iter_lines([plain, gz])) == both
    assert list(iter_lines([str(plain), str(gz)])) == both  # strings naming files are paths too
    assert list(iter_lines(tmp_path)) == both  # sorted: a.txt before b.txt.gz


def test_directory_is_recursive_sorted_and_skips_hidden_and_other_files(tmp_path):
    write(tmp_path / "z" / "c.txt", b"c\n")
    write(tmp_path / "b", b"b\n")  # no suffix: read
    write(tmp_path / "a.txt", b"a\n")
    write(tmp_path / ".hidden.txt", b"hidden\n")
    write(tmp_path / ".git" / "x.txt", b"git\n")
    write(tmp_path / "notes.md", b"markdown\n")
    write(tmp_path / "vectors.npy", b"\x93NUMPY")
    stats = ReadStats()
    assert list(iter_lines(tmp_path, stats=stats)) == ["a", "b", "c"]
    assert [Path(f).name for f in stats.files] == ["a.txt", "b", "c.txt"]


def test_in_memory_strings_and_newlines_inside_them():
    assert list(iter_lines(["a b", "c\nd"])) == ["a b", "c", "d"]
    assert list(iter_lines(line for line in ["x", "y"])) == ["x", "y"]  # a generator, read once


def test_sentences_lower_and_words_tokenizer():
    lines = ["The Bank, didn't it?", "   ", "RIVER bank"]
    assert list(iter_sentences(lines)) == [["The", "Bank,", "didn't", "it?"], ["RIVER", "bank"]]
    assert list(iter_sentences(lines, lower=True, tokenizer="words")) == [
        ["the", "bank", ",", "didn't", "it", "?"], ["river", "bank"]]


def test_unicode_white_space_separates_tokens_but_only_newline_ends_a_line():
    assert list(iter_sentences(["a\u00a0b\x0bc"])) == [["a", "b", "c"]]


def test_bom_is_dropped(tmp_path):
    path = write(tmp_path / "bom.txt", "\ufeffword here\n".encode())
    assert list(iter_sentences(path)) == [["word", "here"]]


def test_bad_utf8_strict_names_file_offset_and_line(tmp_path):
    path = write(tmp_path / "latin.txt", b"good line\ncaf\xe9 au lait\nmore\n")
    with pytest.raises(TextDecodingError) as err:
        list(iter_lines(path))
    assert err.value.path == str(path) and err.value.offset == 13
    assert "line 2" in str(err.value) and "errors='skip'" in str(err.value)


def test_bad_utf8_in_a_later_block_gets_the_absolute_offset(tmp_path):
    good = b"x" * 99 + b"\n"
    path = write(tmp_path / "big.txt", good * 30 + b"\xff\n")
    blocks = iter_text_blocks(path, block_bytes=256)
    with pytest.raises(TextDecodingError) as err:
        list(blocks)
    assert err.value.offset == 3000 and "line 31" in str(err.value)


def test_bad_utf8_skip_counts_and_lists_lines(tmp_path, caplog):
    path = write(tmp_path / "latin.txt", b"good\ncaf\xe9\nfine\n\xff\xfe\nend")
    stats = ReadStats()
    assert list(iter_lines(path, errors="skip", stats=stats)) == ["good", "fine", "end"]
    assert stats.n_skipped == 2 and stats.skipped == [(str(path), 2), (str(path), 4)]
    assert "skipped 2 line(s)" in caplog.text


def test_gz_offset_is_in_the_decompressed_text(tmp_path):
    path = tmp_path / "bad.txt.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"ok\n\xe9\n")
    with pytest.raises(TextDecodingError, match="decompressed") as err:
        list(iter_lines(path))
    assert err.value.offset == 3


def test_not_gzip_is_a_format_error(tmp_path):
    path = write(tmp_path / "fake.txt.gz", b"plain text\n")
    with pytest.raises(InputError, match="gzip"):
        list(iter_lines(path))


@pytest.mark.parametrize("data", [b"", b"\n\n  \n"])
def test_empty_corpus_names_the_path(tmp_path, data):
    path = write(tmp_path / "empty.txt", data)
    with pytest.raises(EmptyInputError, match="empty.txt"):
        list(iter_sentences(path))


def test_all_lines_skipped_is_empty_and_says_why(tmp_path):
    path = write(tmp_path / "all_bad.txt", b"\xff\n\xfe\n")
    with pytest.raises(EmptyInputError, match="2 line"):
        list(iter_lines(path, errors="skip"))


def test_missing_paths_fail_before_reading(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        iter_lines(tmp_path / "nope.txt")  # raised at the call, not on first next()
    with pytest.raises(InputError, match="no such file"):
        iter_lines([tmp_path / "nope.txt"])
    with pytest.raises(InputError, match="no such file"):
        iter_lines(["missing/corpus.txt"])  # looks like a file name: not read as text
    with pytest.raises(EmptyInputError, match="no text files"):
        iter_lines(tmp_path)


def test_a_list_mixing_files_and_text_is_refused(tmp_path):
    path = write(tmp_path / "a.txt", b"a\n")
    with pytest.raises(InputError, match="mixes file names"):
        iter_lines([str(path), "a sentence here"])


def test_bad_options_and_items():
    with pytest.raises(UnknownOptionError, match="strict, skip"):
        iter_lines(["a"], errors="ignore")
    with pytest.raises(UnknownOptionError, match="whitespace, words"):
        iter_sentences(["a"], tokenizer="bpe")
    with pytest.raises(InputError, match="item 1 is a list"):
        list(iter_lines(["a", ["b"]]))
    with pytest.raises(InputError, match="not int"):
        iter_lines(42)


def test_sentence_stream_restarts_and_refuses_one_shot_iterators(tmp_path):
    path = write(tmp_path / "c.txt", b"a b\nc\n")
    stream = SentenceStream(path, lower=True)
    assert list(stream) == list(stream) == [["a", "b"], ["c"]]
    assert stream.stats.n_lines == 2
    with pytest.raises(InputError, match="one-shot"):
        SentenceStream(iter(["a"]))


@pytest.mark.data
def test_abc_corpus_has_27_latin1_lines(data_dir):
    path = data_dir / "corpora" / "abc_plain.txt"
    with pytest.raises(TextDecodingError) as err:
        for _ in iter_lines(path):
            pass
    assert err.value.offset == 1891097 and "line 18011" in str(err.value)
    stats = ReadStats()
    n = sum(1 for _ in iter_lines(path, errors="skip", stats=stats))
    assert stats.n_skipped == 27 and n == stats.n_lines
    assert stats.skipped[:2] == [(str(path), 18011), (str(path), 18012)]


def test_nul_bytes_name_the_line_or_are_skipped(tmp_path):
    path = write(tmp_path / "c.txt", b"the bank\nthe bank\x00 is\nbank\x00 again\nriver\n")
    with pytest.raises(FileFormatError) as info:
        list(iter_sentences(path))
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert "a NUL byte (\\x00) at byte offset 17: the file is damaged or not text" in str(info.value)
    stats = ReadStats()
    assert list(iter_sentences(path, errors="skip", stats=stats)) == [["the", "bank"], ["river"]]
    assert stats.n_skipped == 2 and stats.skipped == [(str(path), 2), (str(path), 3)]
    with pytest.raises(InputError, match=r"in-memory corpus item 1 holds the NUL character"):
        list(iter_sentences(["a b", "bank\x00"]))
    assert list(iter_sentences(["a b", "bank\x00"], errors="skip")) == [["a", "b"]]


def test_a_bad_byte_before_a_nul_is_reported_first(tmp_path):
    path = write(tmp_path / "c.txt", b"caf\xe9\nbank\x00\n")
    with pytest.raises(TextDecodingError, match="byte offset 3"):
        list(iter_lines(path))


def test_a_corpus_with_nul_never_gives_a_table_whose_keys_collapse(tmp_path):
    from contextlens.static.build import build_table
    from contextlens.vectors import EmbeddingTable

    path = write(tmp_path / "c.txt", b"the bank\x00 is here\nthe bank is here\nbank\x00 again\n")
    with pytest.raises(FileFormatError, match="line 1: a NUL byte"):
        build_table(path, "counts", min_count=1)
    table = build_table(path, "counts", min_count=1, errors="skip")
    table.save(tmp_path / "t.npz")
    assert EmbeddingTable.load(tmp_path / "t.npz").keys == table.keys == ("bank", "here", "is", "the")


# -- the one line rule: \n, \r\n or a lone \r end a line; nothing else does -------------------
LINES = ["the bank", "a river\u2028bank", "form\x0cfeed", "sep\x1c\x1d\x1earated", "next\x85line", "", "end"]


@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("block_bytes", [None, 5, 7])
def test_every_line_ending_gives_the_same_lines_whatever_the_blocks(tmp_path, eol, block_bytes):
    path = write(tmp_path / "c.txt", eol.join(LINES).encode() + eol.encode())
    stats = ReadStats()
    blocks = list(iter_text_blocks(path, block_bytes=block_bytes, stats=stats))
    assert "".join(blocks).split("\n")[:-1] == LINES and stats.n_lines == len(LINES)
    assert list(iter_lines(path)) == LINES
    assert list(iter_lines([eol.join(LINES)])) == LINES  # in memory, a string holding breaks


def test_a_cr_only_corpus_is_one_sentence_per_line(tmp_path):
    path = write(tmp_path / "mac.txt", b"the bank lends\rthe river bank\r\rwe sat")
    assert list(iter_sentences(path)) == [["the", "bank", "lends"], ["the", "river", "bank"], ["we", "sat"]]


def test_a_crlf_split_between_two_reads_is_one_break(tmp_path):
    path = write(tmp_path / "c.txt", b"abc\r\ndef\r\n\r\nghi")
    assert list(iter_lines(path)) == ["abc", "def", "", "ghi"]
    for size in range(1, 12):  # the \r and the \n of a break land in different reads
        assert "".join(iter_text_blocks(path, block_bytes=size)) == "abc\ndef\n\nghi"


def test_line_numbers_of_bad_bytes_count_cr_breaks(tmp_path):
    path = write(tmp_path / "c.txt", b"one\rtwo\r\nthree\rcaf\xe9\rfive\x00\r")
    with pytest.raises(TextDecodingError, match="line 4"):
        list(iter_lines(path))
    stats = ReadStats()
    assert list(iter_lines(path, errors="skip", stats=stats)) == ["one", "two", "three"]
    assert stats.skipped == [(str(path), 4), (str(path), 5)]
    nul = write(tmp_path / "n.txt", b"one\rtwo\r\nbank\x00\r")
    with pytest.raises(FileFormatError) as info:
        list(iter_lines(nul))
    assert info.value.line == 3


def test_a_file_that_cannot_be_read_names_itself():
    with pytest.raises(InputError, match=r"^/proc/self/mem: cannot be read \(Input/output error\)"):
        list(iter_lines("/proc/self/mem"))
