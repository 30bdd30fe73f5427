"""WiC, SCWS and a small WSD run on the shared data, with GloVe-based encoders."""

import pytest

from contextlens.bench.runner import evaluate
from contextlens.encoders.registry import resolve_vectors


@pytest.fixture(scope="module")
def glove():
    return resolve_vectors("glove-6b-50d")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))


def test_wic_dev_average(glove, data_dir):
    out = evaluate("wic", vectors=glove, method="average", data_dir=data_dir)
    rows = {(r["split"], r["method"], r["layer"]): r for r in out["results"]}
    sweep = [r for r in out["results"] if r["method"] == "threshold-sweep"]
    assert [r["layer"] for r in sweep] == [0, 1]
    dev = rows[("dev", "threshold", 1)]
    assert dev["n"] == 638 and 0 < dev["oov"] < 30
    assert 0.53 < dev["accuracy"] < 0.65  # context mixing beats the static row (0.52) a little
    assert any(r["system"] == "BERT-large" for r in out["references"])


def test_scws_sample_static_is_word_similarity(glove, data_dir):
    rows = evaluate("scws", vectors=glove, method="static", split="sample", data_dir=data_dir)["results"]
    assert len(rows) == 1 and rows[0]["n"] == 40
    assert glove.similarity("Brazil".lower(), "nut") > -1  # the sample's first pair reads from the table
    assert 0.4 < rows[0]["spearman"] < 0.8


def test_wsd_small_semcor(glove, data_dir):
    rows = evaluate("wsd", vectors=glove, method="average", layer=1, semcor_limit=300,
                    data_dir=data_dir)["results"]
    by = {r["method"]: r for r in rows}
    assert by["mfs"]["n"] == 455 and by["mfs"]["answered"] == 455
    assert by["mfs"]["precision"] == by["mfs"]["recall"]
    assert by["1nn+mfs"]["answered"] == 455
    assert by["1nn"]["answered"] == 455 - by["1nn"]["unseen"] < 455
    assert by["1nn"]["precision"] >= by["1nn"]["recall"]
