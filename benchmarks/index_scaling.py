"""What a usage-index build costs: usages per second per core on Brown, the scaling with Ray
actors on this machine, the bytes on disk per usage, and a projection to a large corpus.

Over the first ``--sentences`` sentences of Brown (``brown_plain.txt``), ``minilm``, the last
layer stored as float16, every alphabetic word seen ``--min-count`` times in the slice as
targets (``--all-words``: every sentence is encoded; the heaviest use of the index), or with
``--words fifty`` the 50 nouns and verbs of ``index_build.py`` (lower-case match):

- ``local``: ``build_index`` with the local engine, one run per ``--runs`` entry
  (``onnx`` = ONNX Runtime fp32, today's default engine; ``torch``; ``torch-bf16`` = torch
  with ``precision="bf16"``, opt-in), the model on **one thread**, so usages per
  CPU-second are usages per second per core;
- ``ray``: ``build_index(engine="ray")`` on a local Ray cluster started with
  ``max(actors, cores)`` logical CPUs (so that 4 actors fit on a 2-core machine), one run
  per ``--actors`` entry (each actor one CPU, one thread; the slice is one chunk, so the
  actors start once, inside the timed run, as they do in a build).

Each run is a freshly spawned process; the model is loaded before the clock starts (local)
or by the actors inside it (Ray). A run reports wall seconds, CPU seconds (its own, and for
Ray every process it started, Ray's workers included, sampled every 0.2 s), the load
average before and after (the machine may be shared), sentences, usages, and the bytes per
usage of the compacted LanceDB table (its data, as LanceDB counts it), of the full side
index and of the compressed one (written beside it for the measure).

``--project N`` adds the projection to a corpus of N sentences (default 150M, English
Wikipedia's order of size) from the ``onnx`` run: core-hours, disk with and without
compression, and the hours on 1, 8, 32 and 128 nodes of ``--node-cores`` cores, assuming
the per-core rate holds (the Ray runs show how far it does here).

``--keep DIR`` keeps the ``onnx`` run's index there (e.g. for ``index_search.py --brown-db``).

    python benchmarks/index_scaling.py [--sentences 2000] [--runs onnx,torch,torch-bf16]
        [--actors 1,2,4] [--words all|fifty] [--keep DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIFTY = ("time man year way day thing people world life hand part place case work state house country fact "
         "water money school government end point group number course war area night make take come "
         "see know give find think say go get look use tell ask seem feel leave call keep").split()
ENGINES = {"onnx": ("onnx", "fp32"), "torch": ("torch", "fp32"), "torch-bf16": ("torch", "bf16")}


def data_root() -> Path:
    return Path(os.environ.get("CONTEXTLENS_DATA") or ROOT.parent / "shared" / "data")


def _cpu_self() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class TreeCPU:
    """CPU seconds of every process below this one (Ray's GCS, raylet, workers), sampled in a
    thread every ``every`` seconds: a process that ends between samples loses its last
    fraction of a second."""

    def __init__(self, every: float = 0.2):
        import psutil

        self.me, self.every, self.seen, self._stop = psutil.Process(), every, {}, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        for p in self.me.children(recursive=True):
            try:
                t = p.cpu_times()
                self.seen[p.pid] = t.user + t.system
            except Exception:  # gone meanwhile
                pass

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def total(self) -> float:
        self._sample()
        return sum(self.seen.values())

    def __enter__(self):
        self._sample()
        self.before = dict(self.seen)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def used(self) -> float:
        """CPU seconds since entering, over every process below this one."""
        return self.total() - sum(self.before.values())


def _words(corpus: str, which: str, min_count: int):
    from contextlens.corpus.targets import count_words, iter_corpus_sentences

    if which == "fifty":
        return FIFTY
    return count_words(iter_corpus_sentences(corpus), min_count=min_count)


def _sizes(db: str) -> dict:
    """Bytes per usage of the LanceDB table's data, the full side index and a compressed one."""
    from contextlens.index.reader import open_store
    from contextlens.index.side_build import write_side_index
    from contextlens.index.side_index import side_bytes
    from contextlens.passes.rows import ROW_COLUMNS

    reader = open_store(db)
    n = reader.count()
    side = reader.side()
    table = int(reader.table.stats()["total_bytes"])
    with tempfile.TemporaryDirectory(dir=db) as tmp:
        write_side_index(Path(tmp), reader.table, reader.table.version, ROW_COLUMNS, reader.layers,
                         int(reader.params["dim"]), kind="compressed")
        packed = side_bytes(tmp)
    return {"usages": n, "table_bytes_per_usage": table / n,
            "full_side_bytes_per_usage": side_bytes(side.folder) / n,
            "compressed_side_bytes_per_usage": packed / n, "side_kind_built": side.kind}


def run_local(corpus: str, words: list[str], match: str, db: str, engine: str, precision: str, queue) -> None:
    from contextlens.index import build_index
    from contextlens.index.build import make_index_encoder

    encoder = make_index_encoder("minilm", None, 32, threads=1, engine=engine, precision=precision)
    # the first call's one-off costs, outside the clock
    encoder[0].encode(["A warm-up sentence for the engine."])
    load0, cpu0, t0 = os.getloadavg()[0], _cpu_self(), time.perf_counter()
    r = build_index(corpus, db, words, match=match, encoder=encoder, compress=False)
    wall, cpu = time.perf_counter() - t0, _cpu_self() - cpu0
    queue.put({"engine": engine, "precision": precision, "threads": 1, "sentences": r.sentences,
               "usages": r.usages, "wall_s": wall, "cpu_s": cpu, "load_before": load0,
               "load_after": os.getloadavg()[0], "usages_per_s": r.usages / wall,
               "usages_per_cpu_s": r.usages / cpu, "sentences_per_cpu_s": r.sentences / cpu, **_sizes(db)})


def run_ray(corpus: str, words: list[str], match: str, db: str, actors: int, queue) -> None:
    import ray

    from contextlens.index import build_index

    ray.init(address="local", num_cpus=max(actors, os.cpu_count() or 1), include_dashboard=False,
             log_to_driver=False)
    try:
        with TreeCPU() as tree:
            load0, cpu0, t0 = os.getloadavg()[0], _cpu_self(), time.perf_counter()
            r = build_index(corpus, db, words, match=match, engine="ray", concurrency=actors,
                            chunk_size=10**6, compress=False)
            wall, cpu = time.perf_counter() - t0, _cpu_self() - cpu0 + tree.used()
    finally:
        ray.shutdown()
    queue.put({"engine": "ray", "actors": actors, "sentences": r.sentences, "usages": r.usages,
               "wall_s": wall, "cpu_s": cpu, "load_before": load0, "load_after": os.getloadavg()[0],
               "usages_per_s": r.usages / wall, "usages_per_cpu_s": r.usages / cpu,
               "nodes": r.nodes})


def spawn(fn, *args):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=fn, args=(*args, queue))
    p.start()
    out = queue.get()
    p.join()
    return out


