"""Every command line of the README, cold and warm: CPU and wall seconds, before and after.

The lines are the ones ``tests/acceptance/test_readme.py`` runs (``tests/readme_lines.py``
reads them), in the README's order, in one folder, so a later line reads what an earlier one
wrote (``bank.npz``, ``usages.lance``), on the same small data where the real run is long
(``CONTEXTLENS_DATA`` a copy whose WiC has its first lines and whose corpora hold only lines
with weat6's words; ``corpus/`` only lines with the words the commands ask about); each row
says which of these it ran with. Each line runs in a fresh process (``python -m contextlens``,
or bash for a shell line, or ``make``'s recipe):

- **cold**: under a fresh cache root (``CONTEXTLENS_CACHE``) holding only what
  ``contextlens models install`` (hence ``make setup``) leaves: the ONNX exports and the
  prepared models linked from the real cache, and the counting kernel compiled by the source
  tree's own install step (``prepare_kernel``; a tree without one gets an empty ``numba``
  folder, as its install left it); every other kind empty. Bytecode is compiled beforehand
  (``compileall``, as an install does) under a prefix of the tree's own.
- **warm**: the same line again right after, in the same root; medians over ``--rounds``.

CPU is the child's user + system seconds (``os.wait4``: the process and what it waited
for); wall is from start to exit (for ``contextlens lab``: from start until its page
answered; it is then stopped). "pays" lists what the cold run built that the warm runs
found: the cache kinds of the fresh root given new entries. The linked kinds (``onnx``,
``models``) are the real cache's folders, which other processes may write to at the same
time: their new entries during the cold run are listed apart ("shared_new"), not as paid.
``--before SRC`` runs every line from that source tree too (``PYTHONPATH``; e.g.
``git archive 1d4fd5f src | tar -x -C /tmp/old``), in a folder of its own, each line from
both trees in turn (before first, under the same load). A line running longer than
``--timeout`` is stopped and its row says so. ``make test`` is not run (it runs the whole
suite); its row says so.

    python benchmarks/readme_commands.py [--rounds 3] [--before /tmp/old/src] [--only 41,97]
        [--skip 522] [--timeout 600] [--json] [--markdown] [--list]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.readme_lines import (  # noqa: E402  (the repository's root first on the path)
    CORPUS_PER_WORD,
    DATA_PER_WORD,
    README,
    Command,
    commands,
    from_root,
    make_recipe,
    reader_env,
    reader_folder,
)
from tests.small_data import WIC_LINES  # noqa: E402

SRC = ROOT / "src"
INSTALLED = ("onnx", "models")  # kinds `models install` fills, linked from the real cache
SHELL = re.compile(r"[|&;<>$`]")  # a line bash must run (as the README test decides)
PREPARE_KERNEL = ("import importlib.util, sys\n"
                  "if importlib.util.find_spec('contextlens.static.cooccurrence') is None: sys.exit(3)\n"
                  "from contextlens.static import cooccurrence\n"
                  "if not hasattr(cooccurrence, 'prepare_kernel'): sys.exit(3)\n"
                  "cooccurrence.prepare_kernel()\n")


@dataclass
class Run:
    """One fresh process: CPU (user + system) and wall seconds, exit status, how it ended."""

    cpu: float
    wall: float
    status: int
    timed_out: bool = False
    error: str = ""


@dataclass
class Tree:
    """A source tree the lines run from, its folder (the reader's), data and install state."""

    name: str
    src: Path
    folder: Path
    pycache: Path
    numba: Path  # the counting kernel as this tree's install step leaves it
    env: dict[str, str] = field(default_factory=dict)


def substitutions(command: Command) -> list[str]:
    """What differs from the README's line as a reader types it, for this line (the README
    test's substitutions)."""
    args, notes = command.args, []
    if args[:1] == ("make",):
        notes.append("make's recipe run (`make -n`), its set-up left out")
    if "lab" in args[1:2] or args[:2] == ("make", "lab"):
        notes.append("--port 0 (a free port); wall until its page answered, then stopped")
    if any((ROOT / a).is_file() for a in args[1:]):
        notes.append("repository file given from the repository root")
    if any(a.rstrip("/") == "corpus" for a in args):
        notes.append(f"corpus/: only lines with weat6's words and the index's ({CORPUS_PER_WORD} per word)")
    if args[1:3] == ("eval", "wic") or args[1:3] == ("eval", "all"):
        notes.append(f"WiC cut to its first {WIC_LINES['train']} train / {WIC_LINES['dev']} dev pairs")
    if args[1:3] == ("bias", "ceat") and "--db" not in args:
        notes.append(f"the corpora cut to lines with weat6's words ({DATA_PER_WORD} per word)")
    if args[1:3] == ("data", "list"):
        notes.append("lists the small data copy")
    return notes


def plan(command: Command) -> tuple[str, list[list[str]] | None]:
    """How a line runs: ``("contextlens", [args...])`` (one or more ``contextlens`` runs),
    ``("bash", None)``, ``("lab", [args])`` or ``("not run: why", None)``."""
    args = list(command.args)
    if args[0] == "make":
        if args[1] == "test":
            return "not run: it runs the whole test suite (the README test checks it runs pytest)", None
        runs = [shlex.split(line)[1:] for line in make_recipe(args[1]) if "/contextlens " in f"{line} "]
        if runs and runs[0][:1] == ["lab"]:
            return "lab", runs[:1]
        return "contextlens", runs
    if args[0] != "contextlens" or SHELL.search(command.text.split("#")[0]):
        return "bash", None
    if args[1] == "lab":
        return "lab", [args[1:]]
    return "contextlens", [from_root(args[1:])]


def _finish(proc: subprocess.Popen, start: float, timeout: float, ready: threading.Event | None = None,
            ready_at: list[float] | None = None) -> Run:
    """Wait for ``proc`` (its whole process group stopped at ``timeout``): its rusage and wall."""
    timed_out = threading.Event()

    def stop():
        timed_out.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(timeout, stop)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = (ready_at[0] if ready_at else time.perf_counter()) - start
    return Run(round(usage.ru_utime + usage.ru_stime, 2), round(wall, 2), proc.returncode, timed_out.is_set())


def run_process(argv: list[str], tree: Tree, root: Path, timeout: float) -> Run:
    """One fresh process in the tree's folder under the cache root ``root``."""
    env = {**tree.env, "CONTEXTLENS_CACHE": str(root)}
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=tree.folder, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        done = _finish(proc, start, timeout)
        if done.status != 0:
            err.seek(0)
            said = err.read().decode(errors="replace").strip().splitlines()
            done.error = said[-1][:300] if said else ""
    return done


def run_lab(args: list[str], tree: Tree, root: Path, timeout: float) -> Run:
    """``contextlens lab`` on a free port until its page answers, then stopped (SIGTERM)."""
    args = [*args]
    if "--port" in args:
        args[args.index("--port") + 1] = "0"
    else:
        args += ["--port", "0"]
    env = {**tree.env, "CONTEXTLENS_CACHE": str(root)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "contextlens", *args], cwd=tree.folder, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)
    ready_at: list[float] = []
    served = threading.Event()

    def serve():
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        if url:
            try:
                with urllib.request.urlopen(url.group(0), timeout=timeout) as page:
                    if "contextlens" in page.read().decode():
                        ready_at.append(time.perf_counter())
                        served.set()
            except OSError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        proc.stdout.read()

    reader = threading.Thread(target=serve, daemon=True)
    reader.start()
    done = _finish(proc, start, timeout, ready_at=ready_at)
    reader.join(5)
    if served.is_set() and done.status in (0, -signal.SIGTERM):
        done.status = 0
    elif not done.timed_out:
        done.status, done.error = 1, "the lab did not serve its page"
    return done


