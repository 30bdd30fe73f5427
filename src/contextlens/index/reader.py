"""Read and search a usage index: :class:`UsageReader`, from :func:`open_store`.

The writing side, the format and how an index is opened are :mod:`.store`'s; the side index
searched here is :mod:`.side_index`'s (see :mod:`.store` for why it is kept beside LanceDB).
A reader sees committed table versions only, so it can search while a build appends.
"""

from __future__ import annotations

import logging
import os
import time
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import FileFormatError, InputError
from ..passes.rows import ROW_COLUMNS
from .side_index import (
    RERANK_MIN,
    CompressedSideIndex,
    SideIndex,
    load_side_index,
    probes_for,
    side_bytes,
    side_folder,
)
from .store import (
    PROGRESS,
    RACY_NS,
    USAGES,
    WORD_CACHE_BYTES,
    _Index,
    _open_checked,
    _sql_str,
    check_params,
    is_uri,
)

__all__ = ["UsageReader", "open_store"]

log = logging.getLogger(__name__)


class _OpenedOnUse:
    """A reader's LanceDB handle (``attr``), opened by ``_open_lance`` the first time it is read."""

    def __init__(self, attr: str):
        self.attr = attr

    def __get__(self, reader, owner=None):
        if reader is None:
            return self
        if getattr(reader, self.attr) is None:
            reader._open_lance()
        return getattr(reader, self.attr)

    def __set__(self, reader, value) -> None:
        setattr(reader, self.attr, value)


