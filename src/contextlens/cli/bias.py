"""``contextlens bias list``, ``bias weat``, ``bias seat`` and ``bias ceat``: association tests
on static tables, an encoder's layer-0 rows, sentence vectors and sampled contexts, with the
published figures beside ours."""

from dataclasses import asdict
from pathlib import Path

import typer

from ..errors import InputError
from . import options as o
from ._common import add_command, group, handle_errors, out, print_json, say, spinner, table

CEAT_SOURCE = ("Guo & Caliskan (2021), Detecting Emergent Intersectional Biases: Contextualized Word "
               "Embeddings Contain a Distribution of Human-like Biases, AIES")
DDOF_HELP = "Standard deviation of the effect size: 1 = sample (Caliskan), 0 = population (WEFE)."
TEST = typer.Argument(None, metavar="TEST",
                      help="A test of `contextlens bias list` (career_family or weat6), or 'all'.")
SETS = o.reads(o.option(None, "--sets", metavar="FILE",
                        help='Your own sets: a JSON file {"X": [...], "Y": [...], "A": [...], "B": [...]} '
                        '(optional "name").'))
CASE = o.option("auto", "--case", metavar="auto|exact|lower", help="auto takes a word as written, else "
                "lower-cased (GloVe 6B is lower-cased).")
# the default is bias.stats.default_permutations (not imported here: the CLI starts without numpy)
PERMUTATIONS = o.bounded(o.option(None, "--permutations", metavar="N", help="Partitions for the p-value: all "
                                  "of them when there are no more, else this many random ones (default "
                                  "100,000; fewer for very large sets, as the output states)."), 1, 10**8)
DDOF = o.bounded(o.option(1, "--ddof", metavar="0|1", help=DDOF_HELP), 0, 1)
WEAT_VECTORS = o.reads(o.option(None, "--vectors", metavar="FILE|NAME", help="A static table: a vectors file "
                                "(.npz, word2vec text/binary, GloVe text) or a packaged name (default "
                                "glove-6b-50d)."))
WEAT_MODEL = o.reads(o.option(None, "--model", "-m", metavar="NAME",
                              help="An encoder's layer-0 rows instead of --vectors (minilm, mpnet, smollm2, "
                              "a model folder)."))
SEAT_MODEL = o.reads(o.option("minilm", "--model", "-m", metavar="NAME", help="A transformer: minilm, mpnet, "
                              "smollm2, a model folder or a Hugging Face id."))
DB = o.reads(o.option(None, "--db", metavar="DIR",
                      help="A usage index (`contextlens index build`) of --model to take the contexts from; "
                      "without it, sentences of --corpus are encoded."))
CORPUS = o.reads(o.option(None, "--corpus", metavar="PATH",
                          help="Without --db: a corpus file or folder, one sentence per line (default: the "
                          "data folder's corpora: Brown, ABC, movie reviews)."),
                 corpus=True)
PER_WORD = o.bounded(o.option(None, "--per-word", metavar="N",
                              help="Without --db: at most N sentences per word, "
                              "a seeded sample (default 20)."), 1, 100_000)
LIMIT = o.bounded(o.option(None, "--limit", metavar="N",
                           help="With --db: at most N usages per word (the first)."),
                  1, 10**8)
# the default is bias.ceat.default_samples (Guo & Caliskan's N unless the sets are very large)
SAMPLES = o.bounded(o.option(None, "--samples", metavar="N", help="CEAT draws of one context per word "
                             "(default Guo & Caliskan's 10,000; fewer for very large sets, as the output "
                             "states)."), 2, 10**7)


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
            {"name": t.name, "alias": t.alias, "labels": dict(zip("XYAB", t.labels)),
             "sets": t.sets.as_dict(), "published": asdict(t.published)} for t in tests]})
        return
    out().print(table("WEAT tests (Caliskan et al. 2017; d and p on GloVe 840B)",
                      ["name", "alias", "targets X vs Y", "attributes A vs B", "words", "d", "p"],
                      [(t.name, t.alias, f"{t.labels[0]} vs {t.labels[1]}", f"{t.labels[2]} vs {t.labels[3]}",
                        "/".join(map(str, t.sets.sizes)), f"{t.published.d:.2f}", _p(t.published.p))
                       for t in tests], left=4))


def _missing_lines(rows) -> None:
    for r in rows:
        for key, words in r.missing.as_dict().items():
            if words:
                say(f"missing from {r.model}{'' if r.layer is None else f' layer {r.layer}'}, {r.test} "
                    f"{key}: {', '.join(words)}")


def _plot(rows, plot: Path | None, title: str) -> None:
    if plot:
        from .. import plots

        plots.save_figure(plots.effect_sizes(rows, title=title), plot)


