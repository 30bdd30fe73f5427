"""One policy for every on-disk cache: where each kind lives, how an entry is built,
checked, used and evicted, and how large each kind may grow.

Everything contextlens keeps to save time later lives under the cache root
(``CONTEXTLENS_CACHE``, else ``~/.cache/contextlens``), one folder per kind (:data:`KINDS`).
The data folder (``~/.cache/contextlens/data`` by default) is not a cache: nothing here
touches it.

A kind's folder holds *entries* (a folder or a file, named by a key of what changes its
contents) and, beside entry ``E``, two lock files (``fcntl.flock``): ``.E.lock``, held
exclusively while ``E`` is built, and ``.E.use``, held shared while a process reads ``E``
(:meth:`DiskCache.use`). Names that start with a dot are never entries.

- **Built whole, checked by content.** A folder entry is built in a temporary folder next
  to it and renamed into place (:meth:`DiskCache.building`), with a marker written last
  that lists its files, their sizes and SHA-256, checked before each use
  (:mod:`~contextlens.build_marker`).
- **Least recently used.** Every use stamps the entry (its modification time). After a
  build, entries are removed oldest first until the kind holds at most its bound; an
  entry another process is building or using (either lock held), and the one just built,
  are never removed. ``contextlens cache clear`` removes every entry not in use.
- **Bounded by a setting.** The bound of kind ``NAME`` is the environment variable
  ``CONTEXTLENS_CACHE_LIMIT_NAME`` (bytes, with an optional unit: ``4GiB``, ``500MB``;
  ``0`` keeps only what is in use), else the kind's default.

>>> parse_size("4GiB"), parse_size("1.5 MB"), parse_size("0")
(4294967296, 1500000, 0)
>>> import tempfile
>>> from contextlens.build_marker import write_marker
>>> cache = DiskCache("neighbours", tempfile.mkdtemp())
>>> with cache.building(cache.folder / "entry") as tmp:
...     _ = (tmp / "data.txt").write_text("1 2 3")
...     write_marker(tmp, "a doctest")
>>> [e.name for e in cache.entries()], check_marker(cache.folder / "entry")
(['entry'], None)
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from .build_marker import check_marker
from .errors import InputError, check_choice
from .files import cache_dir, cache_root, output_dir
from .progress import step

__all__ = [
    "KINDS", "CacheKind", "DiskCache", "Lease", "Entry", "CacheInfo", "Cleared", "parse_size", "format_size",
    "lease_for", "cache_info", "clear_caches",
]

log = logging.getLogger(__name__)
KIB, MIB, GIB = 2**10, 2**20, 2**30


@dataclass(frozen=True)
class CacheKind:
    """One kind of cache: its folder's name, what it holds, its default bound in bytes."""

    name: str
    what: str
    default_limit: int

    @property
    def setting(self) -> str:
        """The environment variable that bounds it."""
        return f"CONTEXTLENS_CACHE_LIMIT_{self.name.upper()}"


#: Every cache contextlens writes, by name. Defaults hold what the packaged models need at
#: once (measured sizes in the comments), so a normal session never evicts its own work.
KINDS = {k.name: k for k in (
    # minilm 90 MB, mpnet 436 MB, SmolLM2 539 MB per export; twice each with attentions: ~2.1 GB
    CacheKind("onnx", "ONNX exports of the transformer models (one per model and export settings)", 4 * GIB),
    # mpnet's zip extracted: 438 MB; SmolLM2 de-quantised to float32: 540 MB
    CacheKind("models", "packaged models prepared once (mpnet's zip parts joined, SmolLM2 de-quantised)",
              4 * GIB),
    # 20,000 words x every layer x dim x 4 bytes: minilm 225 MB, mpnet ~0.8 GB, SmolLM2 1.47 GB (measured)
    CacheKind("neighbours", "reference tables of the contextual neighbours (20,000 words alone, every layer)",
              4 * GIB),
    # float16 target vectors, every layer: 215 MB for minilm's tasks here; all of SemCor for mpnet ~4.5 GB
    CacheKind("encodings", "evaluation encodings (target vectors per encoder and task)", 8 * GIB),
    # glove-6b-50d: vectors, unit rows and norms for memory-mapping: 167 MB
    CacheKind("tables", "packaged tables prepared for memory-mapping (vectors, norms, unit rows)", 1 * GIB),
    # about 1 MB per install (source folder)
    CacheKind("numba", "the co-occurrence kernels compiled by numba (one folder per install)", 256 * MIB),
    # SemCor parsed: 32 MB; WordNet's graph (senses, synsets, hypernyms, glosses): 20 MB
    CacheKind("datasets", "parsed datasets (SemCor's 221 MB of XML parsed once, WordNet's graph)", 1 * GIB),
    # a compressed side index: ~140 bytes per usage and layer (140 MB at 1M usages); a full one ~1,900
    CacheKind("search", "search indexes of usage indexes kept in object storage (s3://, gs://...)", 8 * GIB),
    # one affine translator per layer: SmolLM2 30 x 577 x 576 float32, 40 MB
    CacheKind("lenses", "tuned lenses (one affine translator per layer of a causal LM)", 512 * MIB),
    # weat6 with minilm: 613 sentences x 7 layers x 384 float32, 6.6 MB; mpnet's 13 layers x 768: 25 MB
    CacheKind("ceat", "CEAT's contexts encoded from a corpus (per encoder, corpus, words, sample and seed)",
              512 * MIB),
)}

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": KIB, "mib": MIB, "gib": GIB, "tib": 2**40}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*([A-Za-z]*)\s*")


