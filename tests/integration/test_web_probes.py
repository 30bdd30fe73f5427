"""The lab's "What layers know" routes: /api/views/probes and /api/views/cka return the views of
the library's own probe and layer_cka results (over a tiny SemCor and tiny corpora in the data
folder, the packaged GloVe table; no model), and bad input is one clear 4xx line."""

from __future__ import annotations

import pytest

from tests.missing import need

need("fastapi")
need("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from contextlens.analysis.cka import corpus_sample, layer_cka  # noqa: E402
from contextlens.analysis.probing import probe  # noqa: E402
from contextlens.encoders.registry import make_encoder  # noqa: E402
from contextlens.views import cka_view, probes_view  # noqa: E402
from contextlens.web import create_app  # noqa: E402
from tests.tiny_semcor import tiny_docs, write_semcor  # noqa: E402

CORPUS = "the bank ran by the river again\nan old red bank by the river\nthe river ran fast by a bank\n"


def tiny_data(root):
    """A data folder with a tiny SemCor and the three shared corpora (a few sentences each)."""
    write_semcor(root, tiny_docs())
    (root / "corpora").mkdir()
    for name in ("brown_plain.txt", "abc_plain.txt", "movie_reviews_plain.txt"):
        (root / "corpora" / name).write_text(CORPUS * 2)
    return root


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CONTEXTLENS_DATA", str(tiny_data(tmp_path / "data")))
    return tmp_path / "data"


@pytest.fixture
def client(data):
    return TestClient(create_app(), raise_server_exceptions=False, base_url="http://127.0.0.1")


def ok(resp):
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_the_probes_view_is_the_librarys(client, data):
    got = ok(client.post("/api/views/probes",
                         json={"encoder": "attention", "tasks": ["pos", "sense"]}))["view"]
    encoder = make_encoder("attention", vectors="glove-6b-50d")
    want = probes_view([probe(encoder, task, data_dir=data) for task in ("pos", "sense")])
    assert got == want.data and [r["task"] for r in got["results"]] == ["pos", "sense"]
    assert [x["layer"] for x in got["results"][0]["rows"]] == [0, 1]


def test_the_cka_view_is_the_librarys(client, data):
    got = ok(client.post("/api/views/cka", json={"encoder": "attention", "other": "static", "sample": 4,
                                                 "seed": 1}))["view"]
    texts = corpus_sample(data, 4, seed=1)
    want = layer_cka(make_encoder("attention", vectors="glove-6b-50d"), texts,
                     other=make_encoder("static", vectors="glove-6b-50d"),
                     source="4 sentences of the shared corpora (seed 1)")
    assert got == cka_view(want).data and got["layers"] == [[0, 1], [0]] and got["n_sentences"] == 4
    assert got["models"] == ["attention over glove-6b-50d", "glove-6b-50d"]  # two encoders over one table


@pytest.mark.parametrize("route, body, code, message", [
    ("probes", {"tasks": ["ner"]}, 422, "tasks.0: Input should be 'pos', 'supersense' or 'sense'"),
    ("probes", {"tasks": []}, 422, "tasks"),
    ("probes", {"probe": "svm"}, 422, "probe: Input should be 'linear' or 'mlp'"),
    ("cka", {"sample": 1}, 422, "sample"),
    ("cka", {"sample": 501}, 422, "sample"),
    ("cka", {"other": "bert-huge"}, 400, "unknown encoder 'bert-huge'"),
    ("cka", {"sample": 500}, 400, "the corpora hold only 18 sentences"),
])
def test_bad_input_is_one_clear_error(client, route, body, code, message):
    resp = client.post(f"/api/views/{route}", json={"encoder": "static", **body})
    assert resp.status_code == code, resp.text
    assert message in resp.json()["detail"]


def test_without_semcor_the_probes_say_how_to_get_it(client, data):
    (data / "wsd" / "semcor" / "semcor3.0_naf.tar.gz").unlink()
    resp = client.post("/api/views/probes", json={"encoder": "static"})
    assert resp.status_code == 400 and "contextlens data fetch semcor" in resp.json()["detail"]


def test_over_the_stack_bound_the_lab_answers_422_before_encoding(client, data, monkeypatch):
    """The lab reads the library's bound (contextlens.bounds.MAX_STACK_BYTES), lowered here to
    ten of the table's words so that the tiny SemCor is over it."""
    from contextlens import bounds
    from contextlens.analysis.probing.run import PROBE_WORK

    word = 50 * 4 + 50 * PROBE_WORK  # glove-6b-50d: one layer of 50 float32 numbers, and the probe's work
    monkeypatch.setattr(bounds, "MAX_STACK_BYTES", 10 * word)
    resp = client.post("/api/views/probes", json={"encoder": "static"})
    assert resp.status_code == 422, resp.text
    assert "over the limit of 10 words" in resp.json()["detail"]
    monkeypatch.setattr(bounds, "MAX_STACK_BYTES", 5 * 50 * 4)
    resp = client.post("/api/views/cka", json={"encoder": "static", "sample": 4})
    assert resp.status_code == 422 and "over the limit of 5 tokens" in resp.json()["detail"], resp.text
