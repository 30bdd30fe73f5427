"""The lab's errors speak the API's language (issue 21 item 9, issue 20 items 4 and 5): a foreign
Host gets the lab's JSON error; a library message that tells the user to set a parameter names
the request field in the API and the flag in the CLI (never a CLI flag in an API answer); the
logit lens refuses a model that reads both sides of a word in one sentence saying why and
"pick smollm2 above", before its weights load; the cards that compare sentences compare those
that have the word and list the others; the encoder's reading guide comes with /api/encode."""

from __future__ import annotations

import itertools
import json
import re

import pytest

from tests.missing import need

need("fastapi")
need("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from contextlens.analysis.explore import explore  # noqa: E402
from contextlens.analysis.layers import layer_divergence  # noqa: E402
from contextlens.encoders.registry import make_encoder  # noqa: E402
from contextlens.errors import InputError, ask  # noqa: E402
from contextlens.web import create_app  # noqa: E402

S = ["The bank approved my loan.", "We sat on the bank of the river.", "A loan from the bank."]
CLI_FLAG = re.compile(r"(?<![\w-])--[a-z]")


@pytest.fixture(scope="module")
def app():
    return create_app(models=[])


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app, raise_server_exceptions=False, base_url="http://127.0.0.1")


def ok(resp):
    assert resp.status_code == 200, resp.text
    return resp.json()


def fails(resp, status=400) -> str:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"detail", "error"}, body
    return body["detail"]


# ---- a foreign Host: the lab's JSON error, not starlette's plain text ------------------------------
@pytest.mark.parametrize("base", ["http://evil.example", "http://127.0.0.1.evil.example:8000",
                                  "http://10.0.0.7:8000"])
def test_a_foreign_host_gets_the_labs_json_error(app, base):
    detail = fails(TestClient(app, base_url=base).get("/api/status"))
    host = base.split("//")[1].split(":")[0]
    assert f"does not answer the host name '{host}'" in detail and "127.0.0.1, localhost, [::1]" in detail
    assert TestClient(app, base_url=base).get("/").headers["content-type"] == "application/json"


def test_a_missing_or_broken_host_header_is_the_same_json_error(app, client):
    for host in ("", "[::1", "a:b:c"):
        detail = fails(client.get("/api/status", headers={"host": host}))
        assert "without a valid Host header" in detail


# ---- library messages name request fields in the API, flags in the CLI -----------------------------
ERRORS = [  # (path, body, what the answer must tell the user to send or pick)
    ("/api/attention", {"sentence": S[1], "word": "bank", "encoder": "static"},
     "pick attention or average above"),
    ("/api/views/occlusion", {"sentence": S[1], "word": "bank", "encoder": "static"}, "no attention weights"),
    ("/api/explore", {"sentences": S, "word": "loan", "encoder": "static"}, 'send "missing": "skip"'),
    ("/api/layers", {"sentences": S, "word": "loan", "encoder": "static"}, 'send "missing": "skip"'),
    ("/api/explore", {"sentences": ["The bank by the bank.", S[1]], "word": "bank", "encoder": "static"},
     'send "occurrence": 0'),
    ("/api/layers", {"sentences": ["The bank by the bank.", S[1]], "word": "bank", "encoder": "static"},
     'send "occurrence": 0'),
    ("/api/views/lens", {"model": "static", "sentence": S[1], "word": "bank"}, "pick smollm2 above"),
    ("/api/views/neighbours", {"encoder": "static", "sentence": "The embankment gave way.",
                               "word": "embankment", "contrast": 0.5}, 'send "contrast": 0'),
]


@pytest.mark.parametrize("path, body, says", ERRORS)
def test_api_errors_name_request_fields_not_cli_flags(client, path, body, says):
    detail = fails(client.post(path, json=body))
    assert says in detail and not CLI_FLAG.search(detail), detail
    for field in re.findall(r'send "(\w+)"', detail):  # each field it names is one the route takes
        schema = client.app.openapi()["paths"][path]["post"]["requestBody"]["content"]["application/json"][
            "schema"
        ]
        name = schema["$ref"].split("/")[-1]
        assert field in client.app.openapi()["components"]["schemas"][name]["properties"], (field, name)
    if "send" in says:  # and sending it answers
        field, value = re.search(r'send "(\w+)": (\S+)', says).groups()
        ok(client.post(path, json={**body, field: __import__("json").loads(value)}))


