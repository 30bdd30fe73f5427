"""``contextlens probe``, ``cka`` and geometry's new options on the command line, over a tiny
SemCor in the published layout, a toy table and tiny random-weight models (no shared data,
no download): the JSON the library returns, the tables, and one clear line for bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from tests.integration.tiny_models import tiny_model
from tests.tiny_semcor import probe_files

runner = CliRunner()


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def files(tmp_path):
    return probe_files(tmp_path)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {"bert": tiny_model(root, "bert", init=0.2),
            "llama": tiny_model(root, "llama", layers=3, init=0.2)}


def run_json(*args):
    result = runner.invoke(app, [str(a) for a in args] + ["--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def fails(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and result.stdout == "", result.output
    return lines[0]


def test_probe_a_table(files):
    r = run_json("probe", "pos", "--vectors", files / "toy.npz", "--data-dir", files / "data")
    assert (r["task"], r["model"], r["expected_layer"], r["probe"]) == ("pos", "toy", None, "linear")
    (row,) = r["rows"]
    assert (row["layer"], row["n_train"], row["n_test"], row["missing"]) == (0, 18, 10, 1)
    assert row["selectivity"] == pytest.approx(row["accuracy"] - row["control_accuracy"])
    table = runner.invoke(app, ["probe", "sense", "--vectors", str(files / "toy.npz"), "--data-dir",
                                str(files / "data")])
    assert table.exit_code == 0, table.output
    assert "sense probe (linear) — toy: 2 labels, 1 lemmas" in table.stdout
    assert "expected layer (Tenney et al. 2019): –" in table.stdout


def test_probe_reads_as_many_words_as_asked(files):
    r = run_json("probe", "pos", "--vectors", files / "toy.npz", "--data-dir", files / "data",
                 "--train-words", 5, "--test-words", 3)
    (row,) = r["rows"]
    assert (r["train_rows"], r["test_rows"]) == (5, 3)
    assert row["n_train"] + row["n_test"] + row["missing"] == 8


def test_probe_a_model_and_its_twin(files, models):
    trained = run_json("probe", "supersense", "--model", models["bert"], "--engine", "torch", "--data-dir",
                       files / "data", "--probe", "mlp")
    twin = run_json("probe", "supersense", "--model", models["bert"], "--engine", "torch", "--data-dir",
                    files / "data", "--random-weights", "--seed", "4")
    assert [x["layer"] for x in trained["rows"]] == [0, 1, 2] and trained["probe"] == "mlp"
    assert twin["model"].endswith("(random weights, seed 4)") and twin["seed"] == 4
    assert all(x["missing"] == 0 for x in twin["rows"])  # every word has pieces


@pytest.mark.parametrize("args, message", [
    (["probe", "ner", "--vectors", "x.npz"],
     "unknown probe task 'ner'; valid values: pos, supersense, sense"),
    (["probe", "pos", "--vectors", "x.npz", "--probe", "svm"], "unknown probe 'svm'"),
    (["probe", "pos", "--vectors", "x.npz", "--random-weights"],
     "--random-weights re-draws a model's weights"),
    (["probe", "pos", "--vectors", "x.npz", "--model", "minilm"],
     "give --vectors (a static table) or --model"),
    (["probe", "pos"], "give exactly one of a model (--model) or vectors (--vectors)"),
    (["probe", "pos", "--vectors", "x.npz", "--engine", "onnx"], "--engine applies to a transformer"),
    (["probe", "pos", "--vectors", "x.npz", "--seed", "-1"], "--seed must be a whole number from 0"),
    (["probe", "pos", "--vectors", "x.npz", "--train-words", "0"],
     "--train-words must be a whole number from 1"),
    (["probe", "pos", "--vectors", "x.npz", "--test-words", "2000000"],
     "--test-words must be a whole number"),
    (["cka"], "give --model once (its layers against each other) or twice (two models), got 0"),
    (["cka", "-m", "a", "-m", "b", "-m", "c"], "got 3"),
    (["cka", "-m", "minilm", "--sample", "1"], "--sample must be a whole number from 2"),
])
def test_bad_input_is_one_line(args, message):
    assert message in fails(*args)


def test_probe_without_semcor_says_how_to_get_it(files, tmp_path):
    line = fails("probe", "pos", "--vectors", files / "toy.npz", "--data-dir", tmp_path / "nowhere")
    assert "dataset 'semcor' is incomplete" in line and "contextlens data fetch semcor" in line


def test_cka_one_model_and_two(files, models):
    one = run_json("cka", "--model", models["bert"], "--engine", "torch", "--sentences", files / "s.txt")
    m = np.array(one["matrix"])
    assert one["models"] == [one["models"][0]] * 2 and one["layers"] == [[0, 1, 2], [0, 1, 2]]
    assert m.shape == (3, 3) and np.allclose(m, m.T) and np.allclose(np.diag(m), 1)
    assert one["n_sentences"] == 4 and one["n_words"] == 22 and one["sentences"] == str(files / "s.txt")
    two = run_json("cka", "-m", models["bert"], "-m", models["llama"], "--engine", "torch", "--sentences",
                   files / "s.txt", "--debiased")
    assert two["layers"] == [[0, 1, 2], [0, 1, 2, 3]] and np.array(two["matrix"]).shape == (3, 4)
    assert two["debiased"] is True
    table = runner.invoke(app, ["cka", "-m", str(models["bert"]), "--engine", "torch", "--sentences",
                                str(files / "s.txt")])
    assert table.exit_code == 0 and "linear CKA: layers of" in table.stdout and "usages in 4" in table.stdout


def test_cka_samples_the_shared_corpora(files, models):
    (files / "data" / "corpora").mkdir()
    for name in ("brown_plain.txt", "abc_plain.txt", "movie_reviews_plain.txt"):
        (files / "data" / "corpora" / name).write_text(
            (files / "s.txt").read_text().replace("\n", " again\n") * 3
        )
    r = run_json("cka", "-m", models["bert"], "--engine", "torch", "--data-dir", files / "data", "--sample",
                 "5", "--seed", "2")
    assert r["n_sentences"] == 5 and "5 sentences of the shared corpora" in r["sentences"] and "seed 2" in \
        r["sentences"]


def test_geometry_standardize_and_rogue(files):
    raw = run_json("geometry", "--sentences", files / "s.txt", "--vectors", files / "toy.npz", "--method",
                   "static", "--rogue", "2")
    z = run_json("geometry", "--sentences", files / "s.txt", "--vectors", files / "toy.npz", "--method",
                 "static", "--standardize")
    assert raw["standardized"] is False and z["standardized"] is True
    assert len(raw["layers"][0]["rogue"]) == 2 and len(z["layers"][0]["rogue"]) == 3
    assert {"mev", "mev_adjusted", "mev_baseline"} <= set(raw["layers"][0])
    table = runner.invoke(app, ["geometry", "--sentences", str(files / "s.txt"), "--vectors",
                                str(files / "toy.npz"), "--method", "static"])
    assert table.exit_code == 0 and "MEV adj" in table.stdout and "rogue dimensions" in table.stdout
    assert "--rogue must be a whole number from 1" in fails("geometry", "--sentences", files / "s.txt",
                                                            "--rogue", "0")


def test_help_lists_the_library_choices():
    from contextlens.analysis.cka import DEFAULT_SENTENCES
    from contextlens.analysis.probing import PROBE_KINDS, PROBE_TASKS, TEST_ROWS, TRAIN_ROWS
    from contextlens.cli import probe

    assert probe.PROBE_TASKS_HELP == " | ".join(PROBE_TASKS)
    assert probe.PROBE_KINDS_HELP == " | ".join(PROBE_KINDS)
    assert probe.DEFAULT_SAMPLE == DEFAULT_SENTENCES
    assert (probe.TRAIN_WORDS, probe.TEST_WORDS) == (TRAIN_ROWS, TEST_ROWS)
