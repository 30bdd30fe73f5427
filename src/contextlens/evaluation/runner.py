"""One entry point for every evaluation task: :func:`evaluate` and :func:`evaluate_all`.

Each returns ``{"task", "model" | "vectors", "results": [rows], "references": [...]}``;
a row holds ``split``, ``method``, ``layer`` (None where none), the metric under its
usual name (``accuracy``, ``precision``, ``recall``, ``f1``, ``macro_f1``,
``spearman``, ``subtask1_uncentered_pearson`` and ``subtask2_harmonic_mean`` for
CoSimLex; fractions, not percent), ``n`` and, where it applies, ``oov``.

>>> TASKS
('wic', 'wsd', 'coarsewsd', 'scws', 'cosimlex', 'similarity', 'analogy')
"""

from __future__ import annotations

import logging
from dataclasses import asdict

from ..encoders.base import layer_number
from ..errors import InputError, check_choice
from .references import SOURCES, references

__all__ = ["TASKS", "evaluate", "evaluate_all", "make_task_encoder", "DEFAULT_WSD_VIEW"]

log = logging.getLogger(__name__)
TASKS = ("wic", "wsd", "coarsewsd", "scws", "cosimlex", "similarity", "analogy")
# the last layer: on semeval2007 it beat LMMS's mean of the last four layers (minilm: 56.7 vs 54.1 F1
# with the MFS fallback; benchmarks/RESULTS.md); "last4" stays available (--layers / views=)
DEFAULT_WSD_VIEW = -1
SCWS_SAMPLE = "scws/ratings.sample.txt"


def make_task_encoder(model=None, vectors=None, method: str = "static", batch_size: int = 32, *,
                      engine: str | None = None, precision: str | None = None,
                      random_weights: int | None = None):
    """A TransformerEncoder over every layer (no attention) for ``model`` (run by
    ``engine`` in ``precision``; None: the encoder's defaults; ``random_weights``: a seed
    for its random-weights twin), else the ``method`` encoder over the ``vectors`` table."""
    from ..encoders.registry import make_encoder

    if (model is None) == (vectors is None):
        raise InputError("give exactly one of a model (--model) or vectors (--vectors)")
    if model is not None:
        return make_encoder(model=model, layers="all", attention=False, batch_size=batch_size, engine=engine,
                            precision=precision, random_weights=random_weights)
    return make_encoder(method, vectors=vectors)


def _layers(layer, layers) -> list[int] | None:
    if layer is not None and layers not in (None, "all"):
        raise InputError("give --layer or --layers, not both")
    if layer is not None:
        return [int(layer)]
    if layers in (None, "all"):
        return None
    return [int(k) for k in layers]


def _keep(rows: list[dict], wanted: list[int] | None, layer_ids) -> list[dict]:
    """The rows of the layers ``wanted`` (layer numbers; negative from the top) and the
    rows of no layer."""
    if wanted is None:
        return rows
    norm = {layer_number(layer_ids, k) for k in wanted}
    return [r for r in rows if r["layer"] is None or r["layer"] in norm]


