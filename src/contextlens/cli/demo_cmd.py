"""``contextlens demo``: the walkthrough, printed and written to a report."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from ._common import console, handle_errors


def register(app: typer.Typer) -> None:
    @app.command()
    @handle_errors
    def demo(
        out: Path = typer.Option(Path("out/demo"), help="Folder for the report and figures."),
        vectors: str = typer.Option("glove-6b-50d", help="Static table for the polysemy part."),
        model: str = typer.Option("minilm", help="Transformer for part 3 ('none' skips it)."),
    ) -> None:
        """Run the walkthrough: the worked 'bank' example, five ambiguous words, a transformer."""
        from ..walkthrough import run

        with console.status("computing the walkthrough..."):
            r = run(out, vectors=vectors, model=None if model == "none" else model)
        w = r["worked_example"]
        t = Table(title="1. worked example: 'bank' (16 phrases, window 3, raw counts)", title_justify="left")
        for col in ("vector of bank", "cos to money", "cos to river"):
            t.add_column(col, justify="left" if col.startswith("vector") else "right")
        t.add_row("static", f"{w['static']['money']:.3f}", f"{w['static']['river']:.3f}")
        for s, cos in w["average"].items():
            t.add_row(f"averaged in '{s}'", f"{cos['money']:.3f}", f"{cos['river']:.3f}")
        console.print(t)
        for s, weights in w["attention"].items():
            console.print(f"attention of bank in '{s}': "
                          + ", ".join(f"{k} {v:.3f}" for k, v in weights.items()))
        p = r["polysemy"]
        t = Table(title=f"2. cosine between two usages ({p['vectors']}, window 5, self excluded)",
                  title_justify="left")
        for col in ("word", "static", "average", "attention"):
            t.add_column(col, justify="left" if col == "word" else "right")
        for word, e in p["words"].items():
            m = e["methods"]
            t.add_row(word, "1.000", f"{m['average']['cosine_between_usages']:.3f}",
                      f"{m['attention']['cosine_between_usages']:.3f}")
        console.print(t)
        if "transformer" in r:
            _print_transformer(r["transformer"])
        console.print(f"[green]report:[/] {r['report']}")


def _print_transformer(r: dict) -> None:
    same = r["same_row"]
    t = Table(title=f"3. 'bank' across the layers of {r['model']} (layer 0: same token id, same row)",
              title_justify="left")
    for col in ("layer", "finance vs river", "finance vs finance"):
        t.add_column(col, justify="left" if col == "layer" else "right")
    for name, a, b in zip(same["layer_names"], same["finance_vs_river"], same["finance_vs_finance"]):
        t.add_row(name, f"{a:.3f}", f"{b:.3f}")
    console.print(t)
    t = Table(title="polysemy explorer: mean cosine between usages (top layer)", title_justify="left")
    for col in ("word", "senses", "same sense", "different senses", "spread"):
        t.add_column(col, justify="left" if col in ("word", "senses") else "right")
    for word, e in r["explorer"].items():
        t.add_row(word, ", ".join(e["senses"]), f"{e['mean_same_sense']:.3f}",
                  f"{e['mean_other_sense']:.3f}", f"{e['spread']:.3f}")
    console.print(t)
    a = r["attention"]
    console.print(f"attention of bank in {a['sentence']!r} (last layer, mean over heads): "
                  + ", ".join(f"{w} {x:.3f}" for w, x in zip(a["words"], a["last_layer_mean"])))
    s = r["senses"]
    console.print(f"sense probe, ten bank sentences: k = {s['k']}, silhouette {s['silhouette']:.3f}, "
                  f"purity {s['purity']:.3f}, ARI {s['ari']:.3f}")
