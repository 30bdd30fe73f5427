"""The lab serves the library's views: their scripts from the package (one implementation),
their data from the library's builders; the course example as ``course_example()``
computes it; ``add_models`` (``contextlens lab --model``) offers more models; the senses
route says how few sentences hold the word."""

from __future__ import annotations

from importlib import resources

import pytest

from tests.missing import need

need("fastapi")
need("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from contextlens.analysis.toy import course_example  # noqa: E402
from contextlens.encoders.model_cache import ModelNotFoundError  # noqa: E402
from contextlens.encoders.registry import make_encoder  # noqa: E402
from contextlens.views import attention_views  # noqa: E402
from contextlens.web import create_app  # noqa: E402
from contextlens.web.api import plain  # noqa: E402

S = ["The bank approved my loan.", "We sat on the bank of the river."]


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(), raise_server_exceptions=False, base_url="http://127.0.0.1")


def ok(resp):
    assert resp.status_code == 200, resp.text
    return resp.json()


@pytest.mark.parametrize("name", ["core.js", "attention.js", "views.css"])
def test_the_views_scripts_are_the_librarys(client, name):
    resp = client.get(f"/views/{name}")
    assert resp.status_code == 200
    assert resp.text == resources.files("contextlens.views").joinpath("assets", name).read_text(
        encoding="utf-8"
    )


def test_attention_views_are_the_librarys(client):
    got = ok(client.post("/api/views/attention", json={"encoder": "attention", "include_self": True,
                                                       "sentence": S[0], "word": "bank", "layer": 1}))
    encoder = make_encoder("attention", vectors="glove-6b-50d", include_self=True)
    assert got["views"] == [v.data for v in attention_views(encoder, S[0], "bank", layer=1)]
    assert [v["kind"] for v in got["views"]] == ["head", "model", "neuron"]


def test_attention_views_errors_are_400(client):
    resp = client.post("/api/views/attention", json={"encoder": "attention", "sentence": S[0],
                                                     "word": "river"})
    assert resp.status_code == 400 and "'river'" in resp.json()["detail"]
    resp = client.post("/api/views/attention", json={"encoder": "static", "sentence": S[0], "word": "bank"})
    assert resp.status_code == 400 and "no attention weights" in resp.json()["detail"]


def test_course_example(client):
    assert ok(client.get("/api/toy/course")) == plain(course_example().as_dict())


def test_senses_say_how_few_sentences_have_the_word(client):
    resp = client.post("/api/senses", json={"encoder": "static", "sentences": [*S, "A loan from the bank."],
                                            "word": "loan"})
    assert resp.status_code == 400
    assert resp.json()["detail"].startswith("only 2 sentences contain 'loan': ")


def test_added_models_are_offered_and_drawn(tmp_path):
    need("torch")
    from tests.integration.tiny_models import tiny_model

    path = str(tiny_model(tmp_path, "bert", init=0.2))
    client = TestClient(create_app(add_models=[path]), raise_server_exceptions=False,
                        base_url="http://127.0.0.1")
    st = ok(client.get("/api/status"))
    assert st["encoders"][-1] == path and "minilm" in st["encoders"] and st["default_model"] == "minilm"
    got = ok(client.post("/api/views/attention", json={"encoder": path, "sentence": S[1], "word": "bank"}))
    head = got["views"][0]["attention"]
    assert head["pieces"]["tokens"][0] == "[CLS]" and len(got["views"]) == 3


def test_a_typo_of_a_packaged_model_fails_at_start():
    with pytest.raises(ModelNotFoundError, match="did you mean 'minilm'"):
        create_app(add_models=["minlm"])


def test_neighbours_view_is_the_librarys(client):
    from contextlens.analysis.neighbours import contextual_neighbours
    from contextlens.views import neighbours_view

    got = ok(client.post("/api/views/neighbours", json={"encoder": "static", "sentence": S[1], "word": "bank",
                                                        "k": 5}))["view"]
    want = neighbours_view(contextual_neighbours(make_encoder("static", vectors="glove-6b-50d"), S[1], "bank",
                                                 k=5))
    assert got == want.data and got["kind"] == "neighbours" and len(got["neighbours"]) == 5
    assert S[1][slice(*got["span"])] == "bank"


