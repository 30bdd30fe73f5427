"""The one policy of every on-disk cache: least recently used entries go past the bound,
an entry another process builds or uses never does, the bound is a setting, and builds
are checked by content (a stat stamp saves hashing an unchanged file again)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from contextlens import build_marker, disk_cache
from contextlens.build_marker import MARKER, VERIFIED, check_marker, write_marker
from contextlens.disk_cache import KINDS, DiskCache, parse_size
from contextlens.errors import InputError, UnknownOptionError


def entry(cache: DiskCache, name: str, size: int, used: float) -> Path:
    """A folder entry of ``size`` bytes, last used at ``used`` (seconds since the epoch)."""
    path = cache.folder / name
    path.mkdir()
    (path / "data.bin").write_bytes(b"x" * size)
    os.utime(path, (used, used))
    return path


def names(cache: DiskCache) -> list[str]:
    return [e.name for e in cache.entries()]


@pytest.fixture
def cache(tmp_path) -> DiskCache:
    return DiskCache("neighbours", tmp_path / "neighbours")


def test_least_recently_used_go_first_until_the_bound_holds(cache):
    for i, name in enumerate(["c", "a", "d", "b"]):  # used in this order
        entry(cache, name, 100, used=1000 + i)
    assert names(cache) == ["c", "a", "d", "b"]
    removed = cache.prune(limit=250)
    assert [p.name for p in removed] == ["c", "a"] and names(cache) == ["d", "b"]
    cache.use("d").release()  # a use makes it the most recent
    cache.prune(limit=150)
    assert names(cache) == ["d"]
    assert not [p for p in cache.folder.iterdir() if p.name.startswith(".removed")]


def test_the_entry_kept_stays_even_when_it_alone_is_over_the_bound(cache):
    old, new = entry(cache, "old", 100, used=1), entry(cache, "new", 500, used=2)
    assert cache.prune(keep=[new], limit=10) == [old] and names(cache) == ["new"]


HOLD = textwrap.dedent("""
    import sys, time
    from contextlens.disk_cache import DiskCache
    cache = DiskCache("neighbours", sys.argv[1])
    lease = cache.use(sys.argv[2])
    print("held", flush=True)
    sys.stdin.read()  # until the test closes our stdin
""")


def test_an_entry_another_process_uses_is_never_evicted(cache):
    used = entry(cache, "used", 100, used=1)
    entry(cache, "idle", 100, used=2)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(cache.folder), "used"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert holder.stdout.readline().strip() == "held"
        os.utime(used, (1, 1))  # the use stamped it; make it the oldest again
        assert cache.in_use("used") and not cache.in_use("idle")
        assert [p.name for p in cache.prune(limit=0)] == ["idle"]
        cleared = cache.clear()
        assert cleared.removed == 0 and cleared.kept_in_use == ("used",) and names(cache) == ["used"]
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert not cache.in_use("used")
    assert [p.name for p in cache.prune(limit=0)] == ["used"] and names(cache) == []
    assert [p.name for p in cache.folder.iterdir()] == []  # its lock files went with it


def test_an_entry_being_built_is_never_evicted(cache):
    entry(cache, "building", 100, used=1)
    build_lock = disk_cache._flock(cache.folder / ".building.lock", shared=False, wait=True)
    try:
        assert cache.prune(limit=0) == [] and names(cache) == ["building"]
    finally:
        build_lock.close()
    assert [p.name for p in cache.prune(limit=0)] == ["building"]


def test_the_bound_is_a_setting_with_units(cache, monkeypatch):
    assert cache.limit == KINDS["neighbours"].default_limit
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_NEIGHBOURS", "250 B")
    assert cache.limit == 250
    for i in range(5):
        entry(cache, f"e{i}", 100, used=i)
    cache.prune()
    assert names(cache) == ["e3", "e4"]
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_NEIGHBOURS", "-1")
    with pytest.raises(InputError, match="CONTEXTLENS_CACHE_LIMIT_NEIGHBOURS='-1' is not a size"):
        cache.prune()


@pytest.mark.parametrize("text, want", [("0", 0), ("123", 123), ("1kB", 1000), ("1 KiB", 1024),
                                        ("2.5G", 2_500_000_000), ("1tib", 2**40), (".5MiB", 2**19)])
def test_sizes(text, want):
    assert parse_size(text) == want


@pytest.mark.parametrize("text", ["", "GB", "1 XB", "1e3", "nan", "inf", "1,000", "99999999999 TiB"])
def test_bad_sizes(text):
    with pytest.raises(InputError, match="is not a size; give bytes"):
        parse_size(text, setting="X")


def test_an_unknown_cache_is_named_with_the_valid_ones():
    with pytest.raises(UnknownOptionError, match="did you mean 'onnx'.*valid values: onnx, models"):
        DiskCache("onx")


def test_a_build_is_renamed_into_place_whole_and_prunes_the_others(cache, monkeypatch):
    entry(cache, "old", 100, used=1)
    monkeypatch.setenv("CONTEXTLENS_CACHE_LIMIT_NEIGHBOURS", "150")
    with pytest.raises(RuntimeError):
        with cache.building(cache.folder / "new") as tmp:
            (tmp / "half.bin").write_bytes(b"y" * 100)
            raise RuntimeError("the build failed")
    assert names(cache) == ["old"] and sorted(p.name for p in cache.folder.iterdir()) == [".new.lock", "old"]
    with cache.building(cache.folder / "new") as tmp:
        (tmp / "data.bin").write_bytes(b"y" * 100)
        write_marker(tmp, "test")
    assert names(cache) == ["new"] and check_marker(cache.folder / "new") is None
    with cache.building(cache.folder / "new") as tmp:
        assert tmp is None  # good: not built again


def test_leftovers_of_a_killed_build_are_swept(cache):
    (cache.folder / ".build.gone.abc123").mkdir()  # its builder was killed: no lock held
    (cache.folder / ".removed.xyz").mkdir()  # a removal that was killed
    busy = cache.folder / ".build.busy.def456"
    busy.mkdir()
    lock = disk_cache._flock(cache.folder / ".busy.lock", shared=False, wait=True)
    try:
        cache.prune()
        assert sorted(p.name for p in cache.folder.iterdir()) == [".build.busy.def456", ".busy.lock"]
    finally:
        lock.close()


def built(tmp_path: Path, files: dict[str, bytes]) -> Path:
    folder = tmp_path / "entry"
    folder.mkdir()
    for name, data in files.items():
        (folder / name).write_bytes(data)
    write_marker(folder, "test")
    return folder


def age(path: Path, seconds: float = 10) -> None:
    """Make a file's times older, as if written ``seconds`` ago (its ctime is now, though)."""
    t = time.time() - seconds
    os.utime(path, (t, t))


