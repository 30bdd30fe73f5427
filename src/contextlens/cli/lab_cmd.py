"""``contextlens lab``: serve the Live Lab (FastAPI + uvicorn), on localhost unless told otherwise."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import typer

from ..errors import InputError
from ._common import console, err_console, handle_errors

LOCAL_NAMES = {"localhost", "localhost.localdomain"}


def is_local(host: str) -> bool:
    """Whether ``host`` is a loopback address or name (``127.0.0.1``, ``::1``, ``localhost``).

    >>> is_local("127.0.0.1"), is_local("::1"), is_local("0.0.0.0"), is_local("localhost")
    (True, True, False, True)
    """
    if host.lower() in LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def register(app: typer.Typer) -> None:
    @app.command()
    @handle_errors
    def lab(
        host: str = typer.Option("127.0.0.1", help="Address to listen on (localhost by default)."),
        port: int = typer.Option(8000, min=0, max=65535, help="Port to listen on."),
        model: str = typer.Option("minilm", help="The default transformer (loaded on first use)."),
        vectors: str = typer.Option("glove-6b-50d", help="Static table for the static, average and attention encoders."),
        threads: int = typer.Option(1, min=0, help="Torch CPU threads for the models (0: every core)."),
        index: Path | None = typer.Option(
            None, "--index", help="A usage index to search in the lab (the --db folder of `contextlens index build`)."
        ),
        allow_remote: bool = typer.Option(
            False, "--allow-remote", help="Allow a non-local --host: anyone who can reach it can use the lab."
        ),
    ) -> None:
        """Open the Live Lab in your browser: the toy lab, the sentence lab, senses and (--index) your corpus."""
        try:
            import uvicorn

            from ..web import create_app
        except ImportError as e:
            from ..errors import MissingDependencyError

            raise MissingDependencyError(e.name or "fastapi", "web", "the lab") from e
        if not is_local(host):
            if not allow_remote:
                raise InputError(
                    f"--host {host} is not a local address: the lab would be reachable from other machines "
                    "and has no authentication; pass --allow-remote if you mean it"
                )
            err_console.print(
                f"[bold yellow]warning:[/] serving on {host}: anyone who can reach this address can use the "
                "lab (no authentication) and make this machine run models", highlight=False,
            )
        web = create_app(model=model, vectors=vectors, threads=threads or None, index=index)  # a bad --index fails here
        shown = f"[{host}]" if ":" in host else host
        console.print(f"contextlens lab on http://{shown}:{port}/ (Ctrl+C stops it)", highlight=False)
        if index is not None:
            console.print(f"usage index: {index}", highlight=False)
        uvicorn.run(web, host=host, port=port, log_level="warning")