class UsageReader(_Index):
    """Reads and searches one usage index; see :func:`open_store`.

    A complete index is searched through its side index (:mod:`.side_index`), opened once
    per table version (and rebuilt from the table when missing or stale); an index still
    being built is searched exactly, from LanceDB. A reader opened from its side index alone
    (``side``, no ``table``: see :func:`open_store`) opens LanceDB when something first needs
    the table (a checkpoint, a usage the side index lacks, a newer table version).
    """

    def __init__(self, path: str | os.PathLike, db, table, params: dict[str, Any],
                 side: SideIndex | None = None):
        super().__init__(path, db, table, params)
        self._seen: dict[str, Any] = {"version": None}  # what one table version holds (see _state)
        self._lease = None  # the hold on a side index in the cache (an index in object storage)
        if table is not None:
            self._stamp, self._version = self._versions_stamp(), table.version
        elif side is not None:
            self._stamp, self._version = None, int(side.meta["table_version"])
            self._seen = {"version": self._version, "side": side, "counts": {}, "words": OrderedDict()}
        else:
            raise ValueError("a reader needs the LanceDB table or a side index")

    #: the LanceDB ``usages`` table and database, opened on first use if the reader was opened
    #: from its side index alone
    table = _OpenedOnUse("_table")
    _db = _OpenedOnUse("_lance_db")

    @property
    def lance_open(self) -> bool:
        """Whether LanceDB was opened (a reader opened from its side index alone has not yet)."""
        return self._table is not None

    def _open_lance(self) -> None:
        """Open LanceDB and see its latest version (a reader opened from its side index)."""
        _, db, table, params = _open_checked(self.path)
        if params != self.params:
            raise FileFormatError(self.path, None, "the index was replaced while it was read (its parameters "
                                                   "changed); search it again")
        self._lance_db, self._table = db, table
        self._stamp, self._version = self._versions_stamp(), table.version

    @classmethod
    def of(cls, index: _Index) -> UsageReader:
        """A reader of an index opened to be written (a :class:`.store.UsageStore`)."""
        return cls(index.path, index._db, index.table, index.params)

    def _versions_stamp(self) -> int | None:
        return _versions_stamp(self.path) if self.local else None

    def refresh(self) -> None:
        """See the latest committed data (a build may be appending). Asks LanceDB only when
        the table's version folder changed since the last look (a stat: microseconds); a
        reader opened from its side index alone, only when the table has a newer version
        (its version files listed)."""
        if not self.lance_open:
            if latest_version(self.path) != self._version:
                self._open_lance()
            return
        stamp = self._versions_stamp()
        if stamp is None or stamp != self._stamp or time.time_ns() - stamp < RACY_NS:
            self.table.checkout_latest()
            self._stamp, self._version = stamp, self.table.version

    def _state(self) -> dict[str, Any]:
        """What the current table version holds: its ``side`` index (None while a build
        appends), the usage ``counts`` of the words asked so far and the ``words`` whose
        vectors are held in memory (searches without a side index)."""
        version = self._version
        if self._seen["version"] != version:
            side = self._open_side(version)
            if side is None and self.checkpoint()["done"]:
                side = self._rebuild_side(version)
            self._seen = {"version": version, "side": side, "counts": {}, "words": OrderedDict()}
        return self._seen

    def _open_side(self, version: int) -> SideIndex | CompressedSideIndex | None:
        """The side index of ``version`` when there is a good one (held in the cache for an
        index in object storage, so no other process evicts it while it is open)."""
        where = self.side_location(version)
        if not self.local:
            from ..build_marker import check_marker

            lease = self._search_cache().use(where)
            if check_marker(where) is not None:
                lease.release()
                return None
            self._lease = lease
        return load_side_index(where, version, self.table)

    def _rebuild_side(self, version: int) -> SideIndex | CompressedSideIndex | None:
        log.info("%s: writing the side index of table version %d (missing or stale)", self.path, version)
        try:
            self.write_side(version, self.side_kind(self.table.count_rows()))
        except OSError as e:  # e.g. a read-only folder: search LanceDB directly
            log.warning("%s: cannot write the side index (%s); searching the table directly (slower)",
                        self.path, e)
        return self._open_side(version)

    def side(self) -> SideIndex | CompressedSideIndex | None:
        """The side index of the current table version (None while a build appends)."""
        return self._state()["side"]

    def has_ann_index(self) -> bool:
        """Whether searches are approximate (a side index of more than one inverted list, or
        a compressed one with more usages than a search re-ranks)."""
        side = self.side()
        return side is not None and (side.lists > 1 or side.kind == "compressed"
                                     and side.meta["rows"] > RERANK_MIN)

    def search_structure(self) -> dict[str, Any]:
        """``{kind, bytes, bytes_per_usage}`` of the side index (kind ``exact``, bytes None,
        while a build appends: searches read the table)."""
        side = self.side()
        if side is None:
            return {"kind": "exact", "bytes": None, "bytes_per_usage": None}
        size, n = side_bytes(side.folder), int(side.meta["rows"])
        return {"kind": side.kind, "bytes": size, "bytes_per_usage": round(size / n, 1) if n else None}

    def nprobes(self, word: str | None) -> int:
        """Inverted lists a search probes (0 without a side index)."""
        side = self.side()
        if side is None:
            return 0
        return probes_for(None if word is None else self.count(word), side.lists)

    def count(self, word: str | None = None) -> int:
        side = self.side()
        if side is None:
            return super().count(word)
        if word is None:
            return int(side.meta["rows"])
        lo, hi = side.word_range(word)
        return hi - lo

    def _count_cached(self, word: str) -> int:
        counts = self._state()["counts"]
        if word not in counts:
            counts[word] = self.count(word)
        return counts[word]

    def _word_vectors(self, word: str, layer: int | None):
        """``(rows, unit vectors (n, dim) float32)`` of a word's usages, kept in memory."""
        words = self._state()["words"]
        key = (word, self.layer_column(layer))
        if key in words:
            words.move_to_end(key)
            return words[key]
        rows, x = self.vectors_of(word, layer)
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        words[key] = (rows, x / np.where(norms > 0, norms, 1.0))
        while len(words) > 1 and sum(u.nbytes for _, u in words.values()) > WORD_CACHE_BYTES:
            words.popitem(last=False)
        return words[key]

    def get(self, uid: str, layer: int | None = None) -> dict[str, Any]:
        """A stored usage: its row and ``vector`` at ``layer`` (unit length when read from
        the side index: searches are cosine)."""
        col = self.layer_column(layer)
        side = self.side()
        at = side.position(uid) if side is not None else None
        if at is not None:
            return {**side.rows_at([at])[0], "vector": side.vector(at, int(col[1:]))}
        rows = self.table.search().where(f"usage_id = {_sql_str(uid)}").limit(1).to_arrow().to_pylist()
        if not rows:
            raise InputError(f"no usage with id {uid!r} in {self.path}; take an id from a search result")
        row = rows[0]
        row["vector"] = np.asarray(row[col], dtype=np.float32)
        return row

    def search(self, vector: np.ndarray, *, word: str | None = None, k: int = 10,
               layer: int | None = None, exact: bool | None = None) -> list[dict[str, Any]]:
        """The ``k`` usages nearest ``vector`` (cosine), optionally only those of ``word``.

        Through the side index when there is one (see :mod:`.side_index`); else exactly,
        from LanceDB (a word's vectors read once into memory). ``exact=True``: LanceDB's
        flat scan, whatever the size (the reference the benchmarks compare with).
        """
        col = self.layer_column(layer)
        q = np.asarray(vector, dtype=np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-30)  # (dim,)
        side = None if exact else self.side()
        if side is not None:
            return side.search_rows(q, int(col[1:]), int(k), word)
        if not exact and word is not None:
            rows, unit = self._word_vectors(word, layer)
            sims = unit @ q  # (n,)
            top = np.argsort(-sims, kind="stable")[: int(k)]
            return [{**rows[i], "similarity": float(sims[i])} for i in top]
        query = self.table.search(q, vector_column_name=col).metric("cosine").bypass_vector_index()
        if word is not None:
            query = query.where(f"word = {_sql_str(word)}", prefilter=True)
        rows = query.select([*ROW_COLUMNS, "_distance"]).limit(int(k)).to_arrow().to_pylist()
        for r in rows:
            r["similarity"] = 1.0 - float(r.pop("_distance"))
        return rows

    def vectors_of(self, word: str, layer: int | None = None, limit: int | None = None):
        """``(rows, vectors (n, dim) float32)`` of a word's usages, in usage-id order."""
        col = self.layer_column(layer)
        table = self.table.search().where(f"word = {_sql_str(word)}").select([*ROW_COLUMNS, col]) \
            .limit(None).to_arrow()
        table = table.sort_by("usage_id")
        if limit is not None:
            table = table.slice(0, int(limit))
        dim = int(self.params["dim"])
        x = table.column(col).combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)
        rows = table.drop_columns([col]).to_pylist()
        return rows, x.astype(np.float32)  # (n, dim)

    def word_counts(self) -> dict[str, int]:
        side = self.side()
        if side is not None:
            counts = {w: hi - lo for w, (lo, hi) in side.meta["words"].items()}
        elif not self.count():
            return {}
        else:
            table = self.table.search().select(["word"]).limit(None).to_arrow()
            got = table.group_by("word").aggregate([("word", "count")]).to_pylist()
            counts = {r["word"]: r["word_count"] for r in got}
        return dict(sorted(counts.items(), key=lambda t: (-t[1], t[0])))

    def size_on_disk(self) -> int:
        """Bytes of the index: its folder; for an index in object storage, its tables'
        data (as LanceDB counts it) and its side index in the cache."""
        if self.local:
            return sum(f.stat().st_size for f in self.path.rglob("*") if f.is_file())
        side = self.side()
        tables = sum(int(self._db.open_table(t).stats()["total_bytes"]) for t in (USAGES, PROGRESS))
        return tables + (side_bytes(side.folder) if side is not None else 0)


