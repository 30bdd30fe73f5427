"""The first-use costs a README command can hit, cold and warm: CPU and wall seconds.

Each case is one README command whose first run builds something that later runs reuse
(an ONNX export, the neighbours reference, the compiled counting kernel, a prepared
model). It runs twice in a fresh process each time, under a fresh cache root
(``CONTEXTLENS_CACHE``) in which every cache kind but the case's own is a link to the
real cache: the first run pays only that case's cost (cold), the second finds it built
(warm). A case whose cost the install step takes on (``contextlens models install``, hence
``make setup``) runs that step first, timed apart ("install"), so "cold" is what a user's
first command pays after the install. ``--src DIR`` runs another source tree (``PYTHONPATH``),
e.g. main before a change: ``git archive HEAD src | tar -x -C /tmp/old``. CPU seconds are the child's user +
system time (``os.wait4``), the steadier figure on a busy machine.

    python benchmarks/first_use.py [--cases kernel,neighbours] [--src /tmp/old/src] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKED = ROOT / "src" / "contextlens" / "data" / "worked_example.txt"

#: the library call the install step makes for a case (``contextlens models install``), by case
INSTALL = {"kernel": "from contextlens.static.cooccurrence import prepare_kernel; prepare_kernel()"}
#: name -> (the command's arguments after ``contextlens``, the cache kinds left cold, what it builds)
CASES = {
    "kernel": (["static", "build", str(WORKED), "--method", "counts", "--window", "3", "--min-count", "1",
                "-o", "{tmp}/bank.npz"], ("numba",), "the counting kernel compiled by numba"),
    "export": (["compare", "The bank approved my loan.", "We sat on the bank of the river.", "--word", "bank",
                "--model", "minilm", "--json"], ("onnx",), "minilm's ONNX export"),
    "neighbours": (["neighbours", "bank", "--in", "We sat on the bank of the river.", "--model", "minilm",
                    "-k", "10", "--json"], ("neighbours",),
                   "minilm's neighbours reference (20,000 words alone, every layer)"),
    "tables": (["neighbours", "bank", "--json"], ("tables",), "GloVe 6B-50d prepared for memory-mapping"),
    "smollm2": (["predict", "The capital of France is", "--model", "smollm2", "-k", "5", "--json"],
                ("models", "onnx"), "SmolLM2 de-quantised to float32, and its export"),
    "ceat": (["bias", "ceat", "weat6", "--model", "minilm", "--json"], ("ceat",),
             "CEAT's contexts read from the corpora and encoded (cached since issue 23: kind ceat)"),
}


def run(args: list[str], env: dict, python: tuple[str, ...] = ("-m", "contextlens")) -> dict:
    """One fresh process: wall and CPU (user + system) seconds, exit status."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *python, *args], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    stderr = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall": round(wall, 2), "cpu": round(usage.ru_utime + usage.ru_stime, 2),
            "status": proc.returncode, "stderr": stderr.strip().splitlines()[-3:]}


def fresh_root(real: Path, cold: tuple[str, ...], into: Path) -> Path:
    """A cache root whose kinds (every folder of ``real``: the kinds of any source tree)
    link to ``real``'s, except the ``cold`` ones (empty)."""
    root = into / "cache"
    root.mkdir()
    for kind in sorted(real.iterdir()) if real.is_dir() else []:
        if kind.is_dir() and kind.name not in cold and not kind.name.startswith("."):
            (root / kind.name).symlink_to(kind)
    return root


def measure(name: str, src: Path | None) -> dict:
    args, cold, what = CASES[name]
    real = Path(os.environ.get("CONTEXTLENS_CACHE") or Path.home() / ".cache" / "contextlens")
    with tempfile.TemporaryDirectory(prefix=f"first-use-{name}-") as tmp:
        env = {**os.environ, "CONTEXTLENS_CACHE": str(fresh_root(real, cold, Path(tmp)))}
        env.pop("NUMBA_CACHE_DIR", None)
        if src is not None:
            env["PYTHONPATH"] = str(src)
        argv = [a.replace("{tmp}", tmp) for a in args]
        runs = {}
        if name in INSTALL:
            step = run([], env, ("-c", INSTALL[name]))
            runs["install"] = step if step["status"] == 0 else None  # None: this source has no such step
        runs.update(cold=run(argv, env), warm=run(argv, env))
        shutil.rmtree(Path(tmp) / "cache", ignore_errors=True)
    return {"case": name, "what": what, "command": "contextlens " + " ".join(args), "cold_kinds": list(cold),
            "load_average": round(os.getloadavg()[0], 1), **runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES), help=f"comma-separated: {', '.join(CASES)}")
    parser.add_argument("--src", type=Path,
                        help="run this source tree (PYTHONPATH) instead of the installed one")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args()
    names = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s) {', '.join(unknown)}; cases: {', '.join(CASES)}")
    results = []
    for name in names:
        results.append(measure(name, args.src))
        r = results[-1]
        install = f"install {r['install']['cpu']} / {r['install']['wall']}, " if r.get("install") else ""
        print(f"{name}: {install}cold {r['cold']['cpu']} s CPU / {r['cold']['wall']} s wall, warm "
              f"{r['warm']['cpu']} / {r['warm']['wall']} (load {r['load_average']})",
              file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps({"src": str(args.src or "installed"), "results": results}, indent=1))


if __name__ == "__main__":
    main()
