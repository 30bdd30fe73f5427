"""Small file helpers: atomic output (no half-written files), outputs that must not be
inputs, reading small input files, output folders, cache locations.

Every operating-system error on an output path (no such folder, a file where a folder
should be, no permission, a read-only or full disk, ``/proc``) becomes one
:class:`~contextlens.errors.OutputPathError` that names the path and says what to do,
never a traceback; an input file that is a folder, a device or unreadable
(``/proc/self/mem``) is one :class:`~contextlens.errors.InputError` naming it.

:func:`atomic_output` writes to ``.NAME.part-XXXXXXXX.SUFFIX`` beside the output, locked
(``fcntl.flock``) while it is written: a run killed mid-write (SIGKILL) leaves one behind,
and the next write of the same output removes every such file no live process holds.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from .errors import InputError, OutputPathError, TextDecodingError

__all__ = ["atomic_output", "output_dir", "output_error", "cache_dir", "cache_root", "check_outputs",
           "same_file", "check_input_file", "read_error", "read_text_file", "remove_leftovers"]

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
    """  # noqa: E501 (a doctest's expected output, printed whole)
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


def _temp_pattern(target: Path, suffix: str) -> re.Pattern:
    r"""The names :func:`atomic_output` gives its temporary files for ``target``.

    >>> bool(_temp_pattern(Path("out/t.npz"), ".npz").fullmatch(".t.npz.part-0123abcd.npz"))
    True
    """
    return re.compile(rf"\.{re.escape(target.name)}\.part-[0-9a-f]{{8}}{re.escape(suffix)}")


def _flock(fd: int, wait: bool) -> bool:
    """Lock the open file ``fd`` for this process (True), or say that another holds it
    (False); where there is no ``flock`` (Windows), never locked and never removable."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not on Linux or macOS
        return not wait
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


def _create_temp(target: Path, suffix: str) -> tuple[Path, int]:
    """A new empty file next to ``target``, created as ``open()`` would create one (mode
    ``0o666`` less the umask; ``tempfile.mkstemp`` makes it 0600), and an open descriptor
    holding its lock (:func:`remove_leftovers` leaves it alone while the lock is held)."""
    for _ in range(100):
        tmp = target.parent / f".{target.name}.part-{secrets.token_hex(4)}{suffix}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        _flock(fd, wait=True)
        try:  # another run's cleaning took it before the lock: take a new name
            if os.path.samestat(os.fstat(fd), os.stat(tmp)):
                return tmp, fd
        except FileNotFoundError:
            pass
        os.close(fd)
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target))  # pragma: no cover


def remove_leftovers(path: str | os.PathLike, suffix: str | None = None, *,
                     keep: Path | None = None) -> list[Path]:
    """Remove the temporary files of :func:`atomic_output` for ``path`` that no live process
    is writing (a run killed mid-write left them), except ``keep``; the ones removed.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / ".t.npz.part-0123abcd.npz").write_bytes(b"half")
    >>> [p.name for p in remove_leftovers(root / "t.npz")], sorted(root.iterdir())
    (['.t.npz.part-0123abcd.npz'], [])
    """
    target = Path(path)
    pattern = _temp_pattern(target, target.suffix if suffix is None else suffix)
    removed = []
    try:
        names = [e.name for e in os.scandir(target.parent)
                 if pattern.fullmatch(e.name) and (keep is None or e.name != keep.name)]
    except OSError:  # no folder yet, or not one we may list
        return removed
    for name in names:
        leftover = target.parent / name
        try:
            fd = os.open(leftover, os.O_RDONLY)
        except OSError:
            continue
        try:
            if _flock(fd, wait=False):  # nobody writes it
                leftover.unlink(missing_ok=True)
                removed.append(leftover)
        except OSError as err:
            log.debug("could not remove %s: %s", leftover, err)
        finally:
            os.close(fd)
    if removed:
        log.info("removed %d unfinished temporary file(s) of %s left by a stopped run", len(removed), target)
    return removed


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
    suffix = suffix if suffix is not None else target.suffix
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp, lock = _create_temp(target, suffix)
    except OSError as err:
        raise output_error(target, err) from None
    remove_leftovers(target, suffix, keep=tmp)  # a killed run's (another live writer's are locked)
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
        os.close(lock)


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
        raise OutputPathError(f"{err} (the cache folder: set CONTEXTLENS_CACHE to a folder you can "
                              "write)") from None


# -- outputs that are inputs ------------------------------------------------------------
def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` name one file or folder: the same path, a symbolic link to it
    or a hard link (one device and inode); a path that does not exist yet is compared by its
    resolved path.

    >>> import tempfile, pathlib, os
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "corpus.txt").write_text("the bank")
    >>> os.link(root / "corpus.txt", root / "hard.txt"); os.symlink(root / "corpus.txt", root / "soft.txt")
    >>> same_file(root / "hard.txt", root / "corpus.txt"), same_file(root / "soft.txt", root / "corpus.txt")
    (True, True)
    >>> same_file(root / "new.txt", root / "." / "new.txt"), same_file(root / "new.txt", root / "corpus.txt")
    (True, False)
    """
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):  # one does not exist (or holds a NUL): compare where they lead
        return os.path.realpath(a) == os.path.realpath(b)


