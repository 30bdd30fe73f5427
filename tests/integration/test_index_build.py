"""Building, resuming and reading a usage index with a tiny random-weight BERT (no download):
a build killed mid-way (SIGKILL) and re-run equals a clean build; readers search while a
build appends; bad input; the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from tests.missing import need

need("lancedb")
torch = need("torch")
transformers = need("transformers")

from contextlens.errors import FileFormatError, InputError  # noqa: E402
from contextlens.index import build_index, index_stats, induce_senses, like_usage, open_store, search_usages  # noqa: E402
from contextlens.index.build import make_index_encoder  # noqa: E402
from contextlens.index.store import IndexMismatchError, open_progress_rows  # noqa: E402
from tests.integration.tiny_models import tiny_bert  # noqa: E402

WORDS = ["bank", "spring", "river"]
CHUNK = 10


def make_corpus(root, n=120):
    rng = np.random.default_rng(0)
    fill = "the a of money loan water mud we sat on it by far near old new green cold".split()
    lines = []
    for _ in range(n):
        words = list(rng.choice(fill, size=rng.integers(3, 14)))
        for w in rng.choice(WORDS + ["Bank", "banks"], size=rng.integers(0, 3)):
            words.insert(int(rng.integers(0, len(words) + 1)), str(w))
        lines.append(" ".join(words) + " .")
    root.mkdir(parents=True, exist_ok=True)
    (root / "a.txt").write_text("\n".join(lines[: n // 2]) + "\n")
    (root / "b.txt").write_text("\n".join(lines[n // 2:]) + "\n")
    return root


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("index")
    model = tiny_bert(root)
    corpus = make_corpus(root / "corpus")
    encoder = make_index_encoder(str(model), [1, 2])
    clean = root / "clean"
    result = build_index(corpus, clean, WORDS, model=str(model), layers=[1, 2], chunk_size=CHUNK,
                         encoder=encoder)
    return {"root": root, "model": str(model), "corpus": corpus, "encoder": encoder, "clean": clean,
            "result": result}


def usages(db):
    store = open_store(db)
    table = store.table.search().select(["usage_id", "word", "v2"]).limit(None).to_arrow().sort_by("usage_id")
    ids = table.column("usage_id").to_pylist()
    x = table.column("v2").combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(len(ids), -1)
    return ids, x.astype(np.float32)


CHILD = textwrap.dedent("""
    import os, signal, sys, time
    from contextlens.index import build_index
    from contextlens.index.store import UsageStore
    mode, corpus, db, model = sys.argv[1:5]
    if mode == "before-commit":  # die after chunk 3's usages are written, before its checkpoint
        commit, calls = UsageStore.commit, []
        def dying_commit(self, *a, **k):
            calls.append(1)
            if len(calls) == 3:
                os.kill(os.getpid(), signal.SIGKILL)
            return commit(self, *a, **k)
        UsageStore.commit = dying_commit
    build_index(corpus, db, ["bank", "spring", "river"], model=model, layers=[1, 2], chunk_size=CHUNK,
                progress=lambda s, u: time.sleep(float(os.environ.get("SLOW", "0"))))
