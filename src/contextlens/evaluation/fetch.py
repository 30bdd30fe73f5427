"""Download a dataset from its official source into the data directory, atomically.

For each :class:`~contextlens.datasets.Source` of the dataset: download to a
temporary folder inside the data directory, check the sha256 (when one is known; else
compute it and log it as unverified), unpack a zip or tar archive there, find the folder
holding the expected files, then rename it into place. A failure at any step leaves the
data directory as it was (the temporary folder is removed). When the destination folder
already exists (a partial copy), the new files are moved in one by one, each with an
atomic rename, and files already there that the download does not have are kept.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path, PurePosixPath

from ..datasets.registry import DATASETS, Source, how_to_get
from ..errors import ContextLensError, check_choice
from ..files import atomic_output

__all__ = ["fetch", "DatasetFetchError", "ChecksumError", "sha256_of"]

log = logging.getLogger(__name__)
_CHUNK = 1 << 20


class DatasetFetchError(ContextLensError):
    """A dataset could not be downloaded or installed; nothing was written."""


class ChecksumError(DatasetFetchError):
    """The download's sha256 is not the expected one; nothing was written."""


def sha256_of(path: str | Path) -> str:
    """The hex sha256 of a file.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x"
    >>> _ = p.write_bytes(b"abc")
    >>> sha256_of(p)[:16]
    'ba7816bf8f01cfea'
    """
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _by_hand(src: Source, root: Path) -> str:
    what = f"these files exist: {', '.join(str(root / src.dest / f) for f in src.files)}" if src.files \
        else f"it is saved as {root / src.dest}"
    return f"download {src.url} by hand (on a machine that is online) and unpack it so that {what}"


