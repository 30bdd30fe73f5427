"""``contextlens sublayers``, ``patch`` and ``attention --attribution`` on tiny random-weight models:
the JSON is the library's result, ``--html`` holds the view of those very numbers (a page far
under 1 MB), ``--plot`` writes a figure, and bad input is one line with exit code 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.missing import need

need("torch")
need("transformers")

from contextlens.analysis.faithfulness import METHODS  # noqa: E402
from contextlens.analysis.patching import PATCH_POINTS  # noqa: E402
from contextlens.cli import app, experiments, explain  # noqa: E402
from contextlens.encoders.gradients import MAX_STEPS  # noqa: E402
from contextlens.vectors import EmbeddingTable  # noqa: E402
from tests.integration.tiny_models import tiny_lms, tiny_model  # noqa: E402
from tests.progress_lines import progress_line  # noqa: E402
from tests.view_pages import page_views  # noqa: E402

runner = CliRunner()
RIVER = "We sat on the river bank and watched the water flow past."
MONEY = "I deposited money at the bank."


def run(*args, code: int = 0):
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})
    assert result.exit_code == code, result.output
    return result


def fails(*args) -> str:
    """The one error line of a refused command (before it, in a pipe, the library's progress
    lines of what it loaded the first time: "loading … with torch...", "… done in 0.3 s")."""
    result = run(*args, code=2)
    lines = result.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("error:") and all(progress_line(x)
                                                            for x in lines[:-1]), result.output
    assert result.stdout == "", result.output
    return lines[-1]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_model(tmp_path_factory.mktemp("cli-bert"), "bert", layers=3, init=0.2)


@pytest.fixture(scope="module")
def causal(tmp_path_factory):
    return tiny_lms(tmp_path_factory.mktemp("cli-lm")) / "causal"


def _page(path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "plotly.js v" not in text  # our own SVG: no Plotly inlined
    assert len(text.encode()) < 1_000_000
    return page_views(text)


def test_sublayers_json_html_and_plot(bert, tmp_path):
    r = json.loads(run("sublayers", RIVER, MONEY, "-w", "bank", "-m", bert, "--json", "--html",
                       tmp_path / "s.html", "--plot", tmp_path / "s.png").stdout)
    c = json.loads(run("compare", RIVER, MONEY, "-w", "bank", "-m", bert, "--json").stdout)
    ffn = [x["cosine"] for x in r["rows"] if x["after"] == "ffn"]
    assert ffn == pytest.approx(c["cosine_by_layer"][1:], abs=1e-5)
    (view,) = _page(tmp_path / "s.html")
    assert view["kind"] == "sublayers" and view["rows"] == r["rows"]
    assert (tmp_path / "s.png").stat().st_size > 0
    two = run("sublayers", RIVER, MONEY, "-w", "bank", "-m", bert).stdout  # usages numbered from 0
    assert "moved S0" in two and "moved S1" in two and "cosine S0–S1" in two and "S2" not in two
    table = run("sublayers", RIVER, "-w", "bank", "-m", bert).stdout
    assert "layer 3" in table and "ffn" in table and "cosine" not in table and "S0" not in table


def test_sublayers_of_a_training_free_method_says_it_has_no_feed_forward_block(tmp_path):
    path = tmp_path / "toy.npz"
    rows = [[1, 1], [0, 1], [1, 0], [0.1, 0.1]]
    EmbeddingTable(["bank", "river", "money", "the"], rows, name="toy").save(path)
    r = json.loads(run("sublayers", "the river bank", "the money bank", "-w", "bank", "--vectors", path,
                       "--n-layers", "2", "--json").stdout)
    assert r["stages"] == ["attention"] and [x["after"] for x in r["rows"]] == ["attention", "attention"]
    assert "no feed-forward block" in r["note"]


def test_patch_json_html_and_errors(bert, causal, tmp_path):
    r = json.loads(run("patch", RIVER, MONEY, "-w", "bank", "-m", bert, "--at", "ffn", "--json", "--html",
                       tmp_path / "p.html", "--plot", tmp_path / "p.png").stdout)
    assert r["at"] == "ffn" and [x["layer"] for x in r["rows"]] == [1, 2, 3] and "predictions" not in r
    (view,) = _page(tmp_path / "p.html")
    assert view["kind"] == "patch" and view["rows"] == r["rows"]
    assert "unknown --at 'mlp'" in fails("patch", RIVER, MONEY, "-w", "bank", "-m", bert, "--at", "mlp")
    assert "in the recipient" in fails("patch", "Bank and river.", RIVER, "-w", "bank", "-m", causal)
    lm = json.loads(run("patch", "the bank of the river", "the bank of money", "-w", "bank", "-m", causal,
                        "-k", "3", "--json").stdout)
    p = lm["predictions"]
    assert len(p["donor"]) == 3 and [len(x["next"]) for x in lm["rows"]] == [3, 3, 3]
    assert all(len(w["patched"]) == 3 for w in p["donor_words"])
    assert p["donor_words"][0]["in_donor"] == pytest.approx(p["donor"][0]["probability"])
    assert lm["rows"][-1]["cosine_to_donor"] == pytest.approx(1.0, abs=1e-6)


def test_attention_attribution_json_html_and_errors(bert, tmp_path):
    r = json.loads(run("attention", RIVER, "-w", "bank", "-m", bert, "--attribution", "raw,norm,ig",
                       "--steps", "4", "--json", "--html", tmp_path / "a.html", "--plot",
                       tmp_path / "a.png").stdout)
    assert r["methods"] == ["raw", "norm", "ig"] and r["steps"] == 4 and len(r["layers"]) == 3
    (view,) = _page(tmp_path / "a.html")
    assert view["kind"] == "attributions" and view["layers"] == r["layers"]
    shown = run("attention", RIVER, "-w", "bank", "-m", bert, "--attribution", "raw", "--layer", "2").stdout
    shown = " ".join(shown.split())  # a narrow table wraps its title
    assert "at layer 2" in shown and "ρ occlusion" in shown
    assert "Spearman with occlusion, every layer" in shown
    assert "attribution methods are given with --attribution all" in fails("attention", RIVER, "-w", "bank",
                                                                           "--method", "all")
    assert "--head do not apply to --attribution" in fails("attention", RIVER, "-w", "bank", "-m", bert,
                                                            "--attribution", "raw", "--head", "0")
    line = fails("attention", RIVER, "-w", "bank", "-m", bert, "--attribution", "ig", "--steps", "0")
    assert "--steps must be a whole number from 1 to 256" in line
    assert "unknown method 'grad'" in fails("attention", RIVER, "-w", "bank", "-m", bert, "--attribution",
                                            "grad")


def test_help_lists_the_library_choices():
    assert explain.STAGES_HELP == " | ".join(PATCH_POINTS)
    assert experiments.ATTRIBUTIONS_HELP == " | ".join(("all", *METHODS))
    assert experiments.MAX_STEPS == MAX_STEPS
