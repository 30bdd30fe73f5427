"""The lab draws the library's views: the attention card is the head, model and neuron views
(their data from /api/views/attention, their script from /views/), the toy lab's "Course
example" shows the course's figures as the library computes them, and a word that is not
in every sentence is said so, with no stale figure left."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.analysis.layers import layer_divergence
from contextlens.analysis.toy import COURSE_NEIGHBOURS, course_example
from contextlens.encoders.registry import make_encoder
from tests.browser.test_lab_browser import assert_toy_matches_library, open_lab

pytestmark = pytest.mark.browser

S2 = ["The bank approved my loan.", "We sat on the bank of the river."]


def test_course_example_preset(page, lab_url, screenshots):
    open_lab(page, lab_url)
    page.click("#toy-course")
    page.wait_for_selector("#toy-steps:not([hidden])")
    ex = course_example()
    assert [float(page.get_attribute(f"#pt-{w}", "data-x")) for w in ex.vectors] == [
        float(np.float32(v[0])) for v in ex.vectors.values()
    ]
    assert page.evaluate("ToyLab.state.scaleExact") == ex.scale == pytest.approx(2 ** -0.5, abs=1e-15)
    want = assert_toy_matches_library(page, COURSE_NEIGHBOURS, method="attention", include_self=True)
    assert want["cosine"] == pytest.approx(ex.comparison["cosine"], abs=1e-12)
    for k, step in enumerate(ex.steps):  # the library's own numbers, step by step
        row = f"#step-{k}"
        assert page.inner_text(f"{row} .step-key") == step.key
        for cls, value in (("raw", step.raw), ("scaled", step.scaled), ("weight", step.weight)):
            assert float(page.get_attribute(f"{row} .step-{cls}", "data-value")) == value
    assert (page.inner_text("#step-1 .step-raw") == "0.5000"
            and page.inner_text("#step-1 .step-scaled") == "0.3536")
    page.screenshot(path=str(screenshots / "toy-course-example.png"), full_page=True)
    page.focus("#pt-loan")  # the steps hold for the course's vectors only
    page.keyboard.press("ArrowUp")
    assert page.is_hidden("#toy-steps")


def run_lab(page, sentences, word, encoder="attention"):
    page.click("#tab-sentences")
    page.fill("#lab-sentences", "\n".join(sentences))
    page.fill("#lab-word", word)
    page.select_option("#lab-encoder", encoder)
    page.click("#lab-run")


def test_attention_card_is_the_librarys_views(page, lab_url, screenshots):
    open_lab(page, lab_url)
    run_lab(page, S2, "bank")
    page.wait_for_function("document.querySelectorAll('#fig-attention .clv[data-rendered=\"1\"]').length === "
                           "3")
    kinds = page.eval_on_selector_all("#fig-attention .clv", "vs => vs.map(v => v.dataset.kind)")
    assert kinds == ["head", "model", "neuron"]
    encoder = make_encoder("attention", vectors="glove-6b-50d", include_self=True)
    enc = encoder.encode([S2[0]])[0]
    mean = enc.attention[0].astype(np.float64).mean(axis=0)  # (words, words): layer 1, mean of its one head
    drawn = page.eval_on_selector_all("#fig-attention .clv[data-kind='head'] .clv-lines line",
                                      "ls => ls.map(l => [+l.dataset.i, +l.dataset.j])")
    assert sorted(map(tuple, drawn)) == [tuple(x) for x in np.argwhere(mean >= 0.01).tolist()]
    parts = encoder.attention_parts(S2[0])[0]
    bank = parts.token_of("bank")
    raw = page.eval_on_selector_all("#fig-attention .clv[data-kind='neuron'] tr[data-j] .clv-raw",
                                    "cs => cs.map(c => +c.dataset.value)")
    assert raw == pytest.approx(parts.raw_scores()[0, bank].tolist(), rel=1e-12, abs=1e-12)
    page.screenshot(path=str(screenshots / "sentence-lab-views.png"), full_page=True)


S3 = [*S2, "A loan from the bank."]
ONE_SENTENCE = ("fig-attention", "fig-occlusion", "fig-neighbours")


def drawn_views(page, fig: str) -> list[str]:
    return page.eval_on_selector_all(f"#{fig} .clv[data-rendered='1']", "vs => vs.map(v => v.dataset.kind)")


def test_a_word_missing_from_a_sentence_leaves_the_other_cards_drawn(page, lab_url):
    """Issue 20 item 4: a word absent from one sentence used to replace all seven cards with one
    error. The cards comparing sentences compare those that have it and name the others; the
    cards reading one sentence read the sentence the word was clicked in."""
    open_lab(page, lab_url)
    page.click("#tab-sentences")
    page.fill("#lab-sentences", "\n".join(S3))
    page.select_option("#lab-encoder", "attention")
    assert page.eval_on_selector_all("#lab-tokens .sent-no",
                                     "ns => ns.map(n => n.textContent)") == ["0", "1", "2"]
    page.click("#lab-tokens .token-row:nth-child(1) .token:text-is('loan')")  # in sentences 0 and 2, not 1
    page.wait_for_function("document.querySelectorAll('#fig-layers .scatterlayer .point').length === 2")
    assert page.evaluate("document.getElementById('fig-layers').data.map(t => t.name)") == ["S0–S2"]
    assert (
        page.inner_text(".card-skipped[data-fig='fig-layers']") == "Left out: sentence 1 (no 'loan' in it)."
    )
    page.wait_for_function("document.getElementById('fig-matrix').data !== undefined")
    assert page.eval_on_selector_all("#fig-matrix .xtick text",
                                     "ts => ts.map(t => t.textContent)") == ["S0", "S2"]
    assert (
        page.inner_text(".card-skipped[data-fig='fig-matrix']") == "Left out: sentence 1 (no 'loan' in it)."
    )
    page.wait_for_function("document.querySelectorAll('#fig-attention .clv[data-rendered=\"1\"]').length === "
                           "3")
    page.wait_for_function("document.querySelectorAll('#fig-occlusion .clv[data-rendered=\"1\"]').length === "
                           "1")
    page.wait_for_function("document.querySelectorAll('#fig-neighbours .clv[data-rendered=\"1\"]').length "
                           "=== 1",
                           timeout=120_000)
    # attention over GloVe predicts no word: the lens says what to pick
    page.wait_for_selector("#fig-lens .fig-note")
    assert "pick smollm2 above" in page.inner_text("#fig-lens .fig-note")
    assert page.input_value("#lab-att-sentence") == "0" and page.inner_text("#lab-error") == ""

    page.click("#lab-tokens .token-row:nth-child(2) .token:text-is('river')")  # only in sentence 1
    page.wait_for_function("document.querySelector('#fig-layers .fig-note') !== null")
    for fig in ("fig-layers", "fig-matrix", "fig-projection"):  # each says why, in the library's words
        page.wait_for_selector(f"#{fig} .fig-note")
        assert page.inner_text(f"#{fig} .fig-note").startswith(
            "'river' has 1 usage(s); comparing usages needs at least 2 sentences that contain it")
    assert page.evaluate("document.getElementById('fig-layers').data") is None  # no stale chart
    page.wait_for_function("[...document.querySelectorAll(\"#fig-attention .clv[data-kind='head'] "
                           # the head view of sentence 1
                           ".clv-left\")].some(t => t.textContent.includes('river'))")
    assert page.input_value("#lab-att-sentence") == "1"  # the sentence the word was clicked in
    page.wait_for_function("document.querySelectorAll('#fig-occlusion .clv[data-rendered=\"1\"]').length === "
                           "1")
    with page.expect_download() as dl:
        page.click("#lab-json")
    saved = __import__("json").loads(open(dl.value.path(), encoding="utf-8").read())
    assert saved["occlusion"]["word"] == "river" and "layers" not in saved and "explore" not in saved


def test_senses_says_how_few_sentences_have_the_word(page, lab_url):
    open_lab(page, lab_url, "?tab=senses")
    page.fill("#senses-sentences", "\n".join([*S2, "A loan from the bank."]))
    page.fill("#senses-word", "loan")
    page.select_option("#senses-encoder", "static")
    page.click("#senses-form button[type='submit']")
    page.wait_for_function("document.getElementById('senses-error').textContent.length > 0")
    assert page.inner_text("#senses-error").startswith("only 2 sentences contain 'loan'")
    assert "give k" not in page.inner_text("#senses-error")


SLOW_AVERAGE = """(() => {  // the average encoder's answers arrive 1.5 s late: the earlier run finishes last
  const fetch0 = window.fetch;
  window.slow = { seen: 0, pending: 0 };
  window.fetch = async (url, opts) => {
    if (!(opts && typeof opts.body === "string" && opts.body.includes('"encoder":"average"'))) {
      return fetch0(url, opts);
    }
    window.slow.seen++; window.slow.pending++;
    try {
      await new Promise((r) => setTimeout(r, 1500)); return await fetch0(url, opts);
    } finally { window.slow.pending--; }
  };
})();"""


def test_an_earlier_slower_run_never_replaces_the_latest(page, lab_url):
    page.add_init_script(SLOW_AVERAGE)
    open_lab(page, lab_url)
    page.click("#tab-sentences")
    page.fill("#lab-sentences", "\n".join(S2))
    page.select_option("#lab-encoder", "average")
    # a token click runs the lab (average)
    page.click("#lab-tokens .token-row:first-child .token:text-is('bank')")
    page.wait_for_function("window.slow.seen > 0")  # ... and it is waiting for the server
    page.select_option("#lab-encoder", "attention")
    page.click("#lab-run")  # the latest run (attention) answers first
    page.wait_for_function("document.querySelectorAll('#fig-attention .clv[data-rendered=\"1\"]').length === "
                           "3")
    for _ in range(3):  # the average run's late answers have all come back, and none started after
        page.wait_for_function("window.slow.seen > 0 && window.slow.pending === 0")
        page.wait_for_timeout(400)
    assert page.evaluate("window.slow.pending") == 0
    kinds = page.eval_on_selector_all("#fig-attention .clv", "vs => vs.map(v => v.dataset.kind)")
    # the attention encoder's views (average has no queries and keys)
    assert kinds == ["head", "model", "neuron"]
    want = layer_divergence(make_encoder("attention", vectors="glove-6b-50d", include_self=True), [tuple(S2)],
                            "bank")
    ys = page.evaluate("document.getElementById('fig-layers').data.map((t) => t.y)")
    assert ys == [p["cosine_by_layer"] for p in want["pairs"]]
    assert page.is_hidden("#fig-attention ~ .veil") or page.locator("#fig-attention ~ .veil").count() == 0


def test_the_labs_share_one_latest_run_rule(page, lab_url):
    """CL.latestRuns, the one rule of the sentence lab's cards and the probes and CKA cards: a part draws
    for the run that claimed it last; a run that leaves a part alone leaves it to the run before."""
    open_lab(page, lab_url)
    owns = page.evaluate("""(() => {
      const runs = window.CL.latestRuns();
      const a = runs.start(["x", "y"]), b = runs.start(["y"]), c = runs.start([]);
      return [runs.owns("x", a), runs.owns("y", a), runs.owns("y", b), runs.owns("x", b), runs.owns("x", c),
              a < b && b < c];
    })()""")
    assert owns == [True, False, True, False, False, True]


@pytest.fixture(scope="module")
def causal_lab(chromium_path, tmp_path_factory):
    pytest.importorskip("torch")
    from tests.browser.conftest import serve_lab
    from tests.integration.tiny_models import tiny_lms

    causal = str(tiny_lms(tmp_path_factory.mktemp("lms")) / "causal")
    with serve_lab(models=[], add_models=[causal]) as url:
        yield url, causal


def test_a_causal_model_says_what_its_figures_mean(browser, causal_lab):
    """Issue 20 item 3: with a causal model each card says, in the library's words, what its figure
    means, and the layer select starts at the library's default layer for it (not the last)."""
    from contextlens.analysis.reading import CAUSAL_NOTES, reading_guide
    from tests.browser.conftest import lab_page

    url, causal = causal_lab
    with lab_page(browser, url) as page:
        open_lab(page, url)
        run_lab(page, S2, "bank", encoder=causal)
        page.wait_for_function("document.querySelectorAll('#fig-occlusion .clv[data-rendered=\"1\"]').length "
                               "=== 1",
                               timeout=60_000)
        shown = page.eval_on_selector_all("#panel-sentences .card-note:not([hidden])",
                                          "ps => ps.map(p => [p.dataset.note, p.textContent])")
        assert sorted({n for n, _ in shown}) == sorted(CAUSAL_NOTES) and all(t == CAUSAL_NOTES[n]
                                                                             for n, t in shown)
        want = reading_guide(make_encoder(model=causal))["default_layer"]
        assert page.input_value("#lab-layer") == str(want) and want < 3  # three layers: not the last
        assert page.inner_text(f"#lab-layer option[value='{want}']").endswith("(default)")
        page.select_option("#lab-encoder", "attention")  # an encoder that reads both sides: no note
        page.click("#lab-run")
        page.wait_for_function("document.querySelectorAll('#panel-sentences "
                               ".card-note:not([hidden])').length === 0")
        assert page.input_value("#lab-layer") == "1"  # its own default, the last