def run_line(command: Command, tree: Tree, root: Path, timeout: float) -> Run:
    """One run of a README line (all of a make recipe's runs summed)."""
    how, runs = plan(command)
    if how == "bash":
        return run_process(["bash", "-c", command.text], tree, root, timeout)
    if how == "lab":
        return run_lab(runs[0], tree, root, timeout)
    total = Run(0.0, 0.0, 0)
    for args in runs:
        one = run_process([sys.executable, "-m", "contextlens", *args], tree, root, timeout)
        total = Run(round(total.cpu + one.cpu, 2), round(total.wall + one.wall, 2), one.status, one.timed_out,
                    one.error)
        if one.status != 0:
            break
    return total


def entries(root: Path) -> dict[str, set[str]]:
    """The entries of every cache kind under ``root`` (links followed), by kind."""
    found = {}
    for kind in sorted(root.iterdir()) if root.is_dir() else []:
        if kind.is_dir() and not kind.name.startswith("."):
            found[kind.name] = {e.name for e in kind.iterdir() if not e.name.startswith(".")}
    return found


def fresh_root(tree: Tree, real: Path, into: Path) -> Path:
    """A cache root as ``models install`` leaves it (module docstring): ``INSTALLED`` kinds
    linked from ``real``, the tree's compiled kernel copied, nothing else."""
    root = into / "cache"
    root.mkdir()
    for kind in INSTALLED:
        if (real / kind).is_dir():
            (root / kind).symlink_to(real / kind)
    shutil.copytree(tree.numba, root / "numba", symlinks=True)
    return root


