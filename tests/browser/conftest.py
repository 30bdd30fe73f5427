"""Fixtures of the browser tests: the lab server (a subprocess on 127.0.0.1, a free port) and
Debian's Chromium driven by Playwright (no `playwright install`: it cannot download here).

Without /usr/bin/chromium the tests skip with a reason, except under CI=true where they fail.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.missing import missing as _missing

CHROMIUM = Path(os.environ.get("CONTEXTLENS_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "out" / "screenshots"
SERVER = "import uvicorn; from contextlens.web import create_app; " \
         "uvicorn.run(create_app(**{kwargs}), host='127.0.0.1', port={port}, log_level='warning')"


@pytest.fixture(scope="session")
def chromium_path() -> str:
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        _missing("the Python package playwright is not installed (pip install -e '.[dev]')")
    return str(CHROMIUM)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_lab(**kwargs: str):
    """The lab server, ``create_app(**kwargs)`` (plain string values), in a subprocess on a free
    port of 127.0.0.1; yields its URL once ``/api/status`` answers, stops it afterwards."""
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-c", SERVER.format(kwargs=repr(kwargs), port=port)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120  # a busy shared machine took 25-45 s to start it
    try:
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    out = proc.stdout.read().decode(errors="replace") if proc.poll() is not None else ""
                    pytest.fail(f"the lab server did not start on {url}: {out[-2000:]}")
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def lab_url(chromium_path):
    with serve_lab() as url:
        yield url


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


@contextlib.contextmanager
def lab_page(browser, url: str):
    """A page on the lab at ``url``; afterwards, fails on JavaScript errors or requests outside it."""
    context = browser.new_context(viewport={"width": 1400, "height": 950}, accept_downloads=True)
    outside: list[str] = []

    def block(route):  # everything must come from the lab server: record and refuse the rest
        outside.append(route.request.url)
        route.abort()

    context.route(lambda u: not u.startswith(url) and not u.startswith(("data:", "blob:")), block)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.set_default_timeout(20_000)
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
    assert not outside, f"the page asked for resources outside the lab server: {outside}"


@pytest.fixture
def page(browser, lab_url):
    with lab_page(browser, lab_url) as pg:
        yield pg


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


def click_download(page, button: str, view: str):
    """The download that clicking ``button`` (a view's SVG or PNG button) starts, or None.

    Under a loaded full-suite run Playwright has, a few times, seen no download event although
    the page's save had run (the view's ``data-downloaded`` held the file name); the cause is not
    found. A click whose save ran but brought no event is tried once more; a save that fails or
    never runs still gives None, and the test fails."""
    fmt = page.get_attribute(button, "data-format")
    for _ in range(2):
        page.evaluate("(v) => { delete document.querySelector(v).dataset.downloaded; }", view)
        try:
            with page.expect_download() as got:
                page.click(button)
            return got.value
        except Exception:  # noqa: BLE001 - Playwright's timeout; what the page did decides below
            if not (page.get_attribute(view, "data-downloaded") or "").endswith(f".{fmt}"):
                return None
    return None