def test_neighbours_view_ranks_by_the_contrast_asked(client):
    """contrast λ reaches the library: the view's neighbours carry score and own_cosine, ranked by
    score = cosine − λ × own_cosine; without it the view is the plain one, ranked by cosine."""
    from contextlens.analysis.neighbours import contextual_neighbours
    from contextlens.views import neighbours_view

    body = {"encoder": "attention", "include_self": True, "sentence": S[1], "word": "bank", "k": 8}
    got = ok(client.post("/api/views/neighbours", json={**body, "contrast": 0.5}))["view"]
    encoder = make_encoder("attention", vectors="glove-6b-50d", include_self=True)
    want = contextual_neighbours(encoder, S[1], "bank", k=8, contrast=0.5)
    assert got == neighbours_view(plain(want)).data and got["contrast"] == 0.5
    scores = [n["score"] for n in got["neighbours"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == 8
    for n in got["neighbours"]:
        assert n["score"] == pytest.approx(n["cosine"] - 0.5 * n["own_cosine"], abs=1e-6)
    plain_view = ok(client.post("/api/views/neighbours", json=body))["view"]
    assert plain_view == neighbours_view(plain(contextual_neighbours(encoder, S[1], "bank", k=8))).data
    assert plain_view["contrast"] == 0.0
    assert all(set(n) == {"word", "cosine"} for n in plain_view["neighbours"])
    cosines = [n["cosine"] for n in plain_view["neighbours"]]
    assert cosines == sorted(cosines, reverse=True)
    # the two rankings differ here (what the context adds is not the usage's nearest words)
    assert [n["word"] for n in got["neighbours"]] != [n["word"] for n in plain_view["neighbours"]]


def test_occlusion_view_is_the_librarys(client):
    from contextlens.analysis.occlusion import occlusion_vs_attention
    from contextlens.views import occlusion_view

    got = ok(client.post("/api/views/occlusion", json={"encoder": "attention", "include_self": True,
                                                       "sentence": S[1], "word": "bank"}))["view"]
    encoder = make_encoder("attention", vectors="glove-6b-50d", include_self=True)
    assert got == occlusion_view(plain(occlusion_vs_attention(encoder, S[1], "bank"))).data
    assert got["kind"] == "occlusion" and [o["word"] for o in got["others"]] == ["we", "sat", "on", "the",
                                                                                 "of",
                                                                                  "the", "river", "."]


@pytest.mark.parametrize("body, code, match", [
    ({"encoder": "static", "sentence": S[1], "word": "bank"}, 400, "gives no attention weights"),
    ({"encoder": "attention", "sentence": S[1], "word": "money"}, 400, "'money'"),
    ({"encoder": "attention", "sentence": "bank", "word": "bank"}, 400, "no other word"),
    ({"encoder": "attention", "sentence": " ".join(["bank"] * 400), "word": "bank"}, 422, "at most"),
])
def test_occlusion_view_errors(client, body, code, match):
    resp = client.post("/api/views/occlusion", json=body)
    assert resp.status_code == code and match in resp.json()["detail"], resp.text


@pytest.mark.parametrize("body, code, match", [
    ({"sentence": S[1], "word": "bank", "k": 51}, 422, "less than or equal to 50"),
    ({"sentence": S[1], "word": "bank", "k": 0}, 422, "greater than or equal to 1"),
    ({"sentence": S[1], "word": "money"}, 400, "'money'"),
    ({"sentence": S[1], "word": "bank", "layer": 3}, 400, "layer"),
    ({"sentence": S[1], "word": "bank", "contrast": 1.5}, 422,
     "contrast: Input should be less than or equal to 1"),
    ({"sentence": S[1], "word": "bank", "contrast": -0.25}, 422,
     "contrast: Input should be greater than or equal to 0"),
    ({"sentence": S[1], "word": "bank", "contrast": "0.5"}, 422, "contrast: Input should be a valid number"),
    # a word of the table but not among the reference's 20,000: contrast needs its own row
    ({"sentence": "We walked along the embankment.", "word": "embankment", "contrast": 0.5}, 400,
     "contrast needs 'embankment' in the reference table"),
])
def test_neighbours_view_errors(client, body, code, match):
    resp = client.post("/api/views/neighbours", json={"encoder": "static", **body})
    assert resp.status_code == code and match in resp.json()["detail"], resp.text


def test_lens_view_is_the_librarys_and_needs_a_causal_model(tmp_path):
    need("torch")
    from contextlens.encoders.lm import LanguageModel
    from contextlens.views import lens_view
    from tests.integration.tiny_models import tiny_lms

    root = tiny_lms(tmp_path)
    causal, masked = str(root / "causal"), str(root / "mlm")
    with TestClient(create_app(add_models=[causal, masked]), raise_server_exceptions=False,
                    base_url="http://127.0.0.1") as client:
        body = {"model": causal, "sentence": "the bank of the river", "position": 2, "k": 4,
                "track": ["river"]}
        got = ok(client.post("/api/views/lens", json=body))["view"]
        # as the lab
        want = LanguageModel(causal, threads=1).lens("the bank of the river", 2, k=4, track=["river"])
        assert got == lens_view(want).data and got["kind"] == "lens"
        for model, code, match in [("static", 400, "pick smollm2 above"), (masked, 400, "causal"),
                                   ("nonesuch", 400, "nonesuch")]:
            resp = client.post("/api/views/lens", json={**body, "model": model})
            assert resp.status_code == code and match in resp.json()["detail"], resp.text
        resp = client.post("/api/views/lens", json={**body, "track": ["w"] * 21})
        assert resp.status_code == 422
