"""Atomic output: an OS error on an output path is one clear OutputPathError naming the
path (never a traceback, never a half-written file), and a written file gets the mode a
plain open() would give it, or the mode of the file it replaces."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from contextlens.errors import ContextLensError, OutputPathError
from contextlens.files import atomic_output, output_dir
from contextlens.vectors import EmbeddingTable


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_new_file_gets_the_umask_mode_not_0600(tmp_path, umask_022):
    out = tmp_path / "t.npz"
    EmbeddingTable(["a"], [[1.0]]).save(out)
    assert mode(out) == 0o644
    os.umask(0o027)
    with atomic_output(tmp_path / "r.txt") as tmp:
        tmp.write_text("x")
    assert mode(tmp_path / "r.txt") == 0o640


@pytest.mark.parametrize("old_mode", [0o644, 0o600, 0o664, 0o755])
def test_an_overwritten_file_keeps_its_mode(tmp_path, umask_022, old_mode):
    out = tmp_path / "t.txt"
    out.write_text("old")
    out.chmod(old_mode)
    with atomic_output(out) as tmp:
        tmp.write_text("new")
    assert out.read_text() == "new" and mode(out) == old_mode


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("/proc/x.npz", "cannot write /proc/x.npz: /proc does not accept new files; choose another folder"),
        ("/dev/null/x.npz", "cannot write /dev/null/x.npz: /dev/null is a file, not a folder; choose another path"),
    ],
)
def test_system_paths_are_one_clear_error(where, says):
    with pytest.raises(OutputPathError) as info:
        EmbeddingTable(["a"], [[1.0]]).save(where)
    assert str(info.value) == says


def test_a_path_under_a_file_or_onto_a_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputPathError, match=r"f/sub/t.npz: .*/f is a file, not a folder; choose another path"):
        EmbeddingTable(["a"], [[1.0]]).save(tmp_path / "f" / "sub" / "t.npz")
    (tmp_path / "d.npz").mkdir()
    with pytest.raises(OutputPathError, match=r"d.npz: it is a folder; give a file name"):
        EmbeddingTable(["a"], [[1.0]]).save(tmp_path / "d.npz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.npz", "f"]


@pytest.mark.parametrize(
    ("code", "says"),
    [
        (errno.EACCES, "permission denied; choose a folder you can write to"),
        (errno.EROFS, "the file system is read-only; choose a writable folder"),
    ],
)
def test_permission_and_read_only_at_creation(tmp_path, monkeypatch, code, says):
    real_open = os.open

    def refuse(path, flags, *args):
        if flags & os.O_CREAT:
            raise OSError(code, os.strerror(code), str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", refuse)  # tests run as root, who may write anywhere
    with pytest.raises(OutputPathError, match=f"cannot write {tmp_path / 't.npz'}: {says}"):
        EmbeddingTable(["a"], [[1.0]]).save(tmp_path / "t.npz")
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_while_writing_leaves_nothing_and_the_old_file_intact(tmp_path):
    out = tmp_path / "t.txt"
    out.write_text("old")
    with pytest.raises(OutputPathError, match="t.txt: the disk is full; free some space"):
        with atomic_output(out):
            raise OSError(errno.ENOSPC, "No space left on device")  # as np.savez on a full disk
    assert out.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["t.txt"]


def test_an_os_error_about_another_file_is_not_blamed_on_the_output(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        with atomic_output(tmp_path / "out.txt"):
            open(tmp_path / "missing-input.txt")  # noqa: SIM115 - the body reads an input that is not there
    assert not isinstance(info.value, ContextLensError)
    assert list(tmp_path.iterdir()) == []


def test_rename_failure_is_one_error(tmp_path, monkeypatch):
    def busy(src, dst):
        raise OSError(errno.EBUSY, "Device or resource busy", str(dst))

    monkeypatch.setattr(os, "replace", busy)
    with pytest.raises(OutputPathError, match="t.txt: Device or resource busy; choose another path"):
        with atomic_output(tmp_path / "t.txt") as tmp:
            tmp.write_text("x")
    assert list(tmp_path.iterdir()) == []


def test_output_dir_creates_or_refuses(tmp_path):
    assert output_dir(tmp_path / "a" / "b") == tmp_path / "a" / "b" and (tmp_path / "a" / "b").is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputPathError, match="it is a file, not a folder"):
        output_dir(tmp_path / "file")
    with pytest.raises(OutputPathError, match="file is a file, not a folder; choose another path"):
        output_dir(tmp_path / "file" / "db")


def test_a_cache_folder_that_cannot_be_made_names_the_variable(tmp_path, monkeypatch):
    from contextlens.files import cache_dir

    (tmp_path / "file").write_text("x")
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "file"))
    with pytest.raises(OutputPathError, match="file is a file, not a folder.*set CONTEXTLENS_CACHE to a folder"):
        cache_dir("models")
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    assert cache_dir("models") == tmp_path / "cache" / "models" and (tmp_path / "cache" / "models").is_dir()
