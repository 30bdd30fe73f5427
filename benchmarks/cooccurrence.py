"""Co-occurrence counting speed and memory: contextlens vs the dict loop and a numpy/pandas peer.

Window-5 counts over the Brown corpus (57,340 sentences, 1.16M tokens),

(a) with ``contextlens.static.cooccurrence_matrix``, its compiled kernel (``engine="numba"``,
    the default when numba is installed) and its numpy engine (``engine="numpy"``);
(b) with the loop the course text writes: ``defaultdict(lambda: defaultdict(int))`` and
    ``cooc[tok][tokens[j]] += 1`` for every j within 5 of i in the line;
(c) with the numpy/pandas idiom: ``pandas.factorize`` over all tokens, then for each
    offset d both orientations of every pair d apart in a line as one int64 code
    ``a * V + b``, counted by ``np.unique(..., return_counts=True)``, as CSR.

Every run happens in its own freshly spawned process, reading included. The time starts
after the imports, which are timed apart (for contextlens they include loading the
compiled kernel from numba's on-disk cache). Each run reports its peak resident memory
(``VmHWM``, read right after the counting) and the peak after its imports, so the
counting's own share shows. Contenders run in rotating
order, round after round; the figures are medians. The results are checked equal, entry
by entry. The kernel's first run (compiling, with an empty cache folder) is timed apart,
a scaling run counts 1x, 4x and 16x Brown (the file concatenated to a temporary file),
and the kernel's CPU time is split by compiled step (where the time goes).

    python benchmarks/cooccurrence.py [--corpus PATH] [--repeats 5] [--loop-repeats 3]
        [--compile-repeats 1] [--scaling 1,4,16] [--scaling-repeats 3] [--no-phases] [--json]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WINDOW = 5


def default_corpus() -> Path:
    data = Path(os.environ.get("CONTEXTLENS_DATA") or ROOT.parent / "shared" / "data")
    return data / "corpora" / "brown_plain.txt"


def _peak_mb() -> float:
    """This process's peak resident memory. Linux's ``VmHWM`` (``ru_maxrss`` keeps the
    peak of the forked parent across ``exec``, so a spawned child would inherit it)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _save_canonical(out: str, vocab: list[str], counts) -> None:
    """The words with a co-occurrence (the loop never sees one-word lines), sorted, and
    their counts: the form every contender is compared in."""
    import numpy as np
    import scipy.sparse as sp

    counts = sp.csr_matrix(counts)
    seen = np.flatnonzero(counts.getnnz(axis=1))
    order = seen[np.argsort(np.array(vocab, dtype=object)[seen])]
    sp.save_npz(out, counts[order][:, order].tocsr().astype(np.int64))
    Path(out + ".vocab").write_text("\n".join(vocab[i] for i in order), encoding="utf-8")


def run_contextlens(corpus: str, out: str | None, queue, engine: str = "numba") -> None:
    start = time.perf_counter()
    from contextlens.static.cooccurrence import cooccurrence_matrix

    if engine == "numba":
        from contextlens.static import kernel  # numba, and the kernel loaded (or compiled)
    imported, import_rss = time.perf_counter() - start, _peak_mb()

    start = time.perf_counter()
    co = cooccurrence_matrix(corpus, window=WINDOW, engine=engine)
    seconds = time.perf_counter() - start
    peak = _peak_mb()
    if out:  # after the measurement
        _save_canonical(out, co.vocab, co.counts)
    result = {"seconds": seconds, "peak_rss_mb": peak, "import_seconds": imported,
              "import_rss_mb": import_rss, "nnz": int(co.counts.nnz), "words": len(co.vocab),
              "tokens": co.n_tokens}
    if engine == "numba":
        result["cache"] = str(kernel.cache_location())
    queue.put(result)


def run_numpy_engine(corpus: str, out: str | None, queue) -> None:
    run_contextlens(corpus, out, queue, engine="numpy")


