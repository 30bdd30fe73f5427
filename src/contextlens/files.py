"""Small file helpers: atomic output (no half-written files) and cache locations."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["atomic_output", "cache_dir"]


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success.

    If the body raises, the temporary file is removed and ``path`` is untouched, so a
    failed run never leaves a half-written output behind.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> with atomic_output(out) as tmp:
    ...     _ = tmp.write_text("done")
    >>> out.read_text()
    'done'
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=suffix if suffix is not None else target.suffix,
        dir=target.parent,
    )
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def cache_dir(*parts: str) -> Path:
    """The contextlens cache directory (``CONTEXTLENS_CACHE`` or ``~/.cache/contextlens``)."""
    root = os.environ.get("CONTEXTLENS_CACHE") or Path.home() / ".cache" / "contextlens"
    path = Path(root, *parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
