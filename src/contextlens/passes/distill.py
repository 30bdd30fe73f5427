"""Static vectors distilled from context: every usage of a word in a corpus, encoded and
pooled into one vector per word and layer (Bommasani, Davis & Cardie, ACL 2020).

Two passes over the corpus (read with :func:`~contextlens.corpus.targets.iter_corpus_sentences`):

1. **vocabulary** (no model): the usages of each word (the words given, matched by a
   :class:`~contextlens.corpus.targets.WordMatcher`, or every alphabetic word lower-cased
   seen ``min_count`` times); with ``max_usages``, the usages pooled for a word are the
   ``max_usages`` whose seeded hash of ``(sentence number, char span, word)`` is smallest:
   a uniform sample, the same on every run, whatever the batching, found in one pass with
   one bounded heap per word.
2. **encoding**: the one corpus pass of the usage index (:func:`~contextlens.passes.run.corpus_pass`):
   the sentences holding chosen usages, chunk by chunk, only those words kept
   (``targets=``); each usage's vector at each layer is added to its word's state.
   ``engine="ray"`` encodes each chunk on Ray Data with the usage index's runner
   (:class:`contextlens.passes.ray_engine.RayEncoder`: actors load the same model by name);
   the pooling stays here, in the driver, so the checkpoints and the tables are the same.

State, per layer: a float64 sum and a count (``mean``), running minimum and maximum
(``min``, ``max``), and for ``median`` every chosen vector (so ``median`` needs
``max_usages``): memory is layers × words × dim (× ``max_usages`` for the median), never
the number of usages. With ``out``, the state is checkpointed (one ``.npz`` written
atomically) after every chunk; a run killed at any point continues from the last
checkpoint when started again with the same arguments, and ends with the same tables. A
checkpoint that cannot be read (truncated, empty, damaged, another program's ``.npz``) is one
error naming it and how to start over; the temporary files of a checkpoint write killed
mid-way are removed by the next run (:func:`contextlens.files.remove_leftovers`).

>>> pool_state([[1.0, 4.0], [3.0, 0.0]], "mean"), pool_state([[1.0, 4.0], [3.0, 0.0]], "max")
([2.0, 2.0], [3.0, 4.0])
"""

from __future__ import annotations

import hashlib
import heapq
import json
import logging
import time
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..bounds import DISTILL_STATE_BYTES
from ..corpus.reading import ReadStats, resolve_source
from ..corpus.targets import LAYOUTS, MATCHES, Sentence, WordMatcher, find_usages, iter_corpus_sentences
from ..encoders.base import Encoder, layer_number
from ..errors import EmptyInputError, InputError, LimitError, check_choice, check_int
from ..files import atomic_output, check_input_file, check_outputs, remove_leftovers
from ..text import tokenize
from ..vectors import EmbeddingTable
from .encoding import CHUNK_SENTENCES
from .rows import PlannedSentence
from .run import ENGINES, ChunkDone, check_ray_encoder, corpus_pass, make_runner

__all__ = ["POOLS", "distill", "DistillResult", "pool_state", "sample_key", "table_paths", "MEMORY_LIMIT"]

log = logging.getLogger(__name__)
POOLS = ("mean", "median", "min", "max")
MEMORY_LIMIT = DISTILL_STATE_BYTES  # bytes of pooling state allowed before asking for fewer words / layers
#: ``progress(sentences_done, usages_pooled)`` after each chunk of the encoding pass
DistillProgress = Callable[[int, int], None]


def pool_state(vectors, pool: str) -> list[float]:
    """The pooled vector of some usages ``(usages, dim)`` by ``pool`` (a reference for the
    streaming state: mean, elementwise median, min or max)."""
    v = np.asarray(vectors, dtype=np.float64)
    return getattr(np, check_choice("pool", pool, POOLS))(v, axis=0).tolist()


