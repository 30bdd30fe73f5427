"""The probes and CKA views, saved as one page and opened in Chromium with the network off,
draw the library's numbers (probe over a tiny SemCor, layer_cka over toy attention) without a
JavaScript error, with user text (a model's name) shown as text."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens import views
from contextlens.analysis.cka import layer_cka
from contextlens.analysis.probing import probe
from contextlens.encoders.mixing import SelfAttention
from contextlens.vectors import EmbeddingTable
from tests.browser.test_views_browser import offline_page
from tests.tiny_semcor import tiny_docs, write_semcor

pytestmark = pytest.mark.browser
WORDS = ["the", "bank", "river", "ran", "walked", "red", "old", "fast", "a", "an", "by", "of"]
NAME = "toy <img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def page_of_two(tmp_path_factory):
    root = tmp_path_factory.mktemp("probes")
    rng = np.random.default_rng(1)  # 2-D rows whose pos probe gains at layer 1: an expected layer to mark
    encoder = SelfAttention(EmbeddingTable(WORDS, rng.normal(size=(len(WORDS), 2)), name=NAME), n_layers=2)
    data = write_semcor(root / "data", tiny_docs())
    results = [probe(encoder, task, data_dir=data, cache_root=root / "cache")
               for task in ("pos", "supersense")]
    cka = layer_cka(encoder, ["the bank ran by the river", "an old red bank", "a red river ran fast"],
                    cache_root=root / "cache")
    path = views.Page(views.probes_view(results), views.cka_view(cka)).save_html(root / "know.html")
    return path, results, cka


def test_the_probes_and_cka_views_draw_offline(browser, page_of_two, screenshots):
    path, results, cka = page_of_two
    with offline_page(browser, path) as page:
        kinds = page.eval_on_selector_all(".clv[data-rendered='1']", "vs => vs.map(v => v.dataset.kind)")
        assert kinds == ["probes", "cka"]
        traces = page.evaluate("document.querySelector('.clv-probes-plot').data.map(t => t.y)")
        want = [[getattr(x, key) for x in r.rows] for r in results
                for key in ("accuracy", "control_accuracy", "selectivity")]
        assert traces == want
        shapes = page.evaluate("document.querySelector('.clv-probes-plot').layout.shapes.map(s => s.x0)")
        assert results[0].expected_layer is not None
        assert shapes == [r.expected_layer for r in results if r.expected_layer is not None]
        notes = page.evaluate(
            "document.querySelector('.clv-probes-plot').layout.annotations.map(a => a.text)"
        )
        assert notes[0] == f"E[layer] {results[0].expected_layer:.2f}"
        cells = page.eval_on_selector_all("table.clv-probes td[data-value]",
                                          "ts => ts.map(t => +t.dataset.value)")
        assert cells == [v for r in results for x in r.rows for v in (x.accuracy, x.control_accuracy,
                                                                      x.selectivity)]
        captions = page.eval_on_selector_all("table.clv-probes caption", "cs => cs.map(c => c.textContent)")
        # the name as text, not markup
        assert captions[0].startswith(f"pos — attention over {NAME} (linear probe)")
        z = page.evaluate("document.querySelector('.clv-cka-plot').data[0].z")
        assert z == [list(row) for row in cka.matrix]
        assert page.locator(".clv img").count() == 0
        page.screenshot(path=str(screenshots / "views-probes-cka.png"), full_page=True)


def test_thirty_one_layers_leave_no_label_on_another(browser, tmp_path, screenshots):
    """SmolLM2's 31 layers (30 and the embedding row), two tasks, in windows 1300, 640 and 480
    pixels wide: no tick label meets another, an axis title or the legend."""
    from tests.browser.test_views_every_kind_browser import label_overlaps

    rng = np.random.default_rng(1)
    encoder = SelfAttention(EmbeddingTable(WORDS, rng.normal(size=(len(WORDS), 4)), name="thirty"),
                            n_layers=30)
    data = write_semcor(tmp_path / "data", tiny_docs())
    results = [probe(encoder, task, data_dir=data, cache_root=tmp_path / "cache")
               for task in ("pos", "supersense")]
    cka = layer_cka(encoder, ["the bank ran by the river", "an old red bank", "a red river ran fast"],
                    cache_root=tmp_path / "cache")
    path = views.Page(views.probes_view(results), views.cka_view(cka)).save_html(tmp_path / "thirty.html")
    with offline_page(browser, path) as page:
        divs = page.query_selector_all(".js-plotly-plot")
        assert len(divs) == 2 and len(cka.layers[0]) == 31
        overlaps = []
        for width in (1300, 640, 480):
            page.set_viewport_size({"width": width, "height": 900})
            page.evaluate("() => Promise.all([...document.querySelectorAll('.js-plotly-plot')].map(d => "
                          "Plotly.Plots.resize(d)))")
            for div in divs:
                kind = div.evaluate("d => d.closest('.clv').dataset.kind")
                overlaps += [(width, kind, *pair) for pair in label_overlaps(div)]
            if width == 480:
                page.screenshot(path=str(screenshots / "views-probes-cka-480.png"), full_page=True)
        assert not overlaps, overlaps
