"""The ``contextlens`` command: a thin layer over the library (no logic lives here).

Every module defines its commands as module-level functions and exposes
``register(app)``; shared options live in :mod:`.options`. Nothing heavy (numpy, SciPy,
scikit-learn, matplotlib, torch) is imported until a command runs, so ``--help`` is instant
(``tests/integration/test_cli_startup.py``).

One module per command group, named by it (``static``, ``context``, ``explain``, ``lm``, ``probe``,
``bias``, ``index``, ``evaluate``, ``data``, ``models``, ``cache``, ``lab``, ``demo``; ``experiments``:
the analysis commands at the top level); ``options``, ``tables`` and ``_common`` are shared.

Floor 11 (ARCHITECTURE.md), the top: it may import any part of contextlens (the lab and the
walkthrough included), always inside the command that needs it, and typer and Rich.
"""

from __future__ import annotations

import typer

from . import (
    bias,
    cache,
    context,
    data,
    demo,
    evaluate,
    experiments,
    explain,
    index,
    lab,
    lm,
    models,
    probe,
    static,
)
from ._common import setup_logging

app = typer.Typer(
    name="contextlens",
    help="See and measure how a word's vector goes from static to contextual.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"contextlens {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what the library does."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Show the version."),
    progress: bool = typer.Option(False, "--progress",
                                  help="Show the progress of slow work on stderr even when it is not a "
                                  "terminal (a log): a line a second with counts and time left."),
) -> None:
    setup_logging(verbose, progress)


for _module in (static, context, experiments, explain, lm, models, data, lab, index, evaluate, demo, bias,
                cache, probe):
    _module.register(app)


def main() -> None:
    app()
