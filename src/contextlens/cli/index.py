"""``contextlens index build | search | senses | stats``: the corpus-scale usage index."""

import time
from pathlib import Path

import typer

from ..bounds import MAX_BATCH, MAX_CLUSTERED
from ..errors import InputError
from . import options as o
from ._common import (
    add_command,
    fmt,
    group,
    handle_errors,
    out,
    print_json,
    say,
    table,
    work_bar,
)
from .present import say_wordnet, say_wordnet_unseen

DB = o.reads(o.option(..., "--db", metavar="DIR", help="The index folder."))
DBS = o.reads(o.option(..., "--db", metavar="DIR",
                       help="The index folder (or LanceDB URI); repeat it to search several indexes of the "
                       "same model, layers and words as one (e.g. the shards of a corpus)."))
STORED_LAYER = o.layer_option(None, help="The stored layer number to use (default: the deepest).")


def _words(words: str | None, words_file: Path | None, all_words: bool) -> list[str] | None:
    from ..corpus.targets import read_word_list

    given = sum(x is not None and x is not False for x in (words, words_file, all_words or None))
    if given != 1:
        raise InputError("give exactly one of --words bank,spring, --words-file FILE or --all-words")
    if words is not None:
        return o.parse_words("--words", words)
    if words_file is not None:
        return read_word_list(words_file)
    return None


@handle_errors
def build(
    corpus: list[Path] = o.reads(typer.Argument(..., metavar="CORPUS...", help="Text files, .gz files or "
                                                "directories."), corpus=True),
    db: str = o.writes(o.option(..., "--db", metavar="DIR",
                                help="The index folder (created; a re-run resumes it), or a LanceDB URI: "
                                "s3://bucket/path, gs://..., file:///...")),
    words: str = o.option(None, "--words", metavar="WORD,...",
                          help="Target words, comma-separated: bank,spring."),
    words_file: Path = o.reads(o.option(None, "--words-file", metavar="FILE",
                                        help="A file of target words, one per line.")),
    all_words: bool = o.flag("--all-words", help="Index every word seen --min-count times."),
    min_count: int = o.bounded(o.option(5, "--min-count", metavar="N", help="With --all-words: the fewest "
                                        "occurrences."), 1, 10**9),
    model: str = o.reads(o.option("minilm", "--model", "-m", metavar="NAME",
                                  help="A packaged model (minilm, mpnet, smollm2) or a local directory.")),
    layers: str = o.option(None, "--layers", metavar="N,...",
                           help="Layer numbers to store, comma-separated (0 = the embedding row; default: "
                           "the last)."),
    match: str = o.option("lower", "--match", metavar="KIND",
                          help="exact | lower | lemma (WordNet base forms; needs CONTEXTLENS_DATA)."),
    dtype: str = o.option("float16", "--dtype", metavar="TYPE",
                          help="float16 | float32: how vectors are stored."),
    layout: str = o.option("lines", "--layout", metavar="KIND",
                           help="lines (one sentence per line) | text (free text, split here)."),
    engine: str = o.RUN_ENGINE, model_engine: str = o.MODEL_ENGINE, precision: str = o.PRECISION,
    address: str = o.ADDRESS, concurrency: int = o.CONCURRENCY,
    batch_size: int = o.bounded(o.option(32, "--batch-size", metavar="N", help="Sentences per forward pass "
                                         "(length-sorted)."), 1, MAX_BATCH),
    compress: bool = o.flag("--compress/--no-compress", default=None,
                            help="A compressed search index (product quantisation, re-ranked from the stored "
                            "vectors: ~140 bytes per usage instead of ~1,900). Default: compressed from "
                            "1,000,000 usages x stored layers."),
    shard: str = o.option(None, "--shard", metavar="I/N",
                          help="Index only the documents of shard I (from 0) of N (by a hash of each file's "
                          "name); search the N indexes as one with repeated --db."),
    as_json: bool = o.JSON,
) -> None:
    """Build (or resume) a usage index of CORPUS into --db."""
    from rich.progress import TextColumn, TimeElapsedColumn

    from ..index.build import build_index
    from ..index.store import is_uri

    targets = _words(words, words_file, all_words)
    stored = o.parse_ints("--layers", layers)
    if not is_uri(db):  # a URI (object storage) is LanceDB's to check
        o.check_output(Path(db), folder=True)
    wn = None
    if match == "lemma":
        from ..datasets.registry import resolve_data_dir
        from ..datasets.wordnet import wordnet

        wn = wordnet(resolve_data_dir())
    start = time.perf_counter()
    with work_bar(
        TextColumn("[bold]indexing"), TextColumn("{task.completed:,} sentences"),
        TextColumn("{task.fields[rate]:,.0f} sentences/s"), TextColumn("{task.fields[usages]:,} usages"),
        TimeElapsedColumn(),
    ) as bar:
        task = bar.add_task("indexing", total=None, rate=0.0, usages=0, unit="sentences")

        def progress(done: int, found: int) -> None:
            bar.update(task, completed=done, usages=found, rate=done / max(time.perf_counter() - start, 1e-9))

        result = build_index(
            [str(c) for c in corpus], db, targets, all_words=all_words, min_count=min_count, model=model,
            layers=stored, match=match, dtype=dtype, layout=layout, batch_size=batch_size,
            engine=engine, address=address, concurrency=concurrency, wordnet=wn, progress=progress,
            model_engine=model_engine, precision=precision, compress=compress, shard=shard,
        )
    if as_json:
        print_json(result.as_dict())
        return
    state = "already complete" if result.already_complete else (
        f"resumed at sentence {result.resumed_at:,}" if result.resumed_at else "built")
    say(f"{db}: {result.usages:,} usages of {len(result.words)} words from {result.sentences:,} sentences "
        f"({state}, {result.seconds:.1f} s){_shard_said(result.params.get('shard'))}; "
        f"{_search_said(result.search)}")
    if result.nodes:
        say("usages encoded per Ray node: " + ", ".join(f"{n[:8]} {c:,}" for n, c in result.nodes.items()))
    if result.missing_words:
        say(f"not found in the corpus: {', '.join(result.missing_words)}")
    if result.n_skipped_lines:
        first = ", ".join(f"{f}:{n}" for f, n in result.skipped_lines[:5])
        say(f"skipped {result.n_skipped_lines} line(s) that are not UTF-8 ({first})")


