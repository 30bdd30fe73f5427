"""Small file helpers: atomic output (no half-written files), output folders, cache locations.

Every operating-system error on an output path (no such folder, a file where a folder
should be, no permission, a read-only or full disk, ``/proc``) becomes one
:class:`~contextlens.errors.OutputPathError` that names the path and says what to do,
never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from .errors import OutputPathError

__all__ = ["atomic_output", "output_dir", "output_error", "cache_dir", "cache_root"]

log = logging.getLogger(__name__)

_WHAT_TO_DO = {
    errno.ENOENT: "its folder does not exist and cannot be created there; choose another path",
    errno.EISDIR: "it is a folder; give a file name",
    errno.EACCES: "permission denied; choose a folder you can write to",
    errno.EPERM: "the system does not allow writing there; choose a folder you can write to",
    errno.EROFS: "the file system is read-only; choose a writable folder",
    errno.ENOSPC: "the disk is full; free some space or choose another disk",
    errno.EDQUOT: "your disk quota is used up; free some space or choose another disk",
    errno.EFBIG: "the file is too large for that file system; choose another disk",
    errno.ENAMETOOLONG: "the name is too long; choose a shorter path",
}
_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO})


def output_error(path: str | os.PathLike, err: OSError) -> OutputPathError:
    """The one-line error for an OS error ``err`` met while writing ``path``.

    >>> print(output_error("/no/such/x.npz", FileNotFoundError(2, "No such file or directory")))
    cannot write /no/such/x.npz: its folder does not exist and cannot be created there; choose another path
    >>> print(output_error("/proc/x.npz", FileNotFoundError(2, "No such file or directory")))
    cannot write /proc/x.npz: /proc does not accept new files; choose another folder
    >>> print(output_error("/dev/null/x.npz", FileExistsError(17, "File exists")))
    cannot write /dev/null/x.npz: /dev/null is a file, not a folder; choose another path
    """
    todo = _WHAT_TO_DO.get(err.errno, f"{err.strerror or err}; choose another path")
    parent = Path(path).parent
    if err.errno == errno.ENOENT and parent.is_dir():  # /proc, /sys: folders that refuse new files
        todo = f"{parent} does not accept new files; choose another folder"
    elif err.errno in (errno.ENOTDIR, errno.EEXIST):
        blocker = next((p for p in Path(path).parents if p.exists() and not p.is_dir()), "part of the path")
        todo = f"{blocker} is a file, not a folder; choose another path"
    return OutputPathError(f"cannot write {path}: {todo}")


def output_dir(path: str | os.PathLike) -> Path:
    """``path`` as an existing folder to write into (created with its parents if needed);
    a file in the way, no permission or a read-only disk raise :class:`OutputPathError`.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> output_dir(root / "a" / "b").is_dir()
    True
    >>> (root / "f").write_text("x") and output_dir(root / "f")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.OutputPathError: cannot write ... is a file, not a folder; give a folder (a new or an existing one)
    """
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise OutputPathError(f"cannot write {folder}: it is a file, not a folder; give a folder "
                              "(a new or an existing one)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise output_error(folder, err) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise output_error(folder, PermissionError(errno.EACCES, "Permission denied"))
    return folder


def _create_temp(target: Path, suffix: str) -> Path:
    """A new empty file next to ``target``, created as ``open()`` would create one: mode
    ``0o666`` less the umask (``tempfile.mkstemp`` makes it 0600)."""
    for _ in range(100):
        tmp = target.parent / f".{target.name}.{secrets.token_hex(4)}{suffix}"
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target))  # pragma: no cover


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, suffix: str | None = None) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` only on success.

    If the body raises, the temporary file is removed and ``path`` is untouched, so a
    failed run never leaves a half-written output behind. The file gets the mode a plain
    ``open()`` would give it (``0o666`` less the umask), or, when it replaces a file, that
    file's mode. OS errors (see the module docstring) raise :class:`OutputPathError`.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "x.txt"
    >>> with atomic_output(out) as tmp:
    ...     _ = tmp.write_text("done")
    >>> out.read_text()
    'done'
    """
    target = Path(path)
    if target.is_dir():
        raise output_error(target, IsADirectoryError(errno.EISDIR, "Is a directory"))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = _create_temp(target, suffix if suffix is not None else target.suffix)
    except OSError as err:
        raise output_error(target, err) from None
    try:
        yield tmp
        _copy_mode(target, tmp)
        os.replace(tmp, target)
    except OSError as err:
        ours = str(err.filename) in (str(tmp), str(target)) if err.filename is not None else (
            err.errno in _WRITE_ERRNOS)
        if not ours:
            raise  # not about this output (e.g. an input the body reads)
        raise output_error(target, err) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _copy_mode(target: Path, tmp: Path) -> None:
    """Give ``tmp`` the mode of the file it replaces (a new file keeps the umask's mode)."""
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        return
    try:
        os.chmod(tmp, mode)
    except OSError as err:  # a file system without modes (vfat, some network mounts)
        log.debug("could not give %s the mode %o of %s: %s", tmp, mode, target, err)


def cache_root() -> Path:
    """Where the caches live: ``CONTEXTLENS_CACHE``, else ``~/.cache/contextlens`` (not created)."""
    return Path(os.environ.get("CONTEXTLENS_CACHE") or Path.home() / ".cache" / "contextlens")


def cache_dir(*parts: str) -> Path:
    """The contextlens cache directory (:func:`cache_root`), created if needed; one that
    cannot be created names CONTEXTLENS_CACHE in its error."""
    try:
        return output_dir(Path(cache_root(), *parts))
    except OutputPathError as err:
        raise OutputPathError(f"{err} (the cache folder: set CONTEXTLENS_CACHE to a folder you can write)") from None
