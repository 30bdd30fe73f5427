"""What a test does when something it needs is missing: skip with the reason, except under
CI (CI=true), where a missing dataset, package, model or browser is a failure, never a
silent skip. Every skip in the suite goes through :func:`missing`; :func:`need` and
:func:`need_model` are its two common cases (``pytest.importorskip`` and "is the packaged
model installed?")."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

INSTALL_ALL = "pip install -e '.[all,dev]'"


def missing(reason: str):
    """Skip (the test, or the whole module when called at import) with ``reason``; under
    CI=true, fail instead."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: this must be present, so it is a failure, not a skip)")
    pytest.skip(reason, allow_module_level=True)


def need(module: str, install: str = INSTALL_ALL) -> ModuleType:
    """``import module``, or :func:`missing` naming the command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        missing(f"{module} is not installed ({err}): {install}")


def need_model(name: str) -> None:
    """:func:`missing` unless the packaged model ``name`` is installed (and so loads offline)."""
    from contextlens.encoders import models

    if not models.is_installed(name):
        missing(f"{name} is not installed: {' '.join(models.install_command(name))}")
