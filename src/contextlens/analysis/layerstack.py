"""Every layer's vector of many words in their sentences, through the evaluation cache.

:func:`cached_layers` asks :class:`~contextlens.encoders.encoding_cache.EncodingCache` for
``(tokens, index)`` items one shard (:data:`~contextlens.encoders.encoding_cache.SHARD` items) at a time,
the shards a whole call would make, and copies each into one ``(layers, items, dim)`` array
kept in the cache's precision (float16 for a model): 40,000 words of a 30-layer, 576-dim
model take 1.4 GB instead of the 2.9 GB a whole float32 read would hold. A word the encoder
has no vector for is a row of NaN. The probes and CKA read their words this way, so a
second task or a second model pair finds them encoded. The reading (or encoding) is one
progress step (:func:`contextlens.progress.step`), counted in words.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import EmptyInputError
from ..progress import step

__all__ = ["cached_layers"]


def cached_layers(cache, task: str, items: Sequence[tuple[Sequence[str], int]], *,
                  what: str = "encoding the words") -> np.ndarray:
    """``(layers, len(items), dim)`` in ``cache.dtype``: the vector of ``tokens[index]`` at
    every layer of ``cache.layer_ids``, read from (or encoded into) ``cache`` under ``task``,
    reported as the progress step ``what``."""
    from ..encoders.encoding_cache import SHARD

    items = list(items)
    if not items:
        raise EmptyInputError(f"no words to encode for {task}")
    out = None
    once = f"once, then cached in {cache.root}" if cache.enabled else None
    with step(what, total=len(items), unit="words", once=once) as s:
        for start in range(0, len(items), SHARD):
            chunk = cache.targets(task, items[start : start + SHARD],  # (n, layers, dim) float32
                                  progress=lambda done, _n, start=start: s.update(start + done))
            if out is None:
                out = np.empty((chunk.shape[1], len(items), chunk.shape[2]), dtype=cache.dtype)
            out[:, start : start + len(chunk)] = chunk.transpose(1, 0, 2)
    return out