def prepare_tree(name: str, src: Path, work: Path, data: Path) -> Tree:
    """The tree's reader folder and small data, its bytecode compiled, its install's kernel."""
    base = work / name
    folder, pycache, numba = base / "reader", base / "pycache", base / "numba"
    folder.mkdir(parents=True)
    numba.mkdir()
    small = reader_folder(folder, data, base / "data")
    env = {k: v for k, v in reader_env(small).items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "NUMBA_CACHE_DIR")}
    env.update(PYTHONPATH=str(src), PYTHONPYCACHEPREFIX=str(pycache))
    tree = Tree(name, src, folder, pycache, numba, env)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    root = base / "install-cache"
    root.mkdir()
    (root / "numba").symlink_to(numba)
    step = run_process([sys.executable, "-c", PREPARE_KERNEL], tree, root, 900)
    kernel = {0: "compiled by its install step", 3: "its install step compiles none"}
    print(f"{name}: {src}; counting kernel: {kernel.get(step.status, f'install step failed: {step.error}')} "
          f"({step.cpu} s CPU)", file=sys.stderr, flush=True)
    return tree


def measure(command: Command, tree: Tree, real: Path, work: Path, rounds: int, timeout: float) -> dict:
    """Cold (a fresh root), then ``rounds`` warm runs (the same root): the row's figures."""
    with tempfile.TemporaryDirectory(prefix="root-", dir=work) as tmp:
        root = fresh_root(tree, real, Path(tmp))
        before = entries(root)
        cold = run_line(command, tree, root, timeout)
        after = entries(root)
        new = {kind: len(after[kind] - before.get(kind, set())) for kind in after}
        warm = [] if cold.timed_out else [run_line(command, tree, root, timeout) for _ in range(rounds)]
    row = {"cold": asdict(cold), "load_average": round(os.getloadavg()[0], 1),
           "pays": [f"{kind} ({n} new)" for kind, n in new.items() if n and kind not in INSTALLED],
           "shared_new": [f"{kind} ({n} new)" for kind, n in new.items() if n and kind in INSTALLED]}
    if warm:
        row["warm"] = {"cpu": round(statistics.median(r.cpu for r in warm), 2),
                       "wall": round(statistics.median(r.wall for r in warm), 2),
                       "status": max((r.status for r in warm), key=abs), "rounds": len(warm),
                       "timed_out": any(r.timed_out for r in warm),
                       "error": next((r.error for r in warm if r.error), "")}
    return row


def lines(spec: str | None, known: list[Command], parser: argparse.ArgumentParser) -> set[int] | None:
    """README line numbers from ``41,97``; None for none given."""
    if spec is None:
        return None
    numbers = {int(x) for x in spec.split(",") if x.strip().isdigit()}
    unknown = numbers - {c.line for c in known}
    if unknown or not numbers:
        parser.error(f"{spec!r}: give README line numbers of commands (see --list); "
                     f"unknown: {sorted(unknown)}")
    return numbers


def cell(row: dict | None, kind: str) -> str:
    """``cpu / wall`` of a row's cold or warm run, or why there is none."""
    if row is None:
        return ""
    run = row.get(kind)
    if run is None:
        return "—" if kind == "warm" else ""
    text = f"{run['cpu']} / {run['wall']}"
    if run["timed_out"]:
        return f"stopped at {text}"
    return text if run["status"] == 0 else f"{text} (exit {run['status']})"


