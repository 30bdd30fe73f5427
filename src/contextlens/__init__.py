"""contextlens: see and measure how a word's vector goes from static to contextual.

>>> from contextlens import EmbeddingTable, make_encoder, compare
>>> table = EmbeddingTable(["money", "bank", "river"], [[1, 0], [1, 1], [0, 1]])
>>> enc = make_encoder("average", vectors=table)
>>> [round(c, 3) for c in compare(enc, "money bank", "river bank", "bank")["cosine_by_layer"]]
[1.0, 0.0]

Every experiment is one function with one argument order: ``verb(encoder, text or
sentences, word, *, options)`` — the encoder, then what it reads (one text, two texts, a
list of sentences, a list of pairs), then the word (or words), then keyword-only options.
A single string where a list of sentences or pairs is expected is an error, never a list
of characters. The command line uses the same names and the same order where it has
positional arguments (``contextlens compare TEXT1 TEXT2 --word WORD``).

The names below are imported on first use (PEP 562), so ``import contextlens`` (and the
``contextlens`` command, which only needs ``contextlens.cli``) starts without numpy,
SciPy or scikit-learn.

The packages, from the floor up (ARCHITECTURE.md has the table, and a test holds the code to it):
the single modules (``errors``, ``text``, ``files``, ``vectors``...) and ``corpus``, ``datasets`` →
:mod:`.static`, :mod:`.context` → :mod:`.encoders` → :mod:`.analysis` → :mod:`.passes`,
:mod:`.evaluation` → :mod:`.index` → :mod:`.bias` → :mod:`.views`, :mod:`.plots` →
:mod:`.walkthrough`, :mod:`.web` → :mod:`.cli`. Each package's docstring says what it holds.
"""

from __future__ import annotations

import importlib

# name -> the module that defines it (imported on first access)
_LAZY = {
    # the experiments: verb(encoder, text(s), word, *, options)
    "contextualize": ".analysis.incontext", "compare": ".analysis.incontext",
    "word_weights": ".analysis.incontext",
    "explore": ".analysis.explore", "senses": ".analysis.senses", "layer_divergence": ".analysis.layers",
    "attribute": ".analysis.attribution", "rank_pairs": ".analysis.ranking", "geometry": ".analysis.geometry",
    "contextual_neighbours": ".analysis.neighbours", "compare_sentences": ".analysis.sentences",
    "occlusion_vs_attention": ".analysis.occlusion",
    "sublayers": ".analysis.sublayers", "attributions": ".analysis.faithfulness",
    "patch": ".analysis.patching", "probe": ".analysis.probing", "layer_cka": ".analysis.cka",
    "Encoder": ".encoders.base", "Encoding": ".encoders.base",
    "make_encoder": ".encoders.registry", "resolve_vectors": ".encoders.registry",
    "ContextLensError": ".errors",
    "Word": ".text", "split_sentences": ".text", "tokenize": ".text",
    "EmbeddingTable": ".vectors", "cosine": ".vectors",
}

__all__ = ["__version__", *_LAZY]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("contextlens")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def __getattr__(name: str):
    if name == "__version__":
        value = _version()
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value  # later accesses skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
