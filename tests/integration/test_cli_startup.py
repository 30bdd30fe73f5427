"""The command starts at once: importing ``contextlens.cli`` (what ``contextlens --help``
runs) loads none of the heavy libraries; they are imported inside the commands that use
them. The timing goal itself is measured by ``benchmarks/cli_startup.py``."""

from __future__ import annotations

import os
import subprocess
import sys

HEAVY = ("torch", "transformers", "sklearn", "scipy", "matplotlib", "lancedb", "ray", "numpy", "pandas",
         "pyarrow", "rich.table", "rich.progress", "gensim")


def imported_modules(code: str) -> set[str]:
    """Every module ``python -X importtime -c code`` imports (a fresh interpreter)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True,
                          env=env, check=True)
    return {line.split("|")[-1].strip() for line in done.stderr.splitlines()
            if line.startswith("import time:")}


def test_importing_the_cli_loads_no_heavy_library():
    modules = imported_modules("import contextlens.cli")
    assert "contextlens.cli.options" in modules  # the measurement sees our modules
    loaded = sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY)
    assert loaded == []


def test_the_package_itself_is_lazy_but_complete():
    assert not {"numpy", "contextlens.vectors"} & imported_modules("import contextlens")
    done = subprocess.run([sys.executable, "-c", "import contextlens as c; print(c.EmbeddingTable.__name__, "
                           "c.make_encoder.__name__, sorted(set(c.__all__) - set(dir(c))))"],
                          capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.stdout.split() == ["EmbeddingTable", "make_encoder", "[]"], done.stderr
