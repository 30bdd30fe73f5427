"""The contextual neighbours ranked with contrast (issue 26 §4): the lab's sentence tab sends its
"contrast" control with the neighbours request and draws the bars by score, both cosines beside,
under the legend "score = cosine − λ × cosine to 'bank'"; back at 0 it draws the cosines as before.
The CLI's ``neighbours --in … --contrast 0.5 --html`` page draws the same offline."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from contextlens.analysis.neighbours import contextual_neighbours
from contextlens.cli import app
from contextlens.encoders.registry import make_encoder
from tests.browser.test_lab_browser import open_lab
from tests.browser.test_lab_views_browser import S2, run_lab
from tests.browser.test_views_browser import offline_page

pytestmark = pytest.mark.browser

LEGEND = "score = cosine − λ × cosine to 'bank', λ = 0.5"
BARS = "#fig-neighbours .clv-bars li"


def drawn(page, root: str = BARS) -> list[tuple]:
    """Each bar's word, value (what its bar shows), cosine and cosine to the word, as drawn."""
    script = ("ls => ls.map(l => [l.querySelector('.clv-bar-word').textContent, +l.dataset.value, "
              "'cosine' in l.dataset ? +l.dataset.cosine : null, "
              "'ownCosine' in l.dataset ? +l.dataset.ownCosine : null])")
    return [tuple(x) for x in page.eval_on_selector_all(root, script)]


def test_the_contrast_control_ranks_the_neighbours_by_score(page, lab_url, screenshots):
    open_lab(page, lab_url)
    run_lab(page, S2, "bank", encoder="attention")
    page.wait_for_selector("#fig-neighbours .clv[data-kind='neighbours'][data-rendered='1']", timeout=60_000)
    encoder = make_encoder("attention", vectors="glove-6b-50d", include_self=True)
    plain = contextual_neighbours(encoder, S2[0], "bank", layer=-1, k=10)
    assert drawn(page) == [(n["word"], n["cosine"], None, None) for n in plain["neighbours"]]
    assert page.query_selector("#fig-neighbours .clv-legend") is None
    page.fill("#lab-contrast", "0.5")
    page.press("#lab-contrast", "Tab")  # the value is committed (change): the neighbours card runs again
    page.wait_for_selector("#fig-neighbours .clv-legend", timeout=60_000)
    assert page.inner_text("#fig-neighbours .clv-legend").startswith(LEGEND)
    want = contextual_neighbours(encoder, S2[0], "bank", layer=-1, k=10, contrast=0.5)
    assert drawn(page) == [(n["word"], n["score"], n["cosine"], n["own_cosine"]) for n in want["neighbours"]]
    assert [w for w, *_ in drawn(page)] != [n["word"] for n in plain["neighbours"]]  # a new ranking
    assert "nc=0.5" in page.url  # a shared URL keeps it
    page.screenshot(path=str(screenshots / "sentence-lab-neighbours-contrast.png"), full_page=True)
    page.fill("#lab-contrast", "0")
    page.press("#lab-contrast", "Tab")
    page.wait_for_selector("#fig-neighbours .clv[data-rendered='1']:not(:has(.clv-legend))", timeout=60_000)
    assert drawn(page) == [(n["word"], n["cosine"], None, None) for n in plain["neighbours"]]
    assert "nc=" not in page.url


def test_an_out_of_range_contrast_is_said_in_the_card(page, lab_url):
    open_lab(page, lab_url, "?nc=2")  # a shared URL's contrast is the server's to check
    run_lab(page, S2, "bank", encoder="attention")
    page.wait_for_function("document.querySelector('#fig-neighbours .fig-note') && document.querySelector("
                           "'#fig-neighbours .fig-note').textContent.includes('contrast')", timeout=60_000)
    assert "less than or equal to 1" in page.inner_text("#fig-neighbours .fig-note")


def test_the_clis_contrast_page_draws_the_scores_offline(browser, tmp_path):
    path = tmp_path / "contrast.html"
    res = CliRunner().invoke(app, ["neighbours", "bank", "--in", S2[1], "--method", "attention", "--contrast",
                                   "0.5", "--html", str(path)])
    assert res.exit_code == 0, res.output
    cli_default = make_encoder("attention", vectors="glove-6b-50d", include_self=False)  # the CLI's --method
    want = contextual_neighbours(cli_default, S2[1], "bank", k=10, contrast=0.5)
    with offline_page(browser, path) as page:
        assert page.inner_text(".clv-legend").startswith(LEGEND)
        assert drawn(page, ".clv-bars li") == [(n["word"], n["score"], n["cosine"], n["own_cosine"])
                                               for n in want["neighbours"]]
        heads = page.eval_on_selector_all(".clv-bars-head span", "ss => ss.map(s => s.textContent)")
        assert heads == ["word", "", "score", "cosine", "cosine to 'bank'"]
