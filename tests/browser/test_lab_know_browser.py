"""The lab's "What layers know" tab, in Chromium: the probes card draws the library's probes view
from /api/views/probes (a tiny SemCor in the data folder, attention over the packaged GloVe table:
seconds), the CKA card the CKA view from /api/views/cka (tiny corpora), each behind a veil that says
what takes long, and a bad request is the server's one line under the form."""

from __future__ import annotations

import pytest

from contextlens.analysis.cka import corpus_sample, layer_cka
from contextlens.analysis.probing import probe
from contextlens.encoders.registry import make_encoder
from tests.browser.conftest import lab_page, serve_lab
from tests.browser.test_lab_browser import open_lab
from tests.integration.test_web_probes import tiny_data

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def know(chromium_path, tmp_path_factory):
    """A lab reading a tiny data folder and a cache of its own: (its URL, the data folder)."""
    root = tmp_path_factory.mktemp("know")
    data = tiny_data(root / "data")
    with pytest.MonkeyPatch.context() as mp:  # the server's process inherits them
        mp.setenv("CONTEXTLENS_DATA", str(data))
        mp.setenv("CONTEXTLENS_CACHE", str(root / "cache"))
        with serve_lab() as url:
            yield url, data


def test_the_probes_card_draws_the_librarys_probes(browser, know, screenshots, tmp_path, monkeypatch):
    url, data = know
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    with lab_page(browser, url) as page:
        open_lab(page, url, "?tab=know")
        assert page.is_visible("#panel-know") and page.get_attribute("#tab-know", "aria-selected") == "true"
        page.select_option("#probes-encoder", "attention")
        page.check("#probes-tasks input[value='supersense']")
        page.click("#probes-run")
        assert "SemCor's 40,000 words" in page.inner_text("#fig-probes ~ .veil, #fig-probes + .veil")
        page.wait_for_selector("#fig-probes .clv[data-kind='probes'][data-rendered='1']", timeout=60_000)
        encoder = make_encoder("attention", vectors="glove-6b-50d")
        want = [probe(encoder, task, data_dir=data) for task in ("pos", "supersense")]
        shown = page.evaluate("document.querySelector('#fig-probes .clv-probes-plot').data.map(t => t.y)")
        assert shown == [[getattr(x, k) for x in r.rows] for r in want
                         for k in ("accuracy", "control_accuracy", "selectivity")]
        assert "pt=pos%2Csupersense" in page.url and "pm=attention" in page.url
        page.locator("#fig-probes").screenshot(path=str(screenshots / "lab-know-probes.png"))


def test_the_cka_card_draws_the_librarys_cka(browser, know, tmp_path, monkeypatch):
    url, data = know
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))
    with lab_page(browser, url) as page:
        open_lab(page, url, "?tab=know")
        page.select_option("#cka-encoder", "attention")
        page.select_option("#cka-other", "static")
        page.fill("#cka-sample", "5")
        page.click("#cka-run")
        page.wait_for_selector("#fig-cka .clv[data-kind='cka'][data-rendered='1']", timeout=60_000)
        want = layer_cka(make_encoder("attention", vectors="glove-6b-50d"), corpus_sample(data, 5),
                         other=make_encoder("static", vectors="glove-6b-50d"))
        z = page.evaluate("document.querySelector('#fig-cka .clv-cka-plot').data[0].z")
        assert z == [list(row) for row in want.matrix]
        page.fill("#cka-sample", "400")  # more sentences than the tiny corpora hold: the server's one line
        page.click("#cka-run")
        page.wait_for_function("document.querySelector('#cka-error').textContent !== ''")
        assert "the corpora hold only 18 sentences" in page.inner_text("#cka-error")
