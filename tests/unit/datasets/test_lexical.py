"""Word-similarity and analogy files in each published format, and gensim reading the
same pairs from :func:`gensim_pairs_file` as :func:`load_similarity` gives."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from contextlens.datasets import (
    SIMILARITY_FILES,
    DatasetMissingError,
    available_similarity,
    gensim_pairs_file,
    load_analogies,
    load_similarity,
)
from contextlens.errors import EmptyInputError, FileFormatError, TextDecodingError


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    return path


def triples(pairs):
    return [(p.word1, p.word2, p.score) for p in pairs]


FORMATS = {
    # WordSim-353 combined.tab: header, CRLF line ends
    "combined.tab": ("Word 1\tWord 2\tHuman (mean)\r\nlove\tsex\t6.77\r\ntiger\tcat\t7.35\r\n",
                     [("love", "sex", 6.77), ("tiger", "cat", 7.35)]),
    "combined.csv": ("Word 1,Word 2,Human (mean)\r\nlove,sex,6.77\r\ntiger,cat,7.35\r\n",
                     [("love", "sex", 6.77), ("tiger", "cat", 7.35)]),
    # set1.tab: the individual ratings after the mean, and a trailing tab
    "set1.tab": ("Word 1\tWord 2\tHuman (mean)\t1\t2\t\r\nlove\tsex\t6.77\t9\t6\t\r\n",
                 [("love", "sex", 6.77)]),
    "MEN_dataset_lemma_form.dev": ("berry-n seed-n 37.000000\nrun-v jog-v 45.000000\nbig-j large-j 48\n",
                                   [("berry", "seed", 37.0), ("run", "jog", 45.0), ("big", "large", 48.0)]),
    "MEN_dataset_natural_form_full": ("sun sunlight 50.000000\nx-ray scan 30\n",
                                      [("sun", "sunlight", 50.0), ("x-ray", "scan", 30.0)]),
    "SimLex-999.txt": ("word1\tword2\tPOS\tSimLex999\tconc(w1)\tconc(w2)\tconcQ\tAssoc(USF)\tSimAssoc333\t"
                       "SD(SimLex)\nold\tnew\tA\t1.58\t2.72\t2.81\t2\t7.25\t1\t0.41\n",
                       [("old", "new", 1.58)]),
    "SimVerb-3500.txt": ("take\tremove\tV\t6.81\tSYNONYMS\nshare\tkeep\tV\t0.5\tANTONYMS\n",
                         [("take", "remove", 6.81), ("share", "keep", 0.5)]),
    "rw.txt": ("squishing\tsquirt\t5.88\t7\t7\t6\t1\t4\t6\t7\t7\t7\t7\n", [("squishing", "squirt", 5.88)]),
    "EN-YP-130.txt": ("# comment\nbrag boast 4.000\n\nconcoct devise 4.000\n",
                      [("brag", "boast", 4.0), ("concoct", "devise", 4.0)]),
    "EN-RG-65.txt": ("gem\tjewel\t3.94\nmidday\tnoon\t3.94",
                     [("gem", "jewel", 3.94), ("midday", "noon", 3.94)]),
}


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_load_similarity_formats(tmp_path, name):
    text, expected = FORMATS[name]
    assert triples(load_similarity(write(tmp_path / name, text))) == expected


@pytest.mark.parametrize("text, line", [
    ("gem\tjewel\t3.94\nmidday\tnoon\n", 2),
    ("gem\tjewel\t3.94\nmidday\tnoon\thigh\n", 2),
    ("Word 1\tWord 2\tHuman (mean)\nlove\tsex\t6.77\n\ntiger\tcat\n", 4),
])
def test_load_similarity_malformed_line(tmp_path, text, line):
    with pytest.raises(FileFormatError, match=f"line {line}: expected word1, word2 and a numeric score") as e:
        load_similarity(write(tmp_path / "pairs.txt", text))
    assert e.value.line == line


def test_load_similarity_empty_missing_and_not_utf8(tmp_path):
    with pytest.raises(EmptyInputError):
        load_similarity(write(tmp_path / "empty.txt", "# only a comment\n\n"))
    with pytest.raises(EmptyInputError, match="header but no word pair"):
        load_similarity(write(tmp_path / "header.tab", "Word 1\tWord 2\tHuman (mean)\n"))
    with pytest.raises(DatasetMissingError, match="nothing.txt"):
        load_similarity(tmp_path / "nothing.txt")
    with pytest.raises(TextDecodingError, match="byte offset 3"):
        load_similarity(write(tmp_path / "latin1.txt", b"caf\xe9\tbar\t1.0\n"))


def test_available_similarity(tmp_path):
    write(tmp_path / SIMILARITY_FILES["rg65"], "gem\tjewel\t3.94\n")
    assert available_similarity(tmp_path) == {"rg65": tmp_path / SIMILARITY_FILES["rg65"]}
    assert SIMILARITY_FILES["simlex999"] == "similarity/simlex999/SimLex-999.txt"


@pytest.mark.parametrize("name, same", [("combined.tab", True), ("EN-RG-65.txt", True),
                                        ("MEN_dataset_lemma_form.dev", False), ("EN-YP-130.txt", False),
                                        ("SimLex-999.txt", False), ("combined.csv", False)])
def test_gensim_pairs_file_is_the_original_only_when_gensim_reads_it(tmp_path, name, same):
    src = write(tmp_path / "data" / name, FORMATS[name][0])
    out = gensim_pairs_file(src, tmp_path / "gensim")
    assert (out == src) is same
    if not same:
        assert out.parent == tmp_path / "gensim" and out.read_text().startswith("#")
        assert gensim_pairs_file(src, tmp_path / "gensim") == out  # same name on a second call
        assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temp file left


def test_gensim_reads_exactly_the_loaded_pairs(tmp_path, caplog):
    """gensim's evaluate_word_pairs on the gensim file gives the Spearman of the loaded pairs."""
    from gensim.models import KeyedVectors
    from scipy import stats

    words = ["berry", "seed", "run", "jog", "big", "large", "sun", "moon"]
    kv = KeyedVectors(vector_size=4)
    kv.add_vectors(words, np.random.default_rng(0).normal(size=(len(words), 4)))
    text = "berry-n seed-n 37.0\nrun-v jog-v 45.0\nbig-j large-j 48\nsun-n moon-n 20\nberry-n zzz-n 3\n"
    src = write(tmp_path / "MEN_dataset_lemma_form.dev", text)
    pairs = load_similarity(src)
    with caplog.at_level(logging.INFO, logger="gensim"):
        pearson, spearman, oov = kv.evaluate_word_pairs(gensim_pairs_file(src, tmp_path / "g"))
    known = [p for p in pairs if p.word1 in kv.key_to_index and p.word2 in kv.key_to_index]
    ours = stats.spearmanr([p.score for p in known], [kv.similarity(p.word1, p.word2) for p in known])[0]
    assert len(known) == 4 and spearman.statistic == pytest.approx(ours, abs=1e-12)
    assert oov == pytest.approx(20.0)
    assert "Skipping invalid line" not in caplog.text  # gensim parsed every line of the file


