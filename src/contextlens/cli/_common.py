"""What every command shares: consoles, error handling, JSON, tables, the help format.

Nothing heavy is imported here at module level (Rich is imported when a console is first
used): ``contextlens --help`` must start at once.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import json
import logging
import math
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import PurePath
from typing import Any

import typer
from typer.core import TyperCommand

from ..errors import ContextLensError, phrase


@functools.cache
def out():
    """The console for results (stdout)."""
    from rich.console import Console

    return Console()


@functools.cache
def err():
    """The console for errors, warnings, progress and spinners (stderr)."""
    from rich.console import Console

    return Console(stderr=True)


class _ConsoleProxy:
    """``console`` / ``err_console`` for modules written before :func:`out` / :func:`err`
    (``cli.lab``): the Console is made on first use, not at import."""

    def __init__(self, get):
        self._get = get

    def __getattr__(self, name: str):
        return getattr(self._get(), name)


console, err_console = _ConsoleProxy(out), _ConsoleProxy(err)


def setup_logging(verbose: bool, progress_lines: bool = False) -> None:
    """Warnings (with ``verbose``: what the library does) on stderr, and the library's
    progress reports drawn there by :class:`ProgressDisplay` (``progress_lines``: the
    ``--progress`` option). The consoles are made afresh for each command, so that each
    reads the width it prints at (``COLUMNS``)."""
    out.cache_clear()
    err.cache_clear()
    progress = logging.getLogger(PROGRESS_LOGGER)
    progress.setLevel(logging.INFO)
    progress.propagate = False  # drawn, not also logged as lines
    display().forced = progress_lines
    progress.handlers = [display()]
    if not verbose:  # warnings only: the plain handler, no Rich import
        logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s", force=True)
        return
    from rich.logging import RichHandler

    logging.basicConfig(level=logging.INFO, format="%(message)s", force=True,
                        handlers=[RichHandler(console=err(), show_path=False)])


PROGRESS_LOGGER = "contextlens.progress"  # progress.LOG (not imported here: the CLI starts light)
PLAIN_EVERY = 10.0  # seconds between two progress lines of one step when stderr is not a terminal
FORCED_EVERY = 1.0  # the same with --progress


class ProgressDisplay(logging.Handler):
    """The library's progress reports (:mod:`contextlens.progress`) and the CLI's own
    spinners, drawn on stderr.

    On a terminal: a live line per running step (what, how far, the time so far), erased
    when it ends; a step that happens once then leaves one line saying what it did, in
    how long and where its result is kept. Elsewhere (a pipe, a file, a test): a line when
    a library step starts and when it ends, and one every :data:`PLAIN_EVERY` seconds while
    it runs; the CLI's spinners draw nothing there. ``--progress`` (:attr:`forced`) makes
    that a line every :data:`FORCED_EVERY` second with the count and the time left, and
    the spinners' work a line when it starts and one when it ends, e.g. for a log file.
    Nothing is ever drawn on stdout."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.forced = False  # --progress: every step and spinner as plain lines where no live display is
        self._bar = None  # the Rich Progress while anything runs (terminal)
        self._tasks: dict[Any, Any] = {}  # step id (or spinner key) -> Rich task id
        self._printed: dict[int, float] = {}  # step id -> when its last plain line was printed
        self._unlive: set[int] = set()  # steps drawn as plain lines on a terminal (no live display there)

    def emit(self, record: logging.LogRecord) -> None:
        r = getattr(record, "progress", None)
        if r is None:
            return
        try:
            if err().is_terminal and r.id not in self._unlive:
                self._live(r)
            else:
                self._plain(r)
        except Exception:  # noqa: BLE001 - logging's rule: a handler never raises
            self.handleError(record)

    def _plain(self, r) -> None:
        from ..progress import describe

        now = time.monotonic()
        if r.state == "start":
            self._printed[r.id] = now
            line(describe(r) + "...")
        elif r.state == "advance":
            if now - self._printed.get(r.id, now) >= (FORCED_EVERY if self.forced else PLAIN_EVERY):
                self._printed[r.id] = now
                left = _left(r)
                line(describe(r) + (f", {left}" if left else ""))
        else:
            self._printed.pop(r.id, None)
            self._unlive.discard(r.id)
            line(describe(r))

    def _live(self, r) -> None:
        from ..progress import describe

        if r.state == "start":
            if not self.begin(r.id, f"{r.what} ({r.once})" if r.once else r.what, r.total, _count(r)):
                self._unlive.add(r.id)
                self._plain(r)
        elif r.state == "advance":
            if r.id in self._tasks:
                self._bar.update(self._tasks[r.id], completed=r.done, total=r.total, count=_count(r))
        else:
            self.finish(r.id)
            if r.state == "end" and r.once:
                line(describe(r), style="dim")

    def begin(self, key: Any, description: str, total: int | None = None, count: str = "") -> bool:
        """Show a live line for ``key`` (a terminal only); False when no live display can
        start (a Rich before 14.1 cannot draw one inside a command's own progress bar)."""
        if self._bar is None:
            from rich.errors import LiveError
            from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(bar_width=20),
                           TextColumn("{task.fields[count]}"), TimeElapsedColumn(), console=err(),
                           transient=True)
            try:
                bar.start()
            except LiveError:
                return False
            self._bar = bar
        self._tasks[key] = self._bar.add_task(description, total=total, count=count)
        return True

    def finish(self, key: Any) -> None:
        """Take ``key``'s live line away; the display stops with the last one."""
        task = self._tasks.pop(key, None)
        if task is None:
            return
        self._bar.remove_task(task)
        if not self._tasks:
            self._bar.stop()
            self._bar = None


