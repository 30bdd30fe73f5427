"""The one progress protocol: the library's slow steps report on the ``contextlens.progress``
logger and never print; the command line draws the reports on stderr; third-party warnings
(UMAP, tqdm, FAISS) are logged, not shown."""

from __future__ import annotations

import io
import logging
import subprocess
import sys
import time
import warnings

import numpy as np
import pytest

from contextlens import EmbeddingTable, make_encoder, progress
from contextlens.analysis.neighbours import reference_table
from contextlens.progress import step
from contextlens.quiet import quiet_warnings
from tests.missing import need


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)

    @property
    def reports(self):
        return [r.progress for r in self.records if hasattr(r, "progress")]


@pytest.fixture
def listen():
    """``listen(handler)``: the progress records go to ``handler`` only, for this test
    (however an earlier test, a CLI run, left the logger)."""
    log = progress.LOG
    saved = log.level, log.propagate, log.handlers[:]

    def to(handler: logging.Handler) -> logging.Handler:
        log.handlers, log.propagate = [handler], False
        log.setLevel(logging.INFO)
        return handler

    yield to
    log.setLevel(saved[0])
    log.propagate, log.handlers = saved[1], saved[2]


@pytest.fixture
def collect(listen) -> Collect:
    return listen(Collect())


def test_a_step_reports_its_start_each_advance_and_its_end(collect, monkeypatch):
    monkeypatch.setattr(progress, "EVERY", 0.0)
    with step("counting", total=3, unit="blocks", once="once, then cached in /c") as s:
        s.advance()
        s.advance(2)
    reports = collect.reports
    assert [r.state for r in reports] == ["start", "advance", "advance", "end"]
    assert [r.done for r in reports] == [0, 1, 3, 3]
    assert {r.id for r in reports} == {reports[0].id} and {r.total for r in reports} == {3}
    messages = [r.getMessage() for r in collect.records]
    assert messages[0] == "counting: 0 of 3 blocks (once, then cached in /c)"
    assert messages[2] == "counting: 3 of 3 blocks"
    assert messages[-1].startswith("counting: done in ") and messages[-1].endswith(" s (once, then cached in "
                                                                                   "/c)")


def test_advances_are_reported_at_most_every_few_tenths_of_a_second(collect):
    start = time.perf_counter()
    with step("looping", total=100_000) as s:
        for _ in range(100_000):
            s.advance()
    took = time.perf_counter() - start
    advances = [r for r in collect.reports if r.state == "advance"]
    assert len(advances) <= took / progress.EVERY + 1
    assert collect.reports[-1].done == 100_000


def test_a_failed_step_says_it_stopped_and_the_error_goes_on(collect):
    with pytest.raises(ValueError), step("converting"):
        raise ValueError("bad file")
    assert [r.state for r in collect.reports] == ["start", "fail"]
    assert collect.records[-1].getMessage().startswith("converting: stopped after ")


def test_the_library_prints_nothing_when_nobody_listens(listen, capfd):
    listen(logging.NullHandler())
    progress.LOG.handlers, progress.LOG.propagate = [], True
    progress.LOG.setLevel(logging.NOTSET)  # as a library user has it: no handler, the root's level
    with step("quiet", total=1) as s:
        s.advance()
    assert capfd.readouterr() == ("", "")


def test_steps_nest_each_with_its_own_id(collect):
    with step("outer"), step("inner"):
        pass
    reports = collect.reports
    assert [(r.what, r.state) for r in reports] == [("outer", "start"), ("inner", "start"), ("inner", "end"),
                                                    ("outer", "end")]
    assert reports[0].id != reports[1].id


def test_building_the_neighbours_reference_is_a_counted_step_that_happens_once(collect, tmp_path):
    words = ["river", "water", "money", "bank"]
    table = EmbeddingTable(words, [[3, 0.2], [2, 0.1], [0.2, 3], [1, 1]], name="toy")
    enc = make_encoder("attention", vectors=table, include_self=True)
    reference_table(enc, 1, words, root=tmp_path)
    end = collect.reports[-1]
    assert end.state == "end" and end.done == end.total == 4 and end.unit == "words"
    assert end.what.startswith("encoding 4 reference words alone") and "once" in end.once
    before = len(collect.reports)
    reference_table(enc, 1, words, root=tmp_path)  # cached: no step at all
    assert len(collect.reports) == before


