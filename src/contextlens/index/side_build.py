"""Write a side index (:mod:`.side_index` describes what it holds and how it is searched).

:func:`write_side_index` writes one into an empty folder from a LanceDB table checked out at
one version; :func:`build_side_index` does it atomically beside the table (a temporary folder
renamed into place, the folders of writers that died half-way removed).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import check_choice
from .side_index import FORMAT, FORMAT_VERSION, KINDS, PREFIX, _faiss, _unit, lists_for, pq_codes, side_folder

__all__ = ["write_side_index", "build_side_index"]

log = logging.getLogger(__name__)
HNSW_M, HNSW_EF_CONSTRUCTION = 32, 40  # the graph over every word: neighbours per node, build beam
TRAIN_PER_LIST = 64  # k-means training sample: this many vectors per list
ADD_BATCH = 100_000  # vectors normalised and added at a time (bounded memory)
PQ_BITS = 8
PQ_TRAIN_ROWS = 65_536  # FAISS trains each code book on at most 256 x 256 points


def write_side_index(folder: Path, table, table_version: int, columns: Sequence[str], layers: Sequence[int],
                     dim: int, kind: str = "full", params: dict[str, Any] | None = None) -> None:
    """Write the side index of ``table`` (a LanceDB table checked out at ``table_version``)
    into the empty folder ``folder``. ``columns``: the usage row columns; ``layers``: the
    stored layers (column ``v<layer>`` each); ``kind``: ``full`` or ``compressed``;
    ``params``: the index's parameters, kept in ``meta.json`` (``index``) so that a search
    of a complete local index can be answered without opening LanceDB (:mod:`.reader`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    faiss = _faiss()
    check_choice("kind", kind, KINDS)
    compressed = kind == "compressed"
    vcols = [f"v{int(k)}" for k in layers]
    dataset = _lance_dataset(table) if compressed else None
    if dataset is not None:  # scanned in order: a row's place in the scan is its offset
        data = dataset.to_table(columns=[*columns, *vcols], with_row_id=True, scan_in_order=True)
    else:
        query = table.search().select([*columns, *vcols]).limit(None)
        data = (query.with_row_id(True) if compressed else query).to_arrow()  # one scan: one row order
    n = data.num_rows
    order = pc.sort_indices(data.select(["word", "usage_id"]),
                            [("word", "ascending"), ("usage_id", "ascending")])
    rows = data.select(list(columns)).take(order).combine_chunks()  # position order
    words = rows.column("word").to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, words[1:] != words[:-1]]) if n else np.zeros(0, np.int64)
    ends = np.r_[starts[1:], n] if n else starts
    lists = lists_for(n)
    if compressed:
        np.save(folder / "row_ids.npy", data.column("_rowid").to_numpy().astype(np.uint64)[np.asarray(order)])
        if dataset is not None:
            np.save(folder / "offsets.npy", np.asarray(order).astype(np.int64))  # each position's offset
    else:
        with pa.OSFile(str(folder / "rows.arrow"), "wb") as sink, pa.ipc.new_file(sink, rows.schema) as out:
            out.write_table(rows)
    uids = np.array(rows.column("usage_id").to_pylist(), dtype=bytes)
    by_id = np.argsort(uids, kind="stable")
    np.save(folder / "ids.npy", uids[by_id])
    np.save(folder / "ids_pos.npy", by_id.astype(np.int64))
    positions = np.asarray(order)
    for k, col in zip(layers, vcols):
        log.info("side index (%s): %d usages, layer %d, %d list(s)", kind, n, k, lists)
        # (n, dim)
        x = data.column(col).combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
        if compressed:
            _write_ivfpq(faiss, x, positions, lists, dim, folder / f"{col}.ivfpq")
            continue
        _write_ivf(faiss, x, positions, lists, dim, folder / f"{col}.ivf")
        if lists > 1:
            _write_hnsw(faiss, x, positions, dim, folder / f"{col}.hnsw")
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, "kind": kind,
            "table_version": int(table_version),
            "rows": n, "dim": int(dim), "layers": [int(k) for k in layers], "lists": lists,
            "columns": list(columns), "pq_codes": pq_codes(dim) if compressed else None,
            "words": {str(words[a]): [int(a), int(b)] for a, b in zip(starts, ends)}}
    if params is not None:
        meta["index"] = params
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


def _lance_dataset(table):
    """The Lance dataset of the LanceDB ``table`` at its version (``pylance``), or None
    without pylance: a compressed side index then reads the table by row id through LanceDB."""
    try:
        return table.to_lance()
    except ImportError:
        return None