def sample_key(seed: int, sentence: int, start: int, word: str) -> int:
    """The hash that orders a word's usages for ``max_usages`` (the smallest are kept).

    >>> sample_key(0, 12, 4, "bank") == sample_key(0, 12, 4, "bank") != sample_key(1, 12, 4, "bank")
    True
    """
    digest = hashlib.blake2b(f"{seed}\x1f{sentence}\x1f{start}\x1f{word}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def table_paths(out: str | Path, layers: Sequence[int], pools: Sequence[str]) -> dict[tuple[int, str], Path]:
    """Where each (layer, pool) table goes: ``out`` itself for one table, else beside it,
    named by layer (and pool when there are several).

    >>> {k: p.name for k, p in table_paths("t.npz", [3, 6], ["mean"]).items()}
    {(3, 'mean'): 't.layer3.npz', (6, 'mean'): 't.layer6.npz'}
    """
    out = Path(out)
    if len(layers) * len(pools) == 1:
        return {(layers[0], pools[0]): out}
    stem, suffix = out.name[: -len(out.suffix)] if out.suffix else out.name, out.suffix or ".npz"
    return {(k, p): out.with_name(f"{stem}.layer{k}{'.' + p if len(pools) > 1 else ''}{suffix}")
            for k in layers for p in pools}


@dataclass
class DistillResult:
    """What a distillation gave: ``tables[(layer, pool)]``, the usages pooled per word,
    the words never found (or below ``min_count``), and the files written."""

    tables: dict[tuple[int, str], EmbeddingTable]
    usages: dict[str, int]
    found: dict[str, int]
    missing: list[str]
    sentences: int
    encoded_sentences: int
    resumed_at: int = 0
    seconds: float = 0.0
    paths: dict[tuple[int, str], str] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"tables": [{"layer": k, "pool": p, "words": len(t), "dim": t.dim,
                            "path": self.paths.get((k, p))}
                           for (k, p), t in self.tables.items()],
                "words": len(self.usages), "usages": int(sum(self.usages.values())), "missing": self.missing,
                "sentences": self.sentences, "encoded_sentences": self.encoded_sentences,
                "resumed_at": self.resumed_at, "seconds": self.seconds, "params": self.params}


@dataclass
class _Vocabulary:
    """Pass 1: the words kept (most frequent first), their usage counts, the sampling
    thresholds (None: every usage) and a fingerprint of the corpus text."""

    words: list[str]
    counts: dict[str, int]
    thresholds: dict[str, int] | None
    fingerprint: str
    sentences: int
    missing: list[str]


def _alpha_lower(token: str) -> str | None:
    return token.lower() if token.isalpha() else None


def _vocabulary(sentences: Iterator[Sentence], key: Callable[[str], str | None], given: list[str] | None,
                min_count: int, max_usages: int | None, seed: int) -> _Vocabulary:
    counts: dict[str, int] = {}
    heaps: dict[str, list[int]] = {}
    digest = hashlib.blake2b(digest_size=16)
    n = 0
    for n, s in enumerate(sentences, start=1):
        digest.update(s.text.encode() + b"\n")
        for w in tokenize(s.text):
            word = key(w.text)
            if word is None:
                continue
            counts[word] = counts.get(word, 0) + 1
            if max_usages is not None:
                h = -sample_key(seed, n - 1, w.start, word)  # a max-heap of the smallest hashes
                heap = heaps.setdefault(word, [])
                if len(heap) < max_usages:
                    heapq.heappush(heap, h)
                elif h > heap[0]:
                    heapq.heapreplace(heap, h)
    kept = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    missing = [w for w in (given or []) if counts.get(w, 0) < min_count]
    thresholds = None if max_usages is None else {w: -heaps[w][0] for w in kept}
    return _Vocabulary(kept, {w: counts[w] for w in kept}, thresholds, digest.hexdigest(), n, missing)


