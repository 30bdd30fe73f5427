"""Sense induction from a usage index (``induce_senses``, ``index senses``) on indexes written
with synthetic vectors (no model): every usage is in exactly one sense and listed as its
member; above ``max_usages`` a sample is clustered and the others join the nearest sense;
memory stays bounded at the largest sample; the CLI's bound is the library's."""

from __future__ import annotations

import json

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from tests.missing import need

need("lancedb")
need("faiss")

from contextlens.cli import index  # noqa: E402
from contextlens.corpus.targets import usage_id  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from contextlens.index import induce_senses  # noqa: E402
from contextlens.index.store import UsageStore  # noqa: E402
from contextlens.passes.rows import EncodedChunk, UsageRow  # noqa: E402

DIM = 24
app = typer.Typer(pretty_exceptions_enable=False)


@app.callback()
def _root() -> None:
    """The index commands alone."""


index.register(app)


def synthetic_index(path, n: int, seed: int = 0, river_share: float = 0.1):
    """An index of ``n`` usages of "bank" in "money" sentences on three topics and "river"
    sentences (``river_share`` of them), whose vectors share a large common direction (as a
    model's last layer does) and differ by sense and topic; returns each usage id's sense."""
    rng = np.random.default_rng(seed)
    common, money, river, *topics = (v / np.linalg.norm(v) for v in rng.standard_normal((6, DIM)))
    store = UsageStore.create(path, {"model": "synthetic", "model_path": "synthetic", "layers": [1],
                                     "dim": DIM, "dtype": "float32", "match": "lower", "layout": "lines",
                                     "words": ["bank"], "pooling": "mean"})
    rows, vectors, sense = [], [], {}
    for i in range(n):
        is_river = i % round(1 / river_share) == 0
        text = f"we sat on the bank of river {i}" if is_river else f"the bank lent money {i}"
        start = text.index("bank")
        uid = usage_id("corpus.txt", i, start, start + 4, "bank")
        rows.append(UsageRow(uid, "bank", "bank", "corpus.txt", i, start, start + 4, text))
        meaning = river if is_river else money + 0.8 * topics[i % 3]
        vectors.append(4 * common + meaning + 0.3 * rng.standard_normal(DIM) / np.sqrt(DIM))
        sense[uid] = "river" if is_river else "money"
    store.append(0, EncodedChunk(rows, {1: np.array(vectors, dtype=np.float32)}))
    store.commit(0, n, n)
    store.finish(0, n)
    return sense


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    db = tmp_path_factory.mktemp("senses") / "db"
    return db, synthetic_index(db, 300)


def test_every_usage_is_a_member_of_one_sense(small):
    db, sense = small
    out = induce_senses(db, "bank")
    members = [m for s in out["senses"] for m in s["members"]]
    assert sorted(m["usage_id"] for m in members) == sorted(sense)  # each once
    assert out["n_usages"] == out["n_total"] == out["n_clustered"] == 300 and out["members_listed"] == "all"
    assert [len(s["members"]) for s in out["senses"]] == [s["size"] for s in out["senses"]]
    assert {"usage_id", "doc", "sentence_no", "start", "end", "sentence", "similarity"} == set(members[0])
    for s in out["senses"]:
        sims = [m["similarity"] for m in s["members"]]
        assert sims == sorted(sims, reverse=True)
        assert len({sense[m["usage_id"]] for m in s["members"]}) == 1  # the two senses, apart
    river = [s for s in out["senses"] if sense[s["members"][0]["usage_id"]] == "river"]
    assert sum(len(s["members"]) for s in river) == 30


def test_above_max_usages_a_sample_is_clustered_and_the_others_join_the_nearest_sense(small):
    db, sense = small
    out = induce_senses(db, "bank", max_usages=100)
    assert out["n_clustered"] == 100 and out["n_usages"] == 300
    assert sum(s["size"] for s in out["senses"]) == 300
    assert all(len({sense[m["usage_id"]] for m in s["members"]}) == 1 for s in out["senses"])
    sampled = sorted(sense)[:100]  # the lowest usage ids
    typical = {t["usage_id"] for s in out["senses"] for t in s["typical"]}
    assert typical <= set(sampled)


def test_the_json_lists_the_members_and_the_bound_is_the_librarys(small):
    db, _ = small
    res = CliRunner().invoke(app, ["index", "senses", "bank", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert sum(len(s["members"]) for s in got["senses"]) == 300
    res = CliRunner().invoke(app, ["index", "senses", "bank", "--db", str(db)])
    assert res.exit_code == 0 and "300 usages (all clustered)" in res.output and "--json" in res.output
    res = CliRunner().invoke(app, ["index", "senses", "bank", "--db", str(db), "--max-usages", "10001"])
    assert res.exit_code == 2  # was accepted up to 20,000, then refused by the library above 10,000
    assert "--max-usages must be a whole number from 2 to 10,000, got 10001" in " ".join(res.output.split())
    with pytest.raises(InputError, match=r"max_usages must be a whole number from 2 to 10,000, got 10001"):
        induce_senses(db, "bank", max_usages=10_001)


def test_memory_at_the_largest_sample_is_bounded(tmp_path):
    """12,000 usages, 10,000 of them clustered: the neighbour graph and the silhouette read
    the cosines in blocks (before: average linkage's 10,000² / 2 distances, 400 MB, then a
    silhouette of 10,000 × 10,000 per k tried)."""
    import tracemalloc

    sense = synthetic_index(tmp_path / "db", 12_000)
    tracemalloc.start()
    try:
        out = induce_senses(tmp_path / "db", "bank", max_usages=10_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out["n_clustered"] == 10_000 and sum(len(s["members"]) for s in out["senses"]) == 12_000
    river = max(out["senses"], key=lambda s: sum(sense[m["usage_id"]] == "river" for m in s["members"]))
    assert {sense[m["usage_id"]] for m in river["members"]} == {"river"} and river["size"] == 1_200
    # 145 MiB here; before: 1,823 MiB (tracemalloc), 203 s
    assert peak < 250 * 2**20, f"{peak / 2**20:.0f} MiB"
