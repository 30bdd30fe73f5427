"""Views: the figures of contextlens, once, for the lab, notebooks and standalone HTML.

Each function turns an :class:`~contextlens.encoders.base.Encoding`, an encoder's
:class:`~contextlens.encoders.qk.AttentionParts` or an analysis result into a
:class:`View`: ``_repr_html_`` shows it in a notebook (no extension, no network),
``save_html(path)`` writes one standalone file, ``data`` is the JSON the lab draws with
the same script. :class:`Page` puts several views in one file.

>>> from contextlens import views
>>> from contextlens.analysis.toy import COURSE_VECTORS, toy_table
>>> from contextlens.encoders.mixing import SelfAttention
>>> encoder = SelfAttention(toy_table(COURSE_VECTORS))
>>> enc = encoder.encode(["bank loan"])[0]
>>> views.head_view(enc).kind, views.model_view(enc).kind
('head', 'model')
>>> parts = encoder.attention_parts("bank loan")[0]
>>> views.neuron_view(parts, word="bank").data["initial"]
{'head': 0, 'token': 0}

Views of attention (head, model, neuron, mask, input) are drawn by our own SVG and
canvas script (a page of a few hundred kB); the projection, layers, cosine and senses
views, the lens, occlusion and neighbours views, and the probes and CKA views, by Plotly,
inlined once per page (about 4.8 MB).

What every view keeps to: a word is keyed by its position, never its string (the two *the*
of a sentence are two bars); a tokenizer's pieces are shown as text (:mod:`.pieces`); user
text reaches a figure whole and inert (the page's data through :func:`.base.script_json`,
Plotly's labels through the script's ``CLViews.plotText``); and each view downloads as SVG
and PNG, its title and the state of its controls included (``CLViews.toSvg``).

Modules by subject: :mod:`.attention` (head and model views, the choice of views for a sentence),
:mod:`.neuron` (queries, keys and masks), :mod:`.inputs`, :mod:`.usages` (projection, layers, cosine
matrix, senses), :mod:`.predict` (lens, occlusion, neighbours), :mod:`.explain`, :mod:`.probes`;
:mod:`.base`, :mod:`.packing` and :mod:`.pieces` are their plumbing, and ``assets/`` their scripts.

Floor 9 (ARCHITECTURE.md): imports ``results`` (the one JSON converter), :mod:`contextlens.context`,
:mod:`contextlens.encoders`, :mod:`contextlens.analysis` and the floors below, with numpy
(plotly.js is read from the installed ``plotly`` package); never plots, cli or web.
"""

import importlib

# name -> the module that defines it, imported on first use (PEP 562): a command that draws one
# view (``attention --html``) imports that view's module, not every analysis the others read
_LAZY = {
    **dict.fromkeys(["AttentionData", "attention_data", "attention_views", "head_view", "model_view"],
                    ".attention"),
    **dict.fromkeys(["KINDS", "Page", "View", "check_html_path"], ".base"),
    **dict.fromkeys(["attributions_view", "patch_view", "sublayers_view"], ".explain"),
    "input_view": ".inputs",
    **dict.fromkeys(["leaked_weight", "mask_view", "neuron_view"], ".neuron"),
    **dict.fromkeys(["lens_view", "neighbours_view", "occlusion_view"], ".predict"),
    **dict.fromkeys(["cka_view", "probes_view"], ".probes"),
    **dict.fromkeys(["cosine_view", "layers_view", "projection_view", "senses_view"], ".usages"),
}

__all__ = list(_LAZY)


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value  # later accesses skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
