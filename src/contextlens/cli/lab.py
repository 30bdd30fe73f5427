"""``contextlens lab``: serve the Live Lab (FastAPI + uvicorn), on localhost unless told otherwise."""

from __future__ import annotations

import ipaddress
import os
import sys
import webbrowser

import typer

from ..errors import InputError
from . import options as o
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


def allowed_hosts(host: str, trusted: list[str]) -> list[str] | None:
    """The Host names the lab answers to: the loopback names and ``host`` itself, plus
    ``trusted``; None (any) for a wildcard address (0.0.0.0, ::) with no ``trusted`` names.

    >>> allowed_hosts("127.0.0.1", [])
    ['127.0.0.1', 'localhost', '[::1]']
    >>> allowed_hosts("192.168.1.5", ["lab.example.org"])
    ['127.0.0.1', 'localhost', '[::1]', '192.168.1.5', 'lab.example.org']
    >>> allowed_hosts("0.0.0.0", []) is None
    True
    """
    from ..web.app import LOCAL_HOSTS

    if host in ("0.0.0.0", "::") and not trusted:
        return None
    names = [f"[{host}]" if ":" in host else host] if host not in ("0.0.0.0", "::") else []
    return list(dict.fromkeys([*LOCAL_HOSTS, *(n.lower() for n in names), *trusted]))


def open_browser(url: str) -> None:
    """Open ``url`` in the user's browser where there is a screen to show it (a console browser
    would take over the terminal the lab prints to); else say to open it."""
    has_screen = sys.platform in ("darwin", "win32") or any(
        os.environ.get(v) for v in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"))
    try:
        opened = has_screen and webbrowser.open(url)
    except webbrowser.Error:
        opened = False
    if not opened:
        console.print(f"no browser to open here: open {url} yourself", highlight=False)


@handle_errors
def lab(
    host: str = o.LAB_HOST, port: int = o.LAB_PORT, model: list[str] = o.LAB_MODELS,
    vectors: str = o.LAB_VECTORS, threads: int = o.LAB_THREADS, engine: str = o.ENGINE,
    index: list[str] = o.LAB_INDEX, allow_remote: bool = o.ALLOW_REMOTE,
    trusted_host: list[str] = o.TRUSTED_HOST, browser: bool = o.BROWSER,
) -> None:
    """Serve the Live Lab and open it in your browser (--no-browser: only print its URL): the toy
    lab, the sentence lab, senses and (--index) your corpus. Ctrl+C or SIGTERM stops it."""
    try:
        from ..web import create_app
        from ..web.serve import leave, listen, serve
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
    hosts = allowed_hosts(host, trusted_host)
    if hosts is None:
        err_console.print("[bold yellow]warning:[/] any Host name is accepted (no DNS-rebinding check); "
                          "name the ones you use with --trusted-host", highlight=False)
    if engine is not None:
        from ..encoders.engines import ENGINES
        from ..errors import check_choice

        check_choice("engine", engine, ENGINES)  # before the lab serves
    web = create_app(model=model[0] if model else "minilm", vectors=vectors, threads=threads or None,
                     index=(index if len(index) > 1 else index[0]) if index else None,
                     # a bad --index or --model fails here
                     allowed_hosts=hosts, add_models=model, engine=engine)
    sock = listen(host, port)  # a taken port fails here, in one line
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{sock.getsockname()[1]}/"
    console.print(f"contextlens lab on {url} (Ctrl+C stops it)", highlight=False)
    if index:
        console.print(f"usage index: {' + '.join(index)}", highlight=False)
    try:
        serve(web, sock, on_started=(lambda: open_browser(url)) if browser else None)
    except KeyboardInterrupt:
        console.print("lab stopped", highlight=False)
        leave()  # a request's thread that cannot be interrupted does not hold the stop


def register(app: typer.Typer) -> None:
    """Add ``lab`` to ``app`` (Typer's own help format, as it always had)."""
    app.command()(lab)
