"""``contextlens eval TASK``: the evaluation tasks, with the published numbers beside ours."""

from pathlib import Path

import typer

from . import options as o
from ._common import add_command, handle_errors, out, print_json, say, spinner, stage_progress, table

# runner.TASKS + all
TASK_CHOICES = ("wic", "wsd", "coarsewsd", "scws", "cosimlex", "similarity", "analogy", "all")
METRICS = ("accuracy", "precision", "recall", "f1", "macro_f1", "spearman", "subtask1_uncentered_pearson",
           "subtask2_harmonic_mean")
# shown as they are, not in %
CORRELATIONS = ("spearman", "subtask1_uncentered_pearson", "subtask2_harmonic_mean")
LEXICAL = ("similarity", "analogy")
WSD_METHODS = ("lmms", "1nn")  # evaluation.wsd.WSD_METHODS (not imported: the CLI starts without numpy)
POS = ("NOUN", "VERB", "ADJ", "ADV")


def _results_table(result: dict):
    rows = result["results"]
    who = result.get("model") or result.get("vectors")
    extra = [k for k in ("task", "word") if any(k in r for r in rows)]
    metrics = [m for m in METRICS if any(m in r for r in rows)]
    pos = [p for p in POS if any(p in (r.get("pos_f1") or {}) for r in rows)]  # wsd: F1 per part of speech
    columns = [*extra, "split", "method", "layer", *metrics, *(f"f1 {p}" for p in pos), "n", "oov"]
    cells = []
    for r in rows:
        row = [str(r.get(k, "")) for k in extra] + [str(r["split"]), str(r["method"]),
                                                    "" if r["layer"] is None else str(r["layer"])]
        row += ["" if r.get(m) is None else f"{100 * r[m]:.1f}" if m not in CORRELATIONS else f"{r[m]:.3f}"
                for m in metrics]
        row += ["" if (r.get("pos_f1") or {}).get(p) is None else f"{100 * r['pos_f1'][p]:.1f}" for p in pos]
        cells.append(row + [str(r.get("n", "")), "" if r.get("oov") is None else str(r["oov"])])
    numeric = (*metrics, *(f"f1 {p}" for p in pos), "n", "oov", "layer")
    return table(f"{result['task']} — {who}", columns, cells,
                 left="".join("r" if c in numeric else "l" for c in columns))


def _references_table(refs: list[dict]):
    return table("published reference numbers", ["task", "split", "system", "metric", "value", "source"],
                 [(r["task"], r["split"], r["system"], r["metric"], f"{r['value']:g}", r["source"])
                  for r in refs],
                 left="llllrl")


def _checked_encoder(task: str, model, vectors, method: str, wanted: list[int] | None, running: dict):
    """With --layer / --layers: the task's encoder, its layers checked before any encoding
    (a static table looked up for similarity / analogy has no layers to choose)."""
    from ..evaluation.runner import make_task_encoder

    if not wanted or (model is None and method == "static" and task in LEXICAL):
        return None
    with spinner(f"loading {model or vectors}..."):
        encoder = make_task_encoder(model, vectors, method, **running)
    for k in wanted:
        encoder.layer_position(k)
    return encoder


@handle_errors
def eval_(
    task: str = typer.Argument(..., metavar="TASK", help=" | ".join(TASK_CHOICES)),
    model: str = o.MODEL, engine: str = o.ENGINE, precision: str = o.PRECISION,
    vectors: str = o.reads(o.option(None, "--vectors", metavar="FILE|NAME",
                                    help="A static table: a vectors file or a packaged name "
                                    "(glove-6b-50d).")),
    method: str = o.method_option("static",
                                  also="wsd: also the disambiguation, lmms (LMMS in full, a row per step; "
                                  "default) | 1nn (SemCor's senses only)."),
    layer: int = o.layer_option(None,
                                help="One layer number (0 = the static / embedding row; negative from the "
                                           "top)."),
    layers: str = o.option(None, "--layers", metavar="N,...",
                           help="'all' (default: every layer) or a comma list of layer numbers: 1,3,6."),
    split: str = o.option(None, "--split", metavar="NAME",
                          help="wic: dev | test; wsd: semeval2007 | ... | ALL; coarsewsd: cv | test; scws: "
                          "sample; similarity: dataset names, comma-separated; cosimlex: none."),
    data_dir: Path = o.DATA_DIR,
    features: str = o.option("cosines", "--features", metavar="KIND",
                             help="wic logistic regression: cosines | full | senses (+ the senses LMMS picks "
                             "for the two uses); cosimlex: senses adds cosine+senses."),
    semcor_limit: int = o.bounded(o.option(None, "--semcor-limit", metavar="N",
                                           help="wsd: learn senses from the "
                                           "first N SemCor sentences only."), 1, 10**9),
    restrict: int = o.bounded(o.option(300000, "--restrict", metavar="N",
                                       help="similarity / analogy with static vectors: the first N words (as "
                                       "gensim's evaluators)."), 1, 10**9),
    template: str = o.option("{word}", "--template", metavar="TEXT",
                             help="similarity / analogy with a model: the word's context, with {word}."),
    no_cache: bool = o.flag("--no-cache", help="Encode again; write nothing to the cache."),
    as_json: bool = o.JSON,
) -> None:
    """Evaluate a model or vectors on TASK (or all tasks whose data is present)."""
    from ..errors import InputError, check_choice
    from ..evaluation.runner import evaluate, evaluate_all

    check_choice("task", task, TASK_CHOICES)
    wsd_method = None
    if method in WSD_METHODS:
        if task != "wsd":
            raise InputError(f"--method {method} is a way to disambiguate senses: it applies to `eval wsd`; "
                             f"for {task} give --method {o.STATIC_METHODS_HELP} with --vectors, or drop it")
        wsd_method, method = method, None
    o.check_source(model, vectors, method)
    running = o.check_engine(model, engine, precision)
    method = method or "static"
    if layer is not None and layers is not None:
        raise InputError("give --layer or --layers, not both")
    wanted = [layer] if layer is not None else (None if layers in (None, "all")
                                                else o.parse_ints("--layers", layers))
    if task == "all" and wanted:
        raise InputError("--layer / --layers choose layers of one task; "
                         "with 'all' every task reports its own")
    encoder = _checked_encoder(task, model, vectors, method, wanted, running)
    options = {"features": features, "semcor_limit": semcor_limit, "restrict": restrict, "template": template,
               "wsd_method": wsd_method}
    with stage_progress() as progress:
        if task == "all":
            result = evaluate_all(model=model, vectors=vectors, method=method, data_dir=data_dir,
                                  use_cache=not no_cache, progress=progress, **running, **options)
        else:
            result = evaluate(task, model=model, vectors=vectors, method=method, layer=layer,
                              layers=None if layer is not None else wanted, split=split, data_dir=data_dir,
                              use_cache=not no_cache, progress=progress, encoder=encoder, **running,
                              **options)
    if as_json:
        print_json(result)
        return
    out().print(_results_table(result))
    if result.get("references"):
        out().print(_references_table(result["references"]))
    for s in result.get("skipped", []):
        say(f"skipped {s['task']}: {s['reason']}")


def register(app: typer.Typer) -> None:
    """Add ``eval`` to ``app``."""
    add_command(app, eval_, "eval")
