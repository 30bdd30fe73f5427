"""The corpus-scale usage index: every usage of some words, encoded once and kept on disk.

- :func:`build_index` streams a corpus into a LanceDB index (resumable, crash-safe);
- :func:`search_usages` / :func:`like_usage`: the usages nearest a query usage;
- :func:`induce_senses`: clusters of a word's usages, described by typical sentences and
  distinctive context words;
- :func:`index_stats`: words, usages, model, layers, size on disk.

Needs ``pip install 'contextlens[index]'`` (lancedb, pyarrow).

Floor 7 (ARCHITECTURE.md): builds through :mod:`contextlens.passes`, names senses through
:mod:`contextlens.evaluation` and clusters with :mod:`contextlens.analysis`; never views, plots,
bias, cli or web.
"""

import importlib

# imported when first used: ``index search`` needs neither the sense clustering (SciPy,
# scikit-learn) nor the build (issue 23: every second of a command's start counts)
_WHERE = {"build_index": ".build", "BuildResult": ".build", "search_usages": ".search",
          "like_usage": ".search",
          "induce_senses": ".senses", "index_stats": ".stats", "open_store": ".reader",
          "UsageReader": ".reader", "UsageStore": ".store", "IndexMismatchError": ".store"}
__all__ = list(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))
