"""``contextlens probe TASK`` and ``contextlens cka``: what each layer encodes, and how alike layers are.

``probe`` fits a probe per layer over SemCor (part of speech, supersense, word sense) with
a control task (:mod:`contextlens.analysis.probing`); ``cka`` compares every layer of one
model, or of two, over the same word usages (:mod:`contextlens.analysis.cka`). Each parses
options, calls one library function and prints a table or one JSON object (``--json``), and
writes a figure (``--plot``: :func:`~contextlens.plots.probe_lines`,
:func:`~contextlens.plots.cka_heatmap`) and its view (``--html``:
:func:`~contextlens.views.probes_view`, :func:`~contextlens.views.cka_view`).
"""

from pathlib import Path

import typer

from . import options as o
from ._common import add_command, handle_errors, out, say, spinner, table
from .present import present

PROBE_TASKS_HELP = "pos | supersense | sense"  # analysis.probing.PROBE_TASKS
PROBE_KINDS_HELP = "linear | mlp"  # analysis.probing.PROBE_KINDS
DEFAULT_SAMPLE = 500  # analysis.cka.DEFAULT_SENTENCES
TRAIN_WORDS, TEST_WORDS = 30_000, 10_000  # analysis.probing.TRAIN_ROWS, TEST_ROWS

VECTORS = o.reads(o.option(None, "--vectors", metavar="FILE|NAME", help="A static table (its one layer, 0) "
                           "instead of --model: a vectors file or a packaged name (glove-6b-50d)."))
RANDOM_WEIGHTS = o.flag("--random-weights",
                        help="With --model: the same architecture with every weight re-drawn (seeded by "
                        "--seed): what the architecture alone gives.")
NO_CACHE = o.flag("--no-cache", help="Encode again; write nothing to the cache.")


def _encoder(model, vectors, engine, precision, random_weights: bool, seed: int):
    """The task encoder (every layer, no attention) the options describe."""
    from ..errors import InputError
    from ..evaluation.runner import make_task_encoder

    o.check_source(model, vectors, None)
    running = o.check_engine(model, engine, precision)
    if random_weights and model is None:
        raise InputError("--random-weights re-draws a model's weights; "
                         "give --model (a static table has none)")
    with spinner(f"loading {model or vectors}..."):
        return make_task_encoder(model, vectors, "static", **running,
                                 random_weights=seed if random_weights else None)


@handle_errors
def probe(
    task: str = typer.Argument(..., metavar="TASK", help=PROBE_TASKS_HELP),
    model: str = o.MODEL, vectors: str = VECTORS, engine: str = o.ENGINE, precision: str = o.PRECISION,
    random_weights: bool = RANDOM_WEIGHTS,
    kind: str = o.option("linear", "--probe", metavar="KIND", help=f"The probe: {PROBE_KINDS_HELP} (logistic "
                         "regression, or one hidden layer of 256 units)."),
    seed: int = o.bounded(o.option(0, "--seed", metavar="N",
                                   help="Seed of the control task's labels, the MLP "
                                   "and --random-weights."), 0, 2**32 - 1),
    train_words: int = o.bounded(o.option(TRAIN_WORDS, "--train-words", metavar="N",
                                          help="How many of brown1's tagged words to train on (the "
                                          "first N)."), 1, 10**6),
    test_words: int = o.bounded(o.option(TEST_WORDS, "--test-words", metavar="N",
                                         help="How many of brown2's tagged words to test on (the "
                                         "first N)."), 1, 10**6),
    data_dir: Path = o.DATA_DIR, no_cache: bool = NO_CACHE, as_json: bool = o.JSON, plot: Path = o.PLOT,
    html: Path = o.HTML,
) -> None:
    """Probe every layer for TASK over SemCor, with a control task (Hewitt & Liang 2019).

    pos: the part of speech of SemCor's tagged words; supersense: the WordNet lexicographer
    file of their sense; sense: the sense of polysemous lemmas (mean over lemmas). Train on
    the first 30,000 words of brown1, test on the first 10,000 of brown2 (--train-words,
    --test-words; every layer of every word is held, within a bound). Selectivity =
    accuracy - control accuracy; the expected layer is Tenney et al.'s (2019).
    """
    from ..analysis.probing import PROBE_KINDS, PROBE_TASKS
    from ..analysis.probing import probe as run_probe
    from ..errors import check_choice

    check_choice("probe task", task, PROBE_TASKS)
    check_choice("probe", kind, PROBE_KINDS)
    o.check_html(html)
    o.check_plot(plot)
    encoder = _encoder(model, vectors, engine, precision, random_weights, seed)
    r = run_probe(encoder, task, data_dir=data_dir, kind=kind, seed=seed, train_rows=train_words,
                  test_rows=test_words, use_cache=not no_cache)
    if present(r, as_json, plot=plot, figure=lambda plots: plots.probe_lines(r.as_dict()), html=html,
               view=lambda views: views.probes_view(r)):
        return
    out().print(table(f"{task} probe ({kind}) — {r.model}: {r.labels} labels"
                      + (f", {r.lemmas} lemmas" if r.lemmas is not None else ""),
                      ["layer", "accuracy", "control", "selectivity", "train", "test", "missing"],
                      [(x.layer, x.accuracy, x.control_accuracy, x.selectivity, x.n_train, x.n_test,
                        x.missing)
                       for x in r.rows], left=0))
    where = "–" if r.expected_layer is None else f"{r.expected_layer:.2f}"
    say(f"expected layer (Tenney et al. 2019): {where}")


