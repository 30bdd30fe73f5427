"""Co-occurrence counting speed and memory: contextlens vs the plain dict-of-dicts loop.

Window-5 counts over the Brown corpus (57,340 sentences, 1.16M tokens),

(a) with ``contextlens.static.cooccurrence_matrix`` (one read, vectorised pairing, CSR);
(b) with the loop the course text writes: ``defaultdict(lambda: defaultdict(int))`` and
    ``cooc[tok][tokens[j]] += 1`` for every j within 5 of i in the line.

Every run happens in its own freshly spawned process (reading included, interpreter and
imports excluded from the time), and reports its peak resident memory
(``getrusage(RUSAGE_SELF).ru_maxrss``, read right after the counting), so the two peaks
never mix. The results are checked equal, entry by entry. Prints the median times, their
ratio and the peak RSS of each.

    python benchmarks/cooccurrence.py [--corpus PATH] [--repeats 5] [--loop-repeats 1] [--json]
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
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_contextlens(corpus: str, out: str | None, queue) -> None:
    from contextlens.static.cooccurrence import cooccurrence_matrix

    start = time.perf_counter()
    co = cooccurrence_matrix(corpus, window=WINDOW)
    seconds = time.perf_counter() - start
    peak = _peak_mb()
    if out:  # canonical form for the equality check, after the measurement: the words
        import numpy as np  # with a co-occurrence (the loop never sees one-word lines), sorted
        import scipy.sparse as sp

        seen = np.flatnonzero(co.counts.getnnz(axis=1))
        order = seen[np.argsort(np.array(co.vocab, dtype=object)[seen])]
        sp.save_npz(out, co.counts[order][:, order].tocsr())
        Path(out + ".vocab").write_text("\n".join(co.vocab[i] for i in order), encoding="utf-8")
    queue.put({"seconds": seconds, "peak_rss_mb": peak, "nnz": int(co.counts.nnz),
               "words": len(co.vocab), "tokens": co.n_tokens})


def run_loop(corpus: str, out: str | None, queue) -> None:
    from collections import defaultdict

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
        m = sp.csr_matrix((np.array(data), (rows, cols)), shape=(len(vocab), len(vocab)))
        sp.save_npz(out, m)
        Path(out + ".vocab").write_text("\n".join(vocab), encoding="utf-8")
    queue.put({"seconds": seconds, "peak_rss_mb": peak})


def in_child(target, corpus: str, out: str | None = None) -> dict:
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(corpus, out, queue))
    proc.start()
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
    import numpy

    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(),
            "python": platform.python_version(), "numpy": numpy.__version__}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--repeats", type=int, default=5, help="contextlens runs (median)")
    parser.add_argument("--loop-repeats", type=int, default=1, help="loop runs (median)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        print(f"error: {args.corpus} not found; set CONTEXTLENS_DATA or pass --corpus", file=sys.stderr)
        return 2
    corpus = str(args.corpus)
    with tempfile.TemporaryDirectory() as tmp:
        ours = [in_child(run_contextlens, corpus, f"{tmp}/ours.npz" if k == 0 else None)
                for k in range(args.repeats)]
        loop = [in_child(run_loop, corpus, f"{tmp}/loop.npz" if k == 0 else None)
                for k in range(args.loop_repeats)]
        equal = same_counts(f"{tmp}/ours.npz", f"{tmp}/loop.npz")
    seconds = statistics.median(r["seconds"] for r in ours)
    seconds_loop = statistics.median(r["seconds"] for r in loop)
    result = {
        "benchmark": "cooccurrence", "corpus": corpus, "window": WINDOW,
        "tokens": ours[0]["tokens"], "words": ours[0]["words"], "nonzero_pairs": ours[0]["nnz"],
        "seconds": round(seconds, 4), "seconds_loop": round(seconds_loop, 3),
        "ratio_vs_loop": round(seconds_loop / seconds, 1),
        "peak_rss_mb": round(max(r["peak_rss_mb"] for r in ours), 1),
        "peak_rss_mb_loop": round(max(r["peak_rss_mb"] for r in loop), 1),
        "runs": {"contextlens": [round(r["seconds"], 4) for r in ours],
                 "loop": [round(r["seconds"], 3) for r in loop]},
        "equal": equal, "machine": machine(),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"window-{WINDOW} co-occurrence counts of {corpus}")
        print(f"  {result['tokens']:,} tokens, {result['words']:,} words, "
              f"{result['nonzero_pairs']:,} nonzero pairs; results equal: {equal}")
        print(f"  contextlens: {seconds:.3f} s (median of {len(ours)}), peak RSS {result['peak_rss_mb']} MB")
        print(f"  dict loop:   {seconds_loop:.2f} s (median of {len(loop)}), peak RSS {result['peak_rss_mb_loop']} MB")
        print(f"  contextlens is {result['ratio_vs_loop']}x faster")
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main())
