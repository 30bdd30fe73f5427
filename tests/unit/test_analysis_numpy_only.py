"""The floors: only ``encoders/`` imports torch or transformers; ``analysis/`` is numpy, scipy and
scikit-learn (it asks the encoders for numpy arrays), even inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import contextlens.analysis

HEAVY = {"torch", "transformers"}


def heavy_imports(path: Path) -> list[str]:
    """``["file:line module"]`` for each import of torch or transformers anywhere in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
        found += [f"{path.name}:{node.lineno} {n}" for n in names if n.split(".")[0] in HEAVY]
    return found


def test_no_analysis_module_imports_torch():
    folder = Path(contextlens.analysis.__file__).parent
    assert [hit for p in sorted(folder.glob("*.py")) for hit in heavy_imports(p)] == []
