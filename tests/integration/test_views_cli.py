"""``--html out.html`` on attention, layers, senses, explore and compare: the file is one
standalone page holding the views of the command's own result."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from contextlens import views
from contextlens.cli import context, experiments
from contextlens.encoders.registry import make_encoder
from contextlens.vectors import EmbeddingTable
from tests.view_pages import page_views

runner = CliRunner()
app = typer.Typer(pretty_exceptions_enable=False)


@app.callback()
def _root() -> None:
    """The commands with --html."""


experiments.register(app)
context.register(app)

WORDS = {"bank": [1, 1, 0.2], "money": [1, 0, 0], "loan": [0.9, 0, 0.1], "river": [0, 1, 0.1],
         "water": [0.1, 0.9, 0], "the": [0, 0, 1], "by": [0.1, 0, 0.7], "sat": [0.3, 0.2, 0.4]}
TEXTS = ["the bank loan money", "sat by the river bank", "money by the bank", "the water by the bank"]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("views-cli") / "t.npz"
    EmbeddingTable(list(WORDS), list(WORDS.values()), name="toy").save(path)
    return path


def run(*args, code: int = 0):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return result


def written(path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "CLViews.mountAll" in text
    return page_views(text)


def test_layers_and_compare(table, tmp_path):
    out = json.loads(run("layers", *TEXTS[:2], "--pair", *TEXTS[2:], "-w", "bank", "--vectors", table,
                         "--html", tmp_path / "l.html", "--json").stdout)
    (view,) = written(tmp_path / "l.html")
    assert view["kind"] == "layers" and view["layer_names"] == out["layer_names"]
    assert [p["cosine_by_layer"] for p in view["pairs"]] == [p["cosine_by_layer"] for p in out["pairs"]]
    out = json.loads(run("compare", *TEXTS[:2], "-w", "bank", "--vectors", table, "--html",
                         tmp_path / "c.html", "--json").stdout)
    (view,) = written(tmp_path / "c.html")
    assert view["kind"] == "layers" and view["pairs"][0]["cosine_by_layer"] == out["cosine_by_layer"]


def test_explore_and_senses(table, tmp_path):
    out = json.loads(run("explore", "bank", *[a for t in TEXTS for a in ("-s", t)], "--vectors", table,
                         "--html", tmp_path / "e.html", "--json").stdout)
    (view,) = written(tmp_path / "e.html")
    assert view["kind"] == "cosine" and view["words"][0]["matrix"] == out["words"][0]["matrix"]
    out = json.loads(run("senses", "bank", *[a for t in TEXTS for a in ("-s", t)], "--vectors", table, "--k",
                         "2", "--html", tmp_path / "s.html", "--json").stdout)
    (view,) = written(tmp_path / "s.html")
    assert view["kind"] == "senses" and view["labels"] == out["labels"] and view["sentences"] == TEXTS
    assert len(view["projection"]["points"]) == 4  # --html projects the usages (PCA) for the view


def test_attention_writes_head_model_and_neuron_views(table, tmp_path):
    run("attention", TEXTS[1], "-w", "bank", "--vectors", table, "--heads", "1", "--layer", "1", "--head",
        "0", "--html", tmp_path / "a.html")
    got = written(tmp_path / "a.html")
    encoder = make_encoder("attention", vectors=str(table), heads=1, include_self=False)
    want = [v.data for v in views.attention_views(encoder, TEXTS[1], "bank", layer=1, head=0)]
    assert [v["kind"] for v in got] == ["head", "model", "neuron"] and got == want
    bank = TEXTS[1].split().index("bank")
    assert got[2]["initial"] == {"head": 0, "token": bank} and got[1]["initial"]["word"] == bank


def test_attention_of_a_tiny_transformer_has_its_pieces(tmp_path):
    from tests.integration.tiny_models import tiny_model
    from tests.missing import need

    need("torch")
    model = tiny_model(tmp_path, "bert", init=0.2)
    run("attention", "the river bank flooded", "-w", "bank", "--model", model, "--html", tmp_path / "t.html")
    head, model_view, neuron = written(tmp_path / "t.html")
    pieces = head["attention"]["pieces"]["tokens"]
    assert pieces[0] == "[CLS]" and pieces[-1] == "[SEP]" and neuron["tokens"] == pieces
    assert head["initial"]["layer"] == len(head["attention"]["layer_ids"]) - 1  # the last layer by default


def test_average_has_no_neuron_view(table, tmp_path):
    run("attention", TEXTS[0], "-w", "bank", "--vectors", table, "--method", "average", "--html",
        tmp_path / "v.html")
    assert [v["kind"] for v in written(tmp_path / "v.html")] == ["head", "model"]


@pytest.mark.parametrize("command", [
    ["layers", *TEXTS[:2], "-w", "bank"], ["compare", *TEXTS[:2], "-w", "bank"],
    ["explore", "bank", "-s", TEXTS[0],
     "-s", TEXTS[1]], ["senses", "bank", "-s", TEXTS[0], "-s", TEXTS[1]],
    ["attention", TEXTS[0], "-w", "bank"]])
def test_a_bad_html_path_is_one_line_and_writes_nothing(table, tmp_path, command):
    result = run(*command, "--vectors", table, "--html", tmp_path / "out.png", code=2)
    assert "give a path ending in .html" in result.output and not list(tmp_path.iterdir())


def test_the_page_is_not_half_written_when_the_word_is_missing(table, tmp_path):
    run("compare", TEXTS[0], "a river", "-w", "bank", "--vectors", table, "--html", tmp_path / "c.html",
        code=2)
    assert not list(tmp_path.iterdir())