@handle_errors
def search(
    sentence: str = typer.Argument(None, metavar="TEXT", help="The query sentence (not with --like-usage)."),
    db: list[str] = DBS, word: str = o.option(None, "--word", "-w", metavar="WORD",
                                              help="The target word in the sentence."),
    k: int = o.top_k(10, "How many usages."), layer: int = STORED_LAYER,
    like_usage: str = o.option(None, "--like-usage", metavar="ID",
                               help="Search from a stored usage id instead."),
    queries: Path = o.reads(o.option(None, "--queries", metavar="FILE", help="A file of searches, one "
                                     "'word<TAB>sentence' per line (the index and model are loaded once).")),
    model: str = o.option(None, "--model", "-m", metavar="NAME", help="The model you expect the index to use "
                          "(checked)."),
    engine: str = o.ENGINE,
    as_json: bool = o.JSON,
) -> None:
    """The usages in the index nearest the WORD in SENTENCE (or nearest --like-usage ID, or
    for each line of --queries FILE)."""
    from ..index.search import like_usage as like
    from ..index.search import read_queries, search_queries, search_usages

    if queries is not None:
        if sentence is not None or word is not None or like_usage is not None:
            raise InputError("give either --queries FILE or a SENTENCE with --word (or --like-usage ID), not "
                             "both")
        found = search_queries(db, read_queries(queries), k=k, layer=layer, model=model, engine=engine)
        if as_json:
            print_json({"searches": found})
            return
        for result in found:
            _print_results(result, f"line {result['line']}: ")
        return
    if like_usage is not None:
        result = like(db, like_usage, k=k, layer=layer, model=model)
    else:
        if sentence is None or word is None:
            raise InputError('give a SENTENCE and --word (e.g. "We sat on the bank." --word bank), or '
                             '--like-usage ID')
        result = search_usages(db, sentence, word, k=k, layer=layer, model=model, engine=engine)
    if as_json:
        print_json(result)
        return
    _print_results(result)


def _print_results(result: dict, prefix: str = "") -> None:
    out().print(table(f"{prefix}usages of {result['word']!r} nearest {result['query']['sentence']!r} "
                      f"({result['model']}, layer {result['layer']})",
                      ["rank", "similarity", "sentence", "doc", "usage id"],
                      [(i, r["similarity"], r["sentence"], f"{Path(r['doc']).name}:{r['sentence_no']}",
                        r["usage_id"])
                       for i, r in enumerate(result["results"], 1)], left="rrlll"))