TWICE = ["The bank by the bank of the river closed.", "We sat on the bank of the river.",
         "Money in the bank."]


def test_the_cards_reading_one_sentence_read_the_occurrence_clicked(page, lab_url):
    """A sentence holding the word twice: the attention, occlusion, lens and neighbours cards said
    "'bank' occurs 2 times … choose one with occurrence=0..1" whichever one was clicked; they read
    the one clicked (the second "bank", word 4), and a shared URL keeps it."""
    open_lab(page, lab_url)
    page.click("#tab-sentences")
    page.fill("#lab-sentences", "\n".join(TWICE))
    page.select_option("#lab-encoder", "attention")
    page.locator("#lab-tokens .token-row:nth-child(1) .token:text-is('bank')").nth(1).click()
    for _ in range(2):  # clicked, then opened again from the URL it left
        page.wait_for_function("document.querySelectorAll('#fig-attention .clv[data-rendered=\"1\"]').length "
                               "=== 3")
        assert page.input_value("#fig-attention .clv[data-kind='model'] select.clv-thumbs") == "4"
        page.wait_for_selector("#fig-occlusion .clv[data-rendered='1']")
        page.wait_for_selector("#fig-neighbours .clv[data-rendered='1']", timeout=120_000)
        before = page.evaluate("document.querySelector('#fig-neighbours .clv-usage').firstChild.textContent")
        assert before == "The bank by the " and page.inner_text("#fig-neighbours mark") == "bank"
        page.wait_for_function("document.getElementById('fig-matrix').data !== undefined")
        assert page.evaluate("document.getElementById('fig-matrix').data[0].x") == [0, 1, 2, 3]
        assert "o=1" in page.url and "as=0" in page.url
        open_lab(page, lab_url, "?" + page.url.split("?", 1)[1])
