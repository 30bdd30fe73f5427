"""The probes and CKA views carry the library's results as they are (probe over a tiny SemCor,
layer_cka over toy attention), save as one offline page, and refuse a wrong dict clearly."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens import views
from contextlens.analysis.cka import layer_cka
from contextlens.analysis.probing import probe
from contextlens.encoders.mixing import SelfAttention
from contextlens.errors import EmptyInputError, InputError
from contextlens.vectors import EmbeddingTable
from tests.tiny_semcor import tiny_docs, write_semcor
from tests.view_pages import page_views

WORDS = ["the", "bank", "river", "ran", "walked", "red", "old", "fast", "a", "an", "by", "of"]
SENTENCES = ["the bank ran by the river", "an old red bank", "the river ran fast by a bank", "a red river"]


@pytest.fixture
def encoder():
    rng = np.random.default_rng(0)
    return SelfAttention(EmbeddingTable(WORDS, rng.normal(size=(len(WORDS), 6)), name="toy <b>&"), n_layers=2)


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    return write_semcor(tmp_path / "data", tiny_docs())


def test_probes_view_carries_every_result(data, encoder):
    pos, sense = probe(encoder, "pos", data_dir=data), probe(encoder, "sense", data_dir=data)
    v = views.probes_view([pos, sense])
    assert v.kind == "probes" and v.family == "probes"
    assert v.title == "pos, sense probes per layer: attention over toy <b>&"
    got = v.data["results"]
    assert [r["task"] for r in got] == ["pos", "sense"] and got[1]["lemmas"] == sense.lemmas
    for r, result in zip(got, (pos, sense)):
        assert r["rows"] == [x.as_dict() for x in result.rows] and [x["layer"]
                                                                    for x in r["rows"]] == [0, 1, 2]
        assert r["expected_layer"] == result.expected_layer and r["probe"] == "linear"
    assert views.probes_view(pos.as_dict()).data["results"] == got[:1]  # one result, as a dict


def test_cka_view_carries_the_matrix(tmp_path, encoder):
    r = layer_cka(encoder, SENTENCES, cache_root=tmp_path, source="four sentences")
    v = views.cka_view(r)
    assert v.kind == "cka" and v.title == "linear CKA between the layers of attention over toy <b>&"
    assert v.data["matrix"] == [list(row) for row in r.matrix] and v.data["layers"] == [[0, 1, 2], [0, 1, 2]]
    assert (v.data["n_words"], v.data["sentences"], v.data["debiased"]) == (r.n_words,
                                                                            "four sentences", False)
    other = SelfAttention(encoder.table, n_layers=1)
    two = views.cka_view(layer_cka(encoder, SENTENCES, other=other, cache_root=tmp_path).as_dict())
    assert np.array(two.data["matrix"]).shape == (3, 2)


def test_both_views_in_one_offline_page(tmp_path, data, encoder):
    p = views.probes_view(probe(encoder, "pos", data_dir=data))
    c = views.cka_view(layer_cka(encoder, SENTENCES, cache_root=tmp_path))
    page = views.Page(p, c, title="what layers know")
    path = page.save_html(tmp_path / "know.html")
    text = path.read_text()
    assert page_views(text) == [p.data, c.data]
    assert text.count("plotly.js v") == 1 and "CLV.register(\"probes\"" in text and "<b>&" not in text
    assert "CLV.register(\"cka\"" in text


ROW = {"layer": 0, "accuracy": 0.9, "control_accuracy": 0.5, "selectivity": 0.4, "n_train": 3, "n_test": 2,
       "missing": 0}
CKA = {"models": ["a", "b"], "layers": [[0, 1], [0]], "matrix": [[1.0], [0.5]], "n_words": 4,
       "n_sentences": 1, "debiased": True}


@pytest.mark.parametrize("bad, match", [
    ([], "no probe result to show"),
    ({"task": "pos"}, "not the result of probe .*lacks model, rows, expected_layer"),
    ({"task": "pos", "model": "m", "rows": [], "expected_layer": None}, "has no layers"),
    ({"task": "pos", "model": "m", "rows": [{"layer": 0}], "expected_layer": None}, "lacks accuracy"),
    ([3], "expected a dict"),
])
def test_probes_view_refuses_a_wrong_result(bad, match):
    with pytest.raises((InputError, EmptyInputError), match=match):
        views.probes_view(bad)


@pytest.mark.parametrize("bad, match", [
    ({"models": ["a", "b"]}, "not the result of layer_cka .*lacks layers, matrix"),
    ({**CKA, "matrix": [[1.0, 0.2], [0.5, 1.0]]}, r"matrix is not 2 × 1"),
    ({**CKA, "models": ["a"]}, r"matrix is not"),
    ("cka", "expected a dict"),
])
def test_cka_view_refuses_a_wrong_result(bad, match):
    with pytest.raises(InputError, match=match):
        views.cka_view(bad)


def test_the_views_are_kinds_of_the_page():
    assert views.KINDS["probes"] == views.KINDS["cka"] == "probes"
    assert views.cka_view(CKA).title == "linear CKA between the layers of a and b"
    assert views.probes_view({"task": "pos", "model": "m", "rows": [ROW], "expected_layer": None}).data[
        "results"][0]["rows"] == [ROW]