def _count(r) -> str:
    """How far a step is, for its live line: ``"4,096 / 20,000 words, 0:31 left"``, or nothing."""
    unit = f" {r.unit}" if r.unit else ""
    if r.total is not None:
        left = _left(r)
        return f"{r.done:,} / {r.total:,}{unit}" + (f", {left}" if left else "")
    return f"{r.done:,}{unit}" if r.done else ""


def _left(r) -> str:
    """The time left of a step as ``"1:05 left"`` (nothing when it cannot be told).

    >>> from contextlens.progress import Report
    >>> _left(Report(1, "encoding", "advance", 5000, 20000, "words", None, 21.7))
    '1:05 left'
    """
    from ..progress import time_left

    seconds = time_left(r)
    if seconds is None:
        return ""
    minutes, secs = divmod(round(seconds), 60)
    return (f"{minutes // 60}:{minutes % 60:02d}:{secs:02d} left" if minutes >= 60
            else f"{minutes}:{secs:02d} left")


@functools.cache
def display() -> ProgressDisplay:
    """The one progress display of this process."""
    return ProgressDisplay()


def line(message: str, style: str | None = None) -> None:
    """Print one plain line on stderr (no markup is read in it)."""
    from rich.text import Text

    err().print(Text(message, style=style or ""), soft_wrap=True, highlight=False)


def fail(message: str) -> typer.Exit:
    """Print ``error: message`` as one plain line on stderr (no markup is read in it)."""
    from rich.text import Text

    err().print(Text.assemble(("error:", "bold red"), " ", message), soft_wrap=True)
    return typer.Exit(2)


def _os_message(e: OSError) -> str:
    where = e.filename if e.filename is not None else "a file"
    what = e.strerror or e.__class__.__name__
    return f"{where}: {what}; check that the path exists and that you may read or write there"


def _label(name: str, default: Any) -> str:
    """How the user wrote a parameter: its long flag, else its metavar (``TEXT``)."""
    decls = getattr(default, "param_decls", None) or ()
    flag = next((d for d in decls if d.startswith("--")), decls[0] if decls else None)
    return flag or getattr(default, "metavar", None) or name.upper()


def check_text(label: str, value: Any) -> None:
    r"""Text and paths the command line gave must be UTF-8 (not lone surrogates from
    undecodable bytes) and paths free of NUL, else one clear error.

    >>> check_text("--word", "bank")
    >>> check_text("--word", "ba\udcffnk")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: --word: 'ba\udcffnk' is not valid UTF-8 text; re-encode it as UTF-8
    """
    from ..errors import InputError

    for v in value if isinstance(value, list | tuple) else (value,):
        if not isinstance(v, str | PurePath):
            continue
        text = str(v)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(f"{label}: {text!r} is not valid UTF-8 text; re-encode it as UTF-8") from None
        if isinstance(v, PurePath) and "\0" in text:
            raise InputError(f"{label}: a path cannot contain a NUL character, got {text!r}")


#: the library's parameters whose flag is not ``--NAME VALUE`` (an :func:`~contextlens.errors.ask` in a
#: message)
CLI_FLAGS = {("missing", "skip"): "add --skip-missing", ("sentences",): "give --sentences FILE or -s TEXT"}


