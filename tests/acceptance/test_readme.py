"""The README is the program's: every command line of every code block runs, in the README's
order, in one folder, as a newcomer types it, and prints what the README shows.

- ``$ contextlens ...`` lines of ``text`` blocks run and print, number for number, what the
  README shows under them (numbers compared as printed, ``0.862`` is ``0.862``; durations
  left out; a block may show the start of the output);
- every line of an ``sh`` block runs: ``contextlens ...`` in this process, any other line
  (``echo ... > mine.json``) with bash, ``make TARGET`` as its own recipe says
  (``make -n``): the recipe's ``contextlens`` commands run, and ``make test`` is checked to
  run pytest (it would run this test); ``contextlens lab`` serves, in a process of its own,
  until its page answers;
- ``python`` blocks run: the one with ``>>>`` as doctests, the others as scripts;
- the ``contextlens ...`` commands quoted in the prose name real commands and options.

A later line reads what an earlier one wrote (``bank.npz``, ``usages.lance``), as for the
reader. Where a real run takes long, the data is smaller, never the command: the data
folder (CONTEXTLENS_DATA) is a copy whose WiC has its first lines and whose corpora hold
only lines with the words the commands ask about (``tests/readme_lines.py``), ``corpus/`` is
such a corpus, and the lab is given a free port (``--port 0``) for the one the README names.
"""

from __future__ import annotations

import doctest
import io
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import traceback
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from tests import readme_lines
from tests.missing import missing, need, need_model
from tests.readme_lines import README, Block, Command, blocks, commands, from_root, reader_env, reader_folder

NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?")
DURATION = re.compile(r"\d+(?:\.\d+)? s\b")
SHELL = re.compile(r"[|&;<>$`]")  # a line bash must run
INLINE = re.compile(r"`(contextlens [^`]+)`")


def numbers(text: str) -> list[str]:
    """The numbers of ``text`` as printed, durations left out.

    >>> numbers("wrote bank.npz: 34 words × 34 dims (counts, 0.01 s)\\n│ money │  0.115 │ +0.581 │")
    ['34', '34', '0.115', '+0.581']
    """
    return NUMBER.findall(DURATION.sub("", text))


def make_recipe(target: str) -> list[str]:
    """The command lines ``make TARGET`` runs, its set-up (the virtual environment) left out."""
    if shutil.which("make") is None:
        missing("make is not installed: apt-get install make")
    return readme_lines.make_recipe(target)


TEXT = README.read_text(encoding="utf-8")
COMMANDS = commands(TEXT)


def test_the_readme_has_its_commands():
    names = {c.args[1] for c in COMMANDS if c.args[0] == "contextlens"}
    assert {"static", "contextualize", "compare", "senses", "eval", "bias", "index", "lab"} <= names
    assert {c.block for c in COMMANDS} == {"text", "sh"} and len(COMMANDS) >= 30
    assert any(c.text.startswith("echo '{") and "\n" in c.text and "> mine.json" in c.text for c in COMMANDS)
    assert {b.language for b in blocks(TEXT)} <= {"text", "sh", "python"}, "a block no test runs"


@dataclass
class Outcome:
    """How a README command line ran: its exit code, what it printed, and how it was run."""

    code: int
    stdout: str
    stderr: str
    how: str


class Reader:
    """Runs the README's lines one after the other in one folder, as a reader would."""

    def __init__(self, folder: Path, env: dict[str, str], monkeypatch):
        self.folder, self.env, self.mp = folder, env, monkeypatch

    def run(self, command: Command) -> Outcome:
        args = command.args
        if args[0] == "make":
            return self.make(args[1])
        if args[0] != "contextlens" or SHELL.search(command.text.split("#")[0]):
            proc = subprocess.run(["bash", "-c", command.text], cwd=self.folder, env=self.env,
                                  capture_output=True, text=True, timeout=600)
            return Outcome(proc.returncode, proc.stdout, proc.stderr, "bash")
        return self.contextlens(list(args[1:]))

    def contextlens(self, args: list[str]) -> Outcome:
        if args[0] == "lab":
            return self.lab(args)
        from contextlens.cli import app

        args = from_root(args)  # run from the repository root
        result = CliRunner().invoke(app, args)
        crash = ""
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            crash = "".join(traceback.format_exception(result.exception))  # the next lines still run
        return Outcome(result.exit_code, result.stdout, result.stderr + crash, "contextlens")

    def make(self, target: str) -> Outcome:
        recipe = make_recipe(target)
        if target == "test":  # it runs this very test: check what it runs
            ok = any("pytest" in line for line in recipe)
            return Outcome(0 if ok else 1, "\n".join(recipe), "", "make -n")
        runs = [shlex.split(line) for line in recipe if "/contextlens " in f"{line} "]
        assert runs, f"make {target} runs no contextlens command: {recipe}"
        outcomes = [self.contextlens(run[1:]) for run in runs]
        failed = [o for o in outcomes if o.code != 0]
        last = (failed or outcomes)[-1]
        return Outcome(last.code, last.stdout, last.stderr, f"make {target}: {' | '.join(recipe)}")

    def lab(self, args: list[str]) -> Outcome:
        """Serve the lab in its own process (on a free port), fetch its page, stop it."""
        args = [*args]
        if "--port" in args:
            args[args.index("--port") + 1] = "0"
        else:
            args += ["--port", "0"]
        proc = subprocess.Popen([sys.executable, "-m", "contextlens", *args], cwd=self.folder, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watchdog = threading.Timer(600, proc.kill)  # a lab that never says where it serves is stopped
        watchdog.start()
        try:
            line = proc.stdout.readline()
            url = re.search(r"http://127\.0\.0\.1:\d+/", line)
            page = ""
            if url:
                with urllib.request.urlopen(url.group(0), timeout=120) as r:
                    page = r.read().decode()
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=60)
            out, err = proc.communicate()
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
        ok = url is not None and "contextlens" in page and code in (0, -signal.SIGTERM)
        return Outcome(0 if ok else 1, line + out, err, "lab, served and stopped")


