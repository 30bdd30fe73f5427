"""The explanation views opened in Chromium with the network off: each draws the library's numbers
(the sublayers view a bar per block and usage, the attribution view a row per method and a cell
per context word at the chosen layer with its Spearman, the patching view a point per layer and
line), and a 40-word sentence of a 12-layer model gives pages under 1 MB."""

from __future__ import annotations

import pytest

from contextlens import views
from contextlens.analysis.faithfulness import attributions
from contextlens.analysis.patching import patch
from contextlens.analysis.sublayers import sublayers
from tests.browser.test_views_browser import LONG, offline_page
from tests.missing import need

pytestmark = pytest.mark.browser
need("torch")

RIVER = "We sat on the river bank and watched the water flow past."
MONEY = "I deposited money at the bank."


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from contextlens.encoders.transformer import TransformerEncoder
    from tests.integration.tiny_models import tiny_model

    path = tiny_model(tmp_path_factory.mktemp("explain-views"), "bert", layers=3, init=0.2)
    return TransformerEncoder(str(path))


def values(page, selector: str) -> list[float]:
    return page.eval_on_selector_all(selector, "es => es.map(e => +e.dataset.value)")


def test_each_view_draws_the_library_s_numbers(browser, bert, tmp_path, screenshots):
    s = sublayers(bert, RIVER, MONEY, "bank")
    a = attributions(bert, RIVER, "bank", steps=8)
    p = patch(bert, RIVER, MONEY, "bank")
    path = views.Page(views.sublayers_view(s), views.attributions_view(a), views.patch_view(p)).save_html(
        tmp_path / "explain.html")
    with offline_page(browser, path) as page:
        moved = values(page, ".clv[data-kind='sublayers'] .clv-moved")
        assert moved == pytest.approx([m for r in s["rows"] for m in r["moved"]])
        cos = values(page, ".clv[data-kind='sublayers'] .clv-cos-dot")
        assert cos == pytest.approx([s["start"]["cosine"], *[r["cosine"] for r in s["rows"]]])
        attr = ".clv[data-kind='attributions']"
        assert page.get_attribute(f"{attr} .clv-stage", "data-layer") == "3"  # the last layer first
        last = a["layers"][-1]
        for m in a["methods"]:
            row = f"{attr} table.clv-attr tr[data-method='{m}']"
            assert values(page, f"{row} td[style]:not(.clv-rho)") == pytest.approx(last["scores"][m])
            assert values(page, f"{row} td.clv-rho") == pytest.approx([last["spearman"][m]])
        page.select_option(f"{attr} select.clv-attr-layer", "0")
        assert page.get_attribute(f"{attr} .clv-stage", "data-layer") == "1"
        assert values(page, f"{attr} table.clv-attr tr[data-method='occlusion'] td[style]") == pytest.approx(
            a["layers"][0]["occlusion"])
        assert page.locator(f"{attr} table.clv-faith tbody tr").count() == 3
        donor = values(page, ".clv[data-kind='patch'] .clv-to-donor-dot")
        assert donor == pytest.approx([r["cosine_to_donor"] for r in p["rows"]])
        assert len(values(page, ".clv[data-kind='patch'] .clv-to-recipient-dot")) == 3
        page.screenshot(path=str(screenshots / "views-explain.png"), full_page=True)


def test_a_40_word_sentence_of_a_12_layer_model_makes_small_pages(tmp_path_factory):
    from contextlens.encoders.transformer import TransformerEncoder
    from tests.integration.tiny_models import tiny_model

    encoder = TransformerEncoder(str(tiny_model(tmp_path_factory.mktemp("big"), "bert", layers=12, heads=12,
                                                hidden=96, init=0.2)))
    text = " ".join(LONG[:40])
    other = " ".join(LONG[40:60]) + " bank"
    made = [views.sublayers_view(sublayers(encoder, text, other, "bank", occurrences=(0, 0))),
            views.attributions_view(attributions(encoder, text, "bank", occurrence=0, steps=4)),
            views.patch_view(patch(encoder, text, other, "bank", occurrences=(0, 0)))]
    sizes = {v.kind: len(v.html().encode()) for v in made}
    assert all(size < 1_000_000 for size in sizes.values()), sizes
