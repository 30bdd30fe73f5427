"""word2vec and fastText through gensim, on a tiny two-topic corpus (fast)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from contextlens.errors import InputError, TextDecodingError, UnknownOptionError
from contextlens.static.word2vec import (
    _corpus_file,
    fasttext_model,
    train_fasttext,
    train_word2vec,
)

MONEY = ["money", "bank", "loan", "cash", "account"]
RIVER = ["river", "water", "boat", "fish", "shore"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(MONEY if k % 2 else RIVER, size=8)) for k in range(300)]
    path = tmp_path_factory.mktemp("w2v") / "topics.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("architecture", ["skipgram", "cbow"])
def test_word2vec_learns_the_two_topics(corpus, architecture):
    table = train_word2vec(corpus, dim=16, epochs=15, min_count=1, architecture=architecture,
                           sample=0, workers=1, seed=1)
    assert len(table) == 10 and table.dim == 16 and table.name == "word2vec:topics.txt"
    for word in ("bank", "river"):
        same = MONEY if word in MONEY else RIVER
        top = {w for w, _ in table.most_similar(word, k=4)}
        assert top == set(same) - {word}


def test_single_worker_runs_are_reproducible(corpus):
    a = train_word2vec(corpus, dim=8, epochs=2, min_count=1, workers=1, seed=3)
    b = train_word2vec(corpus, dim=8, epochs=2, min_count=1, workers=1, seed=3)
    np.testing.assert_array_equal(a.vectors, b.vectors)


def test_streaming_path_lower_case_and_progress(corpus):
    upper = [line.upper() for line in corpus.read_text().splitlines()]
    seen = []
    table = train_word2vec(upper, dim=8, epochs=3, min_count=1, lower=True, workers=1,
                           progress=seen.append)
    assert set(table.keys) == set(MONEY + RIVER)
    assert seen == [300, 600, 900]  # sentences trained on after each epoch


def test_which_corpora_go_to_gensims_file_reader(corpus, tmp_path):
    assert _corpus_file(corpus, False, "whitespace", "strict") == str(corpus)
    assert _corpus_file(str(corpus), True, "whitespace", "strict") is None  # lower-casing
    assert _corpus_file(corpus, False, "words", "strict") is None
    assert _corpus_file(["a b"], False, "whitespace", "strict") is None
    gz = tmp_path / "c.txt.gz"
    with gzip.open(gz, "wb") as f:
        f.write(b"a b\n")
    assert _corpus_file(gz, False, "whitespace", "strict") is None
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"a b\ncaf\xe9\n")
    with pytest.raises(TextDecodingError, match="byte offset 7"):
        _corpus_file(bad, False, "whitespace", "strict")
    assert _corpus_file(bad, False, "whitespace", "skip") is None  # streamed, bad line skipped


def test_fasttext_table_and_oov_vectors(corpus):
    table = train_fasttext(corpus, dim=8, epochs=2, min_count=1, workers=1, bucket=1000)
    assert len(table) == 10 and table.dim == 8
    model = fasttext_model(corpus, dim=8, epochs=2, min_count=1, workers=1, bucket=1000)
    assert "banks" not in model.wv.key_to_index
    assert model.wv["banks"].shape == (8,)  # built from character n-grams
    assert model.callbacks == ()


def test_bad_arguments(corpus):
    with pytest.raises(UnknownOptionError, match="skipgram, cbow"):
        train_word2vec(corpus, architecture="glove")
    with pytest.raises(InputError, match="dim must be a whole number from 1 to 10,000, got 0"):
        train_word2vec(corpus, dim=0)
    with pytest.raises(InputError, match="min_count"):
        train_word2vec(corpus, min_count=10_000, workers=1)
