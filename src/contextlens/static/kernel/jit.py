"""numba's ``njit(cache=True)``, with the compiled code kept where a user can find it.

The cache goes to ``$NUMBA_CACHE_DIR`` when that is set (numba's own rule), else to
contextlens' cache directory (``contextlens.files.cache_dir("numba")``: ``CONTEXTLENS_CACHE``
or ``~/.cache/contextlens``), so an install whose package folder is read-only still
caches. If that folder cannot be created, numba chooses (the package's ``__pycache__``,
else its user-wide cache folder); with no writable place at all the kernel compiles in
every process, with a warning. Entries are keyed by the source file's path and content,
so two installs, or an edited file, never share one.
"""

from __future__ import annotations

import logging

import numba
from numba.core import config as numba_config

from ...files import cache_dir

__all__ = ["jit", "is_cached"]

log = logging.getLogger(__name__)


def jit(fn):
    """``numba.njit(cache=True, nogil=True)(fn)``, cached as the module docstring says."""
    saved = numba_config.CACHE_DIR
    try:
        if not saved:
            try:
                numba_config.CACHE_DIR = str(cache_dir("numba"))
            except OSError:
                pass  # numba's own choice: next to this file, else its user-wide directory
        try:
            return numba.njit(cache=True, nogil=True)(fn)
        except RuntimeError as exc:  # "cannot cache function ...: no locator available"
            log.warning("numba cannot cache the co-occurrence kernel (%s); it compiles in "
                        "every process. Set NUMBA_CACHE_DIR to a writable folder", exc)
            return numba.njit(nogil=True)(fn)
    finally:
        numba_config.CACHE_DIR = saved


def is_cached(fn) -> bool:
    """Whether numba's on-disk cache holds compiled code of the jitted ``fn`` for its
    current source (so its first call loads instead of compiling). numba has no public
    call for this: its cache index is read, and anything unexpected counts as not cached."""
    try:
        return bool(fn._cache._cache_file._load_index())
    except Exception:  # noqa: BLE001 - numba's internals changed, or no cache: it compiles
        return False
