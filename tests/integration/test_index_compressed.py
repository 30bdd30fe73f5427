"""The compressed side index (product quantisation, re-ranked from the LanceDB table's
vectors) and an index at a LanceDB URI (``file://``: the object-storage code path on a
local disk): search against exact search, what a build chooses, what ``index stats``
says, rebuilt as it was made, the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.missing import need

need("lancedb")
need("faiss")

from contextlens.errors import InputError  # noqa: E402
from contextlens.index import side_index  # noqa: E402
from contextlens.index.reader import open_store  # noqa: E402
from contextlens.index.stats import index_stats  # noqa: E402
from contextlens.index.store import UsageStore  # noqa: E402
from contextlens.passes.rows import EncodedChunk, UsageRow  # noqa: E402

DIM = 48  # 12 PQ codes of one byte


def clustered(n, seed=0, centres=40, noise=0.3):
    rng = np.random.default_rng(seed)
    c = rng.normal(size=(centres, DIM))
    return (c[rng.integers(0, centres, n)] + noise * rng.normal(size=(n, DIM))).astype(np.float32)


def word_of(i: int) -> str:
    return "rare" if i % 50 == 0 else "bank" if i % 2 else "spring"


def finished(path, x, side="compressed"):
    params = {"model": "toy", "layers": [3], "dim": DIM, "dtype": "float16", "match": "lower",
              "layout": "lines", "words": ["bank", "spring", "rare"]}
    if side is not None:
        params["side_index"] = side
    store = UsageStore.create(path, params)
    rows = [UsageRow(f"u{i:05d}", word_of(i), "w", "d.txt", i, 0, 4, f"sentence {i}") for i in range(len(x))]
    for a in range(0, len(x), 1000):  # several fragments, as a build writes them
        store.append(a // 1000, EncodedChunk(rows[a:a + 1000], {3: x[a:a + 1000]}))
        store.commit(a // 1000, a + 1000, a + 1000)
    store.finish(len(x) // 1000, len(x))
    return open_store(path)


def ids(rows):
    return [r["usage_id"] for r in rows]


def same_up_to_ties(a: list[dict], b: list[dict], tol: float = 2e-3) -> bool:
    """Whether two searches found the same usages with the same cosines (within ``tol``),
    but for the order of near-ties and which of the near-ties at the cut were kept."""
    sims = [r["similarity"] for r in a]
    if sims != pytest.approx([r["similarity"] for r in b], abs=tol):
        return False
    cut = min(sims[-1], b[-1]["similarity"]) + tol
    return {r["usage_id"] for r in a if r["similarity"] > cut} == {r["usage_id"] for r in b
                                                                   if r["similarity"] > cut}


def test_compressed_search_finds_what_exact_search_finds(tmp_path):
    x = clustered(3000)
    reader = finished(tmp_path / "db", x)
    side = reader.side()
    assert side.kind == "compressed" and side.meta["pq_codes"] == 12 and not side.hnsw
    assert not (side.folder / "rows.arrow").exists()  # rows are read from the table
    rng = np.random.default_rng(1)
    recall = []
    for i in rng.integers(0, len(x), 20):
        q = x[i] + 0.1 * rng.normal(size=DIM)
        for word in (None, "bank", "rare"):
            got, want = reader.search(q, word=word, k=10), reader.search(q, word=word, k=10, exact=True)
            assert got[0].keys() == want[0].keys() and all(word in (None, r["word"]) for r in got)
            recall.append(len(set(ids(got)) & set(ids(want))) / 10)
            sims = {r["usage_id"]: r["similarity"] for r in want}  # re-ranked with the stored vectors:
            assert [r["similarity"] for r in got if r["usage_id"] in sims] == pytest.approx(  # their cosines
                [sims[r["usage_id"]] for r in got if r["usage_id"] in sims], abs=2e-3)
            if word == "rare":  # 60 usages: fewer than a search re-ranks, so all of them: exact
                assert ids(got) == ids(want)
    assert np.mean(recall) >= 0.95
    got = reader.get("u00007")  # a stored usage, its vector from the table
    assert got["sentence"] == "sentence 7" and got["word"] == "bank"
    np.testing.assert_allclose(got["vector"], x[7] / np.linalg.norm(x[7]), atol=1e-3)
    with pytest.raises(InputError, match="no usage with id 'nope'"):
        reader.get("nope")


def test_compressed_search_is_its_pq_stage_then_an_exact_rerank_of_the_tables_vectors(tmp_path):
    """``search`` is ``rerank(candidates(...))`` (the stages benchmarks/index_search.py times
    one by one), the PQ stage gives ``rerank_for(k)`` sorted positions of the word's usages,
    and the re-rank scores each with the vector stored in the table for that usage."""
    x = clustered(3000, seed=4)
    reader = finished(tmp_path / "db", x)
    side = reader.side()
    data = reader.table.search().select(["usage_id", "v3"]).limit(None).to_arrow()
    vec = data.column("v3").combine_chunks().flatten().to_numpy(zero_copy_only=False).reshape(-1, DIM)
    stored = dict(zip(data.column("usage_id").to_pylist(), vec.astype(np.float32)))  # usage id -> (DIM,)
    rng = np.random.default_rng(5)
    for i in rng.integers(0, len(x), 5):
        q = x[i] + 0.1 * rng.normal(size=DIM)
        q = (q / np.linalg.norm(q)).astype(np.float32)
        for word in (None, "bank", "rare"):
            cand = side.candidates(q, 3, 10, word)
            lo, hi = side.word_range(word) if word else (0, len(x))
            assert len(cand) == min(side_index.rerank_for(10, word), hi - lo)
            assert list(cand) == sorted(cand) and all(lo <= p < hi for p in cand)
            at, sims = side.rerank(q, 3, 10, cand)
            assert (at, sims) == side.search(q, 3, 10, word)
            rows = side.rows_at(cand)
            assert all(word in (None, r["word"]) for r in rows)
            exact = [float(stored[r["usage_id"]] @ q / np.linalg.norm(stored[r["usage_id"]])) for r in rows]
            best = np.argsort(-np.asarray(exact), kind="stable")[:10]
            assert sims == pytest.approx([exact[j] for j in best], abs=1e-5)
            assert at == [int(cand[j]) for j in best]
    assert side.candidates(q, 3, 10, "absent").tolist() == [] and side.rerank(q, 3, 10, cand[:0]) == ([], [])


def test_stats_give_the_bytes_per_usage_of_each_kind(tmp_path):
    x = clustered(2000, seed=2)
    packed = finished(tmp_path / "packed", x)
    finished(tmp_path / "full", x, side="full")
    a, b = index_stats(tmp_path / "packed"), index_stats(tmp_path / "full")
    files = sum(f.stat().st_size for f in packed.side().folder.iterdir())
    assert a["search"] == {"kind": "compressed", "bytes": files, "bytes_per_usage": round(files / 2000, 1)}
    assert (b["search"]["kind"] == "full"
            and b["search"]["bytes_per_usage"] > 2 * a["search"]["bytes_per_usage"])
    assert a["usages"] == b["usages"] == 2000 and a["bytes_per_usage"] == round(a["size_bytes"] / 2000, 1)


def test_a_build_compresses_a_large_table_unless_told_and_rebuilds_the_kind_it_chose(tmp_path, monkeypatch):
    monkeypatch.setattr(side_index, "COMPRESS_MIN_ROWS", 1500)  # usages x stored layers (one layer here)
    assert finished(tmp_path / "big", clustered(2000), side=None).side().kind == "compressed"
    assert finished(tmp_path / "small", clustered(1000), side=None).side().kind == "full"
    assert finished(tmp_path / "refused", clustered(2000), side="full").side().kind == "full"
    reader = open_store(tmp_path / "big")
    folder = reader.side().folder
    for f in folder.iterdir():  # deleted: the next reader writes it again, of the same kind
        f.unlink()
    folder.rmdir()
    again = open_store(tmp_path / "big")
    assert again.side().kind == "compressed" and again.side().folder == folder
    assert len(again.search(np.ones(DIM), k=5)) == 5


def test_an_index_at_a_uri_keeps_its_side_index_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    x = clustered(1500, seed=3)
    uri = f"file://{tmp_path}/store/usages"
    reader = finished(uri, x)
    assert reader.path == uri and not reader.local
    side = reader.side()
    assert side.folder.parent == tmp_path / "cache" / "search" and side.kind == "compressed"
    assert not list((tmp_path / "store" / "usages").glob("search-v*"))  # nothing but LanceDB's tables there
    got, want = reader.search(x[5], word="bank", k=5), reader.search(x[5], word="bank", k=5, exact=True)
    assert ids(got)[0] == ids(want)[0] == "u00005"
    stats = index_stats(uri)
    assert stats["db"] == uri and stats["usages"] == 1500 and stats["search"]["kind"] == "compressed"
    assert stats["size_bytes"] > stats["search"]["bytes"] > 0
    for f in side.folder.iterdir():  # damaged in the cache: rebuilt there
        f.write_bytes(b"")
    assert open_store(uri).side().kind == "compressed"
    with pytest.raises(InputError, match="no usage index there"):
        open_store(f"file://{tmp_path}/nothing")


def test_cli_compress_and_a_uri(tmp_path, monkeypatch):
    torch = need("torch")  # noqa: F841
    need("transformers")
    from typer.testing import CliRunner

    from contextlens.cli import app
    from tests.integration.tiny_models import tiny_model

    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    model = str(tiny_model(tmp_path, init=0.5))  # large weights: contexts far apart, few near-ties
    corpus = tmp_path / "corpus.txt"
    rng = np.random.default_rng(0)
    fill = "the a of money loan water mud we sat on it by far near old new green cold river".split()
    corpus.write_text("\n".join(" ".join([*rng.choice(fill, 4), "bank" if i % 3 else "spring",
                                          *rng.choice(fill, 5)])
                                for i in range(60)) + "\n")
    runner = CliRunner()
    common = [str(corpus), "--words", "bank,spring", "--model", model, "--layers", "2", "--json"]
    res = runner.invoke(app, ["index", "build", *common, "--db", str(tmp_path / "plain")])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["search"]["kind"] == "full"
    uri = f"file://{tmp_path}/packed"
    res = runner.invoke(app, ["index", "build", *common, "--db", uri, "--compress"])
    assert res.exit_code == 0, res.output
    built = json.loads(res.stdout)
    assert built["search"]["kind"] == "compressed" and built["params"]["side_index"] == "compressed"
    res = runner.invoke(app, ["index", "stats", "--db", uri])
    assert (res.exit_code == 0 and "compressed search index (" in res.stdout
            and "bytes per usage" in res.stdout)
    searches = []
    for db in (str(tmp_path / "plain"), uri):  # 40 usages of bank: every one re-ranked, so the same results
        res = runner.invoke(app, ["index", "search", "--db", db, "the bank by the river", "--word", "bank",
                                  "-k", "5", "--json"])
        assert res.exit_code == 0, res.output
        searches.append(json.loads(res.stdout)["results"])
    assert same_up_to_ties(*searches)
    res = runner.invoke(app, ["index", "build", *common, "--db", uri])  # a re-run keeps the index's choice
    assert res.exit_code == 0 and json.loads(res.stdout)["already_complete"]
    res = runner.invoke(app, ["index", "build", *common, "--db", uri, "--no-compress"])
    assert res.exit_code == 2 and "side_index 'compressed' (this build: 'full')" in res.output


def test_reads_by_offset_and_the_packed_row_equal_reads_by_row_id_column_by_column(tmp_path):
    """With pylance the compressed index reads by offset (Lance's ``take``) and a result's
    row from the packed column: the same vectors and rows, in the order asked, as LanceDB's
    take by row id of the eight columns, also after a rolled-back chunk was deleted."""
    import dataclasses

    need("lance")
    x = clustered(3000, seed=6)
    params = {"model": "toy", "layers": [3], "dim": DIM, "dtype": "float16", "match": "lower",
              "layout": "lines", "words": ["bank", "spring", "rare"], "side_index": "compressed"}
    store = UsageStore.create(tmp_path / "db", params)
    rows = [UsageRow(f"u{i:05d}", word_of(i), "w", "d.txt", i, 0, 4, f"sentence {i} ünï")
            for i in range(len(x))]
    store.append(0, EncodedChunk(rows[:1000], {3: x[:1000]}))
    store.commit(0, 1000, 1000)
    store.append(1, EncodedChunk(rows[1000:1500], {3: -x[1000:1500]}))  # never committed: rolled back
    assert store.rollback(0) == 500
    for a in (1000, 2000):
        store.append(a // 1000, EncodedChunk(rows[a:a + 1000], {3: x[a:a + 1000]}))
        store.commit(a // 1000, a + 1000, a + 1000)
    store.finish(2, len(x))
    side = open_store(tmp_path / "db").side()
    assert side.offsets is not None and side.dataset is not None
    by_id = dataclasses.replace(side, offsets=None, _dataset=None, _packed=False)  # the LanceDB path
    positions = np.random.default_rng(7).permutation(len(x))[:300]
    fast, slow = side.rows_at(positions), by_id.rows_at(positions)
    assert side._packed and fast == slow and set(fast[0]) == set(side.columns)
    assert [r["sentence"] for r in fast[:3]] == [f"sentence {int(r['usage_id'][1:])} ünï" for r in fast[:3]]
    np.testing.assert_array_equal(side._vectors(positions, 3), by_id._vectors(positions, 3))
    want = {r["usage_id"]: x[int(r["usage_id"][1:])] for r in fast}  # the stored (not rolled-back) vectors
    got = side._vectors(positions, 3)
    np.testing.assert_allclose(got, np.stack([want[r["usage_id"]] for r in fast]), atol=2e-2)


def test_a_table_without_the_packed_row_is_read_column_by_column(tmp_path, monkeypatch):
    """An index written before the packed row column: its rows come from the eight columns."""
    from contextlens.index import store as store_module
    from contextlens.passes.rows import PACKED

    schema = store_module.usages_schema
    monkeypatch.setattr(store_module, "usages_schema",
                        lambda params: schema(params).remove(schema(params).get_field_index(PACKED)))
    x = clustered(2000, seed=8)
    reader = finished(tmp_path / "db", x)
    assert PACKED not in reader.table.schema.names
    side = reader.side()
    q = x[11] / np.linalg.norm(x[11])
    got = reader.search(q, k=5)
    assert got[0]["usage_id"] == "u00011" and got[0]["sentence"] == "sentence 11" and not side._packed
    assert ids(got) == ids(reader.search(q, k=5, exact=True))