def test_the_cli_words_the_same_instruction_as_its_flag():
    from contextlens.cli._common import cli_phrase
    from contextlens.errors import phrase
    from contextlens.web.app import api_phrase

    err = InputError(f"or skip such sentences: {ask('missing', 'skip')}; {ask('occurrence', 'all')}")
    assert phrase(err, cli_phrase) == "or skip such sentences: add --skip-missing; use --occurrence all"
    assert (
        phrase(err, api_phrase) == 'or skip such sentences: send "missing": "skip"; send "occurrence": "all"'
    )
    assert str(err) == "or skip such sentences: pass missing='skip'; pass occurrence='all'"


def test_the_cli_prints_its_flags(tmp_path):
    from typer.testing import CliRunner

    from contextlens.cli import app as cli

    result = CliRunner().invoke(cli, ["explore", "loan", "-s", S[0], "-s", S[1], "--method", "static"])
    assert result.exit_code == 2
    assert "add --skip-missing" in result.output and '"missing"' not in result.output, result.output


# ---- the lens: one sentence, why, and what to pick, before any weights load ------------------------
def test_the_lens_refuses_a_model_that_reads_both_sides_in_one_sentence(tmp_path, monkeypatch):
    need("torch")
    from contextlens.encoders import models
    from contextlens.encoders.lm import LanguageModel, NoLMHeadError
    from tests.integration.tiny_models import tiny_lms

    root = tiny_lms(tmp_path)
    headless, masked = str(root / "headless"), str(root / "mlm")
    with TestClient(create_app(models=[], add_models=[headless, masked]), raise_server_exceptions=False,
                    base_url="http://127.0.0.1") as client:
        loads = []
        monkeypatch.setattr(models, "load", lambda *a, **k: loads.append(a) or pytest.fail("weights loaded"))
        for model in (headless, masked):
            detail = fails(client.post("/api/views/lens", json={"model": model, "sentence": S[1],
                                                                "word": "bank"}))
            assert detail == ("the logit lens reads a causal language model's next-word predictions, and "
                              f"{model} "
                              "(bert) reads the words on both sides of each word, so it predicts no next "
                              "word: pick smollm2 above"), detail
            assert "lacks" not in detail and "checkpoint" not in detail  # no tensor names
        assert not loads
    with pytest.raises(NoLMHeadError, match="pass model='smollm2'$"):
        LanguageModel(headless, kind="causal")


def test_the_lens_takes_the_word_and_says_when_the_sentence_lacks_it(tmp_path):
    need("torch")
    from contextlens.encoders.lm import LanguageModel
    from contextlens.views import lens_view
    from tests.integration.tiny_models import tiny_lms

    causal = str(tiny_lms(tmp_path) / "causal")
    with TestClient(create_app(models=[], add_models=[causal]), raise_server_exceptions=False,
                    base_url="http://127.0.0.1") as client:
        body = {"model": causal, "sentence": "the bank of the river", "word": "bank", "k": 4, "track": ["of"]}
        got = ok(client.post("/api/views/lens", json=body))["view"]
        assert got == lens_view(LanguageModel(causal, threads=1).lens("the bank of the river", 1, k=4,
                                                                      track=["of"])).data
        detail = fails(client.post("/api/views/lens", json={**body, "word": "loan"}))
        assert "'loan' is not a word of the text" in detail
        assert "not both" in fails(client.post("/api/views/lens", json={**body, "position": 1}))


