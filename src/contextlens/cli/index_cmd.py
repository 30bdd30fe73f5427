"""``contextlens index build | search | senses | stats``: the corpus-scale usage index."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.progress import Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..errors import InputError
from ._common import console, err_console, fmt, handle_errors, print_json

index_app = typer.Typer(help="Index every usage of some words in a corpus; search it by meaning.",
                        no_args_is_help=True)


def _csv_ints(value: str | None, name: str) -> list[int] | None:
    if value is None:
        return None
    try:
        return [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{name} must be comma-separated layer numbers (e.g. 4,6), got {value!r}") from None


def _words(words: str | None, words_file: Path | None, all_words: bool) -> list[str] | None:
    from ..index.extract import read_word_list

    given = sum(x is not None and x is not False for x in (words, words_file, all_words or None))
    if given != 1:
        raise InputError("give exactly one of --words bank,spring, --words-file FILE or --all-words")
    if words is not None:
        return [w.strip() for w in words.split(",") if w.strip()]
    if words_file is not None:
        return read_word_list(words_file)
    return None


def _k(value: str) -> int | str:
    if value == "auto":
        return "auto"
    try:
        return int(value)
    except ValueError:
        raise InputError(f"--k must be 'auto' or a number of senses, got {value!r}") from None


@index_app.command("build")
@handle_errors
def build(
    corpus: list[Path] = typer.Argument(..., help="Text files, .gz files or directories."),
    db: Path = typer.Option(..., "--db", help="The index folder (created; a re-run resumes it)."),
    words: str = typer.Option(None, "--words", help="Target words, comma-separated: bank,spring."),
    words_file: Path = typer.Option(None, "--words-file", help="A file of target words, one per line."),
    all_words: bool = typer.Option(False, "--all-words", help="Index every word seen --min-count times."),
    min_count: int = typer.Option(5, "--min-count", help="With --all-words: the fewest occurrences."),
    model: str = typer.Option("minilm", help="A packaged model (minilm, mpnet, smollm2) or a local directory."),
    layers: str = typer.Option(None, help="Layers to store, comma-separated (0 = embedding row; default: last)."),
    match: str = typer.Option("lower", help="exact | lower | lemma (WordNet base forms; needs CONTEXTLENS_DATA)."),
    dtype: str = typer.Option("float16", help="float16 | float32: how vectors are stored."),
    layout: str = typer.Option("lines", help="lines (one sentence per line) | text (free text, split here)."),
    engine: str = typer.Option("local", help="local | ray (Ray Data)."),
    address: str = typer.Option(None, help="With --engine ray: auto (the running cluster) or ray://HOST:10001."),
    concurrency: int = typer.Option(1, help="With --engine ray: encoder actors (one model each)."),
    batch_size: int = typer.Option(32, "--batch-size", help="Sentences per forward pass (length-sorted)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Build (or resume) a usage index of CORPUS into --db."""
    from ..index.build import build_index

    targets = _words(words, words_file, all_words)
    wn = None
    if match == "lemma":
        from ..bench.datasets.registry import resolve_data_dir
        from ..bench.datasets.wordnet import wordnet

        wn = wordnet(resolve_data_dir())
    start = time.perf_counter()
    with Progress(
        TextColumn("[bold]indexing"), TextColumn("{task.completed:,} sentences"),
        TextColumn("{task.fields[rate]:,.0f} sentences/s"), TextColumn("{task.fields[usages]:,} usages"),
        TimeElapsedColumn(), console=err_console, transient=True, disable=as_json or not err_console.is_terminal,
    ) as bar:
        task = bar.add_task("index", total=None, rate=0.0, usages=0)

        def progress(done: int, found: int) -> None:
            bar.update(task, completed=done, usages=found, rate=done / max(time.perf_counter() - start, 1e-9))

        result = build_index(
            [str(c) for c in corpus], db, targets, all_words=all_words, min_count=min_count, model=model,
            layers=_csv_ints(layers, "--layers"), match=match, dtype=dtype, layout=layout, batch_size=batch_size,
            engine=engine, address=address, concurrency=concurrency, wordnet=wn, progress=progress,
        )
    out = result.as_dict()
    if as_json:
        print_json(out)
        return
    state = "already complete" if result.already_complete else (
        f"resumed at sentence {result.resumed_at:,}" if result.resumed_at else "built")
    console.print(f"[green]{db}[/]: {result.usages:,} usages of {len(result.words)} words from "
                  f"{result.sentences:,} sentences ({state}, {result.seconds:.1f} s)")
    if result.missing_words:
        console.print(f"[yellow]not found in the corpus[/]: {', '.join(result.missing_words)}")
    if result.n_skipped_lines:
        first = ", ".join(f"{f}:{n}" for f, n in result.skipped_lines[:5])
        console.print(f"[yellow]skipped {result.n_skipped_lines} line(s) that are not UTF-8[/] ({first})")


