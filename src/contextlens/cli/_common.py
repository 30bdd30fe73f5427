"""What every command shares: consoles, error handling, JSON output."""

from __future__ import annotations

import functools
import json
import logging
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import typer
from rich.console import Console
from rich.logging import RichHandler

from ..errors import ContextLensError

console = Console()
err_console = Console(stderr=True)


def setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(message)s",
        handlers=[RichHandler(console=err_console, show_path=False)],
        force=True,
    )


def handle_errors(fn: Callable) -> Callable:
    """Turn a ContextLensError into one clear line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ContextLensError as e:
            err_console.print(f"[bold red]error:[/] {e}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def print_json(obj: Any) -> None:
    """Print one JSON object on stdout."""
    sys.stdout.write(json.dumps(obj, default=_jsonable, ensure_ascii=False) + "\n")


def fmt(x: float) -> str:
    return f"{x:.3f}"
