"""The corpus-scale usage index: every usage of some words, encoded once and kept on disk.

- :func:`build_index` streams a corpus into a LanceDB index (resumable, crash-safe);
- :func:`search_usages` / :func:`like_usage`: the usages nearest a query usage;
- :func:`induce_senses`: clusters of a word's usages, described by typical sentences and
  distinctive context words;
- :func:`index_stats`: words, usages, model, layers, size on disk.

Needs ``pip install 'contextlens[index]'`` (lancedb, pyarrow).
"""

from .build import BuildResult, build_index
from .search import like_usage, search_usages
from .senses import induce_senses
from .stats import index_stats
from .store import IndexMismatchError, UsageReader, UsageStore, open_store

__all__ = ["build_index", "BuildResult", "search_usages", "like_usage", "induce_senses", "index_stats",
           "open_store", "UsageReader", "UsageStore", "IndexMismatchError"]
