"""The sentence lab's cards inside the layers (issue 24): the blocks of every layer, the attributions
beside occlusion and patching draw the library's views of the library's numbers for the chosen
sentence and the second one, a new second sentence, method set or patch point redraws only its
cards, the shared URL keeps those choices, and a training-free encoder gets what it has (one
attention stage; the attention methods) and the reason for what it has not (no patching)."""

from __future__ import annotations

import pytest

from contextlens.analysis.faithfulness import attributions
from contextlens.analysis.patching import patch
from contextlens.analysis.sublayers import sublayers
from tests.browser.conftest import lab_page, serve_lab
from tests.browser.test_lab_browser import open_lab
from tests.browser.test_lab_views_browser import run_lab
from tests.missing import need

pytestmark = pytest.mark.browser
need("torch")
need("transformers")

S3 = ["We sat on the bank of the river.", "The bank approved my loan.", "A loan from the bank."]
CARDS = {"fig-sublayers": "sublayers", "fig-attributions": "attributions", "fig-patch": "patch"}


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    from tests.integration.tiny_models import tiny_model

    return str(tiny_model(tmp_path_factory.mktemp("lab-explain"), "bert", layers=3, init=0.2))


@pytest.fixture(scope="module")
def explain_lab(chromium_path, bert):
    with serve_lab(add_models=[bert]) as url:
        yield url


@pytest.fixture(scope="module")
def encoder(bert):
    from contextlens.encoders.registry import make_encoder

    return make_encoder(model=bert)


def values(page, selector: str) -> list[float]:
    return page.eval_on_selector_all(selector, "es => es.map(e => +e.dataset.value)")


def wait_drawn(page, fig: str, kind: str) -> None:
    """Until card ``fig`` shows a view of ``kind`` and no veil (its run has answered)."""
    page.wait_for_function("([fig, kind]) => { const d = document.getElementById(fig); "
                           "const veil = d.parentElement.querySelector('.veil'); "
                           "return !!d.querySelector(`.clv[data-kind='${kind}'][data-rendered='1']`) "
                           "&& (!veil || veil.hidden); }", arg=[fig, kind], timeout=120_000)


def test_the_three_cards_draw_the_librarys_numbers(browser, explain_lab, encoder, bert, screenshots):
    with lab_page(browser, explain_lab) as page:
        open_lab(page, explain_lab)
        run_lab(page, S3, "bank", encoder=bert)
        for fig, kind in CARDS.items():
            wait_drawn(page, fig, kind)
        # the chosen sentence (0) and the second one (the first other: 1)
        assert page.input_value("#lab-other-sentence") == "1"
        s = sublayers(encoder, S3[0], S3[1], "bank")
        assert values(page, "#fig-sublayers .clv-moved") == pytest.approx(
            [m for r in s["rows"] for m in r["moved"]], rel=1e-4, abs=1e-6)
        keys = page.inner_text("#fig-sublayers .clv-keys")
        assert f"S0: {S3[0]}" in keys and f"S1: {S3[1]}" in keys
        a = attributions(encoder, S3[0], "bank")  # every method: the card's default
        last = a["layers"][-1]
        for m in a["methods"]:
            row = f"#fig-attributions table.clv-attr tr[data-method='{m}']"
            drawn = values(page, f"{row} td[style]:not(.clv-rho)")
            assert drawn == pytest.approx(last["scores"][m], rel=1e-3, abs=1e-6)
        assert a["methods"] == ["raw", "rollout", "flow", "norm", "value-zeroing", "grad-input", "ig"]
        p = patch(encoder, S3[0], S3[1], "bank")
        assert values(page, "#fig-patch .clv-to-donor-dot") == pytest.approx(
            [r["cosine_to_donor"] for r in p["rows"]], rel=1e-4, abs=1e-6)
        page.screenshot(path=str(screenshots / "sentence-lab-explain.png"), full_page=True)

        # a second sentence of its own: the blocks and patching redraw with it, named as the lab numbers it
        attr_before = page.inner_html("#fig-attributions")
        page.select_option("#lab-other-sentence", "2")
        wait_drawn(page, "fig-sublayers", "sublayers")
        wait_drawn(page, "fig-patch", "patch")
        assert f"S2: {S3[2]}" in page.inner_text("#fig-sublayers .clv-keys")
        s2 = sublayers(encoder, S3[0], S3[2], "bank")
        assert values(page, "#fig-sublayers .clv-moved") == pytest.approx(
            [m for r in s2["rows"] for m in r["moved"]], rel=1e-4, abs=1e-6)
        p2 = patch(encoder, S3[0], S3[2], "bank")
        assert values(page, "#fig-patch .clv-to-donor-dot") == pytest.approx(
            [r["cosine_to_donor"] for r in p2["rows"]], rel=1e-4, abs=1e-6)
        assert page.inner_html("#fig-attributions") == attr_before  # not its sentence: left alone

        # fewer methods, another patch point: each redraws its card, and the URL keeps them
        page.select_option("#lab-methods", "raw,rollout,flow")
        wait_drawn(page, "fig-attributions", "attributions")
        methods = page.eval_on_selector_all("#fig-attributions table.clv-attr tr[data-method]",
                                            "rs => rs.map(r => r.dataset.method)")
        assert methods == ["occlusion", "raw", "rollout", "flow"]
        page.select_option("#lab-patch-at", "ffn")
        wait_drawn(page, "fig-patch", "patch")
        p3 = patch(encoder, S3[0], S3[2], "bank", at="ffn")
        assert values(page, "#fig-patch .clv-to-donor-dot") == pytest.approx(
            [r["cosine_to_donor"] for r in p3["rows"]], rel=1e-4, abs=1e-6)
        url = page.url
        assert "ao=2" in url and "am=raw%2Crollout%2Cflow" in url and "pa=ffn" in url
    with lab_page(browser, explain_lab) as page:  # the shared URL draws the same cards
        open_lab(page, explain_lab, url[len(explain_lab) + 1:])
        page.wait_for_function("document.querySelector('#lab-other-sentence').options.length === 3")
        assert page.input_value("#lab-other-sentence") == "2"
        assert page.input_value("#lab-methods") == "raw,rollout,flow"
        assert page.input_value("#lab-patch-at") == "ffn"


def test_a_training_free_encoder_gets_what_it_has_and_says_what_not(browser, explain_lab):
    with lab_page(browser, explain_lab) as page:
        open_lab(page, explain_lab)
        run_lab(page, S3, "bank", encoder="attention")
        wait_drawn(page, "fig-sublayers", "sublayers")
        wait_drawn(page, "fig-attributions", "attributions")
        assert "no feed-forward block" in page.inner_text("#fig-sublayers")
        methods = page.eval_on_selector_all("#fig-attributions table.clv-attr tr[data-method]",
                                            "rs => rs.map(r => r.dataset.method)")
        assert methods == ["occlusion", "raw", "rollout", "flow"]
        page.wait_for_function("document.querySelector('#fig-patch')?.textContent.includes('no transformer')",
                               timeout=60_000)
        assert page.locator("#fig-patch .clv").count() == 0
