r"""Search a usage index by meaning: the usages nearest a query usage.

The query is a sentence and a word in it (encoded with the index's own model and
layers), or the id of a usage already in the index. Only usages of the same target word
are searched (a filter on ``word``); similarity is the cosine. The model is loaded once
per process (:func:`query_encoder`) and the index's side index once per table version, so
a second search in the same process (:func:`search_queries`, the lab, a notebook) loads
nothing.

Several indexes of the same model, layers and words (the shards of one corpus, built with
``--shard I/N``, or indexes of several corpora) are searched as one: give ``db`` a list of
them (:class:`.shards.ShardedReader`).

A file of queries (``index search --queries FILE``) holds one search per line,
``word<TAB>sentence``; blank lines and lines starting with ``#`` are skipped:

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "q.tsv"
>>> _ = path.write_text("# word, then the sentence\nbank\tWe sat on the bank.\n\n"
...                     "bank\tThe bank lends money.\n")
>>> [(q.line, q.word, q.sentence) for q in read_queries(path)]
[(2, 'bank', 'We sat on the bank.'), (4, 'bank', 'The bank lends money.')]
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, NamedTuple

from ..bounds import MAX_K
from ..errors import EmptyInputError, FileFormatError, InputError, TargetNotFoundError, ask, check_int
from ..text import locate, tokenize
from .reader import UsageReader, open_store
from .shards import ShardedReader, open_readers
from .store import IndexMismatchError, is_uri

__all__ = ["search_usages", "like_usage", "search_queries", "read_queries", "Query", "check_model",
           "query_encoder"]

log = logging.getLogger(__name__)
_ENCODERS: dict[tuple, Any] = {}
_READERS: dict[str, UsageReader] = {}  # opened indexes by folder, most recent last
KEEP_READERS = 4


Index = str | os.PathLike | UsageReader | ShardedReader  # one index, or several searched as one (a list)


def reader_of(db: Index | list) -> UsageReader | ShardedReader:
    """``db`` itself when it is a reader; else the index at that folder (or URI), opened once
    per process (a later call refreshes it: it sees what a build added since); a list of
    several indexes: a :class:`.shards.ShardedReader` of them."""
    if isinstance(db, UsageReader | ShardedReader):
        return db
    if isinstance(db, list | tuple):
        readers = open_readers([reader_of(d) for d in db])
        return readers[0] if len(readers) == 1 else ShardedReader(readers)
    key = str(db) if is_uri(db) else os.path.realpath(db)
    reader = _READERS.pop(key, None)
    if reader is not None:
        try:
            reader.refresh()
        except Exception:  # the folder was deleted or replaced since: open it anew (or fail clearly)
            reader = None
    if reader is None:
        reader = open_store(db)
        while len(_READERS) >= KEEP_READERS:
            _READERS.pop(next(iter(_READERS)))
    _READERS[key] = reader
    return reader


def check_model(store: UsageReader | ShardedReader, model: str | None) -> None:
    """Raise :class:`IndexMismatchError` when ``model`` is not the one the index was built with."""
    if model is None:
        return
    from ..encoders.models import packaged_name

    asked = packaged_name(model) or str(model)
    built = store.params["model"]
    if asked != built and str(Path(asked).resolve()) != str(Path(built).resolve()):
        raise IndexMismatchError(
            f"{store.path} was built with model {built!r}, not {asked!r}: vectors of different models "
            f"cannot be compared; {ask('model', built)} (or build an index with {asked})"
        )


def query_encoder(store: UsageReader | ShardedReader, threads: int | None = None, engine: str | None = None):
    """The index's encoder (model, layers, precision), loaded once per process (``threads``:
    CPU threads, a process-wide setting; ``engine``: what runs the model; None: the
    library's defaults)."""
    from ..passes.encoding import make_index_encoder

    precision = store.params.get("precision")  # a bf16 index is searched in bf16
    key = (store.params["model"], tuple(store.layers), precision, engine)
    if key not in _ENCODERS:
        _ENCODERS.clear()  # keep one model in memory
        _ENCODERS[key] = make_index_encoder(store.params["model"], store.layers, threads=threads,
                                            precision=precision, engine=engine)[0]
    return _ENCODERS[key]


def _target(store: UsageReader | ShardedReader, word: str) -> str:
    target = word if store.params.get("match") == "exact" else word.lower()
    if target not in store.params["words"]:
        shown = ", ".join(store.params["words"][:15])
        more = f" (+{len(store.params['words']) - 15} more)" if len(store.params["words"]) > 15 else ""
        raise InputError(f"{word!r} is not a target word of {store.path}; its words are: {shown}{more}")
    return target


