"""Property-based fuzzing of every endpoint of the lab's API from its OpenAPI schema
(schemathesis, on hypothesis): no 5xx, every answer matches the schema, and the lab is
alive afterwards. The lab under test offers the static encoders and a tiny random-weight
BERT (no large model loads); CI runs a fixed seed and a small budget per endpoint,
`make fuzz` a larger one (CONTEXTLENS_FUZZ_EXAMPLES)."""

from __future__ import annotations

import os

import pytest

from tests.missing import need

schemathesis = need("schemathesis")
need("fastapi")

from fastapi.testclient import TestClient  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from schemathesis.specs.openapi.checks import positive_data_acceptance  # noqa: E402

from contextlens.text import tokenize  # noqa: E402
from contextlens.web import create_app  # noqa: E402
from contextlens.web.app import LOCAL_HOSTS  # noqa: E402
from contextlens.web.limits import CAPS  # noqa: E402
from tests.integration.test_web_probes import tiny_data  # noqa: E402
from tests.integration.tiny_models import tiny_bert  # noqa: E402

EXAMPLES = int(os.environ.get("CONTEXTLENS_FUZZ_EXAMPLES", "12"))
ENCODERS = ["static", "average", "attention"]  # + the tiny BERT's path, once built


@pytest.fixture(scope="module")
def fuzz_app(tmp_path_factory):
    model = str(tiny_bert(tmp_path_factory.mktemp("fuzz")))
    ENCODERS.append(model)
    app = create_app(model=model, models=[], workers=1, allowed_hosts=[*LOCAL_HOSTS, "testserver"])
    with pytest.MonkeyPatch.context() as mp:  # the probes and CKA read a tiny SemCor and corpora, in seconds
        mp.setenv("CONTEXTLENS_DATA", str(tiny_data(tmp_path_factory.mktemp("fuzz-data"))))
        yield app
    app.state.lab.close()
    ENCODERS.remove(model)


# the schema does not depend on the lab's models: read once at collection, from an app that loads nothing
schema = schemathesis.openapi.from_dict(create_app().openapi())


@schema.hook
def flatmap_body(context, body):
    """Steer some generated bodies past the first check: an encoder the lab has (random names
    are a 400 at once), the word drawn from the generated sentence (so the analysis, the
    projection and the clustering run on whatever text was generated)."""
    if not isinstance(body, dict):
        return st.just(body)

    def valid(key: str) -> bool:  # a field a negative case made invalid stays as it is
        return isinstance(body.get(key), str) and 1 <= len(body[key]) <= CAPS.max_word_chars

    steer = {}
    if valid("encoder"):
        steer["encoder"] = st.sampled_from(ENCODERS)
    sentences = body.get("sentences")
    text = body.get("sentence", sentences[0] if isinstance(sentences, list) and sentences else None)
    words = [w.text for w in tokenize(text)] if valid("word") and isinstance(text, str) else []
    if words:
        steer["word"] = st.sampled_from(words)
    if not steer:
        return st.just(body)
    return st.fixed_dictionaries({k: st.one_of(st.just(body[k]), v) for k, v in steer.items()}).map(
        lambda chosen: {**body, **chosen})


@schema.parametrize()
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
def test_every_endpoint_answers_generated_requests_without_a_5xx(case, fuzz_app):
    # every check but "schema-valid data gets a 2xx": the schema cannot say that the word must
    # occur in the sentence or the model be installed; those are the documented 400s
    case.call_and_validate(app=fuzz_app, excluded_checks=[positive_data_acceptance])


HOSTILE = {  # what the readers' fuzzers feed the file parsers, as request bodies
    "deep nesting": "[" * 100_000 + "]" * 100_000,
    "nested in a field": '{"sentence": ' + "[" * 5_000 + "]" * 5_000 + "}",
    "a 5,000-digit number": '{"sentence": "the bank", "word": "bank", "k": ' + "7" * 5000 + "}",
    "lone surrogates": '{"sentence": "the \\ud800 bank", "word": "\\udfff", "sentences": ["\\udc80 bank", '
                       '"a bank"], "encoder": "average", "text": "\\ud800"}',
    "odd line breaks": '{"sentence": "the bank\\r\\nof the river\\u2028and\\rbank", "word": "bank", '
                       '"sentences": ["the bank\\r", "a\\u2028bank", "bank\\u0085x"], "encoder": "average"}',
}


@pytest.mark.parametrize("body", list(HOSTILE))
def test_every_post_route_answers_hostile_bodies_with_json_and_no_5xx(fuzz_app, body):
    routes = [p for p, ops in fuzz_app.openapi()["paths"].items() if "post" in ops]
    assert len(routes) >= 10
    with TestClient(fuzz_app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        for route in routes:
            r = client.post(route, content=HOSTILE[body], headers={"content-type": "application/json"})
            assert r.status_code < 500 and r.headers["content-type"].startswith("application/json"), (
                route, r.status_code, r.text[:300])
            r.json()


def test_the_lab_is_alive_after_the_fuzzing(fuzz_app):
    with TestClient(fuzz_app, base_url="http://127.0.0.1") as client:  # one more start of the same app
        assert client.get("/api/status").status_code == 200
        body = {"sentences": ["The bank.", "A river bank."], "word": "bank", "encoder": "average",
                "projection": "tsne"}
        r = client.post("/api/explore", json=body)
        assert r.status_code == 200 and len(r.json()["projection"]["points"]) == 2