def run_loop(corpus: str, out: str | None, queue) -> None:
    from collections import defaultdict

    import_rss = _peak_mb()
    start = time.perf_counter()
    window = WINDOW
    cooc = defaultdict(lambda: defaultdict(int))
    with open(corpus, encoding="utf-8") as f:
        for sentence in f:
            tokens = sentence.split()
            for i, tok in enumerate(tokens):
                begin, end = max(0, i - window), min(len(tokens), i + window + 1)
                for j in range(begin, end):
                    if j != i:
                        cooc[tok][tokens[j]] += 1
    seconds = time.perf_counter() - start
    peak = _peak_mb()
    if out:
        import numpy as np
        import scipy.sparse as sp

        vocab = sorted(set(cooc).union(*cooc.values()))
        index = {w: i for i, w in enumerate(vocab)}
        rows, cols, data = [], [], []
        for word, row in cooc.items():
            for context, n in row.items():
                rows.append(index[word])
                cols.append(index[context])
                data.append(n)
        _save_canonical(out, vocab, sp.csr_matrix((np.array(data), (rows, cols)),
                                                  shape=(len(vocab), len(vocab))))
    queue.put({"seconds": seconds, "peak_rss_mb": peak, "import_seconds": 0.0,
               "import_rss_mb": import_rss})


def run_peer(corpus: str, out: str | None, queue) -> None:
    start = time.perf_counter()
    import itertools

    import numpy as np
    import pandas as pd
    import scipy.sparse as sp

    imported, import_rss = time.perf_counter() - start, _peak_mb()
    start = time.perf_counter()
    with open(corpus, encoding="utf-8") as f:
        lines = [line.split() for line in f]
    lengths = np.fromiter(map(len, lines), np.int64, len(lines))
    tokens = np.fromiter(itertools.chain.from_iterable(lines), object, int(lengths.sum()))
    del lines
    codes, uniques = pd.factorize(tokens)  # (tokens,) word ids
    v = len(uniques)
    line = np.repeat(np.arange(len(lengths)), lengths)  # (tokens,) line of each token
    pairs = []
    for d in range(1, WINDOW + 1):
        same = line[:-d] == line[d:]
        a, b = codes[:-d][same].astype(np.int64), codes[d:][same].astype(np.int64)
        pairs += [a * v + b, b * v + a]
    keys, n = np.unique(np.concatenate(pairs), return_counts=True)  # sorted: CSR order
    indptr = np.zeros(v + 1, np.int64)
    np.cumsum(np.bincount(keys // v, minlength=v), out=indptr[1:])
    counts = sp.csr_matrix((n, (keys % v).astype(np.int32), indptr), shape=(v, v))
    seconds = time.perf_counter() - start
    peak = _peak_mb()
    if out:
        _save_canonical(out, list(uniques), counts)
    queue.put({"seconds": seconds, "peak_rss_mb": peak, "import_seconds": imported,
               "import_rss_mb": import_rss})


def phases(corpus: str, repeats: int) -> dict:
    """CPU seconds of each step of the kernel on ``corpus`` (in this process, after a warm-up
    run; the median run of ``repeats``): where the time goes."""
    import contextlens.static.cooccurrence as co
    import contextlens.static.kernel as kernel

    steps = {"map_tokens": "tokens -> ids", "add_pairs": "pairs", "rehash_pairs": "pair table growth",
             "renumber": "first-block renumbering", "lower_by_column": "CSR: cells by column",
             "rows_from_columns": "CSR: by row", "symmetric": "CSR: symmetric",
             "sort_words": "vocabulary order"}
    spent: dict[str, float] = {}

    def timed(fn, label):
        def call(*args):
            start = time.process_time()
            try:
                return fn(*args)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - start
        return call

    originals = {name: getattr(kernel, name) for name in steps}
    for name, label in steps.items():
        setattr(kernel, name, timed(originals[name], label))
    try:
        co.cooccurrence_matrix(corpus, window=WINDOW, engine="numba")
        runs = []
        for _ in range(repeats):
            spent.clear()
            start = time.process_time()
            co.cooccurrence_matrix(corpus, window=WINDOW, engine="numba")
            runs.append((time.process_time() - start, dict(spent)))
    finally:
        for name, fn in originals.items():
            setattr(kernel, name, fn)
    total, spent = sorted(runs, key=lambda r: r[0])[len(runs) // 2]
    out = {label: round(spent.get(label, 0.0), 4) for label in steps.values()}
    out["Python: reading, decoding, encoding, vocabulary lists"] = round(total - sum(spent.values()), 4)
    return {"cpu_seconds": round(total, 4), "steps": out}


def run_phases(corpus: str, out: str | None, queue) -> None:
    queue.put(phases(corpus, 5))


def in_child(target, corpus: str, out: str | None = None, env: dict | None = None) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})  # a spawned child starts with the parent's environment
    try:
        proc = ctx.Process(target=target, args=(corpus, out, queue))
        proc.start()
    finally:
        for k, old in saved.items():
            if old is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = old
    result = queue.get()
    proc.join()
    if proc.exitcode:
        raise RuntimeError(f"{target.__name__} failed with exit code {proc.exitcode}")
    return result


def same_counts(a: str, b: str) -> bool:
    import scipy.sparse as sp

    if Path(a + ".vocab").read_text("utf-8") != Path(b + ".vocab").read_text("utf-8"):
        return False
    x, y = sp.load_npz(a), sp.load_npz(b)
    return x.shape == y.shape and (x != y).nnz == 0


def machine() -> dict:
    import numba
    import numpy
    import pandas

    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(),
            "python": platform.python_version(), "numpy": numpy.__version__,
            "pandas": pandas.__version__, "numba": numba.__version__,
            "load_average": [round(x, 2) for x in os.getloadavg()]}