# --- analogies -------------------------------------------------------------------------

GOOGLE = ": capital-common-countries\nAthens Greece Baghdad Iraq\nAthens Greece Bangkok Thailand\n" \
         ": family\nboy girl brother sister\n"


def test_load_analogies(tmp_path):
    sections = load_analogies(write(tmp_path / "questions-words.txt", GOOGLE))
    assert [s.name for s in sections] == ["capital-common-countries", "family"]
    assert sections[0].questions[1] == ("Athens", "Greece", "Bangkok", "Thailand")
    assert sum(len(s.questions) for s in sections) == 3


@pytest.mark.parametrize("text, problem", [
    (GOOGLE + "boy girl brother\n", "line 6: expected a question of 4 words"),
    ("Athens Greece Baghdad Iraq\n", "line 1: a question before the first"),
    (GOOGLE + ": empty\n", "line 6: section 'empty' has no question"),
    (":\nboy girl brother sister\n", "line 1: a section header needs a name"),
])
def test_load_analogies_malformed(tmp_path, text, problem):
    with pytest.raises(FileFormatError, match=problem):
        load_analogies(write(tmp_path / "q.txt", text))


def test_load_analogies_missing_and_empty(tmp_path):
    with pytest.raises(DatasetMissingError, match="contextlens data fetch analogy"):
        load_analogies(tmp_path / "analogy/questions-words.txt")
    with pytest.raises(EmptyInputError):
        load_analogies(write(tmp_path / "q.txt", "\n"))
