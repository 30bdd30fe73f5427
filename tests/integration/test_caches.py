"""The caches through their entry points: the lab's neighbours view over a static table
writes nothing however many settings it is asked with (it once left 10 MB per new alpha or
scale), and ``contextlens cache info|clear`` report and empty every cache, keeping what
another process uses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from contextlens.cli import app
from contextlens.disk_cache import KINDS, DiskCache
from tests.missing import need

runner = CliRunner()


def tree_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def test_twenty_lab_requests_with_new_settings_leave_the_cache_as_it_was(tmp_path, monkeypatch):
    need("fastapi")
    need("httpx")
    from fastapi.testclient import TestClient

    from contextlens.analysis import neighbours
    from contextlens.web import create_app

    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))
    words = neighbours.reference_words(2000)  # the 2,000 most frequent of the 20,000: ten times faster
    monkeypatch.setattr(neighbours, "reference_words", lambda n=None: words)
    client = TestClient(create_app(), raise_server_exceptions=False, base_url="http://127.0.0.1")
    sentence = "We sat on the bank of the river."
    sizes = []
    for i in range(20):
        body = ({"encoder": "average", "alpha": round(0.05 * i, 2)} if i % 2 else
                {"encoder": "attention", "include_self": True, "scale": round(0.1 + 0.05 * i, 2)})
        resp = client.post("/api/views/neighbours",
                           json={**body, "sentence": sentence, "word": "bank", "k": 5})
        assert resp.status_code == 200, resp.text
        assert len(resp.json()["view"]["neighbours"]) == 5
        sizes.append(tree_bytes(tmp_path))
    assert len(set(sizes)) == 1  # after the first request (the table's prepared copy, maybe): nothing more
    assert DiskCache("neighbours").entries() == []


def run(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


HOLD = textwrap.dedent("""
    import sys
    from contextlens.disk_cache import DiskCache
    lease = DiskCache("onnx").use(sys.argv[1])
    print("held", flush=True)
    sys.stdin.read()
""")


@pytest.fixture
def caches(tmp_path, monkeypatch) -> Path:
    """A cache root with an entry in three caches (and the default data folder beside them)."""
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))
    for name, entry, size in [("onnx", "bert-a", 3000), ("onnx", "bert-b", 1000), ("neighbours", "ref", 500)]:
        folder = tmp_path / name / entry
        folder.mkdir(parents=True)
        (folder / "data.bin").write_bytes(b"x" * size)
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "semcor-x-v1.pickle").write_bytes(b"p" * 200)
    (tmp_path / "data" / "wic").mkdir(parents=True)
    (tmp_path / "data" / "wic" / "train.txt").write_text("not a cache")
    return tmp_path


def test_cache_info(caches, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_NEIGHBOURS", "2 MiB")
    got = json.loads(run("cache", "info", "--json"))
    assert got["root"] == str(caches)
    rows = {c["name"]: c for c in got["caches"]}
    assert list(rows) == list(KINDS)
    assert {k: rows["onnx"][k] for k in ("entries", "bytes", "limit", "in_use", "location")} == {
        "entries": 2, "bytes": 4000, "limit": 4 * 2**30, "in_use": 0, "location": str(caches / "onnx")}
    assert rows["neighbours"]["limit"] == 2 * 2**20 and rows["neighbours"]["setting"] == \
        "CONTEXTLENS_CACHE_LIMIT_NEIGHBOURS"
    assert (rows["datasets"]["entries"], rows["datasets"]["bytes"]) == (1, 200)
    text = run("cache", "info")
    assert "onnx" in text and "3.9 KiB" in text and "2.0 MiB" in text
    assert "CONTEXTLENS_CACHE_LIMIT_<NAME>" in text
    assert json.loads(run("cache", "info", "onnx", "--json"))["caches"][0]["name"] == "onnx"


def test_cache_clear_keeps_what_another_process_uses(caches):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "CONTEXTLENS_CACHE": str(caches)}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "bert-a"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert json.loads(run("cache", "info", "onnx", "--json"))["caches"][0]["in_use"] == 1
        text = run("cache", "clear", "onnx")
        assert "removed 1 entry (1000 B)" in text and "1 in use kept (bert-a)" in text
        assert sorted(p.name for p in (caches / "onnx").iterdir() if not p.name.startswith(".")) == ["bert-a"]
        assert (caches / "neighbours" / "ref").is_dir()  # another cache: untouched
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    got = json.loads(run("cache", "clear", "--json"))["cleared"]
    removed = {c["name"]: c["removed"] for c in got if c["removed"]}
    assert removed == {"onnx": 1, "neighbours": 1, "datasets": 1}
    assert all(DiskCache(name).entries() == [] for name in KINDS)
    assert (caches / "data" / "wic" / "train.txt").read_text() == "not a cache"


@pytest.mark.parametrize("args, message", [
    (["cache", "clear", "onx"], "unknown cache 'onx' (did you mean 'onnx'?)"),
    (["cache", "info", "tabels"], "unknown cache 'tabels' (did you mean 'tables'?)"),
])
def test_a_bad_cache_name_is_one_line(caches, args, message):
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output


def test_a_bad_bound_is_one_line_naming_the_variable(caches, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_ONNX", "four gigs")
    result = runner.invoke(app, ["cache", "info"])
    assert result.exit_code == 2 and "CONTEXTLENS_CACHE_LIMIT_ONNX='four gigs' is not a size" in result.output


@settings(max_examples=40, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.one_of(st.sampled_from(["", "onnx", "ONNX", "\udcff", "x" * 5000, "../onnx", "data", "-"]),
                      st.text(max_size=12)),
       command=st.sampled_from(["info", "clear"]), as_json=st.booleans())
def test_any_cache_name_exits_0_or_2_and_clears_nothing_else(caches, name, command, as_json):
    result = runner.invoke(app, ["cache", command, name, *(["--json"] if as_json else [])])
    assert result.exit_code in (0, 2) and "Traceback" not in result.output, result.output
    if as_json and result.exit_code == 0:
        json.loads(result.stdout)
    assert (caches / "data" / "wic" / "train.txt").read_text() == "not a cache"
