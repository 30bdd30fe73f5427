"""How long the ``contextlens`` command takes to start, above a bare interpreter.

Each case is a fresh ``python`` process; every round runs all cases in a rotating order,
and each case is reported as the median over the rounds of (case − the bare interpreter
in the same round), in wall-clock and in CPU seconds (user + system of the child), so a
busy machine shifts both sides alike:

- ``bare``: ``python -c pass`` (the baseline);
- ``typer``: ``python -c "import typer"`` (what any Typer command pays: the floor);
- ``help``: ``python -m contextlens --help``;
- ``neighbours``: ``python -m contextlens neighbours bank`` with the packaged GloVe 6B-50d;
- ``compare``: ``compare "The bank approved my loan." "We sat on the bank of the river."
  --word bank --model minilm --json`` (issue 23: the ONNX export cached);
- ``index_search``: ``index search --db DB "We sat on the bank of the river." --word bank
  --json`` on a small index (the first 300 Brown sentences with *bank* ... built once,
  before the rounds, in a temporary folder);
- ``predict``: ``predict "The capital of France is" --model smollm2 -k 5 --json``;
- ``attention_html``: ``attention "The bank approved my loan." --word bank --model minilm --html F``
  (the head, model and neuron views; F in a temporary folder).

With ``--before DIR`` (a source tree, e.g. ``../main/src`` before this change) the same
commands also run from that tree in the same rounds (``*_before``). Every model command is
run once before the rounds (its export and caches built, not timed), and its imports are
recorded: ``imports`` says whether torch or transformers was imported. Goals (CPU above
``bare``): compare ≤ 1.0 s, index search ≤ 1.5 s, predict ≤ 2.0 s; help ≤ 0.25 s and neighbours
≤ 1.0 s (wall).

    python benchmarks/cli_startup.py [--json] [--rounds 10] [--before DIR] [--only compare,index_search]
    python benchmarks/cli_startup.py --lab 3 [--before DIR]   # the lab: start to its first minilm answer
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
GOALS = {"help": 0.25, "neighbours": 1.0}  # wall seconds above bare
CPU_GOALS = {"compare": 1.0, "index_search": 1.5, "predict": 2.0}  # CPU seconds above bare (issue 23)
HEAVY = ("torch", "transformers")
SENTENCE = "We sat on the bank of the river."
MODEL_CASES = ("compare", "index_search", "predict", "attention_html")


def cases(before: str | None, db: str | None, folder: str) -> dict[str, tuple[list[str], str]]:
    """name -> (python arguments, source tree first on the path); files written under ``folder``."""
    py = [sys.executable]
    cl = py + ["-m", "contextlens"]
    out = {
        "bare": (py + ["-c", "pass"], SRC),
        "typer": (py + ["-c", "import typer"], SRC),
        "help": (cl + ["--help"], SRC),
        "neighbours": (cl + ["neighbours", "bank"], SRC),
        "compare": (cl + ["compare", "The bank approved my loan.", SENTENCE, "--word", "bank", "--model",
                          "minilm", "--json"], SRC),
    }
    out["predict"] = (cl + ["predict", "The capital of France is", "--model", "smollm2", "-k", "5", "--json"],
                      SRC)
    out["attention_html"] = (cl + ["attention", "The bank approved my loan.", "--word", "bank", "--model",
                                   "minilm", "--html", str(Path(folder) / "attention.html")], SRC)
    if db:
        out["index_search"] = (cl + ["index", "search", "--db", db, SENTENCE, "--word", "bank", "--json"],
                               SRC)
    if before:
        for name in ("help", "neighbours", *MODEL_CASES):
            if name in out:
                out[f"{name}_before"] = (out[name][0], before)
    return out


def small_index(folder: str, pycache: str) -> str:
    """A usage index of *bank* and *river* over the first 300 Brown sentences that hold one
    of them (``CONTEXTLENS_DATA``), built with minilm; its ``--db`` folder."""
    data = Path(os.environ.get("CONTEXTLENS_DATA", Path.home() / ".cache/contextlens/data"))
    lines = [line for line in (data / "corpora/brown_plain.txt").read_text(errors="replace").splitlines()
             if " bank " in line or " river " in line][:300]
    corpus, db = Path(folder) / "corpus.txt", Path(folder) / "usages.lance"
    corpus.write_text("\n".join(lines) + "\n")
    run_once([sys.executable, "-m", "contextlens", "index", "build", str(corpus), "--db", str(db), "--words",
              "bank,river", "--model", "minilm"], SRC, pycache)
    return str(db)


def heavy_imports(argv: list[str], src: str, pycache: str) -> list[str]:
    """The heavy libraries (torch, transformers) a command imports, by ``python -X importtime``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=src, PYTHONPYCACHEPREFIX=pycache)
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    lines = done.stderr.splitlines()
    names = {line.split("|")[-1].strip() for line in lines if line.startswith("import time:")}
    return sorted(n for n in names if n in HEAVY)


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


