"""``contextlens cache info`` and ``contextlens cache clear [NAME]``: the on-disk caches
(:mod:`contextlens.disk_cache`), their sizes and bounds, and emptying them."""

from dataclasses import asdict

import typer

from ..disk_cache import KINDS
from . import options as o
from ._common import add_command, group, handle_errors, out, print_json, say, table

NAME = typer.Argument(None, metavar="NAME", show_default=False,
                      help=f"One cache ({', '.join(KINDS)}); default: every cache.")


@handle_errors
def info_cmd(name: str = NAME, as_json: bool = o.JSON) -> None:
    """Each cache: what it holds, its entries, bytes, bound (and the variable that sets it), location."""
    from ..disk_cache import cache_info, format_size
    from ..files import cache_root

    rows = cache_info(None if name is None else [name])
    if as_json:
        print_json({"root": str(cache_root()), "caches": [asdict(r) for r in rows]})
        return
    t = table(f"caches under {cache_root()}", ["cache", "entries", "size", "bound", "in use", "holds"],
              [(r.name, r.entries, format_size(r.bytes), format_size(r.limit), r.in_use, r.what)
               for r in rows],
              left="lrrrrl")
    out().print(t)
    say(f"each cache is the folder of its name under {cache_root()}; its bound is set by "
        "CONTEXTLENS_CACHE_LIMIT_<NAME> (e.g. CONTEXTLENS_CACHE_LIMIT_ONNX=8GiB)")


@handle_errors
def clear_cmd(name: str = NAME, as_json: bool = o.JSON) -> None:
    """Remove every entry of the cache NAME (default: of every cache) that no process is using."""
    from ..disk_cache import clear_caches, format_size

    done = clear_caches(None if name is None else [name])
    if as_json:
        print_json({"cleared": [asdict(c) for c in done]})
        return
    for c in done:
        kept = f"; {len(c.kept_in_use)} in use kept ({', '.join(c.kept_in_use)})" if c.kept_in_use else ""
        say(f"{c.name}: removed {c.removed} entr{'y' if c.removed == 1 else 'ies'} "
            f"({format_size(c.bytes_freed)}) from {c.location}{kept}")


def register(app: typer.Typer) -> None:
    """Add the ``cache`` command group to ``app``."""
    cache_app = group("The on-disk caches (ONNX exports, prepared models, reference tables, encodings...): "
                      "their sizes, bounds, and clearing them.")
    add_command(cache_app, info_cmd, "info")
    add_command(cache_app, clear_cmd, "clear")
    app.add_typer(cache_app, name="cache")
