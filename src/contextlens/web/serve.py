"""Serving the lab: the listening socket, uvicorn, and a stop that does not wait for UMAP.

:func:`listen` binds the socket before uvicorn starts, so a taken port is one clear error
(not uvicorn's trace) and ``port=0`` yields the real port to print. :func:`serve` runs
uvicorn on it; on SIGTERM or SIGINT the lab's worker processes are killed at once (a
projection in flight ends with a 503) and requests still running get ``GRACE_SECONDS``
before uvicorn cancels them, so the lab stops within a few seconds whatever it was doing
(it used to wait for a running UMAP, minutes on a busy machine). A request cut short is
one line on stderr (uvicorn logged a 60-line traceback per request), and :func:`leave`
ends the process without waiting for the thread of a request that cannot be interrupted
(a model loading, a reference table being built: it used to hold Ctrl+C for a minute).

>>> sock = listen("127.0.0.1", 0)
>>> sock.getsockname()[1] > 0
True
>>> listen("127.0.0.1", sock.getsockname()[1])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
contextlens.errors.InputError: port ... on 127.0.0.1 is in use (another lab or server?); choose another with --port N, or --port 0 for a free one
>>> sock.close()
"""  # noqa: E501 (a doctest's expected output, printed whole)

from __future__ import annotations

import asyncio
import errno
import logging
import socket
from collections.abc import Callable

from ..errors import InputError

__all__ = ["listen", "serve", "leave", "GRACE_SECONDS"]

log = logging.getLogger(__name__)
GRACE_SECONDS = 3  # what running requests get to finish once the lab is told to stop


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (``port`` 0: a free one), or an :class:`InputError`
    saying what to change."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    except socket.gaierror as err:
        raise InputError(f"--host {host} is neither an address nor a known host name "
                         f"({err.strerror})") from None
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} on {host} is in use (another lab or server?); choose another with "
                             "--port N, or --port 0 for a free one") from None
        if err.errno == errno.EACCES:
            raise InputError(f"port {port} needs administrator rights; "
                             "choose one above 1023 (--port 8000)") from None
        if err.errno == errno.EADDRNOTAVAIL:
            raise InputError(f"--host {host} is not an address of this machine") from None
        raise InputError(f"cannot listen on {host} port {port}: {err.strerror}") from None


class _OneLine(logging.Filter):
    """uvicorn's words on requests cut short by a stop: one line instead of a traceback each."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError):
            return False  # "Exception in ASGI application" + the cancelled request's traceback
        if "graceful shutdown exceeded" in str(record.msg):
            record.msg = "stopping: %s request(s) still running were cut short (answered 503)"
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def leave(wait: float = 1.0) -> None:
    """Return once only the main thread is left; if a request's thread still runs ``wait``
    seconds after the lab stopped (a model loading: Python cannot interrupt it; the stop has
    said it cut that request short), the process ends now (``os._exit``) instead of waiting."""
    import os
    import sys
    import threading
    import time

    deadline = time.monotonic() + wait
    while True:
        running = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
        if not running or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    if running:
        log.info("leaving %d request thread(s) behind", len(running))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def serve(app, sock: socket.socket, *, on_started: Callable[[], None] | None = None) -> None:
    """Run the lab ``app`` (:func:`~contextlens.web.create_app`) on ``sock`` until SIGTERM or
    SIGINT; ``on_started()`` is called once it answers (from another thread)."""
    import threading

    import uvicorn

    class LabServer(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            app.state.lab.close()  # workers killed now: a long projection cannot hold the stop
            super().handle_exit(sig, frame)

    server = LabServer(uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=GRACE_SECONDS))
    quiet = _OneLine()
    logging.getLogger("uvicorn.error").addFilter(quiet)
    if on_started is not None:
        def notify() -> None:
            while not server.started and not server.should_exit:
                threading.Event().wait(0.05)
            if server.started:
                on_started()

        threading.Thread(target=notify, name="lab-started", daemon=True).start()
    try:
        server.run(sockets=[sock])
    finally:
        logging.getLogger("uvicorn.error").removeFilter(quiet)
