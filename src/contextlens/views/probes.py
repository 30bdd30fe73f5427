"""The views of what layers know, drawn with Plotly: probes per layer and the CKA heatmap.

:func:`probes_view` takes one or more results of :func:`~contextlens.analysis.probing.probe`
(several tasks, or several models on one task) and draws, per result, the task accuracy and
the control accuracy per layer, the selectivity (their difference) below, and the expected
layer (Tenney et al. 2019) as a dotted line; a table under the figure lists the same numbers.
:func:`cka_view` takes a :func:`~contextlens.analysis.cka.layer_cka` result: the layers ×
layers heatmap of one model, or of two. Both carry the library's numbers as they are.

>>> row = {"layer": 0, "accuracy": 0.9, "control_accuracy": 0.6, "selectivity": 0.3, "n_train": 10,
...        "n_test": 5, "missing": 0}
>>> v = probes_view({"task": "pos", "model": "glove", "rows": [row], "expected_layer": None,
...                  "probe": "linear"})
>>> v.kind, v.data["results"][0]["rows"][0]["selectivity"], v.title
('probes', 0.3, 'pos probe per layer: glove')
>>> c = cka_view({"models": ["a", "a"], "layers": [[0, 1], [0, 1]], "matrix": [[1.0, 0.5], [0.5, 1.0]],
...               "n_words": 8, "n_sentences": 2, "missing": 0, "debiased": False, "sentences": "s.txt"})
>>> c.kind, c.data["matrix"][0][1], c.title
('cka', 0.5, 'linear CKA between the layers of a')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import EmptyInputError, InputError
from ..results import Result, jsonable
from .base import View, need

__all__ = ["probes_view", "cka_view"]

ROW_KEYS = ("layer", "accuracy", "control_accuracy", "selectivity", "n_train", "n_test", "missing")
CKA_KEYS = ("models", "layers", "matrix", "n_words", "n_sentences", "debiased")


def _as_dict(result: Any, what: str) -> Mapping:
    result = result.as_dict() if isinstance(result, Result) else result
    if not isinstance(result, Mapping):
        raise InputError(f"this is not the result of {what} (got {type(result).__name__}, expected a dict)")
    return result


def _probe(result: Any) -> dict[str, Any]:
    """One probe result, checked, as the view's data holds it."""
    what = "probe"
    r = _as_dict(result, what)
    need(r, ("task", "model", "rows", "expected_layer"), what)
    if not r["rows"]:
        raise InputError(f"the {r['task']} probe of {r['model']} has no layers; give the result probe() "
                         "returned")
    for row in r["rows"]:
        need(row, ROW_KEYS, f"{what} (a layer)")
    keep = ("task", "model", "rows", "expected_layer", "probe", "seed", "labels", "lemmas")
    return jsonable({k: r[k] for k in keep if k in r})


def probes_view(results: Any, *, title: str = "") -> View:
    """Probes layer by layer: for each result of ``probe`` (one, or a list: several tasks of
    a model, or one task over several models), accuracy and control accuracy per layer,
    selectivity (accuracy − control) per layer, and the expected layer marked. A result is a
    :class:`~contextlens.analysis.probing.ProbeResult` or its ``as_dict()``."""
    items = [results] if isinstance(results, Mapping | Result) else list(results)
    if not items:
        raise EmptyInputError("no probe result to show; give probe()'s result, or a list of them")
    data = [_probe(r) for r in items]
    tasks = list(dict.fromkeys(r["task"] for r in data))
    models = list(dict.fromkeys(r["model"] for r in data))
    return View("probes", {"results": data},
                title
                or f"{', '.join(tasks)} probe{'s' if len(tasks) > 1 else ''} per layer: {', '.join(models)}")


def cka_view(result: Any, *, title: str = "") -> View:
    """Linear CKA between layers: the heatmap of a ``layer_cka`` result (rows: the first
    model's layers, columns: the second's, or the same model's), its numbers in the cells.
    ``result``: a :class:`~contextlens.analysis.cka.CkaResult` or its ``as_dict()``."""
    what = "layer_cka"
    r = _as_dict(result, what)
    need(r, CKA_KEYS, what)
    rows, cols = (list(x) for x in r["layers"])
    matrix = [list(row) for row in r["matrix"]]
    if len(r["models"]) != 2 or len(matrix) != len(rows) or any(len(row) != len(cols) for row in matrix):
        raise InputError(f"this {what} result's matrix is not {len(rows)} × {len(cols)} (its layers); give "
                         "the result layer_cka() returned")
    keep = ("models", "layers", "matrix", "n_words", "n_sentences", "missing", "debiased", "sentences")
    a, b = r["models"]
    return View("cka", jsonable({k: r[k] for k in keep if k in r}),
                title or ("linear CKA between the layers of " + (a if a == b else f"{a} and {b}")))
