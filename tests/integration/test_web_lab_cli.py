"""`contextlens lab`: localhost by default, a taken port in one line, --port 0 printing the real
port, the browser opened (or not), the Host names it answers to, and a stop within seconds
on SIGTERM even while a UMAP runs."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from tests.missing import need

need("fastapi")
need("uvicorn")

from fastapi.testclient import TestClient  # noqa: E402


@pytest.fixture
def lab_cli(monkeypatch):
    import typer
    from typer.testing import CliRunner

    from contextlens.cli import lab
    from contextlens.web import serve as serve_mod

    cli = typer.Typer()
    cli.callback()(lambda: None)  # keep `lab` a sub-command, as in the real app
    lab.register(cli)
    calls, opened = [], []

    def fake_serve(app, sock, on_started=None):
        calls.append({"app": app, "port": sock.getsockname()[1], "host": sock.getsockname()[0]})
        sock.close()
        if on_started is not None:
            on_started()

    monkeypatch.setattr(serve_mod, "serve", fake_serve)
    monkeypatch.setattr(lab.webbrowser, "open", lambda url: opened.append(url) or True)
    monkeypatch.delenv("BROWSER", raising=False)
    return lambda *args: (CliRunner().invoke(cli, ["lab", *args]), calls, opened)


def test_port_0_binds_localhost_and_prints_the_real_port(lab_cli):
    result, calls, _ = lab_cli("--port", "0", "--no-browser")
    assert result.exit_code == 0, result.output
    assert calls[0]["host"] == "127.0.0.1" and calls[0]["port"] > 0
    assert f"contextlens lab on http://127.0.0.1:{calls[0]['port']}/" in result.output


def test_a_taken_port_is_one_line_and_exit_2(lab_cli):
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        result, calls, _ = lab_cli("--port", str(port), "--no-browser")
    assert result.exit_code == 2 and not calls
    lines = result.output.strip().splitlines()
    assert lines == [f"error: port {port} on 127.0.0.1 is in use (another lab or server?); choose another "
                     "with "
                     "--port N, or --port 0 for a free one"]


def test_the_browser_opens_where_there_is_a_screen(lab_cli, monkeypatch):
    monkeypatch.setenv("DISPLAY", ":0")
    result, calls, opened = lab_cli("--port", "0")
    assert result.exit_code == 0 and opened == [f"http://127.0.0.1:{calls[0]['port']}/"]
    result, calls, opened = lab_cli("--port", "0", "--no-browser")
    assert result.exit_code == 0 and len(calls) == 2 and len(opened) == 1  # not opened again


def test_without_a_screen_it_says_to_open_the_url(lab_cli, monkeypatch):
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    result, calls, opened = lab_cli("--port", "0")
    url = f"http://127.0.0.1:{calls[0]['port']}/"
    assert opened == [] and f"no browser to open here: open {url} yourself" in result.output


def test_help_says_what_it_does(lab_cli):
    result, _, _ = lab_cli("--help")
    assert "open it in your browser" in result.output and "--no-browser" in result.output


def test_a_remote_host_needs_the_flag_and_names_its_hosts(lab_cli):
    result, calls, _ = lab_cli("--host", "0.0.0.0", "--no-browser")
    assert result.exit_code == 2 and not calls and "--allow-remote" in result.output
    result, calls, _ = lab_cli("--host", "0.0.0.0", "--port", "0", "--allow-remote", "--no-browser",
                               "--trusted-host", "lab.example.org")
    assert result.exit_code == 0 and calls[0]["host"] == "0.0.0.0"
    assert "no authentication" in result.output
    app = calls[0]["app"]
    assert TestClient(app, base_url="http://lab.example.org:8000").get("/api/status").status_code == 200
    assert TestClient(app, base_url="http://evil.example:8000").get("/api/status").status_code == 400
    result, calls, _ = lab_cli("--host", "0.0.0.0", "--port", "0", "--allow-remote", "--no-browser")
    assert "any Host name is accepted" in result.output
    assert TestClient(calls[-1]["app"], base_url="http://evil.example").get("/api/status").status_code == 200


def test_the_local_lab_refuses_a_foreign_host(lab_cli):
    result, calls, _ = lab_cli("--port", "0", "--no-browser")
    app = calls[0]["app"]
    assert TestClient(app, base_url="http://localhost:8000").get("/api/status").status_code == 200
    assert TestClient(app, base_url="http://rebound.example:8000").get("/api/status").status_code == 400


# ---- a real server process --------------------------------------------------------------------
def status(url: str) -> dict:
    with urllib.request.urlopen(f"{url}api/status", timeout=10) as r:
        return json.load(r)


@pytest.mark.slow  # a real lab process: GloVe, the workers' imports and UMAP's start (15-50 s here)
def test_sigterm_stops_the_lab_within_seconds_while_a_umap_runs():
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "contextlens", "lab", "--port", "0", "--no-browser"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        body = json.dumps({"sentences": ["The bank approved my loan.", "We sat on the bank.",
                                         "A bank of snow.",
                                         "The bank raised rates.", "The river bank flooded."],
                           "word": "bank", "encoder": "average", "projection": "umap"}).encode()
        answer = {}

        def ask():
            req = urllib.request.Request(f"{url}api/explore", body, {"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=600) as r:
                    answer["status"] = r.status
            except urllib.error.HTTPError as err:
                answer["status"], answer["body"] = err.code, err.read()
            except OSError as err:  # the connection closed by the stop
                answer["status"] = repr(err)

        threading.Thread(target=ask, daemon=True).start()
        deadline = time.monotonic() + 240
        while status(url)["workers"]["busy"] == 0:  # the UMAP (numba import and compile) is running
            assert time.monotonic() < deadline and "status" not in answer, answer
            time.sleep(0.1)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        took = time.monotonic() - t0
        out = proc.stdout.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert took < 8, f"the lab took {took:.1f} s to stop"
    assert code in (0, -signal.SIGTERM), (code, out)
    assert "Traceback" not in out, out


def test_model_is_repeatable_and_adds_to_the_packaged_models(lab_cli, tmp_path):
    folder = tmp_path / "my-bert"
    folder.mkdir()
    result, calls, _ = lab_cli("--port", "0", "--no-browser", "--model", str(folder), "--model", "mpnet")
    assert result.exit_code == 0, result.output
    state = calls[0]["app"].state.lab
    assert state.model == str(folder) and state.added == [str(folder), "mpnet"]
    names = state.encoder_names()
    assert str(folder) in names and "minilm" in names  # the packaged ones stay
    result, calls, _ = lab_cli("--port", "0", "--no-browser")
    assert result.exit_code == 0 and calls[-1]["app"].state.lab.model == "minilm"


def test_a_typo_in_model_is_one_line(lab_cli):
    result, calls, _ = lab_cli("--port", "0", "--no-browser", "--model", "minlm")
    assert result.exit_code == 2 and "did you mean 'minilm'" in result.output and not calls


@pytest.mark.slow  # a real lab process loading MiniLM (10-40 s here)
def test_sigint_during_a_running_request_is_one_line_and_a_503(tmp_path):
    """Ctrl+C while a request runs in the server (MiniLM building its neighbours reference in a
    fresh cache: minutes) stops the lab in seconds, says so in one line (it printed a 60-line
    traceback and waited for the request: 41 s here), and the request gets the lab's JSON 503."""
    env = {**os.environ, "COLUMNS": "200", "CONTEXTLENS_CACHE": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "contextlens", "lab", "--port", "0", "--no-browser",
                             "--engine", "torch"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    answer = {}
    try:
        url = re.search(r"http://127\.0\.0\.1:\d+/", proc.stdout.readline()).group(0)
        body = json.dumps({"sentence": "We sat on the bank of the river.", "word": "bank",
                           "encoder": "minilm", "layer": 3}).encode()

        def ask():
            req = urllib.request.Request(f"{url}api/views/neighbours", body,
                                         {"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(req, timeout=600) as r:
                    answer["status"] = r.status
            except urllib.error.HTTPError as err:
                answer["status"], answer["body"] = err.code, json.loads(err.read())

        threading.Thread(target=ask, daemon=True).start()
        deadline = time.monotonic() + 240
        while status(url)["resources"]["minilm"]["state"] != "ready":  # loaded: the reference is being built
            assert time.monotonic() < deadline and "status" not in answer, answer
            time.sleep(0.1)
        time.sleep(1)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
        took = time.monotonic() - t0
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert took < 15, f"the lab took {took:.1f} s to stop"
    assert code == 0 and "lab stopped" in out, (code, out, err)
    # the request's own progress ("encoding 20,000 reference words …: 0 of …", "… stopped after") is
    # the log of the work it was doing; stopping the lab adds one line
    stopping = [line for line in err.strip().splitlines()
                if not line.startswith("encoding 20,000 reference words")]
    assert "Traceback" not in err and len(stopping) == 1, err
    # cut short after the grace period (inside a step Python cannot interrupt), or stopped at its next step
    assert "1 request(s) still running were cut short" in err or "the lab is stopping" in err, err
    deadline = time.monotonic() + 10
    while "status" not in answer and time.monotonic() < deadline:
        time.sleep(0.05)
    assert answer.get("status") == 503 and answer["body"]["error"] == "LabClosingError", answer
