"""How to read an encoder's figures: what a causal model's figures mean, and its default layer.

A causal encoder (``Encoder.causal``: a causal LM such as SmolLM2, or self-attention with
``causal=True``) computes each word's vector from the words before it only. Each figure of
the word's vector then means something narrower than it does for a model that reads both
sides, said in one sentence per figure (:data:`CAUSAL_NOTES`), and its last layers are the
model's guess of the *next* word rather than the word itself, so it is read by default a
third of the way up (:func:`default_layer`).

>>> from contextlens.encoders.mixing import SelfAttention
>>> from contextlens.vectors import EmbeddingTable
>>> table = EmbeddingTable(["bank", "river"], [[1.0, 0.0], [0.0, 1.0]])
>>> guide = reading_guide(SelfAttention(table, causal=True, n_layers=3))
>>> guide["causal"], guide["default_layer"], sorted(guide["notes"])
(True, 1, ['attention', 'attributions', 'neighbours', 'occlusion', 'patch', 'usages'])
>>> reading_guide(SelfAttention(table, n_layers=3))
{'causal': False, 'default_layer': 3, 'notes': {}}
"""

from __future__ import annotations

from typing import Any

from ..encoders.base import Encoder

__all__ = ["CAUSAL_NOTES", "CAUSAL_DEPTH", "default_layer", "reading_guide"]

#: one sentence per figure of a word's vector, for a causal encoder
CAUSAL_NOTES = {
    "usages": "A causal model computes a word's vector from the words before it only, so two sentences that "
              "agree up to the word give it the same vector, whatever follows.",
    "attention": "A causal model lets each word attend only to itself and the words before it: the weights "
                 "on later words are zero by its mask, not by choice.",
    "occlusion": "Only the words before the word can move a causal model's vector of it: leaving out a later "
                 "word changes nothing, so the correlations are taken over the earlier words only.",
    "attributions": "A causal model's word sees only the words before it, so only those are scored; "
                    "each method is also set against the drop in the log-probability of the predicted next "
                    "word when the other word is left out.",
    "patch": "A causal model's patched word changes only what comes after it: besides the cosines, the card "
             "lists the next words after each patched run and how the donor's best next words moved.",
    "neighbours": "A causal model's last layers hold its guess of the next word more than the word itself, "
                  "so its neighbours are read by default a third of the way up, where they are most about "
                  "the word.",
}
#: where a causal model's neighbours are most about the word, as a share of its depth (see default_layer)
CAUSAL_DEPTH = 1 / 3


def default_layer(encoder: Encoder) -> int:
    """The layer number a word's figures are read at by default: the last layer, or for a
    causal encoder the layer at :data:`CAUSAL_DEPTH` of its depth (rounded down; at least 1).

    Measured for SmolLM2 (30 layers) with ``python benchmarks/neighbour_layers.py --models
    smollm2,minilm``: 100 usages of the 20 nouns of CoarseWSD-20, the 20,000 reference words
    each after a line break. The word itself is among its usage's 10 nearest reference words
    for every usage from layer 3 to 14, then fewer (0.84 at layer 21, 0.58 at 26, 0.06 at 30);
    its 10 neighbours are most related to it by GloVe's cosine at layers 9 and 10 (0.40; 0.26
    at layer 30; 0.13 for random reference words); the reference's WordSim-353 Spearman
    stays 0.52-0.55 from layer 5 to 21 and falls to 0.24 at 30. Layer 10, a third of the way
    up, is at the top of all three. MiniLM (6 layers, reads both sides) keeps every figure
    flat to its last layer (the word itself always first-ten; related 0.43-0.48), so the
    last stays its default.
    """
    ids = encoder.layer_ids
    if not encoder.causal or len(ids) < 3:
        return ids[-1]
    return ids[max(1, int(CAUSAL_DEPTH * (len(ids) - 1)))]


def reading_guide(encoder: Encoder) -> dict[str, Any]:
    """``{causal, default_layer, notes}``: whether ``encoder`` is causal, the layer its figures
    are read at by default, and what each figure means (``notes``: figure -> one sentence;
    empty for an encoder that reads both sides of a word)."""
    causal = bool(encoder.causal)
    return {"causal": causal, "default_layer": default_layer(encoder),
            "notes": dict(CAUSAL_NOTES) if causal else {}}
