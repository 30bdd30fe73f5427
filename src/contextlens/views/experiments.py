"""The views of an experiment, chosen once: what ``contextlens attention --html`` writes and
the lab's attention card shows.

The attention of one sentence is three views: the head view at a layer, the model view
(every layer × head, the chosen word's lines) and, when the encoder gives its queries and
keys (:attr:`~contextlens.encoders.base.Encoder.has_attention_parts`), the neuron view of
the chosen word at that layer. The other experiments have one view each and the callers
build it directly (``layers_view(layer_divergence(...))``, ``senses_view(senses(...), texts)``).

>>> from contextlens.analysis.toy import COURSE_VECTORS, toy_table
>>> from contextlens.encoders.mixing import SelfAttention
>>> [v.kind for v in attention_views(SelfAttention(toy_table(COURSE_VECTORS)), "bank loan river", "bank")]
['head', 'model', 'neuron']
"""

from __future__ import annotations

from .attention import head_view, model_view
from .base import View
from .neuron import neuron_view

__all__ = ["attention_views"]


def attention_views(encoder, text: str, word: str | int | None = None, *, layer: int | None = -1,
                    head: int | None = None, occurrence: int | None = None) -> list[View]:
    """The head view (``layer``: a contextual layer number, None or -1 the last; ``head``:
    one head, None the mean of the heads), the model view of ``word`` and, where the
    encoder has queries and keys, the neuron view of ``word`` and ``head`` (default 0) at
    ``layer``. Sub-word pieces and special tokens are included where the encoder has them."""
    layer = -1 if layer is None else layer
    enc = encoder.encode([text])[0]
    index = enc.attention_index(layer)
    parts = encoder.attention_parts(text) if encoder.has_attention_parts else None
    where = {} if occurrence is None else {"occurrence": occurrence}
    out = [head_view(enc, parts, layer=layer, heads="mean" if head is None else [head]),
           model_view(enc, parts, word=word, **where)]
    if parts is not None:
        out.append(neuron_view(parts[index], head=head or 0, word=word, occurrence=occurrence or 0))
    return out