def markdown(result: dict) -> str:
    """The result as a Markdown table, one row per README line."""
    head = ("| line | command | cold CPU / wall, before → after | warm CPU / wall, before → after "
            "| what the cold run built (cache kinds) | ran with |\n|---:|---|---|---|---|---|")
    out = [head]
    for r in result["rows"]:
        text = r["command"].replace("\n", " ").replace("|", "\\|")
        text = text if len(text) <= 90 else text[:87] + "..."
        if r.get("not_run"):
            out.append(f"| {r['line']} | `{text}` | {r['not_run']} | | | |")
            continue
        b, a = r.get("before"), r.get("after")
        cold, warm = (f"{cell(b, k)} → {cell(a, k)}" if b else cell(a, k) for k in ("cold", "warm"))
        pays = " · ".join(f"{name}: {', '.join(t['pays']) or 'nothing'}" for name, t in
                          (("before", b), ("after", a)) if t)
        out.append(f"| {r['line']} | `{text}` | {cold} | {warm} | {pays} | "
                   f"{'; '.join(r['substitutions']) or 'as written'} |")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="warm runs per line (median)")
    parser.add_argument("--before", type=Path, help="a source tree to run the lines from too (PYTHONPATH)")
    parser.add_argument("--only", help="README line numbers to time (comma-separated); the lines before "
                        "them still run once, untimed, for the files they write")
    parser.add_argument("--skip", help="README line numbers not to run at all")
    parser.add_argument("--timeout", type=float, default=600, help="seconds before a run is stopped")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    parser.add_argument("--markdown", action="store_true", help="the table in Markdown on stdout")
    parser.add_argument("--list", action="store_true", help="list the README's command lines and stop")
    args = parser.parse_args()
    known = commands(README.read_text(encoding="utf-8"))
    if args.list:
        for c in known:
            print(f"{c.line:4d}  {c.text.splitlines()[0]}")
        return
    only, skip = lines(args.only, known, parser), lines(args.skip, known, parser) or set()
    if args.before is not None and not (args.before / "contextlens").is_dir():
        parser.error(f"--before {args.before}: no contextlens package there; give a source tree's src folder")
    last = max(only) if only else known[-1].line
    todo = [c for c in known if c.line not in skip and c.line <= last]
    data = Path(os.environ.get("CONTEXTLENS_DATA") or Path.home() / ".cache" / "contextlens" / "data")
    real = Path(os.environ.get("CONTEXTLENS_CACHE") or Path.home() / ".cache" / "contextlens")
    result = {"readme": str(README), "rounds": args.rounds, "timeout_s": args.timeout,
              "python": sys.version.split()[0], "after": str(SRC), "before": str(args.before or ""),
              "load_average_start": round(os.getloadavg()[0], 1), "rows": []}
    with tempfile.TemporaryDirectory(prefix="readme-commands-") as tmp:
        work = Path(tmp)
        trees = [prepare_tree("after", SRC, work, data)]
        if args.before is not None:
            trees.insert(0, prepare_tree("before", args.before.resolve(), work, data))
        for command in todo:
            how, _ = plan(command)
            row = {"line": command.line, "command": command.text, "substitutions": substitutions(command)}
            if how.startswith("not run"):
                row["not_run"] = how
            elif only is not None and command.line not in only:
                for tree in trees:  # the files it writes, for the lines after it
                    with tempfile.TemporaryDirectory(prefix="root-", dir=work) as root:
                        run_line(command, tree, fresh_root(tree, real, Path(root)), args.timeout)
                continue
            else:
                for tree in trees:
                    row[tree.name] = measure(command, tree, real, work, args.rounds, args.timeout)
                    print(f"line {command.line} {tree.name}: cold {cell(row[tree.name], 'cold')}, warm "
                          f"{cell(row[tree.name], 'warm')} s (load {row[tree.name]['load_average']}) "
                          f"{row[tree.name]['cold']['error']}", file=sys.stderr, flush=True)
            result["rows"].append(row)
    result["load_average_end"] = round(os.getloadavg()[0], 1)
    if args.json:
        print(json.dumps(result, indent=1))
    if args.markdown:
        print(markdown(result))


if __name__ == "__main__":
    main()
