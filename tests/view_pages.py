"""Read back the views a saved page (``View.save_html``, ``Page``) or a notebook output holds."""

from __future__ import annotations

import html
import json
import re

DATA = re.compile(r'<script type="application/json" class="clv-(data|blob)"(?: '
                  r'data-(?:target|key)="([^"]*)")?>(.*?)'
                  r"</script>", re.S)
SRCDOC = re.compile(r'<iframe class="contextlens-view" srcdoc="([^"]*)"')


def page_views(text: str) -> list[dict]:
    """Each view's data (its JSON, with the page's shared parts put back), in page order.
    ``text`` is a page's HTML or a notebook output (``<iframe srcdoc>``) holding one."""
    inner = SRCDOC.findall(text)
    if inner:
        return [v for doc in inner for v in page_views(html.unescape(doc))]
    blobs, views = {}, []
    for kind, key, body in DATA.findall(text):
        value = json.loads(body.replace("<\\/", "</"))
        if kind == "blob":
            blobs[key] = value
        else:
            views.append(value)
    return [{k: blobs[v["$blob"]] if isinstance(v, dict) and "$blob" in v else v for k, v in d.items()}
            for d in views]