# ---- cards that compare sentences compare those with the word ------------------------------------
def test_layers_and_explore_skip_the_sentences_without_the_word(client, app):
    glove = app.state.lab.table()
    got = ok(client.post("/api/layers", json={"sentences": S, "word": "loan", "encoder": "average",
                                                "missing": "skip"}))
    want = layer_divergence(make_encoder("average", vectors=glove), [(S[0], S[2])], "loan")
    assert [p["indices"] for p in got["pairs"]] == [[0, 2]]
    assert [p["label"] for p in got["pairs"]] == ["S0–S2"]
    assert [p["cosine_by_layer"] for p in got["pairs"]] == [p["cosine_by_layer"] for p in want["pairs"]]
    assert [s["position"]
            for s in got["skipped"]] == [1] and "'loan' is not a word" in got["skipped"][0]["reason"]
    ex = ok(client.post("/api/explore", json={"sentences": S, "word": "loan", "encoder": "average",
                                               "missing": "skip"}))
    assert ex["words"][0]["positions"] == [0, 2] and ex["words"][0]["skipped"] == [1]
    assert ex["words"][0]["matrix"] == explore(make_encoder("average", vectors=glove), S, "loan",
                                               missing="skip")["words"][0]["matrix"]
    one = fails(client.post("/api/layers", json={"sentences": S, "word": "approved", "missing": "skip"}))
    assert one.startswith("'approved' has 1 usage(s); comparing usages needs at least 2 sentences")


def test_every_pair_is_labelled_by_the_indices_the_json_holds(client):
    got = ok(client.post("/api/layers", json={"sentences": S, "word": "bank"}))
    pairs = itertools.combinations(range(3), 2)
    assert [p["label"] for p in got["pairs"]] == [f"S{i}–S{j}" for i, j in pairs]
    assert [p["indices"] for p in got["pairs"]] == [list(p) for p in itertools.combinations(range(3), 2)]
    assert got["skipped"] == []


TWICE = ["The bank by the bank of the river.", "The bank approved my loan.", "A loan from the bank."]
SEND = re.compile(r'send "(\w+)": ((?:"[^"]*"|\d+)(?: or (?:"[^"]*"|\d+))*)')


@pytest.mark.parametrize("route", ["/api/layers", "/api/explore", "/api/senses"])
def test_what_an_error_tells_the_user_to_send_the_route_takes(client, route):
    """A sentence holding the word twice: the layers card's and the senses' errors said to send
    "occurrence": "all", which both routes refused (422). Every value the answer offers, sent, is
    taken, and the sentence the answer names is the one at that index of the request."""
    body = {"sentences": TWICE, "word": "bank", "encoder": "average", "missing": "skip"}
    detail = fails(client.post(route, json=body))
    assert detail.startswith("sentence 0 ('The bank by the bank of the river.'): 'bank' occurs 2 times")
    offers = [(name, json.loads(v)) for name, values in SEND.findall(detail) for v in values.split(" or ")]
    assert ("occurrence", 0) in offers
    for name, value in offers:
        ok(client.post(route, json={**body, name: value}))
    if route == "/api/senses":
        assert ("occurrence", "all") not in offers  # one usage per sentence
    else:
        assert ("occurrence", "all") in offers


def test_the_layers_route_compares_every_two_usages_with_occurrence_all(client, app):
    got = ok(client.post("/api/layers", json={"sentences": TWICE, "word": "bank", "encoder": "average",
                                               "occurrence": "all"}))
    assert [p["label"] for p in got["pairs"]] == [
        "S0 #0–S0 #1", "S0 #0–S1", "S0 #0–S2", "S0 #1–S1", "S0 #1–S2", "S1–S2"]
    encoder = make_encoder("average", vectors=app.state.lab.table())
    for p in got["pairs"]:  # each pair is the library's pair of those two occurrences
        (i, j), (a, b) = p["indices"], p["occurrences"]
        want = layer_divergence(encoder, [(TWICE[i], TWICE[j])], "bank", occurrences=(a, b))["pairs"][0]
        assert p["cosine_by_layer"] == pytest.approx(want["cosine_by_layer"], abs=1e-6)
    assert [u["label"] for u in got["usages"]] == ["S0 #0", "S0 #1", "S1", "S2"]


# ---- how to read an encoder: the reading guide with /api/encode -----------------------------------
def test_encode_says_how_to_read_the_encoder(client):
    got = ok(client.post("/api/encode", json={"sentences": S[:2], "encoder": "attention"}))
    assert (got["causal"], got["notes"], got["default_layer"], got["layer_ids"]) == (False, {}, 1, [0, 1])
