"""The lab survives every input (issue 10): a bound on every request field (422 naming it),
no 500 for a lone surrogate, only the lab's own Host names, a body size limit, and the
numeric steps in worker processes, so a crash there is one JSON answer and the lab keeps
serving."""

from __future__ import annotations

import ctypes
import json
import os
import signal
import time

import pytest

from tests.missing import need

need("fastapi")
need("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from contextlens.web import create_app  # noqa: E402
from contextlens.web.limits import CAPS  # noqa: E402

S = ["The bank approved my loan.", "We sat on the bank of the river.", "She put money in the bank.",
     "Reeds grew along the bank of the stream.", "The bank raised its rates."]
WORD = {"sentences": S[:2], "word": "bank"}
ONE = {"sentence": S[1], "word": "bank"}


@pytest.fixture(scope="module")
def app():
    return create_app(models=[])  # no model is offered but the default, which these tests never load


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1") as c:
        yield c  # with: the lifespan runs (the workers start, and stop at the end)


def ok(resp):
    assert resp.status_code == 200, resp.text
    return resp.json()


def post_raw(client, path: str, text: str):
    return client.post(path, content=text.encode(), headers={"Content-Type": "application/json"})


# ---- one bound for every field ----------------------------------------------------------------
def unbounded(schema: dict, defs: dict, where: str = "") -> list[str]:
    """The places in a request schema with no bound: a string without maxLength, an array
    without maxItems, an object without maxProperties, a number without both limits."""
    if "$ref" in schema:
        return unbounded(defs[schema["$ref"].split("/")[-1]], defs, where)
    out = []
    for key in ("anyOf", "oneOf", "allOf"):
        for i, sub in enumerate(schema.get(key, [])):
            out += unbounded(sub, defs, f"{where}|{i}")
    kind = schema.get("type")
    if "enum" in schema or "const" in schema or kind in ("boolean", "null"):
        return out
    if kind == "string" and "maxLength" not in schema:
        out.append(where)
    if kind in ("integer", "number") and not ({"minimum", "exclusiveMinimum"} & set(schema)
                                              and {"maximum", "exclusiveMaximum"} & set(schema)):
        out.append(where)
    if kind == "array":
        if "maxItems" not in schema:
            out.append(where)
        out += unbounded(schema.get("items", {}), defs, f"{where}[]")
    if kind == "object":
        if "properties" in schema:
            for name, sub in schema["properties"].items():
                out += unbounded(sub, defs, f"{where}.{name}")
        elif "maxProperties" not in schema:
            out.append(where)
        if isinstance(schema.get("additionalProperties"), dict):
            out += unbounded(schema["additionalProperties"], defs, f"{where}{{}}")
        if isinstance(schema.get("propertyNames"), dict):
            out += unbounded({"type": "string", **schema["propertyNames"]}, defs, f"{where}{{key}}")
    return out


def test_every_field_of_every_request_has_a_bound(client):
    spec = ok(client.get("/openapi.json"))
    defs = spec["components"]["schemas"]
    bodies = [(path, op["requestBody"]["content"]["application/json"]["schema"])
              for path, ops in spec["paths"].items() for op in ops.values() if "requestBody" in op]
    assert len(bodies) >= 12
    missing = [f"{path}{where}" for path, schema in bodies for where in unbounded(schema, defs)]
    assert missing == []


@pytest.mark.parametrize("path, body, message", [
    ("/api/tokens", {"sentences": []}, "sentences: List should have at least 1 item"),
    ("/api/tokens", {"sentences": ["a"] * (CAPS.max_sentences + 1)},
     "sentences: List should have at most 64 items"),
    ("/api/tokens", {"sentences": ["x" * 1001]}, "sentences.0: String should have at most 1000 characters"),
    ("/api/layers", {**WORD, "word": "w" * 101}, "word: String should have at most 100 characters"),
    ("/api/layers", {**WORD, "word": ""}, "word: String should have at least 1 character"),
    ("/api/layers", {**WORD, "encoder": "e" * 101}, "encoder: String should have at most 100 characters"),
    ("/api/layers", {**WORD, "encoder": "average", "alpha": -0.1},
     "alpha: Input should be greater than or equal to 0"),
    ("/api/layers", {**WORD, "encoder": "attention", "scale": 1e308},
     "scale: Input should be less than or equal to 100"),
    ("/api/explore", {**WORD, "layer": 101}, "layer: Input should be less than or equal to 100"),
    ("/api/explore", {**WORD, "layer": -(10**30)}, "layer: Input should be greater than or equal to -100"),
    ("/api/senses", {**WORD, "k": 65}, "k.constrained-int: Input should be less than or equal to 64"),
    ("/api/senses", {**WORD, "k": 0}, "k.constrained-int: Input should be greater than or equal to 1"),
    ("/api/contextualize", {**ONE, "probes": ["river"] * 21}, "probes: List should have at most 20 items"),
    ("/api/contextualize", {**ONE, "probes": ["r" * 101]},
     "probes.0: String should have at most 100 characters"),
    ("/api/attention", {**ONE, "head": 64}, "head: Input should be less than or equal to 63"),
    ("/api/attention", {**ONE, "occurrence": 101}, "occurrence: Input should be less than or equal to 100"),
    ("/api/compare", {"sentences": S[:3], "word": "bank"}, "sentences: List should have at most 2 items"),
    ("/api/toy", {"neighbours": [["loan"] * 11, ["river"]]},
     "neighbours.0: List should have at most 10 items"),
    ("/api/toy", {"neighbours": [["loan"]]}, "neighbours: List should have at least 2 items"),
    ("/api/toy", {"vectors": {"bank": [1, 2, 3]}}, "vectors.bank: List should have at most 2 items"),
    ("/api/toy", {"vectors": {"bank": [11, 0]}}, "vectors.bank.0: Input should be less than or equal to 10"),
    ("/api/toy", {"vectors": {f"w{i}": [0, 0] for i in range(11)}},
     "vectors: Dictionary should have at most 10 items"),
    ("/api/models/load", {"name": "m" * 101}, "name: String should have at most 100 characters"),
    ("/api/index/search", {**ONE, "k": 51}, "k: Input should be less than or equal to 50"),
    ("/api/index/like", {"usage_id": "u" * 201}, "usage_id: String should have at most 200 characters"),
])
def test_a_value_past_its_bound_is_a_422_naming_field_and_limit(client, path, body, message):
    r = client.post(path, json=body)
    assert r.status_code == 422 and message in r.json()["detail"], r.text


def test_a_layer_within_the_bound_but_not_in_the_model_is_a_400(client):
    r = client.post("/api/contextualize", json={**ONE, "layer": 99})  # issue 10: this was a 500
    assert (r.status_code == 400
            and "layer 99 is not available: the layers are 0" in r.json()["detail"]), r.text


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused(client, literal):
    r = post_raw(client, "/api/layers", f'{{"sentences": ["the bank", "a bank"], "word": "bank", '
                                        f'"encoder": "average", "alpha": {literal}}}')
    assert r.status_code == 422 and "alpha: Input should be a finite number" in r.json()["detail"], r.text


def test_a_body_over_the_size_limit_is_a_413_before_parsing(client):
    r = post_raw(client, "/api/tokens", '{"sentences": ["' + "x" * CAPS.max_body_bytes + '"]}')
    assert r.status_code == 413 and r.json()["error"] == "LimitError"
    assert "over 1,048,576 bytes" in r.json()["detail"]
    assert ok(client.post("/api/tokens", json={"sentences": ["the bank"]}))


# ---- text that is not text --------------------------------------------------------------------
@pytest.mark.parametrize("path, body, field", [
    ("/api/tokens", {"sentences": ["\ud800 bank"]}, "sentences.0"),
    ("/api/layers", {"sentences": ["the bank", "a bank"], "word": "ba\udfffnk"}, "word"),
    ("/api/contextualize", {**ONE, "probes": ["river", "\udc80"]}, "probes.1"),
    ("/api/toy", {"vectors": {"\ud83d": [0.0, 1.0]}}, ".[key]"),  # pydantic shows the key as U+FFFDs
])
def test_a_lone_surrogate_is_a_422_not_a_500(client, path, body, field):
    r = post_raw(client, path, json.dumps(body))  # ensure_ascii: "\ud800" as JSON allows it
    assert r.status_code == 422, r.text
    assert f"{field}: Value error, the text has a lone surrogate (U+" in r.json()["detail"]
    assert "send valid UTF-8" in r.json()["detail"]


def test_real_astral_text_still_works(client):
    got = ok(client.post("/api/tokens", json={"sentences": ["🌊 the bank"]}))
    assert [w["text"] for w in got["sentences"][0]] == ["🌊", "the", "bank"]


# ---- only the lab's own host names (DNS rebinding) --------------------------------------------
@pytest.mark.parametrize("base", ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"])
def test_the_loopback_names_are_served(app, base):
    assert TestClient(app, base_url=base).get("/api/status").status_code == 200


@pytest.mark.parametrize("base", ["http://evil.example", "http://127.0.0.1.evil.example:8000",
                                  "http://10.0.0.7:8000"])
def test_a_foreign_host_is_refused(app, base):
    r = TestClient(app, base_url=base).get("/api/status")
    # the lab's JSON error (test_web_messages)
    assert r.status_code == 400 and r.json()["error"] == "HostError"


def test_allowed_hosts_names_more_or_any():
    named = create_app(allowed_hosts=["lab.example.org"])
    assert TestClient(named, base_url="http://lab.example.org").get("/api/status").status_code == 200
    assert TestClient(named, base_url="http://127.0.0.1").get("/api/status").status_code == 400
    assert TestClient(create_app(allowed_hosts=None),
                      base_url="http://any.example").get("/api/status").status_code == 200


# ---- the numeric steps run in worker processes -------------------------------------------------
EXPLORE = {"sentences": S, "word": "bank", "encoder": "average", "projection": "tsne"}


def wait_dead(pids: list[int], pool, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while set(pool.pids()) & set(pids):
        assert time.monotonic() < deadline
        time.sleep(0.02)


def test_projections_run_in_a_worker_that_is_replaced_when_killed(app, client):
    pool = app.state.lab.pool
    first = ok(client.post("/api/explore", json=EXPLORE))
    pids = pool.pids()
    assert pids and os.getpid() not in pids
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    wait_dead(pids, pool)
    again = ok(client.post("/api/explore", json=EXPLORE))
    assert again["projection"]["points"] == first["projection"]["points"]
    assert pool.pids() and not set(pool.pids()) & set(pids)


def test_a_native_crash_in_the_worker_is_a_500_json_and_the_lab_keeps_serving(app, client, monkeypatch):
    pool = app.state.lab.pool
    real = pool.run
    monkeypatch.setattr(pool, "run", lambda fn, *a, **kw: real(ctypes.string_at, 0))  # SIGSEGV in the worker
    r = client.post("/api/senses", json={**EXPLORE, "k": 2})
    assert r.status_code == 500 and r.json()["error"] == "WorkerCrashedError", r.text
    assert "died of SIGSEGV" in r.json()["detail"] and "Traceback" not in r.text
    monkeypatch.undo()
    got = ok(client.post("/api/senses", json={**EXPLORE, "k": 2}))
    assert got["k"] == 2 and len(got["projection"]["points"]) == len(S)


def test_identical_usages_project_to_one_point_through_the_api(client):
    body = {"sentences": ["The bank.", "A bank."], "word": "bank", "projection": "tsne"}  # issue 10's request
    assert ok(client.post("/api/explore", json=body))["projection"]["points"] == [[0.0, 0.0], [0.0, 0.0]]
    # 2 distinct points
    r = client.post("/api/explore", json={**body, "projection": "umap", "encoder": "average"})
    assert r.status_code == 400 and "UMAP needs at least 4 points, got 2" in r.json()["detail"]


def test_status_reports_the_workers_and_the_cache(client):
    ok(client.post("/api/encode", json={"sentences": ["The bank approved my loan.", "We sat on the bank."]}))
    st = ok(client.get("/api/status"))
    assert st["workers"]["running"] >= 1 and st["workers"]["busy"] == 0
    assert 0 < st["cache"]["bytes"] <= st["cache"]["max_bytes"] and st["cache"]["encodings"] > 0


def test_unknown_routes_answer_in_the_labs_error_shape(client):
    r = client.get("/api/nothing")
    assert r.status_code == 404 and r.json() == {"detail": "Not Found", "error": "HTTPException"}
