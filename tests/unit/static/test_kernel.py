"""The compiled co-occurrence kernel gives the numpy path's counts, and the plain loop's.

Tokens are checked against ``str.split`` and :func:`contextlens.text.words_of` (every
white-space code point, random unicode, random ASCII punctuation); counts against the
numpy engine and the plain loop on random corpora, with every option; growth of every
table, int32 -> int64 widening and the cache location against forced small sizes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextlens.errors import InputError, MissingDependencyError
from contextlens.static import cooccurrence as co_module
from contextlens.static.cooccurrence import cooccurrence_matrix
from contextlens.text import words_of
from tests.missing import need
from tests.unit.static.test_cooccurrence import plain_loop

numba = need("numba", "pip install -e '.[fast]'")
kernel = need("contextlens.static.kernel")
from contextlens.static.kernel import jit as jit_module  # noqa: E402
from contextlens.static.kernel import pairs as pairs_module  # noqa: E402

SPACES = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace() and c != 10]


def lines_split(text, lower=False):
    text = text.lower() if lower else text
    return [t for t in (line.split() for line in text.split("\n")) if t]


def assert_same(a, b, exact=True):
    assert a.vocab == b.vocab
    assert a.word_counts.tolist() == b.word_counts.tolist()
    assert (a.n_tokens, a.n_sentences) == (b.n_tokens, b.n_sentences)
    assert a.counts.dtype == b.counts.dtype and a.counts.has_sorted_indices
    if exact:
        assert (a.counts != b.counts).nnz == 0
    else:  # harmonic: the same terms added in another order
        np.testing.assert_allclose(a.counts.toarray(), b.counts.toarray(), rtol=1e-12)


def test_every_white_space_code_point_splits_as_str_split():
    assert len(SPACES) == 28  # str.isspace: 29 code points, "\n" ends a line instead
    text = "a" + "b".join(SPACES) + "c\nd\u200be\xa0\u3000f"
    assert kernel.kernel_tokens(text) == lines_split(text)
    text = "x\u2000\u200a\u200b\u2028\u2029y\u205f\u180ez"  # U+200B, U+180E: not white space
    assert kernel.kernel_tokens(text) == lines_split(text) == [["x", "\u200b", "y", "\u180ez"]]


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab é\n\tü€😀\u0301\ud800") + SPACES[:14]) | st.characters(),
               max_size=60),
       st.booleans())
def test_whitespace_tokens_equal_str_split(text, lower):
    assert kernel.kernel_tokens(text, lower=lower) == lines_split(text, lower)


ASCII = st.text(alphabet=st.sampled_from(list("ab_Z09'-.,:/!?( \t\x1c\x0b\x00\x7f\n")), max_size=40)


@settings(max_examples=100, deadline=None)
@given(ASCII, st.booleans())
def test_ascii_words_equal_text_tokenize(text, lower):
    expected = [t for t in (words_of(line, lower=lower) for line in text.split("\n")) if t]
    assert kernel.kernel_tokens(text, tokenizer="words", lower=lower) == expected


def test_words_tokenizer_on_non_ascii_blocks_goes_through_text_tokenize():
    text = "Über-cool café's 3,5 ☕️ \u212a\nİstanbul — naïve"
    expected = [words_of(line.lower()) for line in text.lower().split("\n")]
    assert kernel.kernel_tokens(text, tokenizer="words", lower=True) == expected
    assert kernel.kernel_tokens("\u212aing's", tokenizer="words", lower=True) == [["king's"]]


WORDS = ["a", "b", "c", "dd", "é", "ß", "Ab", "A", "x-y", "1,2", "😀", "n't"]


@settings(max_examples=40, deadline=None)
@given(
    lines=st.lists(st.lists(st.sampled_from(WORDS), max_size=12), min_size=1, max_size=14),
    window=st.integers(1, 10),
    weighting=st.sampled_from(["none", "harmonic"]),
    min_count=st.integers(1, 3),
    max_vocab=st.none() | st.integers(1, 6),
    vocab_order=st.sampled_from(["frequency", "alphabetical"]),
    tokenizer=st.sampled_from(["whitespace", "words"]),
    lower=st.booleans(),
    sep=st.sampled_from([" ", "  ", "\t", "\u3000 "]),
)
def test_kernel_equals_numpy_engine_and_plain_loop(lines, window, weighting, min_count, max_vocab,
                                                   vocab_order, tokenizer, lower, sep):
    corpus = [sep.join(line) for line in lines]
    if not any(s.strip() for s in corpus):
        corpus.append("a")
    kw = dict(window=window, weighting=weighting, min_count=min_count, max_vocab=max_vocab,
              vocab_order=vocab_order, tokenizer=tokenizer, lower=lower)
    try:
        ours = cooccurrence_matrix(corpus, engine="numba", **kw)
    except InputError as exc:
        with pytest.raises(type(exc), match="min_count"):
            cooccurrence_matrix(corpus, engine="numpy", **kw)
        return
    assert_same(ours, cooccurrence_matrix(corpus, engine="numpy", **kw), exact=weighting == "none")
    split = (lambda s: words_of(s, lower=lower)) if tokenizer == "words" else (
        lambda s: (s.lower() if lower else s).split())
    expected = plain_loop([split(s) for s in corpus], window, weighting, set(ours.vocab))
    index = ours.key_to_index
    dense = np.zeros((len(ours), len(ours)))
    for (a, b), x in expected.items():
        dense[index[a], index[b]] = x
    np.testing.assert_allclose(ours.counts.toarray(), dense, rtol=1e-12)


def test_every_table_grows_and_blocks_split_anywhere(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    words = [f"w{i}é" * (1 + i % 7) for i in range(300)]
    lines = [" ".join(rng.choice(words, size=rng.integers(0, 15))) for _ in range(600)]
    path = tmp_path / "c.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for weighting in ("none", "harmonic"):
        whole = cooccurrence_matrix(path, window=4, weighting=weighting, min_count=2, engine="numpy")
        with monkeypatch.context() as m:
            m.setattr("contextlens.corpus.reading.BLOCK_BYTES", 97)
            m.setattr(kernel, "_WORD_SLOTS", 2)  # word arrays, slot table and pool all grow
            m.setattr(kernel, "_PAIR_SLOTS", 2 * pairs_module.BATCH)  # the pair table grows
            m.setattr(kernel, "_DENSE_CELLS", 10)  # a 3-word dense triangle; the rest hashed
            m.setattr(kernel, "_INT32_LIMIT", 1000)  # raw counts widen to int64 midway
            pieces = cooccurrence_matrix(path, window=4, weighting=weighting, min_count=2, engine="numba")
        assert_same(pieces, whole, exact=weighting == "none")


def test_counts_are_int32_until_they_might_overflow(monkeypatch):
    counter = kernel.KernelCounter(2, harmonic=False)
    counter.add_block("a b a b\n", False, "whitespace")
    assert counter._vals.dtype == np.int32 and counter._dense.dtype == np.int32
    monkeypatch.setattr(kernel, "_INT32_LIMIT", 10)
    counter.add_block("a b a b a b\n", False, "whitespace")
    assert counter._vals.dtype == np.int64 and counter.weights.dtype == np.int64
    m = counter.matrix(np.array([0, 1]), np.int64)  # rows: a, b
    # a-b: 3 + 5 pairs at distance 1; a-a and b-b: 1 + 2 pairs at distance 2, twice on the diagonal
    assert m.toarray().tolist() == [[6, 8], [8, 6]]


def test_compiled_code_is_cached_in_our_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(jit_module.numba_config, "CACHE_DIR", "")  # as when NUMBA_CACHE_DIR is unset
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))

    def plus_one(x):
        return x + 1

    f = jit_module.jit(plus_one)
    assert f(1) == 2 and str(f.stats.cache_path).startswith(str(tmp_path / "numba"))
    assert list((tmp_path / "numba").rglob("*plus_one*.nbi"))
    monkeypatch.setattr(jit_module.numba_config, "CACHE_DIR", str(tmp_path / "mine"))  # NUMBA_CACHE_DIR wins
    assert str(jit_module.jit(plus_one).stats.cache_path).startswith(str(tmp_path / "mine"))
    assert jit_module.numba_config.CACHE_DIR == str(tmp_path / "mine")  # left as it was


def test_an_unwritable_cache_dir_falls_back_to_numba_s_own_place(monkeypatch, tmp_path):
    monkeypatch.setattr(jit_module.numba_config, "CACHE_DIR", "")

    def no_cache_dir(*parts):
        raise PermissionError("read-only")

    monkeypatch.setattr(jit_module, "cache_dir", no_cache_dir)

    def plus_two(x):
        return x + 2

    f = jit_module.jit(plus_two)
    assert f(1) == 3 and f.stats.cache_path and "contextlens" not in str(f.stats.cache_path)


def test_engine_choice_and_fallback(monkeypatch, caplog):
    monkeypatch.setattr(co_module, "_KERNEL_FAILURE", [])
    monkeypatch.setitem(sys.modules, "contextlens.static.kernel", None)  # numba missing
    with pytest.raises(MissingDependencyError, match=r"pip install 'contextlens\[fast\]'"):
        cooccurrence_matrix(["a b"], engine="numba")
    assert cooccurrence_matrix(["a b a"], window=1).counts.toarray().tolist() == [[0, 2], [2, 0]]
    with pytest.raises(MissingDependencyError):  # known now: not tried again
        cooccurrence_matrix(["a b"], engine="numba")
    with pytest.raises(InputError, match="valid values: auto, numba, numpy"):
        cooccurrence_matrix(["a b"], engine="c")


def test_a_kernel_that_fails_to_load_falls_back_with_a_warning(monkeypatch, caplog):
    monkeypatch.setattr(co_module, "_KERNEL_FAILURE", [])

    class Broken:
        def __getattr__(self, name):
            raise RuntimeError("LLVM says no")

    monkeypatch.setitem(sys.modules, "contextlens.static.kernel", Broken())
    co = cooccurrence_matrix(["a b a"], window=1)
    assert co.counts.toarray().tolist() == [[0, 2], [2, 0]]
    assert "LLVM says no" in caplog.text


@pytest.mark.data
@pytest.mark.parametrize("kw", [dict(window=5), dict(window=10, weighting="harmonic", lower=True,
                                                       min_count=5, vocab_order="alphabetical")])
def test_brown_equals_the_numpy_engine(brown, kw, tmp_path):
    part = tmp_path / "brown-part.txt"  # a quarter of Brown: every kind of line, a quarter of the time
    with open(brown, encoding="utf-8") as f:
        part.write_text("".join(line for i, line in enumerate(f) if i % 4 == 0), encoding="utf-8")
    assert_same(cooccurrence_matrix(part, engine="numba", **kw),
                cooccurrence_matrix(part, engine="numpy", **kw), exact=kw.get("weighting", "none") == "none")



@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "\x00", "\x01", "é", "😀", "\ud800", "\uffff", "abcdefg",
                                          "\U0010ffff"]), min_size=1, max_size=5).map("".join),
                unique=True, min_size=1, max_size=40))
def test_alphabetical_order_is_sorted_s(words):
    counter = kernel.KernelCounter(1, False)
    counter.add_block(" ".join(words), False, "whitespace")
    seen = counter.words()
    assert [seen[i] for i in counter.alphabetical(np.arange(len(seen)))] == sorted(words)


def test_the_kernel_folder_is_held_and_old_ones_go_past_the_bound(tmp_path, monkeypatch):
    from contextlens.disk_cache import DiskCache

    monkeypatch.setattr(jit_module.numba_config, "CACHE_DIR", "")
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))
    monkeypatch.setattr(jit_module, "_held", {})
    stale = tmp_path / "numba" / "kernel_0123456789abcdef"  # an install that is gone
    stale.mkdir(parents=True)
    (stale / "old.nbc").write_bytes(b"x" * 1000)
    os.utime(stale, (1, 1))
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_NUMBA", "0")

    def plus_three(x):
        return x + 3

    f = jit_module.jit(plus_three)
    assert f(1) == 4
    cache = DiskCache("numba")
    folder = Path(f.stats.cache_path)
    assert [e.path for e in cache.entries()] == [folder] and cache.in_use(folder)
    assert cache.clear().kept_in_use == (folder.name,)