CONTENDERS = {"contextlens": run_contextlens, "numpy_engine": run_numpy_engine, "loop": run_loop,
              "peer": run_peer}


def _summary(runs: list[dict]) -> dict:
    return {"seconds": round(statistics.median(r["seconds"] for r in runs), 4),
            "import_seconds": round(statistics.median(r["import_seconds"] for r in runs), 3),
            "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs), 1),
            "import_rss_mb": round(max(r["import_rss_mb"] for r in runs), 1),
            "runs": [round(r["seconds"], 4) for r in runs]}


def compare(corpus: str, repeats: int, loop_repeats: int, tmp: str, cache: str) -> dict:
    """Every contender, in rotating order round after round; equality against the loop."""
    names = list(CONTENDERS)
    runs: dict[str, list[dict]] = {n: [] for n in names}
    for k in range(max(repeats, loop_repeats)):
        for name in names[k % len(names):] + names[: k % len(names)]:
            if k >= (loop_repeats if name == "loop" else repeats):
                continue
            out = f"{tmp}/{name}.npz" if k == 0 else None
            runs[name].append(in_child(CONTENDERS[name], corpus, out, {"NUMBA_CACHE_DIR": cache}))
    equal = {n: same_counts(f"{tmp}/{n}.npz", f"{tmp}/loop.npz") for n in names if n != "loop"}
    return {"runs": runs, "equal": equal}


