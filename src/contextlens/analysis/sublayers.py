"""Where context enters a word: its vector after the attention block and after the feed-forward
block of every layer, in one text or two.

A transformer layer is two blocks; the stage after each is named as everywhere in contextlens
(:mod:`contextlens.encoders.blocks`): ``attention`` (the attention block's output as the model
computes it: after the residual add, and after the block's LayerNorm in post-LN BERT and MPNet; in
pre-LN Llama-style models the residual stream after the attention add, with no norm) and ``ffn``
(the feed-forward block's output, which is the layer's output: the ``ffn`` rows are the layers
:func:`~contextlens.analysis.incontext.compare` reports). A word's vector is the pooling of its
pieces (the mean, unless the encoder pools otherwise), as everywhere.

Per layer and stage: how far the block moved the word, as the cosine distance ``1 − cos`` between
its vector before the block (the layer's input, or the ``attention`` stage) and after it, and the
norm of that change (``update_norm``); with two texts, the cosine between the two usages after
each block, and the block where it fell most. The training-free encoders (neighbour averaging,
toy self-attention) have one attention stage per layer and no feed-forward block: their rows say
so (``after: "attention"`` only), none is invented.

>>> from contextlens.analysis.toy import COURSE_VECTORS, toy_table
>>> from contextlens.encoders.mixing import SelfAttention
>>> r = sublayers(SelfAttention(toy_table(COURSE_VECTORS)), "bank loan", "bank river", "bank")
>>> r["stages"], [(x["layer"], x["after"]) for x in r["rows"]], r["largest_drop"]["after"]
(['attention'], [(1, 'attention')], 'attention')
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..encoders.base import Encoder
from ..errors import InputError
from ..text import locate, tokenize
from ..vectors import cosine
from .occlusion import cosine_distance

__all__ = ["sublayers", "block_rows", "largest_drop"]

log = logging.getLogger(__name__)
NO_FFN = ("{name} has one attention stage per layer and no feed-forward block: each layer's output is "
          "its attention stage")


def block_rows(before: np.ndarray, after: np.ndarray) -> tuple[list[float], list[float]]:
    """How far one block moved each usage: ``(moved, update_norm)``, the cosine distance and the
    norm of the difference between each row of ``before`` and of ``after`` (``(usages, dim)``).

    >>> block_rows(np.array([[1.0, 0.0]]), np.array([[0.0, 2.0]]))
    ([1.0], [2.23606797749979])
    """
    moved = cosine_distance(before, after)
    norms = np.linalg.norm(np.asarray(after, np.float64) - np.asarray(before, np.float64), axis=-1)
    return [float(m) for m in moved], [float(x) for x in norms]


def largest_drop(rows: list[dict[str, Any]], start: float | None) -> dict[str, Any] | None:
    """The block after which the two usages' cosine fell most (from ``start``, the cosine before
    the first block), or None with one usage.

    >>> rows = [{"layer": 1, "after": "attention", "cosine": 0.75},
    ...         {"layer": 1, "after": "ffn", "cosine": 0.25}]
    >>> largest_drop(rows, 1.0)
    {'layer': 1, 'after': 'ffn', 'drop': 0.5}
    """
    if start is None or not rows:
        return None
    best, before = None, start
    for r in rows:
        drop = before - r["cosine"]
        if best is None or drop > best["drop"]:
            best = {"layer": r["layer"], "after": r["after"], "drop": drop}
        before = r["cosine"]
    return best


def _usages(encoder: Encoder, texts: list[str], word: str, occurrences) -> list[tuple[np.ndarray, list[str]]]:
    """Per text ``(states, stages)``: the word's vector before the first block and after each
    block, ``(1 + layers · stages, dim)``, from the transformer's modules or the Encoding."""
    from ..encoders import blocks

    try:
        model = blocks.internals(encoder)
    except blocks.NotATransformerError:
        model = None
    out = []
    for text, occ in zip(texts, occurrences):
        words = tokenize(text)
        position = locate(words, word, occurrence=occ)
        if model is None:
            enc = encoder.encode([text])[0]
            if enc.n_layers == 0:
                kind = encoder.params().get("encoder", "this encoder")
                raise InputError(f"{kind} has no layers after the static row to look inside; use a "
                                 "transformer model or a mixing method (attention, average)")
            i = enc.find(span=(words[position].start, words[position].end))
            out.append((enc.layers[:, i].astype(np.float64), ["attention"]))
            continue
        pieces = blocks.read_pieces(model, text)
        mine = pieces.word_pieces[position]
        if not mine:
            raise InputError(f"{model.name}'s tokenizer gives {word!r} no piece in {text!r}; choose another "
                             "word")
        cap = blocks.capture(model, pieces)
        pool = blocks.pool_pieces
        stack = [pool(cap.embedding, mine, model.pooling)]
        for k in range(model.n_layers):
            stack += [pool(cap.attention[k], mine, model.pooling), pool(cap.ffn[k], mine, model.pooling)]
        out.append((np.stack(stack).astype(np.float64), list(blocks.STAGES)))
    return out


