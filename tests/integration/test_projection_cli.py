"""The crash of issue 10 through the CLI: t-SNE of one word's static rows (no variance) used
to end `contextlens explore` with SIGSEGV (exit 139); it now plots the usages at one point."""

from __future__ import annotations

import os
import subprocess
import sys


def test_explore_tsne_of_identical_usages_plots_instead_of_crashing(tmp_path):
    png = tmp_path / "e.png"
    cmd = [sys.executable, "-m", "contextlens", "explore", "bank", "-s", "The bank.", "-s", "A bank.",
           "--method", "static", "--projection", "tsne", "--plot", str(png)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "120"})
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
