"""Build a usage index: stream the corpus, find the targets, encode them, store them.

The corpus is read by the one corpus pass (:func:`contextlens.passes.run.corpus_pass`)
as a stream of sentences cut into *chunks* of ``chunk_size`` sentences. For each chunk,
whatever the engine: plan it (find the target usages,
:func:`contextlens.passes.encoding.plan_chunk`), encode the sentences that have some with
the runner (:class:`~contextlens.passes.encoding.LocalEncoder`, or
:class:`contextlens.passes.ray_engine.RayEncoder` on Ray Data), append the usages to the
``usages`` table, *then* commit a checkpoint ``(chunk, sentences done)`` to the ``progress``
table. Memory holds one chunk at a time, so peak RSS does not grow with the corpus.

Crash safety: a build killed at any point and run again rolls back the usages of chunks
after the last checkpoint (written but not committed), skips the sentences already done
(reading them without encoding) and goes on; the corpus stream is deterministic, so it
ends with exactly the usages of a clean build. Each Lance write is atomic, and readers
see committed versions only, so they can search while a build appends.

Several machines: ``shard="I/N"`` builds only the documents of shard ``I`` of ``N`` (by a
hash of the document's name: :func:`.shards.shard_of`), so N builds, anywhere, make N
indexes that :func:`contextlens.index.search_usages` searches as one (``db=[A, B, ...]``).
On Ray, a chunk whose encoding fails because a node was lost is encoded again
(:class:`contextlens.passes.ray_engine.RayEncoder`): nothing of it was written yet.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..corpus.reading import ReadStats, resolve_source
from ..corpus.targets import LAYOUTS, MATCHES, WordMatcher, count_words, iter_corpus_sentences
from ..errors import InputError, check_choice, check_int
from ..files import check_outputs, output_dir
from ..passes.encoding import make_index_encoder, plan_chunk
from ..passes.run import ENGINES, ChunkDone, corpus_pass, make_runner
from .reader import UsageReader
from .shards import parse_shard, shard_of
from .store import DTYPES, UsageStore, is_uri, side_setting

__all__ = ["build_index", "BuildResult"]

log = logging.getLogger(__name__)
#: ``progress(sentences_done, usages_done)`` after each committed chunk
BuildProgress = Callable[[int, int], None]


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
    search: dict[str, Any] = field(default_factory=dict)  # the side index: kind, bytes, bytes per usage
    nodes: dict[str, int] = field(default_factory=dict)  # Ray: usages encoded per node id (this run)

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def build_index(
    corpus, db, words: Iterable[str] | None = None, *, all_words: bool = False, min_count: int = 5,
    model: str = "minilm", layers=None, match: str = "lower", dtype: str = "float16", layout: str = "lines",
    batch_size: int = 32, chunk_size: int | None = None, engine: str = "local", address: str | None = None,
    concurrency: int = 1, wordnet=None, progress: BuildProgress | None = None, encoder=None,
    model_engine: str | None = None, precision: str | None = None, compress: bool | None = None,
    shard: str | tuple[int, int] | None = None,
) -> BuildResult:
    """Build (or resume) the usage index of ``words`` in ``corpus`` into the folder ``db``.

    ``words`` or ``all_words=True`` (every alphabetic word seen ``min_count`` times,
    lower-cased). ``layers``: layer numbers to store (0 = embedding row; default: the
    last layer). ``engine="ray"`` encodes on Ray Data (see :mod:`contextlens.passes.ray_engine`),
    at ``address`` (None: a local cluster) with ``concurrency`` encoder actors.
    ``encoder``: an already built ``(encoder, layers)`` pair from :func:`make_index_encoder`.
    ``model_engine`` (``torch``, ``onnx``, ``auto``) and ``precision`` (``fp32``, ``bf16``)
    run the model (:class:`~contextlens.encoders.transformer.TransformerEncoder`); bf16 is
    recorded in the index (its vectors differ), the engine is not (fp32 engines agree within 1e-5).

    ``db``: a folder, or a LanceDB URI (``s3://bucket/usages``...; see :mod:`.store`).
    ``compress``: the side index kind (:mod:`.side_index`): True compressed, False full,
    None (default) compressed from ``COMPRESS_MIN_ROWS`` usages x layers (a resumed build
    keeps the index's choice). ``shard``: ``"I/N"`` (or ``(I, N)``) builds only the
    documents of shard I of N (:func:`.shards.shard_of`); with ``all_words`` the words are
    counted over the whole corpus, so that every shard has the same words.
    """
    check_choice("match", match, MATCHES)
    check_choice("dtype", dtype, DTYPES)
    check_choice("layout", layout, LAYOUTS)
    check_choice("engine", engine, ENGINES)
    check_int("min_count", min_count, low=1)
    check_int("batch_size", batch_size, low=1, high=4096)
    part = parse_shard(shard) if shard is not None else None
    if chunk_size is not None:
        check_int("chunk_size", chunk_size, low=1, high=1 << 20, hint="sentences per checkpoint")
    if (words is None) == (not all_words):
        raise InputError("give either target words (--words / --words-file) or all_words=True (--all-words)")
    started = time.perf_counter()
    src = resolve_source(corpus)  # a missing path fails before any model is loaded
    given = [corpus] if isinstance(corpus, str | os.PathLike) else list(corpus) if src.paths else []
    if not is_uri(db):  # a URI is LanceDB's to check (credentials, bucket)
        check_outputs([("db", db)], [("corpus", p) for p in [*given, *src.paths]], files_of=lambda *_: ())
        output_dir(db)  # so does a --db that is a file, or a folder that cannot be written
    if all_words:
        words = count_words(iter_corpus_sentences(corpus, layout=layout), min_count=min_count)
        log.info("--all-words: %d words seen at least %d times", len(words), min_count)
    matcher = WordMatcher(words, match=match, wordnet=wordnet)
    enc, stored = encoder if encoder is not None else make_index_encoder(
        model, layers, batch_size, engine=model_engine, precision=precision)
    params = {"model": enc.name, "model_path": enc.params()["path"], "layers": stored,
              "dim": enc.dim, "dtype": dtype, "match": match, "layout": layout,
              "words": list(matcher.words), "pooling": enc.params()["pooling"],
              **{k: enc.params()[k] for k in ("precision",) if k in enc.params()},
              "shard": f"{part[0]}/{part[1]}" if part else None, "side_index": side_setting(compress)}
    db = str(db) if is_uri(db) else Path(db)
    store = UsageStore.open_or_create(db, params)
    point = store.checkpoint()
    stats = ReadStats()
    if point["done"]:
        log.info("%s: the build is already complete", db)
        return _result(store, stats, point["sentences_done"], point["sentences_done"], started, True)
    store.rollback(point["chunk"])
    stream = iter_corpus_sentences(corpus, layout=layout, stats=stats)
    if part is not None:
        stream = (s for s in stream if shard_of(s.doc, part[1]) == part[0])
    writer = _Writer(store, store.count())
    runner = make_runner(engine, enc, stored, address=address, concurrency=concurrency, batch_size=batch_size)
    end = corpus_pass(stream, lambda sentences, _: plan_chunk(sentences, matcher), runner, writer,
                      done=point["sentences_done"], chunk=point["chunk"], chunk_size=chunk_size,
                      progress=progress)
    if part is not None and not end.done:
        log.warning("shard %d/%d holds no sentence of this corpus (its documents hash to other shards)",
                    *part)
    store.finish(end.chunk, end.done)
    return _result(store, stats, end.done, point["sentences_done"], started, False, end.nodes)


class _Writer:
    """The build's ``on_chunk``: appends a chunk's usages, *then* commits its checkpoint
    (a crash in between is rolled back by the next run); returns the usages so far."""

    def __init__(self, store: UsageStore, usages: int):
        self.store, self.usages = store, usages

    def __call__(self, chunk: ChunkDone) -> int:
        self.store.append(chunk.number, chunk.encoded)
        self.usages += len(chunk.encoded.rows)
        self.store.commit(chunk.number, chunk.done, self.usages)
        return self.usages


def _result(store: UsageStore, stats: ReadStats, sentences: int, resumed_at: int, started: float,
            complete: bool, nodes: dict[str, int] | None = None) -> BuildResult:
    reader = UsageReader.of(store)
    reader.refresh()
    counts = reader.word_counts()
    missing = [w for w in store.params["words"] if w not in counts]
    if missing:
        shown = ", ".join(missing[:20]) + (f" (+{len(missing) - 20} more)" if len(missing) > 20 else "")
        log.warning("%d target word(s) never found in the corpus: %s", len(missing), shown)
    return BuildResult(str(store.path), sentences, sum(counts.values()), counts, missing, stats.n_skipped,
                       list(stats.skipped[:100]), resumed_at, complete, reader.has_ann_index(),
                       time.perf_counter() - started, {k: v for k, v in store.params.items() if k != "words"},
                       reader.search_structure(), dict(nodes or {}))

