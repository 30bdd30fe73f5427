"""Distillation on a toy table mixed by neighbour averaging (fast, no model): every pooled
vector equals the pool of the word's usage vectors computed directly; the usage cap keeps
the usages with the smallest seeded hash; a run stopped after a checkpoint resumes to the
same tables."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.encoders.mixing import NeighbourAverage
from contextlens.errors import EmptyInputError, InputError, UnknownOptionError
from contextlens.passes.distill import distill, pool_state, sample_key, table_paths
from contextlens.text import tokenize
from contextlens.vectors import EmbeddingTable

WORDS = "bank river money loan water sat on the a by we".split()
rng = np.random.default_rng(0)
TABLE = EmbeddingTable(WORDS, rng.normal(size=(len(WORDS), 6)), name="toy")
CORPUS = [" ".join(rng.choice(WORDS, size=int(rng.integers(2, 9)))) for _ in range(60)]


@pytest.fixture(scope="module")
def encoder():
    return NeighbourAverage(TABLE, alpha=0.5)


def usage_vectors(encoder, word: str, layer: int, keep=None) -> np.ndarray:
    """``(usages, dim)``: the word's vector in every sentence, each sentence encoded whole."""
    rows = []
    for n, text in enumerate(CORPUS):
        enc = encoder.encode([text])[0]
        for j, w in enumerate(enc.words):
            if w.text == word and (keep is None or (n, w.start) in keep):
                rows.append(enc.layers[enc.layer_position(layer), j])
    return np.array(rows)


def test_every_pool_equals_the_pool_of_the_usages(encoder):
    result = distill(CORPUS, encoder, layers="all", pools=["mean", "min", "max", "median"], min_count=1,
                     max_usages=1000, chunk_size=7)
    assert sorted(result.tables) == [(k, p) for k in (0, 1) for p in ("max", "mean", "median", "min")]
    table = result.tables[(1, "mean")]
    assert set(table.keys) == {w for t in CORPUS for w in t.split()}
    counts = {w: sum(t.split().count(w) for t in CORPUS) for w in table.keys}
    assert result.usages == counts and list(table.keys) == sorted(counts, key=lambda w: (-counts[w], w))
    for word in ("bank", "the", "we"):
        for layer in (0, 1):
            direct = usage_vectors(encoder, word, layer)
            for pool in ("mean", "min", "max", "median"):
                np.testing.assert_allclose(result.tables[(layer, pool)].vector(word),
                                           pool_state(direct, pool), rtol=1e-6, atol=1e-6)
    # layer 0 is the table row, whatever the sentence: every pool gives it back
    np.testing.assert_allclose(result.tables[(0, "mean")].vector("bank"), TABLE.vector("bank"), atol=1e-6)


def test_words_min_count_and_missing(encoder):
    result = distill(CORPUS, encoder, words=["Bank", "river", "zebra"], min_count=2)
    table = result.tables[(1, "mean")]
    assert set(table.keys) == {"bank", "river"} and result.missing == ["zebra"]
    np.testing.assert_allclose(table.vector("river"), usage_vectors(encoder, "river", 1).mean(0), atol=1e-6)
    high = distill(CORPUS, encoder, min_count=40)
    assert all(c >= 40 for c in high.usages.values())


def test_max_usages_keeps_the_smallest_seeded_hashes(encoder):
    capped = distill(CORPUS, encoder, words=["the"], min_count=1, max_usages=5, seed=3)
    assert capped.usages == {"the": 5}
    keys = sorted((sample_key(3, n, w.start, "the"), (n, w.start))
                  for n, t in enumerate(CORPUS) for w in tokenize(t) if w.text == "the")
    keep = {where for _, where in keys[:5]}
    np.testing.assert_allclose(capped.tables[(1, "mean")].vector("the"),
                               usage_vectors(encoder, "the", 1, keep).mean(0), atol=1e-6)
    again = distill(CORPUS, encoder, words=["the"], min_count=1, max_usages=5, seed=3, chunk_size=4)
    np.testing.assert_array_equal(again.tables[(1, "mean")].vectors, capped.tables[(1, "mean")].vectors)
    other = distill(CORPUS, encoder, words=["the"], min_count=1, max_usages=5, seed=4)
    assert not np.allclose(other.tables[(1, "mean")].vectors, capped.tables[(1, "mean")].vectors)


class Stop(Exception):
    pass


def test_a_stopped_run_resumes_from_its_checkpoint(encoder, tmp_path):
    out = tmp_path / "t.npz"
    clean = distill(CORPUS, encoder, tmp_path / "clean.npz", layers="all", pools=["mean", "max"], min_count=1,
                    chunk_size=8)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "clean.layer0.max.npz", "clean.layer0.mean.npz", "clean.layer1.max.npz", "clean.layer1.mean.npz"]

    def stop(done, usages):
        if done >= 24:
            raise Stop

    with pytest.raises(Stop):
        distill(CORPUS, encoder, out, layers="all", pools=["mean", "max"], min_count=1, chunk_size=8,
                progress=stop)
    assert (tmp_path / "t.npz.distill.npz").is_file() and not (tmp_path / "t.layer1.mean.npz").exists()
    resumed = distill(CORPUS, encoder, out, layers="all", pools=["mean", "max"], min_count=1, chunk_size=8)
    assert resumed.resumed_at == 24 and not (tmp_path / "t.npz.distill.npz").exists()
    for key, table in clean.tables.items():
        np.testing.assert_array_equal(EmbeddingTable.load(resumed.paths[key]).vectors, table.vectors)
    with pytest.raises(Stop):
        distill(CORPUS, encoder, out, min_count=1, chunk_size=8, progress=stop)
    with pytest.raises(InputError, match="checkpoint of another distillation .*min_count"):
        distill(CORPUS, encoder, out, min_count=2, chunk_size=8)


def test_table_paths_one_or_many():
    assert table_paths("out/t.npz", [6], ["mean"]) == {(6, "mean"): __import__("pathlib").Path("out/t.npz")}
    names = {k: p.name for k, p in table_paths("t.vec", [0, 6], ["mean", "max"]).items()}
    assert names[(6, "max")] == "t.layer6.max.vec"


def test_bad_input(encoder):
    with pytest.raises(InputError, match="median keeps every pooled vector"):
        distill(CORPUS, encoder, pools="median")
    with pytest.raises(UnknownOptionError, match="pool"):
        distill(CORPUS, encoder, pools="sum")
    with pytest.raises(InputError, match="reads the corpus twice"):
        distill(iter(CORPUS), encoder)
    with pytest.raises(EmptyInputError, match="min_count"):
        distill(CORPUS, encoder, min_count=10_000)
    with pytest.raises(InputError, match="layer 7 is not available"):
        distill(CORPUS, encoder, layers=7)
    with pytest.raises(InputError, match="GiB"):
        distill(CORPUS, encoder, memory_limit=10)
