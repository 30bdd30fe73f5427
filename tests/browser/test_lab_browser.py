"""The Live Lab in a real browser (Debian's Chromium through Playwright).

The toy lab's numbers and drawn positions must equal the library's
(:mod:`contextlens.analysis.toy`); the sentence lab's chart must have one point per layer
and pair (every figure's PNG and SVG: test_lab_figures_browser.py); an over-limit input
shows the limit.
Screenshots go to out/screenshots/.
"""

from __future__ import annotations

import json
import random
from urllib.parse import quote

import pytest

from contextlens.analysis.layers import layer_divergence
from contextlens.analysis.toy import TOY_VECTORS, toy_compare
from contextlens.encoders.registry import make_encoder

pytestmark = pytest.mark.browser

SIZE, LO, HI = 400, -0.25, 1.25  # the plane of toy.js
S3 = ["The bank approved my loan.", "We sat on the bank of the river.", "She put money in the bank."]


def open_lab(page, url: str, query: str = "") -> None:
    page.goto(f"{url}/{query}")
    page.wait_for_selector("body[data-ready='1']")


def value(page, selector: str) -> float:
    return float(page.get_attribute(selector, "data-value"))


def shown_vectors(page) -> dict[str, list[float]]:
    return {w: [float(page.get_attribute(f"#pt-{w}", "data-x")),
                float(page.get_attribute(f"#pt-{w}", "data-y"))]
            for w in TOY_VECTORS}


def assert_toy_matches_library(page, neighbours, **options) -> dict:
    want = toy_compare(neighbours, vectors=shown_vectors(page), **options)
    for side, row in zip("AB", want["sentences"]):
        for axis in ("finance", "nature"):
            assert value(page, f"#cos-{side}-{axis}") == pytest.approx(row["cosines"][axis], rel=1e-12,
                                                                       abs=1e-12)
            assert page.inner_text(f"#cos-{side}-{axis}") == f"{row['cosines'][axis]:.3f}"
        x, y = row["contextual"]
        assert float(page.get_attribute(f"#ctx-{side}", "data-x")) == pytest.approx(x, rel=1e-12, abs=1e-12)
        assert float(page.get_attribute(f"#ctx-{side}", "data-y")) == pytest.approx(y, rel=1e-12, abs=1e-12)
        assert float(page.get_attribute(f"#ctx-{side}", "cx")) == pytest.approx(
            (x - LO) / (HI - LO) * SIZE, abs=1e-6
        )
        assert float(page.get_attribute(f"#ctx-{side}", "cy")) == pytest.approx(
            SIZE - (y - LO) / (HI - LO) * SIZE, abs=1e-6
        )
        for w in row["weights"]:
            assert value(page, f"#w-{side}-{w['position']}") == pytest.approx(w["weight"],
                                                                              rel=1e-12, abs=1e-12)
    assert value(page, "#cos-AB") == pytest.approx(want["cosine"], rel=1e-12, abs=1e-12)
    return want


def test_toy_lab_follows_the_library(page, lab_url, screenshots):
    open_lab(page, lab_url)
    before = assert_toy_matches_library(page, [["loan", "money"], ["river", "water"]], method="average",
                                        alpha=0.0)
    cx_before = page.get_attribute("#ctx-A", "cx")
    page.uncheck("#toy-A-money")
    page.check("#toy-A-river")  # bank's neighbour changes: loan, money -> loan, river
    after = assert_toy_matches_library(page, [["loan", "river"], ["river", "water"]], method="average",
                                       alpha=0.0)
    assert page.get_attribute("#ctx-A", "cx") != cx_before
    assert after["sentences"][0]["cosines"]["finance"] != before["sentences"][0]["cosines"]["finance"]
    page.check("input[name='toy-method'][value='attention']")
    page.uncheck("#toy-self")
    page.fill("#toy-scale", "3")
    page.dispatch_event("#toy-scale", "input")
    assert_toy_matches_library(page, [["loan", "river"], ["river", "water"]], method="attention",
                               include_self=False, scale=3.0)
    page.focus("#pt-river")  # keyboard: move river up and to the right
    for key in ("Shift+ArrowUp", "ArrowRight", "ArrowRight"):
        page.keyboard.press(key)
    assert shown_vectors(page)["river"] == pytest.approx([0.12, 1.05], abs=1e-6)
    box = page.locator("#pt-money circle").bounding_box()  # pointer: drag money towards nature
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] - 60, box["y"] - 120, steps=5)
    page.mouse.up()
    assert shown_vectors(page)["money"] != pytest.approx(list(TOY_VECTORS["money"]), abs=1e-3)
    assert_toy_matches_library(page, [["loan", "river"], ["river", "water"]], method="attention",
                               include_self=False, scale=3.0)
    assert "ta=loan%2Criver" in page.url and "tm=attention" in page.url
    page.screenshot(path=str(screenshots / "toy-lab.png"), full_page=True)
    open_lab(page, lab_url, "?" + page.url.split("?", 1)[1])  # the URL restores the view
    assert page.is_checked("#toy-A-river") and not page.is_checked("#toy-self")


