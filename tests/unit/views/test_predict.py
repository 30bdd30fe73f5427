"""The lens, occlusion and neighbours views carry the result they were built from, and a
wrong dict is a clear InputError."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens import views
from contextlens.analysis.neighbours import contextual_neighbours
from contextlens.analysis.occlusion import occlusion_vs_attention
from contextlens.analysis.toy import COURSE_VECTORS, toy_table
from contextlens.encoders.mixing import SelfAttention
from contextlens.errors import InputError
from contextlens.vectors import EmbeddingTable
from tests.view_pages import page_views

WORDS = {"bank": [1, 1, 0.2], "money": [1, 0, 0], "loan": [0.9, 0, 0.1], "river": [0, 1, 0.1],
         "water": [0.1, 0.9, 0], "the": [0, 0, 1], "by": [0.1, 0, 0.7], "sat": [0.3, 0.2, 0.4]}
TABLE = EmbeddingTable(list(WORDS), list(WORDS.values()), name="toy")

LENS = {"model": "tiny", "text": "the bank of the", "position": 3, "word": "the", "rule": "first piece",
        "layers": [{"layer": i, "layer_name": "embedding output" if i == 0 else f"layer {i}",
                    "top": [{"word": "river", "probability": 0.1 * (i + 1), "pieces": [" river"]},
                            {"word": "bank", "probability": 0.05, "pieces": [" bank"]}],
                    "tracked": [{"word": "water", "pieces": [" wat", "er"], "probability": 1e-4 * (i + 1),
                                 "rank": 900 - 100 * i}]} for i in range(3)]}


def test_lens_view_carries_the_lens():
    v = views.lens_view(LENS)
    assert v.kind == "lens" and v.family == "figures"
    assert {k: v.data[k] for k in LENS} == LENS
    assert "'the' (word 3)" in v.title and "the bank of the" in v.title


class _Result:  # what LanguageModel.lens returns: an object with as_dict()
    def as_dict(self):
        return LENS


def test_lens_view_takes_the_result_object_too():
    assert views.lens_view(_Result()).data["layers"] == LENS["layers"]


@pytest.mark.parametrize("bad, match", [
    ({"model": "m", "text": "t"}, "not the result of LanguageModel.lens .*lacks position, word, layers"),
    ({**LENS, "layers": []}, "has no layers"),
    ({**LENS, "layers": [{"layer": 0}]}, "lacks layer_name, top, tracked"),
    ([1, 2], "expected a dict"),
])
def test_lens_view_refuses_a_wrong_dict(bad, match):
    with pytest.raises(InputError, match=match):
        views.lens_view(bad)


def test_occlusion_view_carries_the_measurement():
    encoder = SelfAttention(TABLE)
    r = occlusion_vs_attention(encoder, "sat by the river bank", "bank")
    v = views.occlusion_view(r)
    assert v.kind == "occlusion" and v.data["model"] == r["encoder"].get("vectors")
    for key in ("sentence", "word", "index", "others"):
        assert v.data[key] == r[key]
    got, want = v.data["layers"], r["layers"]
    assert [x["layer"] for x in got] == [x["layer"] for x in want]
    for g, w in zip(got, want):
        for key in ("occlusion", "attention", "rollout"):
            np.testing.assert_array_equal(g[key], w[key])
        assert (g["spearman_attention"] == w["spearman_attention"]
                and g["spearman_rollout"] == w["spearman_rollout"])


def test_occlusion_view_refuses_a_wrong_dict():
    r = occlusion_vs_attention(SelfAttention(TABLE), "sat by the river bank", "bank")
    with pytest.raises(InputError, match="not the result of occlusion_vs_attention .*lacks others, layers"):
        views.occlusion_view({"sentence": "s", "word": "w"})
    short = {**r, "layers": [{**r["layers"][0], "attention": r["layers"][0]["attention"][:-1]}]}
    with pytest.raises(InputError, match="one value per other word \\(4\\)"):
        views.occlusion_view(short)
    with pytest.raises(InputError, match="lacks spearman_rollout"):
        views.occlusion_view({**r, "layers": [{k: x for k,
                                               x in r["layers"][0].items() if k != "spearman_rollout"}]})


def test_neighbours_view_carries_the_neighbours_and_marks_the_usage():
    text = "the money by the bank and the bank by the river"
    r = contextual_neighbours(SelfAttention(TABLE), text, "bank", k=3, occurrence=1, reference=TABLE)
    v = views.neighbours_view(r)
    assert v.kind == "neighbours" and v.data["neighbours"] == r["neighbours"] and len(r["neighbours"]) == 3
    for key in ("word", "sentence", "layer", "layer_name", "reference"):
        assert v.data[key] == r[key]
    start, end = v.data["span"]
    assert text[start:end] == "bank" and start == text.rindex("bank")  # the second usage, as asked
    # a result saved before start/end: first usage
    old = {k: x for k, x in r.items() if k not in ("start", "end")}
    assert views.neighbours_view(old).data["span"] == [text.index("bank"), text.index("bank") + 4]


def test_neighbours_view_keeps_the_contrast_and_each_neighbours_score():
    text = "the money by the bank and the bank by the river"
    r = contextual_neighbours(SelfAttention(TABLE), text, "bank", k=3, occurrence=1, reference=TABLE,
                              contrast=0.5)
    v = views.neighbours_view(r)
    assert v.data["contrast"] == 0.5 and v.data["neighbours"] == r["neighbours"]
    assert {"score", "own_cosine"} <= set(v.data["neighbours"][0]) and v.title.endswith(", contrast 0.5")
    plain = views.neighbours_view(contextual_neighbours(SelfAttention(TABLE), text, "bank", k=3, occurrence=1,
                                                       reference=TABLE))
    assert plain.data["contrast"] == 0.0 and "contrast" not in plain.title
    # ranked with contrast, a neighbour without its score or own cosine is not that result
    with pytest.raises(InputError, match=r"a neighbour ranked with contrast\) \(it lacks own_cosine, score"):
        views.neighbours_view({**r, "neighbours": [{"word": "x", "cosine": 0.1}]})


def test_neighbours_view_refuses_a_wrong_dict():
    with pytest.raises(InputError, match="not the result of contextual_neighbours .*lacks layer, layer_name"):
        views.neighbours_view({"word": "bank", "sentence": "s", "neighbours": []})
    with pytest.raises(InputError, match="lacks cosine"):
        views.neighbours_view({"word": "b", "sentence": "s", "layer": 1, "layer_name": "l",
                               "neighbours": [{"word": "x"}]})


def test_the_three_views_share_one_page(tmp_path):
    encoder = SelfAttention(toy_table(COURSE_VECTORS))
    occ = views.occlusion_view(occlusion_vs_attention(encoder, "bank loan river", "bank"))
    nb = views.neighbours_view({"word": "bank", "sentence": "bank loan", "layer": 1, "layer_name": "l",
                                "neighbours": [{"word": "loan", "cosine": float("nan")}]})
    path = views.Page(views.lens_view(LENS), occ, nb).save_html(tmp_path / "p.html")
    got = page_views(path.read_text(encoding="utf-8"))
    assert [d["kind"] for d in got] == ["lens", "occlusion", "neighbours"]
    assert got[2]["neighbours"][0]["cosine"] is None  # NaN → null: strict JSON
