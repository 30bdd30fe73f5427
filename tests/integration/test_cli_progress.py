"""What a user sees on stderr while a slow first run works: what it does, how far along it
is and that it happens once, and no third-party warning. The commands run as a user runs
them (a process of their own, stderr not a terminal), so nothing of the test's own set-up
(warning filters, loaded modules, a warm numba cache) hides what they print."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.missing import need

ROOT = Path(__file__).resolve().parents[2]
WORKED = ROOT / "src" / "contextlens" / "data" / "worked_example.txt"


def run(*args: str, **env: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "contextlens", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_the_first_count_says_it_compiles_the_kernel_once_and_the_second_is_silent(tmp_path):
    need("numba")
    cache = tmp_path / "numba"  # cold: the kernel compiles
    build = ("static", "build", str(WORKED), "--method", "counts", "--window", "3", "--min-count", "1", "-o")
    first = run(*build, str(tmp_path / "a.npz"), NUMBA_CACHE_DIR=str(cache)).stderr.splitlines()
    assert first[0].startswith("compiling the counting kernel: 0 of 9 functions (once, then cached in "
                               f"{cache}"), first
    assert first[-1].startswith("compiling the counting kernel: done in "), first
    assert not [line for line in first if "Warning" in line or "WARNING" in line]
    second = run(*build, str(tmp_path / "b.npz"), NUMBA_CACHE_DIR=str(cache)).stderr
    assert second == ""  # loaded from the cache: nothing to wait for, nothing said


def test_a_umap_projection_says_what_it_does_and_prints_no_warning(tmp_path):
    need("umap")
    sentences = ["The bank approved my loan.", "She opened an account at the bank.",
                 "The bank raised its rates.",
                 "We sat on the bank of the river.", "Reeds grew along the bank of the stream."]
    args = ["explore", "bank", *(a for s in sentences for a in ("-s", s)), "--projection", "umap", "--json"]
    err = run(*args).stderr.splitlines()
    assert err[0] == "UMAP of 5 points (its first run compiles numba code, later runs load it)...", err
    assert err[-1].startswith("UMAP of 5 points: done in "), err
    assert not [line for line in err if "Warning" in line or "WARNING" in line], err
