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
    ) -> None:
        """Run the walkthrough: the worked 'bank' example, then five ambiguous words."""
        from ..walkthrough import run

        with console.status("computing the walkthrough..."):
            r = run(out, vectors=vectors)
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
        console.print(f"[green]report:[/] {r['report']}")