class _State:
    """The pooling state of ``n_layers`` layers × ``words`` × ``dim`` (see the module docstring)."""

    def __init__(self, n_layers: int, n_words: int, dim: int, pools: Sequence[str], max_usages: int | None):
        self.count = np.zeros(n_words, dtype=np.int64)  # usages pooled per word
        self.sum = np.zeros((n_layers, n_words, dim), dtype=np.float64)
        self.min = np.full((n_layers, n_words, dim), np.inf, np.float32) if "min" in pools else None
        self.max = np.full((n_layers, n_words, dim), -np.inf, np.float32) if "max" in pools else None
        self.kept = (np.zeros((n_layers, n_words, max_usages, dim), dtype=np.float32)
                     if "median" in pools else None)  # every chosen vector, for the median

    @staticmethod
    def nbytes(n_layers: int, n_words: int, dim: int, pools: Sequence[str], max_usages: int | None) -> int:
        per = 8 + 4 * ("min" in pools) + 4 * ("max" in pools) + 4 * (max_usages or 0) * ("median" in pools)
        return n_layers * n_words * dim * per

    def add(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        """Pool ``vectors`` ``(layers, usages, dim)`` into the words at ``rows`` ``(usages,)``,
        in order (``ufunc.at`` is unbuffered: a word twice in a chunk adds both, in order)."""
        if not len(rows):
            return
        at = (slice(None), rows)
        if self.kept is not None:
            seen: dict[int, int] = {}
            for j, r in enumerate(rows.tolist()):
                self.kept[:, r, self.count[r] + seen.get(r, 0)] = vectors[:, j]
                seen[r] = seen.get(r, 0) + 1
        np.add.at(self.sum, at, vectors.astype(np.float64))
        if self.min is not None:
            np.minimum.at(self.min, at, vectors)
        if self.max is not None:
            np.maximum.at(self.max, at, vectors)
        np.add.at(self.count, rows, 1)

    def arrays(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k) for k in ("count", "sum", "min", "max", "kept")
                if getattr(self, k) is not None}

    def load(self, arrays) -> None:
        """The state saved in ``arrays`` (an open checkpoint); KeyError, ValueError or
        InputError when it is not a state of this shape (checked in each array's header,
        before its data is read: a damaged header may claim any size)."""
        for k, v in self.arrays().items():
            shape, dtype = _header(arrays, k)
            if shape != v.shape or dtype.kind not in "iuf":
                raise InputError(f"its {k} is {dtype} {shape}, expected {v.dtype} {v.shape}")
            v[...] = arrays[k]
        most = self.kept.shape[2] if self.kept is not None else None
        if (self.count < 0).any() or (most is not None and (self.count > most).any()):
            raise InputError("its usage counts are out of range")

    def pooled(self, layer: int, pool: str, rows: np.ndarray) -> np.ndarray:
        """``(len(rows), dim)`` pooled vectors of layer position ``layer``."""
        if pool == "mean":
            return (self.sum[layer, rows] / self.count[rows, None]).astype(np.float32)
        if pool == "min":
            return self.min[layer, rows]
        if pool == "max":
            return self.max[layer, rows]
        return np.stack([np.median(self.kept[layer, r, : self.count[r]], axis=0)
                         for r in rows]).astype(np.float32)


def _layers(encoder: Encoder, layers) -> list[int]:
    """The layer numbers to distil: None = the encoder's last, "all" = every one, or numbers."""
    if layers is None:
        return [encoder.layer_ids[-1]]
    if isinstance(layers, str):
        if layers != "all":
            raise InputError(f"layers must be None, 'all', a layer number or a list of them, got {layers!r}")
        return list(encoder.layer_ids)
    items = [layers] if isinstance(layers, int) else list(layers)
    return sorted({layer_number(encoder.layer_ids, k) for k in items})


