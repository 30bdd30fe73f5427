"""The lab's routes of the explanations inside a layer (issue 24): each view is the library's view of
the library's result for the same request, bad input is a 400 or 422 naming what was wrong, and an
explanation that hooks the model's modules runs alone on its encoder (SharedEncoder.alone)."""

from __future__ import annotations

import threading

import pytest

from tests.missing import need

need("fastapi")
need("httpx")
need("torch")
need("transformers")

from fastapi.testclient import TestClient  # noqa: E402

from contextlens.analysis.faithfulness import attributions  # noqa: E402
from contextlens.analysis.patching import patch  # noqa: E402
from contextlens.analysis.sublayers import sublayers  # noqa: E402
from contextlens.encoders.registry import make_encoder  # noqa: E402
from contextlens.views import attributions_view, patch_view, sublayers_view  # noqa: E402
from contextlens.web import create_app  # noqa: E402
from contextlens.web.api import plain  # noqa: E402
from contextlens.web.state import LabClosingError, SharedEncoder  # noqa: E402
from tests.integration.tiny_models import tiny_model  # noqa: E402

RIVER, MONEY = "We sat on the bank of the river.", "The bank approved my loan."


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return str(tiny_model(tmp_path_factory.mktemp("web-explain"), "bert", layers=3, init=0.2))


@pytest.fixture(scope="module")
def client(bert):
    with TestClient(create_app(add_models=[bert]), raise_server_exceptions=False,
                    base_url="http://127.0.0.1") as c:
        yield c


def view(client, route: str, body: dict) -> dict:
    resp = client.post(f"/api/views/{route}", json=body)
    assert resp.status_code == 200, resp.text
    return resp.json()["view"]


def test_sublayers_view_is_the_librarys(client, bert):
    got = view(client, "sublayers", {"encoder": bert, "sentences": [RIVER, MONEY], "word": "bank"})
    want = sublayers_view(plain(sublayers(make_encoder(model=bert), RIVER, MONEY, "bank"))).data
    assert got["kind"] == "sublayers" and got["sentences"] == [RIVER, MONEY]
    for a, b in zip(got["rows"], want["rows"], strict=True):
        assert (a["layer"], a["after"]) == (b["layer"], b["after"])
        assert [a["cosine"], *a["moved"], *a["update_norm"]] == pytest.approx(
            [b["cosine"], *b["moved"], *b["update_norm"]], rel=1e-4, abs=1e-6)
    blocks = [(r["layer"], r["after"]) for r in got["rows"]]
    assert blocks == [(L, b) for L in (1, 2, 3) for b in ("attention", "ffn")]
    one = view(client, "sublayers", {"encoder": bert, "sentences": [RIVER], "word": "bank",
                                     "occurrences": [0]})
    assert one["sentences"] == [RIVER] and {r["cosine"] for r in one["rows"]} == {None}
    mixer = view(client, "sublayers", {"encoder": "attention", "include_self": True,
                                       "sentences": [RIVER, MONEY], "word": "bank"})
    assert mixer["stages"] == ["attention"] and "no feed-forward block" in mixer["note"]


def test_attributions_view_is_the_librarys(client, bert):
    body = {"encoder": bert, "sentence": RIVER, "word": "bank", "methods": ["raw", "norm", "ig"], "steps": 4}
    got = view(client, "attributions", body)
    want = attributions_view(plain(attributions(make_encoder(model=bert), RIVER, "bank",
                                                methods=["raw", "norm", "ig"], steps=4))).data
    assert got["methods"] == ["raw", "norm", "ig"] and got["steps"] == 4
    assert got["context"] == want["context"]
    for a, b in zip(got["layers"], want["layers"], strict=True):
        for m in got["methods"]:
            assert a["scores"][m] == pytest.approx(b["scores"][m], rel=1e-4, abs=1e-6)
    # a training-free encoder: "all" is what it has (attention only), the others said unavailable
    mixer = view(client, "attributions", {"encoder": "attention", "include_self": True, "sentence": RIVER,
                                          "word": "bank"})
    assert mixer["methods"] == ["raw", "rollout", "flow"] and "ig" in mixer["unavailable"]


def test_patch_view_is_the_librarys(client, bert):
    got = view(client, "patch", {"encoder": bert, "recipient": RIVER, "donor": MONEY, "word": "bank",
                                 "at": "attention"})
    want = patch_view(plain(patch(make_encoder(model=bert), RIVER, MONEY, "bank", at="attention"))).data
    assert got["at"] == "attention" and len(got["rows"]) == 3
    for a, b in zip(got["rows"], want["rows"], strict=True):
        assert a["cosine_to_donor"] == pytest.approx(b["cosine_to_donor"], abs=1e-5)
        assert a["cosine_to_recipient"] == pytest.approx(b["cosine_to_recipient"], abs=1e-5)


@pytest.mark.parametrize("route, body, code, match", [
    ("sublayers", {"sentences": [RIVER, MONEY, RIVER], "word": "bank"}, 422, "at most 2"),
    ("sublayers", {"sentences": [RIVER, "No such word here."], "word": "bank"}, 400, "'bank'"),
    ("attributions", {"sentence": RIVER, "word": "bank", "methods": ["gradient"]}, 422, "'grad-input'"),
    ("attributions", {"sentence": RIVER, "word": "bank", "steps": 0}, 422, "greater than or equal to 1"),
    ("attributions", {"sentence": RIVER, "word": "bank", "steps": 257}, 422, "less than or equal to 256"),
    ("attributions", {"sentence": RIVER, "word": "bank", "methods": ["norm"], "encoder": "attention"}, 400,
     "a transformer's modules"),
    ("patch", {"recipient": RIVER, "donor": MONEY, "word": "bank", "at": "mlp"}, 422, "'layer'"),
    ("patch", {"recipient": RIVER, "donor": MONEY, "word": "bank", "k": 51}, 422, "less than or equal to 50"),
    ("patch", {"recipient": RIVER, "donor": MONEY, "word": "bank", "encoder": "attention"}, 400,
     "no transformer"),
    ("patch", {"recipient": RIVER, "donor": MONEY, "word": "river"}, 400, "'river'"),
])
def test_explain_view_errors(client, bert, route, body, code, match):
    resp = client.post(f"/api/views/{route}", json={"encoder": bert, **body})
    assert resp.status_code == code and match in resp.json()["detail"], resp.text


def test_alone_keeps_other_requests_of_the_encoder_waiting():
    """While an explanation hooks the model (alone), the encoder's encode waits; a stopping lab refuses."""
    shared = SharedEncoder(make_encoder("static", vectors="glove-6b-50d"))
    done = threading.Event()
    worker = threading.Thread(target=lambda: (shared.encode([RIVER]), done.set()))
    with shared.alone() as inner:
        assert inner is shared._encoder
        worker.start()
        assert not done.wait(0.3)  # cannot finish while the explanation holds the encoder
    worker.join(10)
    assert done.is_set()
    shared._closing.set()
    with pytest.raises(LabClosingError), shared.alone():
        pass
