"""``contextlens index search`` end to end: a cold process against searches in one process.

Builds a small usage index (``minilm``, the first ``--sentences`` lines of the Brown corpus,
a few ambiguous words; not timed), then times

- ``cold_cli``: ``contextlens index search --db DB SENTENCE --word WORD --json`` in a new
  process, wall time, ``--repeats`` times (the figure a user sees for one search);
- ``cold_steps``: where a cold process spends it, from a fresh interpreter: importing the
  CLI, opening the index, loading the model, the first search, a second search;
- ``queries_cli``: ``contextlens index search --queries FILE`` with ``--queries-lines``
  searches in one process, and the time per search beyond the first
  (``(wall - cold_cli) / (lines - 1)``);
- ``in_process``: ``search_usages`` repeated in this process once the model is loaded
  (what the lab and a notebook pay per search).

    python benchmarks/index_cli.py [--sentences 3000] [--repeats 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WORDS = ["bank", "spring", "bar", "state", "party"]
QUERY = ("We walked along the bank of the river.", "bank")
STEPS = r"""
import json, sys, time
t0 = time.perf_counter()
from contextlens.cli import main  # noqa: F401  (what the contextlens command imports first)
from contextlens.index.search import search_usages, query_encoder
from contextlens.index.reader import open_store
t1 = time.perf_counter()
store = open_store(sys.argv[1])
store.side()
t2 = time.perf_counter()
query_encoder(store)
t3 = time.perf_counter()
search_usages(store, sys.argv[2], sys.argv[3], k=10)
t4 = time.perf_counter()
search_usages(store, sys.argv[2], sys.argv[3], k=10)
t5 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "open_index_s": t2 - t1, "load_model_s": t3 - t2,
                  "first_search_s": t4 - t3, "second_search_s": t5 - t4}))
"""


def data_root() -> Path:
    return Path(os.environ.get("CONTEXTLENS_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def wall(cmd: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=3000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--queries-lines", type=int, default=20)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from contextlens.index import build_index, search_usages

    cli = [sys.executable, "-m", "contextlens", "index", "search"]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp, "brown.txt")
        lines = (data_root() / "corpora" / "brown_plain.txt").read_text(encoding="utf-8").splitlines()
        corpus.write_text("\n".join(lines[: args.sentences]) + "\n", encoding="utf-8")
        db = str(Path(tmp, "db"))
        built = build_index(corpus, db, WORDS)
        cold = [wall([*cli, "--db", db, QUERY[0], "--word", QUERY[1], "--json"]) for _ in range(args.repeats)]
        steps = [json.loads(subprocess.run([sys.executable, "-c", STEPS, db, *QUERY], check=True,
                                           capture_output=True, text=True).stdout)
                 for _ in range(args.repeats)]
        queries = Path(tmp, "queries.tsv")
        queries.write_text("".join(f"{QUERY[1]}\t{QUERY[0]} ({i})\n" for i in range(args.queries_lines)))
        batch = [wall([*cli, "--db", db, "--queries", str(queries), "--json"]) for _ in range(args.repeats)]
        search_usages(db, *QUERY)  # loads the model in this process
        lat = []
        for i in range(50):
            started = time.perf_counter()
            search_usages(db, f"{QUERY[0]} ({i})", QUERY[1])
            lat.append((time.perf_counter() - started) * 1000)
    median_cold = float(np.median(cold))
    out = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "usages": built.usages, "model": "minilm",
        "cold_cli": {"median_s": median_cold, "runs_s": cold},
        "cold_steps": {k: float(np.median([s[k] for s in steps])) for k in steps[0]},
        "queries_cli": {"lines": args.queries_lines, "median_s": float(np.median(batch)),
                        "per_extra_search_ms": (float(np.median(batch)) - median_cold)
                                               / (args.queries_lines - 1) * 1000},
        "in_process": {"p50_ms": float(np.percentile(lat, 50)), "p95_ms": float(np.percentile(lat, 95))},
        "load_at_end": round(os.getloadavg()[0], 1),
    }
    if args.json:
        print(json.dumps(out))
        return
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
