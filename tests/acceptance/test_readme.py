"""The README's figures are the program's: every ``$ contextlens ...`` command of the tour
runs (with the packaged models) and prints, number for number, what the README shows; the
"From Python" examples run as doctests.

Numbers are compared as printed (``0.862`` is ``0.862``, not 0.8619 ± something); only
durations (``0.01 s``) are left out. A README block may show the start of a command's
output: its numbers are then the first numbers of the actual output.
"""

from __future__ import annotations

import doctest
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.missing import need, need_model

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
DURATION = re.compile(r"\d+(?:\.\d+)? s\b")


@dataclass(frozen=True)
class Block:
    """A fenced block of the README: its language, first line number and text."""

    language: str
    line: int
    text: str


@dataclass(frozen=True)
class TourCommand:
    """One ``$ contextlens ...`` line of the README (continuations joined) and the output shown under it."""

    line: int
    args: tuple[str, ...]
    shown: str


def blocks(text: str) -> list[Block]:
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("```") and len(lines[i]) > 3:
            start, body = i, []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            found.append(Block(lines[start][3:].strip(), start + 2, "\n".join(body)))
        i += 1
    return found


def tour_commands(text: str) -> list[TourCommand]:
    """The commands of the README's ``text`` blocks, each with the output shown under it.

    >>> tour_commands("```text\\n$ contextlens compare a \\\\\\n    b\\n0.5\\n```\\n")
    [TourCommand(line=2, args=('compare', 'a', 'b'), shown='0.5')]
    """
    commands = []
    for block in blocks(text):
        if block.language != "text":
            continue
        lines = block.text.splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ contextlens "):
                i += 1
                continue
            start, command = i, lines[i][2:]
            while command.endswith("\\"):
                i += 1
                command = command[:-1] + " " + lines[i].strip()
            i += 1
            shown = []
            while i < len(lines) and not lines[i].startswith("$ "):
                shown.append(lines[i])
                i += 1
            commands.append(TourCommand(block.line + start, tuple(shlex.split(command)[1:]), "\n".join(shown)))
    return commands


def numbers(text: str) -> list[str]:
    """The numbers of ``text`` as printed, durations left out.

    >>> numbers("wrote bank.npz: 34 words × 34 dims (counts, 0.01 s)\\n│ money │  0.115 │ +0.581 │")
    ['34', '34', '0.115', '+0.581']
    """
    return NUMBER.findall(DURATION.sub("", text))


TOUR = tour_commands(README.read_text(encoding="utf-8"))


def test_the_readme_has_a_tour():
    names = [c.args[0] for c in TOUR]
    assert {"static", "contextualize", "compare", "senses"} <= set(names) and len(TOUR) >= 6


@pytest.fixture(scope="module")
def tour_output(tmp_path_factory) -> dict[int, tuple[int, str]]:
    """Every tour command run in order in one folder (a later one reads what an earlier
    one wrote), at the width the README was printed at: ``{line: (exit code, output)}``."""
    from contextlens.cli import app

    for name in {c.args[c.args.index("--model") + 1] for c in TOUR if "--model" in c.args}:
        need("torch")
        need_model(name)
    folder = tmp_path_factory.mktemp("tour")
    ran = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        mp.setenv("COLUMNS", "80")
        for command in TOUR:
            args = [str(ROOT / a) if (ROOT / a).is_file() else a for a in command.args]
            result = CliRunner().invoke(app, args)
            ran[command.line] = (result.exit_code, result.stdout)
    return ran


@pytest.mark.parametrize("command", TOUR, ids=[f"line{c.line}-{c.args[0]}" for c in TOUR])
def test_a_tour_command_prints_the_readme_numbers(command, tour_output):
    code, printed = tour_output[command.line]
    assert code == 0, printed
    shown, got = numbers(command.shown), numbers(printed)
    assert shown, f"README line {command.line} shows no numbers under {shlex.join(command.args)}"
    assert got[:len(shown)] == shown, f"README line {command.line} shows:\n{command.shown}\nthe command printed:\n{printed}"


def from_python() -> Block:
    text = README.read_text(encoding="utf-8")
    section = text.index("\n### From Python\n")
    end = text.index("\n#", section + 1)
    return next(b for b in blocks(text) if b.language == "python" and ">>>" in b.text
                and section < text.index(b.text) < end)


def test_the_from_python_examples_run():
    need("torch")
    need_model("minilm")
    block = from_python()
    test = doctest.DocTestParser().get_doctest(block.text, {}, "README.md (From Python)", str(README), block.line - 1)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    runner.run(test, out=report.write)
    assert runner.failures == 0, report.getvalue()
