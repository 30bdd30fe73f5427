"""``contextlens static build``, ``static distill``, ``neighbours`` (static or, with ``--in``, contextual) and
``analogy``."""

import time
from pathlib import Path

import typer

from ..errors import InputError
from . import options as o
from ._common import (
    add_command,
    group,
    handle_errors,
    out,
    print_json,
    say,
    spinner,
    stage_progress,
    table,
    work_bar,
)

BUILD_METHODS_HELP = "counts | ppmi | ppmi-svd | word2vec | fasttext | glove"  # static.build.METHODS
ANALOGY_METHODS_HELP = "3cosadd | 3cosmul"  # vectors.ANALOGY_METHODS
MAX_DIM = 100_000
VECTORS = o.reads(o.option(o.DEFAULT_VECTORS, "--vectors", metavar="FILE|NAME",
                           help="A static table: a vectors file (.npz, word2vec text/binary, GloVe text) or "
                           "a packaged name."))
CORPUS = o.reads(typer.Argument(..., metavar="CORPUS...",
                                help="Text files, .gz files or directories; one sentence "
                                "per line."), corpus=True)


@handle_errors
def build(
    corpus: list[Path] = CORPUS,
    method: str = o.option("ppmi-svd", "--method", metavar="METHOD", help=BUILD_METHODS_HELP + "."),
    out_path: Path = o.writes(o.option(..., "-o", "--out", metavar="FILE",
                                       help="Output file; its suffix picks the format (.npz, .txt, .bin).")),
    window: int = o.bounded(o.option(None, "--window", metavar="N", help="Context window, words each side "
                                     "(default: 5; glove 10)."), 1, o.MAX_WINDOW),
    dim: int = o.bounded(o.option(None, "--dim", metavar="N", help="Vector dimension (default: ppmi-svd 300, "
                                  "word2vec/fasttext 100, glove 50)."), 1, MAX_DIM),
    min_count: int = o.bounded(o.option(5, "--min-count", metavar="N", help="Drop words seen fewer times."),
                               1, 10**9),
    max_vocab: int = o.bounded(o.option(None, "--max-vocab", metavar="N",
                                        help="Keep only the N most frequent words."), 1, 10**9),
    epochs: int = o.bounded(o.option(None, "--epochs", metavar="N", help="Training epochs (default: "
                                     "word2vec/fasttext 5, glove 25)."), 1, 10_000),
    weighting: str = o.option(None, "--weighting", metavar="KIND",
                              help="Counting: none | harmonic (1/distance) "
                              "(default: none; glove: harmonic)."),
    cds: float = o.bounded(o.option(None, "--cds", metavar="X",
                                    help="PPMI context-distribution smoothing exponent "
                                    "(default: 0.75)."), 0.0, 10.0, kind=float),
    shift: float = o.bounded(o.option(None, "--shift", metavar="K", help="PPMI shift k (log k subtracted) "
                                      "(default: 1)."), 1.0, 1e6, kind=float),
    p: float = o.bounded(o.option(None, "--p", metavar="X", help="SVD eigenvalue weighting: W = U·Σ^p "
                                  "(default: 0.5)."), -10.0, 10.0, kind=float),
    architecture: str = o.option(None, "--architecture", metavar="KIND",
                                 help="word2vec/fasttext: skipgram | cbow."),
    lower: bool = o.flag("--lower/--keep-case", help="Lower-case the corpus."),
    skip_bad_lines: bool = o.flag("--skip-bad-lines", help="Skip (and count) lines that are not UTF-8."),
    seed: int = o.SEED, as_json: bool = o.JSON,
) -> None:
    """Build a static table from a corpus and write it to OUT."""
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

    from ..static.build import build_table

    o.check_output(out_path)
    _check_table_suffix(out_path)
    start = time.perf_counter()
    with work_bar(
        TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed:,} sentences"),
        TimeElapsedColumn(),
    ) as bar:
        task = bar.add_task(f"building {method}", total=None, unit="sentences")
        built = build_table(
            list(corpus), method, window=window, dim=dim, min_count=min_count,
            max_vocab=max_vocab, epochs=epochs, weighting=weighting, cds=cds, shift=shift, p=p,
            architecture=architecture, lower=lower, seed=seed,
            errors="skip" if skip_bad_lines else "strict",
            progress=lambda n: bar.update(task, completed=n),
        )
    built.save(out_path)
    summary = {"method": method, "words": len(built), "dim": built.dim, "out": str(out_path),
               "seconds": round(time.perf_counter() - start, 2)}
    if as_json:
        print_json(summary)
    else:
        out().print(f"[green]wrote[/] {_escape(out_path)}: {len(built):,} words × {built.dim} dims "
                    f"({method}, {summary['seconds']} s)", highlight=False)