def project(onnx: dict, sentences: int, node_cores: int, bf16: dict | None) -> dict:
    """The cost of indexing ``sentences`` sentences, scaled from the one-thread ONNX run."""
    # encoding, planning and writing, per corpus sentence
    per_sentence_cpu = onnx["cpu_s"] / onnx["sentences"]
    usages = sentences * onnx["usages"] / onnx["sentences"]
    core_hours = sentences * per_sentence_cpu / 3600
    table = usages * onnx["table_bytes_per_usage"]
    out = {"sentences": sentences, "usages": usages,
           "usages_per_sentence": onnx["usages"] / onnx["sentences"], "core_hours": core_hours,
           "disk_tb_full": (table + usages * onnx["full_side_bytes_per_usage"]) / 1e12,
           "disk_tb_compressed": (table + usages * onnx["compressed_side_bytes_per_usage"]) / 1e12,
           "table_tb": table / 1e12, "node_cores": node_cores,
           "hours_on_nodes": {str(n): core_hours / (n * node_cores) for n in (1, 8, 32, 128)}}
    if bf16 is not None:
        out["core_hours_bf16"] = sentences * bf16["cpu_s"] / bf16["sentences"] / 3600
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(data_root() / "corpora" / "brown_plain.txt"))
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--words", choices=("all", "fifty"), default="all")
    ap.add_argument("--min-count", type=int, default=5)
    ap.add_argument("--runs", default="onnx,torch,torch-bf16", help="local runs: onnx, torch, torch-bf16")
    ap.add_argument("--actors", default="1,2,4", help="Ray runs: actors per run ('' for none)")
    ap.add_argument("--project", type=int, default=150_000_000)
    ap.add_argument("--node-cores", type=int, default=32)
    ap.add_argument("--keep", type=Path, help="keep the onnx run's index in this new folder")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.keep is not None and args.keep.exists():
        ap.error(f"--keep {args.keep} exists; give a new folder")
    from contextlens.encoders.engines import bf16_instructions

    out = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
           "cpu_bf16_instructions": bf16_instructions(), "words": args.words,
           "model": "minilm", "dtype": "float16"}
    with tempfile.TemporaryDirectory() as tmp:
        lines = Path(args.corpus).read_text(encoding="utf-8").splitlines()[: args.sentences]
        corpus = str(Path(tmp, "brown.txt"))
        Path(corpus).write_text("\n".join(lines) + "\n", encoding="utf-8")
        words = _words(corpus, args.words, args.min_count)
        out["targets"], out["sentences"] = len(words), len(lines)
        match = "lower"
        out["local"] = []
        for i, name in enumerate(r for r in args.runs.split(",") if r):
            engine, precision = ENGINES[name]
            db = args.keep if name == "onnx" and args.keep is not None else Path(tmp, f"db-{i}")
            out["local"].append(spawn(run_local, corpus, words, match, str(db), engine, precision))
            print(json.dumps(out["local"][-1]), flush=True)
        out["ray"] = []
        for n in (int(a) for a in args.actors.split(",") if a):
            out["ray"].append(spawn(run_ray, corpus, words, match, str(Path(tmp, f"ray-{n}")), n))
            print(json.dumps(out["ray"][-1]), flush=True)
    onnx = next((r for r in out["local"] if r["engine"] == "onnx"), None)
    bf16 = next((r for r in out["local"] if r["precision"] == "bf16"), None) if out["local"] else None
    if onnx is not None and args.project:
        out["projection"] = project(onnx, args.project, args.node_cores, bf16)
    if out["ray"]:
        base = out["ray"][0]["usages_per_s"] / out["ray"][0]["actors"]
        for r in out["ray"]:
            r["speedup_vs_one_actor"] = r["usages_per_s"] / out["ray"][0]["usages_per_s"]
            r["efficiency"] = r["usages_per_s"] / (base * r["actors"])
    out["load_at_end"] = round(os.getloadavg()[0], 1)
    print(json.dumps(out) if args.json else json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