def _plan(chunk: list[Sentence], first: int, matcher: WordMatcher, index: dict[str, int],
          thresholds: dict[str, int] | None, seed: int) -> list[PlannedSentence]:
    """The chunk's sentences that hold chosen usages (``first``: the corpus position of
    ``chunk[0]``, which the sample's hash reads), each with those usages."""
    out = []
    for n, s in enumerate(chunk, start=first):
        chosen = tuple(u for u in find_usages(s, matcher) if u.word in index and (
            thresholds is None or sample_key(seed, n, u.start, u.word) <= thresholds[u.word]))
        if chosen:
            out.append(PlannedSentence(s.doc, s.number, s.text, chosen))
    return out


class _Pooler:
    """Distillation's ``on_chunk``: pools a chunk's vectors into the state, *then* saves the
    checkpoint (if any); returns the usages pooled so far."""

    def __init__(self, state: _State, index: dict[str, int], layer_ids: list[int], checkpoint: Path | None,
                 params: dict[str, Any]):
        self.state, self.index, self.layer_ids = state, index, layer_ids
        self.checkpoint, self.params = checkpoint, params

    def __call__(self, chunk: ChunkDone) -> int:
        got = chunk.encoded
        rows = np.fromiter((self.index[u.word] for u in got.rows), dtype=np.int64, count=len(got.rows))
        self.state.add(rows, np.stack([got.vectors[k] for k in self.layer_ids]))  # (layers, usages, dim)
        if self.checkpoint is not None:
            _save(self.checkpoint, self.params, self.state, chunk.done)
        return int(self.state.count.sum())


