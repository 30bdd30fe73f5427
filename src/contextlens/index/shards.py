"""Shards: an index built in parts (one per machine, say) and searched as one.

``index build --shard I/N`` (``build_index(..., shard="I/N")``) indexes the documents of
shard ``I`` of ``N`` only: a document belongs to the shard :func:`shard_of` its name, a
hash, so the split does not depend on the order of the files, on which machine reads them,
or on a re-run (give the corpus by the same paths everywhere: a usage's id is made from
its document's name too).

:class:`ShardedReader` searches several indexes as one: each index's ``k`` best, merged
by cosine (ties by usage id), which are exactly the ``k`` best of one index over the
whole corpus wherever each index's search is exact (and as good as each index's own search
otherwise). The indexes must agree on what makes their vectors comparable and their
words the same (:data:`AGREE`); they may differ in storage (``dtype``), layout and side
index kind.

>>> parse_shard("2/4"), parse_shard((0, 1))
((2, 4), (0, 1))
>>> [shard_of(f"doc{i}.txt", 3) for i in range(6)]
[0, 0, 1, 1, 0, 1]
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError, ask
from .reader import UsageReader
from .store import IndexMismatchError, is_uri

__all__ = ["ShardedReader", "parse_shard", "shard_of", "AGREE", "open_readers"]

log = logging.getLogger(__name__)
#: the index parameters several indexes searched as one must share
AGREE = ("model", "layers", "dim", "pooling", "precision", "match", "words")
MAX_SHARDS = 1 << 16


def parse_shard(shard) -> tuple[int, int]:
    """``(I, N)`` from ``"I/N"`` or a pair: shard I (from 0) of N."""
    how = f"{ask('shard')} as I/N: this build's part I (from 0) of N parts, e.g. 0/4 ... 3/4"
    if isinstance(shard, str):
        left, slash, right = shard.strip().partition("/")
        try:
            pair = (int(left), int(right)) if slash else None
        except ValueError:
            pair = None
    else:
        pair = tuple(shard) if isinstance(shard, Sequence) and len(shard) == 2 else None
    if pair is None or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair):
        raise InputError(f"shard {shard!r} is not I/N; {how}")
    i, n = pair
    if not 1 <= n <= MAX_SHARDS or not 0 <= i < n:
        raise InputError(f"shard {i}/{n} does not exist: I goes from 0 to N-1 and N from 1 to {MAX_SHARDS}; "
                         f"{how}")
    return i, n


def shard_of(doc: str, n: int) -> int:
    """The shard (of ``n``) that document ``doc`` (its name) belongs to."""
    digest = hashlib.blake2b(str(doc).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") % int(n)


def _describe(reader: UsageReader, key: str) -> str:
    value = reader.params.get(key)
    if key == "words":
        words = list(value or [])
        return ", ".join(words[:6]) + ("..." if len(words) > 6 else "") + f" ({len(words)} words)"
    if key == "layers":
        return ", ".join(map(str, value or []))
    return repr(value)


def _same(key: str, a, b) -> bool:
    if key == "words":
        return set(a or []) == set(b or [])
    return a == b


def open_readers(dbs: Sequence) -> list[UsageReader]:
    """Each index of ``dbs`` opened (a reader passes as it is); the same index twice is an error."""
    from .reader import open_store

    seen: dict[str, Any] = {}
    readers = []
    for db in dbs:
        reader = db if isinstance(db, UsageReader) else open_store(db)
        key = str(reader.path) if is_uri(reader.path) else os.path.realpath(reader.path)
        if key in seen:
            raise InputError(f"{db} is given twice; give each index once")
        seen[key] = db
        readers.append(reader)
    return readers


class ShardedReader:
    """Several usage indexes searched as one (see the module docstring); reads as a
    :class:`~contextlens.index.reader.UsageReader` does."""

    def __init__(self, readers: Sequence[UsageReader]):
        if len(readers) < 2:
            raise InputError("searching indexes as one needs at least two of them")
        self.readers = list(readers)
        first = self.readers[0]
        for other in self.readers[1:]:
            differ = [k for k in AGREE if not _same(k, first.params.get(k), other.params.get(k))]
            if differ:
                said = "; ".join(f"{k}: {_describe(first, k)} in {first.path}, {_describe(other, k)} in "
                                 f"{other.path}"
                                 for k in differ)
                raise IndexMismatchError(f"these indexes cannot be searched as one, they differ in {said}; "
                                         "give indexes built with the same model, layers, match and words")
        shards = [r.params.get("shard") for r in self.readers if r.params.get("shard")]
        twice = [s for s, c in Counter(shards).items() if c > 1]
        if twice:
            raise InputError(f"two of these indexes are both shard {twice[0]}: they would hold the same "
                             "usages; give each shard once")
        splits = {s.split("/")[1] for s in shards}
        if len(splits) > 1:
            raise InputError(f"these indexes are shards of different splits ({', '.join(sorted(shards))}): "
                             "documents would be in two of them; give the shards of one split (the same N in "
                             "I/N)")
        if splits and len(shards) == len(self.readers):
            n = int(splits.pop())
            absent = sorted(set(range(n)) - {int(s.split("/")[0]) for s in shards})
            if absent:
                log.warning("searching %d of %d shards: %s missing", len(shards), n,
                            ", ".join(f"{i}/{n}" for i in absent))
        self.params = {**first.params, "shard": shards or None}
        self.path = " + ".join(str(r.path) for r in self.readers)

    @property
    def layers(self) -> list[int]:
        return self.readers[0].layers

    def layer_column(self, layer: int | None) -> str:
        return self.readers[0].layer_column(layer)

    def refresh(self) -> None:
        for r in self.readers:
            r.refresh()

    def count(self, word: str | None = None) -> int:
        return sum(r.count(word) for r in self.readers)

    def word_counts(self) -> dict[str, int]:
        total: Counter = Counter()
        for r in self.readers:
            total.update(r.word_counts())
        return dict(sorted(total.items(), key=lambda t: (-t[1], t[0])))

    def checkpoint(self) -> dict[str, Any]:
        """Complete when every index is; sentences and usages summed."""
        points = [r.checkpoint() for r in self.readers]
        return {"chunk": -1, "sentences_done": sum(p["sentences_done"] for p in points),
                "usages_done": sum(p["usages_done"] for p in points), "done": all(p["done"] for p in points)}

    def has_ann_index(self) -> bool:
        return any(r.has_ann_index() for r in self.readers)

    def search_structure(self) -> dict[str, Any]:
        parts = [r.search_structure() for r in self.readers]
        kinds = sorted({p["kind"] for p in parts})
        size = None if any(p["bytes"] is None for p in parts) else sum(p["bytes"] for p in parts)
        n = self.count()
        return {"kind": "+".join(kinds), "bytes": size,
                "bytes_per_usage": round(size / n, 1) if size is not None and n else None}

    def size_on_disk(self) -> int:
        return sum(r.size_on_disk() for r in self.readers)

    def search(self, vector: np.ndarray, *, word: str | None = None, k: int = 10, layer: int | None = None,
               exact: bool | None = None) -> list[dict[str, Any]]:
        """The ``k`` usages nearest ``vector`` over every index: each one's ``k`` best,
        merged by cosine (ties: by usage id)."""
        found = [row for r in self.readers for row in r.search(vector, word=word, k=k, layer=layer,
                                                               exact=exact)]
        return sorted(found, key=lambda row: (-row["similarity"], row["usage_id"]))[: int(k)]

    def get(self, uid: str, layer: int | None = None) -> dict[str, Any]:
        for r in self.readers:
            try:
                return r.get(uid, layer)
            except InputError as e:
                if "no usage with id" not in str(e):
                    raise
        raise InputError(f"no usage with id {uid!r} in {self.path}; take an id from a search result")

    def vectors_of(self, word: str, layer: int | None = None, limit: int | None = None):
        """``(rows, vectors (n, dim) float32)`` of a word's usages in every index, in usage-id order."""
        parts = [r.vectors_of(word, layer) for r in self.readers]
        rows = [row for p in parts for row in p[0]]
        dim = int(self.params["dim"])
        x = np.concatenate([p[1] for p in parts]) if parts else np.zeros((0, dim), np.float32)
        order = sorted(range(len(rows)), key=lambda i: rows[i]["usage_id"])[:limit]
        return [rows[i] for i in order], x[np.asarray(order, dtype=np.int64)].reshape(-1, dim)

    @property
    def paths(self) -> list[Path | str]:
        return [r.path for r in self.readers]
