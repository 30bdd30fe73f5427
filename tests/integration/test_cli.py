"""The command line: JSON shapes, the worked example's numbers, exit code 2 on bad input,
and no partial output files."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from contextlens.static.cooccurrence import count_table
from contextlens.walkthrough import worked_example_corpus

runner = CliRunner()


@pytest.fixture(scope="module")
def worked(tmp_path_factory):
    """The worked example's count table, saved as a native .npz file."""
    path = tmp_path_factory.mktemp("vectors") / "bank.npz"
    count_table(worked_example_corpus(), window=3,
                vocab_order="alphabetical").save(path)
    return str(path)


def run_json(*args):
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_contextualize_average_reproduces_the_worked_example(worked):
    out = run_json("contextualize", "sat bank river", "--word", "bank", "--vectors", worked,
                   "--method", "average", "--alpha", "0", "-p", "money", "-p", "river")
    assert [w["word"] for w in out["weights"]] == ["sat", "bank", "river"]
    assert [round(w["weight"], 3) for w in out["weights"]] == [0.5, 0.0, 0.5]
    probes = {p["probe"]: p for p in out["probes"]}
    assert round(probes["money"]["contextual_cosine"], 3) == 0.696
    assert round(probes["river"]["contextual_cosine"], 3) == 0.969
    assert round(probes["money"]["static_cosine"], 3) == 0.115
    assert round(probes["river"]["static_cosine"], 3) == 0.227


def test_contextualize_attention_weights(worked):
    out = run_json("contextualize", "sat bank river", "--word", "bank", "--vectors", worked,
                   "--method", "attention", "--exclude-self")
    weights = {w["word"]: round(w["weight"], 3) for w in out["weights"]}
    assert weights == {"sat": 0.374, "bank": 0.0, "river": 0.626}


def test_compare_reports_every_layer(worked):
    out = run_json("compare", "deposited money bank", "sat bank river", "--word", "bank",
                   "--vectors", worked, "--method", "average")
    assert out["layer_names"][0] == "static"
    assert len(out["cosine_by_layer"]) == 2
    assert out["cosine_by_layer"][0] == pytest.approx(1.0)
    assert out["cosine_by_layer"][1] < 0.9


def test_neighbours_and_analogy_json(worked):
    out = run_json("neighbours", "bank", "--vectors", worked, "-k", "3")
    assert len(out["neighbours"]) == 3 and all("cosine" in n for n in out["neighbours"])
    out = run_json("analogy", "money", "bank", "river", "--vectors", worked, "-k", "2")
    assert len(out["answers"]) == 2


def test_plot_is_written_by_suffix(worked, tmp_path):
    png = tmp_path / "w.png"
    result = runner.invoke(app, ["contextualize", "sat bank river", "-w", "bank", "--vectors", worked,
                                 "--method", "attention", "--plot", str(png)])
    assert result.exit_code == 0, result.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["contextualize", "sat bank river", "-w", "loan"], "not a word of the text"),
        (["contextualize", "sat bank river", "-w", "bank", "--method", "averge"], "did you mean 'average'"),
        (["contextualize", "   ", "-w", "bank"], "empty"),
        (["contextualize", "sat bank river", "-w", "bank", "-p", "rivr"], "close keys: river"),
        (["compare", "sat bank river", "money bank", "-w", "bank", "--method", "attention",
          "--positions", "learned"], "valid values"),
        (["neighbours", "bnak"], "close keys: bank"),
    ],
)
def test_bad_input_exits_2_with_a_clear_message(worked, args, message):
    result = runner.invoke(app, [*args, "--vectors", worked])
    assert result.exit_code == 2
    assert message in " ".join(result.stderr.split())


def test_unknown_vectors_name_lists_packaged_names():
    result = runner.invoke(app, ["neighbours", "bank", "--vectors", "glove-6b-51d"])
    assert result.exit_code == 2
    assert "glove-6b-50d" in result.stderr


def test_failed_plot_leaves_no_file(worked, tmp_path):
    bad = tmp_path / "w.jpg"
    result = runner.invoke(app, ["contextualize", "sat bank river", "-w", "bank", "--vectors", worked,
                                 "--plot", str(bad)])
    assert result.exit_code == 2
    assert "valid values: png, svg, pdf" in result.stderr
    assert list(tmp_path.iterdir()) == []