def _query_word(store: UsageReader | ShardedReader, sentence: str, word: str, occurrence: int | None):
    words = tokenize(sentence)
    try:
        return words[locate(words, word, occurrence=occurrence)]
    except TargetNotFoundError:
        if store.params.get("match") != "lemma":
            raise
    from ..corpus.targets import WordMatcher
    from ..datasets.registry import resolve_data_dir
    from ..datasets.wordnet import wordnet

    matcher = WordMatcher([word], match="lemma", wordnet=wordnet(resolve_data_dir()))
    hits = [w for w in words if matcher(w.text) is not None]
    if not hits:
        raise TargetNotFoundError(f"neither {word!r} nor an inflection of it is a word of {sentence!r}")
    return hits[occurrence or 0]


def search_usages(db: Index | list, sentence: str, word: str, *, k: int = 10,
                  layer: int | None = None, model: str | None = None, occurrence: int | None = None,
                  encoder=None, threads: int | None = None, engine: str | None = None) -> dict[str, Any]:
    """The ``k`` usages of ``word`` in the index nearest its usage in ``sentence``.

    Returns ``{query: {sentence, word, form, start, end}, word, layer, model,
    results: [{usage_id, sentence, similarity, doc, sentence_no, start, end, form, word}]}``,
    best first. ``model``: the model the caller expects (a different one raises
    :class:`IndexMismatchError`). ``encoder``: one to encode the query with (else the
    index's model is loaded once, with ``threads`` CPU threads, run by ``engine``).
    """
    store = reader_of(db)
    check_model(store, model if encoder is None else encoder.name)
    check_int("k", k, low=1, high=MAX_K, hint="how many usages to return")
    if not isinstance(sentence, str) or not sentence.strip():
        raise InputError("the query sentence is empty; give the sentence the word stands in")
    target = _target(store, word)
    col_layer = store.layers[-1] if layer is None else layer
    store.layer_column(col_layer)  # an unstored layer fails before the model loads
    w = _query_word(store, sentence, word, occurrence)
    enc = encoder or query_encoder(store, threads, engine)
    encoding = enc.encode([sentence], targets=[[(w.start, w.end)]])[0]
    if not encoding.words:
        raise TargetNotFoundError(f"{w.text!r} got no piece from {enc.name}'s tokenizer; pick another word")
    vector = encoding.vector(0, layer=col_layer)  # (dim,)
    store.refresh()
    rows = store.search(vector, word=target, k=k, layer=col_layer)
    return {"query": {"sentence": sentence, "word": target, "form": w.text, "start": w.start, "end": w.end},
            "word": target, "layer": col_layer, "model": store.params["model"], "results": rows}


def like_usage(db: Index | list, uid: str, *, k: int = 10, layer: int | None = None,
               model: str | None = None) -> dict[str, Any]:
    """The ``k`` usages of the same word nearest the stored usage ``uid`` (itself left out)."""
    store = reader_of(db)
    check_model(store, model)
    check_int("k", k, low=1, high=MAX_K, hint="how many usages to return")
    col_layer = store.layers[-1] if layer is None else layer
    store.refresh()
    row = store.get(uid, col_layer)
    rows = [r for r in store.search(row["vector"], word=row["word"], k=k + 1, layer=col_layer)
            if r["usage_id"] != uid][:k]
    query = {key: row[key] for key in ("usage_id", "sentence", "word", "form", "doc", "sentence_no", "start",
                                       "end")}
    return {"query": query, "word": row["word"], "layer": col_layer, "model": store.params["model"],
            "results": rows}


class Query(NamedTuple):
    """One search of a queries file: the target ``word`` in ``sentence`` (``line``: where)."""

    line: int
    word: str
    sentence: str


def read_queries(path: str | os.PathLike) -> list[Query]:
    """The searches of a queries file: ``word<TAB>sentence`` per line (see the module docstring)."""
    from ..corpus.reading import iter_lines
    from ..files import check_input_file

    path = Path(path)
    check_input_file(path, "queries file", "give a file of 'word<TAB>sentence' lines")
    queries = []
    for number, line in enumerate(iter_lines(path), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        word, tab, sentence = line.partition("\t")
        if not tab or not word.strip() or not sentence.strip():
            raise FileFormatError(path, number, f"expected 'word<TAB>sentence', got {line[:80]!r}")
        queries.append(Query(number, word.strip(), sentence.strip()))
    if not queries:
        raise EmptyInputError(f"{path}: no query in it; write one 'word<TAB>sentence' per line")
    return queries


def search_queries(db: Index | list, queries: list[Query], *, k: int = 10,
                   layer: int | None = None, model: str | None = None, threads: int | None = None,
                   engine: str | None = None) -> list[dict[str, Any]]:
    """:func:`search_usages` for each query, in order, with the index opened and its model
    loaded once; each result also holds the query's ``line``."""
    store = reader_of(db)
    return [{"line": q.line, **search_usages(store, q.sentence, q.word, k=k, layer=layer, model=model,
                                             threads=threads, engine=engine)} for q in queries]
