"""The search index kept beside the LanceDB table: what makes a usage search take a millisecond.

LanceDB stays the store of record; a *side index* is derived from one version of its
``usages`` table and rebuilt from it whenever it is missing or was made from another
version. It lives in ``<db>/search-v<table version>/``:

- ``rows.arrow``: every usage's :class:`~contextlens.passes.rows.UsageRow`, sorted by
  ``(word, usage_id)``: a usage's *position* in this order is its id in the side index,
  and a word's usages are one contiguous range of positions (``meta.json`` lists them);
- ``v<layer>.ivf`` per stored layer: a FAISS inverted-file index of the unit vectors,
  stored as float16 (``IVF<n>,SQfp16``, inner product, ids = positions);
- ``v<layer>.hnsw`` per stored layer, when the table has more than one list: a FAISS HNSW
  graph over the same float16 unit vectors (``HNSW32,SQfp16``, ids = positions);
- ``ids.npy`` / ``ids_pos.npy``: the usage ids sorted, and their positions (to find a usage);
- ``meta.json``: the table version and row count it was made from, layers, lists, words.

The rows and ids are memory-mapped when opened (Arrow IPC, ``.npy``); the inverted lists are
read into memory (FAISS's memory-mapped lists cost about 0.4 ms per probed list here, against
microseconds in memory: 770 bytes per usage per layer, and about 1,060 more for the graph).
A search over every word walks the HNSW graph (``EF_SEARCH`` candidates) *and* probes
``NPROBES`` lists, and merges the two by cosine: on real vectors (a Brown index) the lists
alone needed a tenth of them probed for recall@10 0.95 where the graph reaches 0.96 in a
millisecond, and on tight synthetic clusters the graph alone recalls 0.78 where the lists
are near-exact. A search of one word uses the inverted lists with
FAISS's sorted-range selector, which scans only that word's slice of each probed list, so
its cost follows the word's share of the table (a graph walk filtered to a small word
loses its way: recall 0.7 for a word of 2 %); a word of at most ``exact_rows`` usages
probes every list, i.e. it is searched exactly. A table below ``ANN_MIN_ROWS`` usages gets
one list and no graph: every search is exact. See benchmarks/RESULTS.md for the
measurements behind this design (against FAISS HNSW and LanceDB's own indexes).

**Compressed** (``kind="compressed"``; chosen by :func:`side_kind` for a large table, or asked
for): the float16 lists and the graph cost about 1,830 bytes per usage and layer, 1.8 GB of
memory at 1M usages. A compressed side index keeps, per stored layer, a FAISS ``IVF<n>,PQ<m>``
index of the unit vectors (:func:`pq_codes`: one one-byte code per 4 dimensions, at most
128: 96 bytes for dim 384; ids = positions, sorted by word as above) and, instead of
``rows.arrow``, each position's LanceDB row id (``row_ids.npy``). A search takes the PQ
index's best :func:`rerank_for` ``(k)`` candidates (for k = 10: 200 over every word, 100 in
one word's usages), reads their float16 vectors from the LanceDB table (the store of
record), scores them exactly and reads the rows of the ``k`` best: about 140 bytes per
usage and layer in all. The reads go by offset through Lance's dataset API when ``pylance``
is installed (``offsets.npy``: each position's offset in the table's version, from an
in-order scan), else by row id through LanceDB; a row is read from the table's packed row
column (:data:`~contextlens.passes.rows.PACKED`: one column instead of eight, which at 1M
usages is 1 ms instead of 8), or column by column in a table written before it. A search
over every word probes ``max(NPROBES, lists / ALL_WORDS_PROBE_DIVISOR)`` lists (there is
no graph); a word's search probes as above.
Why these settings (1M synthetic usages in tight clusters, the hard case: 48 codes
re-ranking 100 candidates recalled 0.68, 96 codes 0.91 and with 200 candidates 0.99;
probing 100 lists instead of 20 recalled the same and cost 15 ms): benchmarks/RESULTS.md,
"Compressed search".

Written atomically: into a temporary folder renamed into place when complete, so a build
killed while writing it leaves no side index, and the next build or reader writes it again.
An index whose table lives in object storage (``s3://``, ``gs://``...: see
:mod:`.store`) keeps its side index in the local cache instead (``side-indexes``), written
the same way (:func:`.side_build.write_side_index` into the cache's temporary folder).

>>> lists_for(1_000_000), lists_for(50_000), lists_for(300)
(1000, 224, 1)
>>> probes_for(n_word=4_000, lists=1000, exact_rows=10_000)
1000
>>> probes_for(n_word=222_000, lists=1000, exact_rows=10_000)
10
>>> side_kind(rows=50_000, layers=1, compress=None), side_kind(2_000_000, 1, None), side_kind(300, 2, True)
('full', 'compressed', 'compressed')
>>> pq_codes(384), pq_codes(768), pq_codes(576), pq_codes(32), pq_codes(100)
(96, 128, 96, 8, 25)
>>> rerank_for(10), rerank_for(50), rerank_for(10, word="bank")
(200, 1000, 100)
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import import_optional
from ..passes.rows import PACKED, unpack_row

__all__ = ["SideIndex", "CompressedSideIndex", "open_side_index",
           "load_side_index", "side_folder", "side_kind", "lists_for", "probes_for", "pq_codes", "rerank_for",
           "ANN_MIN_ROWS", "NPROBES", "MIN_WORD_ROWS_PROBED", "EXACT_MAX_WORD_ROWS", "KINDS",
           "COMPRESS_MIN_ROWS"]

log = logging.getLogger(__name__)
FORMAT, FORMAT_VERSION = "contextlens-side-index", 3  # 2: the HNSW graph; 3: the kind (full or compressed)
KINDS = ("full", "compressed")
# usages x stored layers above which a build compresses its side index unless told: the full
# one holds ~1,830 bytes per usage and layer in memory (1.8 GB at this size), the compressed
# one ~140; see benchmarks/RESULTS.md ("Compressed search") for the figures behind it
COMPRESS_MIN_ROWS = 1_000_000
ANN_MIN_ROWS = 20_000  # below this, one list: every search is an exact scan (a few ms at 20k usages)
NPROBES = 10  # lists probed over every word where there is no graph; the fewest a word's search probes
EF_SEARCH = 64  # candidates a graph search keeps
# a word-filtered search probes enough lists to meet about this many of the word's usages
MIN_WORD_ROWS_PROBED = 2_000
EXACT_MAX_WORD_ROWS = 10_000  # a word with at most this many usages: every list probed (exact)
PREFIX = "search-v"
PQ_DIMS_PER_CODE, PQ_MAX_CODES = 4, 128  # one-byte PQ codes: one per 4 dimensions, at most 128 a vector
RERANK = 20  # candidates re-scored exactly per result asked over every word (at least RERANK_MIN)
RERANK_MIN = 200
# a word's search re-scores half as many: at 1M usages 100 candidates recalled 0.988-1.000 of the exact
# top 10 for a word of 0.5 %, 2 % and 22 % of the table (over every word 0.92: there 200, 0.987)
RERANK_WORD, RERANK_WORD_MIN = 10, 100
ALL_WORDS_PROBE_DIVISOR = 50  # compressed, over every word: a fiftieth of the lists (no graph)
SLICED_ROWS = 100  # a full side index reads at most this many rows as slices (see SideIndex.rows_at)


def _faiss():
    return import_optional("faiss", "index", "The usage index search")


def lists_for(rows: int) -> int:
    """Inverted lists for a table of ``rows`` usages: one below ``ANN_MIN_ROWS``, else sqrt(rows)."""
    return 1 if rows < ANN_MIN_ROWS else max(1, round(math.sqrt(rows)))


def compressed_probes(lists: int) -> int:
    """Lists a compressed search over every word probes (it has no graph beside the lists):
    ``ALL_WORDS_PROBE_DIVISOR``-th of them, never fewer than ``NPROBES``.

    >>> compressed_probes(1000), compressed_probes(5)
    (20, 5)
    """
    return min(lists, max(NPROBES, math.ceil(lists / ALL_WORDS_PROBE_DIVISOR)))


def probes_for(n_word: int | None, lists: int, exact_rows: int | None = None) -> int:
    """Lists a search probes: ``NPROBES`` over every word (``n_word`` None); for a word, every
    list when it has at most ``exact_rows`` (default ``EXACT_MAX_WORD_ROWS``) usages (an
    exact search), else enough lists to meet about ``MIN_WORD_ROWS_PROBED`` of its usages,
    never fewer than ``NPROBES``."""
    if n_word is None:
        return min(NPROBES, lists)
    if n_word <= (EXACT_MAX_WORD_ROWS if exact_rows is None else exact_rows):
        return lists
    per_list = n_word / lists
    return int(min(lists, max(NPROBES, math.ceil(MIN_WORD_ROWS_PROBED / per_list))))


def side_kind(rows: int, layers: int, compress: bool | None) -> str:
    """``compressed`` when asked (``compress=True``) or, unless refused (``False``), when the
    table holds at least ``COMPRESS_MIN_ROWS`` usages x stored layers; else ``full``."""
    if compress is None:
        compress = rows * max(1, layers) >= COMPRESS_MIN_ROWS
    return "compressed" if compress else "full"


def pq_codes(dim: int) -> int:
    """One-byte PQ codes per vector: ``dim / PQ_DIMS_PER_CODE`` (at most ``PQ_MAX_CODES``),
    or the largest divisor of ``dim`` below it (FAISS splits a vector into equal parts)."""
    m = max(1, min(dim // PQ_DIMS_PER_CODE, PQ_MAX_CODES))
    while dim % m:
        m -= 1
    return m


def rerank_for(k: int, word: str | None = None) -> int:
    """Candidates a compressed search re-scores from the table's vectors to return ``k``:
    over every word, or (fewer: see :data:`RERANK_WORD`) within one ``word``'s usages."""
    if word is not None:
        return max(RERANK_WORD_MIN, RERANK_WORD * int(k))
    return max(RERANK_MIN, RERANK * int(k))