def measure(rounds: int, before: str | None, pycache: str, only: list[str] | None, db: str | None,
            folder: str) -> dict:
    todo = cases(before, db, folder)
    if only:
        todo = {n: c for n, c in todo.items() if n == "bare" or n.removesuffix("_before") in only}
    names = list(todo)
    imports = {}
    for name in names:  # warm-up (disk cache, .pyc files, exports), not timed
        run_once(*todo[name], pycache)
        if name.removesuffix("_before") in MODEL_CASES:
            imports[name] = heavy_imports(*todo[name], pycache)
    times: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]  # rotate: no case always runs first
        for name in order:
            times[name].append(run_once(*todo[name], pycache))
    base = times["bare"]
    result = {"rounds": rounds, "python": sys.version.split()[0],
              "bare_wall_s": statistics.median(w for w, _ in base),
              "bare_cpu_s": statistics.median(c for _, c in base), "above_bare": {}, "imports": imports}
    for name in names[1:]:
        result["above_bare"][name] = {
            "wall_s": round(statistics.median(w - b for (w, _), (b, _) in zip(times[name], base)), 3),
            "cpu_s": round(statistics.median(c - b for (_, c), (_, b) in zip(times[name], base)), 3),
            "wall_ratio": round(statistics.median(w / b for (w, _), (b, _) in zip(times[name], base)), 2),
            "cpu_ratio": round(statistics.median(c / max(b, 1e-3)
                                                 for (_, c), (_, b) in zip(times[name], base)), 2),
        }
    result["goals"] = {}
    for name, goal in GOALS.items():
        if name in result["above_bare"]:
            got = result["above_bare"][name]["wall_s"]
            result["goals"][name] = {"goal_s": goal, "measure": "wall", "got_s": got, "met": got <= goal}
    for name, goal in CPU_GOALS.items():
        if name in result["above_bare"]:
            got = result["above_bare"][name]["cpu_s"]
            result["goals"][name] = {"goal_s": goal, "measure": "cpu", "got_s": got, "met": got <= goal}
    result["load_average"] = os.getloadavg()[0]
    return result


def tree_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process and its live descendants (``/proc``)."""
    from lab_load import children

    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        todo += children(p)
    return total


def lab_ready(src: str) -> tuple[float, float]:
    """(wall, CPU seconds) from starting ``contextlens lab --port 0 --no-browser`` until it
    answers ``POST /api/layers`` with minilm (the server and its workers' CPU)."""
    import lab_load

    os.environ["PYTHONPATH"] = src
    start = time.perf_counter()
    lab = lab_load.Lab(src)
    try:
        status, data = lab_load.request(lab.conn(600), "POST", "/api/layers", lab_load.sentence_body(-1))
        wall = time.perf_counter() - start
        if status != 200:
            raise SystemExit(f"the lab answered {status}: {data[:300]!r}")
        return wall, tree_cpu_s(lab.proc.pid)
    finally:
        lab.stop()


def measure_lab(rounds: int, before: str | None) -> dict:
    """Median (wall, CPU) of the lab's readiness, after and (``before``) before, alternating."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    trees = {"lab": SRC, **({"lab_before": before} if before else {})}
    times: dict[str, list[tuple[float, float]]] = {n: [] for n in trees}
    for src in trees.values():  # warm-up: exports, caches
        lab_ready(src)
    for _ in range(rounds):
        for name, src in trees.items():
            times[name].append(lab_ready(src))
    return {n: {"wall_s": round(statistics.median(w for w, _ in t), 3),
                "cpu_s": round(statistics.median(c for _, c in t), 3)} for n, t in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--before", help="another source tree to time the same commands from (e.g. ../main/src)")
    ap.add_argument("--only", help="comma-separated cases to time (bare is always timed), "
                    "e.g. compare,index_search")
    ap.add_argument("--lab", type=int, default=0, metavar="N",
                    help="instead: N rounds of the lab's readiness (start to its first minilm answer)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    if args.lab:
        print(json.dumps({"rounds": args.lab, "lab_ready": measure_lab(args.lab, args.before),
                          "load_average": os.getloadavg()[0]}))
        return
    only = [c.strip() for c in args.only.split(",")] if args.only else None
    with tempfile.TemporaryDirectory(prefix="cli-startup-pycache-") as pycache, \
            tempfile.TemporaryDirectory(prefix="cli-startup-index-") as folder:
        db = small_index(folder, pycache) if only is None or "index_search" in only else None
        result = measure(args.rounds, args.before, pycache, only, db, folder)
    if args.json:
        print(json.dumps(result))
        return
    print(f"bare interpreter: {result['bare_wall_s']:.3f} s wall, {result['bare_cpu_s']:.3f} s CPU "
          f"(median of {args.rounds}; load average {result['load_average']:.1f})")
    for name, r in result["above_bare"].items():
        goal = result["goals"].get(name)
        mark = "" if goal is None else \
            f"   goal ≤ {goal['goal_s']} s {goal['measure']}: {'met' if goal['met'] else 'NOT met'}"
        heavy = result["imports"].get(name)
        heavy = None if heavy is None else ", ".join(heavy) or "neither torch nor transformers"
        imports = "" if heavy is None else f"   imports {heavy}"
        print(f"{name:>22}: +{r['wall_s']:.3f} s wall, +{r['cpu_s']:.3f} s CPU{mark}{imports}")


if __name__ == "__main__":
    main()
