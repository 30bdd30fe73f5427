"""``contextlens data list`` and ``contextlens data fetch NAME``."""

from pathlib import Path

import typer

from . import options as o
from ._common import add_command, group, handle_errors, out, print_json, say, spinner, table


def _shown(files: list[str], k: int = 3) -> str:
    return ", ".join(files[:k]) + (f" (+{len(files) - k} more)" if len(files) > k else "")


@handle_errors
def list_cmd(data_dir: Path = o.DATA_DIR, as_json: bool = o.JSON) -> None:
    """Which datasets are present and complete in the data directory, with missing files."""
    from ..datasets import DATASETS, dataset_status, resolve_data_dir

    root = resolve_data_dir(data_dir)
    rows = dataset_status(root)
    if as_json:
        print_json({"data_dir": str(root), "datasets": rows})
        return
    t = table(f"datasets in {root}", ["name", "status", "missing", "optional present", "description"],
              [(r["name"], ("complete" if r["complete"] else "incomplete") if r["present"] else "absent",
                _shown(r["missing"]) or "-",
                f"{len(r['optional_present'])}/{len(r['optional_present']) + len(r['optional_missing'])}",
                DATASETS[r["name"]].description) for r in rows], left=5)
    out().print(t)
    if any(not r["complete"] for r in rows):
        say("get a dataset with: contextlens data fetch NAME")


@handle_errors
def fetch_cmd(
    name: str = typer.Argument(..., metavar="NAME", help="A dataset name (see `contextlens data list`)."),
    data_dir: Path = o.DATA_DIR,
    url: str = o.option(None, "--url", metavar="URL", help="Download from this URL (a mirror) instead of the "
                        "official one."),
    sha256: str = o.option(None, "--sha256", metavar="HEX", help="The expected sha256 of the download."),
    timeout: float = o.bounded(o.option(30.0, "--timeout", metavar="SECONDS",
                                        help="Network timeout in seconds."),
                               0.1, 3600.0, kind=float),
    as_json: bool = o.JSON,
) -> None:
    """Download dataset NAME from its official source into the data directory."""
    from ..datasets import dataset_status, resolve_data_dir
    from ..evaluation.fetch import fetch

    root = resolve_data_dir(data_dir)
    downloads: list[dict] = []

    def report(u: str, digest: str, verified: bool) -> None:
        downloads.append({"url": u, "sha256": digest, "verified": verified})
        if not as_json:
            say(f"downloaded {u}\n  sha256 {digest} "
                + ("verified" if verified else "not verified (no published checksum)"))

    with spinner(f"fetching {name}"):  # on stderr: with --json too
        path = fetch(name, root, url=url, sha256=sha256, timeout=timeout, report=report)
    status = next(r for r in dataset_status(root) if r["name"] == name)
    if as_json:
        print_json({"name": name, "path": str(path), "downloads": downloads, "complete": status["complete"],
                    "missing": status["missing"]})
        return
    say(f"fetched {name} into {path}")
    if not status["complete"]:
        say(f"still missing: {_shown(status['missing'], 6)}")


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group to ``app``."""
    data_app = group("The standard evaluation datasets: which are present, and fetching them.")
    add_command(data_app, list_cmd, "list")
    add_command(data_app, fetch_cmd, "fetch")
    app.add_typer(data_app, name="data")