def evaluate(task: str, *, model=None, vectors=None, method: str = "static", layer: int | None = None,
             layers=None, split: str | None = None, data_dir=None, use_cache: bool = True,
             progress=None, encoder=None, engine: str | None = None, precision: str | None = None,
             **options) -> dict:
    """Run one task; see the module docstring for the result. ``options`` go to the task
    (``features``, ``semcor_limit``, ``wsd_method`` (lmms | 1nn), ``static``, ``restrict``,
    ``template``, ``words``...); ``engine`` and ``precision`` to the model's encoder."""
    from .. import datasets
    from ..encoders.encoding_cache import EncodingCache
    from .coarsewsd import run_coarsewsd
    from .cosimlex import run_cosimlex
    from .lexical import GENSIM_RESTRICT, run_analogy, run_similarity
    from .scws import run_scws
    from .wic import run_wic
    from .wsd import run_wsd

    check_choice("task", task, TASKS)
    root = datasets.resolve_data_dir(data_dir)
    wanted = _layers(layer, layers)
    static_table = None
    if vectors is not None and method == "static" and task in ("similarity", "analogy"):
        from ..encoders.registry import resolve_vectors

        static_table = resolve_vectors(vectors)
    if encoder is None and static_table is None:
        encoder = make_task_encoder(model, vectors, method, engine=engine, precision=precision)
    cache = EncodingCache(encoder, enabled=use_cache) if encoder is not None else None
    if task == "wic":
        rows = run_wic(cache, root, split=split or "dev", layer=layer, progress=progress,
                       features=options.get("features", "cosines"),
                       train_on=options.get("train_on", ("train",)),
                       sense_view=options.get("sense_view", DEFAULT_WSD_VIEW),
                       semcor_limit=options.get("semcor_limit"))
        if layer is not None:
            chosen = next(r["layer"] for r in rows if r["method"] == "threshold")
            rows = [r for r in rows if r["method"] != "threshold-sweep" or r["layer"] == chosen]
    elif task == "wsd":
        views = options.get("views") or (wanted if wanted is not None else [DEFAULT_WSD_VIEW])
        rows = run_wsd(cache, root, split=split or "semeval2007", views=views,
                       semcor_limit=options.get("semcor_limit"), progress=progress,
                       all_senses=options.get("all_senses", False),
                       method=options.get("wsd_method") or "lmms",
                       static=options.get("static"))
    elif task == "coarsewsd":
        sweep = wanted if wanted is not None else [options.get("default_layer", -1)]
        rows = []
        for k in sweep:
            rows += run_coarsewsd(cache, root, split=split or "cv", layer=k, words=options.get("words"),
                                  max_per_word=options.get("max_per_word"), progress=progress)
    elif task == "scws":
        path = options.get("path")
        if path is None and split in (None, "sample"):
            path = None if (root / "scws" / "ratings.txt").is_file() and split is None else SCWS_SAMPLE
        rows = run_scws(cache, root, path=path, progress=progress)
        rows = _keep(rows, wanted, cache.layer_ids)
    elif task == "cosimlex":
        check_choice("cosimlex features", options.get("features") or "cosines", ("cosines", "senses"))
        if split is not None:
            raise InputError(f"cosimlex has one set of pairs (cosimlex/cosimlex_en.csv), no split {split!r}; "
                             "drop --split")
        rows = run_cosimlex(cache, root, path=options.get("path"), progress=progress,
                            senses=options.get("features") == "senses",
                            sense_view=options.get("sense_view", DEFAULT_WSD_VIEW),
                            semcor_limit=options.get("semcor_limit"))
        rows = _keep(rows, wanted, cache.layer_ids)
    elif task == "similarity":
        names = split.split(",") if split else None
        rows = run_similarity(root, table=static_table, cache=cache, names=names,
                              restrict=options.get("restrict", GENSIM_RESTRICT),
                              template=options.get("template", "{word}"), progress=progress)
        rows = rows if cache is None else _keep(rows, wanted, cache.layer_ids)
    else:
        rows = run_analogy(root, table=static_table, cache=cache,
                           restrict=options.get("restrict", GENSIM_RESTRICT),
                           template=options.get("template", "{word}"), layers=wanted, progress=progress)
    if not rows:
        raise InputError(f"{task}: no result for layer(s) {wanted}; check --layer against the encoder's "
                         "layers")
    who = {"model": encoder.name} if model is not None else {
        "vectors": static_table.name if static_table is not None else encoder.params()["vectors"],
        "method": method}
    return {"task": task, **who, "results": rows,
            "references": _refs(task, (split or "semeval2007") if task == "wsd" else None)}


def _refs(task: str, split: str | None = None) -> list[dict]:
    return [{**asdict(r), "source": SOURCES[r.source]} for r in references(task, split)]


def evaluate_all(*, model=None, vectors=None, method: str = "static", data_dir=None, use_cache: bool = True,
                 progress=None, engine: str | None = None, precision: str | None = None, **options) -> dict:
    """Every task whose data is present, rows tagged with their ``task``; tasks whose data
    is missing are listed under ``skipped`` with the reason."""
    from .. import datasets
    from ..encoders.registry import resolve_vectors

    if vectors is not None:
        vectors = resolve_vectors(vectors)  # read once, shared by every task
    encoder = make_task_encoder(model, vectors, method, engine=engine, precision=precision)
    rows, skipped, refs = [], [], []
    for task in TASKS:
        try:
            needs_encoder = not (vectors is not None and method == "static"
                                 and task in ("similarity", "analogy"))
            out = evaluate(task, model=model, vectors=vectors, method=method, data_dir=data_dir,
                           use_cache=use_cache, progress=progress,
                           encoder=encoder if needs_encoder else None,
                           **options)
        except datasets.DatasetMissingError as err:
            skipped.append({"task": task, "reason": str(err)})
            log.info("skipping %s: %s", task, err)
            continue
        rows += [{"task": task, **r} for r in out["results"]]
        refs += [{"task": task, **r} for r in out["references"]]
    who = ({"model": encoder.name} if model is not None
           else {"vectors": vectors.name, "method": method})
    return {"task": "all", **who, "results": rows, "references": refs, "skipped": skipped}
