"""One line rule for every reader (issue 21, item 8): a line ends at \\n, \\r\\n or a lone \\r,
never at U+2028, U+2029, \\x0b, \\x0c, \\x1c-\\x1e or \\x85 (what ``str.splitlines`` also breaks
at). Each reader of lines is run on the same lines written with each ending."""

from __future__ import annotations

import pytest

from contextlens.text import LINE_BREAKS, split_lines

INSIDE = ["\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85"]
SENTENCES = [f"the bank{c}of the river" for c in INSIDE] + ["# a comment", "", "the last bank"]


def write(path, lines, eol):
    path.write_bytes((eol.join(lines) + eol).encode("utf-8"))
    return path


def test_split_lines_is_the_rule():
    assert LINE_BREAKS == ("\r\n", "\r", "\n")
    for eol in LINE_BREAKS:
        assert split_lines(eol.join(SENTENCES) + eol) == SENTENCES
    assert "\n".join(SENTENCES).splitlines() != SENTENCES  # what str.splitlines would have done


@pytest.mark.parametrize("eol", LINE_BREAKS)
def test_sentences_pairs_words_queries_and_datasets(tmp_path, eol):
    from contextlens.analysis.ranking import read_pairs
    from contextlens.analysis.usages import read_sentences
    from contextlens.corpus.targets import read_word_list
    from contextlens.datasets._io import read_lines
    from contextlens.index.search import read_queries

    kept = [s for s in SENTENCES if s and not s.startswith("#")]
    assert read_sentences(write(tmp_path / "s.txt", SENTENCES, eol)) == kept
    assert read_lines(write(tmp_path / "d.txt", SENTENCES, eol)) == SENTENCES
    assert read_word_list(write(tmp_path / "w.txt", ["bank", "river # a comment", "spring"], eol)) == [
        "bank", "river", "spring"]
    assert read_pairs(write(tmp_path / "p.txt", ["bank river 1.5", "cup mug 2"], eol)) == [
        ("bank", "river", 1.5), ("cup", "mug", 2.0)]
    queries = read_queries(write(tmp_path / "q.txt", [f"bank\t{s}" for s in kept], eol))
    assert [q.sentence for q in queries] == kept and [q.line
                                                      for q in queries] == list(range(1, len(kept) + 1))


def test_counts_of_a_cr_only_corpus_do_not_cross_lines(tmp_path):
    from contextlens.static.cooccurrence import cooccurrence_matrix

    lf = cooccurrence_matrix(write(tmp_path / "lf.txt", ["a b", "c d"], "\n"), window=5, min_count=1)
    cr = cooccurrence_matrix(write(tmp_path / "cr.txt", ["a b", "c d"], "\r"), window=5, min_count=1)
    assert cr.vocab == lf.vocab and (cr.counts != lf.counts).nnz == 0 and cr.n_sentences == 2
    b, c = cr.vocab.index("b"), cr.vocab.index("c")
    assert cr.counts[b, c] == 0  # b ends one line, c starts the next


def test_a_file_gensim_would_read_otherwise_is_streamed(tmp_path):
    from contextlens.static.word2vec import _corpus_file, train_word2vec

    lines = ["money bank loan deposit", "river bank water shore"] * 40
    lf = write(tmp_path / "lf.txt", lines, "\n")
    cr = write(tmp_path / "cr.txt", lines, "\r")
    nbsp = write(tmp_path / "nbsp.txt", [line.replace(" ", "\u00a0", 1) for line in lines], "\n")
    assert _corpus_file(lf, False, "whitespace", "strict") == str(lf)
    assert _corpus_file(write(tmp_path / "crlf.txt", lines, "\r\n"), False, "whitespace",
                        "strict") is not None
    assert _corpus_file(cr, False, "whitespace", "strict") is None
    assert _corpus_file(nbsp, False, "whitespace", "strict") is None
    a = train_word2vec(lf, dim=4, epochs=1, min_count=1, workers=1, seed=3)
    b = train_word2vec(cr, dim=4, epochs=1, min_count=1, workers=1, seed=3)
    assert a.keys == b.keys and len(b) == 7