def side_folder(db: str | os.PathLike, table_version: int) -> Path:
    return Path(db) / f"{PREFIX}{int(table_version)}"


class _Positions:
    """What both kinds of side index share: the word ranges and the usage-id lookup."""

    folder: Path
    meta: dict[str, Any]
    ids: np.ndarray  # (n,) usage ids, sorted (bytes)
    ids_pos: np.ndarray  # (n,) their positions

    @property
    def kind(self) -> str:
        return str(self.meta.get("kind", "full"))

    @property
    def lists(self) -> int:
        return int(self.meta["lists"])

    def word_range(self, word: str) -> tuple[int, int]:
        lo, hi = self.meta["words"].get(word, (0, 0))
        return int(lo), int(hi)

    def position(self, usage_id: str) -> int | None:
        """The position of a usage id (None when it is not in the index)."""
        key = usage_id.encode()
        i = int(np.searchsorted(self.ids, key))
        return int(self.ids_pos[i]) if i < len(self.ids) and self.ids[i] == key else None

    def search_rows(self, unit_query: np.ndarray, layer: int, k: int, word: str | None = None) -> list[dict]:
        """The rows of the ``k`` nearest usages (of ``word`` when given), best first, each
        with its ``similarity``."""
        at, sims = self.search(unit_query, layer, k, word)
        return [{**r, "similarity": s} for r, s in zip(self.rows_at(at), sims)]

    def search(self, unit_query: np.ndarray, layer: int, k: int, word: str | None = None):
        raise NotImplementedError

    def rows_at(self, positions: Sequence[int]) -> list[dict]:
        raise NotImplementedError

    def _ivf_search(self, index, q: np.ndarray, k: int, word: str | None, nprobe_all: int):
        """``(sims, positions)`` (``(1, k)`` each; -1 where fewer) of an IVF search, only the
        word's slice of each probed list when ``word`` is given; None for a word with no usage."""
        faiss = _faiss()
        if word is None:
            return index.search(q, int(k), params=faiss.SearchParametersIVF(nprobe=nprobe_all))
        lo, hi = self.word_range(word)
        if hi <= lo:
            return None
        selector = faiss.IDSelectorRange(lo, hi, True)  # ids sorted in every list: only the word's slice
        params = faiss.SearchParametersIVF(nprobe=probes_for(hi - lo, self.lists), sel=selector)
        return index.search(q, int(min(k, hi - lo)), params=params)