def test_the_marker_checks_content_and_hashes_an_unchanged_file_once(tmp_path, monkeypatch):
    folder = built(tmp_path, {"a.bin": b"a" * 1000, "b.bin": b"b" * 10})
    hashed = []
    real = build_marker._hash
    monkeypatch.setattr(build_marker, "_hash", lambda p: hashed.append(p.name) or real(p))
    monkeypatch.setattr(build_marker, "_SETTLED_NS", 0)  # file times vouch at once (no 2 s wait)
    assert check_marker(folder) is None and sorted(hashed) == ["a.bin", "b.bin"]
    hashed.clear()
    assert check_marker(folder) is None and hashed == []  # stamps match: nothing read
    with open(folder / "a.bin", "r+b") as f:  # same size, other bytes, old times put back
        f.seek(500)
        f.write(b"Z")
    age(folder / "a.bin")
    assert "a.bin changed since it was built (its SHA-256 differs)" in check_marker(folder)
    (folder / "a.bin").unlink()
    assert "a.bin is missing" in check_marker(folder)
    (folder / "a.bin").write_bytes(b"a" * 1000)
    assert check_marker(folder) is None
    (folder / "b.bin").write_bytes(b"b" * 11)
    assert "b.bin changed size" in check_marker(folder)


def test_fresh_file_times_do_not_vouch_for_content(tmp_path, monkeypatch):
    folder = built(tmp_path, {"a.bin": b"a" * 100})
    assert json.loads((folder / VERIFIED).read_text()) == {}  # just written: no stamp yet
    hashed = []
    real = build_marker._hash
    monkeypatch.setattr(build_marker, "_hash", lambda p: hashed.append(p.name) or real(p))
    assert check_marker(folder) is None and check_marker(folder) is None and hashed == ["a.bin", "a.bin"]


def test_a_marker_from_before_checksums_is_adopted_once(tmp_path):
    folder = built(tmp_path, {"a.bin": b"a" * 100})
    marker = json.loads((folder / MARKER).read_text())
    (folder / MARKER).write_text(json.dumps({"source": "old", "files": marker["files"]}))  # sizes only
    assert check_marker(folder) is None
    assert json.loads((folder / MARKER).read_text())["sha256"] == marker["sha256"]
    (folder / "a.bin").write_bytes(b"b" * 100)
    assert "SHA-256 differs" in check_marker(folder)
    (folder / MARKER).write_text(json.dumps({"source": "old", "files": {"a.bin": 99}}))
    assert "changed size" in check_marker(folder)


def test_info_and_clear_of_every_kind(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path))
    entry(DiskCache("onnx"), "bert-x", 300, used=1)
    (DiskCache("datasets").folder / "semcor-x.pickle").write_bytes(b"p" * 50)
    (tmp_path / "data").mkdir()  # the default data folder: not a cache, never touched
    (tmp_path / "data" / "wic.txt").write_text("keep me")
    info = {i.name: i for i in disk_cache.cache_info()}
    assert list(info) == list(KINDS)
    onnx = info["onnx"]
    assert (onnx.entries, onnx.bytes, onnx.location) == (1, 300, str(tmp_path / "onnx"))
    assert (info["datasets"].entries, info["datasets"].bytes) == (1, 50)
    assert info["encodings"].entries == 0 and not (tmp_path / "encodings").exists()  # info creates nothing
    assert info["onnx"].setting == "CONTEXTLENS_CACHE_LIMIT_ONNX" and info["onnx"].limit == 4 * 2**30
    (cleared,) = disk_cache.clear_caches(["onnx"])
    assert (cleared.removed, cleared.bytes_freed) == (1, 300) and DiskCache("datasets").entries()
    disk_cache.clear_caches()
    assert not DiskCache("datasets").entries() and (tmp_path / "data" / "wic.txt").read_text() == "keep me"


def test_a_lease_outside_the_caches_leaves_nothing_beside_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    own = tmp_path / "my-model"
    own.mkdir()
    with disk_cache.lease_for(own):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my-model"]
    inside = DiskCache("models").folder / "mpnet-1"
    inside.mkdir()
    with disk_cache.lease_for(inside):
        assert DiskCache("models").in_use("mpnet-1")
    assert not DiskCache("models").in_use("mpnet-1")
