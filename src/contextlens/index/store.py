"""The on-disk usage index: a LanceDB database (embedded, no server) holding one index.

Two tables:

- ``usages``: one row per usage: ``usage_id, word, form, doc, sentence_no, start, end,
  sentence, chunk`` and one vector column per stored layer (``v4``, ``v6``...), float16 by
  default (float32 as an option). The index parameters (model, layers, dtype, match mode,
  words, format version) are recorded in the table's schema metadata under ``contextlens``.
- ``progress``: the build's checkpoints, one row per committed chunk of sentences,
  written *after* that chunk's usages (see :mod:`contextlens.index.build`).

The column names are spelled once, as the fields of
:class:`~contextlens.passes.rows.UsageRow` (the schema is made from them).
:class:`UsageStore` writes an index (create, append, commit, roll back, finish);
:class:`UsageReader` (from :func:`open_store`) reads and searches it.

Search is cosine. A complete index is searched through its *side index*
(:mod:`.side_index`): derived from the final table version by :meth:`UsageStore.finish`,
kept beside the table, and rebuilt from it whenever it is missing or stale (so LanceDB
stays the store of record, and an index of an older contextlens gets one on first use).
Its rows are sorted by word, so a word is a contiguous range and a word-filtered search
scans only that word's slice of each inverted list (or all of it: exact, up to
``EXACT_MAX_WORD_ROWS``). While a build appends, readers search the committed rows
exactly, from LanceDB. A search over every word of a large table walks an HNSW graph
kept in the same side index. Why FAISS structures in memory beside LanceDB, and not
LanceDB's own indexes: see benchmarks/RESULTS.md ("Search"); in short, at 1M usages
LanceDB's IVF-SQ took 20-30 ms a query (the metadata columns fetched per result cost ~1.3
ms each) and its IVF-HNSW-SQ recalled less; inverted lists alone needed a tenth of them
probed for recall 0.95 on real vectors, where the graph is there in a millisecond; but a
word-filtered graph search collapses for words below a few % of the table, which is why a
word's search stays on the inverted lists. A large index gets a *compressed* side index
instead (product quantisation, re-ranked with the table's float16 vectors: about 140 bytes
per usage and layer against 1,900; see :mod:`.side_index`).

Where it lives: a folder (``--db DIR``), or a LanceDB URI passed through as it is given
(``s3://bucket/usages``, ``gs://...``, ``az://...``, or ``file:///...``, the same code path
on a local disk): LanceDB reads its credentials from the environment (``AWS_*``...). The
side index of an index in object storage is kept in the local cache ``search``
(:mod:`contextlens.disk_cache`), one entry per index and table version.
"""

from __future__ import annotations

import json
import logging
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from ..errors import FileFormatError, InputError, ask, check_choice, import_optional
from ..passes.rows import PACKED, ROW_COLUMNS, EncodedChunk, pack_row
from .side_build import build_side_index, write_side_index
from .side_index import lists_for, side_folder, side_kind

__all__ = [
    "UsageStore", "IndexMismatchError", "DTYPES", "FORMAT", "usages_schema", "vector_column", "is_uri",
    "SIDE_INDEX", "side_setting",
]

log = logging.getLogger(__name__)
DTYPES = ("float16", "float32")
FORMAT, FORMAT_VERSION = "contextlens-usage-index", 1
USAGES, PROGRESS = "usages", "progress"
# without a side index: words' vectors kept in memory, least recently used dropped
WORD_CACHE_BYTES = 256 * 2**20
RACY_NS = 2 * 10**9  # a version folder changed this recently may change again within the clock's tick
CLEANUP_AFTER = timedelta(minutes=5)  # readers refresh on every search; older versions are garbage
META_KEY = b"contextlens"
SIDE_INDEX = ("auto", "full", "compressed")  # the ``side_index`` parameter: see side_setting
SEARCH_CACHE = "search"  # the disk cache of side indexes of indexes in object storage
#: the parameters a resumed build must give again (an index keeps one setting of each)
CHECKED = ("model", "layers", "dim", "dtype", "match", "layout", "words", "precision", "shard", "side_index")
_DEFAULTS = {"side_index": "auto"}  # what an index made before a parameter existed has


