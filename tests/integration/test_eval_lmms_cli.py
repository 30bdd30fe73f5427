"""``contextlens eval wsd --method lmms|1nn`` with a tiny random-weight BERT on semeval2007,
and ``eval`` with ``--model`` and no ``--method``."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from tests.integration.tiny_models import tiny_bert
from tests.missing import need

runner = CliRunner()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    need("torch")
    return str(tiny_bert(tmp_path_factory.mktemp("lmms")))


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("lmms-cache"))  # shared: SemCor and WordNet are read once per module


def run(args, cache, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", cache)
    return runner.invoke(app, args, env={"COLUMNS": "200"})


def test_model_without_method(model, cache, data_dir, monkeypatch):
    # --method used to default to "static", so every `eval --model` failed with "drop --method"
    res = run(["eval", "scws", "--model", model, "--split", "sample", "--data-dir", str(data_dir), "--json"],
              cache, monkeypatch)
    assert res.exit_code == 0, res.output
    assert [r["layer"] for r in json.loads(res.stdout)["results"]] == [0, 1, 2]


def test_wsd_lmms_rows(model, cache, data_dir, monkeypatch):
    res = run(["eval", "wsd", "--model", model, "--method", "lmms", "--semcor-limit", "40", "--data-dir",
               str(data_dir), "--json"], cache, monkeypatch)
    assert res.exit_code == 0, res.output
    rows = {r["method"]: r for r in json.loads(res.stdout)["results"]}
    assert list(rows) == ["mfs", "1nn", "1nn+mfs", "+propagation", "+glosses", "+static"]
    assert rows["1nn"]["answered"] < 455  # 40 SemCor sentences tag few of the candidates
    for name in ("+propagation", "+glosses", "+static"):
        r = rows[name]
        assert r["answered"] == 455 and r["unseen"] == 0  # every candidate sense has an embedding
        assert set(r["pos_f1"]) == {"NOUN", "VERB"} and r["layer"] == 2
        src = r["candidate_sources"]
        assert src["semcor"] > 0 and src["hypernym"] > 0 and src["semcor"] < sum(src.values())
    assert rows["+static"]["f1"] == rows["+glosses"]["f1"]  # one lemma per instance: the same answers
    refs = {(r["split"], r["system"]) for r in json.loads(res.stdout)["references"]}
    # the split's own published row, and ALL's
    assert ("semeval2007", "LMMS-2048") in refs and ("ALL", "LMMS-2048") in refs
    assert not {s for s, _ in refs} - {"semeval2007", "ALL"}
    table = run(["eval", "wsd", "--model", model, "--semcor-limit", "40", "--data-dir", str(data_dir)], cache,
                monkeypatch)
    assert table.exit_code == 0, table.output
    assert "+glosses" in table.stdout and "f1 VERB" in table.stdout


def test_wsd_1nn_rows(model, cache, data_dir, monkeypatch):
    res = run(["eval", "wsd", "--model", model, "--method", "1nn", "--semcor-limit", "40", "--data-dir",
               str(data_dir), "--json"], cache, monkeypatch)
    assert res.exit_code == 0, res.output
    assert [r["method"] for r in json.loads(res.stdout)["results"]] == ["mfs", "1nn", "1nn+mfs"]


def test_wsd_method_elsewhere_is_refused(cache, data_dir, monkeypatch):
    res = run(["eval", "wic", "--vectors", "glove-6b-50d", "--method", "lmms", "--data-dir", str(data_dir)],
              cache, monkeypatch)
    assert res.exit_code == 2 and "eval wsd" in res.output


def test_wic_senses_rows(model, cache, data_dir, monkeypatch):
    res = run(["eval", "wic", "--model", model, "--features", "senses", "--semcor-limit", "40", "--data-dir",
               str(data_dir), "--json"], cache, monkeypatch)
    assert res.exit_code == 0, res.output
    rows = {(r["split"], r["method"]): r for r in json.loads(res.stdout)["results"]}
    for split, n in (("train", 5428), ("dev", 638)):
        agree, fitted = rows[(split, "senses-agree")], rows[(split, "logreg-senses")]
        assert agree["n"] == fitted["n"] == n and agree["layer"] == 2
        assert 0.3 < agree["accuracy"] < 0.8 and 0.3 < fitted["accuracy"] < 0.9


FIXTURES = __import__("pathlib").Path(__file__).resolve().parent.parent / "fixtures"


def test_cosimlex_rows(model, cache, monkeypatch, data_dir):
    res = run(["eval", "cosimlex", "--model", model, "--data-dir", str(FIXTURES), "--json"], cache,
              monkeypatch)
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["results"]
    assert [(r["method"], r["layer"]) for r in rows] == [("cosine", 0), ("cosine", 1), ("cosine", 2),
                                                         ("cosine-last4", "last4")]
    for r in rows:
        assert set(r) == {"split", "method", "layer", "subtask1_uncentered_pearson",
                          "subtask2_harmonic_mean", "n"}
        assert r["split"] == "cosimlex" and r["n"] == 8
    assert rows[1]["subtask1_uncentered_pearson"] is not None  # a contextual layer predicts some change
    refs = {(r["system"], r["metric"]): r for r in json.loads(res.stdout)["references"]}
    baseline = refs[("task baseline (BERT)", "subtask1_uncentered_pearson")]  # published figures beside ours
    assert baseline["value"] == 0.705 and "UZH" in baseline["source"]
    table = run(["eval", "cosimlex", "--model", model, "--data-dir", str(FIXTURES)], cache, monkeypatch)
    assert table.exit_code == 0 and "subtask1_uncentered_pearson" in table.stdout
    assert "published reference numbers" in table.stdout and "JUSTMasters" in table.stdout


def test_cosimlex_senses(model, cache, monkeypatch, data_dir):
    # the fixture's folder has no WordNet: the senses come from the shared data's, through a copy-free link
    root = __import__("pathlib").Path(cache) / "cosimlex-data"
    if not root.exists():
        root.mkdir()
        for name in ("wordnet", "wsd"):
            (root / name).symlink_to(data_dir / name)
        (root / "cosimlex").symlink_to(FIXTURES / "cosimlex")
    res = run(["eval", "cosimlex", "--model", model, "--features", "senses", "--semcor-limit", "40",
               "--layer", "2",
               "--data-dir", str(root), "--json"], cache, monkeypatch)
    assert res.exit_code == 0, res.output
    methods = {r["method"]: r for r in json.loads(res.stdout)["results"]}
    assert methods["cosine+senses"]["layer"] == 2 and methods["cosine+senses"]["n"] == 8


def test_cosimlex_static_table_is_the_no_change_baseline(cache, monkeypatch):
    # a table read at the pair's words: "ran"/"walked" in context 1 of run/walk used to give other rows than
    # "run"/"walk" in context 2, so the "no-change" baseline predicted a change (subtask 1 was -0.306)
    res = run(["eval", "cosimlex", "--vectors", "glove-6b-50d", "--data-dir", str(FIXTURES), "--json"], cache,
              monkeypatch)
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)["results"]
    assert (row["method"], row["layer"], row["n"],
            row["subtask1_uncentered_pearson"]) == ("cosine", 0, 8, None)


def test_cosimlex_features_are_checked(cache, monkeypatch):
    res = run(["eval", "cosimlex", "--vectors", "glove-6b-50d", "--features", "full", "--data-dir",
               str(FIXTURES)],
              cache, monkeypatch)
    assert res.exit_code == 2 and "cosimlex features" in res.output and "senses" in res.output


def test_cosimlex_has_no_split(cache, monkeypatch):
    # --split used to be ignored without a word
    res = run(["eval", "cosimlex", "--vectors", "glove-6b-50d", "--split", "dev", "--data-dir",
               str(FIXTURES)],
              cache, monkeypatch)
    assert res.exit_code == 2 and "no split 'dev'" in res.output and "drop --split" in res.output
