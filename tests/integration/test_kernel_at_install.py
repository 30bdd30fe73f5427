"""The counting kernel is compiled when models are installed, so `static build` never compiles
in front of its user (issue 23 §2). The commands run in processes of their own, under a
fresh cache root, so nothing the test process has loaded or cached hides a compile."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from tests.missing import need

ROOT = Path(__file__).resolve().parents[2]
WORKED = ROOT / "src" / "contextlens" / "data" / "worked_example.txt"


def run(args: list[str], env: dict) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=900)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_static_build_after_the_install_step_loads_the_kernel_instead_of_compiling_it(tmp_path):
    need("numba")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["CONTEXTLENS_CACHE"] = str(tmp_path / "cache")  # cold: nothing compiled yet
    prepared = run(["-c", "from contextlens.static.cooccurrence import prepare_kernel; s = prepare_kernel(); "
                          "print(s.ready, s.compiled, s.where)"], env).stdout.split()
    assert (prepared[:2] == ["True", "True"]
            and prepared[2].startswith(str(tmp_path / "cache" / "numba"))), prepared
    build = run(["-m", "contextlens", "static", "build", str(WORKED), "--method", "counts", "--window", "3",
                 "--min-count", "1", "-o", str(tmp_path / "bank.npz")], env)
    assert "compiling" not in build.stderr, build.stderr
    assert build.stderr == "" and (tmp_path / "bank.npz").is_file()
    again = run(["-c",
                 "from contextlens.static.cooccurrence import prepare_kernel; print(prepare_kernel().why)"],
                env)
    assert again.stdout.startswith("counting kernel: already compiled in "), again.stdout


def test_models_install_prepares_the_kernel_after_the_models(monkeypatch):
    from contextlens.cli import app
    from contextlens.encoders import models, prepare
    from contextlens.static import cooccurrence

    calls = []
    monkeypatch.setattr(models, "install", lambda name, **kw: calls.append(("install", name)) or None)
    monkeypatch.setattr(prepare, "prepare_onnx", lambda name: calls.append(("onnx", name))
                        or prepare.PreparedModel(
        name, True, "/c/onnx/bert-x", 2e-6, None, 1.0))  # the export and its check (issue 23)
    monkeypatch.setattr(cooccurrence, "prepare_kernel",
                        lambda: calls.append(("kernel",)) or cooccurrence.KernelStatus(
        True, False, "/c/numba/kernel", "counting kernel: already compiled in /c/numba/kernel"))
    result = CliRunner().invoke(app, ["models", "install", "minilm"])
    assert result.exit_code == 0, result.output
    assert calls == [("install", "minilm"), ("onnx", "minilm"), ("kernel",)]
    assert "counting kernel: already compiled in /c/numba/kernel" in result.output
    assert "exported minilm to ONNX" in result.output and "start without torch" in result.output
    calls.clear()
    assert CliRunner().invoke(app, ["models", "install", "minilm", "--no-prepare"]).exit_code == 0
    assert calls == [("install", "minilm")]
