"""The lab's JSON API through FastAPI's TestClient: shapes, numbers equal to the library's,
limits (422 naming the limit), errors (4xx with a message, never a 500 with a trace)."""

from __future__ import annotations

import re
import time

import pytest

from tests.missing import need

need("fastapi")
need("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from contextlens.analysis.attribution import attribute  # noqa: E402
from contextlens.analysis.explore import explore  # noqa: E402
from contextlens.analysis.layers import layer_divergence  # noqa: E402
from contextlens.analysis.senses import senses  # noqa: E402
from contextlens.analysis.toy import toy_compare  # noqa: E402
from contextlens.encoders.registry import make_encoder  # noqa: E402
from contextlens.text import tokenize  # noqa: E402
from contextlens.web import create_app  # noqa: E402
from contextlens.web.app import ASSETS  # noqa: E402
from contextlens.web.limits import Limits  # noqa: E402

S = ["The bank approved my loan.", "We sat on the bank of the river.", "She put money in the bank."]
SENSES = S + ["Reeds grew along the bank of the stream.", "The bank raised its rates.",
              "The boat drifted to the far bank."]


@pytest.fixture(scope="module")
def app():
    return create_app(limits=Limits(max_chars=120, max_sentences=8, max_attention_words=12))


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1")


@pytest.fixture(scope="module")
def glove(app):
    return app.state.lab.table()


def ok(resp):
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_status_lists_encoders_limits_and_resources(client):
    st = ok(client.get("/api/status"))
    assert st["encoders"][:3] == ["static", "average", "attention"] and "minilm" in st["encoders"]
    assert st["limits"] == {**Limits().as_dict(), "max_chars": 120, "max_sentences": 8,
                            "max_attention_words": 12}
    assert st["resources"]["glove-6b-50d"]["state"] in {"not loaded", "loading", "ready"}


def test_openapi_documents_every_route(client):
    schema = ok(client.get("/openapi.json"))
    for path in ("/api/status", "/api/toy", "/api/tokens", "/api/encode", "/api/layers", "/api/explore",
                 "/api/compare", "/api/contextualize", "/api/attention", "/api/senses", "/api/models/load"):
        assert path in schema["paths"], path
    assert "ToyRequest" in schema["components"]["schemas"]


def test_page_and_plotly_are_served_locally(client):
    page = client.get("/")
    assert page.status_code == 200 and "/vendor/plotly.min.js" in page.text
    assert client.get("/docs").status_code == 404  # Swagger UI would load scripts from a CDN
    js = client.get("/vendor/plotly.min.js")
    assert js.status_code == 200 and len(js.content) > 1_000_000 and b"plotly" in js.content[:2000].lower()
    for name in ("common.js", "toy.js", "lab.js", "lab.css"):
        assert client.get(f"/static/{name}").status_code == 200
    # nothing from the internet: no http(s) URL other than the SVG namespace
    for f in ASSETS.iterdir():
        urls = set(re.findall(r"https?://[^\s\"'`)]+", f.read_text()))
        assert urls <= {"http://www.w3.org/2000/svg"}, (f.name, urls)


@pytest.mark.parametrize("body", [
    {},
    {"neighbours": [["money"], ["river", "sat"]], "method": "attention", "include_self": False, "scale": 2.0},
    {"neighbours": [["loan", "water"], []], "method": "average", "alpha": 1.0,
     "vectors": {"bank": [0.3, -0.2], "water": [0.0, 1.5]}},
])
def test_toy_equals_the_library(client, body):
    got = ok(client.post("/api/toy", json=body))
    kw = {k: v for k, v in body.items() if k != "neighbours"}
    want = toy_compare(body.get("neighbours", [["loan", "money"], ["river", "water"]]), **kw)
    assert got == want  # every number, exactly (JSON round-trips floats)
    assert ok(client.get("/api/toy/defaults"))["methods"] == ["average", "attention"]


def test_toy_errors_are_4xx(client):
    r = client.post("/api/toy", json={"neighbours": [["cash"], []]})
    assert r.status_code == 400 and "'cash' is not in the toy neighbours" in r.json()["detail"]
    r = client.post("/api/toy", json={"neighbours": [[], []]})
    assert r.status_code == 400 and "no context words" in r.json()["detail"]
    assert client.post("/api/toy", json={"method": "softmax"}).status_code == 422


def test_tokens_are_the_library_tokenize(client):
    got = ok(client.post("/api/tokens", json={"sentences": S}))["sentences"]
    assert got == [[{"text": w.text, "start": w.start, "end": w.end} for w in tokenize(s)] for s in S]


def test_encode_shapes(client):
    got = ok(client.post("/api/encode", json={"sentences": S[:2], "encoder": "attention"}))
    assert got["layer_names"] == ["static", "attention 1"]
    assert [s["words"] for s in got["sentences"]] == [[w.text.lower() for w in tokenize(s)] for s in S[:2]]
    assert got["sentences"][0]["dim"] == 50 and got["sentences"][0]["heads"] == 1


def test_layers_every_pair_equals_the_library(client, glove):
    got = ok(client.post("/api/layers", json={"sentences": S, "word": "bank", "encoder": "average",
                                              "alpha": 0.2}))
    pairs = [(S[0], S[1]), (S[0], S[2]), (S[1], S[2])]
    want = layer_divergence(make_encoder("average", vectors=glove, alpha=0.2), pairs, "bank")
    assert [p["label"] for p in got["pairs"]] == ["S0–S1", "S0–S2", "S1–S2"]  # the JSON's indices
    assert [p["cosine_by_layer"] for p in got["pairs"]] == [p["cosine_by_layer"] for p in want["pairs"]]
    assert got["layer_names"] == ["static", "mixed"]


def test_explore_matrix_and_projection_equal_the_library(client, glove):
    got = ok(client.post("/api/explore", json={"sentences": S, "word": "bank", "encoder": "attention",
                                               "layer": 1}))
    want = explore(make_encoder("attention", vectors=glove), S, "bank", layer=1, projection="pca")
    assert got["words"][0]["matrix"] == want["words"][0]["matrix"]
    assert got["projection"]["points"] == want["projection"]["points"]
    assert len(got["projection"]["points"]) == 3


def test_explore_takes_every_occurrence_when_asked(client, glove):
    """A sentence holding the word twice: explore's error says to send "occurrence": "all", and the
    lab's matrix asks for it; the request used to be refused (422: "should be a valid integer")."""
    twice = ["The bank by the bank closed.", *S[1:]]
    body = {"sentences": twice, "word": "bank", "encoder": "average", "occurrence": "all"}
    got = ok(client.post("/api/explore", json=body))["words"][0]
    want = explore(make_encoder("average", vectors=glove), twice, "bank", occurrence="all")["words"][0]
    assert got["positions"] == [0, 0, 1, 2] and got["matrix"] == want["matrix"]
    r = client.post("/api/explore", json={**body, "occurrence": None})
    assert r.status_code == 400 and '"occurrence": "all"' in r.json()["detail"]
    r = client.post("/api/senses", json={**body, "sentences": SENSES})  # senses: one usage per sentence
    assert r.status_code == 422 and "occurrence" in r.json()["detail"], r.text


def test_attention_equals_the_library(client, glove):
    body = {"sentence": S[1], "word": "bank", "encoder": "attention", "include_self": False, "head": 0,
            "rollout": True}
    got = ok(client.post("/api/attention", json=body))
    want = attribute(make_encoder("attention", vectors=glove, include_self=False), S[1], "bank",
                     layer=-1, head=0, rollout=True)
    assert got["selected"]["matrix"] == want["selected"]["matrix"]
    assert got["selected"]["rollout_matrix"] == want["selected"]["rollout_matrix"]
    r = client.post("/api/attention", json={**body, "encoder": "static", "head": None})
    assert r.status_code == 400 and "no attention weights" in r.json()["detail"]


def test_senses_equal_the_library(client, glove):
    got = ok(client.post("/api/senses", json={"sentences": SENSES, "word": "bank", "encoder": "average"}))
    want = senses(make_encoder("average", vectors=glove), SENSES, "bank", missing="skip", projection="pca")
    assert (got["k"], got["labels"], got["silhouette"]) == (want["k"], want["labels"], want["silhouette"])
    assert got["projection"]["points"] == want["projection"]["points"]


@pytest.mark.parametrize("path, body, limit", [
    ("/api/layers", {"sentences": ["bank " * 30, "the bank"], "word": "bank"},
     "the limit is 120 characters per sentence"),
    ("/api/senses", {"sentences": ["the bank"] * 9, "word": "bank"}, "the limit is 8 sentences per request"),
    ("/api/attention", {"sentence": "the bank " * 7, "word": "bank", "encoder": "attention"},
     "the limit is 12 words per sentence for attention"),
    ("/api/tokens", {"sentences": ["x" * 121]}, "the limit is 120 characters per sentence"),
])
def test_limits_give_422_naming_the_limit(client, path, body, limit):
    r = client.post(path, json=body)
    assert r.status_code == 422 and limit in r.json()["detail"], r.text


@pytest.mark.parametrize("kwargs, status, message", [
    ({"content": b"{not json", "headers": {"Content-Type": "application/json"}}, 422, "malformed JSON"),
    ({"json": {"sentences": S[:2]}}, 422, "word: Field required"),
    ({"json": {"sentences": S[:2], "word": "bank", "colour": "red"}}, 422, "colour"),
    ({"json": {"sentences": S[:2], "word": "zebra"}}, 400, "'zebra' is not a word of the text"),
    ({"json": {"sentences": S[:2], "word": "bank", "encoder": "bert"}}, 400, "unknown encoder 'bert'"),
    ({"json": {"sentences": ["", "the bank"], "word": "bank"}}, 400, "sentence 0 is empty"),
    ({"json": {"sentences": S[:2], "word": "bank", "encoder": "average", "alpha": 3}}, 422,
     "alpha: Input should be less than or equal to 1"),
])
def test_bad_input_is_a_clear_4xx(client, kwargs, status, message):
    r = client.post("/api/layers", **kwargs)
    assert r.status_code == status and message in r.json()["detail"], r.text


def test_unknown_model_load_is_400(client):
    r = client.post("/api/models/load", json={"name": "gpt-99"})
    assert r.status_code == 400 and "unknown model 'gpt-99'" in r.json()["detail"]


def test_an_unexpected_error_is_a_500_json_without_a_trace(app, client, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("secret internals")

    monkeypatch.setattr(app.state.lab, "encoder", boom)
    r = client.post("/api/layers", json={"sentences": S[:2], "word": "bank"})
    assert r.status_code == 500 and r.json()["error"] == "InternalError"
    assert "Traceback" not in r.text and "secret" not in r.text


def test_minilm_loads_in_the_background_then_matches_the_library(app, client):
    first = ok(client.post("/api/models/load", json={"name": "minilm"}))
    assert first["state"] in {"loading", "ready"}
    deadline = time.monotonic() + 120
    while ok(client.get("/api/status"))["resources"]["minilm"]["state"] != "ready":
        assert time.monotonic() < deadline, "minilm did not load in 120 s"
        time.sleep(0.2)
    got = ok(client.post("/api/layers", json={"sentences": S[:2], "word": "bank", "encoder": "minilm"}))
    want = layer_divergence(app.state.lab.encoder("minilm"), [tuple(S[:2])], "bank")
    assert len(got["layer_names"]) == 7
    assert got["pairs"][0]["cosine_by_layer"] == want["pairs"][0]["cosine_by_layer"]
    att = ok(client.post("/api/attention", json={"sentence": S[1], "word": "bank", "encoder": "minilm",
                                                 "layer": 3, "head": 5}))
    assert att["heads"] == 12 and len(att["selected"]["matrix"]) == len(tokenize(S[1]))
    # the model's folder on this machine is not sent (its meta has it as "path")
    assert app.state.lab.encoder("minilm").encode(S[:1])[0].meta["path"].startswith("/")
    for route, body in (("/api/encode", {"sentences": S[:1]}),
                        ("/api/explore", {"sentences": S[:2], "word": "bank"})):
        text = client.post(route, json={**body, "encoder": "minilm"}).text
        assert '"path"' not in text and "site-packages" not in text, route


def test_a_table_loads_once_when_requests_race(monkeypatch):
    import threading

    from contextlens.vectors import EmbeddingTable
    from contextlens.web import state as state_mod

    calls = []

    def slow_load(name):
        calls.append(name)
        time.sleep(0.3)
        return EmbeddingTable(["the", "bank", "river"], [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]], name=name)

    monkeypatch.setattr(state_mod, "resolve_vectors", slow_load)
    lab = state_mod.LabState(vectors="tiny")
    seen = []
    workers = [threading.Thread(target=lambda: seen.append(lab.encoder("attention", scale=1.0)))
               for _ in range(4)]
    for w in workers:
        w.start()
    deadline = time.monotonic() + 5
    while not calls and time.monotonic() < deadline:  # until one thread is inside the (slow) load
        time.sleep(0.01)
    assert lab.status()["resources"]["tiny"]["state"] == "loading"
    for w in workers:
        w.join()
    assert calls == ["tiny"] and len({id(e) for e in seen}) == 1
    assert lab.status()["resources"]["tiny"]["state"] == "ready"
    enc = seen[0]
    first = enc.encode(["the bank", "the river"])
    assert enc.encode(["the river"])[0] is first[1]  # a sentence seen before is not encoded again


def test_an_undefined_number_reaches_the_lab_as_null(client, monkeypatch):
    """NaN and infinities (an undefined measure: a Spearman over one word, the CKA of a constant
    layer) are null in the lab's JSON, as in the CLI's --json, never a 500."""
    import numpy as np

    from contextlens.web import api

    undefined = {"cosine_by_layer": [1.0, float("nan")], "spread": np.float32("inf"),
                 "matrix": np.array([[np.nan, 0.5]])}
    monkeypatch.setattr(api, "compare", lambda *args, **kwargs: undefined)
    got = ok(client.post("/api/compare", json={"sentences": S[:2], "word": "bank", "encoder": "static"}))
    assert got == {"cosine_by_layer": [1.0, None], "spread": None, "matrix": [[None, 0.5]]}
