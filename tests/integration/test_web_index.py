"""The lab's usage-index API (``contextlens lab --index PATH``) through FastAPI's TestClient:
results equal the library's (:func:`search_usages`, :func:`like_usage`) on the same index,
the lab's MiniLM encodes the queries (the model is not loaded twice), limits, clear errors,
and a bad ``--index`` fails before the lab serves."""

from __future__ import annotations

import pytest

from tests.missing import need

need("fastapi")
need("httpx")
need("lancedb")
need("torch")
need("transformers")

from fastapi.testclient import TestClient  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import contextlens.index.search as index_search  # noqa: E402
from contextlens.cli import app as cli_app  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from contextlens.index import build_index, index_stats, like_usage, search_usages  # noqa: E402
from contextlens.web import create_app  # noqa: E402
from contextlens.web.limits import Limits  # noqa: E402
from tests.integration.tiny_models import tiny_bert  # noqa: E402

WORDS = ["bank", "spring"]
FINANCE = ["The bank approved my loan after a long wait.", "She deposited her wages at the bank on Friday.",
           "The central bank raised interest rates again.", "He works as a teller in a small bank.",
           "Our bank charges a fee for every transfer."]
RIVER = ["We sat on the bank of the river and watched the boats.", "Reeds grew thick along the muddy bank.",
         "The canoe drifted towards the far bank of the stream.",
         "Otters dig their dens into the river bank.",
         "🌊 The flood washed away part of the <east> bank & the path."]
SEASON = ["The cherry trees blossom every spring.", "We plant tomatoes in late spring.",
          "Spring rain fell softly on the fields.", "In spring the days grow longer and warmer.",
          "The birds return to the lake each spring."]
COIL = ["The mattress lost a spring and now it squeaks.", "A steel spring keeps the door closed.",
        "The watch stopped because its spring broke.", "He replaced the spring in the old clock.",
        "Press the lever to compress the spring."]
CORPUS = {"finance-and-seasons.txt": FINANCE + SEASON, "rivers-and-coils.txt": RIVER + COIL}
QUERY = "They fished from the grassy bank of the river."


