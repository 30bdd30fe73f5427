"""Where CEAT's contexts come from: a corpus read here and encoded, or a usage index.

Guo & Caliskan take up to 10,000 Reddit sentences per word. Without an index we read a
plain corpus (one sentence per line, e.g. the shared Brown, ABC and movie-review corpora)
once, keep for each word at most ``per_word`` of the sentences it stands in (a seeded
uniform sample of them), and encode each kept sentence with only that word as target, so
one pass gives the word's vector at every layer. A word written lower-case matches a token
in any case (*Rose* at the start of a sentence is *rose*); a capitalised word (a name)
matches only as written, so *Bill* is not *bill*. A word's first occurrence in a sentence
is the one encoded.

>>> picks = pick_sentences(["a rose is red", "Rose met Bill", "the bill came", "no match"],
...                        ["rose", "Bill"], per_word=5)
>>> picks
{'rose': [(0, 1), (1, 0)], 'Bill': [(1, 2)]}
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import numpy as np

from ..bounds import CEAT_CONTEXT_BYTES, check_encoding
from ..encoders.base import Encoder
from ..errors import InputError, check_int, check_size
from ..progress import step

__all__ = ["DEFAULT_PER_WORD", "pick_sentences", "contexts_from_corpus", "contexts_from_index",
           "ceat_contexts"]

log = logging.getLogger(__name__)
DEFAULT_PER_WORD = 20
CHUNK = 256  # sentences per encode call: progress between calls, the encoder batches within one


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
    with step(f"encoding {len(texts):,} CEAT contexts with {name}", total=len(texts), unit="sentences") as s:
        for start in range(0, len(texts), CHUNK):  # a counted step: a pass over thousands of sentences
            part = slice(start, start + CHUNK)
            for enc, w in zip(encoder.encode(texts[part], targets=targets[part]), owners[part]):
                if len(enc.words):  # a word the tokenizer gave no piece is skipped
                    stacks[w].append(enc.layers[:, 0])  # (layers, dim)
            s.advance(len(texts[part]))
    return {layer: {w: np.stack([v[j] for v in vs]) for w, vs in stacks.items() if vs}
            for j, layer in enumerate(encoder.layer_ids)}


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
    from ..corpus.reading import iter_lines
    from ..datasets.registry import resolve_data_dir
    from ..encoders.registry import make_encoder

    source = corpus if corpus is not None else resolve_data_dir() / "corpora"
    encoder = make_encoder(model=model, attention=False)
    return contexts_from_corpus(encoder, iter_lines(source, errors="skip"), words,
                                per_word=DEFAULT_PER_WORD if per_word is None else per_word, seed=seed)
