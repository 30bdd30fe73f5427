"""The Lance usage store with hand-made vectors (no model): search, dtypes, rollback,
foreign and damaged folders."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

need("lancedb")

from contextlens.errors import FileFormatError, InputError  # noqa: E402
from contextlens.index.stats import index_stats  # noqa: E402
from contextlens.index.store import UsageStore, open_store  # noqa: E402

DIM = 8


def _store(path, dtype="float16", layers=(2, 4)):
    return UsageStore.create(path, {"model": "toy", "layers": list(layers), "dim": DIM, "dtype": dtype,
                                    "match": "lower", "layout": "lines", "words": ["bank", "spring"]})


def _rows(store, x, chunk, start=0):
    n = len(x)
    return store.rows_to_arrow({
        "usage_id": [f"u{start + i}" for i in range(n)], "word": ["bank" if i % 2 == 0 else "spring" for i in range(n)],
        "form": ["bank"] * n, "doc": ["d.txt"] * n, "sentence_no": list(range(start, start + n)),
        "start": [0] * n, "end": [4] * n, "sentence": [f"sentence {start + i}" for i in range(n)],
        "chunk": [chunk] * n, "v2": x, "v4": -x})


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_exact_search_matches_numpy_cosine(tmp_path, dtype):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, DIM)).astype(np.float32)
    store = _store(tmp_path / "db", dtype)
    store.append(_rows(store, x, 0))
    store.commit(0, 40, 40)
    q = rng.normal(size=DIM)
    got = store.search(q, word="bank", k=5, layer=2)
    stored = x.astype(dtype).astype(np.float64)
    sims = stored @ q / (np.linalg.norm(stored, axis=1) * np.linalg.norm(q))
    bank = [i for i in range(40) if i % 2 == 0]
    want = sorted(bank, key=lambda i: -sims[i])[:5]
    assert [r["usage_id"] for r in got] == [f"u{i}" for i in want]
    tol = 1e-3 if dtype == "float16" else 1e-5  # lance computes float16 distances in float16
    assert [r["similarity"] for r in got] == pytest.approx([sims[i] for i in want], abs=tol)
    assert all(r["word"] == "bank" for r in got)
    # layer 4 holds -x: the most similar there is the least similar at layer 2
    assert store.search(-q, word="bank", k=1, layer=4)[0]["usage_id"] == f"u{want[0]}"
    assert str(store.table.schema.field("v2").type.value_type) == {"float16": "halffloat", "float32": "float"}[dtype]


def test_rollback_removes_uncommitted_chunks_and_stats(tmp_path):
    rng = np.random.default_rng(1)
    store = _store(tmp_path / "db")
    store.append(_rows(store, rng.normal(size=(6, DIM)), 0))
    store.commit(0, 10, 6)
    store.append(_rows(store, rng.normal(size=(4, DIM)), 1, start=6))  # written, never committed
    assert store.checkpoint()["chunk"] == 0
    assert store.rollback(0) == 4 and store.count() == 6
    stats = index_stats(tmp_path / "db")
    assert stats["usages"] == 6 and stats["words"] == {"bank": 3, "spring": 3}
    assert stats["complete"] is False and stats["layers"] == [2, 4] and stats["size_bytes"] > 0
    with pytest.raises(InputError, match="layer 3 is not stored"):
        store.search(np.ones(DIM), k=1, layer=3)
    with pytest.raises(InputError, match="no usage with id"):
        store.get("nope")


def _snapshot(path):
    return {p: p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_foreign_and_damaged_folders_are_refused_untouched(tmp_path):
    import lancedb
    import pyarrow as pa

    foreign = tmp_path / "foreign"
    db = lancedb.connect(str(foreign))
    db.create_table("usages", pa.table({"x": [1, 2]}))
    db.create_table("progress", pa.table({"y": [1]}))
    before = _snapshot(foreign)
    with pytest.raises(FileFormatError, match="not written by contextlens"):
        open_store(foreign)
    other = tmp_path / "other"
    lancedb.connect(str(other)).create_table("things", pa.table({"x": [1]}))
    with pytest.raises(FileFormatError, match="not a contextlens usage index"):
        open_store(other)
    assert _snapshot(foreign) == before
    damaged = tmp_path / "damaged"
    store = _store(damaged)
    store.append(_rows(store, np.ones((2, DIM)), 0))
    for f in (damaged / "usages.lance" / "_versions").iterdir():
        f.write_bytes(b"garbage")
    before = _snapshot(damaged)
    with pytest.raises(FileFormatError, match="cannot be read"):
        open_store(damaged)
    assert _snapshot(damaged) == before
    with pytest.raises(InputError, match="no usage index there"):
        open_store(tmp_path / "missing")


def test_a_large_table_gets_an_ann_index(tmp_path, monkeypatch):
    from contextlens.index import store as store_mod

    monkeypatch.setattr(store_mod, "ANN_MIN_ROWS", 500)
    monkeypatch.setattr(store_mod, "EXACT_MAX_WORD_ROWS", 100)  # "bank" has 1,000: through the ANN index
    rng = np.random.default_rng(2)
    centres = rng.normal(size=(10, DIM))
    x = (centres[rng.integers(0, 10, 1000)] + 0.1 * rng.normal(size=(1000, DIM))).astype(np.float32)
    store = _store(tmp_path / "db", layers=(2,))
    rows = _rows(store, x, 0)
    store.append(rows)
    store.commit(0, 1000, 1000)
    assert store.finish(0, 1000) == {"usages": 1000, "ann_index": True} and store.has_ann_index()
    q = x[7] + 0.05
    ann = {r["usage_id"] for r in store.search(q, word="bank", k=10)}
    exact = {r["usage_id"] for r in store.search(q, word="bank", k=10, exact=True)}
    assert len(ann & exact) >= 8  # recall@10 of IVF-SQ with exact re-ranking
    monkeypatch.setattr(store_mod, "EXACT_MAX_WORD_ROWS", 20_000)  # now exact, in memory
    store.refresh()
    mem = store.search(q, word="bank", k=10)
    flat = store.search(q, word="bank", k=10, exact=True)
    assert [r["usage_id"] for r in mem] == [r["usage_id"] for r in flat]
    assert [r["similarity"] for r in mem] == pytest.approx([r["similarity"] for r in flat], abs=1e-5)
    assert mem[0].keys() == flat[0].keys()
    assert index_stats(tmp_path / "db")["ann_index"] and store.checkpoint()["done"]


def test_a_creation_killed_between_its_tables_is_started_again(tmp_path):
    import lancedb
    import pyarrow as pa

    from contextlens.index.build import _only_empty_progress

    db = lancedb.connect(str(tmp_path / "db"))
    db.create_table("progress", schema=pa.schema([pa.field("chunk", pa.int64())]))
    assert _only_empty_progress(tmp_path / "db")
    store = _store(tmp_path / "db")
    assert store.count() == 0 and store.checkpoint()["chunk"] == -1
    assert not _only_empty_progress(tmp_path / "db")
    with pytest.raises(FileFormatError, match="already holds tables"):
        _store(tmp_path / "db")
