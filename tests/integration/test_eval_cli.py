"""``contextlens eval``: JSON shape and exit code 2 on bad input."""

import json

import typer
from typer.testing import CliRunner

from contextlens.cli.evaluate import register
from tests.integration.tiny_models import tiny_bert
from tests.small_data import WIC_LINES, small_data_dir

app = typer.Typer()


@app.callback()
def _root() -> None:
    pass


register(app)


def test_scws_json(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))
    res = CliRunner().invoke(app, ["eval", "scws", "--vectors", "glove-6b-50d", "--method", "average",
                                   "--split", "sample", "--data-dir", str(data_dir), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["task"] == "scws" and out["vectors"] == "glove-6b-50d"
    assert [r["layer"] for r in out["results"]] == [0, 1]
    assert all({"split", "method", "layer", "spearman", "n", "oov"} <= set(r) for r in out["results"])


def test_bad_input_exits_2(data_dir, tmp_path):
    runner = CliRunner()
    for args in (["eval", "wsd", "--vectors", "glove-6b-50d", "--split", "nope"],
                 ["eval", "wic", "--vectors", "glove-6b-50d", "--split", "test"],
                 ["eval", "bogus", "--vectors", "glove-6b-50d"]):
        res = runner.invoke(app, [*args, "--data-dir", str(data_dir)])
        assert res.exit_code == 2, (args, res.output)
    res = runner.invoke(app, ["eval", "wic", "--vectors", "glove-6b-50d", "--data-dir", str(tmp_path)])
    assert res.exit_code == 2 and "wic" in res.output


def test_a_model_is_evaluated_without_a_method(data_dir, tmp_path, monkeypatch):
    """``eval wic --model M`` as the README writes it: no --method given, so none is refused
    (the option's default used to read as given: exit 2 for every task with a model)."""
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    small = small_data_dir(tmp_path / "data", data_dir)
    model = tiny_bert(tmp_path)
    res = CliRunner().invoke(app, ["eval", "wic", "--model", str(model), "--data-dir", str(small), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["model"] and {r["split"] for r in out["results"]} >= {"dev"}
    assert next(r for r in out["results"] if r["split"] == "dev")["n"] == WIC_LINES["dev"]
    res = CliRunner().invoke(app, ["eval", "wic", "--model", str(model), "--method", "average"])
    assert res.exit_code == 2 and "drop --method" in res.stderr  # given, it is still refused