def _results_table(out: dict, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for col, just in (("#", "right"), ("similarity", "right"), ("sentence", "left"), ("doc", "left"),
                      ("usage id", "left")):
        t.add_column(col, justify=just)
    for i, r in enumerate(out["results"], 1):
        t.add_row(str(i), fmt(r["similarity"]), r["sentence"], f"{Path(r['doc']).name}:{r['sentence_no']}",
                  r["usage_id"])
    return t


@index_app.command("search")
@handle_errors
def search(
    sentence: str = typer.Argument(None, help="The query sentence (not with --like-usage)."),
    db: Path = typer.Option(..., "--db", help="The index folder."),
    word: str = typer.Option(None, "--word", help="The target word in the sentence."),
    k: int = typer.Option(10, "-k", help="How many usages."),
    layer: int = typer.Option(None, help="The stored layer to compare (default: the deepest)."),
    like_usage: str = typer.Option(None, "--like-usage", help="Search from a stored usage id instead."),
    queries: Path = typer.Option(None, "--queries", help="A file of searches, one 'word<TAB>sentence' per line "
                                 "(the index and model are loaded once)."),
    model: str = typer.Option(None, help="The model you expect the index to use (checked)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """The usages in the index nearest the WORD in SENTENCE (or nearest --like-usage ID, or
    for each line of --queries FILE)."""
    from ..index.search import like_usage as like
    from ..index.search import read_queries, search_queries, search_usages

    if queries is not None:
        if sentence is not None or word is not None or like_usage is not None:
            raise InputError("give either --queries FILE or a SENTENCE with --word (or --like-usage ID), not both")
        found = search_queries(db, read_queries(queries), k=k, layer=layer, model=model)
        if as_json:
            print_json({"searches": found})
            return
        for out in found:
            console.print(_results_table(out, f"line {out['line']}: usages of {out['word']!r} nearest "
                                              f"{out['query']['sentence']!r} ({out['model']}, layer {out['layer']})"))
        return
    if like_usage is not None:
        out = like(db, like_usage, k=k, layer=layer, model=model)
    else:
        if sentence is None or word is None:
            raise InputError('give a SENTENCE and --word (e.g. "We sat on the bank." --word bank), or --like-usage ID')
        out = search_usages(db, sentence, word, k=k, layer=layer, model=model)
    if as_json:
        print_json(out)
    else:
        console.print(_results_table(out, f"usages of {out['word']!r} nearest {out['query']['sentence']!r} "
                                          f"({out['model']}, layer {out['layer']})"))


@index_app.command("senses")
@handle_errors
def senses(
    word: str = typer.Argument(..., help="A target word of the index."),
    db: Path = typer.Option(..., "--db", help="The index folder."),
    k: str = typer.Option("auto", "--k", help="auto (best silhouette) or a number of senses."),
    layer: int = typer.Option(None, help="The stored layer to cluster (default: the deepest)."),
    max_usages: int = typer.Option(2000, help="Cluster at most this many usages (a fixed sample)."),
    wordnet: bool = typer.Option(False, "--wordnet", help="Match each sense to WordNet senses (SemCor sense "
                                 "embeddings of the index's model; needs WordNet and SemCor in the data folder)."),
    data_dir: Path = typer.Option(None, "--data-dir", help="With --wordnet: the data directory (default: "
                                  "$CONTEXTLENS_DATA, else ~/.cache/contextlens/data)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Induce WORD's senses from its usages in the index."""
    from rich.markup import escape

    from ..index.senses import induce_senses

    with Progress(TextColumn("[bold]reading SemCor"), TextColumn("{task.completed:,} sentences"),
                  TimeElapsedColumn(), console=err_console, transient=True,
                  disable=as_json or not wordnet or not err_console.is_terminal) as bar:
        task = bar.add_task("semcor", total=None)
        out = induce_senses(db, word, k=_k(k), layer=layer, max_usages=max_usages, wordnet=wordnet,
                            data_dir=data_dir, progress=lambda done: bar.update(task, completed=done))
    if as_json:
        print_json(out)
        return
    sil = "n/a" if out["silhouette"] is None else fmt(out["silhouette"])
    console.print(f"{out['word']!r}: {out['n_usages']:,} usages (of {out['n_total']:,}), layer {out['layer']}, "
                  f"k = {out['k']} ({out['k_chosen_by']}), silhouette {sil}")
    for s in out["senses"]:
        words = ", ".join(w["word"] for w in s["context_words"]) or "-"
        console.print(f"\n[bold]sense {s['id']}[/] ({s['size']} usages, {s['share']:.0%}): {words}")
        for t in s["typical"]:
            console.print(f"  {fmt(t['similarity'])}  {t['sentence']}", highlight=False)
        for i, w in enumerate(s.get("wordnet", [])):
            label = "WordNet" if i == 0 else "       "
            console.print(f"  {label} {fmt(w['similarity'])}  [cyan]{w['key']}[/] {w['synset']}: "
                          f"{escape(w['gloss'])} [dim]({w['semcor_count']} in SemCor)[/]", highlight=False)
    if out.get("wordnet_unseen"):
        console.print(f"\n[dim]WordNet senses of {out['wordnet_lemma']!r} never tagged in SemCor, so not matched "
                      f"(glosses in --json): {', '.join(u['synset'] for u in out['wordnet_unseen'])}[/]",
                      highlight=False)


@index_app.command("stats")
@handle_errors
def stats(
    db: Path = typer.Option(..., "--db", help="The index folder."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object."),
) -> None:
    """Words, usages, model, layers and size on disk of an index."""
    from ..index.stats import index_stats

    out = index_stats(db)
    if as_json:
        print_json(out)
        return
    state = "complete" if out["complete"] else f"incomplete ({out['sentences_done']:,} sentences done)"
    console.print(f"{out['db']}: {out['usages']:,} usages of {len(out['words'])} words; model {out['model']}, "
                  f"layers {', '.join(map(str, out['layers']))}, {out['dtype']}; "
                  f"{out['size_bytes'] / 2**20:.1f} MiB on disk; {state}; "
                  f"{'approximate (IVF, float16)' if out['ann_index'] else 'exact'} search")
    t = Table(title="usages per word", title_justify="left")
    t.add_column("word")
    t.add_column("usages", justify="right")
    for w, n in list(out["words"].items())[:30]:
        t.add_row(w, f"{n:,}")
    console.print(t)
    if out["missing_words"]:
        console.print(f"[yellow]never found[/]: {', '.join(out['missing_words'])}")


def register(app: typer.Typer) -> None:
    """Add the ``index`` command group to ``app``."""
    app.add_typer(index_app, name="index")