@handle_errors
def distill(
    corpus: list[Path] = CORPUS,
    model: str = o.reads(o.option(..., "--model", "-m", metavar="NAME",
                                  help="The encoder whose usages to pool: minilm, mpnet, smollm2, a local "
                                  "directory or a Hugging Face id.")),
    out_path: Path = o.writes(o.option(..., "-o", "--out", metavar="FILE",
                                       help="Output table (.npz); with several layers (or pools) one file "
                                       "per layer beside it, named by layer.")),
    layer: int = o.layer_option(None, help="The layer to pool (default: the last; 0 = the embedding row)."),
    layers: str = o.option(None, "--layers", metavar="all|N,N",
                           help="Several layers: 'all' or a comma list; one table each."),
    pool: str = o.option("mean", "--pool", metavar="KIND[,KIND]",
                         help="mean | median | min | max, or a comma list (median needs --max-usages)."),
    min_count: int = o.bounded(o.option(5, "--min-count", metavar="N", help="Drop words with fewer usages."),
                               1, 10**9),
    words: Path = o.reads(o.option(None, "--words", metavar="FILE", help="Only these words, one per line (# "
                                   "comments ignored).")),
    max_usages: int = o.bounded(o.option(None, "--max-usages", metavar="N",
                                         help="Pool at most N usages per word, a seeded uniform sample (the "
                                         "same on every run)."), 1, 10**9),
    engine: str = o.RUN_ENGINE, model_engine: str = o.MODEL_ENGINE, precision: str = o.PRECISION,
    address: str = o.ADDRESS, concurrency: int = o.CONCURRENCY,
    seed: int = o.SEED, as_json: bool = o.JSON,
) -> None:
    """Static vectors distilled from context: each word's usages in CORPUS encoded and pooled per layer.

    Resumable: a run stopped at any point continues from its checkpoint (OUT.distill.npz)
    when started again with the same arguments (on either engine). --engine ray encodes
    on Ray Data, for corpora too big for one machine's cores.
    """
    from rich.progress import BarColumn, TextColumn, TimeElapsedColumn

    from ..analysis.usages import read_lines
    from ..passes.distill import distill as distill_tables

    if layer is not None and layers is not None:
        raise InputError("give --layer (one layer) or --layers (several), not both")
    o.check_output(out_path)
    _check_table_suffix(out_path)
    chosen = layers if layers == "all" else o.parse_ints("--layers", layers) if layers is not None else layer
    vocabulary = read_lines(words, "words") if words is not None else None
    encoder = o.EncoderChoice(model=model, layer=layer, engine=model_engine, precision=precision).encoder()
    with work_bar(
        TextColumn("[bold]distilling"), BarColumn(),
        TextColumn("{task.completed:,} sentences, {task.fields[n]:,} usages pooled"),
        TimeElapsedColumn(),
    ) as bar:
        task = bar.add_task("distilling", total=None, n=0, unit="sentences")
        r = distill_tables(list(corpus), encoder, out_path, words=vocabulary, layers=chosen,
                           pools=o.parse_words("--pool", pool), min_count=min_count, max_usages=max_usages,
                           seed=seed, engine=engine, address=address, concurrency=concurrency,
                           progress=lambda done, n: bar.update(task, completed=done, n=n))
    summary = r.as_dict()
    if as_json:
        print_json(summary)
        return
    resumed = f", resumed at sentence {r.resumed_at:,}" if r.resumed_at else ""
    out().print(table(f"{summary['words']:,} words from {r.sentences:,} sentences ({summary['usages']:,} "
                      f"usages, {r.seconds:.1f} s{resumed})", ["layer", "pool", "words", "dim", "file"],
                      [(t["layer"], t["pool"], t["words"], t["dim"], t["path"]) for t in summary["tables"]],
                      left="rlrrl"))
    if r.missing:
        say(f"{len(r.missing)} word(s) of --words below --min-count or not found: {', '.join(r.missing[:20])}"
            f"{' ...' if len(r.missing) > 20 else ''}")


