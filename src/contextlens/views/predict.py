"""The views of three readings of a model, drawn with Plotly: the logit lens, occlusion beside
attention, and a usage's contextual neighbours.

Each takes the result of the library function that computes it
(:meth:`~contextlens.encoders.lm.LanguageModel.lens`,
:func:`~contextlens.analysis.occlusion.occlusion_vs_attention`,
:func:`~contextlens.analysis.neighbours.contextual_neighbours`) and carries its numbers as
they are: the page only draws them.

>>> v = neighbours_view({"word": "bank", "sentence": "We sat on the bank.", "model": "toy", "layer": 1,
...                      "layer_name": "attention 1", "reference": "toy",
...                      "neighbours": [{"word": "river", "cosine": 0.9}, {"word": "loan", "cosine": 0.1}]})
>>> v.kind, v.data["span"], [n["word"] for n in v.data["neighbours"]]
('neighbours', [14, 18], ['river', 'loan'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..results import Result, jsonable
from ..text import tokenize
from .base import View, need, short

__all__ = ["lens_view", "occlusion_view", "neighbours_view"]

OCCLUSION_KEYS = ("layer", "layer_name", "occlusion", "attention", "rollout", "spearman_attention",
                  "spearman_rollout")


def _as_dict(result: Any) -> Any:
    return result.as_dict() if isinstance(result, Result) else result


def _mapping(result: Any, what: str) -> Mapping:
    if not isinstance(result, Mapping):
        raise InputError(f"this is not the result of {what} (got {type(result).__name__}, expected a dict)")
    return result


def lens_view(result: Any, *, title: str = "") -> View:
    """The logit lens: per layer the ``k`` best next words with their probabilities (a grid,
    darker = more probable) and each tracked word's rank and probability layer by layer.
    ``result``: a :class:`~contextlens.encoders.lm_results.LensResult` or its ``as_dict()``.

    >>> layer = {"layer": 0, "layer_name": "embedding output", "tracked": [],
    ...          "top": [{"word": "river", "probability": 0.5, "pieces": [" river"]}]}
    >>> v = lens_view({"model": "m", "text": "the bank of the", "position": 3, "word": "the",
    ...                "layers": [layer]})
    >>> v.title, v.data["layers"][0]["top"][0]["word"]
    ("m: the logit lens after 'the' (word 3) in 'the bank of the'", 'river')
    """
    what = "LanguageModel.lens"
    result = _mapping(_as_dict(result), what)
    need(result, ("model", "text", "position", "word", "layers"), what)
    if not result["layers"]:
        raise InputError(f"this {what} result has no layers; run the lens on a model with layers")
    tuned = result.get("tuned")
    for layer in [*result["layers"], *(tuned or {}).get("layers", [])]:
        need(layer, ("layer", "layer_name", "top", "tracked"), f"{what} (a layer)")
    if tuned is not None:  # lens --tuned: the tuned lens's layers and both lenses' KL per layer
        need(tuned, ("layers", "kl"), f"{what} with tuned=")
        need(tuned["kl"], ("layers", "logit", "tuned"), f"{what} with tuned= (its kl)")
    keep = ("model", "text", "position", "word", "rule", "lens", "layers", "tuned")
    data = jsonable({k: result[k] for k in keep if k in result})
    return View("lens", data, title or f"{result['model']}: the logit lens after {result['word']!r} (word "
                                       f"{result['position']}) in {short(result['text'])!r}")


def occlusion_view(result: Mapping[str, Any], *, title: str = "") -> View:
    """Occlusion beside attention: per layer, how far the word's vector moves when each other
    word is left out, beside the attention it gave that word (mean over heads) and rollout;
    and the Spearman correlation of effect and attention, layer by layer. ``result``: the
    dict of :func:`~contextlens.analysis.occlusion.occlusion_vs_attention`.

    >>> r = {"sentence": "bank loan river", "word": "bank", "index": 0,
    ...      "others": [{"word": "loan", "position": 1}, {"word": "river", "position": 2}],
    ...      "layers": [{"layer": 1, "layer_name": "attention 1", "occlusion": [0.2, 0.1],
    ...                  "attention": [0.6, 0.4], "rollout": [0.5, 0.5], "spearman_attention": 1.0,
    ...                  "spearman_rollout": None}]}
    >>> occlusion_view(r).data["layers"][0]["spearman_rollout"] is None
    True
    """
    what = "occlusion_vs_attention"
    result = _mapping(result, what)
    need(result, ("sentence", "word", "others", "layers"), what)
    n = len(result["others"])
    for layer in result["layers"]:
        need(layer, OCCLUSION_KEYS, f"{what} (a layer)")
        if not all(len(layer[k]) == n for k in ("occlusion", "attention", "rollout")):
            raise InputError(f"{layer['layer_name']}: occlusion, attention and rollout need one value per "
                             f"other word ({n}); give the dict occlusion_vs_attention returned")
    keep = ("sentence", "word", "index", "others", "layers")
    data = jsonable({k: result[k] for k in keep if k in result})
    encoder = result.get("encoder") or {}
    data["model"] = encoder.get("model") or encoder.get("vectors") or encoder.get("encoder")
    return View("occlusion", data,
                title or f"leaving each word out: how far {result['word']!r} moves, beside its attention")


def _span(sentence: str, word: str) -> list[int] | None:
    for w in tokenize(sentence):
        if w.text.lower() == word.lower():
            return [w.start, w.end]
    return None


def neighbours_view(result: Mapping[str, Any], *, title: str = "") -> View:
    """A usage's contextual neighbours: the sentence with the word marked and the reference
    words nearest it at the layer, with their cosines (a bar list). ``result``: the dict of
    :func:`~contextlens.analysis.neighbours.contextual_neighbours`; the word is marked at its
    ``start``/``end`` when the result has them, else at its first occurrence. A result ranked
    with ``contrast`` λ > 0 draws the bars by each neighbour's ``score`` (its cosine minus λ
    times its ``own_cosine``, the cosine to the word's own reference row), both cosines beside.

    >>> r = {"word": "bank", "sentence": "the bank", "layer": 1, "layer_name": "attention 1",
    ...      "contrast": 0.5, "neighbours": [{"word": "river", "cosine": 0.6, "own_cosine": 0.2,
    ...                                       "score": 0.5}]}
    >>> v = neighbours_view(r)
    >>> v.data["contrast"], v.data["neighbours"][0]["score"]
    (0.5, 0.5)
    """
    what = "contextual_neighbours"
    result = _mapping(result, what)
    need(result, ("word", "sentence", "layer", "layer_name", "neighbours"), what)
    ranked = ("word", "cosine", "own_cosine", "score") if result.get("contrast") else ("word", "cosine")
    for n in result["neighbours"]:
        need(n, ranked, f"{what} (a neighbour{' ranked with contrast' if len(ranked) > 2 else ''})")
    keep = ("word", "sentence", "model", "layer", "layer_name", "reference", "contrast", "neighbours",
            "start", "end")
    data = jsonable({k: result[k] for k in keep if k in result})
    data["span"] = ([result["start"], result["end"]] if "start" in result and "end" in result
                    else _span(result["sentence"], result["word"]))
    return View("neighbours", data,
                title or f"nearest to {result['word']!r} as used here, at {result['layer_name']}"
                         + (f", contrast {result['contrast']:g}" if result.get("contrast") else ""))
