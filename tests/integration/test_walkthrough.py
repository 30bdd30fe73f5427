"""make demo's walkthrough: every file written, the worked example's numbers exact."""

import json

import pytest
from typer.testing import CliRunner

from contextlens.cli import app
from contextlens.walkthrough import POLYSEMY, run

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def static_demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    return out, run(out, model=None)


def test_worked_example_numbers(static_demo):
    _, r = static_demo
    w = r["worked_example"]
    assert {k: round(v, 3) for k, v in w["static"].items()} == {"money": 0.115, "river": 0.227}
    assert {k: round(v, 3) for k, v in w["average"]["deposited money bank"].items()} == {
        "money": 0.943, "river": 0.694}
    assert {k: round(v, 3) for k, v in w["average"]["sat bank river"].items()} == {
        "money": 0.696, "river": 0.969}
    assert {k: round(v, 3) for k, v in w["attention"]["sat bank river"].items()} == {
        "sat": 0.374, "river": 0.626}
    assert {k: round(v, 3) for k, v in w["attention"]["deposited money bank"].items()} == {
        "deposited": 0.5, "money": 0.5}


def test_every_word_separates_from_its_static_vector(static_demo):
    _, r = static_demo
    words = r["polysemy"]["words"]
    assert set(words) == set(POLYSEMY) == {"bank", "bat", "light", "lead", "spring"}
    for word, e in words.items():
        for method, m in e["methods"].items():
            assert m["cosine_between_usages"] < 1.0 - 1e-3, (word, method)


def test_report_json_and_figures_are_written(static_demo):
    out, r = static_demo
    report = (out / "report.md").read_text()
    assert "0.115" in report and "0.969" in report
    assert json.loads((out / "results.json").read_text())["worked_example"]["vocabulary"] == 34
    figures = sorted(out.glob("*.png"))
    assert len(figures) == 2 + 2 * len(POLYSEMY)
    for f in figures:
        assert f.read_bytes()[:8] == PNG
        assert f"]({f.name})" in report
    assert not list(out.glob(".*")), "no temporary files left behind"


def test_demo_command_prints_the_numbers(tmp_path):
    result = CliRunner().invoke(app, ["demo", "--out", str(tmp_path), "--model", "none"])
    assert result.exit_code == 0, result.output
    assert "0.943" in result.stdout and "0.626" in result.stdout
    assert (tmp_path / "report.md").is_file()