def is_uri(db) -> bool:
    """Whether ``db`` is a LanceDB URI (object storage, or ``file://``) rather than a folder.

    >>> is_uri("s3://bucket/usages"), is_uri("file:///tmp/usages"), is_uri("usages.lance"), is_uri("C:/x")
    (True, True, False, False)
    """
    scheme, sep, _ = str(db).partition("://")
    return bool(sep) and len(scheme) > 1 and scheme.replace("+", "").isalnum()


def side_setting(compress: bool | None) -> str:
    """The ``side_index`` parameter recorded for ``compress`` (None: chosen by size).

    >>> side_setting(None), side_setting(True), side_setting(False)
    ('auto', 'compressed', 'full')
    """
    return "auto" if compress is None else "compressed" if compress else "full"


class IndexMismatchError(InputError):
    """The index was built with other parameters (model, layers...) than the ones asked for."""


def _lance():
    """``(lancedb, pyarrow)``."""
    return import_optional("lancedb", "index", "The usage index"), import_optional("pyarrow",
                                                                                   "index", "The usage index")


def vector_column(layer: int) -> str:
    """The column holding layer ``layer``'s vectors.

    >>> vector_column(6)
    'v6'
    """
    return f"v{int(layer)}"


def _sql_str(value: str) -> str:
    """A SQL string literal.

    >>> _sql_str("it's")
    "'it''s'"
    """
    return "'" + value.replace("'", "''") + "'"


# UsageRow's, in order
_ROW_TYPES = ("string", "string", "string", "string", "int64", "int32", "int32", "string")


def usages_schema(params: dict[str, Any]):
    """The ``usages`` table's Arrow schema: the :class:`UsageRow` columns, ``chunk``, the row
    again packed in one column (:data:`PACKED`: a compressed search reads a result's row in
    one column instead of eight, 1 ms instead of 8 at 1M usages) and one vector column per
    stored layer; ``params`` recorded in its metadata. Tables written before the packed
    column have none; they are read column by column."""
    _, pa = _lance()
    vtype = pa.float16() if params["dtype"] == "float16" else pa.float32()
    fields = [pa.field(name, getattr(pa, t)(), nullable=name != "usage_id") for name,
              t in zip(ROW_COLUMNS, _ROW_TYPES)]
    fields += [pa.field("chunk", pa.int64()), pa.field(PACKED, pa.string())]
    fields += [pa.field(vector_column(k), pa.list_(vtype, int(params["dim"]))) for k in params["layers"]]
    return pa.schema(fields, metadata={META_KEY: json.dumps(params).encode()})


