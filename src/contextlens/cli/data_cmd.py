"""``contextlens data list`` and ``contextlens data fetch NAME``."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer
from rich.table import Table

from ._common import console, handle_errors, print_json

data_app = typer.Typer(help="The standard evaluation datasets: which are present, and fetching them.",
                       no_args_is_help=True)

DATA_DIR_HELP = "The data directory (default: $CONTEXTLENS_DATA, else ~/.cache/contextlens/data)."


def _shown(files: list[str], k: int = 3) -> str:
    return ", ".join(files[:k]) + (f" (+{len(files) - k} more)" if len(files) > k else "")


@data_app.command("list")
@handle_errors
def list_cmd(
    data_dir: Path = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Which datasets are present and complete in the data directory, with missing files."""
    from ..bench.datasets import DATASETS, dataset_status, resolve_data_dir

    root = resolve_data_dir(data_dir)
    rows = dataset_status(root)
    if as_json:
        print_json({"data_dir": str(root), "datasets": rows})
        return
    table = Table(title=f"datasets in {root}", title_justify="left")
    for col in ("name", "status", "missing", "optional present", "description"):
        table.add_column(col, overflow="fold")
    for r in rows:
        status = ("[green]complete[/]" if r["complete"] else "[yellow]incomplete[/]") if r["present"] \
            else "[red]absent[/]"
        optional = f"{len(r['optional_present'])}/{len(r['optional_present']) + len(r['optional_missing'])}"
        table.add_row(r["name"], status, _shown(r["missing"]) or "-", optional,
                      DATASETS[r["name"]].description)
    console.print(table)
    if any(not r["complete"] for r in rows):
        console.print("get a dataset with [bold]contextlens data fetch NAME[/]", highlight=False)


@data_app.command("fetch")
@handle_errors
def fetch_cmd(
    name: str = typer.Argument(..., help="A dataset name (see `contextlens data list`)."),
    data_dir: Path = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    url: str = typer.Option(None, "--url", help="Download from this URL (a mirror) instead of the official one."),
    sha256: str = typer.Option(None, "--sha256", help="The expected sha256 of the download."),
    timeout: float = typer.Option(30, "--timeout", help="Network timeout in seconds."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Download dataset NAME from its official source into the data directory."""
    from ..bench.datasets import dataset_status, resolve_data_dir
    from ..bench.fetch import fetch

    root = resolve_data_dir(data_dir)
    downloads: list[dict] = []

    def report(u: str, digest: str, verified: bool) -> None:
        downloads.append({"url": u, "sha256": digest, "verified": verified})
        if not as_json:
            note = "[green]verified[/]" if verified else "[yellow]not verified (no published checksum)[/]"
            console.print(f"downloaded {u}\n  sha256 {digest} {note}", highlight=False, soft_wrap=True)

    with console.status(f"fetching {name}", spinner="dots") if not as_json else contextlib.nullcontext():
        path = fetch(name, root, url=url, sha256=sha256, timeout=timeout, report=report)
    status = next(r for r in dataset_status(root) if r["name"] == name)
    if as_json:
        print_json({"name": name, "path": str(path), "downloads": downloads, "complete": status["complete"],
                    "missing": status["missing"]})
        return
    console.print(f"[green]fetched[/] {name} into {path}", highlight=False, soft_wrap=True)
    if not status["complete"]:
        console.print(f"[yellow]still missing:[/] {_shown(status['missing'], 6)}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group to the main app."""
    app.add_typer(data_app, name="data")