def write_corpus(root):
    root.mkdir(parents=True, exist_ok=True)
    for name, lines in CORPUS.items():
        (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    root = tmp_path_factory.mktemp("web-index")
    corpus = write_corpus(root / "corpus")
    result = build_index(corpus, root / "usages.lance", WORDS, model="minilm", layers=[3, 6])
    assert result.words == {"bank": 10, "spring": 10}
    return root / "usages.lance"


@pytest.fixture(scope="module")
def app(db):
    return create_app(index=db, limits=Limits(max_chars=200, max_results=12))


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1")


def ok(resp):
    assert resp.status_code == 200, resp.text
    return resp.json()


def ids(result):
    return [r["usage_id"] for r in result["results"]]


def assert_same(got, want, abs_tol=1e-6):
    """Equal results: every field exactly, similarities to ``abs_tol`` (a model run in another thread
    may differ in the last float32 bits)."""
    assert ids(got) == ids(want)  # the same usages, in the same order
    strip = [{k: v for k, v in r.items() if k != "similarity"} for r in got["results"]]
    assert strip == [{k: v for k, v in r.items() if k != "similarity"} for r in want["results"]]
    assert [r["similarity"] for r in got["results"]] == pytest.approx(
        [r["similarity"] for r in want["results"]], abs=abs_tol)
    assert {k: v for k, v in got.items() if k != "results"} == {k: v for k,
                                                                v in want.items() if k != "results"}


def test_index_info_is_the_library_stats(client, db):
    got = ok(client.get("/api/index"))
    assert got["loaded"] is True and got["encoder"] == "minilm" and got["max_results"] == 12
    assert got["stats"] == {**index_stats(db), "db": "usages.lance"}  # the folder's name, not its path here
    assert got["stats"]["words"] == {"bank": 10, "spring": 10} and got["stats"]["layers"] == [3, 6]
    assert (got["stats"]["model"] == "minilm" and got["stats"]["usages"] == 20
            and got["stats"]["size_bytes"] > 0)


def test_search_equals_the_library_and_reuses_the_labs_minilm(app, client, db, monkeypatch):
    def no_second_model(store):
        raise AssertionError("search_usages loaded its own model: the lab's minilm should encode the query")

    monkeypatch.setattr(index_search, "query_encoder", no_second_model)
    got = ok(client.post("/api/index/search", json={"sentence": QUERY, "word": "bank", "k": 10}))
    monkeypatch.undo()
    assert app.state.lab.status()["resources"]["minilm"]["state"] == "ready"  # loaded once, by the lab
    shared = app.state.lab.encoder("minilm")
    assert_same(got, search_usages(db, QUERY, "bank", k=10, encoder=shared))
    assert got["layer"] == 6 and got["model"] == "minilm" and len(got["results"]) == 10
    assert got["query"] == {"sentence": QUERY, "word": "bank", "form": "bank",
                            "start": QUERY.index("bank"), "end": QUERY.index("bank") + 4}
    # the library on its own (its own MiniLM, as `contextlens index search` runs it): same usages, same order
    assert_same(got, search_usages(db, QUERY, "bank", k=10), abs_tol=1e-4)
    # river senses first: the query is about a river bank
    assert {r["sentence"] for r in got["results"][:5]} == set(RIVER)
    sims = [r["similarity"] for r in got["results"]]
    assert sims == sorted(sims, reverse=True)
    for r in got["results"]:
        assert r["sentence"][r["start"]:r["end"]].lower() == "bank"


def test_search_at_a_layer_with_an_occurrence(app, client, db):
    body = {"sentence": "The spring in the clock broke last spring.", "word": "spring", "k": 4, "layer": 3,
            "occurrence": 1}
    got = ok(client.post("/api/index/search", json=body))
    want = search_usages(db, body["sentence"], "spring", k=4, layer=3, occurrence=1,
                         encoder=app.state.lab.encoder("minilm"))
    assert_same(got, want)
    assert got["layer"] == 3 and got["query"]["start"] == body["sentence"].rindex("spring")


def test_like_equals_the_library(client, db):
    first = ok(client.post("/api/index/search", json={"sentence": QUERY, "word": "bank", "k": 1}))
    uid = first["results"][0]["usage_id"]
    got = ok(client.post("/api/index/like", json={"usage_id": uid, "k": 5}))
    assert got == like_usage(db, uid, k=5)
    assert got["query"]["usage_id"] == uid and uid not in ids(got) and len(got["results"]) == 5
    at3 = ok(client.post("/api/index/like", json={"usage_id": uid, "k": 3, "layer": 3}))
    assert at3 == like_usage(db, uid, k=3, layer=3) and at3["layer"] == 3


@pytest.mark.parametrize("path, body", [
    ("/api/index/search", {"sentence": QUERY, "word": "bank", "k": 13}),
    ("/api/index/like", {"usage_id": "x", "k": 50}),
])
def test_k_over_the_limit_is_422_naming_the_limit(client, path, body):
    r = client.post(path, json=body)
    assert r.status_code == 422 and "the limit is 12 usages per search" in r.json()["detail"], r.text
    # past the request schema's own cap (50), the schema says so before the server's limit
    r = client.post(path, json={**body, "k": 500})
    assert (r.status_code == 422
            and "k: Input should be less than or equal to 50" in r.json()["detail"]), r.text


@pytest.mark.parametrize("path, body, status, message", [
    ("/api/index/search", {"sentence": "The zebra ran.", "word": "zebra"}, 400,
     "'zebra' is not a target word of"),
    ("/api/index/search", {"sentence": "The bank by the bank.", "word": "bank"}, 400, "occurrence=0..1"),
    ("/api/index/search", {"sentence": "We swam.", "word": "bank"}, 400, "'bank' is not a word of"),
    ("/api/index/search", {"sentence": QUERY, "word": "bank", "layer": 4}, 400,
     "layer 4 is not stored in"),
    ("/api/index/search", {"sentence": "x" * 201 + " bank", "word": "bank"}, 422,
     "the limit is 200 characters per sentence"),
    ("/api/index/search", {"sentence": QUERY, "word": "bank", "k": 0}, 422, "k: Input should be greater"),
    ("/api/index/search", {"sentence": QUERY, "word": "bank", "colour": "red"}, 422, "colour"),
    ("/api/index/like", {"usage_id": "nope"}, 400, "no usage with id 'nope'"),
])
def test_bad_input_is_a_clear_4xx(client, path, body, status, message):
    r = client.post(path, json=body)
    assert r.status_code == status and message in r.json()["detail"], r.text
    assert "Traceback" not in r.text


def test_unknown_word_names_the_index_words(client):
    r = client.post("/api/index/search", json={"sentence": "The zebra ran.", "word": "zebra"})
    assert r.status_code == 400 and "its words are: bank, spring" in r.json()["detail"]


def test_without_an_index_the_error_says_how_to_start_the_lab():
    client = TestClient(create_app(), raise_server_exceptions=False, base_url="http://127.0.0.1")
    info = ok(client.get("/api/index"))
    assert (info["loaded"] is False and info["stats"] is None
            and "contextlens lab --index PATH" in info["hint"])
    for path, body in (("/api/index/search", {"sentence": QUERY, "word": "bank"}),
                       ("/api/index/like", {"usage_id": "abc"})):
        r = client.post(path, json=body)
        assert r.status_code == 409 and r.json()["error"] == "NoIndexError", r.text
        assert "contextlens lab --index PATH" in r.json()["detail"]


def test_openapi_documents_the_index_routes(client):
    paths = ok(client.get("/openapi.json"))["paths"]
    assert {"/api/index", "/api/index/search", "/api/index/like"} <= set(paths)
    assert "409" in paths["/api/index/search"]["post"]["responses"]


def test_a_bad_index_path_fails_at_startup(tmp_path):
    missing = tmp_path / "nowhere.lance"
    with pytest.raises(InputError, match="no usage index there; build one with `contextlens index build"):
        create_app(index=missing)
    result = CliRunner().invoke(cli_app, ["lab", "--index", str(missing), "--port", "1"])
    assert result.exit_code == 2
    out = " ".join(result.output.split())  # Rich may wrap the line
    assert "error:" in out and "no usage index there" in out and "contextlens lab on" not in out
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("not an index")
    result = CliRunner().invoke(cli_app, ["lab", "--index", str(tmp_path / "other"), "--port", "1"])
    assert result.exit_code == 2 and "not a contextlens usage index" in " ".join(result.output.split())


def test_an_index_of_a_model_the_lab_does_not_serve_loads_its_own(tmp_path):
    model = tiny_bert(tmp_path)
    corpus = write_corpus(tmp_path / "corpus")
    db = tmp_path / "tiny.lance"
    build_index(corpus, db, WORDS, model=str(model), layers=[1, 2])
    client = TestClient(create_app(index=db), raise_server_exceptions=False, base_url="http://127.0.0.1")
    info = ok(client.get("/api/index"))
    assert info["encoder"] is None and info["stats"]["model"] == str(model)
    got = ok(client.post("/api/index/search", json={"sentence": QUERY, "word": "bank", "k": 5, "layer": 1}))
    assert_same(got, search_usages(db, QUERY, "bank", k=5, layer=1))
