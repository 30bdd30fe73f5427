"""The lab's FastAPI app: the JSON API, the page, and Plotly.js, all served locally.

>>> app = create_app()
>>> sorted(p for p in app.openapi()["paths"] if p.startswith("/api/t"))
['/api/tokens', '/api/toy', '/api/toy/defaults']
"""

from __future__ import annotations

import functools
import logging
import os
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from .. import __version__
from ..errors import ContextLensError, MissingDependencyError
from .api import router
from .state import LabState, LimitError, Limits, NoIndexError

__all__ = ["create_app", "plotly_js"]

log = logging.getLogger(__name__)
STATIC = Path(__file__).parent / "static"


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


def _validation_message(err: RequestValidationError) -> str:
    parts = []
    for e in err.errors():
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body")
        if e.get("type") == "json_invalid":
            return f"malformed JSON body: {e.get('ctx', {}).get('error', e.get('msg'))}; send a JSON object"
        parts.append(f"{where or 'body'}: {e.get('msg')}")
    return "invalid request: " + "; ".join(parts)


def create_app(model: str = "minilm", vectors: str = "glove-6b-50d", limits: Limits | None = None,
               threads: int | None = 1, index: str | os.PathLike | None = None) -> FastAPI:
    """The lab app; ``model`` is the default transformer, ``vectors`` the static table.

    ``threads``: torch CPU threads for the models (default 1: a lab request is a few short
    sentences, run one at a time per model, and more threads fighting over busy cores made
    MiniLM 40x slower on a shared 2-core machine; None uses every core).
    Nothing is loaded here: tables and models load on first use (see :class:`LabState`).
    ``index``: a usage index folder (``contextlens index build --db``), opened here, so a bad
    path fails before the lab serves (with the library's error); its tab searches it.
    """
    store = None
    if index is not None:
        from ..index.store import open_store

        store = open_store(index)
        log.info("usage index %s (model %s, layers %s)", store.path, store.params["model"], store.layers)
    # the Swagger / ReDoc pages load their scripts from a CDN: off; the schema is at /openapi.json
    app = FastAPI(title="contextlens lab", version=__version__, docs_url=None, redoc_url=None,
                  description="See how a word's vector goes from static to contextual. The page is at /.")
    app.state.lab = LabState(model=model, vectors=vectors, limits=limits, threads=threads, index=store)
    app.include_router(router)

    @app.exception_handler(LimitError)
    async def _limit(request: Request, exc: LimitError):
        return JSONResponse({"detail": str(exc), "error": "LimitError"}, status_code=422)

    @app.exception_handler(NoIndexError)
    async def _no_index(request: Request, exc: NoIndexError):
        return JSONResponse({"detail": str(exc), "error": "NoIndexError"}, status_code=409)

    @app.exception_handler(ContextLensError)
    async def _library(request: Request, exc: ContextLensError):
        return JSONResponse({"detail": str(exc), "error": type(exc).__name__}, status_code=400)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"detail": _validation_message(exc), "error": "RequestValidationError"},
                            status_code=422)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.exception("unexpected error on %s", request.url.path)
        return JSONResponse({"detail": f"internal error ({type(exc).__name__}); the server log has the details",
                             "error": "InternalError"}, status_code=500)

    @app.get("/", include_in_schema=False)
    def index():
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/vendor/plotly.min.js", include_in_schema=False)
    def plotly():
        return FileResponse(plotly_js(), media_type="text/javascript",
                            headers={"Cache-Control": "public, max-age=86400"})

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app