@handle_errors
def senses(
    word: str = typer.Argument(..., metavar="WORD", help="A target word of the index."),
    db: Path = DB, k: str = o.k_senses(), layer: int = STORED_LAYER,
    max_usages: int = o.bounded(o.option(2000, "--max-usages", metavar="N",
                                         help="Cluster at most this many usages (a fixed sample); every "
                                         "other usage joins the nearest sense."),
                                2, MAX_CLUSTERED,
                                hint="the usages clustered; the others join the nearest sense"),
    wordnet: bool = o.flag("--wordnet",
                           help="Match each sense to WordNet senses (LMMS sense embeddings of the "
                           "index's model: SemCor propagated through WordNet, and glosses; needs WordNet and "
                           "SemCor in the data folder)."),
    data_dir: Path = o.DATA_DIR, as_json: bool = o.JSON,
) -> None:
    """Induce WORD's senses from its usages in the index (--json lists every sense's members)."""
    from ..index.senses import induce_senses

    n_senses = o.parse_k(k)  # the SemCor pass of --wordnet shows as a progress step of the library
    result = induce_senses(db, word, k=n_senses, layer=layer, max_usages=max_usages, wordnet=wordnet,
                           data_dir=data_dir)
    if as_json:
        print_json(result)
        return
    sample = ("all clustered" if result["n_clustered"] == result["n_usages"] else
              f"a sample of {result['n_clustered']:,} clustered, the others joined the nearest sense")
    say(f"{result['word']!r}: {result['n_usages']:,} usages ({sample}), layer {result['layer']}, "
        f"k = {result['k']} ({result['k_chosen_by']}), silhouette {fmt(result['silhouette'])}")
    for s in result["senses"]:
        words = ", ".join(w["word"] for w in s["context_words"]) or "-"
        say(f"\nsense {s['id']} ({s['size']:,} usages, {s['share']:.0%}): {words}")
        for t in s["typical"]:
            say(f"  {fmt(t['similarity'])}  {t['sentence']}")
        say_wordnet(s.get("wordnet", []))
    say_wordnet_unseen(result)
    say("\nEvery sense's members (usage id, document, sentence): --json")


def _search_said(search: dict) -> str:
    """How an index is searched, in words.

    >>> _search_said({"kind": "compressed", "bytes": 1_020_000, "bytes_per_usage": 102.0})
    'compressed search index (102 bytes per usage)'
    >>> _search_said({"kind": "exact", "bytes": None, "bytes_per_usage": None})
    'searched exactly (no search index yet)'
    """
    if not search or search.get("bytes") is None:
        return "searched exactly (no search index yet)"
    per = search["bytes_per_usage"]
    return (f"{search['kind']} search index ({per:,.0f} bytes per usage)" if per
            else f"{search['kind']} search index")


def _shard_said(shard) -> str:
    if not shard:
        return ""
    return f", shard {shard}" if isinstance(shard, str) else f", shards {', '.join(shard)}"


@handle_errors
def stats(db: list[str] = DBS, as_json: bool = o.JSON) -> None:
    """Words, usages, model, layers, size on disk and search index of an index (or of several
    searched as one: repeat --db)."""
    from ..index.stats import index_stats

    result = index_stats(db)
    if as_json:
        print_json(result)
        return
    state = "complete" if result["complete"] else f"incomplete ({result['sentences_done']:,} sentences done)"
    say(f"{result['db']}: {result['usages']:,} usages of {len(result['words'])} words; model "
        f"{result['model']}, layers {', '.join(map(str, result['layers']))}, {result['dtype']}; "
        f"{result['size_bytes'] / 2**20:.1f} MiB on disk ({result['bytes_per_usage'] or 0:,.0f} bytes per "
        f"usage); {state}{_shard_said(result['shard'])}; {_search_said(result['search'])}, "
        f"{'approximate' if result['ann_index'] else 'exact'}")
    out().print(table("usages per word", ["word", "usages"],
                      [(w, f"{n:,}") for w, n in list(result["words"].items())[:30]]))
    if result["missing_words"]:
        say(f"never found: {', '.join(result['missing_words'])}")


def register(app: typer.Typer) -> None:
    """Add the ``index`` command group to ``app``."""
    index_app = group("Index every usage of some words in a corpus; search it by meaning.")
    for name, fn in (("build", build), ("search", search), ("senses", senses), ("stats", stats)):
        add_command(index_app, fn, name)
    app.add_typer(index_app, name="index")