def test_de_quantising_a_gguf_model_counts_its_tensors_once(collect, tmp_path):
    need("transformers")
    gguf = need("gguf")
    from contextlens.encoders.model_cache import convert_gguf
    from tests.integration.tiny_models import tiny_gguf

    source = tiny_gguf(tmp_path / "tiny.gguf")
    target = convert_gguf(source, tmp_path / "cache" / "tiny")
    ends = {r.what: r for r in collect.reports if r.state == "end"}
    outer = ends["de-quantising tiny.gguf to float32"]
    assert outer.once == f"once, then kept in {target}"
    tensors = ends["reading and de-quantising its weights"]
    assert tensors.total == tensors.done == len(gguf.GGUFReader(source).tensors) and tensors.unit == "tensors"
    before = len(collect.reports)
    convert_gguf(source, target)  # kept: no step
    assert len(collect.reports) == before


def _terminal(monkeypatch):
    from rich.console import Console

    from contextlens.cli import _common

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    monkeypatch.setattr(_common, "err", lambda: console)
    return screen


def test_the_cli_prints_a_line_when_a_step_starts_and_ends_off_a_terminal(listen, capsys):
    from contextlens.cli._common import display, err

    err.cache_clear()  # a console on this test's stderr
    listen(display())
    with step("compiling the counting kernel", total=9, unit="functions",
              once="once, then cached in /c") as s:
        s.update(9)
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "compiling the counting kernel: 0 of 9 functions (once, then cached in /c)..."
    assert err[-1].startswith("compiling the counting kernel: done in ")
    assert err[-1].endswith("(once, then cached in /c)")


def test_the_cli_draws_a_live_line_on_a_terminal_and_leaves_what_happened_once(listen, monkeypatch):
    from contextlens.cli._common import display, spinner

    listen(display())
    screen = _terminal(monkeypatch)
    with spinner("loading smollm2..."), step("de-quantising x.gguf", total=2, unit="tensors",
                                             once="once, then kept in /c") as s:
        assert len(display()._tasks) == 2  # the spinner's line and the step's, in one display
        s.advance(2)
    assert display()._tasks == {} and display()._bar is None
    shown = screen.getvalue()
    assert "de-quantising x.gguf: done in" in shown and "(once, then kept in /c)" in shown


def test_quiet_warnings_logs_the_named_librarys_warnings_and_lets_others_through(caplog):
    caplog.set_level(logging.DEBUG, logger="contextlens.quiet")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with quiet_warnings("umap"):
            warnings.warn_explicit("n_jobs value 1 overridden to 1 by setting random_state", UserWarning,
                                   "/site-packages/umap/umap_.py", 1952)
            warnings.warn("ours", UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["ours"]
    assert any("n_jobs value 1 overridden" in r.getMessage() for r in caplog.records)


NOTEBOOK = """
import sys, types, warnings
import IPython  # what tqdm.auto looks for, with an IPython kernel's module: a notebook without ipywidgets
sys.modules["ipykernel.zmqshell"] = types.ModuleType("ipykernel.zmqshell")
warnings.simplefilter("always")
"""


@pytest.mark.parametrize(("code", "warned"), [
    ("import tqdm.auto", True),  # the simulation is a notebook: tqdm warns
    ("from contextlens.encoders.model_cache import require_hf; require_hf()", False),
])
def test_loading_transformers_in_a_notebook_shows_no_tqdm_warning(code, warned):
    need("IPython")
    need("transformers")
    proc = subprocess.run([sys.executable, "-c", NOTEBOOK + code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert ("TqdmWarning" in proc.stderr) == warned, proc.stderr


def test_a_small_faiss_index_is_trained_without_its_warning_on_stderr(capfd, tmp_path):
    faiss = need("faiss")
    from contextlens.index.side_build import _write_ivf

    x = np.random.default_rng(0).normal(size=(2, 8)).astype(np.float32)
    _write_ivf(faiss, x, np.arange(2), 1, 8, tmp_path / "v.ivf")
    assert "WARNING" not in capfd.readouterr().err


def test_where_no_live_display_can_start_a_step_is_told_in_plain_lines(listen, monkeypatch):
    """A Rich before 14.1 cannot nest live displays: inside a command's own bar, the step's
    lines are printed plainly instead of failing in the log handler."""
    from rich.errors import LiveError
    from rich.progress import Progress

    from contextlens.cli._common import display

    def refuse(self):
        raise LiveError("Only one live display may be active at once")

    listen(display())
    screen = _terminal(monkeypatch)
    monkeypatch.setattr(Progress, "start", refuse)
    with step("compiling the counting kernel", total=9, unit="functions", once="once, then cached in /c"):
        pass
    shown = screen.getvalue()
    assert "compiling the counting kernel: 0 of 9 functions (once, then cached in /c)..." in shown
    assert "Logging error" not in shown and display()._unlive == set()