def distill(
    corpus, encoder: Encoder, out: str | Path | None = None, *, words: Iterable[str] | None = None,
    layers=None, pools: str | Sequence[str] = "mean", min_count: int = 5, max_usages: int | None = None,
    seed: int = 0, match: str = "lower", layout: str = "lines", chunk_size: int | None = None,
    wordnet=None, progress: DistillProgress | None = None, memory_limit: int = MEMORY_LIMIT,
    engine: str = "local", address: str | None = None, concurrency: int = 1,
) -> DistillResult:
    """Distil one static table per layer (and pool) from the usages of words in ``corpus``.

    ``words``: the vocabulary (matched by ``match``: exact, lower, lemma), or None for
    every alphabetic word (lower-cased); either way a word needs ``min_count`` usages.
    ``layers``: None (the encoder's last), ``"all"``, a layer number or a list.
    ``pools``: ``mean`` (default), ``median`` (needs ``max_usages``), ``min``, ``max``.
    ``max_usages``: at most this many usages per word, a seeded uniform sample (``seed``).
    ``out``: write the tables there (:func:`table_paths`), checkpointing beside it
    (``<out>.distill.npz``, removed at the end) so a killed run resumes.
    ``engine``: ``local`` (this process) or ``ray`` (a transformer ``encoder`` with mean
    pooling, run by name on Ray Data: ``address`` and ``concurrency`` as for
    :func:`contextlens.index.build_index`); ``chunk_size``: sentences per chunk and
    checkpoint (default 2,048 locally, 20,000 on Ray).
    """
    pools = [pools] if isinstance(pools, str) else list(dict.fromkeys(pools))
    if not pools:
        raise InputError(f"give at least one pool: {', '.join(POOLS)}")
    for p in pools:
        check_choice("pool", p, POOLS)
    check_choice("match", match, MATCHES)
    check_choice("layout", layout, LAYOUTS)
    min_count = check_int("min_count", min_count, low=1)
    check_choice("engine", engine, ENGINES)
    if engine == "ray":
        from .ray_engine import CHUNK_SENTENCES as RAY_CHUNK

        check_ray_encoder(encoder)
    chunk_size = check_int("chunk_size", chunk_size or (RAY_CHUNK if engine == "ray" else CHUNK_SENTENCES),
                           low=1)
    seed = check_int("seed", seed)
    if max_usages is not None:
        max_usages = check_int("max_usages", max_usages, low=1)
    if "median" in pools and max_usages is None:
        raise InputError("the median keeps every pooled vector: give max_usages (e.g. 100) to bound it")
    layer_ids = _layers(encoder, layers)
    positions = [encoder.layer_position(k) for k in layer_ids]
    src = resolve_source(corpus)
    if src.one_shot:
        raise InputError("distillation reads the corpus twice; "
                         "give files or a list of lines, not an iterator")
    started = time.perf_counter()
    given = None
    if words is not None:
        given = list(WordMatcher(words, match=match, wordnet=wordnet).words)
        matcher = WordMatcher(given, match=match, wordnet=wordnet)
    vocab = _vocabulary(iter_corpus_sentences(corpus, layout=layout), matcher if given else _alpha_lower,
                        given, min_count, max_usages, seed)
    if not vocab.words:
        raise EmptyInputError(f"no word has {min_count} usage(s) in the corpus; lower min_count or give more "
                              "text")
    if given is None:
        matcher = WordMatcher(vocab.words, match="lower")
    need = _State.nbytes(len(positions), len(vocab.words), encoder.dim, pools, max_usages)
    if need > memory_limit:
        raise LimitError(f"pooling {len(vocab.words):,} words × {len(positions)} layer(s) × {encoder.dim} "
                         f"dims ({'/'.join(pools)}) needs {need / 2**30:.1f} GiB, over the limit of "
                         f"{memory_limit / 2**30:.1f} GiB; give fewer words (words=, a higher min_count), "
                         "fewer layers, or a smaller max_usages for the median")
    log.info("distilling %d words (%d usages found) from %d sentences, layers %s, %s", len(vocab.words),
             sum(vocab.counts.values()), vocab.sentences, layer_ids, "/".join(pools))
    params = {"encoder": encoder.params(), "layers": layer_ids, "pools": pools, "min_count": min_count,
              "max_usages": max_usages, "seed": seed, "match": match, "layout": layout,
              "corpus": vocab.fingerprint, "words": len(vocab.words)}
    state = _State(len(positions), len(vocab.words), encoder.dim, pools, max_usages)
    checkpoint = None if out is None else Path(f"{out}.distill.npz")
    if out is not None:  # never over a corpus file
        check_outputs([*(("out", p) for p in table_paths(out, layer_ids, pools).values()),
                       ("checkpoint", checkpoint)], [("corpus", p) for p in src.paths])
    done = _resume(checkpoint, params, state, vocab.sentences) if checkpoint is not None else 0
    index = {w: i for i, w in enumerate(vocab.words)}
    stream = iter_corpus_sentences(corpus, layout=layout, stats=ReadStats())
    runner = make_runner(engine, encoder, layer_ids, address=address, concurrency=concurrency,
                         missing=logging.DEBUG)  # a static table lacks many words: not worth a warning each
    end = corpus_pass(stream, lambda chunk, first: _plan(chunk, first, matcher, index, vocab.thresholds,
                                                         seed),
                      runner, _Pooler(state, index, layer_ids, checkpoint, params), done=done,
                      chunk_size=chunk_size, progress=progress)
    result = _result(vocab, state, layer_ids, pools, encoder, params)
    result.resumed_at, result.encoded_sentences = done, end.encoded_sentences
    if out is not None:
        for key, path in table_paths(out, layer_ids, pools).items():
            result.tables[key].save(path)
            result.paths[key] = str(path)
        checkpoint.unlink(missing_ok=True)
        remove_leftovers(checkpoint)
    result.seconds = time.perf_counter() - started
    return result


