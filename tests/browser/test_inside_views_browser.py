"""The lens, occlusion and neighbours views, saved as one page and opened in Chromium with the
network off, draw the library's numbers without a JavaScript error; the lab's sentence tab
draws the neighbours view from /api/views/neighbours, the occlusion view from
/api/views/occlusion and, for a causal model, the lens view from /api/views/lens."""

from __future__ import annotations

import pytest

from contextlens import views
from contextlens.analysis.neighbours import contextual_neighbours
from contextlens.analysis.occlusion import occlusion_vs_attention
from contextlens.encoders.registry import make_encoder
from tests.browser.conftest import lab_page, serve_lab
from tests.browser.test_lab_browser import open_lab
from tests.browser.test_lab_views_browser import S2, run_lab
from tests.browser.test_views_browser import offline_page
from tests.missing import need

pytestmark = pytest.mark.browser
need("torch")
need("transformers")


@pytest.fixture(scope="module")
def page_of_three(tmp_path_factory):
    from contextlens.encoders.lm import LanguageModel
    from tests.integration.tiny_models import tiny_lms

    root = tmp_path_factory.mktemp("inside")
    lens = LanguageModel(str(tiny_lms(root) / "causal")).lens("the bank of the river", 2, k=4,
                                                              track=["river", "bank"])
    encoder = make_encoder("attention", vectors="glove-6b-50d", include_self=True)
    occ = occlusion_vs_attention(encoder, S2[1], "bank")
    nb = contextual_neighbours(make_encoder("static", vectors="glove-6b-50d"), S2[1], "bank", k=7)
    path = views.Page(views.lens_view(lens), views.occlusion_view(occ), views.neighbours_view(nb)).save_html(
        root / "three.html")
    return path, lens, occ, nb


def test_the_three_views_draw_offline(browser, page_of_three, screenshots):
    path, lens, occ, nb = page_of_three
    with offline_page(browser, path) as page:
        kinds = page.eval_on_selector_all(".clv[data-rendered='1']", "vs => vs.map(v => v.dataset.kind)")
        assert kinds == ["lens", "occlusion", "neighbours"]
        grid = page.evaluate("document.querySelector('.clv-lens-grid').data[0].z")
        assert grid == [[w.probability for w in layer.top] for layer in lens.layers]
        ranks = page.evaluate("document.querySelector('.clv-lens-lines').data.map(t => t.y)")
        assert ranks == [[layer.tracked[i].rank for layer in lens.layers] for i in range(2)]
        bars = page.locator(".clv[data-kind='occlusion'] .clv-occ-bars")
        assert bars.get_attribute("data-layer") == str(occ["layers"][-1]["layer"])
        shown = page.evaluate("document.querySelector('.clv-occ-bars').data.map(t => t.y)")
        assert shown == [occ["layers"][-1][k] for k in ("occlusion", "attention", "rollout")]
        spearman = page.evaluate("document.querySelector('.clv-occ-spearman').data[0].y")
        assert spearman == [x["spearman_attention"] for x in occ["layers"]]
        got = page.eval_on_selector_all(".clv-bars li", "ls => ls.map(l => +l.dataset.value)")
        assert got == [n["cosine"] for n in nb["neighbours"]] and len(got) == 7
        assert page.inner_text(".clv-usage mark") == "bank"
        page.screenshot(path=str(screenshots / "views-lens-occlusion-neighbours.png"), full_page=True)


def test_the_sentence_tab_shows_the_contextual_neighbours(page, lab_url):
    open_lab(page, lab_url)
    run_lab(page, S2, "bank", encoder="static")
    page.wait_for_selector("#fig-neighbours .clv[data-kind='neighbours'][data-rendered='1']", timeout=60_000)
    want = contextual_neighbours(make_encoder("static", vectors="glove-6b-50d"), S2[0], "bank", layer=0, k=10)
    got = page.eval_on_selector_all("#fig-neighbours .clv-bars li .clv-bar-word",
                                    "ws => ws.map(w => w.textContent)")
    assert got == [n["word"] for n in want["neighbours"]]
    assert page.inner_text("#fig-neighbours .clv-usage mark") == "bank"


def test_the_sentence_tab_shows_occlusion_beside_attention(page, lab_url):
    open_lab(page, lab_url)
    run_lab(page, S2, "bank", encoder="attention")
    page.wait_for_selector("#fig-occlusion .clv[data-kind='occlusion'][data-rendered='1']")
    want = occlusion_vs_attention(make_encoder("attention", vectors="glove-6b-50d", include_self=True), S2[0],
                                  "bank")
    shown = page.evaluate("document.querySelector('#fig-occlusion .clv-occ-bars').data.map(t => t.y)")
    assert shown == [want["layers"][-1][k] for k in ("occlusion", "attention", "rollout")]
    page.select_option("#lab-att-sentence", index=1)  # the other sentence: option 1, labelled 1 (from 0)
    want = occlusion_vs_attention(make_encoder("attention", vectors="glove-6b-50d", include_self=True), S2[1],
                                  "bank")
    page.wait_for_function("document.querySelector('#fig-occlusion .clv-occ-bars') && "
                           f"document.querySelector('#fig-occlusion .clv-occ-bars').data[0].y.length === "
                           f"{len(want['others'])}")
    shown = page.evaluate("document.querySelector('#fig-occlusion .clv-occ-bars').data.map(t => t.y)")
    assert shown == [want["layers"][-1][k] for k in ("occlusion", "attention", "rollout")]
    run_lab(page, S2, "bank", encoder="static")  # no attention to compare with: said in the card
    page.wait_for_function("document.querySelector('#fig-occlusion .fig-note') && "
                           "document.querySelector('#fig-occlusion .fig-note').textContent.includes('no "
                           "attention')")


def test_the_sentence_tab_shows_the_logit_lens_of_a_causal_model(browser, tmp_path):
    from contextlens.encoders.lm import LanguageModel
    from tests.integration.tiny_models import tiny_lms

    causal = str(tiny_lms(tmp_path) / "causal")
    with serve_lab(add_models=[causal]) as url, lab_page(browser, url) as page:
        open_lab(page, url)
        run_lab(page, S2, "bank", encoder=causal)
        page.wait_for_selector("#fig-lens .clv[data-kind='lens'][data-rendered='1']", timeout=60_000)
        # after "bank": "approved"?
        want = LanguageModel(causal, threads=1).lens(S2[0], 1, k=5, track=["approved"])
        assert page.evaluate("document.querySelector('#fig-lens .clv-lens-grid').data[0].z") == [
            [w.probability for w in layer.top] for layer in want.layers]
        assert page.evaluate("document.querySelector('#fig-lens .clv-lens-lines').data.map(t => t.y)") == [
            [layer.tracked[0].rank for layer in want.layers]]
        run_lab(page, S2, "bank", encoder="static")  # not a language model: the card says what to pick
        page.wait_for_function("document.querySelector('#fig-lens .fig-note') && "
                               "document.querySelector('#fig-lens .fig-note').textContent.includes('causal "
                               "language model')")
