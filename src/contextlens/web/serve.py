"""Serving the lab: the listening socket, uvicorn, and a stop that does not wait for UMAP.

:func:`listen` binds the socket before uvicorn starts, so a taken port is one clear error
(not uvicorn's trace) and ``port=0`` yields the real port to print. :func:`serve` runs
uvicorn on it; on SIGTERM or SIGINT the lab's worker processes are killed at once (a
projection in flight ends with a 503) and requests still running get ``GRACE_SECONDS``
before uvicorn cancels them, so the lab stops within a few seconds whatever it was doing
(it used to wait for a running UMAP, minutes on a busy machine).

>>> sock = listen("127.0.0.1", 0)
>>> sock.getsockname()[1] > 0
True
>>> listen("127.0.0.1", sock.getsockname()[1])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
contextlens.errors.InputError: port ... on 127.0.0.1 is in use (another lab or server?); choose another with --port N, or --port 0 for a free one
>>> sock.close()
"""

from __future__ import annotations

import errno
import logging
import socket
from collections.abc import Callable

from ..errors import InputError

__all__ = ["listen", "serve", "GRACE_SECONDS"]

log = logging.getLogger(__name__)
GRACE_SECONDS = 3  # what running requests get to finish once the lab is told to stop


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (``port`` 0: a free one), or an :class:`InputError`
    saying what to change."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0][0]
    except socket.gaierror as err:
        raise InputError(f"--host {host} is neither an address nor a known host name ({err.strerror})") from None
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise InputError(f"port {port} on {host} is in use (another lab or server?); choose another with "
                             "--port N, or --port 0 for a free one") from None
        if err.errno == errno.EACCES:
            raise InputError(f"port {port} needs administrator rights; choose one above 1023 (--port 8000)") from None
        if err.errno == errno.EADDRNOTAVAIL:
            raise InputError(f"--host {host} is not an address of this machine") from None
        raise InputError(f"cannot listen on {host} port {port}: {err.strerror}") from None


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
    if on_started is not None:
        def notify() -> None:
            while not server.started and not server.should_exit:
                threading.Event().wait(0.05)
            if server.started:
                on_started()

        threading.Thread(target=notify, name="lab-started", daemon=True).start()
    server.run(sockets=[sock])