def _check_table_suffix(path: Path) -> None:
    """The writer's own check of the file name (format from the suffix), before the build:
    it refuses an unknown suffix before it looks at the (here empty) table."""
    import numpy as np

    from ..errors import EmptyInputError
    from ..vectors import EmbeddingTable
    from ..vectors_io import write_table

    try:
        write_table(EmbeddingTable([], np.zeros((0, 1))), path)
    except EmptyInputError:
        pass


def _escape(value) -> str:
    from rich.markup import escape

    return escape(str(value))


def _neighbours_table(rows: list[tuple[str, float]], title: str, score: str = "cosine"):
    return table(title, ["#", "word", score], [(i, w, s) for i, (w, s) in enumerate(rows, 1)], left="rlr")


@handle_errors
def neighbours(
    word: str = typer.Argument(..., metavar="WORD", help="The word whose nearest neighbours to list."),
    text: str = o.option(None, "--in", metavar="TEXT", help="A sentence WORD is used in: list its contextual "
                         "neighbours (the reference words nearest this usage at --layer) instead of the "
                         "table's."),
    vectors: str = o.VECTORS,
    model: str = o.MODEL, method: str = o.METHOD,
    layer: int = o.layer_option(None,
                                help="With --in: the layer (0 = the static row; default -1, the last)."),
    occurrence: str = o.OCCURRENCE,
    reference: str = o.reads(o.option(None, "--reference", metavar="FILE|NAME",
                                      help="With --in: the reference table at that layer (e.g. one `static "
                                      "distill` wrote; default: 20,000 common words each encoded alone, "
                                      "built once per model and cached).")),
    k: int = o.top_k(10, "How many neighbours."), as_json: bool = o.JSON,
    html: Path = o.HTML,
    senses: bool = o.flag("--senses",
                          help="With --in: also the WordNet senses of WORD nearest this usage, with their "
                          "glosses (LMMS sense embeddings; needs WordNet and SemCor in the data folder; the "
                          "first time per model and layer encodes SemCor, cached)."),
    keep_forms: bool = o.flag("--keep-forms",
                              help="With --in: keep WORD's own forms (banks, banking for bank) "
                              "among the neighbours; by default they are left out."),
    contrast: float = o.option(None, "--contrast", metavar="λ",
                               help="With --in: rank by what the context adds, the cosine to the usage "
                               "minus λ (0 to 1) times the cosine to WORD's own row of the reference: "
                               "for a model whose usages cling to the word (minilm: 0.5), words of this "
                               "usage's sense before the word's usual company."),
    data_dir: Path = o.DATA_DIR,
) -> None:
    """The nearest neighbours of WORD by cosine; with --in, of WORD as used in that sentence.

    --html (with --in) writes the neighbours view: the sentence with WORD marked and its
    neighbours' cosines as bars."""
    from ..encoders.registry import resolve_vectors

    if text is not None:
        o.check_html(html)
        return _contextual_neighbours(word, text, vectors, model, method, layer, occurrence, reference, k,
                                      as_json, html, senses, keep_forms, contrast or 0.0, data_dir)
    given = [f for f, v in (("--model", model), ("--method", method), ("--layer", layer),
                            ("--occurrence", occurrence), ("--reference", reference), ("--html", html),
                            ("--senses", senses or None), ("--keep-forms", keep_forms or None),
                            ("--contrast", contrast), ("--data-dir", data_dir))
             if v is not None]
    if given:
        raise InputError(f"{', '.join(given)} only apply to contextual neighbours: add --in \"a sentence "
                         f"with {word}\"")
    vecs = resolve_vectors(vectors or o.DEFAULT_VECTORS)
    rows = vecs.most_similar(word, k=k)
    if as_json:
        print_json({"word": word, "vectors": vecs.name, "neighbours": [{"word": w, "cosine": s} for w,
                                                                       s in rows]})
    else:
        out().print(_neighbours_table(rows, f"nearest to {word!r} in {vecs.name}"))


