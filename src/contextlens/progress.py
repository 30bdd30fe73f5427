"""What the library is doing when it is slow, said the one way it says it: log records.

The library never prints. A slow step (compiling the counting kernel, de-quantising a
model, encoding the neighbours' reference words, loading UMAP) runs inside :func:`step`,
which logs to the logger ``contextlens.progress`` (:data:`LOG`) at INFO: a record when the
step starts, records as it advances (at most one per :data:`EVERY` seconds, so a tight
loop costs nothing) and one when it ends or fails. Each record carries the step's state
as ``record.progress``, a :class:`Report`, and a plain message (:func:`describe`), so
``contextlens -v`` or ``logging.basicConfig(level=logging.INFO)`` shows it as a log line
and a front end draws it: the command line as a live line on stderr
(``contextlens.cli._common.ProgressDisplay``).

A step that happens once (its result is kept) says so and where the result is kept,
``once="once, then cached in ~/.cache/contextlens/numba"``: the user then knows that the
next run will not wait.

>>> r = Report(1, "encoding the reference words alone", "advance", 4096, 20000, "words", None, 12.5)
>>> describe(r)
'encoding the reference words alone: 4,096 of 20,000 words'
>>> describe(r._replace(state="end", done=20000, once="once, then cached in /c/neighbours"))
'encoding the reference words alone: done in 12.5 s (once, then cached in /c/neighbours)'
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import time
from collections.abc import Iterator
from typing import NamedTuple

__all__ = ["LOG", "EVERY", "Report", "Step", "step", "describe", "time_left"]

LOG = logging.getLogger("contextlens.progress")
EVERY = 0.2  # seconds between two "advance" records of one step
STATES = ("start", "advance", "end", "fail")
_ids = itertools.count(1)


class Report(NamedTuple):
    """One step's state, as a record carries it (``record.progress``)."""

    id: int  # one per step, so that a front end can follow several (they nest)
    what: str  # what is being done, as a sentence without a capital: "compiling the counting kernel"
    state: str  # start | advance | end | fail
    done: int  # units done so far
    total: int | None  # units in all; None: not countable
    unit: str  # what is counted: "words", "tensors"
    once: str | None  # for a step that happens once: that it does, and where its result is kept
    seconds: float  # since the step started


def describe(r: Report) -> str:
    """A report as one plain line (the record's message).

    >>> describe(Report(2, "compiling the counting kernel", "start", 0, 9, "functions", "once, then cached",
    ...                 0.0))
    'compiling the counting kernel: 0 of 9 functions (once, then cached)'
    >>> describe(Report(3, "loading UMAP", "advance", 0, None, "", None, 3.0))
    'loading UMAP: 3 s'
    >>> describe(Report(3, "loading UMAP", "fail", 0, None, "", None, 3.04))
    'loading UMAP: stopped after 3.0 s'
    """
    once = f" ({r.once})" if r.once else ""
    if r.state == "end":
        return f"{r.what}: done in {r.seconds:.1f} s{once}"
    if r.state == "fail":
        return f"{r.what}: stopped after {r.seconds:.1f} s"
    unit = f" {r.unit}" if r.unit else ""
    if r.total is not None:
        count = f": {r.done:,} of {r.total:,}{unit}"
    elif r.done:
        count = f": {r.done:,}{unit}"
    else:
        count = f": {r.seconds:.0f} s" if r.state == "advance" else ""
    return f"{r.what}{count}{once if r.state == 'start' else ''}"


def time_left(r: Report) -> float | None:
    """Seconds left of a running step, at the pace so far; None when it cannot be told (no
    total, nothing done yet, or done).

    >>> time_left(Report(1, "encoding", "advance", 5000, 20000, "words", None, 10.0))
    30.0
    >>> time_left(Report(1, "loading", "advance", 0, None, "", None, 3.0)) is None
    True
    """
    if r.total is None or r.done <= 0 or r.done >= r.total or r.state not in ("start", "advance"):
        return None
    return r.seconds * (r.total - r.done) / r.done


class Step:
    """A running step: :meth:`advance` or :meth:`update` it as its work gets done."""

    def __init__(self, what: str, total: int | None, unit: str, once: str | None):
        self.id, self.what, self.total, self.unit, self.once = next(_ids), what, total, unit, once
        self.done = 0
        self.start = self._last = time.perf_counter()

    def report(self, state: str) -> Report:
        return Report(self.id, self.what, state, self.done, self.total, self.unit, self.once,
                      time.perf_counter() - self.start)

    def _log(self, state: str) -> None:
        if LOG.isEnabledFor(logging.INFO):
            r = self.report(state)
            LOG.info("%s", describe(r), extra={"progress": r})

    def update(self, done: int, total: int | None = None) -> None:
        """``done`` units of ``total`` (None: the total stays as it was)."""
        self.done = done
        if total is not None:
            self.total = total
        now = time.perf_counter()
        if now - self._last >= EVERY:
            self._last = now
            self._log("advance")

    def advance(self, n: int = 1) -> None:
        """``n`` more units done."""
        self.update(self.done + n)


@contextlib.contextmanager
def step(what: str, *, total: int | None = None, unit: str = "", once: str | None = None) -> Iterator[Step]:
    """Run a slow step, reporting it on :data:`LOG` (see the module docstring).

    >>> with step("counting", total=2, unit="blocks") as s:
    ...     s.advance(2)
    >>> s.done, s.total
    (2, 2)
    """
    s = Step(what, total, unit, once)
    s._log("start")
    try:
        yield s
    except BaseException:
        s._log("fail")
        raise
    s._log("end")