def test_toy_maths_in_javascript_equals_the_library(page, lab_url):
    open_lab(page, lab_url)
    rng = random.Random(5)
    words = [w for w in TOY_VECTORS if w != "bank"]
    for _ in range(40):
        vectors = {w: [round(rng.uniform(-0.2, 1.2), 2), round(rng.uniform(-0.2, 1.2), 2)]
                   for w in TOY_VECTORS}
        sel = [rng.sample(words, rng.randint(1, 5)) for _ in range(2)]
        method = rng.choice(["average", "attention"])
        opts = {"method": method, "alpha": round(rng.random(), 2), "include_self": rng.random() < 0.5,
                "scale": round(rng.uniform(0, 10), 1)}
        got = page.evaluate("([s, v, o]) => ToyMath.toyCompare(s, v, o)", [sel, vectors, opts])
        if method == "average":
            want = toy_compare(sel, vectors=vectors, method="average", alpha=opts["alpha"])
        else:
            want = toy_compare(sel, vectors=vectors, method="attention", include_self=opts["include_self"],
                               scale=opts["scale"])
        assert got["cosine"] == pytest.approx(want["cosine"], rel=1e-12, abs=1e-12)
        for g, w in zip(got["sentences"], want["sentences"]):
            assert g["contextual"] == pytest.approx(w["contextual"], rel=1e-12, abs=1e-12)
            assert [x["weight"] for x in g["weights"]] == pytest.approx([x["weight"] for x in w["weights"]],
                                                                        abs=1e-12)
            assert g["cosines"] == pytest.approx(w["cosines"], rel=1e-12, abs=1e-12)


def points_in(page, fig: str) -> int:
    return page.evaluate(f"document.querySelectorAll('#{fig} .scatterlayer .point').length")


def run_sentence_lab(page, sentences, encoder, expected_points, timeout=30_000):
    page.click("#tab-sentences")
    page.fill("#lab-sentences", "\n".join(sentences))
    page.click("#lab-tokens .token-row:first-child .token:text-is('bank')")  # clickable tokens pick the word
    page.select_option("#lab-encoder", encoder)
    page.click("#lab-run")
    page.wait_for_function("document.querySelectorAll('#fig-layers .scatterlayer .point').length === "
                           f"{expected_points}",
                           timeout=timeout)
    page.wait_for_function("document.querySelectorAll('#fig-projection .scatterlayer .point').length > 0")
    page.wait_for_selector("#fig-attention .clv[data-rendered='1'], #fig-attention .fig-note")


def test_sentence_lab_chart_has_a_point_per_layer_and_pair(page, lab_url, screenshots):
    open_lab(page, lab_url)
    page.click("#tab-sentences")
    page.select_option("#lab-encoder", "average")
    page.fill("#lab-alpha", "0.3")
    run_sentence_lab(page, S3, "average", expected_points=3 * 2)  # 3 pairs x (static, mixed)
    assert page.input_value("#lab-word") == "bank"
    ys = page.evaluate("document.getElementById('fig-layers').data.map((t) => t.y)")
    pairs = [(S3[0], S3[1]), (S3[0], S3[2]), (S3[1], S3[2])]
    want = layer_divergence(make_encoder("average", vectors="glove-6b-50d", alpha=0.3), pairs, "bank")
    assert ys == [p["cosine_by_layer"] for p in want["pairs"]]
    assert points_in(page, "fig-projection") == 3
    assert "m=average" in page.url and "w=bank" in page.url and "a=0.3" in page.url
    page.screenshot(path=str(screenshots / "sentence-lab.png"), full_page=True)

    with page.expect_download() as dl:  # (every figure's PNG and SVG: test_lab_figures_browser.py)
        page.click("#lab-json")
    assert json.loads(open(dl.value.path(), encoding="utf-8").read())["layers"]["word"] == "bank"


def test_sentence_lab_with_minilm(page, lab_url):
    open_lab(page, lab_url)
    run_sentence_lab(page, S3[:2], "minilm", expected_points=7, timeout=90_000)  # embedding row + 6 layers
    page.wait_for_function("document.querySelectorAll('#fig-attention .clv[data-rendered=\"1\"]').length === "
                           "3")
    head = "#fig-attention .clv[data-kind='head']"
    assert page.locator(f"{head} .clv-left").count() == 6  # "The bank approved my loan." (words)
    page.select_option(f"{head} select.clv-level", "pieces")  # MiniLM's pieces: [CLS] and [SEP] too
    page.check(f"{head} input.clv-specials")
    specials = page.eval_on_selector_all(f"{head} .clv-left.clv-special",
                                         "ts => ts.map(t => t.lastChild.textContent)")
    assert specials == ["[CLS]", "[SEP]"]
    thumbs = page.locator("#fig-attention .clv[data-kind='model'] canvas.clv-thumb").count()
    assert thumbs == 6 * (12 + 1) + 6  # 6 layers x (12 heads + their mean), and rollout