def _contextual_neighbours(word, text, vectors, model, method, layer, occurrence, reference, k, as_json,
                           html, senses, keep_forms, contrast, data_dir) -> None:
    from ..analysis.neighbours import contextual_neighbours, reference_at_layer
    from ..encoders.base import layer_number
    from ..evaluation.usage_senses import usage_senses

    layer = -1 if layer is None else layer
    encoder = o.EncoderChoice(model=model, vectors=vectors, method=method, layer=layer).encoder()
    number = layer_number(encoder.layer_ids, layer)
    ref = reference_at_layer(reference, number) if reference is not None else None
    with spinner(f"finding the neighbours of {word!r}..."):
        r = contextual_neighbours(encoder, text, word, layer=layer, k=k,
                                  occurrence=o.parse_occurrence(occurrence),
                                  reference=ref, keep_forms=keep_forms, contrast=contrast)
    if senses:
        with stage_progress() as progress:
            r["senses"] = usage_senses(encoder, text, word, layer=layer,
                                       occurrence=o.parse_occurrence(occurrence),
                                       data_dir=data_dir, progress=progress)
    if html:
        from .. import views

        views.neighbours_view(r).save_html(html)
    if as_json:
        print_json(r)
        return
    if r["contrast"]:
        title = f"nearest to this {r['word']!r} ({r['model']}, {r['layer_name']}), contrast {r['contrast']:g}"
        out().print(table(title, ["#", "word", "score", "cosine", f"cosine to {r['word']!r}"],
                          [(i, n["word"], n["score"], n["cosine"], n["own_cosine"])
                           for i, n in enumerate(r["neighbours"], 1)], left="rlrrr"))
        say(f"reference: {r['reference']} (centred cosines; score = cosine − {r['contrast']:g} × the cosine "
            f"to {r['word']!r}'s own row)")
    else:
        out().print(_neighbours_table([(n["word"], n["cosine"]) for n in r["neighbours"]],
                                      f"nearest to this {r['word']!r} ({r['model']}, {r['layer_name']})"))
        say(f"reference: {r['reference']} (centred cosine)")
    if r["forms_left_out"]:
        say(f"left out, forms of {r['word']!r}: {', '.join(r['forms_left_out'])} (--keep-forms keeps them)")
    if senses:
        found = r["senses"]
        out().print(_senses_table(found["senses"], f"WordNet senses of {found['lemma']!r} nearest this usage "
                                                     f"({found['candidates']} candidates)"))


def _senses_table(rows: list[dict], title: str):
    """Senses with their cosine and gloss."""
    return table(title, ["#", "sense", "cosine", "gloss"],
                 [(i, s["synset"], f"{s['cosine']:.3f}", s["gloss"]) for i, s in enumerate(rows, 1)],
                 left="llrl")


@handle_errors
def analogy(
    a: str = typer.Argument(..., metavar="A", help="A in 'A is to B as C is to ?'."),
    b: str = typer.Argument(..., metavar="B", help="B."),
    c: str = typer.Argument(..., metavar="C", help="C."),
    vectors: str = VECTORS,
    method: str = o.option("3cosadd", "--method", metavar="METHOD", help=ANALOGY_METHODS_HELP + "."),
    k: int = o.top_k(5, "How many answers."), as_json: bool = o.JSON,
) -> None:
    """A is to B as C is to ...?"""
    from ..encoders.registry import resolve_vectors

    vecs = resolve_vectors(vectors)
    rows = vecs.analogy(a, b, c, k=k, method=method)
    if as_json:
        print_json({"a": a, "b": b, "c": c, "method": method, "vectors": vecs.name,
                    "answers": [{"word": w, "score": s} for w, s in rows]})
    else:
        out().print(_neighbours_table(rows, f"{a} : {b} :: {c} : ? ({method}, {vecs.name})",
                                      score="cosine" if method == "3cosadd" else "score"))


def register(app: typer.Typer) -> None:
    """Add ``static build``, ``static distill``, ``neighbours`` and ``analogy`` to ``app``."""
    static_app = group("Build static embedding tables from a corpus, or distil them from a model's usages.")
    add_command(static_app, build, "build")
    add_command(static_app, distill, "distill")
    app.add_typer(static_app, name="static")
    add_command(app, neighbours)
    add_command(app, analogy)
