"""Settings for every test pytest collects here, the doctests in ``src/`` included."""

from __future__ import annotations

import tempfile

import pytest
from _pytest.doctest import DoctestItem


@pytest.fixture(autouse=True)
def _doctest_temp_files(request, tmp_path_factory, monkeypatch):
    """A doctest's ``tempfile.mkdtemp()`` lands in pytest's own temporary folder, which pytest
    prunes, instead of leaving a folder in the system's temp directory on every run."""
    if isinstance(request.node, DoctestItem):
        monkeypatch.setattr(tempfile, "tempdir", str(tmp_path_factory.mktemp("doctest")))
    yield