@handle_errors
def weat(
    test: str = TEST, sets: Path = SETS, vectors: str = WEAT_VECTORS, model: str = WEAT_MODEL,
    case: str = CASE,
    permutations: int = PERMUTATIONS, seed: int = o.SEED, ddof: int = DDOF, as_json: bool = o.JSON,
    plot: Path = o.PLOT,
) -> None:
    """WEAT effect size and permutation p-value of TEST (or --sets FILE) on static vectors, or on
    a model's layer-0 rows (--model)."""
    from ..bias import SOURCE, sets_for, weat_encoder, weat_table

    o.check_source(model, vectors, None)
    if model is not None and case != "auto":
        raise InputError(f"--case {case} looks words up in a table (--vectors); --model {model} reads each "
                         "word through its own tokenizer: drop --case")
    o.check_plot(plot)
    chosen = sets_for(test, sets)
    if model is not None:
        encoder = o.EncoderChoice(model=model).encoder()
        rows = [weat_encoder(encoder, s, ddof=ddof, permutations=permutations, seed=seed) for s in chosen]
    else:
        from ..encoders.registry import resolve_vectors

        vectors_table = resolve_vectors(vectors or o.DEFAULT_VECTORS)
        rows = [weat_table(vectors_table, s, case=case, ddof=ddof, permutations=permutations, seed=seed)
                for s in chosen]
    published = [_published(s) for s in chosen]
    _plot(rows, plot, f"WEAT on {rows[0].model} (layer 0)")
    if as_json:
        print_json({"rows": [r.as_dict() for r in rows], "published": [p for p in published if p],
                    "source": SOURCE})
        return
    out().print(table(
        f"WEAT on {rows[0].model} (one-sided p; published: Caliskan et al. 2017, GloVe 840B)",
        ["test", "d", "p", "p from", "n X/Y/A/B", "missing", "published d", "published p"],
        [(r.test, f"{r.effect_size:.3f}", _p(r.p_value),
          f"{'all' if r.exact else 'sampled'} {r.permutations:,}",
          f"{r.n_x}/{r.n_y}/{r.n_a}/{r.n_b}", str(r.missing_count), "" if pub is None else f"{pub['d']:.2f}",
          "" if pub is None else _p(pub["p"])) for r, pub in zip(rows, published)], left="lrrlrrrr"))
    _missing_lines(rows)


@handle_errors
def seat(
    test: str = TEST, sets: Path = SETS, model: str = SEAT_MODEL, layer: int = o.LAYER,
    permutations: int = PERMUTATIONS, seed: int = o.SEED, ddof: int = DDOF, as_json: bool = o.JSON,
    plot: Path = o.PLOT,
) -> None:
    """SEAT (May et al. 2019): WEAT on sentence vectors of "This is a[n] WORD."-style sentences,
    mean-pooled over the model's pieces at --layer (default the last, the model's own pooling)."""
    from ..bias import TEMPLATES_SOURCE, seat, sets_for

    o.check_plot(plot)
    chosen = sets_for(test, sets)
    encoder = o.EncoderChoice(model=model, layer=layer).encoder()
    rows = [seat(encoder, s, layer=layer, ddof=ddof, permutations=permutations, seed=seed) for s in chosen]
    _plot(rows, plot, f"SEAT on {rows[0].model}, layer {rows[0].layer}")
    if as_json:
        print_json({"rows": [r.as_dict() for r in rows], "source": TEMPLATES_SOURCE})
        return
    out().print(table(
        f"SEAT on {rows[0].model}, layer {rows[0].layer} (sentence vectors; one-sided p)",
        ["test", "d", "p", "p from", "sentences X/Y/A/B"],
        [(r.test, f"{r.effect_size:.3f}", _p(r.p_value),
          f"{'all' if r.exact else 'sampled'} {r.permutations:,}",
          f"{r.n_x}/{r.n_y}/{r.n_a}/{r.n_b}") for r in rows], left="lrrlr"))


@handle_errors
def ceat(
    test: str = TEST, sets: Path = SETS, model: str = SEAT_MODEL, db: Path = DB, corpus: Path = CORPUS,
    per_word: int = PER_WORD, limit: int = LIMIT, samples: int = SAMPLES, seed: int = o.SEED,
    as_json: bool = o.JSON, plot: Path = o.PLOT,
) -> None:
    """CEAT (Guo & Caliskan 2021): WEAT over --samples draws of one context per word, combined by
    a random-effects model, at every layer; contexts from a usage index (--db) or a corpus."""
    from ..bias import DEFAULT_PER_WORD, SET_KEYS, ceat_by_layer, ceat_contexts, sets_for

    o.check_plot(plot)
    chosen = sets_for(test, sets)
    words = [w for s in chosen for key in SET_KEYS for w in getattr(s, key)]
    with spinner(f"gathering contexts with {model}..."):
        contexts = ceat_contexts(words, model=model, db=db, corpus=corpus, per_word=per_word, limit=limit,
                                 seed=seed)
    rows = [r for s in chosen for r in ceat_by_layer(contexts, s, model=model, samples=samples, seed=seed)]
    _plot(rows, plot, f"CEAT on {model} ({rows[0].samples:,} samples; 95 % intervals)")
    if as_json:
        print_json({"rows": [r.as_dict() for r in rows], "source": CEAT_SOURCE,
                    "contexts": "index" if db is not None else "corpus",
                    "per_word": None if db else per_word or DEFAULT_PER_WORD})
        return
    out().print(table(
        f"CEAT on {model}: combined effect size over {rows[0].samples:,} samples (random effects; one-sided "
        "p)",
        ["test", "layer", "CES", "95 % CI", "p", "Q", "I²", "τ²", "missing"],
        [(r.test, str(r.layer), f"{r.effect_size:.2f}", f"{r.ci[0]:.2f}–{r.ci[1]:.2f}", _p(r.p_value),
          f"{r.q:.0f}", f"{r.i2:.2f}", f"{r.tau2:.3g}", str(r.missing_count)) for r in rows],
        left="llrrrrrrr"))
    _missing_lines([r for r in rows if r.layer == rows[-1].layer])


def register(app: typer.Typer) -> None:
    """Add the ``bias`` command group to ``app``."""
    bias_app = group("Bias audits: WEAT (Caliskan et al. 2017), SEAT (May et al. 2019), CEAT (Guo & Caliskan "
                     "2021).")
    add_command(bias_app, list_tests, "list")
    add_command(bias_app, weat, "weat")
    add_command(bias_app, seat, "seat")
    add_command(bias_app, ceat, "ceat")
    app.add_typer(bias_app, name="bias")