def scaling(corpus: str, copies: list[int], repeats: int, tmp: str, cache: str) -> list[dict]:
    """Both engines on the corpus repeated ``copies`` times, alternating; medians."""
    text = Path(corpus).read_bytes()
    rows = []
    for c in copies:
        path = Path(tmp, f"x{c}.txt")
        with open(path, "wb") as f:
            for _ in range(c):
                f.write(text)
        runs: dict[str, list[dict]] = {"contextlens": [], "numpy_engine": []}
        for k in range(repeats):
            for name in (["contextlens", "numpy_engine"] if k % 2 == 0 else ["numpy_engine", "contextlens"]):
                runs[name].append(in_child(CONTENDERS[name], str(path), None, {"NUMBA_CACHE_DIR": cache}))
        path.unlink()
        row = {"copies": c, "tokens": runs["contextlens"][0]["tokens"]}
        for name, rs in runs.items():
            s = _summary(rs)
            row[name] = {"seconds": s["seconds"], "peak_rss_mb": s["peak_rss_mb"],
                         "counting_rss_mb": round(s["peak_rss_mb"] - s["import_rss_mb"], 1),
                         "ns_per_token": round(s["seconds"] / row["tokens"] * 1e9, 1),
                         "runs": s["runs"]}
        rows.append(row)
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--repeats", type=int, default=5, help="runs of each fast contender (median)")
    parser.add_argument("--loop-repeats", type=int, default=3, help="dict-loop runs (median)")
    parser.add_argument("--compile-repeats", type=int, default=1,
                        help="kernel runs with an empty cache folder (first run, compiling)")
    parser.add_argument("--scaling", default="1,4,16", help="corpus copies for the scaling run ('' skips it)")
    parser.add_argument("--scaling-repeats", type=int, default=3)
    parser.add_argument("--no-phases", action="store_true",
                        help="skip the CPU time of each kernel step (5 in-process runs, median)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        print(f"error: {args.corpus} not found; set CONTEXTLENS_DATA or pass --corpus", file=sys.stderr)
        return 2
    corpus = str(args.corpus)
    with tempfile.TemporaryDirectory() as tmp:
        first = [in_child(run_contextlens, corpus, None, {"NUMBA_CACHE_DIR": f"{tmp}/cache{k}"})
                 for k in range(args.compile_repeats)]  # each with an empty cache: compiles
        cache = f"{tmp}/cache0"
        if not first:
            in_child(run_contextlens, corpus, None, {"NUMBA_CACHE_DIR": cache})  # fills the cache
        found = compare(corpus, args.repeats, args.loop_repeats, tmp, cache)
        copies = [int(c) for c in args.scaling.split(",") if c.strip()]
        scale = scaling(corpus, copies, args.scaling_repeats, tmp, cache) if copies else []
        steps = None if args.no_phases else in_child(run_phases, corpus, None, {"NUMBA_CACHE_DIR": cache})
    runs, equal = found["runs"], found["equal"]
    s = {name: _summary(rs) for name, rs in runs.items()}
    ours, loop, peer, numpy_engine = s["contextlens"], s["loop"], s["peer"], s["numpy_engine"]
    result = {
        "benchmark": "cooccurrence", "corpus": corpus, "window": WINDOW,
        "tokens": runs["contextlens"][0]["tokens"], "words": runs["contextlens"][0]["words"],
        "nonzero_pairs": runs["contextlens"][0]["nnz"],
        "seconds": ours["seconds"], "seconds_loop": round(loop["seconds"], 3),
        "seconds_peer": peer["seconds"], "seconds_numpy_engine": numpy_engine["seconds"],
        "ratio_vs_loop": round(loop["seconds"] / ours["seconds"], 1),
        "ratio_vs_peer": round(peer["seconds"] / ours["seconds"], 2),
        "ratio_vs_numpy_engine": round(numpy_engine["seconds"] / ours["seconds"], 2),
        "ratio_peer_vs_loop": round(loop["seconds"] / peer["seconds"], 1),
        "peak_rss_mb": ours["peak_rss_mb"], "peak_rss_mb_loop": loop["peak_rss_mb"],
        "peak_rss_mb_peer": peer["peak_rss_mb"], "peak_rss_mb_numpy_engine": numpy_engine["peak_rss_mb"],
        "import_seconds": {n: x["import_seconds"] for n, x in s.items()},
        "import_rss_mb": {n: x["import_rss_mb"] for n, x in s.items()},
        "end_to_end_seconds": {n: round(x["import_seconds"] + x["seconds"], 3) for n, x in s.items()},
        "first_run": {"import_seconds": [round(r["import_seconds"], 2) for r in first],
                      "seconds": [round(r["seconds"], 3) for r in first]},
        "cache": runs["contextlens"][0].get("cache"),
        "runs": {n: x["runs"] for n, x in s.items()},
        "scaling": scale, "phases": steps,
        "equal": all(equal.values()), "equal_to_loop": equal, "machine": machine(),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"window-{WINDOW} co-occurrence counts of {corpus}")
        print(f"  {result['tokens']:,} tokens, {result['words']:,} words, "
              f"{result['nonzero_pairs']:,} nonzero pairs; equal to the loop: {equal}")
        for name, x in s.items():
            print(f"  {name:13s} {x['seconds']:7.3f} s (median of {len(x['runs'])}), imports "
                  f"{x['import_seconds']:.2f} s, peak RSS {x['peak_rss_mb']} MB "
                  f"({x['import_rss_mb']} MB after imports)")
        print(f"  contextlens is {result['ratio_vs_loop']}x the loop, {result['ratio_vs_peer']}x the "
              f"peer, {result['ratio_vs_numpy_engine']}x its numpy engine")
        if first:
            print(f"  first run (compiling): imports {result['first_run']['import_seconds']} s, "
                  f"counting {result['first_run']['seconds']} s")
        for row in scale:
            print(f"  {row['copies']:2d}x: {row['tokens']:,} tokens: " + ", ".join(
                f"{n} {row[n]['seconds']:.3f} s ({row[n]['ns_per_token']} ns/token, peak RSS "
                f"{row[n]['peak_rss_mb']} MB)" for n in ("contextlens", "numpy_engine")))
        if steps:
            print(f"  kernel CPU time by step ({steps['cpu_seconds']} s in all):")
            for label, sec in steps["steps"].items():
                print(f"    {label:52s} {sec:.3f} s  {100 * sec / steps['cpu_seconds']:4.1f} %")
    return 0 if result["equal"] else 1


if __name__ == "__main__":
    sys.exit(main())
