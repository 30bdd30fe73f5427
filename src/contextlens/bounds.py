"""The bounds of work and memory of every entry point, in one place.

The goal: no single command or lab request takes more than 2 GB above the loaded model,
or more than about a minute on a 2-core machine, unless the user asked for it with an
explicit option. Each bound below is read by the library function where the size is
known (so the library, the command line and the lab refuse alike, before the work
starts, with one :class:`~contextlens.errors.LimitError` line naming the bound and what
to do), or is the size of the pieces work is done in (memory then stays flat however
large the input). The lab's per-request limits (:mod:`contextlens.web.limits`) sit below
these; the command line's options take their caps from here.

This module imports nothing heavy: the command line reads it at start-up.
"""

from __future__ import annotations

__all__ = [
    "MAX_PREDICTIONS", "MAX_TRACKED", "MAX_LM_PIECES", "LM_CACHE_BYTES", "LM_LENS_ROWS",
]

# -- language models (encoders/lm.py: predict, lens) ----------------------------------------
#: best words asked of ``predict`` / ``lens`` (-k): each is a word of the answer
MAX_PREDICTIONS = 1000
#: words one lens run tracks (--track): each costs a full-vocabulary pass per layer and piece
MAX_TRACKED = 100
#: pieces of context a language model reads (predict, lens): one forward pass over them,
#: whose time grows with their number (and the model's own maximum may be lower)
MAX_LM_PIECES = 2048
#: bytes of the context's key/value cache copied for the continuations run together
#: (the next-word search's paths, the tracked words): more continuations, fewer at a time
LM_CACHE_BYTES = 256 << 20
#: rows (positions) put through the unembedding at once under the lens: rows x vocabulary
#: float64 logits (256 x 49,152 x 8 B = 96 MiB for SmolLM2)
LM_LENS_ROWS = 256
