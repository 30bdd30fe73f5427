"""The Live Lab: a local web app over the library (``contextlens lab``); no logic lives here.

:mod:`.app` (the FastAPI app and its routes, serving ``assets/`` at ``/static`` and the views'
scripts at ``/views``), :mod:`.api` (each route over one library call), :mod:`.schemas` (the
requests), :mod:`.state` (the encoders and index the lab holds), :mod:`.worker` (a request's work
in a worker process), :mod:`.limits` and :mod:`.serve`.

Floor 10 (ARCHITECTURE.md), beside the walkthrough, under the CLI: imports ``results``,
:mod:`contextlens.encoders`, :mod:`contextlens.analysis`, :mod:`contextlens.passes` (the index's
encoder), :mod:`contextlens.index`, :mod:`contextlens.views` and the floors below, with FastAPI,
pydantic and uvicorn; never the CLI.
"""

from .app import create_app

__all__ = ["create_app"]