def _download(src: Source, out: Path, root: Path, timeout: float) -> str:
    """Stream ``src.url`` into ``out``; return the sha256 of the bytes received."""
    h, size = hashlib.sha256(), 0
    request = urllib.request.Request(src.url, headers={"User-Agent": "contextlens-data-fetch"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp, open(out, "wb") as f:
            expected = resp.headers.get("Content-Length")
            for block in iter(lambda: resp.read(_CHUNK), b""):
                h.update(block)
                f.write(block)
                size += len(block)
    except urllib.error.HTTPError as e:
        raise DatasetFetchError(f"{src.url}: the server answered {e.code} {e.reason}; check the URL (--url) "
                                f"or {_by_hand(src, root)}") from None
    except (urllib.error.URLError, TimeoutError, ConnectionError) as e:
        reason = getattr(e, "reason", e)
        raise DatasetFetchError(f"cannot reach {src.url} ({reason}): this machine looks offline (or the host "
                                f"is down); {_by_hand(src, root)}") from None
    if expected is not None and expected.isdigit() and int(expected) != size:
        raise DatasetFetchError(f"{src.url}: the download stopped after {size} of {expected} bytes; "
                                "try again")
    return h.hexdigest()


def _safe_member(name: str) -> bool:
    p = PurePosixPath(name.replace("\\", "/"))
    return not p.is_absolute() and ".." not in p.parts


def _unpack(archive: Path, into: Path, url: str) -> bool:
    """Unpack a zip or tar archive into ``into``; False when ``archive`` is neither."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            bad = [n for n in z.namelist() if not _safe_member(n)]
            if bad:
                raise DatasetFetchError(f"{url}: the archive has unsafe member paths (e.g. {bad[0]!r}); not "
                                        "unpacked")
            z.extractall(into)
        return True
    if tarfile.is_tarfile(archive):
        with tarfile.open(archive) as t:
            members = t.getmembers()
            bad = [m.name for m in members if not _safe_member(m.name) or m.issym() or m.islnk() or m.isdev()]
            if bad:
                raise DatasetFetchError(f"{url}: the archive has unsafe members (e.g. {bad[0]!r}); not "
                                        "unpacked")
            keep = [m for m in members if m.isfile() or m.isdir()]
            if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4: refuse anything unsafe a second time
                t.extractall(into, members=keep, filter="data")
            else:
                t.extractall(into, members=keep)
        return True
    return False


def _content_dir(top: Path, src: Source) -> Path | None:
    """The first folder (breadth-first, sorted) holding every path of ``src.files``."""
    level = [top]
    while level:
        for d in level:
            if (src.dirname is None or d.name == src.dirname) and all((d / f).is_file() for f in src.files):
                return d
        level = sorted(c for d in level for c in d.iterdir() if c.is_dir() and not c.is_symlink())
    return None


def _move_into(content: Path, dest: Path) -> None:
    """Rename ``content`` to ``dest``, or merge it file by file into an existing ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    if not dest.exists():
        os.rename(content, dest)
        return
    if not dest.is_dir():
        raise DatasetFetchError(f"{dest} exists and is not a folder; move it away and fetch again")
    for path in sorted(content.rglob("*")):
        if path.is_file():
            target = dest / path.relative_to(content)
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(path, target)


def _install(src: Source, root: Path, timeout: float,
             report: Callable[[str, str, bool], None] | None) -> Path:
    dest = root / src.dest
    work = Path(tempfile.mkdtemp(prefix=".fetch-", dir=root))
    try:
        download = work / "download"
        log.info("downloading %s", src.url)
        digest = _download(src, download, root, timeout)
        if src.sha256 is not None and digest != src.sha256.lower():
            raise ChecksumError(f"{src.url}: sha256 {digest} is not the expected {src.sha256}; the file "
                                "changed or the download is corrupt; nothing was written")
        if src.sha256 is None:
            log.warning("%s: no published checksum to verify; sha256 of the download: %s", src.url, digest)
        if report is not None:
            report(src.url, digest, src.sha256 is not None)
        unpacked = work / "unpacked"
        unpacked.mkdir()
        if not _unpack(download, unpacked, src.url):
            if src.files:
                raise DatasetFetchError(f"{src.url} is not a zip or tar archive; expected one holding "
                                        f"{', '.join(src.files)}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(download, dest)
            return dest
        content = _content_dir(unpacked, src)
        if content is None:
            named = f" named {src.dirname!r}" if src.dirname else ""
            raise DatasetFetchError(f"{src.url}: the archive has no folder{named} holding "
                                    f"{', '.join(src.files)}; it is not the published layout (wrong --url?); "
                                    "nothing was written")
        if src.pack:
            with atomic_output(dest) as tmp, tarfile.open(tmp, "w:gz") as tar:
                tar.add(content, arcname=content.name)
        else:
            _move_into(content, dest)
        return dest
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fetch(
    name: str, root: str | Path, *, url: str | None = None, sha256: str | None = None, timeout: float = 30,
    report: Callable[[str, str, bool], None] | None = None,
) -> Path:
    """Download dataset ``name`` from its official source(s) into data directory ``root``.

    ``url`` replaces the URL of the dataset's first source (a mirror or a local copy)
    and only that source is fetched; ``sha256`` sets its expected checksum (with ``url``
    and no ``sha256`` nothing is verified: the checksum is computed, logged and passed to
    ``report``).
    ``report(url, sha256, verified)`` is called after each download. Returns the
    dataset's folder. Raises :class:`ChecksumError` on a checksum mismatch and
    :class:`DatasetFetchError` when offline, on an HTTP error or an archive that is not
    in the published layout; in each case nothing is written for that source (sources
    installed before it stay).
    """
    spec = DATASETS[check_choice("dataset", name, DATASETS)]
    sources = list(spec.sources)
    if not sources:
        raise DatasetFetchError(f"contextlens knows no download of {name}: {how_to_get(name)}")
    if url is not None or sha256 is not None:
        sources[0] = replace(sources[0], url=url or sources[0].url,
                             sha256=sha256 if (sha256 is not None or url is not None) else sources[0].sha256)
        if url is not None:
            sources = sources[:1]
    root = Path(root)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise DatasetFetchError(f"cannot create the data directory {root} ({e.strerror}); choose another one "
                                "with --data-dir or CONTEXTLENS_DATA") from None
    if not os.access(root, os.W_OK):
        raise DatasetFetchError(f"the data directory {root} is not writable; choose another one with "
                                "--data-dir or CONTEXTLENS_DATA")
    for src in sources:
        _install(src, root, timeout, report)
    return root / spec.folder
