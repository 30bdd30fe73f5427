"""Usage-index search latency and ANN recall.

A synthetic index of ``--rows`` float16 vectors of dim 384 (default 1,000,000; clustered:
2,000 centres plus Gaussian noise, a hard case for quantisation because a centre's
members are almost equidistant) spread over 50 words with Zipf frequencies, built with
:class:`contextlens.index.store.UsageStore` (so ``finish()`` builds the IVF-SQ index at
or above ``ANN_MIN_ROWS``). For ``--queries`` query vectors (perturbed stored vectors)
it times ``UsageStore.search`` (k = 10, after one warm-up query)

- over all usages, and
- filtered on the most frequent word and on the rarest (the filter a usage search uses),

Queries are perturbed stored vectors: of any usage for the unfiltered search, of the
word's own usages for the filtered ones (what ``search_usages`` does: the query is a use
of that word). It measures recall@10 of each against exact search (numpy, float32 over the same
float16 vectors). With ``--brown-db`` it also times searches on a real index (stored
usages as queries). Prints p50/p95 latency and recall.

    python benchmarks/index_search.py [--rows 1000000] [--queries 100] [--brown-db PATH] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time

import numpy as np

DIM, WORDS, CENTRES, BATCH = 384, 50, 2000, 50_000


def make_vectors(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(CENTRES, DIM)).astype(np.float32)
    ranks = np.arange(1, WORDS + 1)
    p = (1 / ranks) / (1 / ranks).sum()
    for start in range(0, n, BATCH):
        m = min(BATCH, n - start)
        x = centres[rng.integers(0, CENTRES, m)] + 0.6 * rng.normal(size=(m, DIM)).astype(np.float32)
        yield start, x.astype(np.float16), rng.choice(WORDS, size=m, p=p)


def build(path: str, n: int):
    from contextlens.index.encode import EncodedChunk
    from contextlens.index.store import UsageRow, UsageStore

    store = UsageStore.create(path, {"model": "synthetic", "layers": [6], "dim": DIM, "dtype": "float16",
                                     "match": "lower", "layout": "lines", "words": [f"w{i}" for i in range(WORDS)]})
    all_x, all_w = np.empty((n, DIM), np.float16), np.empty(n, np.int64)
    for start, x, w in make_vectors(n):
        m = len(x)
        all_x[start:start + m], all_w[start:start + m] = x, w
        rows = [UsageRow(f"{start + i:08d}", f"w{wi}", "x", "synthetic", start + i, 0, 1, "") for i, wi in enumerate(w)]
        store.append(0, EncodedChunk(rows, {6: x}))
    store.commit(0, n, n)
    started = time.perf_counter()
    info = store.finish(0, n)
    return store.reader(), all_x, all_w, time.perf_counter() - started, info


def exact_top(x16: np.ndarray, mask: np.ndarray | None, q: np.ndarray, k: int = 10) -> list[int]:
    best_s, best_i = np.empty(0, np.float32), np.empty(0, np.int64)
    qn = q / np.linalg.norm(q)
    for start in range(0, len(x16), 200_000):
        x = x16[start:start + 200_000].astype(np.float32)
        s = x @ qn / np.linalg.norm(x, axis=1)
        if mask is not None:
            s[~mask[start:start + 200_000]] = -np.inf
        top = np.argpartition(-s, k)[:k]
        best_s, best_i = np.concatenate([best_s, s[top]]), np.concatenate([best_i, top + start])
    order = np.argsort(-best_s)[:k]
    return best_i[order].tolist()


def make_queries(x16, words, n: int, word: int | None, seed: int = 1) -> np.ndarray:
    """``n`` perturbed stored vectors (of ``word``'s usages when given)."""
    rng = np.random.default_rng(seed)
    pool = np.arange(len(x16)) if word is None else np.flatnonzero(words == word)
    picks = pool[rng.integers(0, len(pool), n)]
    return x16[picks].astype(np.float32) + 0.3 * rng.normal(size=(n, DIM)).astype(np.float32)


def measure(store, x16, words, n_queries: int, word: int | None):
    """Latency of each query (timed back to back), then recall@10 against exact search."""
    lat, got = [], []
    queries = make_queries(x16, words, n_queries, word)
    name = None if word is None else f"w{word}"
    store.search(queries[0], word=name, k=10)  # warm-up: opens the index files (and loads a small word)
    for q in queries:
        t = time.perf_counter()
        rows = store.search(q, word=name, k=10)
        lat.append((time.perf_counter() - t) * 1000)
        got.append({int(r["usage_id"]) for r in rows})
    mask = None if word is None else words == word
    recall = [len(g & set(exact_top(x16, mask, q))) / 10 for g, q in zip(got, queries)]
    return {"p50_ms": float(np.percentile(lat, 50)), "p95_ms": float(np.percentile(lat, 95)),
            "recall_at_10": float(np.mean(recall))}


def brown(db: str, n: int):
    from contextlens.index.store import open_store

    store = open_store(db)
    rows = store.table.search().select(["usage_id", "word"]).limit(n).to_arrow().to_pylist()
    lat = []
    store.search(store.get(rows[0]["usage_id"])["vector"], word=rows[0]["word"], k=10)  # warm-up
    for r in rows:
        v = store.get(r["usage_id"])["vector"]
        t = time.perf_counter()
        store.search(v, word=r["word"], k=10)
        lat.append((time.perf_counter() - t) * 1000)
    return {"usages": store.count(), "p50_ms": float(np.percentile(lat, 50)),
            "p95_ms": float(np.percentile(lat, 95)), "ann_index": store.has_ann_index()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--brown-db", default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        store, x16, words, index_s, info = build(os.path.join(tmp, "db"), args.rows)
        build_s = time.perf_counter() - started
        counts = np.bincount(words, minlength=WORDS)
        out = {
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
            "rows": args.rows, "dim": DIM, "ann_index": info["ann_index"], "build_seconds": build_s,
            "ann_index_seconds": index_s, "size_mb": store.size_on_disk() / 2**20,
            "all_words": measure(store, x16, words, args.queries, None),
            "frequent_word": {"usages": int(counts[0]), "nprobes": store.nprobes("w0"),
                              **measure(store, x16, words, args.queries, 0)},
            "rare_word": {"usages": int(counts[-1]), "nprobes": store.nprobes(f"w{WORDS - 1}"),
                          **measure(store, x16, words, args.queries, WORDS - 1)},
        }
    if args.brown_db:
        out["brown"] = brown(args.brown_db, min(args.queries, 100))
    if args.json:
        print(json.dumps(out))
        return
    print(f"{args.rows:,} float16 vectors x {DIM}: written + indexed in {build_s:.0f} s (ANN index {index_s:.0f} s), "
          f"{out['size_mb']:.0f} MB")
    for key in ("all_words", "frequent_word", "rare_word"):
        r = out[key]
        print(f"{key}: p50 {r['p50_ms']:.1f} ms, p95 {r['p95_ms']:.1f} ms, recall@10 {r['recall_at_10']:.3f}")
    if "brown" in out:
        b = out["brown"]
        print(f"brown index ({b['usages']:,} usages): p50 {b['p50_ms']:.1f} ms, p95 {b['p95_ms']:.1f} ms")


if __name__ == "__main__":
    main()
