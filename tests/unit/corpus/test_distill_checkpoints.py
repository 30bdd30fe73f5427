"""Distillation checkpoints that cannot be resumed from (issue 21, items 6 and 9): a corrupt,
truncated, empty or foreign checkpoint is one InputError naming it and how to start over
(never ValueError, BadZipFile, KeyError 'params' or EOFError, which click shows as
"Aborted!"); a checkpoint write killed mid-way leaves a temporary file that the resumed run
removes; a run never writes over its corpus."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest

from contextlens.encoders.mixing import NeighbourAverage
from contextlens.errors import InputError
from contextlens.passes.distill import distill
from contextlens.vectors import EmbeddingTable
from tests.unit.corpus.test_distill import CORPUS, TABLE

ROOT = Path(__file__).resolve().parents[3]
KW = {"layers": "all", "pools": ["mean", "max"], "min_count": 1, "chunk_size": 8}


class Stop(Exception):
    pass


@pytest.fixture(scope="module")
def encoder():
    return NeighbourAverage(TABLE, alpha=0.5)


@pytest.fixture
def checkpoint(encoder, tmp_path) -> Path:
    """A real checkpoint, after 24 of the 60 sentences."""
    def stop(done, usages):
        if done >= 24:
            raise Stop

    with pytest.raises(Stop):
        distill(CORPUS, encoder, tmp_path / "t.npz", progress=stop, **KW)
    return tmp_path / "t.npz.distill.npz"


def _params_of(path: Path) -> dict:
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def _rewrite(path: Path, drop: str | None = None, **changes) -> None:
    arrays = {k: v for k, v in {**_params_of(path), **changes}.items() if k != drop}
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _huge_header(path: Path, member: str = "sum.npy") -> None:
    """Rewrite ``member``'s .npy header to claim a 10^6 x 10^6 array (8 TB), its data as it was."""
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = members[member]
    end = data.index(b"\n") + 1
    header = re.sub(r"'shape': \([^)]*\)", "'shape': (1000000, 1000000)", data[:end - 1].decode("latin1"))
    members[member] = header.encode("latin1") + b"\n" + data[end:]
    with zipfile.ZipFile(path, "w") as z:
        for name, body in members.items():
            z.writestr(name, body)


BAD = {
    "empty": lambda p: p.write_bytes(b""),
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "bit rot": lambda p: p.write_bytes(p.read_bytes()[:200] + bytes(64) + p.read_bytes()[264:]),
    "text": lambda p: p.write_text("not a checkpoint\n"),
    "an .npy": lambda p: np.save(open(p, "wb"), np.zeros(3)),  # noqa: SIM115 - closed when collected
    "a vectors table": lambda p: EmbeddingTable(["a"], [[1.0]]).save(p),
    "params not an object": lambda p: _rewrite(p, params=np.array("[1, 2]")),
    "params not JSON": lambda p: _rewrite(p, params=np.array("{oops")),
    "no done": lambda p: _rewrite(p, drop="done"),
    "done beyond the corpus": lambda p: _rewrite(p, done=np.array(10_000)),
    "a state of another shape": lambda p: _rewrite(p, sum=np.zeros((2, 3, 4))),
    "text arrays": lambda p: _rewrite(p, count=np.array(["x"] * 11)),
    "negative counts": lambda p: _rewrite(p, count=-np.ones(11, dtype=np.int64)),
    "a header claiming 8 TB": _huge_header,
    "params claiming 8 TB": lambda p: _huge_header(p, "params.npy"),
}


@pytest.mark.parametrize("damage", list(BAD))
def test_a_checkpoint_that_cannot_be_resumed_is_one_line_naming_it(encoder, checkpoint, damage):
    BAD[damage](checkpoint)
    with pytest.raises(InputError) as info:
        distill(CORPUS, encoder, checkpoint.parent / "t.npz", **KW)
    message = str(info.value)
    assert message.startswith(f"{checkpoint}: not a readable distillation checkpoint (")
    assert message.endswith(f"; delete it to start over from the first sentence (rm {checkpoint})")
    assert "\n" not in message and len(message) < 500
    checkpoint.unlink()  # as the message says: then the run starts over and ends
    assert distill(CORPUS, encoder, checkpoint.parent / "t.npz", **KW).resumed_at == 0


def test_a_folder_in_the_checkpoints_place_is_named(encoder, tmp_path):
    (tmp_path / "t.npz.distill.npz").mkdir()
    with pytest.raises(InputError,
                       match=r"t.npz.distill.npz is a folder, not a distillation checkpoint; delete it "
                                         r"to start over"):
        distill(CORPUS, encoder, tmp_path / "t.npz", **KW)


def test_the_checkpoint_of_another_run_still_says_so(encoder, checkpoint):
    with pytest.raises(InputError, match=r"t.npz.distill.npz is the checkpoint of another distillation \(it "
                                         r"differs in min_count\)"):
        distill(CORPUS, encoder, checkpoint.parent / "t.npz", **{**KW, "min_count": 2})


CHILD = textwrap.dedent("""
    import os, signal, sys
    import numpy as np
    from contextlens.passes.distill import distill
    from contextlens.encoders.mixing import NeighbourAverage
    from tests.unit.corpus.test_distill import CORPUS, TABLE
    from tests.unit.corpus.test_distill_checkpoints import KW
    real, calls = np.savez, []
    def dying_savez(f, **arrays):  # the third checkpoint: half written, then SIGKILL
        calls.append(1)
        if len(calls) == 3:
            f.write(b"PK\\x03\\x04 half a checkpoint")
            f.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        real(f, **arrays)
    np.savez = dying_savez
    distill(CORPUS, NeighbourAverage(TABLE, alpha=0.5), sys.argv[1], **KW)
""")


def test_a_checkpoint_write_killed_midway_is_cleaned_by_the_resumed_run(encoder, tmp_path):
    out = tmp_path / "t.npz"
    child = subprocess.run([sys.executable, "-c", CHILD, str(out)], cwd=ROOT, capture_output=True,
                           timeout=120,
                           env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])})
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left[0].startswith(".t.npz.distill.npz.part-") and left[1:] == ["t.npz.distill.npz"]
    resumed = distill(CORPUS, encoder, out, **KW)
    assert resumed.resumed_at == 16
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(p).name for p in resumed.paths.values())
    clean = distill(CORPUS, encoder, tmp_path / "clean" / "t.npz", **KW)
    for key, path in clean.paths.items():
        np.testing.assert_array_equal(EmbeddingTable.load(resumed.paths[key]).vectors,
                                      EmbeddingTable.load(path).vectors)


def test_a_run_never_writes_over_its_corpus(encoder, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(CORPUS) + "\n")
    before = corpus.read_bytes()
    with pytest.raises(InputError,
                       match=r"^out .*corpus.txt is the input corpus .*corpus.txt \(the same file\)"):
        distill(corpus, encoder, corpus, min_count=1)
    # a table path of a several-layer run, hard-linked to the corpus
    os.link(corpus, tmp_path / "t.layer1.npz")
    with pytest.raises(InputError, match=r"^out .*t.layer1.npz is the input corpus"):
        distill(tmp_path, encoder, tmp_path / "t.npz", layers="all", min_count=1)
    assert corpus.read_bytes() == before and json.dumps(sorted(p.name for p in tmp_path.iterdir()))
