"""Progress goes to stderr only, and ``--progress`` shows it where stderr is no terminal (a
log): the CLI's spinners as a start and an end line, library steps with counts and the time
left (issue 23 §2). The command runs in a process of its own, stdout and stderr captured
apart, as a user's log would have them."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

from rich.progress import TextColumn, TimeRemainingColumn

from contextlens.cli import _common
from contextlens.progress import Report

ARGS = ["neighbours", "bank", "--in", "We sat on the bank of the river.", "--json"]


def run(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "contextlens", *args], capture_output=True, text=True,
                          env=os.environ, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_progress_is_on_stderr_only_and_the_option_adds_the_spinners_lines():
    plain, forced = run(*ARGS), run("--progress", *ARGS)
    for proc in (plain, forced):
        found = json.loads(proc.stdout)  # stdout is the JSON and nothing else
        assert found["word"] == "bank" and found["neighbours"]
        assert "reference words alone" not in proc.stdout and "finding" not in proc.stdout
    # no terminal, no --progress: the spinner draws nothing
    assert "finding the neighbours" not in plain.stderr
    lines = forced.stderr.splitlines()
    assert lines[0] == "finding the neighbours of 'bank'...", lines
    assert (lines[-1].startswith("finding the neighbours of 'bank': done in ")
            and lines[-1].endswith(" s")), lines
    assert any(line.startswith("encoding 20,000 reference words alone") for line in lines), lines


def test_a_forced_display_prints_counts_and_time_left_every_second(monkeypatch):
    shown = []
    monkeypatch.setattr(_common, "line", lambda message, style=None: shown.append(message))
    monkeypatch.setattr(_common, "err", lambda: type("Console", (), {"is_terminal": False})())
    monkeypatch.setattr(_common, "FORCED_EVERY", 0.0)
    display = _common.ProgressDisplay()

    def emit(state, done, seconds):
        record = logging.LogRecord("contextlens.progress", logging.INFO, __file__, 1, "", None, None)
        record.progress = Report(7, "encoding reference words", state, done, 20000, "words", None, seconds)
        display.emit(record)

    emit("start", 0, 0.0)
    emit("advance", 5000, 21.7)
    assert shown == ["encoding reference words: 0 of 20,000 words..."]  # not forced: 10 s between lines
    display.forced = True
    emit("advance", 10000, 40.0)
    assert shown[-1] == "encoding reference words: 10,000 of 20,000 words, 0:40 left"
    emit("end", 20000, 80.0)
    assert shown[-1] == "encoding reference words: done in 80.0 s"


WORKED = Path(__file__).resolve().parents[2] / "src" / "contextlens" / "data" / "worked_example.txt"


def test_a_commands_own_bar_is_plain_lines_with_the_option_and_json_stays_alone(tmp_path):
    args = ["static", "build", str(WORKED), "--method", "counts", "--window", "3", "--min-count", "1",
            "-o", str(tmp_path / "bank.npz"), "--json"]
    plain, forced = run(*args), run("--progress", *args)
    assert json.loads(forced.stdout)["words"] == json.loads(plain.stdout)["words"] == 34
    assert "building counts" not in plain.stderr
    lines = forced.stderr.splitlines()
    assert "building counts..." in lines, lines
    assert [x for x in lines if x.startswith("building counts: done in ")
            and x.endswith(" s (16 sentences)")], lines


def test_the_commands_bar_shows_on_a_terminal_with_json_too(monkeypatch):
    """--json goes to stdout: the bar on stderr is no reason to hide the progress."""
    from rich.console import Console

    screen = io.StringIO()
    monkeypatch.setattr(_common, "err", lambda: Console(file=screen, force_terminal=True, width=100))
    bar = _common.work_bar(TextColumn("{task.description}"))
    assert not bar.disable and any(isinstance(c, TimeRemainingColumn) for c in bar.columns)
    assert _common.work_bar(TextColumn("{task.description}"), enabled=False).disable


def test_plain_bar_lines(monkeypatch):
    shown = []
    monkeypatch.setattr(_common, "line", lambda message, style=None: shown.append(message))
    monkeypatch.setattr(_common, "FORCED_EVERY", 0.0)
    with _common.PlainBar() as bar:
        task = bar.add_task("[bold]indexing", total=None, unit="sentences", usages=0)
        bar.update(task, completed=1200, usages=40)
    assert shown[0] == "indexing..." and shown[1].startswith("indexing: 1,200 sentences, ")
    assert shown[-1].startswith("indexing: done in ") and shown[-1].endswith(" s (1,200 sentences)")
