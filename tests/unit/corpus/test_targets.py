"""Finding target usages in a streamed corpus: matching, ids, layouts, bad input."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contextlens.corpus.reading import ReadStats
from contextlens.corpus.targets import (
    Sentence,
    WordMatcher,
    count_words,
    find_usages,
    iter_corpus_sentences,
    read_word_list,
    usage_id,
)
from contextlens.errors import EmptyInputError, InputError, UnknownOptionError
from contextlens.index.senses import context_words, distinctive_words


def test_matching_modes():
    s = Sentence("d", 3, "Bank banks BANK bank")
    assert [u.form for u in find_usages(s, WordMatcher(["bank"], match="exact"))] == ["bank"]
    assert [u.form for u in find_usages(s, WordMatcher(["bank"], match="lower"))] == ["Bank", "BANK", "bank"]
    # the target is recorded, the form is the text as written, spans index the sentence
    u = find_usages(s, WordMatcher(["BANK"], match="lower"))[1]
    assert (u.word, u.form, s.text[u.start:u.end]) == ("bank", "BANK", "BANK")


def test_lemma_matching_uses_wordnet_morphy(data_dir):
    from contextlens.datasets.wordnet import wordnet

    m = WordMatcher(["bank", "run", "mouse"], match="lemma", wordnet=wordnet(data_dir))
    forms = [u.form for u in find_usages(Sentence("d", 0, "Banks ran; mice run, a runner banked."), m)]
    assert forms == ["Banks", "ran", "mice", "run", "banked"]
    assert m("runner") is None


def test_lemma_needs_wordnet_and_bad_options_are_named():
    with pytest.raises(InputError, match="WordNet"):
        WordMatcher(["bank"], match="lemma")
    with pytest.raises(UnknownOptionError, match="exact, lower, lemma"):
        WordMatcher(["bank"], match="stem")
    with pytest.raises(EmptyInputError):
        WordMatcher(["", "  "])


def test_usage_ids_are_stable_and_distinct():
    a = usage_id("doc.txt", 4, 10, 14, "bank")
    assert a == usage_id("doc.txt", 4, 10, 14, "bank") and len(a) == 16
    others = {usage_id("doc.txt", 5, 10, 14, "bank"), usage_id("doc2.txt", 4, 10, 14, "bank"),
              usage_id("doc.txt", 4, 11, 14, "bank"), usage_id("doc.txt", 4, 10, 14, "banks")}
    assert a not in others and len(others) == 4


@given(st.lists(st.sampled_from(["bank", "river", "Bank", "money", "."]), min_size=1, max_size=12))
def test_every_target_token_is_found_once(tokens):
    s = Sentence("d", 0, " ".join(tokens))
    found = find_usages(s, WordMatcher(["bank"], match="lower"))
    assert len(found) == sum(t.lower() == "bank" for t in tokens)
    assert len({u.usage_id for u in found}) == len(found)


def test_stream_numbers_sentences_per_document(tmp_path):
    (tmp_path / "a.txt").write_text("one bank\n\ntwo\n")
    with gzip.open(tmp_path / "b.txt.gz", "wt") as f:
        f.write("three\nfour bank\n")
    (tmp_path / "c.txt").write_text("")  # an empty file is skipped, not fatal
    got = [(s.doc.rsplit("/", 1)[1], s.number, s.text) for s in iter_corpus_sentences(tmp_path)]
    assert got == [("a.txt", 0, "one bank"), ("a.txt", 1, "two"), ("b.txt.gz", 0, "three"),
                   ("b.txt.gz", 1, "four bank")]


def test_non_utf8_lines_are_skipped_counted_and_located(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"good bank\nbad \xff\xfe bank\nalso good\n")
    stats = ReadStats()
    got = [s.text for s in iter_corpus_sentences(path, stats=stats)]
    assert got == ["good bank", "also good"]
    assert stats.n_skipped == 1 and stats.skipped == [(str(path), 2)]


def test_empty_corpus_and_free_text(tmp_path):
    (tmp_path / "e.txt").write_text("\n\n")
    with pytest.raises(EmptyInputError, match="no sentence"):
        list(iter_corpus_sentences(tmp_path / "e.txt"))
    text = ["Dr. Smith sat by the bank. It rained!", "Then it stopped.", "", "New para."]
    assert [(s.number, s.text) for s in iter_corpus_sentences(text, layout="text")] == [
        (0, "Dr. Smith sat by the bank."), (1, "It rained!"), (2, "Then it stopped."), (3, "New para.")]


def test_word_lists_and_counts(tmp_path):
    f = tmp_path / "w.txt"
    f.write_text("bank, spring\n# a comment\nriver  # trailing\n")
    assert read_word_list(f) == ["bank", "spring", "river"]
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(EmptyInputError):
        read_word_list(tmp_path / "empty.txt")
    sents = [Sentence("d", i, t) for i, t in enumerate(["The bank, the river.", "A bank", "the end 42"])]
    assert count_words(sents, min_count=2) == ["the", "bank"]


def test_context_words_and_distinctive_words():
    assert context_words("We sat on the bank of the river .", 14, 18, window=5) == ["sat", "river"]
    assert context_words("no target here", 0, 1) == []
    contexts = [["loan", "money"], ["money", "rate"], ["money"], ["river", "water"], ["river"], ["mud"]]
    out = distinctive_words(contexts, [0, 0, 0, 1, 1, 1], top=3)
    assert [w for w, _, _ in out[0]] == ["money"] and [w for w, _, _ in out[1]] == ["river"]
    # LMI by hand: n(money, c0) = 3, p(money | c0) = 3/5, p(money) = 3/9 -> 3 * log(9/5)
    assert out[0][0][2] == pytest.approx(3 * 0.5877866649, abs=1e-3)


def test_a_file_given_twice_is_refused(tmp_path):
    (tmp_path / "a.txt").write_text("bank\n")
    with pytest.raises(InputError, match="given twice"):
        iter_corpus_sentences([tmp_path / "a.txt", tmp_path / "a.txt"])