def _versions_stamp(path: Path) -> int | None:
    """When the ``usages`` table last got a version (mtime of its version folder, ns), None
    when that folder is not where Lance keeps it (then every refresh asks LanceDB)."""
    try:
        return os.stat(path / f"{USAGES}.lance" / "_versions").st_mtime_ns
    except OSError:
        return None


def manifest_version(name: str) -> int | None:
    """The table version a file of Lance's ``_versions`` folder is the manifest of (None for
    any other file). Lance names a manifest ``<version>.manifest``, or (its V2 naming, so the
    newest sorts first) ``<2**64 - 1 - version>.manifest`` in 20 digits.

    >>> manifest_version("18446744073709551613.manifest"), manifest_version("3.manifest")
    (2, 3)
    >>> manifest_version("latest_version_hint.json"), manifest_version(".tmp-3.manifest")
    (None, None)
    """
    stem, dot, ext = name.partition(".")
    if ext != "manifest" or not stem.isdigit() or not stem.isascii():
        return None
    return 2**64 - 1 - int(stem) if len(stem) == 20 else int(stem)


def latest_version(path: Path) -> int | None:
    """The newest version of the ``usages`` table of the local index folder ``path``, from
    the names of its manifests (each written whole, under its final name, by a commit);
    None when there is none to be read."""
    try:
        names = os.listdir(path / f"{USAGES}.lance" / "_versions")
    except OSError:
        return None
    return max((v for v in map(manifest_version, names) if v is not None), default=None)


def _reader_of_side(path: Path) -> UsageReader | None:
    """A reader of the complete local index at ``path`` answered from the side index of its
    table's newest version alone, LanceDB left unopened (``import lancedb`` costs about a
    second of CPU, the search milliseconds); None when LanceDB must answer: no such side
    index (missing, stale: a build appended since, unreadable), a compressed one (it reads
    vectors and rows from the table), or one written before side indexes kept the index's
    parameters."""
    version = latest_version(path)
    if version is None:
        return None
    side = load_side_index(side_folder(path, version), version, warn=False)
    if not isinstance(side, SideIndex) or not isinstance(side.meta.get("index"), dict):
        return None
    check_params(path, side.meta["index"])
    return UsageReader(path, None, None, side.meta["index"], side=side)


def open_store(path):
    """Open an existing usage index to read and search it; a missing, foreign or corrupt
    one raises a clear error (and nothing is written). A list of several indexes opens them
    to be searched as one (:class:`.shards.ShardedReader`).

    A complete local index whose side index is fresh is opened from it alone (LanceDB when
    first needed: see :class:`UsageReader`); searches give the same hits either way."""
    if isinstance(path, list | tuple):
        from .shards import ShardedReader, open_readers

        readers = open_readers(path)
        return readers[0] if len(readers) == 1 else ShardedReader(readers)
    if not is_uri(path) and Path(path).is_dir():
        reader = _reader_of_side(Path(path))
        if reader is not None:
            return reader
    return UsageReader(*_open_checked(path))