@dataclass
class SideIndex(_Positions):
    """An opened full side index (see the module docstring); positions index ``rows``."""

    folder: Path
    meta: dict[str, Any]
    rows: Any  # pyarrow.Table, memory-mapped, in position order
    ivf: dict[int, Any]  # layer -> faiss index
    hnsw: dict[int, Any]  # layer -> faiss HNSW graph (tables of more than one list)
    ids: np.ndarray  # (n,) usage ids, sorted (bytes)
    ids_pos: np.ndarray  # (n,) their positions

    def search(self, unit_query: np.ndarray, layer: int, k: int,
               word: str | None = None) -> tuple[list[int], list[float]]:
        """Positions and cosines of the ``k`` nearest usages (of ``word`` when given), best first."""
        q = np.ascontiguousarray(unit_query, dtype=np.float32).reshape(1, -1)  # (1, dim)
        if word is None and layer in self.hnsw:
            return self._both(q, layer, int(k))
        found = self._ivf_search(self.ivf[layer], q, k, word, probes_for(None, self.lists))
        if found is None:
            return [], []
        sims, pos = found
        keep = pos[0] >= 0
        return pos[0][keep].tolist(), sims[0][keep].tolist()

    def _both(self, q: np.ndarray, layer: int, k: int) -> tuple[list[int], list[float]]:
        """Over every word: the graph's ``k`` best and the inverted lists' ``k`` best, merged
        by cosine (the same float16 vectors score the same in both). Each misses different
        neighbours: the lists those that fall just outside the probed cells, the graph those
        of tight clusters whose members are almost equidistant."""
        faiss = _faiss()
        s1, p1 = self.hnsw[layer].search(q, k, params=faiss.SearchParametersHNSW(efSearch=max(EF_SEARCH, k)))
        s2, p2 = self.ivf[layer].search(q, k,
                                        params=faiss.SearchParametersIVF(nprobe=probes_for(None, self.lists)))
        best: dict[int, float] = {}
        for p, s in zip(np.concatenate([p1[0], p2[0]]).tolist(), np.concatenate([s1[0], s2[0]]).tolist()):
            if p >= 0 and s > best.get(p, -np.inf):
                best[p] = s
        top = sorted(best.items(), key=lambda ps: -ps[1])[:k]
        return [p for p, _ in top], [s for _, s in top]

    def rows_at(self, positions: Sequence[int]) -> list[dict]:
        """The usage rows at ``positions``, in that order: a few read one slice each (Arrow's
        ``take`` imports ``pyarrow.compute`` and pandas, 0.25 s of a command's start for a
        search of ten), more taken at once (20 µs a slice, 1 µs a row taken)."""
        if len(positions) <= SLICED_ROWS:
            return [self.rows.slice(int(p), 1).to_pylist()[0] for p in positions]
        return self.rows.take(np.asarray(positions, dtype=np.int64)).to_pylist()

    def vector(self, position: int, layer: int) -> np.ndarray:
        """The stored unit vector (float16 precision) at ``position``: ``(dim,)`` float32."""
        return self.ivf[layer].reconstruct(int(position))


