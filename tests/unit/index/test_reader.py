"""A complete local index is searched from its side index alone, LanceDB left unopened (issue 23:
``import lancedb`` is a second of CPU), with the same hits as through LanceDB; a stale,
compressed or older side index still goes through LanceDB."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests.missing import need

need("lancedb")
need("faiss")

from contextlens.index.reader import UsageReader, latest_version, open_store  # noqa: E402
from contextlens.index.store import _open_checked  # noqa: E402
from tests.unit.index.test_store import DIM, _clustered, _finished, _rows, _store  # noqa: E402


def _through_lance(db) -> UsageReader:
    return UsageReader(*_open_checked(db))


def _answers(reader: UsageReader, queries: np.ndarray) -> list:
    """Everything a search session asks of a reader, in order."""
    got = []
    for q in queries:
        for word in ("bank", "spring", None, "nothing"):
            for layer in reader.layers:
                got.append(reader.search(q, word=word, k=7, layer=layer))
    return got + [reader.count(), reader.count("bank"), reader.word_counts(), reader.search_structure(),
                  reader.has_ann_index(), reader.nprobes("bank"), reader.get("u3")["sentence"],
                  reader.get("u3", 4)["vector"].tolist(), reader.size_on_disk()]


@pytest.mark.parametrize("ann", [False, True], ids=["one-list", "inverted-lists-and-graph"])
def test_a_fresh_side_index_answers_alone_with_the_same_hits_as_through_lancedb(tmp_path, monkeypatch, ann):
    if ann:
        from contextlens.index import side_index

        monkeypatch.setattr(side_index, "ANN_MIN_ROWS", 500)  # 1,000 usages: 32 inverted lists and a graph
        monkeypatch.setattr(side_index, "EXACT_MAX_WORD_ROWS", 100)  # a word's search is approximate
    x = _clustered(1000 if ann else 300)
    _finished(tmp_path / "db", x, layers=(2, 4))
    reader = open_store(tmp_path / "db")
    assert not reader.lance_open and reader.side().lists == (32 if ann else 1)
    queries = np.random.default_rng(7).normal(size=(4, DIM)) + x[:4]
    alone = _answers(reader, queries)
    reader.refresh()  # the table has no newer version: still alone
    assert not reader.lance_open
    assert alone == _answers(_through_lance(tmp_path / "db"), queries)
    assert reader.params == _through_lance(tmp_path / "db").params
    assert reader.checkpoint()["done"] and reader.lance_open  # what the side index lacks opens LanceDB


def test_a_stale_side_index_goes_through_lancedb(tmp_path):
    store, _ = _finished(tmp_path / "db", _clustered(40, seed=5))
    alone = open_store(tmp_path / "db")
    assert not alone.lance_open and latest_version(tmp_path / "db") == alone.side().meta["table_version"]
    store.append(1, _rows(np.ones((2, DIM)), start=40, layers=(2,)))  # a newer table version
    reader = open_store(tmp_path / "db")
    assert reader.lance_open and reader.count() == 42  # through LanceDB, its side index rebuilt
    assert reader.search(np.ones(DIM), word="bank", k=1)[0]["usage_id"] == "u40"
    # the reader opened from the old side index sees the newer version at its next refresh
    alone.refresh()
    assert alone.lance_open and alone.count() == 42
    assert alone.search(np.ones(DIM), word="bank", k=1)[0]["usage_id"] == "u40"


def test_compressed_and_older_side_indexes_go_through_lancedb(tmp_path):
    x = _clustered(300, seed=6)
    store = _store(tmp_path / "pq", layers=(2,))
    store.params["side_index"] = "compressed"  # its vectors are re-ranked from the table
    store.append(0, _rows(x, layers=(2,)))
    store.commit(0, 300, 300)
    store.finish(0, 300)
    pq = open_store(tmp_path / "pq")
    assert pq.side().kind == "compressed" and pq.lance_open
    _finished(tmp_path / "old", x, layers=(2,))
    want = open_store(tmp_path / "old").search(x[0], word="bank", k=5)
    meta = next((tmp_path / "old").glob("search-v*")) / "meta.json"
    older = json.loads(meta.read_text())
    del older["index"]  # as written before side indexes kept the index's parameters
    meta.write_text(json.dumps(older))
    reader = open_store(tmp_path / "old")
    assert reader.lance_open and reader.search(x[0], word="bank", k=5) == want


CHILD = textwrap.dedent("""
    import json, sys
    import numpy as np
    from contextlens.index.reader import open_store
    reader = open_store(sys.argv[1])
    reader.refresh()
    hits = reader.search(np.ones(8), word="bank", k=3, layer=2)
    print(json.dumps({"lancedb": "lancedb" in sys.modules, "hits": [h["usage_id"] for h in hits]}))
""")


def _child(db) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", CHILD, str(db)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_a_search_of_a_fresh_index_does_not_import_lancedb(tmp_path):
    store, _ = _finished(tmp_path / "db", _clustered(100, seed=8), layers=(2,))
    fresh = _child(tmp_path / "db")
    assert fresh["lancedb"] is False
    assert fresh["hits"] == [h["usage_id"] for h in _through_lance(tmp_path / "db").search(
        np.ones(DIM), word="bank", k=3, layer=2)]
    store.append(1, _rows(np.ones((2, DIM)), start=100, layers=(2,)))  # stale: LanceDB answers
    stale = _child(tmp_path / "db")
    assert stale["lancedb"] is True and stale["hits"][0] == "u100"


def test_rows_read_as_slices_are_the_rows_taken(tmp_path):
    _finished(tmp_path / "db", _clustered(300, seed=9), layers=(2,))
    side = open_store(tmp_path / "db").side()
    for positions in ([5, 1, 299, 5], list(range(299, 0, -2))):  # a few (slices) and 150 (one take)
        assert side.rows_at(positions) == side.rows.take(np.asarray(positions)).to_pylist()
