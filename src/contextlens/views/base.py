"""A view: data + one small script of ours (+ Plotly where needed), inlined into one page.

The same object serves three places: ``_repr_html_`` renders it in Jupyter, JupyterLab,
VS Code and Colab (an ``<iframe srcdoc>`` holding the whole page, so it needs neither an
extension nor the network), ``save_html(path)`` writes it as one standalone file that
opens offline in any browser, and ``data`` / ``to_json()`` are the JSON the lab fetches and
hands to the very same script (``CLViews.render(element, data)``).

A :class:`Page` puts several views in one file; Plotly and our scripts are inlined once
per page, and a large part of the data that two views share (the attention of the head
view and the model view) is stored once.

>>> v = View("layers", {"word": "bank", "layer_ids": [0, 1], "layer_names": ["static", "mixed"],
...                     "pairs": [{"label": "1–2", "cosine_by_layer": [1.0, 0.5]}]})
>>> v.data["kind"], v.family, "plotly.js v" in v.html()
('layers', 'figures', True)
>>> View("head", {}).family, len(View("head", {}).html()) < 100_000  # our own SVG: no Plotly inlined
('attention', True)
"""

from __future__ import annotations

import hashlib
import html
import json
import os
from collections.abc import Mapping, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InputError, MissingDependencyError, check_choice
from ..files import atomic_output
from ..results import jsonable

__all__ = ["View", "Page", "check_html_path", "short", "script_json", "FAMILIES", "KINDS"]

#: each kind of view → the family whose script draws it ("attention": our SVG and canvas,
#: "figures" and "probes": Plotly, "explain": our SVG and tables)
KINDS = {"head": "attention", "model": "attention", "neuron": "attention", "mask": "attention",
         "input": "attention", "projection": "figures", "layers": "figures", "cosine": "figures",
         "senses": "figures", "lens": "figures", "occlusion": "figures", "neighbours": "figures",
         "sublayers": "explain", "attributions": "explain", "patch": "explain", "probes": "probes",
         "cka": "probes"}
FAMILIES = {"attention": ("core.js", "attention.js"), "figures": ("core.js", "figures.js"),
            # probes.js draws its axes with figures.js's layerAxis
            "explain": ("core.js", "explain.js"), "probes": ("core.js", "figures.js", "probes.js")}
PLOTLY_FAMILIES = ("figures", "probes")  # the families drawn with Plotly: a page holding one inlines it
SHARE_ABOVE = 8_000  # characters: a larger top-level part of a view's data is stored once per page
HEIGHTS = {"head": 640, "model": 720, "neuron": 560, "mask": 560, "input": 480, "projection": 620,
           "layers": 440, "cosine": 520, "senses": 560, "lens": 760, "occlusion": 820,
           "neighbours": 480,
           "sublayers": 620, "attributions": 760, "patch": 640, "probes": 800,
           "cka": 620}  # iframe heights before the page fits itself


def short(text: str, n: int = 60) -> str:
    """``text`` on one line, cut to ``n`` characters, for a title.

    >>> short("The bank by the river where my grandfather kept his savings closed", 30)
    'The bank by the river where m…'
    """
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


@cache
def _asset(name: str) -> str:
    return resources.files("contextlens.views").joinpath("assets", name).read_text(encoding="utf-8")


@cache
def _plotly() -> str:
    try:
        import plotly
    except ImportError:
        raise MissingDependencyError("plotly", "web",
                                     "views drawn with Plotly (projection, layers, cosine, senses, lens, "
                                     "occlusion, neighbours, probes, cka)") from None
    return (Path(plotly.__file__).parent / "package_data" / "plotly.min.js").read_text(encoding="utf-8")


def _script(code: str) -> str:
    return "<script>" + code.replace("</script", "<\\/script") + "</script>"


# what a <script> element's text must not hold as such: "<!--<script" or "</script" end it or
# swallow the rest of the page, "&" and ">" are escaped for good measure (and for XHTML), and a
# line or paragraph separator ends a line of JavaScript that is not JSON
_SCRIPT_UNSAFE = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                                "\u2029": "\\u2029"})


def script_json(obj: Any) -> str:
    """``obj`` as strict JSON that is safe as the text of a ``<script>`` element: every
    ``<``, ``>``, ``&``, U+2028 and U+2029 written as a ``\\u`` escape, which
    ``JSON.parse`` reads back as the character it stands for. Every view's data reaches
    a page through here, once.

    >>> script_json({"s": "<!--<script>a & b</script>"})
    '{"s":"\\\\u003c!--\\\\u003cscript\\\\u003ea \\\\u0026 b\\\\u003c/script\\\\u003e"}'
    >>> json.loads(script_json(["\\u2028<b>"])) == ["\\u2028<b>"]
    True
    """
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).translate(_SCRIPT_UNSAFE)


