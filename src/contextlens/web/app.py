"""The lab's FastAPI app: the JSON API, the page, and Plotly.js, all served locally.

>>> app = create_app()
>>> sorted(p for p in app.openapi()["paths"] if p.startswith("/api/t"))
['/api/tokens', '/api/toy', '/api/toy/course', '/api/toy/defaults']
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException

from .. import __version__
from ..errors import ContextLensError, MissingDependencyError, phrase
from .api import router
from .limits import LimitError, Limits
from .state import LabState, NoIndexError
from .worker import WorkerError, WorkerPool

__all__ = ["create_app", "plotly_js", "LOCAL_HOSTS", "api_phrase", "host_name", "HostCheck", "StopAnswer"]

log = logging.getLogger(__name__)
ASSETS = Path(__file__).parent / "assets"  # the lab's page, scripts and styles (served at /static)
# the views' scripts: the lab draws the library's views
VIEWS = Path(__file__).parents[1] / "views" / "assets"
#: the Host names a lab on a loopback address answers to (a page elsewhere cannot rebind its
#: own name to 127.0.0.1 and read the lab: DNS rebinding)
LOCAL_HOSTS = ("127.0.0.1", "localhost", "[::1]")


@functools.cache
def plotly_js() -> Path:
    """plotly.min.js as shipped inside the installed ``plotly`` package (no CDN)."""
    try:
        import plotly
    except ImportError as e:  # pragma: no cover - the web extra brings it
        raise MissingDependencyError("plotly", "web", "the lab's figures") from e
    path = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    if not path.is_file():  # pragma: no cover - a broken plotly install
        raise MissingDependencyError("plotly", "web", f"the lab's figures ({path} is missing)")
    return path


#: the library's parameters the lab's page chooses in its encoder list (the request's ``encoder`` or
#: ``model``)
PICKED = ("model", "method", "encoder")


def api_phrase(name: str, values: list) -> str:
    """How the lab words a library message's instruction to set ``name`` (:func:`~contextlens.errors.ask`):
    the request field and its JSON value, or the encoder list above the figure, never a CLI flag.

    >>> api_phrase("missing", ["skip"]), api_phrase("layer", [])
    ('send "missing": "skip"', 'send "layer"')
    >>> api_phrase("model", ["smollm2"])
    'pick smollm2 above'
    """
    if name in PICKED and values:
        return "pick " + " or ".join(map(str, values)) + " above"
    return f'send "{name}"' + (": " + " or ".join(json.dumps(v) for v in values) if values else "")


def host_name(header: str | None) -> str | None:
    """The host name of a ``Host`` header, without its port, lower-cased (None: no usable name).

    >>> host_name("LocalHost:8000"), host_name("[::1]:8000"), host_name("127.0.0.1"), host_name("[::1")
    ('localhost', '[::1]', '127.0.0.1', None)
    """
    if not header:
        return None
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        return header[: end + 1] if end > 0 else None
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header if ":" not in header else None


class HostCheck:
    """Serve only requests whose ``Host`` is one of ``allowed`` (a page elsewhere cannot rebind
    its own name to this address and read the lab: DNS rebinding); others get the lab's JSON
    error (400). ``allowed`` None or holding ``*``: any host."""

    def __init__(self, app, allowed: Sequence[str] | None):
        self.app = app
        self.allowed = None if not allowed or "*" in allowed else [h.lower() for h in allowed]

    async def __call__(self, scope, receive, send):
        if self.allowed is None or scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        host = host_name(Headers(scope=scope).get("host"))
        if host in self.allowed:
            return await self.app(scope, receive, send)
        asked = f"the host name {host!r}" if host else "a request without a valid Host header"
        response = error(f"this lab does not answer {asked} (a guard against DNS rebinding); open it by one "
                         f"of its names: {', '.join(self.allowed)}", "HostError", 400)
        return await response(scope, receive, send)


class StopAnswer:
    """A request the lab's stop cuts short (uvicorn cancels it after its grace period) answers
    in the lab's error shape, 503, instead of uvicorn's plain-text 500."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def watch(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watch)
        except asyncio.CancelledError:
            if not started:
                await error("the lab stopped before this request finished; start it again and retry",
                            "LabClosingError", 503)(scope, receive, send)
            raise


def _validation_message(err: RequestValidationError) -> str:
    parts = []
    for e in err.errors():
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        if e.get("type") == "json_invalid":
            return f"malformed JSON body: {e.get('ctx', {}).get('error', e.get('msg'))}; send a JSON object"
        parts.append(f"{where or 'body'}: {e.get('msg')}")
    return "invalid request: " + "; ".join(parts)