def build_side_index(db: str | os.PathLike, table, table_version: int, columns: Sequence[str],
                     layers: Sequence[int], dim: int, kind: str = "full",
                     params: dict[str, Any] | None = None) -> Path:
    """Write the side index of ``table`` (a LanceDB table checked out at ``table_version``)
    atomically into :func:`side_folder` of the index folder ``db``; returns the folder.
    See :func:`write_side_index`."""
    db = Path(db)
    final = side_folder(db, table_version)
    _remove_orphans(db)
    tmp, trash = Path(tempfile.mkdtemp(prefix=f".{PREFIX}{table_version}.tmp-{os.getpid()}-", dir=db)), None
    try:
        write_side_index(tmp, table, table_version, columns, layers, dim, kind, params)
        if final.exists():  # unreadable or of the other kind (why it is rebuilt): moved aside, then removed
            trash = Path(tempfile.mkdtemp(prefix=f".{PREFIX}{table_version}.tmp-{os.getpid()}-", dir=db))
            os.replace(final, trash)
        try:
            os.rename(tmp, final)
        except OSError:  # another reader or build wrote it meanwhile: theirs is the same
            if not final.is_dir():
                raise
    finally:
        for folder in (tmp, trash):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)
    for old in db.glob(f"{PREFIX}*"):  # side indexes of older versions
        if old != final and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)
    return final


def _remove_orphans(db: Path) -> None:
    """Remove the temporary folders of side-index writers that died half-way (their process
    is gone); those of a writer still running are left alone."""
    for tmp in db.glob(f".{PREFIX}*.tmp-*"):
        try:
            pid = int(tmp.name.split(".tmp-", 1)[1].split("-", 1)[0])
            os.kill(pid, 0)
        except (ValueError, ProcessLookupError):
            shutil.rmtree(tmp, ignore_errors=True)
        except PermissionError:  # alive, another user's
            pass


def _write_ivf(faiss, x: np.ndarray, positions: np.ndarray, lists: int, dim: int, path: Path) -> None:
    """Write an ``IVF<lists>,SQfp16`` inner-product index of the unit rows ``x[positions]``,
    added in position order (so each list's ids are sorted), with a direct map (for
    :meth:`SideIndex.vector`). k-means is trained on ``TRAIN_PER_LIST`` rows per list."""
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFScalarQuantizer(quantizer, dim, lists, faiss.ScalarQuantizer.QT_fp16,
                                          faiss.METRIC_INNER_PRODUCT, False)
    n = len(positions)
    # FAISS prints (C++, on stderr) a warning when k-means has under 39 rows per list: a small index
    # (few usages, one list) is trained on what there is, by design; the threshold does nothing else
    index.cp.min_points_per_centroid = 1
    sample = np.sort(np.random.default_rng(0).choice(n, min(n, TRAIN_PER_LIST * lists), replace=False))
    index.train(_unit(x[positions[sample]]) if n else np.zeros((1, dim), np.float32))
    for a in range(0, n, ADD_BATCH):
        index.add(_unit(x[positions[a:a + ADD_BATCH]]))
    index.make_direct_map()
    faiss.write_index(index, str(path))


def _write_hnsw(faiss, x: np.ndarray, positions: np.ndarray, dim: int, path: Path) -> None:
    """Write an ``HNSW32,SQfp16`` inner-product graph of the unit rows ``x[positions]``,
    added in position order (ids = positions)."""
    index = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_fp16, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
    index.train(np.zeros((1, dim), np.float32))  # fp16 needs no training; FAISS asks for the call
    for a in range(0, len(positions), ADD_BATCH):
        index.add(_unit(x[positions[a:a + ADD_BATCH]]))
    faiss.write_index(index, str(path))


def _write_ivfpq(faiss, x: np.ndarray, positions: np.ndarray, lists: int, dim: int, path: Path) -> None:
    """Write an ``IVF<lists>,PQ<m>`` inner-product index (``m = pq_codes(dim)`` codes of 8
    bits, on the residuals) of the unit rows ``x[positions]``, added in position order (so
    each list's ids are sorted). Trained on ``TRAIN_PER_LIST`` rows per list, at least
    ``PQ_TRAIN_ROWS``; a table of fewer than 256 rows pads its sample with random unit
    vectors (each code book needs 256 points; every usage is then re-ranked anyway)."""
    n = len(positions)
    index = faiss.IndexIVFPQ(faiss.IndexFlatIP(dim), dim, lists, pq_codes(dim), PQ_BITS,
                             faiss.METRIC_INNER_PRODUCT)
    index.cp.min_points_per_centroid = index.pq.cp.min_points_per_centroid = 1  # small samples: no warning
    rng = np.random.default_rng(0)
    sample = np.sort(rng.choice(n, min(n, max(TRAIN_PER_LIST * lists, PQ_TRAIN_ROWS)), replace=False))
    train = _unit(x[positions[sample]]) if n else np.zeros((0, dim), np.float32)
    if len(train) < 2**PQ_BITS:
        train = np.concatenate([train, _unit(rng.normal(size=(2**PQ_BITS - len(train), dim)))])
    index.train(train)
    for a in range(0, n, ADD_BATCH):
        index.add(_unit(x[positions[a:a + ADD_BATCH]]))
    faiss.write_index(index, str(path))
