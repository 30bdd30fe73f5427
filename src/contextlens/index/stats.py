"""What a usage index holds: words, usages, model, layers, size on disk, build state."""

from __future__ import annotations

from typing import Any

from .reader import UsageReader, open_store
from .shards import ShardedReader
from .side_index import ANN_MIN_ROWS

__all__ = ["index_stats"]


def index_stats(db) -> dict[str, Any]:
    """``{db, model, layers, dim, dtype, match, usages, words: {word: n}, missing_words,
    complete, sentences_done, ann_index, ann_min_rows, size_bytes, bytes_per_usage, search:
    {kind, bytes, bytes_per_usage}, shard, contextlens_version}`` of an index, or of
    several searched as one (a list: summed; read only). ``bytes_per_usage`` is the whole
    index on disk per usage, ``search.bytes_per_usage`` its search structure alone (the
    side index: ``full``, ``compressed``, or ``exact`` while a build appends)."""
    store = db if isinstance(db, UsageReader | ShardedReader) else open_store(db)
    store.refresh()
    counts = store.word_counts()
    point = store.checkpoint()
    n = sum(counts.values())
    size = store.size_on_disk()
    p = store.params
    return {
        "db": str(store.path), "model": p["model"], "layers": store.layers, "dim": p["dim"],
        "dtype": p["dtype"], "match": p.get("match"), "layout": p.get("layout"), "usages": n, "words": counts,
        "missing_words": [w for w in p["words"] if w not in counts], "complete": bool(point["done"]),
        "sentences_done": point["sentences_done"], "ann_index": store.has_ann_index(),
        "ann_min_rows": ANN_MIN_ROWS,
        "size_bytes": size, "bytes_per_usage": round(size / n, 1) if n else None,
        "search": store.search_structure(), "shard": p.get("shard"),
        "contextlens_version": p.get("contextlens_version"),
    }
