"""Shared fixtures. Datasets come from CONTEXTLENS_DATA; like the Makefile, this file points
it at ../shared/data when that folder exists and the variable is unset, so a plain
``pytest`` runs what ``make test`` runs. Without it, data tests skip with a reason, except
under CI (CI=true), where a missing dataset is a failure (tests/missing.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.missing import missing as _missing

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
if "CONTEXTLENS_DATA" not in os.environ and SHARED_DATA.is_dir():
    os.environ["CONTEXTLENS_DATA"] = str(SHARED_DATA)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared data directory (CONTEXTLENS_DATA)."""
    root = os.environ.get("CONTEXTLENS_DATA")
    if not root:
        _missing(f"CONTEXTLENS_DATA is not set and {SHARED_DATA} does not exist; point it at the shared data "
                 "folder")
    path = Path(root)
    if not path.is_dir():
        _missing(f"CONTEXTLENS_DATA={root} is not a directory")
    return path


@pytest.fixture(scope="session")
def brown(data_dir: Path) -> Path:
    """The Brown corpus, one sentence per line."""
    path = data_dir / "corpora" / "brown_plain.txt"
    if not path.is_file():
        _missing(f"{path} is missing")
    return path
