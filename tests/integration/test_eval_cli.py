"""``contextlens eval``: JSON shape and exit code 2 on bad input."""

import json

import typer
from typer.testing import CliRunner

from contextlens.cli.eval_cmd import register

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
