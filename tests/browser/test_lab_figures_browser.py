"""The lab's own Plotly cards (the layers chart, the cosine matrix, the projection, the senses)
keep to what every view keeps to (tests/browser/test_views_every_kind_browser.py):

- a word is keyed by its position: a sentence holding it twice gives two usages, two rows, and
  the layers card compares them too;
- a sentence, a usage and a cluster are named alike in the lab and in the views: from 0, as the
  JSON numbers them (S0, S0 #1, cluster 0);
- user text reaches a figure whole and inert, from a shared URL too: no live link or style;
- no label meets another, with 31 layers, in windows 1300, 640 and 480 pixels wide;
- every card downloads as PNG and SVG with its heading, the view cards with their own buttons
  (one pair per figure, never two).
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from urllib.parse import quote

import pytest

from contextlens import views
from contextlens.analysis.explore import explore
from contextlens.analysis.layers import usage_divergence
from contextlens.analysis.senses import senses
from contextlens.encoders.registry import make_encoder
from tests.browser.conftest import click_download, lab_page, serve_lab
from tests.browser.test_lab_browser import open_lab
from tests.browser.test_views_browser import offline_page
from tests.browser.test_views_every_kind_browser import HOSTILE, HOVERS, label_overlaps, squeeze

pytestmark = pytest.mark.browser

TWICE = ["The bank by the bank of the river closed.", "We sat on the bank of the river.",
         "Money in the bank."]
S3 = ["The bank approved my loan.", "We sat on the bank of the river.", "She put money in the bank."]
SENSES = [*S3, "Reeds grew along the bank of the stream.", "The bank raised its rates."]
OWN = ("fig-layers", "fig-matrix", "fig-projection")  # the sentence lab's own Plotly figures
SVG = "{http://www.w3.org/2000/svg}"
ATTENTION = "attention"  # self-attention over the lab's GloVe table: no model to load


def run_lab(page, url: str, sentences, word: str, encoder: str, figs=OWN, timeout=120_000) -> None:
    """The sentence lab opened from a shared URL (it runs at once), until ``figs`` are drawn."""
    open_lab(page, url,
             f"?tab=sentences&s={quote(chr(10).join(sentences))}&w={quote(word)}&m={quote(encoder)}")
    for fig in figs:
        page.wait_for_function(f"document.getElementById('{fig}').data !== undefined", timeout=timeout)


def lab_idle(page, timeout=120_000) -> None:
    """Until no card of the sentence lab is veiled: a click on a figure then reaches it (a veiled
    card is still computing, and its figure is about to be drawn again)."""
    page.wait_for_function("[...document.querySelectorAll('#panel-sentences .veil')].every((v) => v.hidden)",
                           timeout=timeout)


def run_senses(page, url: str, sentences, word: str, encoder: str, timeout=120_000) -> None:
    """The senses tab opened from a shared URL (it runs at once), until its figure is drawn."""
    open_lab(page, url,
             f"?tab=senses&ss={quote(chr(10).join(sentences))}&sw={quote(word)}&sm={quote(encoder)}")
    page.wait_for_function("document.getElementById('fig-senses').data !== undefined", timeout=timeout)


def test_a_word_twice_in_a_sentence_is_two_usages_of_the_matrix(page, lab_url):
    """The matrix and the projection were keyed by "S<sentence>": a sentence holding the word twice
    put both usages in one slot (and the lab did not ask for them: the card said "occurs 2 times")."""
    run_lab(page, lab_url, TWICE, "bank", "average", figs=("fig-matrix", "fig-projection"))
    want = explore(make_encoder("average", vectors="glove-6b-50d", alpha=0.0), TWICE, "bank",
                   occurrence="all")["words"][0]
    heat = page.evaluate("document.getElementById('fig-matrix').data[0]")
    assert heat["x"] == heat["y"] == [0, 1, 2, 3] and want["positions"] == [0, 0, 1, 2]
    assert heat["z"] == want["matrix"]
    ticks = page.eval_on_selector_all("#fig-matrix .xtick text", "ts => ts.map(t => t.textContent)")
    assert ticks == ["S0 #0", "S0 #1", "S1", "S2"]
    assert page.eval_on_selector_all("#fig-matrix .ytick text", "ts => ts.map(t => t.textContent)") == ticks
    points = page.evaluate("document.getElementById('fig-projection').data[0]")
    assert points["text"] == ticks and len(points["x"]) == 4
    assert page.locator("#fig-projection .scatterlayer .point").count() == 4


def test_the_layers_card_compares_every_two_usages_of_a_word_twice_in_a_sentence(page, lab_url):
    """The layers card failed on a sentence holding the word twice, telling the user to send
    "occurrence": "all", which /api/layers refused. It now asks for every usage, as the matrix
    does: each two are a line (the two of one sentence too), named by sentence and occurrence."""
    run_lab(page, lab_url, TWICE, "bank", "average", figs=("fig-matrix",))
    page.wait_for_function("document.getElementById('fig-layers').data !== undefined", timeout=30_000)
    want = usage_divergence(make_encoder("average", vectors="glove-6b-50d", alpha=0.0), TWICE, "bank",
                            occurrence="all")["pairs"]
    lines = page.evaluate("document.getElementById('fig-layers').data.map(t => ({name: t.name, y: t.y}))")
    assert [t["name"] for t in lines] == [p["label"] for p in want] == [
        "S0 #0–S0 #1", "S0 #0–S1", "S0 #0–S2", "S0 #1–S1", "S0 #1–S2", "S1–S2"]
    for got, p in zip(lines, want, strict=True):
        assert got["y"] == pytest.approx(p["cosine_by_layer"], abs=1e-6)
    legend = page.eval_on_selector_all("#fig-layers .legendtext", "ts => ts.map(t => t.textContent)")
    assert legend == [p["label"] for p in want]
    said = squeeze(page.eval_on_selector("#fig-layers", HOVERS)[0]["text"])  # the first line: S0's two
    assert squeeze(f"S0 #0: {TWICE[0]}") in said and squeeze(f"S0 #1: {TWICE[0]}") in said
    assert page.locator("#fig-layers .fig-note").count() == 0 and page.inner_text("#lab-error") == ""


def test_the_views_name_sentences_usages_and_clusters_as_the_lab_does(page, browser, lab_url, tmp_path):
    """The views named sentences, usages and clusters from 1 (S1 #1, cluster 1) beside the lab's S0
    and cluster 0 for the same ones: a view and the lab now show the same names for the same
    sentences, the JSON's indices."""
    run_lab(page, lab_url, TWICE, "bank", "average")
    lab_ticks = page.eval_on_selector_all("#fig-matrix .xtick text", "ts => ts.map(t => t.textContent)")
    lab_lines = page.eval_on_selector_all("#fig-layers .legendtext", "ts => ts.map(t => t.textContent)")
    run_senses(page, lab_url, SENSES, "bank", ATTENTION)
    lab_clusters = page.eval_on_selector_all("#senses-clusters h3", "hs => hs.map(h => h.textContent)")
    lab_legend = page.eval_on_selector_all("#fig-senses .legendtext", "ts => ts.map(t => t.textContent)")

    average = make_encoder("average", vectors="glove-6b-50d", alpha=0.0)
    attention = make_encoder("attention", vectors="glove-6b-50d", include_self=True)
    made = [views.cosine_view(explore(average, TWICE, "bank", occurrence="all")),
            views.layers_view(usage_divergence(average, TWICE, "bank", occurrence="all")),
            views.senses_view(senses(attention, SENSES, "bank", missing="skip", projection="pca"), SENSES)]
    path = views.Page(*made, title="the lab's names").save_html(tmp_path / "names.html")
    with offline_page(browser, path) as view:
        at = lambda kind, sel: view.eval_on_selector_all(  # noqa: E731
            f".clv[data-kind='{kind}'] {sel}", "ts => ts.map(t => t.textContent)")
        assert at("cosine", ".xtick text") == lab_ticks == ["S0 #0", "S0 #1", "S1", "S2"]
        assert at("cosine", ".ytick text") == lab_ticks
        assert at("layers", ".legendtext") == lab_lines
        assert at("senses", ".clv-cluster h4") == lab_clusters and lab_clusters[0].startswith("cluster 0 (")
        assert at("senses", ".legendtext") == lab_legend


HOVER_ALL = """div => div.data.flatMap((t, c) => t.x.map((_, p) => {  // every point's hover label
    Plotly.Fx.hover(div, [{curveNumber: c, pointNumber: p}]);
    const label = div.querySelector('.hoverlayer');
    const got = {text: label ? label.textContent : '', links: label ? label.querySelectorAll('a').length : 0};
    Plotly.Fx.unhover(div);
    return got;
}))"""


def assert_inert(page, panel: str, labels: list[dict], sentences) -> None:
    """No hover label holds a link, none of ``panel``'s figures a link or a style from the text,
    and every sentence is in some label, whole."""
    assert labels and all(h["links"] == 0 for h in labels), labels
    assert page.locator(f"{panel} .js-plotly-plot a").count() == 0
    styles = page.eval_on_selector_all(f"{panel} .js-plotly-plot tspan[style]",
                                       "ts => ts.map(t => t.getAttribute('style'))")
    assert not [s for s in styles if "red" in s], styles
    shown = squeeze(" ".join(h["text"] for h in labels))
    for s in sentences:
        assert squeeze(s) in shown, s


def test_user_text_reaches_the_labs_figures_whole_and_inert(page, lab_url, screenshots):
    """Issue 21 item 5: the projection's hovers and the senses' points rendered a sentence's
    <a href>, <b> and <span style> as a live link and styles, from a shared URL too; the layers
    chart's hovers did not say which sentences a line compares."""
    run_lab(page, lab_url, HOSTILE, "bank", ATTENTION)
    layers = page.eval_on_selector("#fig-layers", HOVERS)
    assert (squeeze(HOSTILE[0]) in squeeze(layers[0]["text"])
            and squeeze(HOSTILE[1]) in squeeze(layers[0]["text"]))
    matrix = page.eval_on_selector("#fig-matrix", HOVERS)  # the cell of usages 0 and 1
    projection = page.eval_on_selector("#fig-projection", HOVER_ALL)
    assert_inert(page, "#panel-sentences", layers + matrix + projection, HOSTILE)
    assert squeeze(HOSTILE[1]) in squeeze(matrix[0]["text"])
    page.eval_on_selector("#fig-projection", "d => Plotly.Fx.hover(d, [{curveNumber: 0, pointNumber: 1}])")
    page.locator("figure:has(#fig-projection)").screenshot(path=str(screenshots / "lab-hostile-hover.png"))

    run_senses(page, lab_url, HOSTILE, "bank", ATTENTION)
    senses = page.eval_on_selector("#fig-senses", HOVER_ALL)
    assert_inert(page, "#panel-senses", senses, HOSTILE)


def _lab_models(root):
    from tests.integration.tiny_models import tiny_lms, tiny_model

    deep = tiny_model(root, "llama", layers=30)  # 31 layers with the embedding row, as SmolLM2
    causal = tiny_lms(root) / "causal"  # a causal LM with its head: the logit lens draws
    return str(deep), str(causal)


@pytest.fixture(scope="module")
def tiny_lab(chromium_path, tmp_path_factory):
    pytest.importorskip("torch")
    deep, causal = _lab_models(tmp_path_factory.mktemp("lab-models"))
    with serve_lab(models=[], add_models=[deep, causal]) as url:
        yield url, deep, causal


def test_labels_of_the_labs_figures_never_meet(browser, tiny_lab, screenshots):
    """Issue 20 item 8: with 31 layers the layers chart's names ran into one another (category
    names at 45°); the senses legend sat under the plot, on its axis title. At every width no
    tick label meets another, an axis title or a legend."""
    url, deep, _ = tiny_lab
    with lab_page(browser, url) as page:
        run_senses(page, url, SENSES, "bank", deep)
        run_lab(page, url, S3, "bank", deep)
        assert page.evaluate("document.getElementById('fig-layers').data[0].x.length") == 31
        overlaps = []
        for width in (1300, 640, 480):
            page.set_viewport_size({"width": width, "height": 900})
            for tab, figs in (("senses", ["fig-senses"]), ("sentences", OWN)):
                page.click(f"#tab-{tab}")
                for fig in figs:
                    div = page.query_selector(f"#{fig}")
                    div.evaluate("d => Plotly.Plots.resize(d)")
                    overlaps += [(width, fig, *pair) for pair in label_overlaps(div)]
        assert not overlaps, overlaps
        page.locator("figure:has(#fig-layers)").screenshot(path=str(screenshots / "lab-layers-31-480.png"))


def caption(page, figure: str) -> str:
    """The heading of a card as shown: its caption's text, a list as its chosen entry."""
    return page.eval_on_selector(f"{figure} figcaption", """c => [...c.childNodes].map(n =>
        n.nodeType === Node.TEXT_NODE ? n.textContent
        : n.tagName === 'SELECT' ? n.options[n.selectedIndex].text : n.textContent).join(' ')""")


def download(page, button: str):
    with page.expect_download() as got:
        page.click(button)
    return got.value


def assert_downloads(page, button: str, name: str, heading: str) -> ET.Element:
    """The figure behind ``button`` (a selector ending before the format) as SVG and PNG: named
    ``name``, its heading in the SVG, the PNG the SVG at twice its size, drawn."""
    from PIL import Image

    svg_file = download(page, f"{button}[data-format='svg']")
    assert svg_file.suggested_filename == f"{name}.svg"
    svg = ET.fromstring(open(svg_file.path(), encoding="utf-8").read())
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
    assert squeeze(heading) in squeeze("".join(texts)), (name, heading, texts[:8])
    assert not {"PNG", "SVG"} & set(texts), (name, "the download buttons are not part of the figure")
    assert sum(1 for _ in svg.iter()) - len(texts) >= 8, name  # the figure, not only its words
    png_file = download(page, f"{button}[data-format='png']")
    assert png_file.suggested_filename == f"{name}.png"
    png = Image.open(io.BytesIO(open(png_file.path(), "rb").read())).convert("L")
    assert png.size == (2 * int(svg.get("width")), 2 * int(svg.get("height"))), name
    assert png.getextrema()[0] < 100, (name, "no dark text in the PNG")
    return svg


def test_every_card_downloads_as_png_and_svg_with_its_heading(page, lab_url):
    """Issue 20 item 10: the lab's own cards downloaded through Plotly.downloadImage, with no title
    (and Plotly's camera did the same); the toy plane without its caption. Now every figure saves
    the card as drawn (CLViews.toSvg / toPng): its heading, its chosen layer, no buttons."""
    run_lab(page, lab_url, S3, "bank", ATTENTION)
    page.wait_for_function("document.querySelectorAll('#fig-attention .clv[data-rendered=\"1\"]').length === "
                           "3")
    page.wait_for_selector("#fig-occlusion .clv[data-rendered='1']")
    page.wait_for_selector("#fig-neighbours .clv[data-rendered='1']", timeout=120_000)
    page.wait_for_selector("#fig-lens .fig-note")  # attention over GloVe predicts no word: no figure there
    lab_idle(page)
    assert page.locator(".modebar-btn[data-title^='Download']").count() == 0  # no title-less camera
    for fig in OWN:
        card = f"figure:has(#{fig})"
        svg = assert_downloads(page, f".downloads[data-fig='{fig}'] button", f"contextlens-{fig[4:]}",
                               # the matrix's heading: "… at layer 1: attention 1 (default)"
                               caption(page, card))
        # the card, and in it the figure as Plotly exports it
        assert len(list(svg.iter(f"{SVG}svg"))) == 2, fig
    # the view cards: each view with its own two buttons and its own title, the card adds none
    for fig in ("fig-attention", "fig-occlusion", "fig-neighbours"):
        n = page.locator(f"#{fig} .clv").count()
        assert page.locator(f"figure:has(#{fig}) button[data-format='png']").count() == n >= 1
        for k in range(n):
            view = page.locator(f"#{fig} .clv").nth(k)
            kind, title = view.get_attribute("data-kind"), view.locator(".clv-title").inner_text()
            one = f"#{fig} > section.clv:nth-child({k + 1})"  # the lab draws each view in its own section
            got = click_download(page, f"{one} button.clv-download[data-format='svg']", one)
            assert got is not None and got.suggested_filename == f"contextlens-{kind}.svg", (fig, k, kind)
            assert squeeze(title) in squeeze(open(got.path(), encoding="utf-8").read())
    assert page.locator("figure:has(#fig-lens) button[data-format]").count() == 0
    for fig in OWN:  # one pair of buttons per card of the lab's own
        assert page.locator(f"figure:has(#{fig}) button[data-format]").count() == 2

    run_senses(page, lab_url, SENSES, "bank", ATTENTION)
    assert_downloads(page, ".downloads[data-fig='fig-senses'] button", "contextlens-senses",
                     caption(page, "figure:has(#fig-senses)"))


def test_the_toy_plane_downloads_with_its_caption(page, lab_url):
    open_lab(page, lab_url)
    svg = assert_downloads(page, "[data-download='plane']", "contextlens-toy-plane",
                           caption(page, "figure.plane-card"))
    plane = next(e for e in svg.iter(f"{SVG}svg") if e.find(f".//{SVG}circle[@id='ctx-A']") is not None)
    dashed = [e.get("style") for e in plane.iter(f"{SVG}line") if "stroke-dasharray:5" in (e.get("style")
                                                                                           or "")]
    assert len(dashed) == 1, "bank's static vector is dashed in the download as on the page"


def test_the_lens_card_downloads_with_its_title(browser, tiny_lab):
    url, _, causal = tiny_lab
    with lab_page(browser, url) as page:
        run_lab(page, url, S3, "bank", causal)
        page.wait_for_selector("#fig-lens .clv[data-rendered='1']", timeout=120_000)
        title = page.inner_text("#fig-lens .clv-title")
        with page.expect_download() as got:
            page.click("#fig-lens .clv button.clv-download[data-format='png']")
        assert got.value.suggested_filename == "contextlens-lens.png"
        with page.expect_download() as got:
            page.click("#fig-lens .clv button.clv-download[data-format='svg']")
        assert squeeze(title) in squeeze(open(got.value.path(), encoding="utf-8").read())
        assert page.locator("figure:has(#fig-lens) button[data-format='png']").count() == 1
