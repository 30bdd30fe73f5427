"""The Lance usage store with hand-made vectors (no model): search, dtypes, rollback,
foreign and damaged folders."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

need("lancedb")

from contextlens.errors import FileFormatError, InputError  # noqa: E402
from contextlens.index.reader import open_store  # noqa: E402
from contextlens.index.stats import index_stats  # noqa: E402
from contextlens.index.store import UsageStore  # noqa: E402
from contextlens.passes.rows import EncodedChunk, UsageRow  # noqa: E402

DIM = 8


def _store(path, dtype="float16", layers=(2, 4)):
    return UsageStore.create(path, {"model": "toy", "layers": list(layers), "dim": DIM, "dtype": dtype,
                                    "match": "lower", "layout": "lines", "words": ["bank", "spring"]})


def _rows(x, start=0, layers=(2, 4)):
    """Usages ``u{start}...``: even ones of "bank", odd ones of "spring"; layer 2 holds x, layer 4 -x."""
    rows = [UsageRow(f"u{start + i}", "bank" if i % 2 == 0 else "spring", "bank", "d.txt", start + i, 0, 4,
                     f"sentence {start + i}") for i in range(len(x))]
    return EncodedChunk(rows, {k: x if k == 2 else -x for k in layers})


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_exact_search_matches_numpy_cosine(tmp_path, dtype):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, DIM)).astype(np.float32)
    store = _store(tmp_path / "db", dtype)
    store.append(0, _rows(x))
    store.commit(0, 40, 40)
    q = rng.normal(size=DIM)
    reader = open_store(tmp_path / "db")
    got = reader.search(q, word="bank", k=5, layer=2)
    stored = x.astype(dtype).astype(np.float64)
    sims = stored @ q / (np.linalg.norm(stored, axis=1) * np.linalg.norm(q))
    bank = [i for i in range(40) if i % 2 == 0]
    want = sorted(bank, key=lambda i: -sims[i])[:5]
    assert [r["usage_id"] for r in got] == [f"u{i}" for i in want]
    tol = 1e-3 if dtype == "float16" else 1e-5  # lance computes float16 distances in float16
    assert [r["similarity"] for r in got] == pytest.approx([sims[i] for i in want], abs=tol)
    assert all(r["word"] == "bank" for r in got)
    # layer 4 holds -x: the most similar there is the least similar at layer 2
    assert reader.search(-q, word="bank", k=1, layer=4)[0]["usage_id"] == f"u{want[0]}"
    assert (
        str(reader.table.schema.field("v2").type.value_type)
        == {"float16": "halffloat", "float32": "float"}[dtype]
    )


def test_rollback_removes_uncommitted_chunks_and_stats(tmp_path):
    rng = np.random.default_rng(1)
    store = _store(tmp_path / "db")
    store.append(0, _rows(rng.normal(size=(6, DIM))))
    store.commit(0, 10, 6)
    store.append(1, _rows(rng.normal(size=(4, DIM)), start=6))  # written, never committed
    assert store.checkpoint()["chunk"] == 0
    assert store.rollback(0) == 4 and store.count() == 6
    stats = index_stats(tmp_path / "db")
    assert stats["usages"] == 6 and stats["words"] == {"bank": 3, "spring": 3}
    assert stats["complete"] is False and stats["layers"] == [2, 4] and stats["size_bytes"] > 0
    with pytest.raises(InputError, match="layer 3 is not stored"):
        open_store(tmp_path / "db").search(np.ones(DIM), k=1, layer=3)
    with pytest.raises(InputError, match="no usage with id"):
        open_store(tmp_path / "db").get("nope")


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
    store.append(0, _rows(np.ones((2, DIM))))
    for f in (damaged / "usages.lance" / "_versions").iterdir():
        f.write_bytes(b"garbage")
    before = _snapshot(damaged)
    with pytest.raises(FileFormatError, match="cannot be read"):
        open_store(damaged)
    assert _snapshot(damaged) == before
    with pytest.raises(InputError, match="no usage index there"):
        open_store(tmp_path / "missing")


def _finished(path, x, layers=(2,)):
    store = _store(path, layers=layers)
    store.append(0, _rows(x, layers=layers))
    store.commit(0, len(x), len(x))
    return store, store.finish(0, len(x))


def _clustered(n, seed=2):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(10, DIM))
    return (centres[rng.integers(0, 10, n)] + 0.1 * rng.normal(size=(n, DIM))).astype(np.float32)


def test_a_large_table_gets_an_ann_side_index(tmp_path, monkeypatch):
    from contextlens.index import side_index

    monkeypatch.setattr(side_index, "ANN_MIN_ROWS", 500)  # 1,000 usages: 32 inverted lists
    monkeypatch.setattr(side_index, "EXACT_MAX_WORD_ROWS", 100)  # "bank" has 500: approximate
    monkeypatch.setattr(side_index, "MIN_WORD_ROWS_PROBED", 50)  # 10 of the 32 lists
    x = _clustered(1000)
    store, info = _finished(tmp_path / "db", x)
    assert info == {"usages": 1000, "ann_index": True}
    reader = open_store(tmp_path / "db")
    assert reader.has_ann_index() and reader.side().lists == 32 and reader.nprobes("bank") == 10
    assert set(reader.side().hnsw) == set(reader.layers)  # the search over every word walks a graph
    q = x[7] + 0.05
    for word in ("bank", None):
        ann = reader.search(q, word=word, k=10)
        exact = reader.search(q, word=word, k=10, exact=True)
        assert len({r["usage_id"] for r in ann} & {r["usage_id"] for r in exact}) >= 8  # recall@10
        assert ann[0].keys() == exact[0].keys() and all(word in (None, r["word"]) for r in ann)
    stats = index_stats(tmp_path / "db")
    assert (stats["ann_index"] and stats["words"] == {"bank": 500, "spring": 500}
            and store.checkpoint()["done"])
    got = reader.get("u7")
    assert got["sentence"] == "sentence 7" and np.linalg.norm(got["vector"]) == pytest.approx(1, abs=1e-3)
    np.testing.assert_allclose(got["vector"], x[7] / np.linalg.norm(x[7]), atol=1e-3)


def test_a_word_searched_through_the_side_index_is_exact(tmp_path):
    x = np.random.default_rng(3).normal(size=(300, DIM)).astype(np.float32)
    _finished(tmp_path / "db", x, layers=(2, 4))
    reader = open_store(tmp_path / "db")
    assert reader.side() is not None and not reader.has_ann_index()  # one list: exact
    rng = np.random.default_rng(4)
    for q in rng.normal(size=(5, DIM)):
        for word, layer in (("spring", 2), ("bank", 4), (None, 2)):
            side = reader.search(q, word=word, k=7, layer=layer)
            flat = reader.search(q, word=word, k=7, layer=layer, exact=True)
            assert [r["usage_id"] for r in side] == [r["usage_id"] for r in flat]
            assert [r["similarity"] for r in side] == pytest.approx([r["similarity"] for r in flat], abs=2e-3)
    assert reader.search(x[0], word="nothing", k=3) == [] and reader.count("spring") == 150


def test_a_stale_or_damaged_side_index_is_rebuilt_from_the_table(tmp_path):
    x = _clustered(40, seed=5)
    store, _ = _finished(tmp_path / "db", x)
    first = open_store(tmp_path / "db").side().folder
    # the table changes after the side index was made (a later version): rebuilt for it
    store.append(1, _rows(np.ones((2, DIM)), start=40, layers=(2,)))
    reader = open_store(tmp_path / "db")
    assert reader.side().folder != first and not first.exists() and reader.count() == 42
    assert reader.search(np.ones(DIM), word="bank", k=1)[0]["usage_id"] == "u40"
    # damaged meta.json: rebuilt; a half-written folder left by a killed writer: removed
    folder = reader.side().folder
    (folder / "meta.json").write_text("{")
    (tmp_path / "db" / f".{folder.name}.tmp-999999999-x").mkdir()  # its writer (no such process) was killed
    again = open_store(tmp_path / "db")
    assert again.side() is not None and again.count() == 42
    assert [p.name for p in (tmp_path / "db").iterdir() if p.name.startswith(".search")] == []


def test_a_creation_killed_between_its_tables_is_started_again(tmp_path):
    import lancedb
    import pyarrow as pa

    from contextlens.index.store import _only_empty_progress

    db = lancedb.connect(str(tmp_path / "db"))
    db.create_table("progress", schema=pa.schema([pa.field("chunk", pa.int64())]))
    assert _only_empty_progress(tmp_path / "db")
    store = _store(tmp_path / "db")
    assert store.count() == 0 and store.checkpoint()["chunk"] == -1
    assert not _only_empty_progress(tmp_path / "db")
    with pytest.raises(FileFormatError,
                       match="already holds an index's tables: another build writing into this --db"):
        _store(tmp_path / "db")


def test_vectors_beyond_float16_are_refused_not_stored_as_infinity(tmp_path):
    store = _store(tmp_path / "db", "float16")
    x = np.ones((2, DIM), dtype=np.float32)
    x[1, 3] = 1e5  # float16 holds at most 65,504: inf would give NaN similarities
    with pytest.raises(InputError,
                       match=r"a vector of layer 2 has values beyond float16's range .*dtype float32"):
        store.to_arrow(0, _rows(x))
    wide = _store(tmp_path / "db32", "float32")
    assert wide.to_arrow(0, _rows(x)).num_rows == 2