@pytest.fixture(scope="module")
def readme_run(tmp_path_factory, data_dir) -> dict[int, Outcome]:
    """Every command line of the README run in order in one folder, at the width the README
    was printed at: ``{line: Outcome}``."""
    need("torch")
    for name in {c.args[c.args.index(flag) + 1] for c in COMMANDS for flag in ("--model", "-m")
                 if flag in c.args}:
        need_model(name)
    folder = tmp_path_factory.mktemp("reader")
    small = reader_folder(folder, data_dir, tmp_path_factory.mktemp("data") / "small")
    env = reader_env(small)
    ran = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        mp.setenv("COLUMNS", "80")
        mp.setenv("CONTEXTLENS_DATA", str(small))
        reader = Reader(folder, env, mp)
        for command in COMMANDS:
            ran[command.line] = reader.run(command)
        for block in blocks(TEXT):  # the Python scripts (not the doctests: their own test)
            if block.language == "python" and ">>>" not in block.text:
                exec(compile(block.text, f"{README}:{block.line}", "exec"), {"__name__": "readme"})
        ran["files"] = sorted(str(p.relative_to(folder)) for p in folder.rglob("*")
                              if "lance" not in p.parts[-1])
    return ran


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_a_readme_command_runs_as_written(command, readme_run):
    done = readme_run[command.line]
    assert done.code == 0, (
        f"README line {command.line}: {command.text}\n({done.how})\n{done.stdout}\n{done.stderr}"
    )
    assert "Traceback" not in done.stderr and "Warning" not in done.stderr, done.stderr
    if command.block != "text":
        return
    shown, got = numbers(command.shown), numbers(done.stdout)
    assert shown, f"README line {command.line} shows no numbers under {command.text}"
    assert got[: len(shown)] == shown, (
        f"README line {command.line} shows:\n{command.shown}\nthe command printed:\n{done.stdout}"
    )


def test_the_python_scripts_of_the_readme_wrote_their_files(readme_run):
    assert "bank.html" in readme_run["files"]


def test_the_index_example_chains_into_ceat(readme_run):
    """Issue 20 item 9: the index the README builds feeds the CEAT line that reads it."""
    ceat = next(c for c in COMMANDS if c.args[:3] == ("contextlens", "bias", "ceat") and "--db" in c.args)
    build = next(c for c in COMMANDS if c.args[:3] == ("contextlens", "index", "build"))
    assert (build.line < ceat.line
            and build.args[build.args.index("--db") + 1] == ceat.args[ceat.args.index("--db") + 1])
    out = readme_run[ceat.line].stdout
    assert "career_family" in out and "CEAT" in out


def test_make_demo_writes_the_report_the_readme_names(readme_run):
    assert "out/demo/report.md" in readme_run["files"]


def from_python() -> Block:
    section = TEXT.index("\n### From Python\n")
    end = TEXT.index("\n#", section + 1)
    return next(b for b in blocks(TEXT) if b.language == "python" and ">>>" in b.text
                and section < TEXT.index(b.text) < end)


def test_the_from_python_examples_run():
    need("torch")
    need_model("minilm")
    block = from_python()
    test = doctest.DocTestParser().get_doctest(block.text, {}, "README.md (From Python)", str(README),
                                               block.line - 1)
    assert len(test.examples) >= 10
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    runner.run(test, out=report.write)
    assert runner.failures == 0, report.getvalue()


def _command_of(words: list[str]):
    """The click command the words name (``bias ceat ...``) and the words after its name."""
    from contextlens.cli import app

    cmd = typer.main.get_command(app)
    while words and hasattr(cmd, "commands") and words[0] in cmd.commands:
        cmd, words = cmd.commands[words[0]], words[1:]
    return cmd, words


@pytest.mark.parametrize("mention", sorted(set(INLINE.findall(TEXT))))
def test_a_command_quoted_in_the_prose_names_real_options(mention):
    """`contextlens static build CORPUS --method ppmi-svd -o vectors.npz` and the like: the
    command exists and takes every option named (placeholders such as CORPUS are fine)."""
    cmd, rest = _command_of(shlex.split(mention)[1:])
    assert not hasattr(cmd, "commands"), f"{mention!r} names no command"
    options = {o for p in cmd.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}
    named = {w.split("=")[0] for w in rest if w.startswith("-") and not re.fullmatch(r"-\d.*", w)}
    assert named <= options, f"{mention!r}: {sorted(named - options)} are not options of it"


def test_every_command_that_prints_results_takes_json():
    """The README: "Every command that prints results takes --json" (the lab serves, the demo
    writes a report, models install runs pip)."""
    from tests.integration.test_cli_options import commands

    without = {name for name, cmd in commands() if not any("--json" in getattr(p, "opts", ())
                                                           for p in cmd.params)}
    assert without == {"lab", "demo", "models install"}