""").replace("CHUNK", str(CHUNK))


def run_child(mode, setup, db, slow=0.0):
    env = {**os.environ, "SLOW": str(slow)}
    return subprocess.Popen([sys.executable, "-c", CHILD, mode, str(setup["corpus"]), str(db),
                             setup["model"]],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_clean_build(setup):
    r = setup["result"]
    assert r.sentences == 120 and r.usages > 50 and not r.missing_words
    assert set(r.words) == set(WORDS)
    ids, x = usages(setup["clean"])
    assert len(ids) == len(set(ids)) == r.usages and x.shape == (r.usages, 32)
    stats = index_stats(setup["clean"])
    assert stats["complete"] and stats["model"] == setup["model"] and stats["layers"] == [1, 2]
    assert stats["dtype"] == "float16" and stats["bytes_per_usage"] > 0
    # a re-run of a complete build does nothing
    again = build_index(setup["corpus"], setup["clean"], WORDS, model=setup["model"], layers=[1, 2],
                        chunk_size=CHUNK, encoder=setup["encoder"])
    assert again.already_complete and again.usages == r.usages


def resume_and_compare(setup, db):
    point = open_store(db).checkpoint()
    assert not point["done"] and 0 <= point["chunk"] < 11
    resumed = build_index(setup["corpus"], db, WORDS, model=setup["model"], layers=[1, 2], chunk_size=CHUNK,
                          encoder=setup["encoder"])
    assert resumed.resumed_at == point["sentences_done"] > 0
    ids, x = usages(db)
    clean_ids, clean_x = usages(setup["clean"])
    assert ids == clean_ids and len(ids) == len(set(ids))
    np.testing.assert_allclose(x, clean_x, atol=2e-3, rtol=2e-3)


def test_killed_between_write_and_checkpoint_resumes_to_the_clean_result(setup, tmp_path):
    db = tmp_path / "db"
    child = run_child("before-commit", setup, db)
    child.wait(120)
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()[-2000:]
    assert open_store(db).count() > open_store(db).checkpoint()["usages_done"]  # uncommitted rows are there
    resume_and_compare(setup, db)


def test_readers_search_while_a_build_appends_then_it_is_killed_and_resumed(setup, tmp_path):
    db = tmp_path / "db"
    child = run_child("timed", setup, db, slow=0.25)
    seen, query = [], np.ones(32, dtype=np.float32)
    deadline = time.time() + 120
    while time.time() < deadline and child.poll() is None:
        if open_progress_rows(db) > 0:  # the first chunk is committed: both tables are there
            store = open_store(db)  # a reader in this process while the child appends
            seen.append(store.count())
            hits = store.search(query, word="bank", k=3)
            assert len(hits) <= 3 and len({h["usage_id"] for h in hits}) == len(hits)
            if store.checkpoint()["chunk"] >= 5:
                break
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)  # from outside, at whatever point the build is
    child.wait(60)
    assert child.returncode == -signal.SIGKILL, child.stderr.read().decode()[-2000:]
    assert seen == sorted(seen) and any(0 < n < setup["result"].usages for n in seen)
    resume_and_compare(setup, db)


def test_an_index_still_being_created_says_so(tmp_path):
    import lancedb
    import pyarrow as pa

    db = tmp_path / "db"  # what a reader meets between the build's two create_table calls
    lancedb.connect(str(db)).create_table("progress", schema=pa.schema([pa.field("chunk", pa.int64())]))
    with pytest.raises(FileFormatError, match="being created.*wait a moment"):
        open_store(db)


def test_search_senses_and_model_mismatch(setup):
    db, enc = setup["clean"], setup["encoder"][0]
    out = search_usages(db, "We sat on the bank of the river.", "bank", k=4, encoder=enc)
    sims = [r["similarity"] for r in out["results"]]
    assert len(sims) == 4 and sims == sorted(sims, reverse=True) and all(r["word"] == "bank"
                                                                         for r in out["results"])
    assert {"sentence", "similarity", "doc", "usage_id"} <= set(out["results"][0])
    like = like_usage(db, out["results"][0]["usage_id"], k=3)
    assert out["results"][0]["usage_id"] not in [r["usage_id"] for r in like["results"]]
    with pytest.raises(IndexMismatchError, match="built with model"):
        search_usages(db, "the bank", "bank", model="minilm")
    with pytest.raises(InputError, match="not a target word"):
        search_usages(db, "the cat", "cat", encoder=enc)
    senses = induce_senses(db, "bank", k=2)
    assert senses["k"] == 2 and sum(s["size"] for s in senses["senses"]) == senses["n_usages"]
    assert all(len(s["typical"]) >= 1 for s in senses["senses"])


def test_bad_input(setup, tmp_path):
    corpus = tmp_path / "bad"
    corpus.mkdir()
    (corpus / "a.txt").write_bytes(b"the bank is near\n\xff\xfe broken bank\nspring water\n")
    (corpus / "empty.txt").write_text("")
    r = build_index(corpus, tmp_path / "db", ["bank", "spring", "zyzzyva"], model=setup["model"],
                    layers=[1, 2], encoder=setup["encoder"])
    assert r.usages == 2 and r.missing_words == ["zyzzyva"]
    assert r.n_skipped_lines == 1 and r.skipped_lines == [(str(corpus / "a.txt"), 2)]
    with pytest.raises(IndexMismatchError, match="dtype"):
        build_index(corpus, tmp_path / "db", ["bank", "spring", "zyzzyva"], model=setup["model"],
                    layers=[1, 2], dtype="float32", encoder=setup["encoder"])
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(FileFormatError, match="not a contextlens usage index"):
        build_index(corpus, foreign, ["bank"], model=setup["model"], encoder=setup["encoder"])
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]


def test_cli_json(setup, tmp_path):
    import typer
    from typer.testing import CliRunner

    from contextlens.cli import index

    app = typer.Typer()
    index.register(app)

    @app.command()
    def other() -> None:  # a second command keeps `index` a sub-group
        """Unused."""

    runner = CliRunner()
    db = tmp_path / "db"
    res = runner.invoke(app, ["index", "build", str(setup["corpus"]), "--db", str(db), "--words",
                              "bank,spring", "--model", setup["model"], "--layers", "1,2", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["usages"] > 0
    res = runner.invoke(app, ["index", "search", "--db", str(db), "the bank of the river", "--word", "bank",
                              "-k", "3", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["results"]
    assert len(rows) == 3 and {"sentence", "similarity", "doc", "usage_id"} <= set(rows[0])
    queries = tmp_path / "queries.tsv"
    queries.write_text("# two searches, one model load\nbank\tthe bank of the river\nspring\tin spring we "
                       "sat\n")
    res = runner.invoke(app, ["index", "search", "--db", str(db), "--queries", str(queries), "-k", "2",
                              "--json"])
    assert res.exit_code == 0, res.output
    found = json.loads(res.stdout)["searches"]
    assert [(s["line"], s["word"], len(s["results"])) for s in found] == [(2, "bank", 2), (3, "spring", 2)]
    assert found[0]["results"] == rows[:2]  # the same search, in a batch
    queries.write_text("bank the bank without a tab\n")
    res = runner.invoke(app, ["index", "search", "--db", str(db), "--queries", str(queries)])
    assert res.exit_code == 2 and "word<TAB>sentence" in res.output
    res = runner.invoke(app, ["index", "stats", "--db", str(db), "--json"])
    assert json.loads(res.stdout)["words"].keys() == {"bank", "spring"}
    res = runner.invoke(app, ["index", "senses", "bank", "--db", str(db), "--k", "2", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["k"] == 2
    res = runner.invoke(app, ["index", "search", "--db", str(tmp_path / "nowhere"), "x bank", "--word",
                              "bank"])
    assert res.exit_code == 2 and "no usage index there" in res.output
    res = runner.invoke(app, ["index", "build", str(setup["corpus"]), "--db", str(db)])
    assert res.exit_code == 2 and "exactly one of" in res.output
