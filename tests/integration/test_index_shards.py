"""Shards: ``index build --shard I/N`` indexes its share of the documents (stable on
re-runs), and several indexes searched as one (``index search --db A --db B``, the
library, ``lab --index A --index B``) give the results of one index over the whole corpus;
indexes that disagree on model, layers or words are refused, naming what differs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.missing import need

need("lancedb")
need("torch")
need("transformers")

from typer.testing import CliRunner  # noqa: E402

from contextlens.cli import app  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from contextlens.index import build_index, index_stats, like_usage, open_store, search_usages  # noqa: E402
from contextlens.index.build import make_index_encoder  # noqa: E402
from contextlens.index.shards import ShardedReader, parse_shard, shard_of  # noqa: E402
from contextlens.index.store import IndexMismatchError  # noqa: E402
from tests.integration.tiny_models import tiny_model  # noqa: E402

WORDS = ["bank", "spring"]
N = 3
runner = CliRunner()


def same_up_to_ties(a: list[dict], b: list[dict], tol: float = 1e-3) -> bool:
    """The same usages with the same cosines (within ``tol``), but for the order of
    near-ties and which near-ties at the cut were kept."""
    sims = [r["similarity"] for r in a]
    if sims != pytest.approx([r["similarity"] for r in b], abs=tol):
        return False
    cut = min(sims[-1], b[-1]["similarity"]) + tol
    return {r["usage_id"] for r in a if r["similarity"] > cut} == {r["usage_id"] for r in b
                                                                   if r["similarity"] > cut}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("shards")
    model = str(tiny_model(root, init=0.5))  # large weights: contexts far apart, few near-ties
    rng = np.random.default_rng(0)
    fill = "the a of money loan water mud we sat on it by far near old new green cold river".split()
    corpus = root / "corpus"
    corpus.mkdir()
    # documents over three shards, two in each: a document's shard hashes its path as given, and
    # pytest's folder differs from run to run (eight names at random leave a shard empty 12 % of the time)
    names, d = {i: [] for i in range(N)}, 0
    while min(map(len, names.values())) < 2:
        part = names[shard_of(str(corpus / f"doc{d}.txt"), N)]
        if len(part) < 3:
            part.append(d)
        d += 1
    for d in sorted(x for part in names.values() for x in part):
        lines = [" ".join([*rng.choice(fill, 3), WORDS[(d + i) % 2], *rng.choice(fill, 4), str(d), str(i)])
                 for i in range(12)]
        (corpus / f"doc{d}.txt").write_text("\n".join(lines) + "\n")
    common = [str(corpus), "--words", ",".join(WORDS), "--model", model, "--layers", "1,2", "--json"]
    res = runner.invoke(app, ["index", "build", *common, "--db", str(root / "whole")])
    assert res.exit_code == 0, res.output
    shards = []
    for i in range(N):
        res = runner.invoke(app, ["index", "build", *common, "--db", str(root / f"part{i}"), "--shard",
                                  f"{i}/{N}"])
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["params"]["shard"] == f"{i}/{N}"
        shards.append(root / f"part{i}")
    return {"root": root, "model": model, "corpus": corpus, "whole": root / "whole", "shards": shards,
            "common": common}


def table_rows(db):
    return open_store(db).table.search().select(["usage_id", "doc"]).limit(None).to_arrow().to_pylist()


def test_each_shard_holds_the_usages_of_its_documents(built):
    whole = {r["usage_id"]: r["doc"] for r in table_rows(built["whole"])}
    seen: dict[str, str] = {}
    for i, db in enumerate(built["shards"]):
        rows = table_rows(db)
        assert rows and all(shard_of(r["doc"], N) == i for r in rows)
        assert not seen.keys() & {r["usage_id"] for r in rows}  # no usage in two shards
        seen.update({r["usage_id"]: r["doc"] for r in rows})
    assert seen == whole  # together: exactly the usages of one index over the whole corpus
    res = runner.invoke(app, ["index", "build", *built["common"], "--db", str(built["root"] / "again"),
                              "--shard", f"1/{N}"])
    assert res.exit_code == 0, res.output
    assert sorted(table_rows(built["root"] / "again"), key=str) == sorted(table_rows(built["shards"][1]),
                                                                          key=str)


def test_a_shard_without_documents_is_an_empty_index_searched_with_the_others(built):
    """A shard whose documents all hash elsewhere (more shards than documents, say) still builds: an
    empty, complete index, which the group searches as before (it failed with a TypeError when its empty
    side index was checked)."""
    corpus = built["root"] / "one-doc"
    corpus.mkdir()
    source = sorted(built["corpus"].iterdir())[0]
    doc = corpus / source.name
    doc.write_text(source.read_text())
    full, empty = shard_of(str(doc), N), (shard_of(str(doc), N) + 1) % N
    common = [str(corpus), "--words", ",".join(WORDS), "--model", built["model"], "--layers", "1,2", "--json"]
    dbs = {}
    for name, i in (("full", full), ("empty", empty)):
        dbs[name] = built["root"] / f"one-doc-{name}"
        res = runner.invoke(app, ["index", "build", *common, "--db", str(dbs[name]), "--shard", f"{i}/{N}"])
        assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["usages"] == 0
    stats = index_stats(dbs["empty"])
    assert stats["usages"] == 0 and stats["complete"]
    q = "we sat on the bank of the river by the water"
    assert search_usages(dbs["empty"], q, "bank", k=3)["results"] == []
    alone = search_usages(dbs["full"], q, "bank", k=4)["results"]
    assert len(alone) == 4 and search_usages([dbs["full"], dbs["empty"]], q, "bank", k=4)["results"] == alone


def test_shards_searched_as_one_equal_the_whole_index(built):
    for word in WORDS:
        q = f"we sat on the {word} of the river by the water"
        one = search_usages(built["whole"], q, word, k=8)
        many = search_usages(built["shards"], q, word, k=8)
        assert len(many["results"]) == 8 and same_up_to_ties(one["results"], many["results"])
        assert many["model"] == one["model"] and many["layer"] == one["layer"] == 2
    q = "near the old bank we sat"
    layer1 = search_usages(built["shards"], q, "bank", k=5, layer=1)["results"]
    assert same_up_to_ties(search_usages(built["whole"], q, "bank", k=5, layer=1)["results"], layer1)
    uid = layer1[0]["usage_id"]  # more like a usage of one shard: searched in all of them
    assert same_up_to_ties(like_usage(built["whole"], uid, k=6)["results"],
                           like_usage(built["shards"], uid, k=6)["results"])
    stats = index_stats(built["shards"])
    assert stats["usages"] == index_stats(built["whole"])["usages"] and stats["complete"]
    assert stats["shard"] == [f"{i}/{N}"
                              for i in range(N)] and stats["words"] == index_stats(built["whole"])["words"]
    rows, x = ShardedReader([open_store(p) for p in built["shards"]]).vectors_of("bank")
    rows1, x1 = open_store(built["whole"]).vectors_of("bank")
    assert [r["usage_id"] for r in rows] == [r["usage_id"] for r in rows1]
    np.testing.assert_allclose(x, x1, atol=2e-3)


def test_cli_searches_repeated_dbs_as_one(built):
    dbs = [a for p in built["shards"] for a in ("--db", str(p))]
    q = ["the bank of the old river", "--word", "bank", "-k", "6", "--json"]
    res = runner.invoke(app, ["index", "search", *dbs, *q])
    assert res.exit_code == 0, res.output
    one = runner.invoke(app, ["index", "search", "--db", str(built["whole"]), *q])
    assert same_up_to_ties(json.loads(one.stdout)["results"], json.loads(res.stdout)["results"])
    res = runner.invoke(app, ["index", "stats", *dbs])
    assert res.exit_code == 0 and f"shards 0/{N}, 1/{N}, 2/{N}" in res.stdout
    res = runner.invoke(app, ["index", "search", *dbs, "--db", str(built["shards"][0]), *q])
    assert res.exit_code == 2 and "is given twice" in res.output


def test_indexes_that_disagree_are_refused_naming_what_differs(built, tmp_path):
    corpus = str(built["corpus"])
    other = build_index(corpus, tmp_path / "words", ["bank", "river"], model=built["model"], layers=[1, 2])
    with pytest.raises(IndexMismatchError,
                       match=r"they differ in words: bank, spring \(2 words\) in .*part0, "
                                                 r"bank, river \(2 words\)"):
        search_usages([built["shards"][0], other.db], "the bank", "bank")
    build_index(corpus, tmp_path / "layers", WORDS, model=built["model"], layers=[2])
    with pytest.raises(IndexMismatchError, match="they differ in layers: 1, 2 in .*, 2 in "):
        search_usages([built["shards"][0], tmp_path / "layers"], "the bank", "bank")
    seed = str(tiny_model(tmp_path, init=0.5, seed=1, name="other-model"))
    build_index(corpus, tmp_path / "model", WORDS, model=seed, layers=[1, 2],
                encoder=make_index_encoder(seed, [1, 2]))
    with pytest.raises(IndexMismatchError, match="they differ in model"):
        open_store([built["shards"][1], tmp_path / "model"])
    copy = tmp_path / "copy"
    res = runner.invoke(app, ["index", "build", *built["common"], "--db", str(copy), "--shard", f"2/{N}"])
    assert res.exit_code == 0
    with pytest.raises(InputError, match=f"both shard 2/{N}"):
        open_store([built["shards"][2], copy])
    res = runner.invoke(app, ["index", "build", *built["common"], "--db", str(tmp_path / "half"), "--shard",
                              "0/2"])
    assert res.exit_code == 0
    with pytest.raises(InputError, match="shards of different splits"):
        open_store([built["shards"][1], tmp_path / "half"])


def test_a_bad_shard_is_one_clear_line(built, tmp_path):
    for bad, why in (("3/3", "shard 3/3 does not exist"), ("1-3", "is not I/N"), ("0/0", "does not exist")):
        res = runner.invoke(app, ["index", "build", *built["common"], "--db", str(tmp_path / "x"), "--shard",
                                  bad])
        assert res.exit_code == 2 and why in res.output and "Traceback" not in res.output
        assert not (tmp_path / "x").exists() or not any((tmp_path / "x").iterdir())
    assert parse_shard(" 2/5 ") == (2, 5)


def test_the_lab_searches_repeated_indexes_as_one(built):
    need("fastapi")
    need("httpx")
    from fastapi.testclient import TestClient

    from contextlens.web import create_app

    # what `lab --index A --index B` does
    lab = create_app(index=[str(p) for p in built["shards"]], models=["minilm"])
    with TestClient(lab, raise_server_exceptions=False, base_url="http://127.0.0.1") as client:
        info = client.get("/api/index").json()
        assert info["loaded"] and info["stats"]["usages"] == index_stats(built["whole"])["usages"]
        got = client.post("/api/index/search", json={"sentence": "the bank of the river", "word": "bank",
                                                     "k": 5})
        assert got.status_code == 200, got.text
        want = search_usages(built["whole"], "the bank of the river", "bank", k=5)["results"]
        assert same_up_to_ties(want, got.json()["results"])
    shard = str(built["shards"][0])
    res = runner.invoke(app, ["lab", "--index", shard, "--index", shard, "--no-browser", "--port", "0"])
    assert res.exit_code == 2 and "is given twice" in res.output  # before the lab serves


def test_all_words_shards_count_the_words_over_the_whole_corpus(built, tmp_path):
    corpus, model = str(built["corpus"]), built["model"]
    got = [build_index(corpus, tmp_path / f"all{i}", all_words=True, min_count=20, model=model, layers=[2],
                       shard=(i, N)) for i in range(2)]
    words = [open_store(r.db).params["words"] for r in got]
    assert words[0] == words[1] and {"bank", "spring", "the"} <= set(words[0])
    assert got[0].usages and got[1].usages and not set(got[0].words.items()) == set(got[1].words.items())
    assert open_store([r.db for r in got]).count() == got[0].usages + got[1].usages
