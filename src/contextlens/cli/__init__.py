"""The ``contextlens`` command: a thin layer over the library (no logic lives here)."""

from __future__ import annotations

import typer

from .. import __version__
from . import (
    bias_cmd,
    context_cmds,
    data_cmd,
    demo_cmd,
    eval_cmd,
    experiments,
    index_cmd,
    lab_cmd,
    models_cmd,
    static_cmds,
)
from ._common import setup_logging

app = typer.Typer(
    name="contextlens",
    help="See and measure how a word's vector goes from static to contextual.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"contextlens {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log what the library does."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version."),
) -> None:
    setup_logging(verbose)


app.add_typer(static_cmds.static_app, name="static")
static_cmds.register(app)
context_cmds.register(app)
experiments.register(app)
models_cmd.register(app)
data_cmd.register(app)
lab_cmd.register(app)
index_cmd.register(app)
eval_cmd.register(app)
demo_cmd.register(app)
bias_cmd.register(app)


def main() -> None:
    app()