def cli_phrase(name: str, values: list) -> str:
    """How the CLI words a message's instruction to set the library parameter ``name``.

    >>> (cli_phrase("method", ["attention", "average"]), cli_phrase("missing", ["skip"]),
    ...  cli_phrase("layer", []))
    ('use --method attention or average', 'add --skip-missing', 'give --layer')
    """
    if (name, *values) in CLI_FLAGS:
        return CLI_FLAGS[(name, *values)]
    flag = "--" + name.replace("_", "-")
    return f"use {flag} " + " or ".join(map(str, values)) if values else f"give {flag}"


def handle_errors(fn: Callable) -> Callable:
    """Run a command: check its text, bounded options and declared paths (no output may be an
    input: ``options.check_paths``), then turn a ContextLensError or an OSError (a path the
    user gave) into one clear line on stderr and exit code 2."""
    params = inspect.signature(fn).parameters
    labels = {name: _label(name, p.default) for name, p in params.items()}
    checks = {name: p.default.check for name,
              p in params.items() if callable(getattr(p.default, "check", None))}
    roles = {name: p.default.path_role for name, p in params.items() if getattr(p.default, "path_role", None)}

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            for name, value in kwargs.items():
                if name in labels:
                    check_text(labels[name], value)
                if name in checks and value is not None:
                    checks[name](value)
            if roles:
                from .options import check_paths

                check_paths([(labels[name], role, kwargs.get(name)) for name, role in roles.items()])
            return fn(*args, **kwargs)
        except ContextLensError as e:
            raise fail(e.cli or phrase(e, cli_phrase)) from None
        except OSError as e:
            raise fail(_os_message(e)) from None

    return wrapper


def print_json(obj: Any) -> None:
    """Print one strict JSON object on stdout (:func:`~contextlens.results.jsonable`: never NaN
    or Infinity)."""
    from ..results import jsonable

    sys.stdout.write(json.dumps(jsonable(obj), ensure_ascii=False, allow_nan=False) + "\n")


def fmt(x: float | None) -> str:
    """A number as a table shows it; an undefined one (None, NaN) as a dash.

    >>> fmt(0.12345), fmt(None), fmt(float("nan"))
    ('0.123', '–', '–')
    """
    return "–" if x is None or not math.isfinite(x) else f"{x:.3f}"


def table(title: str, columns: list[str], rows, left: int | str = 1, widths: dict[int, int] | None = None):
    """A table whose title, headers and cells are plain text (a ``[word]`` in a sentence is
    shown, not read as markup), laid out for the width it is printed at without ever
    cutting a number (:class:`.tables.FitTable`); floats are formatted by :func:`fmt`.
    ``left``: how many first columns are left-aligned (the others right), or one letter
    per column (``"lrl"``); ``widths``: column index -> at most that many characters, on
    one line, cut with an ellipsis (long sentences; never a column of numbers)."""
    from .tables import FitTable

    align = left if isinstance(left, str) else "l" * left + "r" * (len(columns) - left)
    cells = [[fmt(v) if isinstance(v, float) or v is None else str(v) for v in row] for row in rows]
    return FitTable(title, columns, cells, align, widths)


def say(*parts: Any) -> None:
    """Print a line of plain text on stdout (no markup, no highlighting)."""
    from rich.text import Text

    out().print(Text(" ".join(str(p) for p in parts)), soft_wrap=True)


@contextlib.contextmanager
def spinner(message: str) -> Iterator[None]:
    """A live line on stderr while something slow (loading a model) runs, in the one
    progress display, so that a library step inside (de-quantising the model) shows
    under it; nothing when stderr is not a terminal, so stdout (``--json``) is never
    touched. With ``--progress`` (:attr:`ProgressDisplay.forced`) and no terminal: a line
    when it starts and one when it ends, with its time."""
    if not err().is_terminal:
        if not display().forced:
            yield
            return
        start = time.monotonic()
        what = message.rstrip(". ")
        line(f"{what}...")
        yield
        line(f"{what}: done in {time.monotonic() - start:.1f} s")
        return
    key = object()
    display().begin(key, message)
    try:
        yield
    finally:
        display().finish(key)


