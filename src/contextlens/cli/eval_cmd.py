"""``contextlens eval TASK``: the evaluation tasks, with the published numbers beside ours."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..errors import check_choice
from ._common import console, handle_errors, print_json

TASK_CHOICES = ("wic", "wsd", "coarsewsd", "scws", "similarity", "analogy", "all")
METRICS = ("accuracy", "precision", "recall", "f1", "macro_f1", "spearman")


def _results_table(out: dict) -> Table:
    rows = out["results"]
    who = out.get("model") or out.get("vectors")
    t = Table(title=f"{out['task']} — {who}", title_justify="left")
    extra = [k for k in ("task", "word") if any(k in r for r in rows)]
    metrics = [m for m in METRICS if any(m in r for r in rows)]
    for col in (*extra, "split", "method", "layer", *metrics, "n", "oov"):
        t.add_column(col, justify="right" if col in (*metrics, "n", "oov", "layer") else "left")
    for r in rows:
        cells = [str(r.get(k, "")) for k in extra] + [str(r["split"]), str(r["method"]),
                                                      "" if r["layer"] is None else str(r["layer"])]
        cells += ["" if r.get(m) is None else f"{100 * r[m]:.1f}" if m != "spearman" else f"{r[m]:.3f}"
                  for m in metrics]
        cells += [str(r.get("n", "")), "" if r.get("oov") is None else str(r["oov"])]
        t.add_row(*cells)
    return t


def _references_table(refs: list[dict]) -> Table:
    t = Table(title="published reference numbers", title_justify="left")
    for col in ("task", "split", "system", "metric", "value", "source"):
        t.add_column(col, justify="right" if col == "value" else "left")
    for r in refs:
        t.add_row(r["task"], r["split"], r["system"], r["metric"], f"{r['value']:g}", r["source"])
    return t


def register(app: typer.Typer) -> None:
    @app.command("eval")
    @handle_errors
    def eval_(
        task: str = typer.Argument(..., help=" | ".join(TASK_CHOICES)),
        model: str = typer.Option(None, help="A transformer: minilm, mpnet, a local directory or a HF id."),
        vectors: str = typer.Option(None, help="Static vectors: a file or a packaged name (glove-6b-50d)."),
        method: str = typer.Option("static", help="With --vectors: static | average | attention."),
        layer: int = typer.Option(None, help="One layer (0 = static/embedding row; negative from the end)."),
        layers: str = typer.Option(None, help="'all' (default: every layer) or a comma list: 1,3,6."),
        split: str = typer.Option(None, help="wic: dev|test; wsd: semeval2007|...|ALL; coarsewsd: cv|test; "
                                             "scws: sample; similarity: dataset names, comma-separated."),
        data_dir: Path = typer.Option(None, help="Data folder [CONTEXTLENS_DATA or ~/.cache/contextlens/data]."),
        features: str = typer.Option("cosines", help="wic logistic regression: cosines | full."),
        semcor_limit: int = typer.Option(None, help="wsd: learn senses from the first N SemCor sentences only."),
        restrict: int = typer.Option(300000, help="similarity/analogy with static vectors: first N words (gensim)."),
        template: str = typer.Option("{word}", help="similarity/analogy with a model: the word's context."),
        no_cache: bool = typer.Option(False, "--no-cache", help="Encode again; write nothing to the cache."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        """Evaluate a model or vectors on TASK (or all tasks whose data is present)."""
        from ..bench.runner import evaluate, evaluate_all

        check_choice("task", task, TASK_CHOICES)
        layer_list = None if layers in (None, "all") else [int(x) for x in layers.split(",") if x.strip()]
        options = {"features": features, "semcor_limit": semcor_limit, "restrict": restrict, "template": template}
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=console, transient=True, disable=as_json) as bar:
            handles: dict = {}

            def progress(*args):
                stage, done, total = args if len(args) == 3 else ("encoding", *args)
                if stage not in handles:
                    handles[stage] = bar.add_task(stage, total=total)
                bar.update(handles[stage], completed=done, total=total)

            if task == "all":
                out = evaluate_all(model=model, vectors=vectors, method=method, data_dir=data_dir,
                                   use_cache=not no_cache, progress=progress, **options)
            else:
                out = evaluate(task, model=model, vectors=vectors, method=method, layer=layer,
                               layers=layer_list, split=split, data_dir=data_dir, use_cache=not no_cache,
                               progress=progress, **options)
        if as_json:
            print_json(out)
            return
        console.print(_results_table(out))
        if out.get("references"):
            console.print(_references_table(out["references"]))
        for s in out.get("skipped", []):
            console.print(f"[yellow]skipped[/] {s['task']}: {s['reason']}", highlight=False)
