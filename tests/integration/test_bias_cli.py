"""``contextlens bias list`` and ``bias weat``: JSON rows equal to the library's, own sets
files, exit code 2 with one line on bad input."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from contextlens.bias import TESTS, get_test, weat_table
from contextlens.cli import app
from contextlens.static.pretrained import load_vectors

runner = CliRunner()
KEYS = ["test", "measure", "model", "layer", "effect_size", "p_value", "ci", "n_x", "n_y", "n_a", "n_b",
        "missing", "statistic", "exact", "permutations", "samples", "q", "tau2", "i2"]


def run_json(*args):
    result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_bias_list_names_the_ten_tests_with_published_figures():
    out = run_json("bias", "list")
    assert [t["name"] for t in out["tests"]] == list(TESTS)
    career = out["tests"][5]
    assert career["alias"] == "weat6" and career["published"] == {"n": 8, "d": 1.81, "p": 0.001}
    assert career["labels"]["A"] == "career" and career["sets"]["X"][0] == "John"
    assert "Science 356" in out["source"]


def test_bias_weat_rows_equal_the_library():
    out = run_json("bias", "weat", "weat6", "--vectors", "glove-6b-50d")
    (row,) = out["rows"]
    assert list(row) == KEYS
    lib = weat_table(load_vectors("glove-6b-50d"), get_test("career_family").sets)
    assert row == json.loads(json.dumps(lib.as_dict()))
    assert (row["exact"], row["permutations"], row["layer"]) == (True, 12870, 0)
    assert out["published"] == [{"test": "career_family", "n": 8, "d": 1.81, "p": 0.001}]


def test_bias_weat_all_and_the_table_view():
    out = run_json("bias", "weat", "all", "--permutations", "100")
    assert [r["test"] for r in out["rows"]] == list(TESTS)
    assert out["rows"][0]["missing"]["X"] == ["gladiola"]
    shown = runner.invoke(app, ["bias", "weat", "flowers_insects", "--permutations", "100"])
    assert shown.exit_code == 0, shown.output
    assert "gladiola" in shown.output and "1.50" in shown.output  # missing word, published d


def test_bias_weat_with_a_sets_file(tmp_path):
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps({"X": ["man", "boy", "Xyzzyq"], "Y": ["woman", "girl"],
                                "A": ["engineer", "doctor"], "B": ["nurse", "teacher"]}))
    (row,) = run_json("bias", "weat", "--sets", str(path), "--ddof", "0")["rows"]
    assert row["test"] == "jobs" and row["missing"]["X"] == ["Xyzzyq"] and row["n_x"] == 2
    assert (row["exact"], row["permutations"]) == (True, 6)  # C(4, 2) partitions of the 4 targets
    named = tmp_path / "career_family.json"  # a paper test's name on other words: no published figures
    named.write_text(path.read_text())
    assert run_json("bias", "weat", "--sets", str(named))["published"] == []
    assert row["p_value"] * 6 == pytest.approx(round(row["p_value"] * 6))


@pytest.mark.parametrize("args, message", [
    (["bias", "weat"], "name a test"),
    (["bias", "weat", "carer_family"], "did you mean 'career_family'"),
    (["bias", "weat", "weat1", "--sets", "x.json"], "not both"),
    (["bias", "weat", "weat1", "--case", "upper"], "valid values: auto, exact, lower"),
    (["bias", "weat", "weat1", "--ddof", "2"], "--ddof must be a whole number from 0 to 1"),
    (["bias", "weat", "weat6", "--case", "exact"], "set X needs at least 2 word"),
    (["bias", "weat", "--sets", "/nonexistent/mine.json"], "no such sets file"),
])
def test_bad_input_exits_2_with_one_line(args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert message in result.output and result.output.count("error:") == 1