@dataclass
class CompressedSideIndex(_Positions):
    """An opened compressed side index (see the module docstring): PQ codes in memory,
    vectors and rows read from the LanceDB ``table`` by row id."""

    folder: Path
    meta: dict[str, Any]
    table: Any  # the LanceDB usages table, at the version the index was made from
    columns: list[str]  # the usage row columns
    ivf: dict[int, Any]  # layer -> faiss IVF-PQ index
    row_ids: np.ndarray  # (n,) each position's LanceDB row id (uint64)
    ids: np.ndarray
    ids_pos: np.ndarray
    hnsw: dict[int, Any] = field(default_factory=dict)  # none: the lists alone
    offsets: np.ndarray | None = None  # (n,) each position's offset in the table's version (int64)
    _dataset: Any = None  # the table's Lance dataset (pylance), opened at the first read
    _packed: bool | None = None  # whether the table has the packed row column (PACKED), looked up once

    @property
    def dataset(self):
        """The table's Lance dataset at the index's version when the side index knows each
        position's offset and ``pylance`` is installed (its ``take`` by offset reads 200
        vectors in 3.5 ms where LanceDB's by row id takes 5–7), else None."""
        if self._dataset is None and self.offsets is not None:
            try:
                self._dataset = self.table.to_lance()
            except ImportError:
                self.offsets = None
        return self._dataset

    def search(self, unit_query: np.ndarray, layer: int, k: int,
               word: str | None = None) -> tuple[list[int], list[float]]:
        """Positions and cosines of the ``k`` nearest usages, best first: the PQ index's
        :func:`rerank_for` best, re-scored with the table's vectors (float32 arithmetic)."""
        cand = self.candidates(unit_query, layer, k, word)
        return self.rerank(unit_query, layer, k, cand)

    def candidates(self, unit_query: np.ndarray, layer: int, k: int, word: str | None = None) -> np.ndarray:
        """The PQ stage of :meth:`search` (in memory): the positions of the :func:`rerank_for`
        ``(k, word)`` usages nearest by their codes, sorted; empty when there is none."""
        q = np.ascontiguousarray(unit_query, dtype=np.float32).reshape(1, -1)  # (1, dim)
        nprobe = compressed_probes(self.lists)
        found = self._ivf_search(self.ivf[layer], q, rerank_for(k, word), word, nprobe)
        if found is None:
            return np.zeros(0, np.int64)
        return np.sort(found[1][0][found[1][0] >= 0])  # positions

    def rerank(self, unit_query: np.ndarray, layer: int, k: int,
               cand: np.ndarray) -> tuple[list[int], list[float]]:
        """The re-ranking stage of :meth:`search`: the ``k`` best of the positions ``cand`` by
        the cosine of their vectors read from the table, best first, with those cosines."""
        if not len(cand):
            return [], []
        q = np.ascontiguousarray(unit_query, dtype=np.float32).reshape(-1)  # (dim,)
        x = self._vectors(cand, layer)  # (c, dim)
        sims = _unit(x) @ q  # (c,)
        top = np.argsort(-sims, kind="stable")[: int(k)]
        return cand[top].tolist(), sims[top].astype(float).tolist()

    def _take(self, positions: np.ndarray, columns: list[str]):
        """The table's ``columns`` at ``positions`` (an Arrow table) and, per returned row,
        its index into ``positions`` (LanceDB returns taken rows in no set order; Lance's
        take by offset, in the order asked)."""
        positions = np.asarray(positions, dtype=np.int64)
        if self.dataset is not None:
            return self.dataset.take(self.offsets[positions], columns=columns), np.arange(len(positions))
        wanted = self.row_ids[positions]
        got = self.table.take_row_ids(wanted.tolist()).select(columns).with_row_id().to_arrow()
        where = {int(r): i for i, r in enumerate(wanted.tolist())}
        return got, np.array([where[int(r)] for r in got.column("_rowid").to_numpy()], dtype=np.int64)

    def _vectors(self, positions: np.ndarray, layer: int) -> np.ndarray:
        """The stored vectors at ``positions``: ``(len(positions), dim)`` float32, in that order."""
        col = f"v{int(layer)}"
        got, order = self._take(positions, [col])
        dim = int(self.meta["dim"])
        x = got.column(col).combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
        out = np.empty((len(positions), dim), np.float32)
        out[order] = x
        return out

    def rows_at(self, positions: Sequence[int]) -> list[dict]:
        """The usage rows at ``positions``, in that order."""
        if not len(positions):
            return []
        if self._packed is None:
            self._packed = PACKED in self.table.schema.names
        if self._packed:  # one column read instead of eight
            got, order = self._take(np.asarray(positions), [PACKED])
            rows = [unpack_row(r) for r in got.column(PACKED).to_pylist()]
        else:
            got, order = self._take(np.asarray(positions), list(self.columns))
            rows = got.select(list(self.columns)).to_pylist()
        out: list[dict] = [{}] * len(positions)
        for i, r in zip(order.tolist(), rows):
            out[i] = r
        return out

    def vector(self, position: int, layer: int) -> np.ndarray:
        """The stored vector at ``position``, unit length: ``(dim,)`` float32."""
        return _unit(self._vectors(np.array([position]), layer))[0]


