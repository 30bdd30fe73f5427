"""Usage-index search latency and recall, beside FAISS HNSW and LanceDB on the same vectors.

A synthetic index of ``--rows`` float16 vectors of dim 384 (default 1,000,000; clustered:
2,000 centres plus Gaussian noise, a hard case for quantisation because a centre's
members are almost equidistant) spread over 50 words with Zipf frequencies, written with
:class:`contextlens.index.store.UsageStore` (so ``finish()`` writes the side index). For
``--queries`` query vectors (perturbed stored vectors: of any usage for the unfiltered
search, of the word's own usages for the filtered ones, as ``search_usages`` does) it
times, query by query in rotating order (the machine is shared: each contender meets the
same moments of load),

- ``contextlens``: ``UsageReader.search`` (k = 10), which returns every usage's row;
- ``faiss_hnsw``: FAISS ``IndexHNSWFlat`` (M 32, efConstruction 40, efSearch 64) over
  the same unit vectors in float32, the word filter as an ``IDSelectorBitmap`` (ids only);
- ``lancedb_raw``: LanceDB's own index on a copy of the same vectors, ids only: IVF-SQ
  (cosine, sqrt(n)/2 lists, 8 probes, or for a word enough to meet about 2,000 of its
  usages, re-ranked x2: what contextlens did before the side index), the word filter as a
  prefilter on a bitmap index of ``word`` (``--lancedb hnsw``: IVF_HNSW_SQ instead, one
  probe, ef 64; it took 21 minutes to build 100k usages here, so it is not the default);

- ``compressed``: the same table's *compressed* side index (IVF-PQ codes, candidates
  re-ranked with the table's float16 vectors read from LanceDB, rows read from LanceDB:
  :class:`contextlens.index.side_index.CompressedSideIndex`), searched exactly as
  ``UsageReader.search`` searches it (``search_rows`` on the unit query);

over all usages (``all_words``), the most frequent word (``frequent_word``, a fifth of the
table), a word of about 2 % (``mid_word``) and the rarest (``rare_word``), each with
p50/p95 latency and recall@10 against exact search (numpy, float32 over the same float16
vectors). With ``--brown-db`` (a real index, e.g. ``contextlens index build
brown_plain.txt --all-words``) the same contenders are timed on its vectors, queried with
its own stored usages (exact search as the reference); an index whose build stopped is
searched over what it committed (its side index written first; `build_complete` says so).
The ``compressed`` section gives its ``bytes_per_usage`` (the side index's files per usage,
beside ``full_bytes_per_usage``, today's), the same p50/p95/recall per query kind, and
``stages``: where a search over every word spends its time, timed stage by stage in the same
process (``pq_ms``: the PQ stage in memory; ``rerank_read_ms``: reading the candidates'
vectors from the table; ``rows_read_ms``: reading the ``K`` results' rows from it).
``--only compressed`` builds and times the compressed side index alone (the table's own side
index is then the compressed one, searched through ``UsageReader.search``; no full side
index, FAISS HNSW or LanceDB peer is built: minutes instead of tens of minutes).

    python benchmarks/index_search.py [--rows 1000000] [--queries 200] [--brown-db PATH]
        [--only compressed] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DIM, WORDS, CENTRES, BATCH, CHUNK = 384, 50, 2000, 50_000, 100_000
K, HNSW_M, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH = 10, 32, 40, 64
LANCE_NPROBES, LANCE_REFINE, LANCE_WORD_ROWS = 8, 2, 2000  # IVF-SQ, as contextlens used it before
LANCE_HNSW_EF = 64


def make_vectors(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(CENTRES, DIM)).astype(np.float32)
    ranks = np.arange(1, WORDS + 1)
    p = (1 / ranks) / (1 / ranks).sum()
    for start in range(0, n, BATCH):
        m = min(BATCH, n - start)
        x = centres[rng.integers(0, CENTRES, m)] + 0.6 * rng.normal(size=(m, DIM)).astype(np.float32)
        yield start, x.astype(np.float16), rng.choice(WORDS, size=m, p=p)


def build(path: str, n: int, side_index: str = "full"):
    """The synthetic index; ``(reader, vectors (n, DIM) float16, word of each usage, seconds to
    write, seconds of finish())``. Usage ``i`` has id ``f"{i:08d}"`` and word ``f"w{word}"``;
    ``side_index``: the kind of side index ``finish()`` writes."""
    from contextlens.index.reader import UsageReader
    from contextlens.index.store import UsageStore
    from contextlens.passes.rows import EncodedChunk, UsageRow

    store = UsageStore.create(path, {"model": "synthetic", "layers": [6], "dim": DIM, "dtype": "float16",
                                     "match": "lower", "layout": "lines",
                                     "words": [f"w{i}" for i in range(WORDS)],
                                     "side_index": side_index})  # full: the compressed one beside it
    all_x, all_w = np.empty((n, DIM), np.float16), np.empty(n, np.int64)
    started = time.perf_counter()
    for start, x, w in make_vectors(n):
        all_x[start:start + len(x)], all_w[start:start + len(x)] = x, w
        rows = [UsageRow(f"{start + i:08d}", f"w{wi}", "x", "synthetic", start + i, 0, 1,
                         f"sentence {start + i}")
                for i, wi in enumerate(w)]
        store.append(0, EncodedChunk(rows, {6: x}))
        store.commit(0, start + len(x), start + len(x))
    written = time.perf_counter() - started
    started = time.perf_counter()
    store.finish(0, n)
    return UsageReader.of(store), all_x, all_w, written, time.perf_counter() - started


def unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def exact_top(x16: np.ndarray, mask: np.ndarray | None, queries: np.ndarray, k: int = K) -> list[set[int]]:
    """The rows of each query's ``k`` best by cosine over ``x16`` (float32 arithmetic), only
    among ``mask`` when given: every query at once, ``CHUNK`` rows at a time."""
    qn = unit(queries).T
    best_s = np.full((k, len(queries)), -np.inf, np.float32)
    best_i = np.zeros((k, len(queries)), np.int64)
    for start in range(0, len(x16), CHUNK):
        s = unit(x16[start:start + CHUNK]) @ qn
        if mask is not None:
            s[~mask[start:start + CHUNK]] = -np.inf
        top = np.argpartition(-s, k, axis=0)[:k]
        all_s = np.concatenate([best_s, np.take_along_axis(s, top, axis=0)])
        all_i = np.concatenate([best_i, top + start])
        keep = np.argsort(-all_s, axis=0)[:k]
        best_s, best_i = np.take_along_axis(all_s, keep, axis=0), np.take_along_axis(all_i, keep, axis=0)
    return [set(col.tolist()) for col in best_i.T]


def make_queries(x16, words, n: int, word: int | None, seed: int = 1) -> np.ndarray:
    """``n`` perturbed stored vectors (of ``word``'s usages when given)."""
    rng = np.random.default_rng(seed)
    pool = np.arange(len(x16)) if word is None else np.flatnonzero(words == word)
    picks = pool[rng.integers(0, len(pool), n)]
    return x16[picks].astype(np.float32) + 0.3 * rng.normal(size=(n, DIM)).astype(np.float32)


class Compressed:
    """The compressed side index of ``reader``'s table, written into ``folder``: searched as
    ``UsageReader.search`` searches a compressed side index (``search_rows``)."""

    def __init__(self, reader, folder: str, timings: dict):
        from contextlens.index.side_build import write_side_index
        from contextlens.index.side_index import load_side_index, side_bytes
        from contextlens.passes.rows import ROW_COLUMNS

        if reader.side().kind == "compressed":  # --only compressed: the table's own side index
            self.side, self.full_bytes_per_usage = reader.side(), None
            folder = str(self.side.folder)
        else:
            os.makedirs(folder)
            version = reader.table.version
            started = time.perf_counter()
            write_side_index(Path(folder), reader.table, version, ROW_COLUMNS, reader.layers,
                             int(reader.params["dim"]), kind="compressed")
            timings["compressed_build_seconds"] = time.perf_counter() - started
            self.side = load_side_index(folder, version, reader.table)
            self.full_bytes_per_usage = side_bytes(reader.side().folder) / int(self.side.meta["rows"])
        self.bytes_per_usage = side_bytes(folder) / int(self.side.meta["rows"])

    def search(self, q: np.ndarray, word: str | None, layer: int) -> list[dict]:
        return self.side.search_rows(unit(q), layer, K, word)

    def stages(self, queries: np.ndarray, word: str | None, layer: int) -> dict:
        """p50/p95 (ms) of each stage of ``search``, timed one after the other per query: the
        PQ stage, the read of the candidates' vectors (with the exact scoring), the rows' read."""
        lat: dict[str, list[float]] = {"pq_ms": [], "rerank_read_ms": [], "rows_read_ms": []}
        for q in queries:
            t0 = time.perf_counter()
            cand = self.side.candidates(unit(q), layer, K, word)
            t1 = time.perf_counter()
            at, _ = self.side.rerank(unit(q), layer, K, cand)
            t2 = time.perf_counter()
            self.side.rows_at(at)
            t3 = time.perf_counter()
            for name, a, b in (("pq_ms", t0, t1), ("rerank_read_ms", t1, t2), ("rows_read_ms", t2, t3)):
                lat[name].append((b - a) * 1000)
        return {name: {"p50": float(np.percentile(v, 50)), "p95": float(np.percentile(v, 95))}
                for name, v in lat.items()}


class Contenders:
    """The searches over one set of vectors (``x16`` in table order, ``ids[i]`` the
    usage id and ``words[i]`` the word of row ``i``); each returns the rows of its ``K`` best.
    LanceDB gets its own copy of the vectors (``folder``), so the index searched by
    contextlens is left as it is."""

    def __init__(self, reader, x16: np.ndarray, ids: list[str], words: list[str], layer: int, folder: str,
                 timings: dict, lance_kind: str = "ivf_sq", only: str | None = None):
        import faiss

        self.packed = Compressed(reader, os.path.join(folder, "compressed"), timings)
        self.reader, self.layer, self.ids, self.lance_kind = reader, layer, ids, lance_kind
        self.word_count = dict(zip(*np.unique(np.asarray(words, dtype=object), return_counts=True)))
        self.row_of = {u: i for i, u in enumerate(ids)}
        self.names = ("contextlens", "compressed") if only == "compressed" else NAMES
        self.faiss = faiss
        if only == "compressed":
            faiss.omp_set_num_threads(1)
            return
        faiss.omp_set_num_threads(os.cpu_count() or 1)
        started = time.perf_counter()
        self.hnsw = faiss.IndexHNSWFlat(x16.shape[1], HNSW_M, faiss.METRIC_INNER_PRODUCT)
        self.hnsw.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        for a in range(0, len(x16), 100_000):
            self.hnsw.add(unit(x16[a:a + 100_000]))
        timings["faiss_hnsw_build_seconds"] = time.perf_counter() - started
        started = time.perf_counter()
        self.lance = self._lance_table(folder, x16, ids, words)
        timings["lancedb_index_seconds"] = time.perf_counter() - started
        faiss.omp_set_num_threads(1)  # one query at a time, as contextlens runs them

    def _lance_table(self, folder: str, x16: np.ndarray, ids: list[str], words: list[str]):
        import lancedb
        import pyarrow as pa
        from lancedb.index import Bitmap, HnswSq, IvfSq

        dim = x16.shape[1]
        table = lancedb.connect(folder).create_table("vectors", schema=pa.schema([
            pa.field("usage_id", pa.string()), pa.field("word", pa.string()),
            pa.field("vector", pa.list_(pa.float16(), dim))]))
        for a in range(0, len(ids), 100_000):
            part = np.ascontiguousarray(x16[a:a + 100_000])
            table.add(pa.table({"usage_id": ids[a:a + 100_000], "word": words[a:a + 100_000],
                                "vector": pa.FixedSizeListArray.from_arrays(pa.array(part.ravel()), dim)}))
        self.lance_lists = max(1, round(len(ids) ** 0.5 / 2))
        config = HnswSq(distance_type="cosine") if self.lance_kind == "hnsw" else \
            IvfSq(distance_type="cosine", num_partitions=self.lance_lists, max_iterations=20)
        table.create_index("vector", config=config)
        table.create_index("word", config=Bitmap())
        return table

    def contextlens(self, q: np.ndarray, word: str | None) -> list[int]:
        return [self.row_of[r["usage_id"]] for r in self.reader.search(q, word=word, k=K, layer=self.layer)]

    def compressed(self, q: np.ndarray, word: str | None) -> list[int]:
        return [self.row_of[r["usage_id"]] for r in self.packed.search(q, word, self.layer)]

    def faiss_hnsw(self, q: np.ndarray, word: str | None, bits: np.ndarray | None) -> list[int]:
        params = self.faiss.SearchParametersHNSW(efSearch=HNSW_EF_SEARCH)
        if bits is not None:
            selector = self.faiss.IDSelectorBitmap(len(self.ids), self.faiss.swig_ptr(bits))
            params.sel = selector
        _, rows = self.hnsw.search(unit(q)[None], K, params=params)
        return [int(i) for i in rows[0] if i >= 0]

    def lancedb_raw(self, q: np.ndarray, word: str | None) -> list[int]:
        query = self.lance.search(q, vector_column_name="vector").metric("cosine")
        if word is not None:
            query = query.where(f"word = '{word}'", prefilter=True)
        if self.lance_kind == "hnsw":
            query = query.nprobes(1).ef(LANCE_HNSW_EF)
        else:
            per_list = (len(self.ids) if word is None else self.word_count[word]) / self.lance_lists
            probes = LANCE_NPROBES if word is None else min(self.lance_lists, max(
                LANCE_NPROBES, int(np.ceil(LANCE_WORD_ROWS / per_list))))
            query = query.nprobes(probes).refine_factor(LANCE_REFINE)
        got = query.select(["usage_id", "_distance"]).limit(K).to_arrow()
        return [self.row_of[u] for u in got.column("usage_id").to_pylist()]


NAMES = ("contextlens", "faiss_hnsw", "lancedb_raw", "compressed")


def measure(c: Contenders, x16, queries: np.ndarray, word: str | None, mask: np.ndarray | None) -> dict:
    """Each contender's p50/p95 latency (ms) and recall@10; the queries in rotating order."""
    bits = None if mask is None else np.packbits(mask, bitorder="little")
    run = {"contextlens": lambda q: c.contextlens(q, word),
           "faiss_hnsw": lambda q: c.faiss_hnsw(q, word, bits),
           "lancedb_raw": lambda q: c.lancedb_raw(q, word), "compressed": lambda q: c.compressed(q, word)}
    names = c.names
    for name in names:
        run[name](queries[0])  # warm-up: opens files, loads what a first search loads
    lat = {name: [] for name in names}
    got = {name: [] for name in names}
    for i, q in enumerate(queries):
        for name in names[i % len(names):] + names[: i % len(names)]:
            t = time.perf_counter()
            rows = run[name](q)
            lat[name].append((time.perf_counter() - t) * 1000)
            got[name].append(set(rows))
    truth = exact_top(x16, mask, queries)
    out = {}
    for name in names:
        out[name] = {"p50_ms": float(np.percentile(lat[name], 50)),
                     "p95_ms": float(np.percentile(lat[name], 95)),
                     "recall_at_10": float(np.mean([len(g & t) / K for g, t in zip(got[name], truth)]))}
    return out


def synthetic(folder: str, rows: int, n_queries: int, lance_kind: str, only: str | None = None) -> dict:
    reader, x16, words, written, finish_s = build(os.path.join(folder, "db"), rows,
                                                  "compressed" if only == "compressed" else "full")
    counts = np.bincount(words, minlength=WORDS)
    mid = int(np.argmin(np.abs(counts - 0.02 * rows)))
    out = {"rows": rows, "dim": DIM, "write_seconds": written, "side_index_seconds": finish_s,
           "ann_index": reader.has_ann_index(), "lists": reader.side().lists,
           "size_mb": reader.size_on_disk() / 2**20}
    c = Contenders(reader, x16, [f"{i:08d}" for i in range(rows)], [f"w{w}" for w in words], 6,
                   os.path.join(folder, "peer"), out, lance_kind, only)
    out["compressed"] = compressed_info(c)
    for key, word in (("all_words", None), ("frequent_word", 0), ("mid_word", mid), ("rare_word", WORDS - 1)):
        name = None if word is None else f"w{word}"
        mask = None if word is None else words == word
        got = measure(c, x16, make_queries(x16, words, n_queries, word), name, mask)
        info = {} if word is None else {"usages": int(counts[word])}
        out["compressed"][key] = {**info, **got.pop("compressed")}
        out[key] = {**info, "path": search_path(reader, name), **got.pop("contextlens"),
                    **{f"vs_{k}": v for k, v in got.items()}}
    out["compressed"]["stages"] = c.packed.stages(make_queries(x16, words, n_queries, None, seed=4), None, 6)
    if only != "compressed":
        sweep_queries = make_queries(x16, words, n_queries, None, seed=3)
        out["ef_search_sweep"] = ef_search_sweep(reader, x16, sweep_queries)
    return out


def compressed_info(c: Contenders) -> dict:
    """The compressed side index's size and settings (its timings are added per query kind)."""
    from contextlens.index import side_index

    meta = c.packed.side.meta
    full = c.packed.full_bytes_per_usage
    return {"bytes_per_usage": round(c.packed.bytes_per_usage, 1),
            "full_bytes_per_usage": None if full is None else round(full, 1),
            "pq_codes": meta["pq_codes"], "lists": meta["lists"], "rerank": side_index.rerank_for(K),
            "rerank_word": side_index.rerank_for(K, word="one word"),
            "all_words_probes": side_index.compressed_probes(meta["lists"])}


def search_path(reader, word: str | None) -> str:
    """How contextlens searches: the graph and the lists, the lists alone (how many probed) or exactly."""
    from contextlens.index import side_index

    side = reader.side()
    if side.kind == "compressed":
        probes = side_index.compressed_probes(side.lists) if word is None else reader.nprobes(word)
        return f"IVF-PQ, {probes} of {side.lists} lists, {side_index.rerank_for(K, word)} re-ranked"
    if word is None and side.hnsw:
        return f"HNSW ef {side_index.EF_SEARCH} + IVF {reader.nprobes(None)} of {side.lists} lists, merged"
    probes = reader.nprobes(word)
    return "exact" if probes >= side.lists else f"IVF, {probes} of {side.lists} lists"


def ef_search_sweep(reader, x16: np.ndarray, queries: np.ndarray) -> dict:
    """contextlens over every word with other graph beam widths: p50 latency and recall@10."""
    from contextlens.index import side_index

    truth = exact_top(x16, None, queries)
    out, default = {}, side_index.EF_SEARCH
    try:
        for ef in (16, 32, 64, 128):
            side_index.EF_SEARCH = ef
            lat, rec = [], []
            for q, t in zip(queries, truth):
                started = time.perf_counter()
                rows = reader.search(q, k=K, layer=6)
                lat.append((time.perf_counter() - started) * 1000)
                rec.append(len(t & {int(r["usage_id"]) for r in rows}) / K)
            out[str(ef)] = {"p50_ms": float(np.percentile(lat, 50)), "recall_at_10": float(np.mean(rec))}
    finally:
        side_index.EF_SEARCH = default
    return out


def brown(db: str, n_queries: int, folder: str, lance_kind: str) -> dict:
    """The contenders on a real index: its stored vectors, queried with its own usages."""
    from contextlens.index.reader import open_store
    from contextlens.index.side_build import build_side_index
    from contextlens.passes.rows import ROW_COLUMNS

    reader = open_store(db)
    complete = reader.checkpoint()["done"]
    if reader.side() is None:  # a build that stopped: search what it committed, as a finished build would
        build_side_index(reader.path, reader.table, reader.table.version, ROW_COLUMNS, reader.layers,
                         int(reader.params["dim"]))
        reader = open_store(db)
    layer = reader.layers[-1]
    table = reader.table.search().select(["usage_id", "word", f"v{layer}"]).limit(None).to_arrow()
    ids = table.column("usage_id").to_pylist()
    words = np.asarray(table.column("word").to_pylist(), dtype=object)
    x16 = table.column(f"v{layer}").combine_chunks().flatten().to_numpy(zero_copy_only=False)
    x16 = x16.reshape(len(ids), -1)
    x16 = x16.astype(np.float16)
    out = {"usages": len(ids), "words": len(set(words)), "layer": layer, "lists": reader.side().lists,
           "build_complete": complete}
    c = Contenders(reader, x16, ids, list(words), layer, os.path.join(folder, "brown-peer"), out, lance_kind)
    out["compressed"] = compressed_info(c)
    values, counts = np.unique(words, return_counts=True)
    frequent = str(values[np.argmax(counts)])
    rng = np.random.default_rng(2)
    for key, word in (("all_words", None), ("frequent_word", frequent)):
        mask = None if word is None else words == word
        pool = np.arange(len(ids)) if word is None else np.flatnonzero(mask)
        queries = x16[pool[rng.integers(0, len(pool), n_queries)]].astype(np.float32)
        got = measure(c, x16, queries, word, mask)
        info = {} if word is None else {"word": word, "usages": int(mask.sum())}
        out["compressed"][key] = {**info, **got.pop("compressed")}
        out[key] = {**info, "path": search_path(reader, word), **got.pop("contextlens"),
                    **{f"vs_{k}": v for k, v in got.items()}}
    random_words = rng.choice(values, size=n_queries)  # words drawn uniformly: mostly rare ones
    lat = []
    for w in random_words:
        q = x16[rng.choice(np.flatnonzero(words == w))].astype(np.float32)
        t = time.perf_counter()
        reader.search(q, word=str(w), k=K, layer=layer)
        lat.append((time.perf_counter() - t) * 1000)
    out["random_word"] = {"p50_ms": float(np.percentile(lat, 50)), "p95_ms": float(np.percentile(lat, 95))}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000,
                    help="synthetic usages (0: skip the synthetic index)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--brown-db", default=None)
    ap.add_argument("--lancedb", choices=("ivf_sq", "hnsw"), default="ivf_sq",
                    help="LanceDB's index for the peer")
    ap.add_argument("--only", choices=("compressed",), default=None,
                    help="time the compressed side index alone (no full side index, HNSW or LanceDB peer)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
           "lancedb_index": args.lancedb}
    with tempfile.TemporaryDirectory() as tmp:
        if args.rows:
            out.update(synthetic(tmp, args.rows, args.queries, args.lancedb, args.only))
            print(json.dumps(out), file=sys.stderr, flush=True)  # kept if the Brown part fails
        if args.brown_db:
            out["brown"] = brown(args.brown_db, args.queries, tmp, args.lancedb)
    out["load_at_end"] = round(os.getloadavg()[0], 1)
    if args.json:
        print(json.dumps(out))
        return
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
