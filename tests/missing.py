"""What a test does when something it needs is missing: skip with the reason, except under
CI (CI=true), where a missing dataset or browser is a failure, never a silent skip."""

from __future__ import annotations

import os

import pytest


def missing(reason: str):
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{reason} (CI=true: this must be present, so it is a failure, not a skip)")
    pytest.skip(reason)