def _resume(checkpoint: Path, params: dict[str, Any], state: _State, sentences: int) -> int:
    """Load a checkpoint of the same run into ``state``; the sentences it had done (of the
    corpus' ``sentences``). A checkpoint that cannot be read is one error naming it."""
    if not checkpoint.exists() and not checkpoint.is_symlink():
        return 0
    start_over = f"delete it to start over from the first sentence (rm {checkpoint})"
    check_input_file(checkpoint, "distillation checkpoint", start_over)
    try:
        with np.load(checkpoint, allow_pickle=False) as z:
            if "params" not in z:
                raise InputError("it holds no 'params': another program's .npz, not a checkpoint of a "
                                 "distillation")
            for key in ("params", "done"):
                shape, dtype = _header(z, key)
                if shape != () or dtype.kind not in ("U" if key == "params" else "iu"):
                    raise InputError(f"its {key} is {dtype} {shape}, not a distillation's")
            saved, wanted = json.loads(str(z["params"])), json.loads(json.dumps(params))
            if not isinstance(saved, dict):
                raise InputError("its 'params' are not a distillation's")
            if saved != wanted:
                differ = sorted(k for k in set(saved) | set(wanted) if saved.get(k) != wanted.get(k))
                raise InputError(f"{checkpoint} is the checkpoint of another distillation (it differs in "
                                 f"{', '.join(differ)}); delete it, or run with the same arguments to resume")
            state.load(z)
            done = int(z["done"])
    except InputError as err:
        if str(err).startswith(str(checkpoint)):
            raise
        raise _unreadable(checkpoint, str(err), start_over) from None
    except (OSError, EOFError, ValueError, KeyError, TypeError, AttributeError, zipfile.BadZipFile,
            zlib.error) as err:  # truncated, empty, damaged, not an .npz (an .npy, text), a missing array
        raise _unreadable(checkpoint, f"{type(err).__name__}: {err}", start_over) from None
    if not 0 <= done <= sentences:
        raise _unreadable(checkpoint,
                          f"it says {done:,} sentences were done, but the corpus has {sentences:,}",
                          start_over)
    log.info("resuming %s after %d sentences", checkpoint, done)
    return done


def _header(npz, key: str) -> tuple[tuple[int, ...], np.dtype]:
    """``(shape, dtype)`` of array ``key`` of an open ``.npz``, read from its header alone."""
    with npz.zip.open(f"{key}.npy") as f:
        version = np.lib.format.read_magic(f)
        read = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read(f)
    return shape, dtype


def _unreadable(checkpoint: Path, why: str, start_over: str) -> InputError:
    """The one-line error for a checkpoint that cannot be resumed from.

    >>> print(_unreadable(Path("t.npz.distill.npz"), "BadZipFile: File is not a zip file", "delete it"))
    t.npz.distill.npz: not a readable distillation checkpoint (BadZipFile: File is not a zip file); delete it
    """
    why = why if len(why) <= 200 else why[:200] + "..."
    return InputError(f"{checkpoint}: not a readable distillation checkpoint ({why}); {start_over}")


def _save(checkpoint: Path, params: dict[str, Any], state: _State, done: int) -> None:
    with atomic_output(checkpoint) as tmp, open(tmp, "wb") as f:
        np.savez(f, params=np.array(json.dumps(params)), done=np.array(done), **state.arrays())


def _result(vocab: _Vocabulary, state: _State, layer_ids: list[int], pools: list[str], encoder: Encoder,
            params: dict[str, Any]) -> DistillResult:
    rows = np.flatnonzero(state.count > 0)
    if not len(rows):
        raise EmptyInputError("no usage got a vector from the encoder; check the words and the model")
    keys = [vocab.words[r] for r in rows]
    name = getattr(encoder, "name", "encoder")
    tables = {(k, p): EmbeddingTable(keys, state.pooled(pos, p, rows),
                                     name=f"{name} layer {k} {p} (distilled)")
              for pos, k in enumerate(layer_ids) for p in pools}
    unencoded = [vocab.words[r] for r in np.flatnonzero(state.count == 0)]
    return DistillResult(tables, {vocab.words[r]: int(state.count[r]) for r in rows}, dict(vocab.counts),
                         vocab.missing + unencoded, vocab.sentences, 0, params=params)
