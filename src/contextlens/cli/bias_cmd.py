"""``contextlens bias list`` and ``contextlens bias weat``: association tests, with the
published figures beside ours."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import typer
from rich.table import Table

from ..bias import CASES, DEFAULT_PERMUTATIONS, SOURCE, TESTS, BiasResult, WordSets, sets_for, weat_table
from ..encoders.registry import resolve_vectors
from ._common import console, handle_errors, print_json
from .static_cmds import VECTORS_HELP

bias_app = typer.Typer(help="Bias audits: WEAT (Caliskan et al. 2017) on static vectors.",
                       no_args_is_help=True)

# Options of this group, declared once (to move to cli/options.py with the others).
JSON = typer.Option(False, "--json", help="Print one JSON object.")
TEST = typer.Argument(None, help="A test of `contextlens bias list` (career_family or weat6), or 'all'.")
SETS = typer.Option(None, "--sets", help='Your own sets: a JSON file {"X": [...], "Y": [...], "A": [...], '
                    '"B": [...]} (optional "name").')
VECTORS = typer.Option("glove-6b-50d", help=VECTORS_HELP)
CASE = typer.Option("auto", help=f"{' | '.join(CASES)}: auto takes a word as written, else lower-cased "
                    "(GloVe 6B is lower-cased).")
PERMUTATIONS = typer.Option(DEFAULT_PERMUTATIONS, help="Partitions for the p-value: all of them when there "
                            "are no more, else this many random ones.")
SEED = typer.Option(0, help="Seed of the sampled partitions.")
DDOF = typer.Option(1, help="Standard deviation of the effect size: 1 = sample (Caliskan), 0 = population (WEFE).")


def _p(p: float | None) -> str:
    return "" if p is None else f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def _published(sets: WordSets) -> dict | None:
    """The paper's figures when ``sets`` is one of its tests, word for word."""
    t = TESTS.get(sets.name)
    return {"test": t.name, **asdict(t.published)} if t is not None and t.sets == sets else None


def _rows_table(rows: list[BiasResult], published: list[dict | None]) -> Table:
    t = Table(title=f"WEAT on {rows[0].model} (one-sided p; published: Caliskan et al. 2017, GloVe 840B)",
              title_justify="left")
    for col in ("test", "d", "p", "p from", "n X/Y/A/B", "missing", "published d", "published p"):
        t.add_column(col, justify="left" if col in ("test", "p from") else "right")
    for r, pub in zip(rows, published):
        how = f"{'all' if r.exact else 'sampled'} {r.permutations:,}"
        t.add_row(r.test, f"{r.effect_size:.3f}", _p(r.p_value), how, f"{r.n_x}/{r.n_y}/{r.n_a}/{r.n_b}",
                  str(r.missing_count), "" if pub is None else f"{pub['d']:.2f}", "" if pub is None else _p(pub["p"]))
    return t


def register(app: typer.Typer) -> None:
    app.add_typer(bias_app, name="bias")


@bias_app.command("list")
@handle_errors
def list_tests(as_json: bool = JSON) -> None:
    """Caliskan et al.'s ten WEAT tests and their published GloVe-840B results."""
    tests = list(TESTS.values())
    if as_json:
        print_json({"source": SOURCE, "tests": [
            {"name": t.name, "alias": t.alias, "labels": dict(zip("XYAB", t.labels)), "sets": t.sets.as_dict(),
             "published": asdict(t.published)} for t in tests]})
        return
    table = Table(title="WEAT tests (Caliskan et al. 2017; d and p on GloVe 840B)", title_justify="left")
    for col in ("name", "alias", "targets X vs Y", "attributes A vs B", "words", "d", "p"):
        table.add_column(col, justify="right" if col in ("words", "d", "p") else "left")
    for t in tests:
        x, y, a, b = t.labels
        table.add_row(t.name, t.alias, f"{x} vs {y}", f"{a} vs {b}", "/".join(map(str, t.sets.sizes)),
                      f"{t.published.d:.2f}", _p(t.published.p))
    console.print(table)


@bias_app.command("weat")
@handle_errors
def weat(
    test: str = TEST, sets: Path = SETS, vectors: str = VECTORS, case: str = CASE,
    permutations: int = PERMUTATIONS, seed: int = SEED, ddof: int = DDOF, as_json: bool = JSON,
) -> None:
    """WEAT effect size and permutation p-value of TEST (or --sets FILE) on static vectors."""
    chosen = sets_for(test, sets)
    table = resolve_vectors(vectors)
    rows = [weat_table(table, s, case=case, ddof=ddof, permutations=permutations, seed=seed) for s in chosen]
    published = [_published(s) for s in chosen]
    if as_json:
        print_json({"rows": [r.as_dict() for r in rows], "published": [p for p in published if p],
                    "source": SOURCE})
        return
    console.print(_rows_table(rows, published))
    for r in rows:
        for key, words in r.missing.as_dict().items():
            if words:
                console.print(f"[yellow]missing[/] from {r.model}, {r.test} {key}: {', '.join(words)}",
                              highlight=False)