class _Index:
    """An opened index: its folder, LanceDB connection, ``usages`` table and parameters."""

    def __init__(self, path: str | os.PathLike, db, table, params: dict[str, Any]):
        self.path: Path | str = str(path) if is_uri(path) else Path(path)  # a URI stays as given
        self._db, self.table, self.params = db, table, params

    @property
    def layers(self) -> list[int]:
        return [int(k) for k in self.params["layers"]]

    @property
    def local(self) -> bool:
        """Whether the index is a folder of this machine (not a URI)."""
        return isinstance(self.path, Path)

    def _search_cache(self):
        from ..disk_cache import DiskCache

        return DiskCache(SEARCH_CACHE)

    def side_location(self, version: int) -> Path:
        """Where the side index of table version ``version`` lives: in the index folder, or
        (an index in object storage) in the ``search`` cache."""
        if self.local:
            return side_folder(self.path, version)
        import hashlib

        key = hashlib.blake2b(str(self.path).encode(), digest_size=8).hexdigest()
        return self._search_cache().folder / f"{key}-v{int(version)}"

    def write_side(self, version: int, kind: str) -> Path:
        """Write the side index of table version ``version`` (the table checked out at it),
        with the parameters as the table records them (what :func:`_open_checked` reads)."""
        args = (self.table, version, ROW_COLUMNS, self.layers, int(self.params["dim"]))
        params = json.loads(self.table.schema.metadata[META_KEY])
        if self.local:
            return build_side_index(self.path, *args, kind=kind, params=params)
        from ..build_marker import write_marker

        target = self.side_location(version)
        with self._search_cache().building(target, rebuild=True) as tmp:
            write_side_index(tmp, *args, kind=kind, params=params)
            write_marker(tmp, str(self.path))
        return target

    def side_kind(self, rows: int) -> str:
        """The kind of side index this index gets at ``rows`` usages (its ``side_index`` setting)."""
        setting = self.params.get("side_index", "auto")
        return side_kind(rows, len(self.layers), None if setting == "auto" else setting == "compressed")

    def layer_column(self, layer: int | None) -> str:
        """The vector column of ``layer`` (default: the deepest stored layer)."""
        if layer is None:
            return vector_column(self.layers[-1])
        if int(layer) not in self.layers:
            raise InputError(f"layer {layer} is not stored in {self.path}; it holds layers "
                             f"{', '.join(map(str, self.layers))} ({ask('layer')} with one of them)")
        return vector_column(layer)

    def refresh(self) -> None:
        """See the latest committed data (a build may be appending)."""
        self.table.checkout_latest()

    def count(self, word: str | None = None) -> int:
        return self.table.count_rows(None if word is None else f"word = {_sql_str(word)}")

    def checkpoint(self) -> dict[str, Any]:
        """The last committed chunk: ``{chunk, sentences_done, usages_done, done}`` (chunk -1 if none)."""
        rows = self._db.open_table(PROGRESS).to_arrow().to_pylist()
        if not rows:
            return {"chunk": -1, "sentences_done": 0, "usages_done": 0, "done": False}
        return max(rows, key=lambda r: (r["chunk"], r["done"]))


