"""The lab's "your corpus" tab (``contextlens lab --index PATH``) in a real browser: a search
shows the index's usages (the library's, in its order), the word highlighted by its char
span (escaped: a sentence's markup stays text); "more like this" changes the query; the URL
restores the view; errors show in the page; the tab works at phone width and is absent
without an index. Screenshots go to out/screenshots/."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.missing import need

need("lancedb")

from contextlens.index import build_index, like_usage, search_usages  # noqa: E402
from tests.browser.conftest import lab_page, serve_lab  # noqa: E402
from tests.integration.test_web_index import CORPUS, QUERY, WORDS, write_corpus  # noqa: E402

pytestmark = pytest.mark.browser
SENTENCES = {s for lines in CORPUS.values() for s in lines}


@pytest.fixture(scope="module")
def index_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("lab-index")
    db = root / "usages.lance"
    build_index(write_corpus(root / "corpus"), db, WORDS, model="minilm")
    return db


@pytest.fixture(scope="module")
def index_url(chromium_path, index_db):
    with serve_lab(index=str(index_db)) as url:
        yield url


@pytest.fixture
def index_page(browser, index_url):
    with lab_page(browser, index_url) as pg:
        yield pg


def open_lab(page, url: str, query: str = "") -> None:
    page.goto(f"{url}/{query}")
    page.wait_for_selector("body[data-ready='1']")


def rows(page) -> list[dict]:
    return page.evaluate("""Array.from(document.querySelectorAll('#index-results tbody tr[data-usage-id]'))
      .map((tr) => ({
        id: tr.dataset.usageId, rank: tr.querySelector('.rank').textContent,
        similarity: Number(tr.querySelector('.similarity').dataset.value),
        shown: tr.querySelector('.similarity .bar-val').textContent,
        sentence: tr.querySelector('.sentence').textContent,
        mark: tr.querySelector('.sentence mark').textContent,
        doc: tr.querySelector('.doc').textContent }))""")


def wait_for_rows(page, n: int, first_id: str | None = None) -> list[dict]:
    page.wait_for_function("document.querySelectorAll('#index-results tbody tr[data-usage-id]').length === "
                           f"{n}")
    if first_id is not None:
        page.wait_for_function("document.querySelector('#index-results tbody tr').dataset.usageId === "
                               f"'{first_id}'")
    return rows(page)


def assert_rows_are(got: list[dict], want: dict) -> None:
    assert [r["id"] for r in got] == [r["usage_id"] for r in want["results"]]
    assert [r["sentence"] for r in got] == [r["sentence"] for r in want["results"]]
    assert [r["similarity"] for r in got] == pytest.approx([r["similarity"] for r in want["results"]],
                                                           abs=1e-4)
    assert [r["rank"] for r in got] == [str(i + 1) for i in range(len(got))]
    for r, w in zip(got, want["results"]):
        assert r["shown"] == f"{r['similarity']:.3f}" and r["mark"] == w["form"]
        assert r["doc"].startswith(w["doc"].rsplit("/", 1)[-1])


def test_search_then_more_like_this(index_page, index_url, index_db, screenshots):
    page = index_page
    open_lab(page, index_url)
    assert page.is_visible("#tab-index")
    page.click("#tab-index")
    assert "20 usages of 2 words, minilm" in page.inner_text("#index-about")
    assert page.eval_on_selector_all("#index-word option",
                                     "os => os.map((o) => o.value)") == ["bank", "spring"]
    page.fill("#index-sentence", QUERY)
    page.select_option("#index-word", "bank")
    page.fill("#index-k", "8")
    page.click("#index-run")
    want = search_usages(index_db, QUERY, "bank", k=8)
    got = wait_for_rows(page, 8, want["results"][0]["usage_id"])
    assert_rows_are(got, want)
    assert {r["sentence"] for r in got} <= SENTENCES
    assert ("Usages nearest" in page.inner_text("#index-query")
            and page.inner_text("#index-query mark") == "bank")
    # a sentence with markup and an emoji before the word: shown as text, the span still on "bank"
    odd = [r for r in got if "<east>" in r["sentence"]]
    assert odd and odd[0]["mark"] == "bank"
    assert page.locator("#index-results east").count() == 0
    assert "tab=index" in page.url and "iw=bank" in page.url and "ik=8" in page.url
    page.screenshot(path=str(screenshots / "lab-index.png"), full_page=True)

    # "more like this" on the third row: the query becomes that stored usage
    third = got[2]
    page.click("#index-results tbody tr:nth-child(3) button.more")
    want = like_usage(index_db, third["id"], k=8)
    page.wait_for_function(f"document.getElementById('index-query').textContent.includes('{third['id']}')")
    assert page.inner_text("#index-query").startswith("Usages like 'bank'")
    assert third["sentence"] in page.inner_text("#index-query")
    liked = wait_for_rows(page, 8, want["results"][0]["usage_id"])
    assert_rows_are(liked, want)
    assert third["id"] not in [r["id"] for r in liked]
    assert f"iu={third['id']}" in page.url

    # the URL restores the view; keyboard: Enter on a row's button runs "more like this" again
    open_lab(page, index_url, "?" + page.url.split("?", 1)[1])
    assert page.is_visible("#panel-index")
    assert_rows_are(wait_for_rows(page, 8, want["results"][0]["usage_id"]), want)
    nxt = like_usage(index_db, want["results"][0]["usage_id"], k=8)
    page.focus("#index-results tbody tr:nth-child(1) button.more")
    page.keyboard.press("Enter")
    assert_rows_are(wait_for_rows(page, 8, nxt["results"][0]["usage_id"]), nxt)
    page.wait_for_function("document.activeElement.id === 'index-query'")


SLOW_SEARCH = """(() => {  // once window.slow.on is set, searches answer 1.5 s late; "more like this" not
  const fetch0 = window.fetch;
  window.slow = { on: false, seen: 0, pending: 0 };
  window.fetch = async (url, opts) => {
    if (!window.slow.on || !String(url).includes("/api/index/search")) return fetch0(url, opts);
    window.slow.seen++; window.slow.pending++;
    try {
      await new Promise((r) => setTimeout(r, 1500)); return await fetch0(url, opts);
    } finally { window.slow.pending--; }
  };
})();"""


def test_a_slower_earlier_search_never_replaces_the_latest(index_page, index_url, index_db):
    """A search still on its way when "more like this" answers does not overwrite that answer, and the
    search button stays disabled until every run has come back (CL.latestRuns, as the other tabs)."""
    page = index_page
    page.add_init_script(SLOW_SEARCH)
    open_lab(page, index_url, "?tab=index")
    page.fill("#index-sentence", QUERY)
    page.select_option("#index-word", "bank")
    page.fill("#index-k", "8")
    page.click("#index-run")
    first = wait_for_rows(page, 8, search_usages(index_db, QUERY, "bank", k=8)["results"][0]["usage_id"])
    page.evaluate("window.slow.on = true")
    page.fill("#index-k", "4")
    page.click("#index-run")  # slow: still on its way when the next run answers
    page.wait_for_function("window.slow.seen === 1")
    assert page.is_disabled("#index-run")
    page.click("#index-results tbody tr:nth-child(3) button.more")
    want = like_usage(index_db, first[2]["id"], k=4)
    assert_rows_are(wait_for_rows(page, 4, want["results"][0]["usage_id"]), want)
    assert page.is_disabled("#index-run")  # the search has not come back yet
    page.wait_for_function("window.slow.pending === 0")
    page.wait_for_function("!document.getElementById('index-run').disabled")
    assert_rows_are(rows(page), want)  # the late search's answer was dropped
    assert page.inner_text("#index-query").startswith("Usages like 'bank'")


def test_errors_show_in_the_page(index_page, index_url):
    page = index_page
    open_lab(page, index_url, "?tab=index")
    page.fill("#index-sentence", "We sat by the river.")
    page.select_option("#index-word", "spring")
    page.click("#index-run")
    page.wait_for_function("document.getElementById('index-error').textContent.length > 0")
    assert "'spring' is not a word of" in page.inner_text("#index-error")
    page.fill("#index-sentence", "The spring rain fed the spring.")
    page.focus("#index-sentence")
    page.keyboard.press("Enter")  # Enter in the sentence box searches
    page.wait_for_function("document.getElementById('index-error').textContent.includes('occurrence')")
    page.fill("#index-occurrence", "1")
    page.fill("#index-k", "51")
    page.click("#index-run")
    page.wait_for_function("document.getElementById('index-error').textContent.includes('k:')")
    # the schema's cap
    assert "k: Input should be less than or equal to 50" in page.inner_text("#index-error")
    page.fill("#index-k", "3")
    page.click("#index-run")
    page.wait_for_function("document.querySelectorAll('#index-results tbody tr[data-usage-id]').length === 3")
    assert page.inner_text("#index-error") == ""
    assert page.inner_text("#index-query mark") == "spring"  # the second one: occurrence 1
    assert page.evaluate("document.querySelector('#index-query mark').previousSibling.textContent").endswith(
        "fed the "
    )


def test_phone_width(browser, index_url, screenshots):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    page = context.new_page()
    open_lab(page, index_url, f"?tab=index&is={quote(QUERY)}&iw=bank&ik=5")
    page.wait_for_function("document.querySelectorAll('#index-results tbody tr[data-usage-id]').length === 5")
    assert page.evaluate("document.documentElement.scrollWidth") <= 391
    assert page.is_visible("#index-results tbody tr:nth-child(1) button.more")
    page.screenshot(path=str(screenshots / "lab-index-phone.png"), full_page=True)
    context.close()


def test_without_an_index_there_is_no_corpus_tab(page, lab_url):
    open_lab(page, lab_url, "?tab=index")
    assert not page.is_visible("#tab-index") and page.is_visible("#panel-toy")
    page.focus("#tab-know")
    page.keyboard.press("ArrowRight")  # wraps to the first tab: no hidden fifth one
    assert page.is_visible("#panel-toy")
