"""Shared fixtures. Datasets come from CONTEXTLENS_DATA (the Makefile points it at
../shared/data when that exists); without it, data tests skip with a reason, except
under CI (CI=true), where a missing dataset is a failure."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.missing import missing as _missing


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared data directory (CONTEXTLENS_DATA)."""
    root = os.environ.get("CONTEXTLENS_DATA")
    if not root:
        _missing("CONTEXTLENS_DATA is not set; point it at the shared data folder")
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
