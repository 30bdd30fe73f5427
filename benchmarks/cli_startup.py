"""How long the ``contextlens`` command takes to start, above a bare interpreter.

Each case is a fresh ``python`` process; every round runs all cases in a rotating order,
and each case is reported as the median over the rounds of (case − the bare interpreter
in the same round), in wall-clock and in CPU seconds (user + system of the child), so a
busy machine shifts both sides alike:

- ``bare``: ``python -c pass`` (the baseline);
- ``typer``: ``python -c "import typer"`` (what any Typer command pays: the floor);
- ``help``: ``python -m contextlens --help``;
- ``neighbours``: ``python -m contextlens neighbours bank`` with the packaged GloVe 6B-50d.

With ``--before DIR`` (a source tree, e.g. ``../main/src`` before this change) the same
two commands also run from that tree in the same rounds (``help_before``,
``neighbours_before``). Goals: help ≤ 0.25 s and neighbours ≤ 1.0 s above ``bare`` (wall).

    python benchmarks/cli_startup.py [--json] [--rounds 10] [--before DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
GOALS = {"help": 0.25, "neighbours": 1.0}


def cases(before: str | None) -> dict[str, tuple[list[str], str]]:
    """name -> (python arguments, source tree first on the path)."""
    py = [sys.executable]
    out = {
        "bare": (py + ["-c", "pass"], SRC),
        "typer": (py + ["-c", "import typer"], SRC),
        "help": (py + ["-m", "contextlens", "--help"], SRC),
        "neighbours": (py + ["-m", "contextlens", "neighbours", "bank"], SRC),
    }
    if before:
        out["help_before"] = (out["help"][0], before)
        out["neighbours_before"] = (out["neighbours"][0], before)
    return out


def run_once(argv: list[str], src: str, pycache: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child process; it must exit 0. Bytecode is
    cached (as after any install) under ``pycache``, outside the source trees."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=src, PYTHONPYCACHEPREFIX=pycache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(rounds: int, before: str | None, pycache: str) -> dict:
    todo = cases(before)
    names = list(todo)
    for name in names:  # warm-up (disk cache, .pyc files), not timed
        run_once(*todo[name], pycache)
    times: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]  # rotate: no case always runs first
        for name in order:
            times[name].append(run_once(*todo[name], pycache))
    base = times["bare"]
    result = {"rounds": rounds, "python": sys.version.split()[0], "bare_wall_s": statistics.median(w for w, _ in base),
              "bare_cpu_s": statistics.median(c for _, c in base), "above_bare": {}}
    for name in names[1:]:
        result["above_bare"][name] = {
            "wall_s": round(statistics.median(w - b for (w, _), (b, _) in zip(times[name], base)), 3),
            "cpu_s": round(statistics.median(c - b for (_, c), (_, b) in zip(times[name], base)), 3),
        }
    result["goals"] = {name: {"goal_s": goal, "wall_s": result["above_bare"][name]["wall_s"],
                              "met": result["above_bare"][name]["wall_s"] <= goal} for name, goal in GOALS.items()}
    result["load_average"] = os.getloadavg()[0]
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--before", help="another source tree to time the same commands from (e.g. ../main/src)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli-startup-pycache-") as pycache:
        result = measure(args.rounds, args.before, pycache)
    if args.json:
        print(json.dumps(result))
        return
    print(f"bare interpreter: {result['bare_wall_s']:.3f} s wall, {result['bare_cpu_s']:.3f} s CPU "
          f"(median of {args.rounds}; load average {result['load_average']:.1f})")
    for name, r in result["above_bare"].items():
        goal = GOALS.get(name)
        mark = "" if goal is None else f"   goal ≤ {goal} s: {'met' if r['wall_s'] <= goal else 'NOT met'}"
        print(f"{name:>18}: +{r['wall_s']:.3f} s wall, +{r['cpu_s']:.3f} s CPU{mark}")


if __name__ == "__main__":
    main()
