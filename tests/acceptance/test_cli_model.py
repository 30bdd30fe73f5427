"""`contextlens compare/contextualize --model` with the packaged default model."""

import json

import pytest
from typer.testing import CliRunner

from contextlens import cosine, make_encoder
from contextlens.cli import app

runner = CliRunner()


def test_compare_with_a_model_reports_every_layer():
    result = runner.invoke(app, ["compare", "The bank approved my loan.", "We sat on the bank of the river.",
                                 "-w", "bank", "--model", "minilm", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert len(out["cosine_by_layer"]) == 7 == len(out["layer_names"])
    assert out["cosine_by_layer"][0] == 1.0  # same token id, same embedding row
    assert all(c < 0.95 for c in out["cosine_by_layer"][1:])


def test_contextualize_with_a_model_gives_weights_that_sum_with_the_special_share():
    result = runner.invoke(app, ["contextualize", "We sat on the bank of the river.", "-w", "bank",
                                 "--model", "minilm", "--layer", "3", "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["layer"] == 3 and out["layer_name"] == "layer 3"
    total = sum(w["weight"] for w in out["weights"])
    assert 0.0 < total <= 1.0 + 1e-6


def test_probes_are_compared_with_the_models_embedding_rows():
    result = runner.invoke(app, ["contextualize", "the bank", "-w", "bank", "--model", "minilm", "-p", "money",
                                 "--json"])
    assert result.exit_code == 0, result.output
    probe = json.loads(result.stdout)["probes"][0]
    rows = make_encoder(model="minilm").static_vectors(["bank", "money"])  # the embedding-matrix rows
    assert probe["probe"] == "money"
    assert probe["static_cosine"] == pytest.approx(cosine(rows[0], rows[1]), abs=1e-6)
    assert probe["contextual_cosine"] != pytest.approx(probe["static_cosine"], abs=1e-3)


@pytest.mark.parametrize("name", ["no-such-model-xyz"])
def test_unknown_model_lists_the_available_ones(name):
    result = runner.invoke(app, ["compare", "a bank", "the bank", "-w", "bank", "--model", name])
    assert result.exit_code == 2
    assert "minilm" in result.stderr