class UsageStore(_Index):
    """Writes one usage index (the build's side): create or reopen it, append chunks of
    encoded usages, commit checkpoints, roll back what was never committed, finish.

    :class:`UsageReader` (from :func:`open_store`) reads and searches it.
    """

    @classmethod
    def create(cls, path, params: dict[str, Any]) -> UsageStore:
        """Create an empty index with these parameters (``model, layers, dim, dtype`` at least)."""
        lancedb, pa = _lance()
        check_choice("dtype", params["dtype"], DTYPES)
        params = {"format": FORMAT, "format_version": FORMAT_VERSION,
                  "contextlens_version": __version__, "created": time.time(), **params}
        progress = pa.schema([pa.field("chunk", pa.int64()), pa.field("sentences_done", pa.int64()),
                              pa.field("usages_done", pa.int64()), pa.field("done", pa.bool_()),
                              pa.field("time", pa.float64())])
        busy = ("already holds an index's tables: another build writing into this --db at the same time? Two "
                "builds cannot share one --db: wait for the other to finish and run this again (it resumes "
                "or checks that build), or give a new --db folder")
        db = lancedb.connect(str(path))
        existing = _tables(db)
        if existing == [PROGRESS] and db.open_table(PROGRESS).count_rows() == 0:
            db.drop_table(PROGRESS)  # a creation killed between its two tables: start it again
        elif existing:
            raise FileFormatError(path, None, busy)
        try:
            # first: the usages table (with the parameters) marks an index
            db.create_table(PROGRESS, schema=progress)
            table = db.create_table(USAGES, schema=usages_schema(params))
        except (ValueError, OSError, RuntimeError) as e:  # another build created them in between
            if not _tables(db):
                raise
            raise FileFormatError(path, None, busy) from e
        return cls(path, db, table, params)

    @classmethod
    def open(cls, path) -> UsageStore:
        """Reopen an existing index to resume its build (checked as :func:`.reader.open_store` does)."""
        return cls(*_open_checked(path))

    @classmethod
    def open_or_create(cls, db: Path | str, params: dict[str, Any]) -> UsageStore:
        """The index at ``db`` to resume, when it was built with ``params`` (else an
        :class:`IndexMismatchError` naming what differs), or a new one. ``side_index="auto"``
        (not asked) takes the index's own choice into ``params``."""
        if not _holds_something(db):
            return cls.create(db, params)
        store = cls.open(db)  # a foreign or damaged folder raises here, untouched
        recorded = {k: store.params.get(k, _DEFAULTS.get(k)) for k in CHECKED}
        if params.get("side_index") == "auto":  # not asked: the index keeps its own choice
            params["side_index"] = recorded["side_index"]
        differ = [k for k in CHECKED if recorded[k] != params.get(k)]
        if differ:
            said = [f"{k} {recorded[k]!r} (this build: {params.get(k)!r})" for k in differ if k != "words"]
            if "words" in differ:
                said.append(f"the words {_listed(store.params.get('words') or [])} (this build: "
                            f"{_listed(params['words'])})")
            raise IndexMismatchError(f"{db} holds an index built with {'; '.join(said)}: an index keeps one "
                                     "setting of each, so build into a new --db folder (or give these "
                                     "settings again to resume or check it)")
        return store

    def to_arrow(self, chunk: int, encoded: EncodedChunk):
        """The Arrow table of the ``usages`` schema holding ``encoded`` (committed as ``chunk``)."""
        _, pa = _lance()
        schema, n = self.table.schema, len(encoded.rows)
        dim, dtype = int(self.params["dim"]), np.float16 if self.params["dtype"] == "float16" else np.float32
        columns = list(zip(*encoded.rows)) if n else [[] for _ in ROW_COLUMNS]
        arrays = [pa.array(col, type=schema.field(name).type) for name, col in zip(ROW_COLUMNS, columns)]
        arrays.append(pa.array(np.full(n, chunk, np.int64)))
        if PACKED in schema.names:  # (a table written before it has no packed column)
            arrays.append(pa.array([pack_row(r) for r in encoded.rows], type=pa.string()))
        for k in self.layers:
            with np.errstate(over="ignore"):
                x = np.ascontiguousarray(encoded.vectors[k], dtype=dtype).reshape(n, dim)  # (n, dim)
            if not np.isfinite(x).all():  # inf would give NaN similarities
                raise InputError(f"a vector of layer {k} has values beyond {self.params['dtype']}'s range "
                                 "(float16: ±65,504); build the index into a new --db with dtype float32")
            arrays.append(pa.FixedSizeListArray.from_arrays(pa.array(x.ravel()), dim))
        return pa.Table.from_arrays(arrays, schema=schema)

    def rollback(self, chunk: int) -> int:
        """Delete the usages of chunks after ``chunk`` (written but never committed); returns how many."""
        self.table.checkout_latest()
        extra = self.table.count_rows(f"chunk > {int(chunk)}")
        if extra:
            log.info("removing %d usages written after the last checkpoint (chunk %d)", extra, chunk)
            self.table.delete(f"chunk > {int(chunk)}")
        return extra

    def append(self, chunk: int, encoded: EncodedChunk) -> None:
        """Write a chunk's usages (one atomic Lance write; not committed until :meth:`commit`)."""
        if encoded.rows:
            self.table.add(self.to_arrow(chunk, encoded))

    def commit(self, chunk: int, sentences_done: int, usages_done: int, done: bool = False) -> None:
        """Record that every usage of the sentences before ``sentences_done`` is stored."""
        _, pa = _lance()
        self._db.open_table(PROGRESS).add(pa.table({"chunk": [chunk], "sentences_done": [sentences_done],
                                                    "usages_done": [usages_done], "done": [done],
                                                    "time": [time.time()]}))

    def finish(self, chunk: int, sentences_done: int) -> dict[str, Any]:
        """Compact, write the side index of the final table version, and mark the build
        complete (a crash before that mark: the next run finishes again)."""
        self.table.checkout_latest()
        n = self.table.count_rows()
        try:
            # compact; drop files superseded a while ago
            self.table.optimize(cleanup_older_than=CLEANUP_AFTER)
        except Exception as e:  # compaction is an optimisation; a failure leaves the data intact
            log.warning("compaction of %s skipped: %s", self.path, e)
        ann = lists_for(n) > 1
        if ann:  # scalar indexes: a word's or a usage's rows found without a full scan
            from lancedb.index import Bitmap, BTree

            self.table.create_index("word", config=Bitmap(), replace=True)
            self.table.create_index("usage_id", config=BTree(), replace=True)
        self.write_side(self.table.version, self.side_kind(n))
        self.commit(chunk, sentences_done, n, done=True)
        return {"usages": n, "ann_index": ann}


