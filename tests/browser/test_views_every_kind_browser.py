"""What must hold for every kind of view, checked in Chromium on saved pages (network off):

- a sentence holding ``<!--<script>`` or ``</script>`` leaves every view drawn (the data
  embedded in the page is escaped once, in the views' packing);
- user text reaches a Plotly figure whole and inert: ``<a href>``, ``<b>``, ``<span style>``,
  entities and ``%{x}`` are shown as written, never as links, styles or cut text;
- a word's position, not its string, is its key: the two *the* of a sentence are two bars, a
  sentence holding the word twice gives two rows and columns;
- a span given in the library's offsets (code points) marks the right characters after emoji;
- tick labels, axis titles and legends do not overlap (31 layers, a 25-word sentence);
- every view downloads as SVG and PNG, with its title.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET

import pytest

from contextlens import views
from contextlens.analysis.layers import layer_divergence
from contextlens.analysis.occlusion import occlusion_vs_attention
from contextlens.encoders.mixing import SelfAttention
from tests.browser.conftest import click_download
from tests.browser.test_views_browser import offline_page
from tests.every_view import every_view, lens_result, table_of
from tests.missing import need

pytestmark = pytest.mark.browser

HOSTILE = [
    "<!--<script> the bank </script> of the river",
    'Click <a href="https://example.com/">the bank</a> & &lt;b&gt; now',
    '<b>bold</b> bank <span style="color:red">red</span> 50%{x} and %{y}',
    "The bank\u2028of the\u2029river and the trees",
]
REPEATS = [
    "We sat on the bank of the river.",
    "the bank by the bank of the river closed.",
    "Money in the bank.",
    "A bank loan.",
]
EMOJI = ["😀😀 by the 😀 bank we sat.", "The bank by the river closed.", "Money in the bank.", "A bank loan."]
LONG = (
    "the old bank by the river where my grandfather kept his savings closed last year after the flood and "
    "the town council worried about the empty building"
).split()

# every Plotly figure's hover labels, one per trace (its first point), and its texts
HOVERS = """div => div.data.map((t, c) => {
    const subplot = (t.xaxis || 'x') + (t.yaxis || 'y');
    if (t.type === 'heatmap') Plotly.Fx.hover(div, {xval: 1, yval: 0}, [subplot]);
    else Plotly.Fx.hover(div, [{curveNumber: c, pointNumber: 0}], [subplot]);
    const label = div.querySelector('.hoverlayer');
    const got = {text: label ? label.textContent : '', links: label ? label.querySelectorAll('a').length : 0};
    Plotly.Fx.unhover(div);
    return got;
})"""


def kinds_drawn(page) -> list[str]:
    return page.eval_on_selector_all(".clv[data-rendered='1']", "vs => vs.map(v => v.dataset.kind)")


def squeeze(s: str) -> str:
    """``s`` without white space (a hover label breaks long text into lines)."""
    return re.sub(r"\s+", "", s)


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory):
    path = tmp_path_factory.mktemp("every") / "hostile.html"
    return views.Page(*every_view(HOSTILE, "bank"), title="hostile").save_html(path)


def test_a_script_tag_in_a_sentence_leaves_every_view_drawn(browser, hostile_page):
    with offline_page(browser, hostile_page) as page:
        assert kinds_drawn(page) == list(views.KINDS)
        sentences = page.eval_on_selector_all(
            ".clv[data-kind='senses'] .clv-cluster li", "ls => ls.map(l => l.textContent)"
        )
        assert sorted(sentences) == sorted(HOSTILE)  # the data reached the page whole


def test_user_text_reaches_every_figure_whole_and_inert(browser, hostile_page, screenshots):
    with offline_page(browser, hostile_page) as page:
        hovers = {}
        for kind in ("projection", "layers", "cosine", "senses", "lens", "occlusion", "probes", "cka"):
            divs = page.query_selector_all(f".clv[data-kind='{kind}'] .js-plotly-plot")
            hovers[kind] = [h for div in divs for h in div.evaluate(HOVERS)]
        assert all(h["links"] == 0 for hs in hovers.values() for h in hs), hovers
        everything = page.evaluate(
            "() => [...document.querySelectorAll('.js-plotly-plot')].map(d => d.textContent).join('')"
        )
        assert (
            page.locator(".js-plotly-plot a").count() == 0 and "example.com" not in everything
        )  # no live link
        layers = squeeze(hovers["layers"][0]["text"])
        assert squeeze(HOSTILE[3]) in layers and squeeze(HOSTILE[0]) in layers  # the pair's sentences, whole
        projection = squeeze(" ".join(h["text"] for h in hovers["projection"]))
        assert squeeze(HOSTILE[0]) in projection
        cosine = squeeze(hovers["cosine"][0]["text"])
        assert squeeze(HOSTILE[0]) in cosine and squeeze(HOSTILE[1]) in cosine
        probes = [squeeze(h["text"]) for h in hovers["probes"]]
        assert len(probes) == 6 and all(squeeze(HOSTILE[0]) in h for h in probes)  # the model's name, whole
        model = "attention over every-view"
        assert hovers["cka"][0]["text"].startswith(f"{model} layer 0 × {model} layer 1: CKA")
        page.evaluate("""() => {
            const d = document.querySelector(".clv[data-kind='projection'] .js-plotly-plot");
            Plotly.Fx.hover(d, [{curveNumber: 2, pointNumber: 0}]); }""")
        shown = squeeze(
            page.evaluate(
                "() => document.querySelector(\".clv[data-kind='projection'] .hoverlayer\").textContent"
            )
        )
        assert squeeze(HOSTILE[2]) in shown  # <b>, <span style=…>, %{x} as written
        spans = page.eval_on_selector_all(
            ".js-plotly-plot tspan[style]", "ts => ts.map(t => t.getAttribute('style'))"
        )
        assert not [s for s in spans if "red" in s], spans
        page.screenshot(path=str(screenshots / "views-hostile-hover.png"))
        others = [
            o["word"]
            for o in occlusion_vs_attention(
                SelfAttention(table_of(HOSTILE), heads=2, n_layers=2), HOSTILE[0], "bank"
            )["others"]
        ]
        ticks = page.eval_on_selector_all(
            ".clv[data-kind='occlusion'] .clv-occ-bars .xtick text", "ts => ts.map(t => t.textContent)"
        )
        assert [t.split(" (")[0] for t in ticks] == others and "<" in others  # each word as written
        legend = page.eval_on_selector_all(
            ".clv[data-kind='lens'] .legendtext", "ts => ts.map(t => t.textContent)"
        )
        assert legend == [t["word"] for t in lens_result(HOSTILE[0], "bank")["layers"][0]["tracked"]]


def test_a_word_is_keyed_by_its_position_in_every_view(browser, tmp_path):
    page_views = every_view(REPEATS, "bank", sentence=1, occurrence=1)
    path = views.Page(*page_views).save_html(tmp_path / "repeats.html")
    data = {v.kind: v.data for v in page_views}
    n = len(data["head"]["attention"]["words"]["tokens"])  # "the bank by the bank of the river closed ." : 11
    with offline_page(browser, path) as page:
        at = lambda kind: f".clv[data-kind='{kind}']"  # noqa: E731
        # occlusion: one bar per other word, the two "the" (and "bank") in slots of their own
        bars = page.evaluate(f'() => document.querySelector("{at("occlusion")} .clv-occ-bars").data[0].x')
        assert bars == list(range(n - 1))
        ticks = page.eval_on_selector_all(
            f"{at('occlusion')} .clv-occ-bars .xtick text", "ts => ts.map(t => t.textContent)"
        )
        assert len(ticks) == n - 1 == len(set(ticks)) and {"the (0)", "the (3)", "the (6)", "bank"} <= set(
            ticks
        )
        # cosine: every usage of "bank" (twice in sentence 1) is a row and a column of its own, named by its
        # sentence and its occurrence there, numbered from 0 as the JSON and the lab number them
        usages = len(data["cosine"]["words"][0]["positions"])
        assert usages == 5
        heat = page.evaluate(f'() => document.querySelector("{at("cosine")} .js-plotly-plot").data[0]')
        assert heat["x"] == list(range(usages)) and len(heat["z"]) == usages
        ticks = page.eval_on_selector_all(f"{at('cosine')} .xtick text", "ts => ts.map(t => t.textContent)")
        assert ticks == ["S0", "S1 #0", "S1 #1", "S2", "S3"]
        # the views of attention draw one row per token, keyed by index
        assert page.locator(f"{at('head')} .clv-left").count() == n
        assert page.locator(f"{at('mask')} .clv-leak").count() == n
        assert page.locator(f"{at('neuron')} tr[data-j]").count() == n
        assert page.locator(f"{at('input')} table[data-sentence='1'] tr[data-i]").count() == n
        options = page.eval_on_selector_all(
            f"{at('model')} select.clv-thumbs option", "os => os.map(o => o.value)"
        )
        assert options == [""] + [str(i) for i in range(n)]
        assert page.input_value(f"{at('model')} select.clv-thumbs") == "4"  # the second "bank", as asked
        # projection: a point per usage; the neighbours view marks the second "bank"
        points = page.evaluate(
            f'() => document.querySelector("{at("projection")} .js-plotly-plot").data'
            ".reduce((a, t) => a + t.x.length, 0)"
        )
        assert points == sum(len(s["words"]) for s in data["input"]["sentences"])
        before = page.evaluate(
            f'() => document.querySelector("{at("neighbours")} .clv-usage").firstChild.textContent'
        )
        assert before == "the bank by the " and page.inner_text(f"{at('neighbours')} mark") == "bank"


def test_spans_after_emoji_mark_the_right_characters(browser, tmp_path):
    page_views = every_view(EMOJI, "bank")
    path = views.Page(*page_views).save_html(tmp_path / "emoji.html")
    with offline_page(browser, path) as page:
        assert page.inner_text(".clv[data-kind='neighbours'] mark") == "bank"
        before = page.evaluate(
            "() => document.querySelector(\".clv[data-kind='neighbours'] .clv-usage\").firstChild.textContent"
        )
        assert before == "😀😀 by the 😀 "
        cut = page.evaluate("() => CLViews.short('😀'.repeat(30), 10)")
        assert cut == "😀" * 9 + "…"  # cut between characters, never inside one
        lone = page.evaluate(r"""() =>
            /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
            .test(document.body.textContent)""")
        assert not lone


def _shapes(div) -> dict[str, list[dict]]:
    """The tick labels, axis titles and legend of a Plotly figure, each as the four corners of
    its box on the screen (a rotated tick label's box turns with it)."""
    return div.evaluate("""div => {
        const quad = (e) => { const b = e.getBBox(), m = e.getScreenCTM();
            const at = (x, y) => { const p = new DOMPoint(x, y).matrixTransform(m); return [p.x, p.y]; };
            return {t: e.textContent, q: [at(b.x, b.y), at(b.x + b.width, b.y),
                                          at(b.x + b.width, b.y + b.height),
                                          at(b.x, b.y + b.height)]}; };
        const all = (sel) => [...div.querySelectorAll(sel)].filter(e => e.textContent.trim()).map(quad);
        return {xticks: all('.xtick text'), yticks: all('.ytick text'),
                titles: all('.g-xtitle text, .g-ytitle text'),
                legend: [...div.querySelectorAll('.legend .bg')].map(quad)};
    }""")


def _meet(a: dict, b: dict) -> bool:
    """Whether two convex quadrilaterals overlap by more than half a pixel (separating axes)."""
    for quad in (a["q"], b["q"]):
        for k in range(4):
            (x1, y1), (x2, y2) = quad[k], quad[(k + 1) % 4]
            nx, ny = y2 - y1, x1 - x2
            norm = (nx * nx + ny * ny) ** 0.5 or 1.0
            pa = [(x * nx + y * ny) / norm for x, y in a["q"]]
            pb = [(x * nx + y * ny) / norm for x, y in b["q"]]
            if max(pa) <= min(pb) + 0.5 or max(pb) <= min(pa) + 0.5:
                return False
    return True


def label_overlaps(div) -> list[tuple[str, str]]:
    """The pairs of texts of a drawn Plotly figure that meet: two tick labels of an axis, or a
    tick label or axis title and another axis title or the legend."""
    b = _shapes(div)
    found = []
    for axis in ("xticks", "yticks"):
        ticks = b[axis]
        found += [(s["t"], t["t"]) for i, s in enumerate(ticks) for t in ticks[i + 1 :] if _meet(s, t)]
    labels = b["xticks"] + b["yticks"]
    found += [
        (t["t"], o["t"] or "legend")
        for t in labels + b["titles"]
        for o in b["titles"] + b["legend"]
        if t is not o and _meet(t, o)
    ]
    return found


def test_labels_do_not_overlap(browser, tmp_path, screenshots):
    """31 layers (SmolLM2 has 30 and the embedding row), a 25-word sentence, a projection's
    legend, in windows 1300, 640 and 480 pixels wide: no tick label meets another, an axis
    title or a legend (rotated labels are compared as the rotated boxes they are)."""
    need("sklearn")
    sentences = [
        " ".join(LONG[:25]),
        "the bank closed after the flood",
        "my savings were in the bank",
        "a bank loan",
    ]
    encoder = SelfAttention(table_of(sentences), heads=2, n_layers=30)
    lens = lens_result(sentences[0], "bank")
    lens["layers"] = [{**lens["layers"][0], "layer": i, "layer_name": f"layer {i}"} for i in range(31)]
    page_views = [
        views.layers_view(layer_divergence(encoder, [(sentences[0], s) for s in sentences[1:]], "bank")),
        views.occlusion_view(occlusion_vs_attention(encoder, sentences[0], "bank")),
        views.lens_view(lens),
        *every_view(sentences, "bank")[5:9],
    ]
    path = views.Page(*page_views).save_html(tmp_path / "crowded.html")
    with offline_page(browser, path) as page:
        divs = page.query_selector_all(".js-plotly-plot")
        assert len(divs) == 9
        overlaps = []
        for width in (1300, 640, 480):  # a page, a lab card, a narrow window
            page.set_viewport_size({"width": width, "height": 900})
            page.evaluate(
                "() => Promise.all([...document.querySelectorAll('.js-plotly-plot')].map(d => "
                "Plotly.Plots.resize(d)))"
            )
            for div in divs:
                kind = div.evaluate("d => d.closest('.clv').dataset.kind")
                overlaps += [(width, kind, *pair) for pair in label_overlaps(div)]
        assert not overlaps, overlaps
        page.set_viewport_size({"width": 1300, "height": 900})
        page.evaluate(
            "() => Promise.all([...document.querySelectorAll('.js-plotly-plot')].map(d => "
            "Plotly.Plots.resize(d)))"
        )
        page.locator("#clv-0").screenshot(path=str(screenshots / "views-layers-31.png"))
        page.locator("#clv-3").screenshot(path=str(screenshots / "views-projection-legend.png"))


def test_every_view_downloads_as_svg_and_png_with_its_title(browser, tmp_path):
    from PIL import Image

    page_views = every_view(REPEATS, "bank")
    path = views.Page(*page_views).save_html(tmp_path / "downloads.html")
    with offline_page(browser, path) as page:
        for n, view in enumerate(page_views):
            el = f"#clv-{n}"
            got = click_download(page, f"{el} button.clv-download[data-format='svg']", el)
            assert got is not None and got.suggested_filename == f"contextlens-{view.kind}.svg", view.kind
            svg = ET.fromstring(open(got.path(), encoding="utf-8").read())
            texts = [t for t in svg.iter("{http://www.w3.org/2000/svg}text")]
            title = next(t for t in texts if "".join(t.itertext()) == view.title)
            width, height = int(svg.get("width")), int(svg.get("height"))
            shapes = sum(1 for _ in svg.iter()) - len(texts)
            assert shapes >= 8, (view.kind, shapes)  # the figure, not only its words
            got = click_download(page, f"{el} button.clv-download[data-format='png']", el)
            assert got is not None and got.suggested_filename == f"contextlens-{view.kind}.png", view.kind
            png = Image.open(io.BytesIO(open(got.path(), "rb").read())).convert("L")
            assert png.size == (2 * width, 2 * height), view.kind
            x, y = 2 * float(title.get("x")), 2 * float(title.get("y"))
            band = png.crop((int(x), int(y - 24), int(x + 200), int(y + 6)))  # where the title is written
            assert band.getextrema()[0] < 100, (view.kind, "no dark title text in the PNG")
            assert page.get_attribute(el, "data-downloaded") == f"contextlens-{view.kind}.png"
