"""numba's ``njit(cache=True)``, with the compiled code kept where a user can find it.

The cache goes to ``$NUMBA_CACHE_DIR`` when that is set (numba's own rule), else to
contextlens' ``numba`` cache (kind ``numba`` of :mod:`contextlens.disk_cache`, under
``CONTEXTLENS_CACHE`` or ``~/.cache/contextlens``), so an install whose package folder is
read-only still caches. If that folder cannot be created, numba chooses (the package's
``__pycache__``, else its user-wide cache folder); with no writable place at all the kernel
compiles in every process, with a warning. numba keeps one folder per source folder
(``kernel_<sha1 of its path>``: two installs never share one) whose entries are keyed by
the source file's content; in our cache each such folder is an entry of the one policy:
held in use while a process has the kernel, the least recently used going beyond
``CONTEXTLENS_CACHE_LIMIT_NUMBA``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numba
from numba.core import config as numba_config

from ...disk_cache import DiskCache, Lease
from ...files import cache_dir

__all__ = ["jit", "is_cached"]

log = logging.getLogger(__name__)
_held: dict[Path, Lease] = {}  # the folders of this process's kernels: in use while it lives


def jit(fn):
    """``numba.njit(cache=True, nogil=True)(fn)``, cached as the module docstring says."""
    saved = numba_config.CACHE_DIR
    ours = None
    try:
        if not saved:
            try:
                ours = numba_config.CACHE_DIR = str(cache_dir("numba"))
            except OSError:
                pass  # numba's own choice: next to this file, else its user-wide directory
        try:
            compiled = numba.njit(cache=True, nogil=True)(fn)
        except RuntimeError as exc:  # "cannot cache function ...: no locator available"
            log.warning("numba cannot cache the co-occurrence kernel (%s); it compiles in "
                        "every process. Set NUMBA_CACHE_DIR to a writable folder", exc)
            return numba.njit(nogil=True)(fn)
    finally:
        numba_config.CACHE_DIR = saved
    if ours is not None:
        _hold(Path(compiled.stats.cache_path), Path(ours))
    return compiled


def _hold(folder: Path, root: Path) -> None:
    """Hold ``folder`` (numba's folder for the kernel's source, in our cache ``root``) in
    use while this process lives, and prune the cache the first time."""
    if folder.parent != root or folder in _held:
        return
    cache = DiskCache("numba", root)
    _held[folder] = cache.use(folder)
    cache.prune(keep=list(_held))


def is_cached(fn) -> bool:
    """Whether numba's on-disk cache holds compiled code of the jitted ``fn`` for its
    current source (so its first call loads instead of compiling). numba has no public
    call for this: its cache index is read, and anything unexpected counts as not cached."""
    try:
        return bool(fn._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - numba's internals changed, or no cache: it compiles
        return False