def sublayers(encoder: Encoder, text1: str, text2: str | None = None, word: str | None = None, *,
              occurrences: tuple[int | None, int | None] = (None, None)) -> dict[str, Any]:
    """``word`` after the attention block and after the feed-forward block of every layer, in
    ``text1`` (and ``text2``).

    Returns ``{model, word, sentences, stages, start, rows, largest_drop, note, encoder}``:
    ``rows`` lists ``{layer, layer_name, after, cosine, moved, update_norm}`` in the model's order
    (layer 1's ``attention``, layer 1's ``ffn``, layer 2's...), ``moved`` and ``update_norm`` one
    value per text (how far that block moved the word: cosine distance, norm of the change),
    ``cosine`` the cosine between the two usages after the block (None with one text); ``start``
    the same for the word as the first block reads it (``{cosine}``: the embedding output of a
    transformer, the static row otherwise); ``largest_drop`` the block where the cosine fell most.
    """
    if not isinstance(text1, str) or (text2 is not None and not isinstance(text2, str)):
        raise InputError("give one or two texts (strings): sublayers(encoder, text1, text2, word)")
    if not isinstance(word, str) or not word.strip():
        raise InputError("give the word to follow: sublayers(encoder, text1, text2, word='bank')")
    texts = [text1] if text2 is None else [text1, text2]
    states = _usages(encoder, texts, word, list(occurrences)[: len(texts)])
    stages = states[0][1]
    stacks = np.stack([s for s, _ in states])  # (texts, 1 + layers · stages, dim)
    n_layers = (stacks.shape[1] - 1) // len(stages)
    layer_ids = list(encoder.layer_ids[1:]) if len(encoder.layer_ids) - 1 == n_layers else list(
        range(1, n_layers + 1))
    two = len(texts) == 2
    rows = []
    for j in range(1, stacks.shape[1]):
        layer = layer_ids[(j - 1) // len(stages)]
        moved, norms = block_rows(stacks[:, j - 1], stacks[:, j])
        rows.append({"layer": layer, "layer_name": f"layer {layer}", "after": stages[(j - 1) % len(stages)],
                     "cosine": cosine(stacks[0, j], stacks[1, j]) if two else None,
                     "moved": moved, "update_norm": norms})
    start = {"cosine": cosine(stacks[0, 0], stacks[1, 0]) if two else None,
             "name": "embedding output" if len(stages) == 2 else "static row"}
    params = encoder.params()
    name = str(params.get("model") or params.get("encoder"))
    log.info("sublayers of %r in %d text(s) with %s", word, len(texts), name)
    return {"model": name, "word": word, "sentences": texts, "stages": stages, "start": start, "rows": rows,
            "largest_drop": largest_drop(rows, start["cosine"]),
            "note": None if len(stages) == 2 else NO_FFN.format(name=name), "encoder": params}