@handle_errors
def cka(
    model: list[str] = o.option([], "--model", "-m", metavar="NAME", help="A model; give --model twice to "
                                "compare the layers of two models (minilm, mpnet, smollm2, a directory...)."),
    sentences: Path = o.SENTENCES,
    sample: int = o.bounded(o.option(DEFAULT_SAMPLE, "--sample", metavar="N", help="Without --sentences: how "
                                     "many sentences of the shared corpora (Brown, ABC, movie reviews) to "
                                     "draw, seeded by --seed."), 2, 10**6),
    seed: int = o.bounded(o.option(0, "--seed", metavar="N", help="Seed of the corpus sample and of "
                                   "--random-weights."), 0, 2**32 - 1),
    debiased: bool = o.flag("--debiased", help="The debiased CKA estimator (Nguyen et al. 2021), for few "
                            "usages."),
    engine: str = o.ENGINE, precision: str = o.PRECISION, random_weights: bool = RANDOM_WEIGHTS,
    data_dir: Path = o.DATA_DIR, no_cache: bool = NO_CACHE, as_json: bool = o.JSON, plot: Path = o.PLOT,
    html: Path = o.HTML,
) -> None:
    """Linear CKA (Kornblith et al. 2019) between every pair of layers of one model, or
    between the layers of two models, over the same word usages.

    The usages are every token of the sentences (--sentences FILE: one sentence per line,
    tokens separated by spaces; by default a seeded sample of the shared corpora).
    """
    from ..analysis.cka import corpus_sample, layer_cka
    from ..analysis.usages import read_sentences
    from ..datasets import resolve_data_dir
    from ..errors import InputError

    if len(model) not in (1, 2):
        raise InputError(f"give --model once (its layers against each other) or twice (two models), got "
                         f"{len(model)}")
    o.check_html(html)
    o.check_plot(plot)
    if sentences is not None:
        texts, source = read_sentences(sentences), str(sentences)
    else:
        root = resolve_data_dir(data_dir)
        texts = corpus_sample(root, sample, seed=seed)
        source = f"{sample} sentences of the shared corpora (Brown, ABC, movie reviews; seed {seed})"
    encoders = [_encoder(m, None, engine, precision, random_weights, seed) for m in model]
    r = layer_cka(encoders[0], texts, other=encoders[1] if len(encoders) == 2 else None, debiased=debiased,
                  use_cache=not no_cache, source=source)
    a, b = r.models
    title = f"linear CKA: {a} × {b}, {r.n_words} usages"
    if present(r, as_json, plot=plot, figure=lambda plots: plots.cka_heatmap(r.as_dict(), title=title),
               html=html, view=lambda views: views.cka_view(r)):
        return
    out().print(table(f"{'debiased ' if r.debiased else ''}linear CKA: layers of {a} (rows) × {b} (columns), "
                      f"{r.n_words} usages in {r.n_sentences} sentences",
                      [a if a == b else f"{a} \\ {b}", *(str(k) for k in r.layers[1])],
                      [(k, *row) for k, row in zip(r.layers[0], r.matrix)], left=1))


def register(app: typer.Typer) -> None:
    """Add ``probe`` and ``cka`` to ``app``."""
    add_command(app, probe)
    add_command(app, cka)
