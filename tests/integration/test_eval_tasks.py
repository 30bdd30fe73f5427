"""WiC, SCWS and a small WSD run on the shared data, with GloVe-based encoders."""

import pytest

from contextlens.encoders.registry import resolve_vectors
from contextlens.evaluation.runner import evaluate


@pytest.fixture(scope="module")
def glove():
    return resolve_vectors("glove-6b-50d")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))


def test_wic_dev_average(glove, data_dir):
    out = evaluate("wic", vectors=glove, method="average", data_dir=data_dir)
    rows = {(r["split"], r["method"], r["layer"]): r for r in out["results"]}
    sweep = {r["layer"]: r for r in out["results"] if r["method"] == "threshold-sweep"}
    assert list(sweep) == [0, 1]
    dev = rows[("dev", "threshold", 1)]
    assert dev["n"] == 638 and dev["oov"] == 15 and rows[("train", "threshold", 1)]["oov"] == 20
    # benchmarks/RESULTS.md: static row 52.0, neighbour averaging 56.0, logistic regression 57.7
    assert sweep[0]["accuracy"] == pytest.approx(332 / 638, abs=1e-12)
    # context mixing beats the static row a little
    assert dev["accuracy"] == pytest.approx(357 / 638, abs=1e-12)
    assert dev["threshold"] == pytest.approx(0.914206, abs=1e-6) == sweep[1]["threshold"]
    assert rows[("dev", "logreg-cosines", None)]["accuracy"] == pytest.approx(368 / 638, abs=1e-12)
    assert any(r["system"] == "BERT-large" for r in out["references"])


def test_scws_sample_static_is_word_similarity(glove, data_dir):
    rows = evaluate("scws", vectors=glove, method="static", split="sample", data_dir=data_dir)["results"]
    assert len(rows) == 1 and rows[0]["n"] == 40 and rows[0]["oov"] == 0
    # the sample's first pair
    assert glove.similarity("Brazil".lower(), "nut") == pytest.approx(0.094743, abs=1e-6)
    assert rows[0]["spearman"] == pytest.approx(0.610587, abs=1e-6)  # benchmarks/RESULTS.md: 0.611


def test_wsd_small_semcor(glove, data_dir):
    rows = evaluate("wsd", vectors=glove, method="average", layer=1, semcor_limit=300, wsd_method="1nn",
                    data_dir=data_dir)["results"]
    by = {r["method"]: r for r in rows}
    assert by["mfs"]["n"] == 455 and by["mfs"]["answered"] == 455
    assert (
        by["mfs"]["f1"]
        == by["mfs"]["precision"]
        == by["mfs"]["recall"]
        == pytest.approx(251 / 455, abs=1e-12)
    )
    assert by["1nn"]["semcor_encoded"] == 219 and by["1nn"]["senses"] == 184
    assert by["1nn"]["answered"] == 208 and by["1nn"]["unseen"] == 247 == 455 - 208
    assert by["1nn"]["precision"] == pytest.approx(74 / 208, abs=1e-12)
    assert by["1nn"]["recall"] == pytest.approx(74 / 455, abs=1e-12)
    assert by["1nn+mfs"]["answered"] == 455 and by["1nn+mfs"]["f1"] == pytest.approx(233 / 455, abs=1e-12)
