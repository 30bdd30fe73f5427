"""``probe --html`` and ``cka --html`` write the probes and CKA views of the very result the
command prints (its --json), as one offline page; a wrong --html path is refused before any
work, in one line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from tests.integration.tiny_models import tiny_model
from tests.tiny_semcor import probe_files
from tests.view_pages import page_views

runner = CliRunner()


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))


@pytest.fixture
def files(tmp_path):
    return probe_files(tmp_path)


def run(*args):
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result


def test_probe_html_is_the_view_of_the_json(files):
    page = files / "probe.html"
    out = run("probe", "pos", "--vectors", files / "toy.npz", "--data-dir", files / "data", "--json",
              "--html", page, "--plot", files / "probe.svg")
    assert "pos probe" in (files / "probe.svg").read_text()  # the figure too (--plot: PNG, SVG or PDF)
    (view,) = page_views(page.read_text())
    r = json.loads(out.stdout)
    assert view["kind"] == "probes" and view["results"][0]["rows"] == r["rows"]
    assert (view["results"][0]["expected_layer"] == r["expected_layer"]
            and view["title"] == "pos probe per layer: toy")


def test_cka_html_is_the_view_of_the_json(files, tmp_path):
    model = tiny_model(tmp_path / "models", "bert", init=0.2)
    page = files / "cka.html"
    out = run("cka", "--model", model, "--engine", "torch", "--sentences", files / "s.txt", "--json",
              "--html", page, "--plot", files / "cka.png")
    assert (files / "cka.png").read_bytes()[:4] == b"\x89PNG"
    (view,) = page_views(page.read_text())
    r = json.loads(out.stdout)
    assert view["kind"] == "cka" and view["matrix"] == r["matrix"] and view["layers"] == r["layers"]


@pytest.mark.parametrize("args", [
    ["probe", "pos", "--vectors", "{toy}", "--data-dir", "{data}", "--html", "{dir}/probe.png"],
    ["cka", "--model", "minilm", "--sentences", "{dir}/s.txt", "--html", "{dir}/cka.svg"],
])
def test_a_wrong_html_path_is_refused_first(files, args):
    args = [a.format(toy=files / "toy.npz", data=files / "data", dir=files) for a in args]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "a view is saved as HTML: give a path ending in .html" in lines[0]
    assert not list(files.glob("*.png")) and not list(files.glob("*.svg"))