def load_side_index(folder: str | os.PathLike, table_version: int, table=None,
                    warn: bool = True) -> SideIndex | CompressedSideIndex | None:
    """The side index in ``folder`` made from ``table_version``; None when there is none (or
    it cannot be read: it will be rebuilt). ``table``: the LanceDB table (a compressed side
    index reads vectors and rows from it); ``warn``: log a damaged one as a warning (else at
    debug: the caller will look again)."""
    import pyarrow as pa

    faiss = _faiss()
    folder = Path(folder)
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION \
                or meta.get("table_version") != int(table_version) or meta.get("kind") not in KINDS:
            return None
        ids = np.load(folder / "ids.npy", mmap_mode="r")
        ids_pos = np.load(folder / "ids_pos.npy", mmap_mode="r")
        if meta["kind"] == "compressed":
            if table is None:
                return None
            ivf = {int(k): faiss.read_index(str(folder / f"v{int(k)}.ivfpq")) for k in meta["layers"]}
            row_ids = np.load(folder / "row_ids.npy", mmap_mode="r")
            has_offsets = (folder / "offsets.npy").exists()  # (written when pylance was there)
            offsets = np.load(folder / "offsets.npy", mmap_mode="r") if has_offsets else None
            parts: list = [ivf.values(), [row_ids] if offsets is None else [row_ids, offsets]]
            side: Any = CompressedSideIndex(folder, meta, table, list(meta["columns"]), ivf, row_ids, ids,
                                            ids_pos, offsets=offsets)
        else:
            rows = pa.ipc.open_file(pa.memory_map(str(folder / "rows.arrow"))).read_all()
            ivf = {int(k): faiss.read_index(str(folder / f"v{int(k)}.ivf")) for k in meta["layers"]}
            hnsw = {int(k): faiss.read_index(str(folder / f"v{int(k)}.hnsw")) for k in meta["layers"]} \
                if meta["lists"] > 1 else {}
            parts = [ivf.values(), hnsw.values(), [rows]]
            side = SideIndex(folder, meta, rows, ivf, hnsw, ids, ids_pos)
    except (OSError, ValueError, KeyError, RuntimeError) as e:  # absent, half-deleted or damaged: rebuilt
        if folder.exists():
            log.log(logging.WARNING if warn else logging.DEBUG, "side index %s unreadable (%s); it will be "
                    "rebuilt", folder, e)
        return None
    sizes = [_size(x) for part in parts for x in part]
    if meta["rows"] and any(size != meta["rows"] for size in sizes) or len(ids) != meta["rows"]:
        log.log(logging.WARNING if warn else logging.DEBUG, "side index %s does not match its meta.json; it "
                "will be rebuilt", folder)
        return None
    return side


def _size(part) -> int:
    """The rows a part of a side index holds: a FAISS index's ``ntotal``, an Arrow table's
    ``num_rows``, else its length (0 counts: an empty shard's index holds no row).

    >>> import numpy as np, pyarrow as pa
    >>> _size(pa.table({"a": []})), _size(np.zeros(3))
    (0, 3)
    """
    for attr in ("ntotal", "num_rows"):
        n = getattr(part, attr, None)
        if n is not None:
            return int(n)
    return len(part)


def open_side_index(db: str | os.PathLike, table_version: int,
                    table=None) -> SideIndex | CompressedSideIndex | None:
    """The side index of the index folder ``db`` made from ``table_version`` (see
    :func:`load_side_index`)."""
    return load_side_index(side_folder(db, table_version), table_version, table)


def side_bytes(folder: str | os.PathLike) -> int:
    """Bytes of a side index's files (its search structure)."""
    return sum(f.stat().st_size for f in Path(folder).iterdir() if f.is_file())


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)  # (m, dim)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)
