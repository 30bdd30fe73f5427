"""The views of the explanations inside a layer, drawn with our own SVG (no Plotly, so a page is a
few tens of kB): the two blocks of every layer, the attributions beside occlusion, and patching.

Each takes the result of the library function that computes it
(:func:`~contextlens.analysis.sublayers.sublayers`,
:func:`~contextlens.analysis.faithfulness.attributions`,
:func:`~contextlens.analysis.patching.patch`) and carries its numbers as they are: the page only
draws them (``views/assets/explain.js``).

>>> r = {"model": "toy", "word": "bank", "sentences": ["bank loan"], "stages": ["attention"],
...      "start": {"cosine": None, "name": "static row"}, "largest_drop": None, "note": "no ffn",
...      "rows": [{"layer": 1, "layer_name": "layer 1", "after": "attention", "cosine": None,
...                "moved": [0.25], "update_norm": [1.5]}]}
>>> v = sublayers_view(r)
>>> v.kind, v.family, v.data["rows"][0]["moved"]
('sublayers', 'explain', [0.25])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import InputError
from ..results import jsonable
from .base import View, need, short

__all__ = ["sublayers_view", "attributions_view", "patch_view"]


def _mapping(result: Any, what: str) -> Mapping:
    if not isinstance(result, Mapping):
        raise InputError(f"this is not the result of {what} (got {type(result).__name__}, expected a dict)")
    return result


def _keep(result: Mapping, keys: tuple[str, ...]) -> dict[str, Any]:
    return jsonable({k: result[k] for k in keys if k in result})


def sublayers_view(result: Mapping[str, Any], *, title: str = "",
                   labels: Sequence[str] | None = None) -> View:
    """The two blocks of every layer: two lanes per layer (attention, feed-forward), how far each
    block moved each usage (cosine distance), and above them the cosine between the two usages
    after every block, the block where it fell most marked. ``result``: the dict of
    :func:`~contextlens.analysis.sublayers.sublayers`; ``labels``: how the usages are named (default
    ``S0``, ``S1``: the texts as numbered in ``result``; the lab names them by its own sentences).

    >>> r = {"word": "bank", "sentences": ["a bank", "the bank"], "stages": ["attention"],
    ...      "start": {"cosine": 1.0}, "rows": []}
    >>> sublayers_view(r).data["labels"], sublayers_view(r, labels=["S2", "S0"]).data["labels"]
    (['S0', 'S1'], ['S2', 'S0'])
    """
    what = "sublayers"
    result = _mapping(result, what)
    need(result, ("word", "sentences", "stages", "start", "rows"), what)
    n = len(result["sentences"])
    labels = [f"S{u}" for u in range(n)] if labels is None or not len(labels) else [str(x) for x in labels]
    if len(labels) != n:
        raise InputError(f"{len(labels)} labels for {n} sentences; give one label per sentence")
    for row in result["rows"]:
        need(row, ("layer", "after", "cosine", "moved", "update_norm"), f"{what} (a row)")
        if len(row["moved"]) != n or len(row["update_norm"]) != n:
            raise InputError(f"layer {row['layer']} ({row['after']}): moved and update_norm need one value "
                             f"per sentence ({n}); give the dict sublayers returned")
    data = _keep(result, ("model", "word", "sentences", "stages", "start", "rows", "largest_drop", "note"))
    data["labels"] = labels
    two = " in two sentences" if n == 2 else ""
    return View("sublayers", data, title or f"{result['word']!r}{two}: what each block of each layer does")


def attributions_view(result: Mapping[str, Any], *, title: str = "") -> View:
    """The methods × the other words at a layer (a layer to choose), each row shaded by its own
    largest score, with each method's Spearman correlation with occlusion; below, that correlation
    for every layer and method (the faithfulness table). ``result``: the dict of
    :func:`~contextlens.analysis.faithfulness.attributions`."""
    what = "attributions"
    result = _mapping(result, what)
    need(result, ("sentence", "word", "methods", "context", "layers", "definitions"), what)
    n = len(result["context"])
    for layer in result["layers"]:
        need(layer, ("layer", "layer_name", "occlusion", "scores", "spearman"), f"{what} (a layer)")
        bad = [m for m, s in layer["scores"].items() if len(s) != n]
        if len(layer["occlusion"]) != n or bad:
            raise InputError(f"{layer['layer_name']}: every method needs one score per context word ({n}); "
                             "give the dict attributions returned")
    keep = ("model", "sentence", "word", "index", "causal", "methods", "unavailable", "context", "layers",
            "definitions", "next_word", "ig_completeness", "steps")
    return View("attributions", _keep(result, keep),
                title or f"what shaped {result['word']!r}: attributions beside occlusion")


def patch_view(result: Mapping[str, Any], *, title: str = "") -> View:
    """Patching over the layers: the patched word's last-layer cosine to the donor's word and to the
    unpatched recipient's, one point per layer patched; for a causal LM the next words after each
    patch and the donor's best words' probability layer by layer. ``result``: the dict of
    :func:`~contextlens.analysis.patching.patch`."""
    what = "patch"
    result = _mapping(result, what)
    need(result, ("word", "at", "recipient", "donor", "unpatched", "rows"), what)
    for row in result["rows"]:
        need(row, ("layer", "cosine_to_donor", "cosine_to_recipient"), f"{what} (a row)")
    keep = ("model", "word", "at", "point", "recipient", "donor", "pieces", "unpatched", "rows",
            "predictions", "unavailable")
    return View("patch", _keep(result, keep),
                title or f"{result['word']!r} patched from {short(result['donor'], 40)!r} into "
                         f"{short(result['recipient'], 40)!r}, layer by layer")
