"""Atomic output: an OS error on an output path is one clear OutputPathError naming the
path (never a traceback, never a half-written file), and a written file gets the mode a
plain open() would give it, or the mode of the file it replaces."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from contextlens.errors import ContextLensError, InputError, OutputPathError
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
        ("/dev/null/x.npz",
         "cannot write /dev/null/x.npz: /dev/null is a file, not a folder; choose another path"),
    ],
)
def test_system_paths_are_one_clear_error(where, says):
    with pytest.raises(OutputPathError) as info:
        EmbeddingTable(["a"], [[1.0]]).save(where)
    assert str(info.value) == says


def test_a_path_under_a_file_or_onto_a_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputPathError,
                       match=r"f/sub/t.npz: .*/f is a file, not a folder; choose another path"):
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
    with pytest.raises(OutputPathError,
                       match="file is a file, not a folder.*set CONTEXTLENS_CACHE to a folder"):
        cache_dir("models")
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    assert cache_dir("models") == tmp_path / "cache" / "models" and (tmp_path / "cache" / "models").is_dir()


# -- a killed run's temporary files are removed by the next write of the same output ----------
def test_a_leftover_of_a_killed_write_is_removed_by_the_next_write(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "t.npz"
    child = subprocess.run([sys.executable, "-c", (
        "import os, signal, sys\n"
        "from contextlens.files import atomic_output\n"
        "with atomic_output(sys.argv[1]) as tmp:\n"
        "    tmp.write_bytes(b'half a table')\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"), str(out)], env={**os.environ}, capture_output=True)
    assert child.returncode == -9, child.stderr.decode()
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(".t.npz.part-") and left[0].endswith(".npz")
    EmbeddingTable(["a"], [[1.0]]).save(out)
    assert [p.name for p in tmp_path.iterdir()] == ["t.npz"]


def test_a_temporary_file_being_written_is_never_removed(tmp_path):
    from contextlens.files import remove_leftovers

    out = tmp_path / "t.txt"
    with atomic_output(out) as tmp:
        tmp.write_text("busy")
        assert remove_leftovers(out) == [] and tmp.read_text() == "busy"  # its writer holds the lock
        with atomic_output(out) as second:  # another writer of the same output, at the same time
            second.write_text("second")
        assert tmp.exists() and out.read_text() == "second"
    assert out.read_text() == "busy" and [p.name for p in tmp_path.iterdir()] == ["t.txt"]
    other = tmp_path / ".u.txt.part-0123abcd.txt"  # another output's leftover is not this output's
    other.write_text("x")
    remove_leftovers(out)
    assert other.exists()


# -- an output that is an input is refused -----------------------------------------------------
@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "corpus.txt"
    path.write_text("the bank\n")
    return path


@pytest.mark.parametrize("link", ["same", "relative", "symlink", "hardlink"])
def test_an_output_that_is_the_input_file_is_refused(tmp_path, corpus, monkeypatch, link):
    from contextlens.files import check_outputs

    monkeypatch.chdir(tmp_path)
    out = {"same": corpus, "relative": Path("./sub/../corpus.txt"), "symlink": tmp_path / "s.txt",
           "hardlink": tmp_path / "h.txt"}[link]
    (tmp_path / "sub").mkdir()
    if link == "symlink":
        out.symlink_to(corpus)
    elif link == "hardlink":
        os.link(corpus, out)
    with pytest.raises(InputError,
                       match=r"^-o .* is the input CORPUS .*corpus.txt \(the same file\): writing it "
                                         "would destroy that input; choose another output path$"):
        check_outputs([("-o", out)], [("CORPUS", corpus)])
    assert corpus.read_text() == "the bank\n"


def test_files_of_an_input_folder_and_outputs_that_collide(tmp_path, corpus):
    from contextlens.files import check_outputs

    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    with pytest.raises(InputError,
                       match=r"config.json is a file of the input folder --model .*model: writing it"):
        check_outputs([("--plot", tmp_path / "model" / "config.json")], [("--model", tmp_path / "model")])
    with pytest.raises(InputError,
                       match=r"--db .*model is the input --model .*model \(the same folder\): writing "
                                         "into it would change that input; choose another folder"):
        check_outputs([("--db", tmp_path / "model")], [("--model", tmp_path / "model")])
    # a new file
    check_outputs([("--plot", tmp_path / "model" / "new.png")], [("--model", tmp_path / "model")])
    only_text = lambda label, folder: [corpus]  # noqa: E731 - a folder read for its text files only
    check_outputs([("-o", tmp_path / "model" / "config.json")], [("CORPUS", tmp_path)], files_of=only_text)
    with pytest.raises(InputError, match=r"--plot .*a.png and --html .*a.png name the same file"):
        check_outputs([("--plot", tmp_path / "a.png"), ("--html", tmp_path / "x" / ".." / "a.png")], [])
    check_outputs([("-o", corpus)], [("--sentences", tmp_path / "missing.txt")])  # left to its reader


# -- small input files --------------------------------------------------------------------------
@pytest.mark.parametrize(("path", "says"), [
    ("/dev/null",
     "/dev/null is not a regular file (a device, a pipe or a socket), so not a word list; give words"),
    ("/tmp", "/tmp is a folder, not a word list; give words"),
    ("/proc/self/mem", "/proc/self/mem: cannot be read (Input/output error); give words"),
    ("/no/such.txt", "/no/such.txt: no such word list; give words"),
    ("/dev/null/x.txt", "/dev/null/x.txt: cannot be read (Not a directory); give words"),
])
def test_an_input_that_is_not_a_readable_file_is_one_line_naming_it(path, says):
    from contextlens.files import read_text_file

    with pytest.raises(InputError) as info:
        read_text_file(path, "word list", "give words")
    assert str(info.value) == says


def test_a_small_input_file_drops_its_bom_and_names_the_offset_of_a_bad_byte(tmp_path):
    from contextlens.errors import TextDecodingError
    from contextlens.files import read_text_file

    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfbank\r\n")
    assert read_text_file(tmp_path / "w.txt") == "bank\r\n"
    (tmp_path / "w.txt").write_bytes(b"\xef\xbb\xbfcaf\xe9\n")
    with pytest.raises(TextDecodingError, match="not valid UTF-8 at byte offset 6"):
        read_text_file(tmp_path / "w.txt")


def test_library_entry_points_that_write_refuse_their_inputs(tmp_path, corpus):
    from contextlens.index.build import build_index

    with pytest.raises(InputError,
                       match=r"^db .* is the input corpus .* \(the same folder\): writing into it"):
        build_index(tmp_path, tmp_path, ["bank"])
    with pytest.raises(InputError, match=r"^db .* is the input corpus .* \(the same folder\)"):
        build_index([str(tmp_path)], tmp_path / ".", ["bank"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt"]
