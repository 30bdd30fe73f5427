"""Write docs/head-view.png: MiniLM's head view of one sentence, saved with ``save_html`` and
photographed in Debian's Chromium (Playwright) with the network off.

    python examples/head_view_screenshot.py [OUT.png]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from contextlens import make_encoder, views

TEXT = "We sat on the bank of the river and watched the boats."


def main(out: Path) -> None:
    minilm = make_encoder(model="minilm")
    enc = minilm.encode([TEXT])[0]
    view = views.head_view(enc, minilm.attention_parts(TEXT), layer=3, heads="all", specials=True,
                           title=f"MiniLM, layer 3: {TEXT}")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        page_file = view.save_html(Path(tmp) / "head.html")
        browser = p.chromium.launch(executable_path="/usr/bin/chromium",
                                    args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 900, "height": 700}, device_scale_factor=2)
        page.context.set_offline(True)
        page.goto(page_file.as_uri())
        page.wait_for_selector("body[data-ready='1']")
        page.locator("#clv-0").screenshot(path=str(out))
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/head-view.png"))
