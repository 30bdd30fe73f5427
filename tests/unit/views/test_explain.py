"""The views of the explanations: each carries its library result's numbers as they are, refuses
a dict that is not that result with one clear message, and makes a small page (our own SVG, no
Plotly) whatever the text holds."""

from __future__ import annotations

import pytest

from contextlens import views
from contextlens.analysis.faithfulness import attributions
from contextlens.analysis.sublayers import sublayers
from contextlens.analysis.toy import COURSE_VECTORS, toy_table
from contextlens.encoders.mixing import SelfAttention
from contextlens.errors import InputError
from tests.view_pages import page_views

ENCODER = SelfAttention(toy_table(COURSE_VECTORS), n_layers=2)
PATCH = {"model": "m", "word": "bank", "at": "layer", "recipient": "the river </script> bank",
         "donor": "a bank loan", "pieces": ["bank"], "unpatched": 0.5,
         "rows": [{"layer": 1, "layer_name": "layer 1", "cosine_to_donor": 0.6, "cosine_to_recipient": 0.9},
                  {"layer": 2, "layer_name": "layer 2", "cosine_to_donor": 1.0, "cosine_to_recipient": 0.5}]}


def test_each_view_carries_the_result_and_its_page_is_small():
    s = sublayers(ENCODER, "bank loan river", "bank money", "bank")
    a = attributions(ENCODER, "money bank loan river", "bank")
    made = [views.sublayers_view(s), views.attributions_view(a), views.patch_view(PATCH)]
    assert [v.kind for v in made] == ["sublayers", "attributions", "patch"]
    assert {v.family for v in made} == {"explain"}
    assert made[0].data["rows"] == s["rows"] and made[1].data["layers"] == a["layers"]
    page = views.Page(*made).html()
    assert "plotly.js v" not in page and len(page.encode()) < 200_000
    assert "the river </script> bank" not in page  # user text reaches the page inert
    assert [v["rows"] for v in page_views(page) if v["kind"] == "patch"] == [PATCH["rows"]]
    assert made[2]._repr_html_().startswith('<iframe class="contextlens-view"')


@pytest.mark.parametrize("build, bad, message", [
    (views.sublayers_view, {"word": "bank"}, "not the result of sublayers (it lacks sentences, stages"),
    (views.attributions_view, [], "not the result of attributions (got list"),
    (views.patch_view, {**PATCH, "rows": [{"layer": 1}]},
     "not the result of patch (a row) (it lacks cosine_to_donor"),
])
def test_a_dict_that_is_not_the_result_is_one_clear_error(build, bad, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        build(bad)


def test_lengths_that_do_not_fit_are_refused():
    s = sublayers(ENCODER, "bank loan river", "bank money", "bank")
    s["rows"][0]["moved"] = [0.1]
    with pytest.raises(InputError, match="one value per sentence"):
        views.sublayers_view(s)
    a = attributions(ENCODER, "money bank loan river", "bank")
    a["layers"][0]["scores"]["raw"] = [0.5]
    with pytest.raises(InputError, match="one score per context word"):
        views.attributions_view(a)
