"""A fastText table composes words it lacks from its character n-grams, as gensim's model
does, wherever a word is looked up, and keeps its n-grams through an .npz."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

need("gensim")
from gensim.models.fasttext import compute_ngrams_bytes, ft_hash_bytes  # noqa: E402

from contextlens.encoders.static import StaticEncoder  # noqa: E402
from contextlens.errors import UnknownWordError  # noqa: E402
from contextlens.ngrams import fasttext_hash, fasttext_ngrams  # noqa: E402
from contextlens.static.build import build_table  # noqa: E402
from contextlens.static.word2vec import fasttext_model  # noqa: E402
from contextlens.vectors import EmbeddingTable  # noqa: E402

CORPUS = ["we sat on the river bank and watched the river flow",
          "the bank approved the loan and the banker smiled",
          "banks lend money and rivers carry water to the sea",
          "naïve café owners sell coffee by the riverside"] * 20


@pytest.fixture(scope="module")
def model():
    return fasttext_model(CORPUS, dim=8, min_count=2, epochs=3, workers=1, bucket=40, seed=1)


def test_ngrams_and_hashes_are_gensims():
    for word in ("bank", "café", "🦩x", "a", "riverbanks"):
        assert fasttext_ngrams(word, 3, 6) == compute_ngrams_bytes(word, 3, 6)
        assert [fasttext_hash(g) for g in fasttext_ngrams(word, 3, 6)] == \
            [ft_hash_bytes(g) for g in compute_ngrams_bytes(word, 3, 6)]


def test_unseen_words_compose_as_gensim_does(model, tmp_path):
    table = EmbeddingTable.from_gensim(model.wv, name="ft")
    assert "riverbanks" not in table and table.ngrams is not None
    assert len(table.ngrams.rows) == 40  # a small bucket: every bucket was trained
    for word in ("riverbanks", "bankers", "cafés", "Rivers"):
        np.testing.assert_allclose(table.vector(word), model.wv[word], rtol=1e-6)
    np.testing.assert_array_equal(table.vector("bank"), model.wv["bank"])  # a known word is its row
    path = tmp_path / "ft.npz"
    table.save(path)
    again = EmbeddingTable.load(path)
    np.testing.assert_array_equal(again.vector("riverbanks"), table.vector("riverbanks"))
    assert again.restrict(["bank", "river"]).vector("riverbanks") is not None
    # every lookup: the static encoder, neighbours, similarity, analogies
    enc = StaticEncoder(again).encode(["riverbanks flow"])[0]
    assert enc.tokens == ["riverbanks", "flow"] and not enc.meta["skipped"]
    np.testing.assert_allclose(enc.vector("riverbanks", layer=0), model.wv["riverbanks"], rtol=1e-6)
    assert again.most_similar("riverbanks", k=1)[0][0] != "riverbanks"
    assert again.similarity("riverbanks", "river") == pytest.approx(
        float(model.wv.similarity("riverbanks", "river")), rel=1e-5
    )
    assert again.analogy("bank", "banks", "riverbanks", k=1)


def test_without_ngrams_a_missing_word_is_an_error(model, tmp_path):
    plain = EmbeddingTable(["bank"], [[1.0, 0.0]])
    with pytest.raises(UnknownWordError):
        plain.vector("banks")
    table = EmbeddingTable.from_gensim(model.wv, name="ft")
    text = tmp_path / "ft.vec"
    table.save(text)  # the text format cannot hold n-grams: dropped, with a warning
    assert EmbeddingTable.load(text).ngrams is None


def test_build_table_fasttext_keeps_ngrams():
    table = build_table(CORPUS, "fasttext", dim=8, min_count=2, epochs=1, workers=1)
    assert table.ngrams is not None and table.lookup("riverbanks") is not None


def test_untrained_buckets_are_left_out_of_the_mean():
    model = fasttext_model(CORPUS, dim=8, min_count=2, epochs=1, workers=1, bucket=5000, seed=1)
    table = EmbeddingTable.from_gensim(model.wv)
    trained = set(table.ngrams.rows.tolist())
    hashes = [ft_hash_bytes(g) % 5000 for g in compute_ngrams_bytes("zebrafish", 3, 6)]
    kept = [h for h in hashes if h in trained]
    assert 0 < len(kept) < len(hashes)  # some n-grams of this word were never trained
    np.testing.assert_allclose(table.vector("zebrafish"), model.wv.vectors_ngrams[kept].mean(0), rtol=1e-6)