class PlainBar:
    """:func:`work_bar` where stderr is no terminal but ``--progress`` asks for progress: the
    Rich ``Progress`` calls a command makes (``add_task``, ``update``), told as a plain line
    per task every :data:`FORCED_EVERY` second and one when the work ends."""

    def __init__(self) -> None:
        self._tasks: dict[int, dict] = {}

    def __enter__(self) -> PlainBar:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            for t in self._tasks.values():
                line(f"{t['what']}: done in {time.monotonic() - t['start']:.1f} s ({self._count(t)})")

    def add_task(self, description: str, total: float | None = None, **fields: Any) -> int:
        key = len(self._tasks)
        now = time.monotonic()
        self._tasks[key] = {"what": description.replace("[bold]", ""), "total": total, "completed": 0,
                            "start": now, "printed": now, **fields}
        line(f"{self._tasks[key]['what']}...")
        return key

    def update(self, key: int, **changes: Any) -> None:
        t = self._tasks[key]
        t.update({k: v for k, v in changes.items() if v is not None or k == "total"})
        now = time.monotonic()
        if now - t["printed"] >= FORCED_EVERY:
            t["printed"] = now
            line(f"{self._describe(t)}, {now - t['start']:.0f} s")

    @staticmethod
    def _count(t: dict) -> str:
        """``"1,200 of 5,000 sentences"`` (the unit: a task's ``unit`` field)."""
        done, total, unit = t["completed"], t["total"], f" {t['unit']}" if t.get("unit") else ""
        return (f"{done:,.0f} of {total:,.0f}" if total else f"{done:,.0f}") + unit

    def _describe(self, t: dict) -> str:
        return f"{t['what']}: {self._count(t)}"


def work_bar(*columns: Any, enabled: bool = True):
    """The progress bar of a command's own long work, on stderr: a live Rich ``Progress``
    of ``columns`` (and the time left where a total is known) when stderr is a terminal,
    ``--json`` or not (the JSON goes to stdout); elsewhere plain lines with ``--progress``
    (:class:`PlainBar`), else (or not ``enabled``: no such work this time) nothing."""
    from rich.progress import Progress, TimeRemainingColumn

    if not enabled:
        return Progress(*columns, console=err(), transient=True, disable=True)
    if err().is_terminal:
        return Progress(*columns, TimeRemainingColumn(), console=err(), transient=True)
    if display().forced:
        return PlainBar()
    return Progress(*columns, console=err(), transient=True, disable=True)


@contextlib.contextmanager
def stage_progress() -> Iterator[Callable]:
    """A progress callback for the library's long work, one bar per stage on stderr (`work_bar`):
    ``progress(done, total)`` (stage "encoding") or ``progress(stage, done, total)``."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    with work_bar(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn()) as bar:
        handles: dict = {}

        def progress(*args):
            stage, done, total = args if len(args) == 3 else ("encoding", *args)
            if stage not in handles:
                handles[stage] = bar.add_task(stage, total=total)
            bar.update(handles[stage], completed=done, total=total)

        yield progress


class Command(TyperCommand):
    """Every contextlens command: click's plain help (no markup is read in help text, so
    ``[score]`` stays), arguments shown by their metavar (``TEXT``, ``WORD...``)."""

    def __init__(self, *args, **kwargs):
        kwargs["rich_markup_mode"] = None
        super().__init__(*args, **kwargs)

    def _arguments(self, ctx) -> list:
        return [p for p in self.get_params(ctx) if p.param_type_name == "argument"]

    @staticmethod
    def _metavar(p) -> str:
        name = p.metavar or p.name.upper()
        return name + ("..." if p.nargs != 1 and not p.metavar else "")

    def collect_usage_pieces(self, ctx) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for p in self._arguments(ctx):
            pieces.append(self._metavar(p) if p.required else f"[{self._metavar(p)}]")
        return pieces

    def format_options(self, ctx, formatter) -> None:
        args = [(self._metavar(p), p.help or "") for p in self._arguments(ctx)]
        opts = [rv for p in self.get_params(ctx) if p.param_type_name == "option"
                if (rv := p.get_help_record(ctx)) is not None]
        for title, rows in (("Arguments", args), ("Options", opts)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def add_command(app: typer.Typer, fn: Callable, name: str | None = None, **settings: Any) -> None:
    """Register ``fn`` (a module-level command function) on ``app`` as a :class:`Command`."""
    app.command(name, cls=Command, **settings)(fn)


def group(help: str) -> typer.Typer:
    """A command group (``static``, ``index``...) with the plain help of :class:`Command`."""
    return typer.Typer(help=help, no_args_is_help=True, rich_markup_mode=None)
