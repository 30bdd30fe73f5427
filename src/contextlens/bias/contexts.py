"""Where CEAT's contexts come from: a corpus read here and encoded, or a usage index.

Guo & Caliskan take up to 10,000 Reddit sentences per word. Without an index we read a
plain corpus (one sentence per line, e.g. the shared Brown, ABC and movie-review corpora)
once, keep for each word at most ``per_word`` of the sentences it stands in (a seeded
uniform sample of them), and encode each kept sentence with only that word as target, so
one pass gives the word's vector at every layer. A word written lower-case matches a token
in any case (*Rose* at the start of a sentence is *rose*); a capitalised word (a name)
matches only as written, so *Bill* is not *bill*. A word's first occurrence in a sentence
is the one encoded.

Encoded contexts of a corpus read from files are cached on disk (kind ``ceat``,
:mod:`contextlens.disk_cache`), keyed by what determines them (:func:`contexts_key`: the
encoder's identity with its layers, the corpus files' contents in reading order, the words
in order, ``per_word`` and ``seed``), so a second run reads them instead of reading the
corpus and encoding its sentences again (minilm: 16 s of CPU).

>>> picks = pick_sentences(["a rose is red", "Rose met Bill", "the bill came", "no match"],
...                        ["rose", "Bill"], per_word=5)
>>> picks
{'rose': [(0, 1), (1, 0)], 'Bill': [(1, 2)]}
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..bounds import CEAT_CONTEXT_BYTES, check_encoding
from ..encoders.base import Encoder
from ..errors import InputError, check_int, check_size
from ..progress import step

__all__ = ["DEFAULT_PER_WORD", "pick_sentences", "contexts_from_corpus", "contexts_from_index",
           "ceat_contexts", "cached_contexts", "contexts_key", "CACHE"]

log = logging.getLogger(__name__)
DEFAULT_PER_WORD = 20
CHUNK = 256  # sentences per encode call: progress between calls, the encoder batches within one
CACHE = "ceat"  # the disk cache kind of encoded contexts
CACHE_VERSION = 1  # of how contexts are picked and stored: a change makes every entry a miss


def pick_sentences(lines: Iterable[str], words: Sequence[str], *, per_word: int = DEFAULT_PER_WORD,
                   seed: int = 0) -> dict[str, list[tuple[int, int]]]:
    """``{word: [(line number, token index), ...]}``: for each word, at most ``per_word`` of
    the lines (split on white space) it occurs in, a seeded uniform sample, in line order;
    words found nowhere are left out."""
    check_int("per_word", per_word, low=1)
    any_case: dict[str, list[str]] = {}  # lower-cased token -> the lower-case words it is
    for w in words:
        if w.islower():
            any_case.setdefault(w, []).append(w)
    as_written = {w for w in words if not w.islower()}
    found: dict[str, list[tuple[int, int]]] = {w: [] for w in words}
    for n, line in enumerate(lines):
        seen: set[str] = set()
        for i, token in enumerate(line.split()):
            for w in (*any_case.get(token.lower(), ()), *((token,) if token in as_written else ())):
                if w not in seen:
                    seen.add(w)
                    found[w].append((n, i))
    rng = np.random.default_rng(seed)
    out = {}
    for w in words:
        hits = found[w]
        if len(hits) > per_word:
            hits = [hits[j] for j in sorted(rng.choice(len(hits), per_word, replace=False))]
        if hits:
            out[w] = hits
    return out


def contexts_from_corpus(encoder: Encoder, lines: Iterable[str], words: Sequence[str], *,
                         per_word: int = DEFAULT_PER_WORD, seed: int = 0) -> dict[int, dict[str, np.ndarray]]:
    """``{layer: {word: (contexts, dim)}}`` for every layer of ``encoder``, from at most
    ``per_word`` sentences of ``lines`` per word (see the module docstring)."""
    owners, vectors = _encoded_contexts(encoder, lines, words, per_word=per_word, seed=seed)
    return by_layer(owners, vectors, encoder.layer_ids)


def by_layer(owners: Sequence[str], vectors: np.ndarray, layer_ids: Sequence[int]
             ) -> dict[int, dict[str, np.ndarray]]:
    """``{layer: {word: (contexts, dim)}}`` from each context's word (``owners``, a word's
    contexts together) and its vectors ``(contexts, layers, dim)``.

    >>> x = np.arange(12.0).reshape(3, 2, 2)  # 3 contexts, 2 layers, dim 2
    >>> out = by_layer(["a", "a", "b"], x, (0, 6))
    >>> out[6]["a"].tolist(), out[0]["b"].tolist()
    ([[2.0, 3.0], [6.0, 7.0]], [[8.0, 9.0]])
    """
    rows: dict[str, list[int]] = {}
    for i, w in enumerate(owners):
        rows.setdefault(w, []).append(i)
    return {layer: {w: vectors[at, j] for w, at in rows.items()} for j, layer in enumerate(layer_ids)}


def _encoded_contexts(encoder: Encoder, lines: Iterable[str], words: Sequence[str], *, per_word: int,
                      seed: int, once: str | None = None) -> tuple[list[str], np.ndarray]:
    """``(owners, vectors (contexts, layers, dim))``: each encoded context's word, a word's
    contexts together (see :func:`contexts_from_corpus`; ``once``: where they are kept)."""
    words = list(dict.fromkeys(words))
    lines = list(lines)
    picks = pick_sentences(lines, words, per_word=per_word, seed=seed)
    texts, targets, owners = [], [], []
    for w, hits in picks.items():
        for n, i in hits:
            tokens = lines[n].split()
            texts.append(" ".join(tokens))
            start = sum(len(t) + 1 for t in tokens[:i])
            targets.append([(start, start + len(tokens[i]))])  # the word's char span
            owners.append(w)
    log.info("CEAT contexts: %d sentences for %d of %d words (at most %d each)", len(texts), len(picks),
             len(words), per_word)
    check_encoding(encoder, texts, what=f"CEAT's {len(texts):,} context sentences",
                   todo="give fewer words, or fewer sentences per word (--per-word)")
    stacks: dict[str, list[np.ndarray]] = {w: [] for w in picks}
    name = getattr(encoder, "name", None) or encoder.params().get("encoder", "encoder")
    with step(f"encoding {len(texts):,} CEAT contexts with {name}", total=len(texts), unit="sentences",
              once=once) as s:
        for start in range(0, len(texts), CHUNK):  # a counted step: a pass over thousands of sentences
            part = slice(start, start + CHUNK)
            for enc, w in zip(encoder.encode(texts[part], targets=targets[part]), owners[part]):
                if len(enc.words):  # a word the tokenizer gave no piece is skipped
                    stacks[w].append(enc.layers[:, 0])  # (layers, dim)
            s.advance(len(texts[part]))
    kept = [w for w, vs in stacks.items() for _ in vs]
    dim = int(getattr(encoder, "dim", 0))
    vectors = np.stack([v for vs in stacks.values() for v in vs]) if kept else \
        np.zeros((0, len(encoder.layer_ids), dim), np.float32)
    return kept, vectors  # (contexts, layers, dim)


def _files_digest(paths: Sequence[Path]) -> str:
    """SHA-256 of the files' contents in order (a corpus's lines, hence the sentences picked
    and their numbering, follow from them and from nothing else)."""
    digest = hashlib.sha256()
    for path in paths:
        one = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                one.update(block)
        digest.update(one.digest())
    return digest.hexdigest()


def contexts_key(identity: dict, corpus_digest: str, words: Sequence[str], per_word: int, seed: int) -> str:
    """The cache key of encoded contexts: what determines them, hashed (``identity``: the
    encoder's, with its layers; the words in order: their samples are drawn in turn).

    >>> a = contexts_key({"model": "m", "layer_ids": [0, 6]}, "c0ffee", ["he", "she"], 20, 0)
    >>> a == contexts_key({"model": "m", "layer_ids": [0, 6]}, "c0ffee", ["he", "she"], 20, 0), len(a)
    (True, 24)
    >>> a == contexts_key({"model": "m", "layer_ids": [0, 6]}, "c0ffee", ["she", "he"], 20, 0)
    False
    """
    what = {"version": CACHE_VERSION, "encoder": identity, "corpus": corpus_digest, "words": list(words),
            "per_word": int(per_word), "seed": int(seed)}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:24]


def cached_contexts(encoder: Encoder, source, words: Sequence[str], *, per_word: int = DEFAULT_PER_WORD,
                    seed: int = 0, root: str | Path | None = None) -> dict[int, dict[str, np.ndarray]]:
    """:func:`contexts_from_corpus` of the corpus ``source`` (a file, a folder, a list of
    them or of lines), read from the ``ceat`` cache (``root``: another folder for it) when
    these contexts were encoded before, else encoded and kept there (see the module
    docstring); every run, cold or warm, returns the vectors as stored. A corpus of lines
    given in memory is encoded every time."""
    from ..build_marker import write_marker
    from ..corpus.reading import iter_lines, resolve_source
    from ..disk_cache import DiskCache
    from ..encoders.encoding_cache import encoder_identity

    check_int("per_word", per_word, low=1)
    words = list(dict.fromkeys(words))
    src = resolve_source(source)  # a missing path fails here, before anything is encoded
    if not src.paths:
        lines = iter_lines(src, errors="skip")
        return contexts_from_corpus(encoder, lines, words, per_word=per_word, seed=seed)
    key = contexts_key(encoder_identity(encoder), _files_digest(src.paths), words, per_word, seed)
    cache = DiskCache(CACHE, root)
    folder = cache.folder / key
    with cache.use(folder):
        with cache.building(folder) as tmp:
            if tmp is not None:
                owners, vectors = _encoded_contexts(encoder, iter_lines(src, errors="skip"), words,
                                                    per_word=per_word, seed=seed,
                                                    once=f"then cached in {cache.folder}")
                np.save(tmp / "vectors.npy", vectors)
                (tmp / "contexts.json").write_text(json.dumps(
                    {"owners": owners, "layer_ids": list(encoder.layer_ids), "corpus": src.name,
                     "words": words, "per_word": per_word, "seed": seed,
                     "encoder": encoder_identity(encoder)}, default=str), encoding="utf-8")
                write_marker(tmp, f"CEAT contexts: {len(owners)} sentences of {src.name}")
            else:
                log.info("CEAT contexts read from the cache %s", folder)
        told = json.loads((folder / "contexts.json").read_text(encoding="utf-8"))
        return by_layer(told["owners"], np.load(folder / "vectors.npy"), told["layer_ids"])


def contexts_from_index(store, words: Sequence[str], *, limit: int | None = None
                        ) -> dict[int, dict[str, np.ndarray]]:
    """``{layer: {word: (usages, dim)}}`` for every layer a usage index stores (at most
    ``limit`` usages per word, the first in usage-id order: the id is a hash of where the
    usage stands, so that is a fixed subset spread over the corpus); an index of lower-cased
    words is asked for a word as written, then lower-cased. The usages to read, at every
    stored layer, must fit :data:`~contextlens.bounds.CEAT_CONTEXT_BYTES` (counted from the
    index's word counts before anything is read)."""
    from .ceat import contexts_from_store

    words = list(dict.fromkeys(words))
    counts = store.word_counts()
    n = sum(min(counts.get(w) or counts.get(w.lower(), 0), limit or 2**62) for w in words)
    per = len(store.layers) * int(store.params["dim"]) * 4  # bytes of a usage at every stored layer
    fits = max(1, CEAT_CONTEXT_BYTES // per // max(len(words), 1))
    check_size("CEAT's contexts in the index", n, CEAT_CONTEXT_BYTES // per, "usages",
               why=f"each is read at {len(store.layers)} layers x {store.params['dim']} numbers",
               todo=f"read fewer usages per word: limit={fits:,} (--limit {fits}) fits")
    out = {}
    for layer in store.layers:
        found = contexts_from_store(store, words, layer, limit=limit)
        lower = contexts_from_store(store, [w.lower() for w in words if w not in found], layer, limit=limit)
        out[layer] = {w: found[w] if w in found else lower[w.lower()] for w in words
                      if w in found or w.lower() in lower}
    return out


def ceat_contexts(words: Sequence[str], *, model: str, db=None, corpus=None, per_word: int | None = None,
                  limit: int | None = None, seed: int = 0) -> dict[int, dict[str, np.ndarray]]:
    """CEAT's contexts of ``words`` for ``model``: from the usage index ``db`` (which must
    hold that model's vectors; at most ``limit`` usages per word; its stored layers), else encoded from
    ``corpus`` (a file or folder; default: the data folder's ``corpora``, the shared Brown,
    ABC and movie-review corpora), at most ``per_word`` (default 20) sentences per word,
    ``seed``-ed. A setting of the other source is refused."""
    if db is not None and (corpus is not None or per_word is not None):
        raise InputError("the contexts come from the index (--db): "
                         "drop --corpus and --per-word, or drop --db")
    if db is None and limit is not None:
        raise InputError("--limit bounds the usages read from an index (--db); for a corpus use --per-word")
    if db is not None:
        from ..index.reader import open_store

        store = open_store(db)
        if store.params.get("model") != model:
            raise InputError(f"the index {db} holds {store.params.get('model')!r} vectors, not {model!r}; "
                             f"give --model {store.params.get('model')} or another index")
        return contexts_from_index(store, words, limit=limit)
    from ..datasets.registry import resolve_data_dir
    from ..encoders.registry import make_encoder

    source = corpus if corpus is not None else resolve_data_dir() / "corpora"
    encoder = make_encoder(model=model, attention=False)
    per_word = DEFAULT_PER_WORD if per_word is None else per_word
    return cached_contexts(encoder, source, words, per_word=per_word, seed=seed)