def error(detail: str, kind: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    """The lab's one error body, ``{"detail", "error"}`` (a lone surrogate in a message is escaped)."""
    detail = detail.encode("utf-8", "backslashreplace").decode("utf-8")
    return JSONResponse({"detail": detail, "error": kind}, status_code=status, headers=headers)


class BodyLimit:
    """Refuse a request body over ``max_bytes`` with a 413 before anything parses it (the
    schema's limits only apply once a body is read)."""

    def __init__(self, app, max_bytes: int):
        self.app, self.max_bytes = app, max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] != "http.request":  # the client left
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
            if size > self.max_bytes:
                response = error(f"the request body is over {self.max_bytes:,} bytes, the limit per request; "
                                 "send fewer or shorter sentences", "LimitError", 413)
                return await response(scope, receive, send)
        body, replayed = b"".join(chunks), False

        async def replay():
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


def create_app(model: str = "minilm", vectors: str = "glove-6b-50d", limits: Limits | None = None,
               threads: int | None = 1, index: str | os.PathLike | None = None,
               models: Sequence[str] | None = None, workers: int = 2, worker_timeout: float | None = 300.0,
               allowed_hosts: Sequence[str] | None = LOCAL_HOSTS, add_models: Sequence[str] = (),
               engine: str | None = None) -> FastAPI:
    """The lab app; ``model`` is the default transformer, ``vectors`` the static table.

    ``threads``: torch CPU threads for the models (default 1: a lab request is a few short
    sentences, run one at a time per model, and more threads fighting over busy cores made
    MiniLM 40x slower on a shared 2-core machine; None: chosen from the cores and the load,
    :mod:`contextlens.threads`). ``engine``: what runs the transformers (``torch``, ``onnx``,
    ``auto``; None: the encoder's default).
    Nothing is loaded here: tables and models load on first use (see :class:`LabState`).
    ``index``: a usage index folder (``contextlens index build --db``), opened here, so a bad
    path fails before the lab serves (with the library's error); its tab searches it.
    ``models``: the installed models the lab offers (None: every one; ``model`` always);
    ``add_models``: more to offer (packaged names, local Hugging Face folders, hub ids).
    ``workers`` processes run the projections and clustering, each call at most
    ``worker_timeout`` seconds (:mod:`.worker`). ``allowed_hosts``: the Host names served
    (default: the loopback names; ``None`` or ``["*"]``: any).
    """
    store = None
    if index is not None:
        from ..index.reader import open_store

        store = open_store(index)
        log.info("usage index %s (model %s, layers %s)", store.path, store.params["model"], store.layers)
    lab_state = LabState(model=model, vectors=vectors, limits=limits, threads=threads, index=store,
                         models=models,
                         pool=WorkerPool(workers, timeout=worker_timeout), add_models=add_models,
                         engine=engine)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        lab_state.open()
        yield
        lab_state.close()

    # the Swagger / ReDoc pages load their scripts from a CDN: off; the schema is at /openapi.json
    app = FastAPI(title="contextlens lab", version=__version__, docs_url=None, redoc_url=None,
                  lifespan=lifespan,
                  description="See how a word's vector goes from static to contextual. The page is at /.")
    app.state.lab = lab_state
    app.include_router(router)
    app.add_middleware(BodyLimit, max_bytes=lab_state.limits.max_body_bytes)
    app.add_middleware(HostCheck, allowed=allowed_hosts)
    app.add_middleware(StopAnswer)

    @app.exception_handler(LimitError)
    async def _limit(request: Request, exc: LimitError):
        return error(phrase(exc, api_phrase), "LimitError", 422)

    @app.exception_handler(NoIndexError)
    async def _no_index(request: Request, exc: NoIndexError):
        return error(phrase(exc, api_phrase), "NoIndexError", 409)

    @app.exception_handler(ContextLensError)
    async def _library(request: Request, exc: ContextLensError):
        return error(phrase(exc, api_phrase), type(exc).__name__, 400)

    @app.exception_handler(WorkerError)
    async def _worker(request: Request, exc: WorkerError):
        log.warning("%s on %s: %s", type(exc).__name__, request.url.path, exc)
        return error(str(exc), type(exc).__name__, exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return error(_validation_message(exc), "RequestValidationError", 422)

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException):
        return error(str(exc.detail), "HTTPException", exc.status_code, exc.headers)  # 405 keeps its Allow

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.exception("unexpected error on %s", request.url.path)
        return error(f"internal error ({type(exc).__name__}); the server log has the details",
                     "InternalError", 500)

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(ASSETS / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/vendor/plotly.min.js", include_in_schema=False)
    def plotly():
        return FileResponse(plotly_js(), media_type="text/javascript",
                            headers={"Cache-Control": "public, max-age=86400"})

    app.mount("/static", StaticFiles(directory=ASSETS), name="static")
    app.mount("/views", StaticFiles(directory=VIEWS), name="views")
    return app
