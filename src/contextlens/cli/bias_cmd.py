"""``contextlens bias list`` and ``contextlens bias weat``: association tests, with the
published figures beside ours."""

from dataclasses import asdict
from pathlib import Path

import typer

from . import options as o
from ._common import add_command, group, handle_errors, out, print_json, say, table

DDOF_HELP = "Standard deviation of the effect size: 1 = sample (Caliskan), 0 = population (WEFE)."
TEST = typer.Argument(None, metavar="TEST", help="A test of `contextlens bias list` (career_family or weat6), "
                      "or 'all'.")
SETS = o.option(None, "--sets", metavar="FILE", help='Your own sets: a JSON file {"X": [...], "Y": [...], '
                '"A": [...], "B": [...]} (optional "name").')
VECTORS = o.option(o.DEFAULT_VECTORS, "--vectors", metavar="FILE|NAME", help="A static table: a vectors file "
                   "(.npz, word2vec text/binary, GloVe text) or a packaged name.")
CASE = o.option("auto", "--case", metavar="auto|exact|lower", help="auto takes a word as written, else "
                "lower-cased (GloVe 6B is lower-cased).")
# the default is bias.stats.DEFAULT_PERMUTATIONS (not imported here: the CLI starts without numpy)
PERMUTATIONS = o.bounded(o.option(100_000, "--permutations", metavar="N", help="Partitions for the p-value: all "
                                  "of them when there are no more, else this many random ones."), 1, 10**8)
DDOF = o.bounded(o.option(1, "--ddof", metavar="0|1", help=DDOF_HELP), 0, 1)


def _p(p: float | None) -> str:
    return "" if p is None else f"{p:.2g}" if p < 0.001 else f"{p:.3f}"


def _published(sets) -> dict | None:
    """The paper's figures when ``sets`` is one of its tests, word for word."""
    from ..bias import TESTS

    t = TESTS.get(sets.name)
    return {"test": t.name, **asdict(t.published)} if t is not None and t.sets == sets else None


@handle_errors
def list_tests(as_json: bool = o.JSON) -> None:
    """Caliskan et al.'s ten WEAT tests and their published GloVe-840B results."""
    from ..bias import SOURCE, TESTS

    tests = list(TESTS.values())
    if as_json:
        print_json({"source": SOURCE, "tests": [
            {"name": t.name, "alias": t.alias, "labels": dict(zip("XYAB", t.labels)), "sets": t.sets.as_dict(),
             "published": asdict(t.published)} for t in tests]})
        return
    out().print(table("WEAT tests (Caliskan et al. 2017; d and p on GloVe 840B)",
                      ["name", "alias", "targets X vs Y", "attributes A vs B", "words", "d", "p"],
                      [(t.name, t.alias, f"{t.labels[0]} vs {t.labels[1]}", f"{t.labels[2]} vs {t.labels[3]}",
                        "/".join(map(str, t.sets.sizes)), f"{t.published.d:.2f}", _p(t.published.p))
                       for t in tests], left=4))


@handle_errors
def weat(
    test: str = TEST, sets: Path = SETS, vectors: str = VECTORS, case: str = CASE,
    permutations: int = PERMUTATIONS, seed: int = o.SEED, ddof: int = DDOF, as_json: bool = o.JSON,
) -> None:
    """WEAT effect size and permutation p-value of TEST (or --sets FILE) on static vectors."""
    from ..bias import SOURCE, sets_for, weat_table
    from ..encoders.registry import resolve_vectors

    chosen = sets_for(test, sets)
    vectors_table = resolve_vectors(vectors)
    rows = [weat_table(vectors_table, s, case=case, ddof=ddof, permutations=permutations, seed=seed) for s in chosen]
    published = [_published(s) for s in chosen]
    if as_json:
        print_json({"rows": [r.as_dict() for r in rows], "published": [p for p in published if p],
                    "source": SOURCE})
        return
    out().print(table(
        f"WEAT on {rows[0].model} (one-sided p; published: Caliskan et al. 2017, GloVe 840B)",
        ["test", "d", "p", "p from", "n X/Y/A/B", "missing", "published d", "published p"],
        [(r.test, f"{r.effect_size:.3f}", _p(r.p_value), f"{'all' if r.exact else 'sampled'} {r.permutations:,}",
          f"{r.n_x}/{r.n_y}/{r.n_a}/{r.n_b}", str(r.missing_count), "" if pub is None else f"{pub['d']:.2f}",
          "" if pub is None else _p(pub["p"])) for r, pub in zip(rows, published)], left="lrrlrrrr"))
    for r in rows:
        for key, words in r.missing.as_dict().items():
            if words:
                say(f"missing from {r.model}, {r.test} {key}: {', '.join(words)}")


def register(app: typer.Typer) -> None:
    """Add the ``bias`` command group to ``app``."""
    bias_app = group("Bias audits: WEAT (Caliskan et al. 2017) on static vectors.")
    add_command(bias_app, list_tests, "list")
    add_command(bias_app, weat, "weat")
    app.add_typer(bias_app, name="bias")
