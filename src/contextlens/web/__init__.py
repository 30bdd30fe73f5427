"""The Live Lab: a local web app over the library (``contextlens lab``); no logic lives here.

:mod:`.app` (the FastAPI app and its routes, serving ``assets/`` at ``/static`` and the views'
scripts at ``/views``), :mod:`.api` (each route over one library call), :mod:`.schemas` (the
requests), :mod:`.state` (the encoders and index the lab holds), :mod:`.worker` (a request's work
in a worker process), :mod:`.limits` and :mod:`.serve`.

Floor: beside the CLI at the top; imports ``errors``, ``text``, ``bounds``,
:mod:`contextlens.encoders`, :mod:`contextlens.analysis`, :mod:`contextlens.evaluation` (the data
folder), :mod:`contextlens.index` and :mod:`contextlens.views`, with FastAPI, pydantic and uvicorn;
never the CLI.
"""

from .app import create_app

__all__ = ["create_app"]
