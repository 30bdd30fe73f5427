"""``contextlens static build``, ``neighbours`` and ``analogy``."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..encoders.registry import resolve_vectors
from ..vectors import ANALOGY_METHODS
from ._common import console, fmt, handle_errors, print_json

static_app = typer.Typer(help="Build static embedding tables from a corpus.", no_args_is_help=True)

VECTORS_HELP = "A vectors file (.npz, word2vec text/binary, GloVe text) or a packaged name (glove-6b-50d)."


@static_app.command("build")
@handle_errors
def build(
    corpus: list[Path] = typer.Argument(..., help="Text files, .gz files or directories; one sentence per line."),
    method: str = typer.Option("ppmi-svd", help="counts | ppmi | ppmi-svd | word2vec | fasttext | glove"),
    out: Path = typer.Option(..., "-o", "--out", help="Output file; its suffix picks the format (.npz, .txt, .bin)."),
    window: int = typer.Option(None, help="Context window, words each side (default: 5; glove 10)."),
    dim: int = typer.Option(None, help="Vector dimension (default: ppmi-svd 300, word2vec/fasttext 100, glove 50)."),
    min_count: int = typer.Option(5, help="Drop words seen fewer times."),
    max_vocab: int = typer.Option(None, help="Keep only the most frequent words."),
    epochs: int = typer.Option(None, help="Training epochs (default: word2vec/fasttext 5, glove 25)."),
    weighting: str = typer.Option(None, help="Counting: none | harmonic (1/distance) (default: none; glove: harmonic)."),
    cds: float = typer.Option(None, help="PPMI context-distribution smoothing exponent (default: 0.75)."),
    shift: float = typer.Option(None, help="PPMI shift k (log k subtracted) (default: 1)."),
    p: float = typer.Option(None, help="SVD eigenvalue weighting: W = U·Σ^p (default: 0.5)."),
    architecture: str = typer.Option(None, help="word2vec/fasttext: skipgram | cbow."),
    lower: bool = typer.Option(False, "--lower/--keep-case", help="Lower-case the corpus."),
    skip_bad_lines: bool = typer.Option(False, help="Skip (and count) lines that are not UTF-8."),
    seed: int = typer.Option(0, help="Random seed."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build a static table from a corpus and write it to OUT."""
    from ..static.build import build_table

    start = time.perf_counter()
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed:,} sentences"),
        TimeElapsedColumn(), console=console, transient=True,
        disable=as_json or not console.is_terminal,
    ) as bar:
        task = bar.add_task(f"{method}", total=None)
        table = build_table(
            list(corpus), method, window=window, dim=dim, min_count=min_count,
            max_vocab=max_vocab, epochs=epochs, weighting=weighting, cds=cds, shift=shift, p=p,
            architecture=architecture, lower=lower, seed=seed,
            errors="skip" if skip_bad_lines else "strict",
            progress=lambda n: bar.update(task, completed=n),
        )
    table.save(out)
    summary = {"method": method, "words": len(table), "dim": table.dim, "out": str(out),
               "seconds": round(time.perf_counter() - start, 2)}
    if as_json:
        print_json(summary)
    else:
        console.print(f"[green]wrote[/] {out}: {len(table):,} words × {table.dim} dims "
                      f"({method}, {summary['seconds']} s)")


def _neighbour_table(rows: list[tuple[str, float]], title: str, score: str = "cosine") -> Table:
    t = Table(title=title, title_justify="left")
    t.add_column("#", justify="right")
    t.add_column("word")
    t.add_column(score, justify="right")
    for i, (w, s) in enumerate(rows, 1):
        t.add_row(str(i), w, fmt(s))
    return t


def register(app: typer.Typer) -> None:
    @app.command()
    @handle_errors
    def neighbours(
        word: str = typer.Argument(..., help="The word whose nearest neighbours to list."),
        vectors: str = typer.Option("glove-6b-50d", help=VECTORS_HELP),
        k: int = typer.Option(10, "-k", help="How many neighbours."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        """The nearest neighbours of WORD by cosine."""
        table = resolve_vectors(vectors)
        rows = table.most_similar(word, k=k)
        if as_json:
            print_json({"word": word, "vectors": table.name,
                        "neighbours": [{"word": w, "cosine": s} for w, s in rows]})
        else:
            console.print(_neighbour_table(rows, f"nearest to {word!r} in {table.name}"))

    @app.command()
    @handle_errors
    def analogy(
        a: str = typer.Argument(..., help="a in 'a is to b as c is to ?'"),
        b: str = typer.Argument(...),
        c: str = typer.Argument(...),
        vectors: str = typer.Option("glove-6b-50d", help=VECTORS_HELP),
        method: str = typer.Option("3cosadd", help=" | ".join(ANALOGY_METHODS)),
        k: int = typer.Option(5, "-k", help="How many answers."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
    ) -> None:
        """A is to B as C is to ...?"""
        table = resolve_vectors(vectors)
        rows = table.analogy(a, b, c, k=k, method=method)
        if as_json:
            print_json({"a": a, "b": b, "c": c, "method": method, "vectors": table.name,
                        "answers": [{"word": w, "score": s} for w, s in rows]})
        else:
            console.print(_neighbour_table(rows, f"{a} : {b} :: {c} : ? ({method}, {table.name})",
                                           score="cosine" if method == "3cosadd" else "score"))
