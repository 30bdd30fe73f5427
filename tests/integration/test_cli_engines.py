"""``--engine`` / ``--precision`` on the command line: the same figures from either engine,
the bf16 fidelity printed, bad combinations one line and exit code 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from contextlens.cli import options as o
from tests.integration.tiny_models import tiny_bert
from tests.missing import need

runner = CliRunner()


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    need("torch")
    need("onnxruntime")
    return str(tiny_bert(tmp_path_factory.mktemp("engines")))


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))


def fails(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 2 and result.stdout == "", result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_both_engines_give_the_same_cosines(model):
    def cosines(*extra):
        result = runner.invoke(app, ["compare", "I sat by the bank.", "The bank lent money.", "-w", "bank",
                                     "-m", model, "--json", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["cosine_by_layer"]

    torch_, onnx = cosines("--engine", "torch"), cosines("--engine", "onnx")
    assert len(torch_) == 3 and onnx == pytest.approx(torch_, abs=1e-5)


def test_bf16_prints_its_fidelity(model):
    result = runner.invoke(app, ["compare", "I sat by the bank.", "The bank lent money.", "-w", "bank",
                                 "-m", model, "--precision", "bf16", "--json"])
    assert result.exit_code == 0, result.output
    assert "bf16 fidelity over" in result.stderr and "layer 2" in result.stderr
    assert len(json.loads(result.stdout)["cosine_by_layer"]) == 3


def test_bad_engine_options_are_one_line(model):
    assert "no bf16 MatMul" in fails("compare", "a bank", "the bank", "-w", "bank", "-m", model,
                                     "--engine", "onnx", "--precision", "bf16")
    assert "valid values: torch, onnx, auto" in fails("compare", "a bank", "the bank", "-w", "bank", "-m",
                                                      model,
                                               "--engine", "jax")
    assert "--engine applies to a transformer (--model)" in fails("compare", "a bank", "the bank", "-w",
                                                                  "bank", "--engine", "onnx")


def test_help_lists_the_engines():
    from contextlens.encoders.engines import ENGINES, PRECISIONS

    assert o.ENGINES_HELP == " | ".join(ENGINES) and o.PRECISIONS_HELP == " | ".join(PRECISIONS)


def test_index_built_on_torch_is_searched_on_onnx(model, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("We sat on the bank of the river.\nThe bank lent them money.\nA bank of fog rolled "
                      "in.\n")
    db = tmp_path / "db"
    built = runner.invoke(app, ["index", "build", str(corpus), "--db", str(db), "--words", "bank", "-m",
                                model, "--model-engine", "torch", "--json"])
    assert built.exit_code == 0, built.output
    found = runner.invoke(app, ["index", "search", "The bank lent them money.", "-w", "bank", "--db", str(db),
                                "--engine", "onnx", "--json"])
    assert found.exit_code == 0, found.output
    results = json.loads(found.stdout)["results"]
    same = next(r for r in results if r["sentence"] == "The bank lent them money.")
    # the same sentence, encoded by the other engine: the same vector (float16 storage)
    assert len(results) == 3 and same["similarity"] == pytest.approx(1.0, abs=1e-3)