def _tables(db) -> list[str]:
    listed = db.list_tables()
    return list(getattr(listed, "tables", listed))


def table_names(path: str | os.PathLike) -> list[str]:
    """The LanceDB tables at ``path`` (a folder or a URI; none when it holds no database)."""
    lancedb, _ = _lance()
    return _tables(lancedb.connect(str(path)))


def open_progress_rows(path: str | os.PathLike) -> int:
    """Rows of the ``progress`` table of ``path`` (-1 when it cannot be read)."""
    lancedb, _ = _lance()
    try:
        return lancedb.connect(str(path)).open_table(PROGRESS).count_rows()
    except Exception:
        return -1


def _open_checked(path: str | os.PathLike):
    """``(path, db, table, params)`` of an existing index; a missing, foreign or corrupt one
    raises a clear error (and nothing is written)."""
    lancedb, _ = _lance()
    path = str(path) if is_uri(path) else Path(path)
    missing = InputError(f"{path}: no usage index there; build one with `contextlens index build ... --db "
                         f"{path}`")
    if isinstance(path, Path) and not path.is_dir():
        raise missing
    try:
        db = lancedb.connect(str(path))
        names = _tables(db)
        if not names and not isinstance(path, Path):
            raise missing
        if names == [PROGRESS]:
            raise FileFormatError(path, None,
                                  "the index is being created (its usages table is not there yet): if a "
                                              "build is running, wait a moment and try again; otherwise run "
                                              "the build again, it starts this index afresh")
        if USAGES not in names or PROGRESS not in names:
            raise FileFormatError(path, None,
                                  f"not a contextlens usage index (tables: {', '.join(names) or 'none'}); "
                                              "give the --db folder of `contextlens index build`")
        table = db.open_table(USAGES)
        raw = (table.schema.metadata or {}).get(META_KEY)
    except InputError:
        raise
    except Exception as e:  # lance raises many kinds on damaged files
        raise FileFormatError(path, None, f"the index cannot be read ({type(e).__name__}: {e}); it may be "
                                          "damaged: rebuild it into a new --db folder") from None
    if raw is None:
        raise FileFormatError(path, None, "its 'usages' table was not written by contextlens (no index "
                                          "parameters); it was left untouched")
    try:
        params = json.loads(raw)
    except ValueError:
        raise FileFormatError(path, None, "the index parameters are unreadable; rebuild the index") from None
    check_params(path, params)
    return path, db, table, params


def check_params(path, params: dict[str, Any]) -> None:
    """Raise a clear error when ``params`` are not those of an index this version reads."""
    if params.get("format") != FORMAT or params.get("format_version", 0) > FORMAT_VERSION:
        raise FileFormatError(path, None,
                              f"index format {params.get('format')!r} v{params.get('format_version')} is not "
                                          f"{FORMAT} v{FORMAT_VERSION}; rebuild it with this version")


def _holds_something(db: Path | str) -> bool:
    """Whether ``db`` (a folder or a URI) holds anything but what a killed creation leaves."""
    there = bool(table_names(db)) if isinstance(db, str) else db.exists() and any(db.iterdir())
    return there and not _only_empty_progress(db)


def _only_empty_progress(db: Path | str) -> bool:
    """Whether ``db`` holds only what a creation killed half-way leaves (an empty progress table)."""
    if isinstance(db, str):
        return table_names(db) == [PROGRESS] and open_progress_rows(db) == 0
    return [p.name for p in db.iterdir()] == [f"{PROGRESS}.lance"] and open_progress_rows(db) == 0


def _listed(words: list[str], n: int = 6) -> str:
    """``words`` named briefly for a message.

    >>> _listed(["bank", "spring", "river"]), _listed(list("abcdefgh"), 3)
    ('bank, spring, river (3)', 'a, b, c... (8)')
    """
    return ", ".join(words[:n]) + ("..." if len(words) > n else "") + f" ({len(words)})"