def _all_files(folder: Path) -> Iterator[Path]:
    for root, _, names in os.walk(folder):
        for name in names:
            yield Path(root, name)


def check_outputs(
    outputs: Iterable[tuple[str, str | os.PathLike]], inputs: Iterable[tuple[str, str | os.PathLike]], *,
    files_of: Callable[[str, Path], Iterable[Path]] | None = None,
) -> None:
    """Refuse, in one line naming both, to write an output over an input: ``outputs`` and
    ``inputs`` are ``(label, path)`` pairs (the label as the user wrote it: ``--out``,
    ``CORPUS``); an output is refused when it is the same file or folder as an input
    (:func:`same_file`: a link or a hard link too), when it is one of the files an input
    folder is read from (``files_of(label, folder)``; default: every file under it), or when
    two outputs name one file. Inputs that do not exist are left to their reader.

    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "words.txt").write_text("bank")
    >>> check_outputs([("-o", root / "t.npz")], [("--words", root / "words.txt")])
    >>> check_outputs([("-o", root / "words.txt")], [("--words", root / "words.txt")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: -o .../words.txt is the input --words .../words.txt (the same file): writing it would destroy that input; choose another output path
    """  # noqa: E501 (a doctest's expected output, printed whole)
    outputs = [(label, Path(p)) for label, p in outputs]
    for i, (label, out) in enumerate(outputs):
        for other_label, other in outputs[:i]:
            if same_file(out, other):
                raise InputError(f"{other_label} {other} and {label} {out} name the same file; give each "
                                 "output its own path")
    written = [(label, out, os.stat(out)) for label, out in outputs if out.exists()]
    if not written:  # a path that does not exist yet is no existing input
        return
    for in_label, source in inputs:
        source = Path(source)
        try:
            is_dir = source.is_dir()
        except (OSError, ValueError):
            continue
        for label, out, _ in written:
            if same_file(out, source):
                raise InputError(f"{label} {out} is the input {in_label} {source} " + (
                    "(the same folder): writing into it would change that input; choose another folder"
                    if is_dir
                    else "(the same file): writing it would destroy that input; choose another output path"))
        if not is_dir:
            continue
        for member in (files_of or (lambda _, folder: _all_files(folder)))(in_label, source):
            for label, out, st in written:
                with contextlib.suppress(OSError):
                    if os.path.samestat(st, os.stat(member)):
                        alias = "" if os.path.realpath(out) == os.path.realpath(member) else f" ({member})"
                        raise InputError(f"{label} {out} is a file of the input folder {in_label} "
                                         f"{source}{alias}: writing it would destroy that input; choose "
                                         "another output path")


# -- small input files ------------------------------------------------------------------
def check_input_file(path: str | os.PathLike, what: str = "file", hint: str = "") -> os.stat_result:
    """``path``'s status if it is a regular file to read; else one :class:`InputError`
    naming it: missing, a folder, or not a regular file (``/dev/null``, a pipe: reading it
    gives nothing or never ends). ``what`` says what was expected, ``hint`` what to give.

    >>> check_input_file("/dev/null", "sets file", "give a JSON file")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: /dev/null is not a regular file (a device, a pipe or a socket), so not a sets file; give a JSON file
    """  # noqa: E501 (a doctest's expected output, printed whole)
    todo = f"; {hint}" if hint else ""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}{todo}") from None
    except (OSError, ValueError) as err:  # a file in the way of the folders, a name too long, a NUL
        raise InputError(f"{path}: cannot be read ({getattr(err, 'strerror', None) or err}){todo}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{path} is a folder, not a {what}{todo}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{path} is not a regular file (a device, a pipe or a socket), so not a "
                         f"{what}{todo}")
    return st


def read_error(path: str | os.PathLike, err: OSError, hint: str = "") -> InputError:
    """The one-line error for an OS error met while reading the input ``path`` (EIO from
    ``/proc/self/mem``, a failing disk or network file system), naming the path.

    >>> print(read_error("/proc/self/mem", OSError(5, "Input/output error")))
    /proc/self/mem: cannot be read (Input/output error)
    """
    if isinstance(err, PermissionError):
        return InputError(f"{path}: permission denied; check the file's read rights")
    return InputError(f"{path}: cannot be read ({err.strerror or err})" + (f"; {hint}" if hint else ""))


def read_text_file(path: str | os.PathLike, what: str = "file", hint: str = "") -> str:
    """The text of a small UTF-8 input file (a word list, sentences, pairs, sets), its BOM
    dropped: :func:`check_input_file`, then :func:`read_error` on an OS error while reading,
    a :class:`TextDecodingError` when it is not UTF-8. Split its lines with
    :func:`contextlens.text.split_lines`.
    """
    check_input_file(path, what, hint)
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise read_error(path, err, hint) from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise TextDecodingError(path, err.start + 3 * raw.startswith(b"\xef\xbb\xbf"), err.reason) from None