def test_over_limit_input_shows_the_limit(page, lab_url):
    open_lab(page, lab_url)
    page.click("#tab-sentences")
    page.fill("#lab-sentences", "the bank " * 120 + "\nThe bank by the river.")
    page.click("#lab-run")
    page.wait_for_function("document.getElementById('lab-error').textContent.includes('at most')")
    assert "sentences.0: String should have at most 1000 characters" in page.inner_text("#lab-error")


def test_senses_page(page, lab_url, screenshots):
    open_lab(page, lab_url, "?tab=senses")
    page.select_option("#senses-encoder", "average")
    page.click("#senses-form button[type='submit']")
    page.wait_for_function("document.querySelectorAll('#senses-clusters .cluster').length >= 2")
    assert "silhouette" in page.inner_text("#senses-summary")
    assert points_in(page, "fig-senses") == 8
    page.screenshot(path=str(screenshots / "senses.png"), full_page=True)


def test_shared_url_opens_the_view_and_tabs_use_the_keyboard(page, lab_url):
    query = f"?tab=sentences&s={quote(chr(10).join(S3[:2]))}&w=bank&m=attention&l=0&as=1"
    open_lab(page, lab_url, query)
    page.wait_for_function("document.querySelectorAll('#fig-layers .scatterlayer .point').length === 2")
    assert (page.input_value("#lab-layer"), page.input_value("#lab-att-sentence")) == ("0", "1")  # the URL's
    page.focus("#tab-sentences")
    page.keyboard.press("ArrowRight")
    assert page.is_visible("#panel-senses") and not page.is_visible("#panel-sentences")


def test_phone_width_has_no_sideways_scroll(browser, lab_url, screenshots):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    page = context.new_page()
    open_lab(page, lab_url)
    assert page.evaluate("document.documentElement.scrollWidth") <= 391
    page.screenshot(path=str(screenshots / "toy-lab-phone.png"), full_page=True)
    context.close()


BOXES = """() => [...document.querySelectorAll('#plane text')].map(t => {
  const b = t.getBBox(); return [t.textContent, b.x, b.y, b.x + b.width, b.y + b.height]; })"""
POINTS = """() => [...document.querySelectorAll('#plane .handle circle, #plane .ctx-dot')].map(c =>
  [+c.getAttribute('cx'), +c.getAttribute('cy')])"""


def assert_labels_apart(page, where: str) -> None:
    """No two labels of the plane meet, no label covers a point, and each stays on the plane."""
    boxes = page.evaluate(BOXES)
    assert len(boxes) == 2 + len(TOY_VECTORS) + 2, boxes  # the axes, the words, bank (A) and bank (B)
    for (a, *p), (b, *q) in [(x, y) for i, x in enumerate(boxes) for y in boxes[i + 1:]]:
        w, h = min(p[2], q[2]) - max(p[0], q[0]), min(p[3], q[3]) - max(p[1], q[1])
        assert w <= 0.5 or h <= 0.5, f"{where}: {a!r} meets {b!r} ({w:.1f} x {h:.1f} px)"
    for text, x0, y0, x1, y1 in boxes:
        assert -0.5 <= x0 and x1 <= SIZE + 0.5 and -0.5 <= y0 and y1 <= SIZE + 0.5, (where, text)
        for cx, cy in page.evaluate(POINTS):  # a label never covers a point (its centre)
            assert not (x0 + 1 < cx < x1 - 1 and y0 + 1 < cy < y1 - 1), (where, text, cx, cy)


def test_toy_plane_labels_never_overlap(page, lab_url):
    """Issue 20 item 8: "bank (B)" was drawn under "water"; every label now takes a free place."""
    open_lab(page, lab_url)
    assert_labels_apart(page, "the defaults")
    page.click("#toy-course")
    page.wait_for_selector("#toy-steps:not([hidden])")
    assert_labels_apart(page, "the course example")
    rng = random.Random(0)
    for n in range(12):  # crowded planes: every word within a small square, bank's two vectors among them
        cx, cy = rng.uniform(0, 1), rng.uniform(0, 1)
        tv = ",".join(f"{w}:{cx + rng.uniform(-0.12, 0.12):.2f}:{cy + rng.uniform(-0.12, 0.12):.2f}"
                      for w in TOY_VECTORS)
        method = rng.choice(["average", "attention"])
        open_lab(page, lab_url, f"?tv={tv}&tm={method}&ta=loan,money,sat&tb=river,water")
        assert_labels_apart(page, f"plane {n}: {tv} ({method})")
