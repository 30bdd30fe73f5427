"""The build marker: what a cache entry's folder held when it was built, checked before use.

A folder entry is built whole (:meth:`contextlens.disk_cache.DiskCache.building`) with a
marker written last, :data:`MARKER`, that lists its files, their sizes and SHA-256
(:func:`write_marker`). :func:`check_marker` compares sizes always and contents by hash, but
skips the hash of a file whose size, mtime, ctime and inode are those it had when last
verified (kept in :data:`VERIFIED`; hashing took 0.14 s for minilm's 90 MB ONNX graph and
0.86 s for SmolLM2's 539 MB on this project's machine, about 630 MB/s; a stat takes
microseconds). An in-place overwrite changes the ctime, which no user can set back, so it is
always hashed.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> _ = (folder / "data.txt").write_text("1 2 3")
>>> write_marker(folder, "a doctest")
>>> check_marker(folder) is None
True
>>> _ = (folder / "data.txt").write_text("1 2 3 4")
>>> check_marker(folder).endswith("data.txt changed size (7 bytes, built with 5)")
True
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path

from .errors import InputError
from .files import atomic_output

__all__ = ["MARKER", "VERIFIED", "write_marker", "check_marker"]

MARKER = ".contextlens-build.json"  # written last into a folder entry: its files, sizes and SHA-256
VERIFIED = ".contextlens-verified.json"  # each file's (size, mtime, ctime, inode) when its hash last matched
_SETTLED_NS = 2 * 10**9  # a file's times must be this old before they vouch for its content


def _hash(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _stamp(st: os.stat_result) -> list[int] | None:
    """What identifies a file's state without reading it, or None while its times are too
    recent to tell a later write apart (file times tick coarsely: a write in the same tick
    would keep them; as in git's "racily clean" index entries)."""
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) < _SETTLED_NS:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def write_marker(folder: Path, source: str) -> None:
    """Record every file of ``folder`` (a build about to be renamed into place): its size
    and SHA-256 in :data:`MARKER`, written last, and its stamp as verified."""
    folder = Path(folder)
    files = [f for f in sorted(folder.rglob("*")) if f.is_file() and f.name not in (MARKER, VERIFIED)]
    names = [str(f.relative_to(folder)) for f in files]
    marker = {"source": source, "files": {n: f.stat().st_size for n, f in zip(names, files)},
              "sha256": {n: _hash(f) for n, f in zip(names, files)}}
    stamps = {n: _stamp(f.stat()) for n, f in zip(names, files)}
    (folder / VERIFIED).write_text(json.dumps({n: st for n, st in stamps.items() if st is not None}))
    (folder / MARKER).write_text(json.dumps(marker, indent=1))


def check_marker(folder: str | os.PathLike) -> str | None:
    """Why a folder entry is not what was built (no marker written last, a file it lists
    missing, of another size, or of other content), or None.

    A file whose stat matches its last verified stamp is not hashed again; one that was
    hashed and matched gets a new stamp (kept beside the marker when the folder can be
    written)."""
    folder = Path(folder)
    try:
        marker = json.loads((folder / MARKER).read_text())
        sizes, digests = dict(marker["files"]), marker.get("sha256")
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return f"{folder} has no complete build marker"
    if digests is None:  # written before checksums were recorded: adopted, see _adopt
        return _adopt(folder, marker)
    if not isinstance(digests, dict):
        return f"{folder / MARKER} is damaged"
    try:
        verified = json.loads((folder / VERIFIED).read_text())
    except (OSError, ValueError):
        verified = {}
    changed = False
    for name, size in sizes.items():
        file = folder / name
        try:
            st = file.stat()
        except OSError:
            return f"{file} is missing"
        if st.st_size != size:
            return f"{file} changed size ({st.st_size} bytes, built with {size})"
        stamp = _stamp(st)
        if stamp is not None and verified.get(name) == stamp:
            continue
        if _hash(file) != digests.get(name):
            return f"{file} changed since it was built (its SHA-256 differs)"
        if stamp is not None:
            verified[name], changed = stamp, True
    if changed:
        with contextlib.suppress(OSError, InputError):  # a read-only cache hashes again next time
            with atomic_output(folder / VERIFIED) as tmp:
                tmp.write_text(json.dumps(verified))
    return None


def _adopt(folder: Path, marker: dict) -> str | None:
    """A build whose marker lists sizes only (made before checksums were recorded): when
    every size matches, its files are hashed once and the hashes added to the marker, so
    a shared cache is not rebuilt (de-quantising SmolLM2 takes a minute) for a format
    change; from then on it is checked by content like any other."""
    digests = {}
    for name, size in marker["files"].items():
        file = folder / name
        try:
            if file.stat().st_size != size:
                return f"{file} changed size"
            digests[name] = _hash(file)
        except OSError:
            return f"{file} is missing"
    with contextlib.suppress(OSError, InputError):  # a read-only cache is adopted again next time
        with atomic_output(folder / MARKER) as tmp:
            tmp.write_text(json.dumps({**marker, "sha256": digests}, indent=1))
    return None
