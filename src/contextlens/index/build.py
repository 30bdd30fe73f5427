"""Build a usage index: stream the corpus, find the targets, encode them, store them.

The corpus is read as a stream of sentences cut into *chunks* of ``chunk_size``
sentences. For each chunk: find the target usages (:mod:`.extract`), encode the
sentences that have some (the encoder sorts them by length into batches and keeps only
the target words), append the usages to the ``usages`` table, *then* commit a
checkpoint ``(chunk, sentences done)`` to the ``progress`` table. Memory holds one
chunk at a time, so peak RSS does not grow with the corpus.

Crash safety: a build killed at any point and run again rolls back the usages of chunks
after the last checkpoint (written but not committed), skips the sentences already done
(reading them without encoding) and goes on; the corpus stream is deterministic, so it
ends with exactly the usages of a clean build. Each Lance write is atomic, and readers
see committed versions only, so they can search while a build appends.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..corpus import ReadStats, resolve_source
from ..errors import InputError, check_choice, check_int
from ..files import output_dir
from .extract import LAYOUTS, MATCHES, Sentence, WordMatcher, count_words, find_usages, iter_corpus_sentences
from .store import DTYPES, PROGRESS, IndexMismatchError, UsageStore, open_progress_rows, open_store

__all__ = ["build_index", "BuildResult", "plan_chunk", "encode_planned", "ENGINES", "make_index_encoder"]

log = logging.getLogger(__name__)
ENGINES = ("local", "ray")
CHUNK_SENTENCES = 2048  # sentences per checkpoint (local engine)
#: ``progress(sentences_done, usages_done)`` after each committed chunk
BuildProgress = Callable[[int, int], None]
_CHECKED = ("model", "layers", "dim", "dtype", "match", "layout", "words")


@dataclass
class BuildResult:
    """What a build did. ``missing_words``: targets never found in the corpus (reported,
    not fatal); ``skipped_lines``: ``(file, line)`` of lines skipped as not UTF-8."""

    db: str
    sentences: int
    usages: int
    words: dict[str, int]
    missing_words: list[str]
    n_skipped_lines: int
    skipped_lines: list[tuple[str, int]] = field(default_factory=list)
    resumed_at: int = 0
    already_complete: bool = False
    ann_index: bool = False
    seconds: float = 0.0
    params: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def make_index_encoder(model: str, layers, batch_size: int = 32, threads: int | None = None):
    """The encoder an index uses: a transformer with attention off (faster, lighter)."""
    from ..encoders.transformer import TransformerEncoder

    stored = _stored_layers(layers)
    contextual = [k for k in stored if k != 0] if stored else None
    chosen = contextual if contextual else ([] if stored else -1)  # default: the last layer only
    enc = TransformerEncoder(model, layers=chosen, attention=False, batch_size=batch_size, threads=threads)
    return enc, (stored or [enc.layer_ids[-1]])


def _stored_layers(layers) -> list[int] | None:
    if layers is None:
        return None
    items = [layers] if isinstance(layers, int) else list(layers)
    if not items or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in items):
        raise InputError(f"layers must be non-negative layer numbers (0 = embedding row), got {layers!r}")
    return sorted(set(items))


def plan_chunk(sentences: Iterable[Sentence], matcher: WordMatcher) -> list[dict[str, Any]]:
    """The sentences of a chunk that hold targets, each with its usages (cheap: no model)."""
    items = []
    for s in sentences:
        usages = find_usages(s, matcher)
        if usages:
            items.append({"doc": s.doc, "number": s.number, "text": s.text, "usages": usages})
    return items


def encode_planned(encoder, items: list[dict[str, Any]], layers: list[int]) -> dict[str, Any]:
    """Encode planned sentences and return the usages as columns; vectors as
    ``{layer: (n_usages, dim) float32}``. A usage the tokenizer gives no piece is dropped."""
    cols: dict[str, list] = {k: [] for k in ("usage_id", "word", "form", "doc", "sentence_no", "start", "end",
                                             "sentence")}
    vecs: dict[int, list[np.ndarray]] = {k: [] for k in layers}
    if items:
        spans = [[(u.start, u.end) for u in it["usages"]] for it in items]
        encodings = encoder.encode([it["text"] for it in items], targets=spans)
        pos = {k: encoder.layer_position(k) for k in layers}
        for it, enc in zip(items, encodings):
            where = {(w.start, w.end): j for j, w in enumerate(enc.words)}
            for u in it["usages"]:
                j = where.get((u.start, u.end))
                if j is None:
                    log.warning("%s, sentence %d: %r got no piece from the tokenizer; not indexed",
                                it["doc"], it["number"], u.form)
                    continue
                for name, value in (("usage_id", u.usage_id), ("word", u.word), ("form", u.form),
                                    ("doc", it["doc"]), ("sentence_no", it["number"]), ("start", u.start),
                                    ("end", u.end), ("sentence", it["text"])):
                    cols[name].append(value)
                for k in layers:
                    vecs[k].append(enc.layers[pos[k], j])
    dim = encoder.dim
    cols["vectors"] = {k: (np.stack(v).astype(np.float32) if v else np.zeros((0, dim), np.float32))
                       for k, v in vecs.items()}
    return cols


def _chunks(stream: Iterator[Sentence], size: int) -> Iterator[list[Sentence]]:
    while True:
        chunk = list(itertools.islice(stream, size))
        if not chunk:
            return
        yield chunk


def _open_or_create(db: Path, params: dict[str, Any]) -> UsageStore:
    if db.exists() and any(db.iterdir()) and not _only_empty_progress(db):
        store = open_store(db)  # a foreign or damaged folder raises here, untouched
        differ = [k for k in _CHECKED if store.params.get(k) != params.get(k)]
        if differ:
            said = [f"{k} {store.params.get(k)!r} (this build: {params.get(k)!r})" for k in differ if k != "words"]
            if "words" in differ:
                said.append(f"the words {_listed(store.params.get('words') or [])} (this build: "
                            f"{_listed(params['words'])})")
            raise IndexMismatchError(f"{db} holds an index built with {'; '.join(said)}: an index keeps one "
                                     "setting of each, so build into a new --db folder (or give these settings "
                                     "again to resume or check it)")
        return store
    return UsageStore.create(db, params)


def _listed(words: list[str], n: int = 6) -> str:
    """``words`` named briefly for a message.

    >>> _listed(["bank", "spring", "river"]), _listed(list("abcdefgh"), 3)
    ('bank, spring, river (3)', 'a, b, c... (8)')
    """
    return ", ".join(words[:n]) + ("..." if len(words) > n else "") + f" ({len(words)})"


def _only_empty_progress(db: Path) -> bool:
    """Whether ``db`` holds only what a creation killed half-way leaves (an empty progress table)."""
    return [p.name for p in db.iterdir()] == [f"{PROGRESS}.lance"] and open_progress_rows(db) == 0


def _rows(store: UsageStore, cols: dict[str, Any], chunk: int):
    n = len(cols["usage_id"])
    data = {k: v for k, v in cols.items() if k != "vectors"}
    data["chunk"] = [chunk] * n
    for k, x in cols["vectors"].items():
        data[f"v{k}"] = x
    return store.rows_to_arrow(data)


def build_index(
    corpus, db, words: Iterable[str] | None = None, *, all_words: bool = False, min_count: int = 5,
    model: str = "minilm", layers=None, match: str = "lower", dtype: str = "float16", layout: str = "lines",
    batch_size: int = 32, chunk_size: int | None = None, engine: str = "local", address: str | None = None,
    concurrency: int = 1, wordnet=None, progress: BuildProgress | None = None, encoder=None,
) -> BuildResult:
    """Build (or resume) the usage index of ``words`` in ``corpus`` into the folder ``db``.

    ``words`` or ``all_words=True`` (every alphabetic word seen ``min_count`` times,
    lower-cased). ``layers``: layer numbers to store (0 = embedding row; default: the
    last layer). ``engine="ray"`` encodes on Ray Data (see :mod:`contextlens.scale.ray_engine`),
    at ``address`` (None: a local cluster) with ``concurrency`` encoder actors.
    ``encoder``: an already built ``(encoder, layers)`` pair from :func:`make_index_encoder`.
    """
    check_choice("match", match, MATCHES)
    check_choice("dtype", dtype, DTYPES)
    check_choice("layout", layout, LAYOUTS)
    check_choice("engine", engine, ENGINES)
    check_int("min_count", min_count, low=1)
    check_int("batch_size", batch_size, low=1, high=4096)
    if chunk_size is not None:
        check_int("chunk_size", chunk_size, low=1, high=1 << 20, hint="sentences per checkpoint")
    if (words is None) == (not all_words):
        raise InputError("give either target words (--words / --words-file) or all_words=True (--all-words)")
    started = time.perf_counter()
    resolve_source(corpus)  # a missing path fails before any model is loaded
    output_dir(db)  # so does a --db that is a file, or a folder that cannot be written
    if all_words:
        words = count_words(iter_corpus_sentences(corpus, layout=layout), min_count=min_count)
        log.info("--all-words: %d words seen at least %d times", len(words), min_count)
    matcher = WordMatcher(words, match=match, wordnet=wordnet)
    enc, stored = encoder if encoder is not None else make_index_encoder(model, layers, batch_size)
    params = {"model": enc.name, "model_path": enc.params()["path"], "layers": stored,
              "dim": enc.dim, "dtype": dtype, "match": match, "layout": layout,
              "words": list(matcher.words), "pooling": enc.params()["pooling"]}
    db = Path(db)
    store = _open_or_create(db, params)
    point = store.checkpoint()
    stats = ReadStats()
    if point["done"]:
        log.info("%s: the build is already complete", db)
        return _result(store, stats, point["sentences_done"], point["sentences_done"], started, True)
    store.rollback(point["chunk"])
    stream = iter_corpus_sentences(corpus, layout=layout, stats=stats)
    done, chunk_no = point["sentences_done"], point["chunk"] + 1
    for _ in itertools.islice(stream, done):  # already indexed: read, not encoded
        pass
    usages = store.count()
    if engine == "ray":
        from ..scale.ray_engine import RayEncoder

        runner = RayEncoder(params, address=address, concurrency=concurrency, batch_size=batch_size)
        encode = runner.encode
        size = chunk_size or runner.chunk_size
    else:
        def encode(items):
            return encode_planned(enc, items, stored)
        size = chunk_size or CHUNK_SENTENCES
    try:
        for chunk in _chunks(stream, size):
            cols = encode(plan_chunk(chunk, matcher))
            store.append(_rows(store, cols, chunk_no))
            done += len(chunk)
            usages += len(cols["usage_id"])
            store.commit(chunk_no, done, usages)  # after the usages: a crash before it is rolled back
            chunk_no += 1
            if progress is not None:
                progress(done, usages)
    finally:
        if engine == "ray":
            runner.close()
    store.finish(chunk_no - 1, done)
    return _result(store, stats, done, point["sentences_done"], started, False)


def _result(store: UsageStore, stats: ReadStats, sentences: int, resumed_at: int, started: float,
            complete: bool) -> BuildResult:
    store.refresh()
    counts = store.word_counts()
    missing = [w for w in store.params["words"] if w not in counts]
    if missing:
        shown = ", ".join(missing[:20]) + (f" (+{len(missing) - 20} more)" if len(missing) > 20 else "")
        log.warning("%d target word(s) never found in the corpus: %s", len(missing), shown)
    return BuildResult(str(store.path), sentences, sum(counts.values()), counts, missing, stats.n_skipped,
                       list(stats.skipped[:100]), resumed_at, complete, store.has_ann_index(),
                       time.perf_counter() - started, {k: v for k, v in store.params.items() if k != "words"})

