"""``--html`` on ``lens``, ``attention --occlusion`` and ``neighbours --in``: one standalone page
holding the view of the command's own result (the numbers of its --json)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.missing import need

need("torch")
need("transformers")

from contextlens import views  # noqa: E402
from contextlens.cli import app  # noqa: E402
from contextlens.encoders.registry import make_encoder  # noqa: E402
from contextlens.static.cooccurrence import count_table  # noqa: E402
from contextlens.walkthrough import worked_example_corpus  # noqa: E402
from tests.integration.tiny_models import tiny_lms  # noqa: E402
from tests.view_pages import page_views  # noqa: E402

runner = CliRunner()
TEXT = "we sat on the bank of the river"


def run(*args, code: int = 0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


def written(path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "CLViews.mountAll" in text and "plotly.js v" in text
    return page_views(text)


@pytest.fixture(scope="module")
def worked(tmp_path_factory):
    path = tmp_path_factory.mktemp("vectors") / "bank.npz"
    count_table(worked_example_corpus(), window=3, vocab_order="alphabetical").save(path)
    return path


@pytest.fixture(scope="module")
def causal(tmp_path_factory):
    return tiny_lms(tmp_path_factory.mktemp("tiny-lm")) / "causal"


def test_lens_html_holds_the_lens(causal, tmp_path):
    out = json.loads(run("lens", "the bank of the river", "--model", causal, "--position", "2", "--track",
                         "river", "-k", "4", "--html", tmp_path / "lens.html", "--json").stdout)
    (view,) = written(tmp_path / "lens.html")
    assert view["kind"] == "lens" and view["layers"] == out["layers"] and len(view["layers"]) == 4
    assert [len(x["top"])
            for x in view["layers"]] == [4] * 4 and view["layers"][0]["tracked"][0]["word"] == "river"
    assert view["word"] == "of" and view["position"] == 2 and "'of' (word 2)" in view["title"]


def test_attention_occlusion_html_holds_the_attention_views_and_the_occlusion_view(worked, tmp_path):
    out = json.loads(run("attention", TEXT, "--word", "bank", "--vectors", worked, "--occlusion",
                         "--html", tmp_path / "occ.html", "--json").stdout)
    got = written(tmp_path / "occ.html")
    assert [v["kind"] for v in got] == ["head", "model", "neuron", "occlusion"]
    encoder = make_encoder("attention", vectors=str(worked), include_self=False)
    assert got[:3] == [v.data for v in views.attention_views(encoder, TEXT, "bank")]
    occ = got[3]
    assert occ["others"] == out["others"] and occ["word"] == "bank"
    assert [x["occlusion"] for x in occ["layers"]] == [x["occlusion"] for x in out["layers"]]
    assert [x["spearman_attention"] for x in occ["layers"]] == [x["spearman_attention"]
                                                                for x in out["layers"]]


def test_neighbours_in_html_holds_the_neighbours(worked, tmp_path):
    out = json.loads(run("neighbours", "bank", "--in", TEXT, "--vectors", worked, "--reference", worked, "-k",
                         "3", "--html", tmp_path / "nb.html", "--json").stdout)
    (view,) = written(tmp_path / "nb.html")
    assert (view["kind"] == "neighbours" and view["neighbours"] == out["neighbours"]
            and len(out["neighbours"]) == 3)
    assert view["layer"] == out["layer"] == 1 and TEXT[slice(*view["span"])] == "bank"


@pytest.mark.parametrize("command", [
    ["lens", "the bank", "--model", "none-such"],
    ["attention", TEXT, "--word", "bank", "--occlusion"],
    ["neighbours", "bank", "--in", TEXT, "--reference", "none.npz"],
])
def test_a_bad_html_path_is_one_line_and_writes_nothing(worked, tmp_path, command):
    result = run(*command, "--vectors", worked, "--html", tmp_path / "out.png",
                 code=2) if command[0] != "lens" \
        else run(*command, "--html", tmp_path / "out.png", code=2)
    assert "give a path ending in .html" in result.output and len(result.output.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_html_needs_in_for_neighbours_and_nothing_is_half_written(worked, tmp_path):
    result = run("neighbours", "bank", "--vectors", worked, "--html", tmp_path / "nb.html", code=2)
    assert "--html" in result.output and "--in" in result.output and not list(tmp_path.iterdir())
    run("neighbours", "bank", "--in", "a river", "--vectors", worked, "--reference", worked, "--html",
        tmp_path / "nb.html", code=2)  # the word is not in the sentence
    run("attention", "a river", "--word", "bank", "--vectors", worked, "--occlusion", "--html",
        tmp_path / "o.html", code=2)
    assert not list(tmp_path.iterdir())