def _json_script(obj: Any, cls: str, **attrs: str) -> str:
    text = script_json(obj)
    extra = "".join(f' data-{k}="{html.escape(v)}"' for k, v in attrs.items())
    return f'<script type="application/json" class="{cls}"{extra}>{text}</script>'


def check_html_path(path: str | os.PathLike) -> Path:
    """``path`` as a Path, if it names an HTML file (checked before any work is done).

    >>> check_html_path("views.png")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: a view is saved as HTML: give a path ending in .html, got 'views.png'
    """
    path = Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise InputError(f"a view is saved as HTML: give a path ending in .html, got {str(path)!r}")
    return path


def need(result: Mapping, keys: Sequence[str], what: str) -> None:
    """Refuse ``result`` unless it holds ``keys`` (a view takes the result of ``what``)."""
    missing = [k for k in keys if k not in result]
    if missing:
        raise InputError(f"this is not the result of {what} (it lacks {', '.join(missing)})")


class _Renders:
    """What a view and a page share: the page's HTML, the notebook iframe, the file."""

    def html(self) -> str:  # pragma: no cover - implemented by subclasses
        raise NotImplementedError

    def _height(self) -> int:  # pragma: no cover
        raise NotImplementedError

    def _repr_html_(self) -> str:
        """The page in an ``<iframe srcdoc>``: scripts run in notebooks with no extension,
        and the page sets the iframe's height to fit its content."""
        return (f'<iframe class="contextlens-view" srcdoc="{html.escape(self.html(), quote=True)}" '
                f'style="width:100%;height:{self._height()}px;border:0" loading="eager"></iframe>')

    def save_html(self, path: str | os.PathLike) -> Path:
        """Write the page as one standalone HTML file (opens offline); written atomically."""
        path = check_html_path(path)
        text = self.html()
        with atomic_output(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
        return path


class View(_Renders):
    """One view: ``kind`` (see :data:`KINDS`), its ``data`` and a title.

    ``data`` holds everything the script draws, JSON-ready
    (:func:`~contextlens.results.jsonable`); the builder functions of :mod:`contextlens.views`
    make it from the library's own results.
    """

    def __init__(self, kind: str, data: Any, title: str = ""):
        self.kind = check_choice("view kind", kind, KINDS)
        self.title = title
        self._data = {"kind": kind, "title": title, **jsonable(data)}

    @property
    def family(self) -> str:
        return KINDS[self.kind]

    @property
    def data(self) -> dict[str, Any]:
        """The JSON-ready data (the lab's JSON): a copy, so changing it changes no view."""
        return json.loads(self.to_json())

    def to_json(self) -> str:
        return json.dumps(self._data, separators=(",", ":"), allow_nan=False)

    def __repr__(self) -> str:
        return f"View({self.kind!r}, {self.title!r}, {len(self.to_json()):,} characters of data)"

    def _height(self) -> int:
        return HEIGHTS[self.kind]

    def html(self) -> str:
        return Page(self, title=self.title or f"contextlens {self.kind} view").html()


class Page(_Renders):
    """Several views in one HTML page: Plotly and our scripts inlined once, large shared
    parts of their data stored once."""

    def __init__(self, *views: View, title: str = "contextlens"):
        if not views or not all(isinstance(v, View) for v in views):
            raise InputError("a page holds one or more views (contextlens.views.View)")
        self.views, self.title = views, title

    def _height(self) -> int:
        return sum(HEIGHTS[v.kind] for v in self.views)

    def html(self) -> str:
        blobs: dict[str, Any] = {}
        mounts, data = [], []
        for n, view in enumerate(self.views):
            d = dict(view._data)
            for key, value in d.items():
                text = json.dumps(value, separators=(",", ":"), allow_nan=False)
                if len(text) > SHARE_ABOVE:
                    digest = hashlib.sha1(text.encode()).hexdigest()[:16]
                    blobs.setdefault(digest, value)
                    d[key] = {"$blob": digest}
            mounts.append(f'<section class="clv-view" id="clv-{n}" '
                          f'aria-label="{html.escape(view.title or view.kind)}">'
                          "</section>")
            data.append(_json_script(d, "clv-data", target=f"clv-{n}"))
        families = list(dict.fromkeys(v.family for v in self.views))
        scripts = list(dict.fromkeys(name for f in families for name in FAMILIES[f]))
        code = [_plotly()] if any(f in PLOTLY_FAMILIES for f in families) else []
        code += [_asset(name) for name in scripts]
        return "\n".join([
            "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{html.escape(self.title)}</title>", f"<style>{_asset('views.css')}</style></head>",
            '<body class="clv-page">', *mounts,
            *(_json_script(v, "clv-blob", key=k) for k, v in blobs.items()), *data,
            *(_script(c) for c in code), _script("CLViews.mountAll(document);"), "</body></html>",
        ])
