"""Speed of the count-based static methods on the Brown corpus.

- PPMI + truncated SVD to 300 dimensions (``build_table(..., "ppmi-svd")``'s steps):
  window-5 counts, min_count 5, lower-cased; the PPMI and the SVD timed apart;
- GloVe: epochs per second (and nonzero entries per second) on the window-10,
  1/distance-weighted counts of the same corpus, 50 dimensions.

Medians of ``--repeats`` runs, in this process.

    python benchmarks/static_speed.py [--corpus PATH] [--repeats 3] [--glove-epochs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from cooccurrence import default_corpus, machine

from contextlens.static.cooccurrence import cooccurrence_matrix
from contextlens.static.glove import GloVe
from contextlens.static.ppmi import ppmi, svd_embeddings


def timed(fn, *args, **kw):
    start = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=default_corpus())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dim", type=int, default=300, help="SVD dimensions")
    parser.add_argument("--glove-epochs", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if not args.corpus.is_file():
        print(f"error: {args.corpus} not found; set CONTEXTLENS_DATA or pass --corpus", file=sys.stderr)
        return 2
    counts, t_counts, t_ppmi, t_svd = None, [], [], []
    for _ in range(args.repeats):
        counts, t = timed(cooccurrence_matrix, args.corpus, window=5, min_count=5, lower=True)
        t_counts.append(t)
        weighted, t = timed(ppmi, counts)
        t_ppmi.append(t)
        _, t = timed(svd_embeddings, weighted, args.dim, seed=0)
        t_svd.append(t)
    harmonic, t_harmonic = timed(cooccurrence_matrix, args.corpus, window=10, weighting="harmonic",
                                 min_count=5, lower=True)
    t_glove = []
    for _ in range(args.repeats):
        _, t = timed(GloVe(dim=50, epochs=args.glove_epochs, seed=0).fit, harmonic)
        t_glove.append(t / args.glove_epochs)
    epoch = statistics.median(t_glove)
    result = {
        "benchmark": "static_speed", "corpus": str(args.corpus), "words": len(counts.vocab),
        "cooccurrence_seconds": round(statistics.median(t_counts), 3),
        "ppmi_seconds": round(statistics.median(t_ppmi), 3),
        "svd_dim": args.dim, "svd_seconds": round(statistics.median(t_svd), 2),
        "ppmi_svd_seconds": round(statistics.median(p + s for p, s in zip(t_ppmi, t_svd)), 2),
        "glove_entries": int(harmonic.counts.nnz), "glove_dim": 50,
        "glove_cooccurrence_seconds": round(t_harmonic, 3),
        "glove_seconds_per_epoch": round(epoch, 3),
        "glove_epochs_per_second": round(1 / epoch, 3),
        "glove_entries_per_second": round(harmonic.counts.nnz / epoch),
        "repeats": args.repeats, "machine": machine(),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"static methods on {args.corpus} ({result['words']:,} words, min_count 5, lower-cased)")
        print(f"  window-5 counts: {result['cooccurrence_seconds']} s; PPMI: {result['ppmi_seconds']} s; "
              f"SVD to {args.dim}: {result['svd_seconds']} s (medians of {args.repeats})")
        print(f"  GloVe dim 50 on {result['glove_entries']:,} entries: {result['glove_seconds_per_epoch']} s "
              f"per epoch = {result['glove_epochs_per_second']} epochs/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
