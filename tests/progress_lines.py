"""What a command may print on stderr besides its one error line: the library's progress, as the
CLI prints it where stderr is not a terminal (``contextlens.cli._common.ProgressDisplay``)."""

from __future__ import annotations

import re

DONE = re.compile(r": done in [0-9.]+ s\b")


def progress_line(line: str) -> bool:
    """A step's start ("loading … with torch...") or end ("…: done in 0.1 s (once, …)").

    >>> progress_line("loading bert with torch..."), progress_line("loading bert with torch: done in 0.0 s")
    (True, True)
    >>> progress_line("error: give a shorter text")
    False
    """
    return line.endswith("...") or DONE.search(line) is not None