def parse_size(text: str, *, setting: str = "the size") -> int:
    """Bytes from ``text``: a number with an optional unit (B, kB, MB, GB, TB are powers of
    1000; KiB, MiB, GiB, TiB of 1024; any case).

    >>> parse_size("500mb"), parse_size("2 KiB"), parse_size("10")
    (500000000, 2048, 10)
    >>> parse_size("lots", setting="CONTEXTLENS_CACHE_LIMIT_ONNX")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: CONTEXTLENS_CACHE_LIMIT_ONNX='lots' is not a size; give bytes with an optional unit, e.g. 4GiB, 500MB, or 0 to keep only what is in use
    """  # noqa: E501 (a doctest's expected output, printed whole)
    found = _SIZE.fullmatch(str(text))
    unit = _UNITS.get(found.group(2).lower()) if found else None
    value = float(found.group(1)) * unit if found and unit else math.nan
    if not math.isfinite(value) or value >= 2**63:
        raise InputError(f"{setting}={text!r} is not a size; give bytes with an optional unit, e.g. 4GiB, "
                         "500MB, or 0 to keep only what is in use")
    return int(value)


def format_size(n: int) -> str:
    """Bytes as people read them (binary units).

    >>> format_size(512), format_size(215_000_000), format_size(4 * GIB)
    ('512 B', '205.0 MiB', '4.0 GiB')
    """
    for unit, size in (("TiB", 2**40), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


# -- locks ------------------------------------------------------------------------------------
def _lock_file(entry: Path, role: str) -> Path:
    return entry.parent / f".{entry.name}.{role}"  # role: "lock" (building) or "use"


def _flock(path: Path, *, shared: bool, wait: bool, create: bool = True):
    """An open file holding ``flock`` on ``path``, or None when another process holds a
    conflicting lock (``wait=False``) or, with ``create=False``, there is no lock file.
    A lock file removed while we waited (its entry evicted) is locked anew."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): never lock, so never evict
        return None
    while True:
        try:
            f = open(path, "a+b") if create else open(path, "rb")
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(f, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | (0 if wait else fcntl.LOCK_NB))
        except OSError:
            f.close()
            return None
        try:
            same = os.fstat(f.fileno()).st_ino == os.stat(path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return f
        f.close()
        if not create:
            return None


class Lease:
    """A shared hold on a cache entry: no process evicts it while the lease is held.
    Released by :meth:`release`, at the end of a ``with`` block, or when garbage-collected."""

    def __init__(self, entry: Path, file=None):
        self.entry, self._file = entry, file

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def __del__(self) -> None:
        self.release()


def _touch(entry: Path) -> None:
    """Mark ``entry`` as just used (its modification time: the LRU order)."""
    with contextlib.suppress(OSError):
        os.utime(entry)


def _size(path: Path) -> int:
    """Bytes of a file, or of every file under a folder (links not followed)."""
    try:
        if not path.is_dir() or path.is_symlink():
            return path.lstat().st_size
    except OSError:
        return 0
    total = 0
    for parent, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(parent, name)).st_size
    return total


@dataclass(frozen=True)
class Entry:
    """One entry of a cache: its path, bytes and last use (seconds since the epoch)."""

    path: Path
    bytes: int
    last_used: float

    @property
    def name(self) -> str:
        return self.path.name


@dataclass(frozen=True)
class CacheInfo:
    """What ``contextlens cache info`` shows of one cache."""

    name: str
    what: str
    location: str
    entries: int
    bytes: int
    limit: int
    setting: str
    in_use: int


@dataclass(frozen=True)
class Cleared:
    """What ``contextlens cache clear`` did to one cache."""

    name: str
    location: str
    removed: int
    bytes_freed: int
    kept_in_use: tuple[str, ...]


class DiskCache:
    """One kind of cache (:data:`KINDS`), in its folder (default: ``<cache root>/<name>``).

    Parameters
    ----------
    name : the kind, e.g. ``"onnx"``; it gives the default folder and the bound.
    folder : another folder to keep this kind in (tests, a library user's own).
    """

    def __init__(self, name: str, folder: str | os.PathLike | None = None):
        self.kind = KINDS[check_choice("cache", name, KINDS)]
        self._folder = Path(folder) if folder is not None else None

    @property
    def folder(self) -> Path:
        """The cache's folder, created if needed (an OutputPathError names CONTEXTLENS_CACHE)."""
        return cache_dir(self.kind.name) if self._folder is None else output_dir(self._folder)

    @property
    def location(self) -> Path:
        """The cache's folder, not created."""
        return self._folder if self._folder is not None else cache_root() / self.kind.name

    @property
    def limit(self) -> int:
        """The bound in bytes: ``CONTEXTLENS_CACHE_LIMIT_<NAME>``, else the kind's default."""
        value = os.environ.get(self.kind.setting, "").strip()
        return parse_size(value, setting=self.kind.setting) if value else self.kind.default_limit

    # -- use and build ---------------------------------------------------------------------
    def use(self, entry: str | os.PathLike) -> Lease:
        """Hold ``entry`` (a name or a path in this cache) against eviction, and stamp it as
        used. Take the lease before checking the entry, keep it while reading."""
        path = self._path(entry)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)  # the lock file lives beside the entry
            file = _flock(_lock_file(path, "use"), shared=True, wait=True)
        except OSError as err:  # a read-only cache: nobody can evict from it either
            log.debug("no use lock for %s: %s", path, err)
            file = None
        _touch(path)
        return Lease(path, file)

    @contextlib.contextmanager
    def building(self, target: str | os.PathLike, *, rebuild: bool = False,
                 check: Callable[[Path], str | None] = check_marker) -> Iterator[Path | None]:
        """Yield None when ``target`` is good (``check(target)`` is None and not
        ``rebuild``), else a fresh temporary folder to build it in, renamed onto ``target``
        when the block ends without error (nothing is left behind when it raises). Builds
        of one entry wait for each other (its build lock); the cache is pruned after one."""
        target = self._path(target)
        output_dir(target.parent)
        if not rebuild and (problem := check(target)) is None:
            _touch(target)
            yield None
            return
        lock = _flock(_lock_file(target, "lock"), shared=False, wait=False)
        if lock is None:  # another process is building it (or no flock here): say why we wait
            with step(f"waiting for another process preparing {target}"):
                lock = _flock(_lock_file(target, "lock"), shared=False, wait=True)
        try:
            if not rebuild and (problem := check(target)) is None:  # built by another process meanwhile
                _touch(target)
                yield None
                return
            if target.exists() and not rebuild:
                log.info("rebuilding the cache entry %s: %s", target, problem)
            tmp = Path(tempfile.mkdtemp(prefix=f".build.{target.name}.", dir=target.parent))
            try:
                yield tmp
                os.chmod(tmp, 0o755)  # mkdtemp makes it private; a cache is shared
                self._discard(target)
                os.replace(tmp, target)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        finally:
            if lock is not None:
                lock.close()
        self.prune(keep=[target])

    def stored(self, target: str | os.PathLike) -> None:
        """Note that ``target`` (a file entry written atomically, or files added to a
        folder entry) was just written: stamp it and prune the cache."""
        target = self._path(target)
        _touch(target)
        self.prune(keep=[target])

    # -- eviction ------------------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        """The entries, least recently used first."""
        folder = self.location
        if not folder.is_dir():
            return []
        found = []
        for path in folder.iterdir():
            if path.name.startswith("."):
                continue  # locks, builds in progress, removals in progress
            with contextlib.suppress(OSError):
                found.append(Entry(path, _size(path), path.lstat().st_mtime))
        return sorted(found, key=lambda e: (e.last_used, e.name))

    def in_use(self, entry: str | os.PathLike) -> bool:
        """Whether another process builds or uses ``entry`` now (a lock of it is held)."""
        path = self._path(entry)
        for role in ("lock", "use"):
            probe = _flock(_lock_file(path, role), shared=False, wait=False, create=False)
            if probe is not None:
                probe.close()
            elif _lock_file(path, role).exists():
                return True
        return False

    def prune(self, *, keep: Iterable[str | os.PathLike] = (), limit: int | None = None) -> list[Path]:
        """Remove the least recently used entries until the cache holds at most ``limit``
        bytes (default :attr:`limit`); ``keep`` and entries in use stay, and so do entries
        on a system without ``flock``. Leftovers of builds and removals that crashed go
        too. Returns the entries removed."""
        limit = self.limit if limit is None else limit
        kept = {self._path(k) for k in keep}
        self._sweep()
        found = self.entries()
        total = sum(e.bytes for e in found)
        removed = []
        for entry in found:
            if total <= limit:
                break
            if entry.path not in kept and self._evict(entry.path):
                total -= entry.bytes
                removed.append(entry.path)
        if removed:
            log.info("%s cache: removed %d least recently used entr%s; %.1f MB kept (limit %.1f MB, %s)",
                     self.kind.name, len(removed), "y" if len(removed) == 1 else "ies", total / 1e6,
                     limit / 1e6, self.kind.setting)
        return removed

    def clear(self) -> Cleared:
        """Remove every entry not in use."""
        self._sweep()
        removed, freed, kept = 0, 0, []
        for entry in self.entries():
            if self._evict(entry.path):
                removed, freed = removed + 1, freed + entry.bytes
            else:
                kept.append(entry.name)
        return Cleared(self.kind.name, str(self.location), removed, freed, tuple(kept))

    def info(self) -> CacheInfo:
        found = self.entries()
        return CacheInfo(self.kind.name, self.kind.what, str(self.location), len(found),
                         sum(e.bytes for e in found), self.limit, self.kind.setting,
                         sum(self.in_use(e.path) for e in found))

    # -- internals -----------------------------------------------------------------------------
    def _path(self, entry: str | os.PathLike) -> Path:
        path = Path(entry)
        return path if path.is_absolute() or len(path.parts) > 1 else self.location / path

    def _evict(self, entry: Path) -> bool:
        """Remove ``entry`` unless a process builds or uses it; True when it is gone."""
        try:
            return self._evict_locked(entry)
        except OSError as err:  # a read-only cache, a file of another user: it stays
            log.info("cannot remove the cache entry %s: %s", entry, err)
            return False

    def _evict_locked(self, entry: Path) -> bool:
        build = _flock(_lock_file(entry, "lock"), shared=False, wait=False)
        if build is None:
            return False
        try:
            use = _flock(_lock_file(entry, "use"), shared=False, wait=False)
            if use is None:
                return False
            try:
                self._discard(entry)
                for role in ("lock", "use"):  # removed while held: a waiter locks a new file
                    with contextlib.suppress(OSError):
                        _lock_file(entry, role).unlink()
            finally:
                use.close()
        finally:
            build.close()
        return not entry.exists()

    @staticmethod
    def _discard(entry: Path) -> None:
        """Move ``entry`` out of the way at once (a rename), then delete it."""
        if not entry.exists() and not entry.is_symlink():
            return
        gone = Path(tempfile.mkdtemp(prefix=".removed.", dir=entry.parent))
        os.replace(entry, gone / entry.name)
        shutil.rmtree(gone, ignore_errors=True)

    def _sweep(self) -> None:
        """Delete what crashed builds and removals left: ``.removed.*`` folders, and
        ``.build.E.*`` folders whose build lock is free."""
        folder = self.location
        if not folder.is_dir():
            return
        for path in folder.iterdir():
            if path.name.startswith(".removed."):
                shutil.rmtree(path, ignore_errors=True)
            elif path.name.startswith(".build.") and path.is_dir():
                owner = folder / path.name[len(".build."):].rsplit(".", 1)[0]
                lock = _flock(_lock_file(owner, "lock"), shared=False, wait=False, create=False)
                if lock is not None or not _lock_file(owner, "lock").exists():
                    shutil.rmtree(path, ignore_errors=True)
                if lock is not None:
                    lock.close()


def lease_for(path: str | os.PathLike) -> Lease:
    """A lease on ``path`` when it is an entry of one of the caches in the cache root, else
    an empty one (a user's own model folder gets no lock files beside it)."""
    path = Path(path)
    root = cache_root()
    for name in KINDS:
        with contextlib.suppress(OSError):
            if path.parent.resolve() == (root / name).resolve():
                return DiskCache(name).use(path)
    return Lease(path)


def cache_info(names: Iterable[str] | None = None) -> list[CacheInfo]:
    """Each cache (default: every kind): entries, bytes, bound, location, entries in use."""
    return [DiskCache(n).info() for n in (names if names is not None else KINDS)]


def clear_caches(names: Iterable[str] | None = None) -> list[Cleared]:
    """Remove every entry not in use from the caches named (default: all)."""
    return [DiskCache(n).clear() for n in (names if names is not None else KINDS)]
