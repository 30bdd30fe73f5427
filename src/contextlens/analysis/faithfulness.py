"""Attributions beside attention, and how faithful each is: for a word and each other word of its
sentence, one score per method and layer, and per layer each method's Spearman correlation with
occlusion (leaving the other word out).

The methods (:data:`METHODS`; :data:`DEFINITIONS` states each in one line, as JSON carries it):

- ``raw``: the attention the word gave the other word at the layer, mean over heads (a word's row
  is the mean of its pieces' rows, a word's column the sum of its pieces' columns: the Encoding's
  word attention);
- ``rollout``: attention rollout up to the layer (Abnar & Zuidema 2020;
  :func:`~contextlens.analysis.attribution.attention_rollout`, residual ``0.5·I + 0.5·A``);
- ``flow``: attention flow up to the layer (Abnar & Zuidema 2020, the same graph as a maximum flow;
  :mod:`~contextlens.analysis.flow`);
- ``norm``: ‖Σ_h α^h f^h(x_j)‖, the norm of the weighted, value-transformed and output-projected
  vectors (Kobayashi et al. 2020, "Attention is Not Only a Weight", EMNLP), at the word level the
  target pieces' mean and the other word's pieces' sum before the norm;
- ``value-zeroing``: the cosine distance of the word's output of the layer when the other word's
  value vectors are zeroed in that layer only (Mohebbi et al. 2023, "Quantifying Context Mixing in
  Transformers", EACL), normalised over every word and the special tokens to sum to 1, as the
  paper's score matrix;
- ``grad-input``, ``ig``: gradient × input and integrated gradients (Sundararajan et al. 2017) of
  the word's layer-L vector projected on its unchanged direction, with respect to the input
  embedding rows; a word's score is the norm of its pieces' summed attribution vectors; integrated
  gradients at ``steps`` points from a baseline where every word's rows are the embedding matrix's
  mean row (:mod:`contextlens.encoders.gradients`).

``occlusion`` (:func:`~contextlens.analysis.occlusion.occlusion_vs_attention`) is the reference:
how far the word's vector at each layer moves (cosine distance) when the other word is left out of
the text. ``raw``, ``norm`` and ``value-zeroing`` score one layer's mixing; ``rollout``, ``flow``, the
gradients and occlusion everything up to the layer. For a causal LM the word sees only the words
before it, so only those are scored, and each method is also correlated with the drop in the
log-probability of the model's predicted next piece after the word when the other word is left out.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
from scipy.special import log_softmax

from ..encoders.base import Encoder
from ..encoders.models import NoLMHeadError
from ..errors import InputError, check_choice, check_int
from ..text import tokenize
from .flow import attention_flow
from .occlusion import _spearman, cosine_distance, occlude, occlusion_vs_attention

__all__ = ["attributions", "METHODS", "DEFINITIONS", "parse_methods", "word_scores", "MAX_WORDS"]

log = logging.getLogger(__name__)
METHODS = ("raw", "rollout", "flow", "norm", "value-zeroing", "grad-input", "ig")
ATTENTION_ONLY = ("raw", "rollout", "flow")  # need only the Encoding's attention: any encoder with weights
MAX_WORDS = 64  # words of a sentence these explanations take (flow: one max-flow per word and layer)
DEFINITIONS = {
    "occlusion": "cosine distance of the word's vector at the layer when the other word is left out of the "
                 "text",
    "raw": "attention the word gave the other word at the layer, mean over heads",
    "rollout": "attention rollout up to the layer (Abnar & Zuidema 2020), residual 0.5·I + 0.5·A",
    "flow": "attention flow up to the layer (Abnar & Zuidema 2020): max-flow over the residual-augmented "
            "attention graph, capacities scaled by 10^6 to integers",
    "norm": "||Σ_h α_h f_h(x)||, the norm of the weighted, value-transformed, output-projected vectors "
            "(Kobayashi et al. 2020) at the layer",
    "value-zeroing": "cosine distance of the word's layer output when the other word's value vectors are "
                     "zeroed in that layer (Mohebbi et al. 2023), normalised over all words and the special "
                     "tokens",
    "grad-input": "||Σ_pieces ∂f/∂e ⊙ e||, f = the word's layer-L vector projected on its unchanged "
                  "direction, e = the input embedding rows",
    "ig": "||Σ_pieces integrated gradients||, same f, baseline: every word's input rows replaced by the mean "
          "row of the embedding matrix (special tokens kept), midpoint rule",
}


def parse_methods(methods) -> list[str]:
    """``"all"``, one method, a comma list or a list of methods → the methods, in :data:`METHODS` order.

    >>> parse_methods("ig,raw"), parse_methods("all")[:3]
    (['raw', 'ig'], ['raw', 'rollout', 'flow'])
    >>> parse_methods("gradient")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.UnknownOptionError: unknown method 'gradient' (did you mean 'grad-input'?); valid ...
    """
    items = methods.split(",") if isinstance(methods, str) else list(methods)
    chosen = {check_choice("method", m.strip(), ("all", *METHODS)) for m in items if str(m).strip()}
    if not chosen:
        raise InputError(f"choose at least one method: all, {', '.join(METHODS)}")
    return list(METHODS) if "all" in chosen else [m for m in METHODS if m in chosen]


def word_scores(vectors: np.ndarray, groups: list[tuple[int, ...]]) -> np.ndarray:
    """Per group of pieces, the norm of the sum of their vectors: ``vectors`` ``(..., T, dim)`` →
    ``(..., groups)`` (a word's attribution is its pieces' summed attribution vector, then its norm).

    >>> word_scores(np.array([[3.0, 0.0], [0.0, 4.0], [1.0, 1.0]]), [(0, 1), (2,)]).round(4).tolist()
    [5.0, 1.4142]
    """
    v = np.asarray(vectors, dtype=np.float64)
    return np.stack([np.linalg.norm(v[..., list(g), :].sum(-2), axis=-1) for g in groups], -1)


def _others(n_words: int, i: int, causal: bool) -> list[int]:
    return [j for j in range(n_words) if j != i and (not causal or j < i)]


def attributions(encoder: Encoder, text: str, word: str, *, methods="all", occurrence: int | None = None,
                 steps: int = 32) -> dict[str, Any]:
    """Every method's score for each other word of ``text`` toward ``word``, every layer, and each
    method's Spearman correlation with occlusion per layer (see the module notes).

    Returns ``{model, sentence, word, index, causal, methods, unavailable, context, layer_ids,
    layer_names, layers, definitions, encoder}`` and, for a causal LM, ``next_word``: ``context``
    lists the other words ``{word, position}`` (positions among the Encoding's words); ``layers``
    one entry per contextual layer ``{layer, layer_name, occlusion, scores: {method: [...]},
    spearman: {method: rho}}`` (lists in the order of ``context``; ``next_word_spearman`` too for a
    causal LM); ``unavailable`` the methods asked for that this encoder cannot give, with why;
    ``next_word`` ``{piece, log_probability, drop}`` (the predicted next piece after the word, and
    the drop of its log-probability when each context word is left out); with ``ig``,
    ``ig_completeness`` per layer ``{layer, sum, difference}``: the integrated gradients of every
    piece added up, beside ``f(x) − f(baseline)`` they should add up to (a gap: too few steps). A
    correlation that is undefined (a constant column, fewer than two words) is None.
    """
    chosen = parse_methods(methods)
    if not isinstance(text, str) or not text.strip():
        raise InputError("give a sentence (a non-empty string) to explain a word in")
    n_words = len(tokenize(text))
    if n_words > MAX_WORDS:
        raise InputError(f"the text has {n_words} words; attributions take at most {MAX_WORDS}: give a "
                         "shorter sentence")
    steps = check_int("steps", steps, low=1, high=256, hint="points of the integrated-gradients integral")
    occ = occlusion_vs_attention(encoder, text, word, occurrence=occurrence)
    full = encoder.encode([text])[0]
    i = occ["index"]
    model = _internals(encoder, chosen)
    causal = bool(model is not None and model.causal)
    others = _others(len(full.words), i, causal)
    if not others:
        raise InputError(f"{word!r} has no word before it to attribute to; a causal model sees only the "
                         "words before a word: choose a later word")
    keep = [occ["others"].index({"word": full.words[j].text, "position": j}) for j in others]
    per_layer: dict[str, np.ndarray] = {}  # method -> (layers, others)
    if "raw" in chosen:
        per_layer["raw"] = np.array([np.asarray(x["attention"])[keep] for x in occ["layers"]])
    if "rollout" in chosen:
        per_layer["rollout"] = np.array([np.asarray(x["rollout"])[keep] for x in occ["layers"]])
    if "flow" in chosen:
        per_layer["flow"] = attention_flow(full.attention, i, full.special_attention)[:, others]
    unavailable = {}
    needs_model = [m for m in chosen if m not in ATTENTION_ONLY]
    if needs_model and model is None:
        unavailable = {m: "reads a transformer's modules; this encoder has none" for m in needs_model}
    elif needs_model:
        per_layer.update(_model_scores(model, encoder, text, full, i, others, needs_model, steps))
    check = per_layer.pop("ig-check", None)  # (layers, 2): the attributions' sum, f(x) - f(baseline)
    layers = []
    for n, x in enumerate(occ["layers"]):
        effect = np.asarray(x["occlusion"])[keep]
        scores = {m: per_layer[m][n].tolist() for m in chosen if m in per_layer}
        layers.append({"layer": x["layer"], "layer_name": x["layer_name"], "occlusion": effect.tolist(),
                       "scores": scores, "spearman": {m: _spearman(effect, s) for m, s in scores.items()}})
    out = {"model": occ["encoder"].get("model") or occ["encoder"].get("encoder"), "sentence": text,
           "word": occ["word"], "index": i, "causal": causal,
           "methods": [m for m in chosen if m in per_layer], "unavailable": unavailable,
           "context": [{"word": full.words[j].text, "position": j} for j in others],
           "layer_ids": [x["layer"] for x in layers], "layer_names": [x["layer_name"] for x in layers],
           "layers": layers, "steps": steps,
           "definitions": {m: DEFINITIONS[m] for m in ("occlusion", *chosen)}, "encoder": occ["encoder"]}
    if check is not None:  # completeness of integrated gradients: how well the integral was resolved
        out["ig_completeness"] = [{"layer": x["layer"], "sum": float(a), "difference": float(b)}
                                  for x, (a, b) in zip(layers, check)]
    if causal:
        try:
            out["next_word"] = _next_word_drop(encoder, text, full, i, others)
        except NoLMHeadError as e:  # a causal model saved without its head: no next word to score
            out["next_word"], unavailable["next_word"] = None, str(e)
    if out.get("next_word"):
        drop = out["next_word"]["drop"]
        for x in layers:
            x["next_word_spearman"] = {"occlusion": _spearman(drop, x["occlusion"]),
                                       **{m: _spearman(drop, s) for m, s in x["scores"].items()}}
    log.info("attributions of %r: %s", out["word"],
             {m: [x["spearman"][m] for x in layers] for m in out["methods"]})
    return out


def _internals(encoder: Encoder, chosen: list[str]):
    """The transformer's modules, or None for an encoder that has none (then only the attention
    methods apply: asking for another by name is an error, ``all`` leaves them out, saying so)."""
    from ..encoders import blocks

    try:
        model = blocks.internals(encoder)
    except blocks.NotATransformerError:
        bad = [m for m in chosen if m not in ATTENTION_ONLY]
        if bad and len(chosen) < len(METHODS):
            raise InputError(f"{', '.join(bad)} read{'s' if len(bad) == 1 else ''} a transformer's modules; "
                             f"{encoder.params().get('encoder')} has none: use "
                             f"{', '.join(ATTENTION_ONLY)} or a transformer model") from None
        return None
    if tuple(encoder.layer_ids) != tuple(range(model.n_layers + 1)):
        raise InputError(f"attributions follow every layer; this encoder keeps layers "
                         f"{list(encoder.layer_ids)} of {model.name}'s {model.n_layers}: make it with every "
                         "layer (layers=None)")
    return model


def _model_scores(model, encoder, text: str, full, i: int, others: list[int], methods: list[str],
                  steps: int) -> dict[str, np.ndarray]:
    """The methods that read the transformer's modules, each ``(layers, others)``."""
    from ..encoders import blocks

    pieces = blocks.read_pieces(model, text)
    kept = pieces.kept  # tokenize() indices of the Encoding's words, in order
    if len(kept) != len(full.words):
        raise InputError(f"{model.name} and the encoder cut {text!r} differently; use one model")
    groups = [pieces.word_pieces[w] for w in kept]  # per Encoding word, its pieces
    target = groups[i]
    rows = {"first": target[:1], "last": target[-1:]}.get(model.pooling, target)
    out: dict[str, np.ndarray] = {}
    if "norm" in methods:
        vectors, _ = blocks.norm_contributions(model, pieces, rows)  # (layers, rows, T, dim)
        out["norm"] = word_scores(vectors.mean(1), [groups[j] for j in others])
    if "value-zeroing" in methods:
        zgroups = groups + ([pieces.special] if pieces.special else [])
        zeroed = blocks.value_zeroing(model, pieces, zgroups)  # (layers, groups, T, dim)
        cap = blocks.capture(model, pieces)
        dist = []  # (layers, groups): how far zeroing each group's values moves the word's layer output
        for k in range(model.n_layers):
            kept = blocks.pool_pieces(cap.ffn[k], target, model.pooling)[None]  # (1, dim)
            moved = blocks.pool_pieces(zeroed[k], target, model.pooling)  # (groups, dim)
            dist.append(cosine_distance(np.repeat(kept, len(zgroups), 0), moved))
        dist = np.stack(dist)
        total = dist.sum(1, keepdims=True)
        out["value-zeroing"] = np.divide(dist, total, out=np.zeros_like(dist), where=total > 0)[:, others]
    if "grad-input" in methods or "ig" in methods:
        from ..encoders.gradients import gradient_scores

        g = gradient_scores(model, pieces, target, steps=steps, integrated="ig" in methods)
        if "ig" in methods:
            out["ig-check"] = np.stack([g.integrated.sum(axis=(1, 2)), g.target - g.baseline_target], 1)
        if "grad-input" in methods:
            out["grad-input"] = word_scores(g.grad_input, [groups[j] for j in others])
        if "ig" in methods:
            out["ig"] = word_scores(g.integrated, [groups[j] for j in others])
    return out


def _next_word_drop(encoder: Encoder, text: str, full, i: int, others: list[int]) -> dict[str, Any]:
    """The causal LM's predicted next piece after word ``i`` and the drop of its log-probability when
    each of ``others`` is left out of the text up to that word."""
    from ..encoders import blocks

    model = blocks.internals(encoder, head=True)
    prefix = text[: full.words[i].end]
    words = tokenize(prefix)
    where = {(w.start, w.end): p for p, w in enumerate(words)}
    texts = [prefix] + [occlude(prefix, where[(full.words[j].start, full.words[j].end)])[0] for j in others]
    logp = [log_softmax(blocks.next_logits(model, model.tokenizer(t, add_special_tokens=True)["input_ids"])
                        .astype(np.float64)) for t in texts]
    best = int(np.argmax(logp[0]))
    drop = [float(logp[0][best] - lp[best]) for lp in logp[1:]]
    return {"piece": model.tokenizer.convert_ids_to_tokens([best])[0],
            "log_probability": float(logp[0][best]), "drop": drop,
            "rule": "the most probable next piece after the word; drop = log p(piece | text up to the word) "
                    "- log p(piece | the same without the context word)",
            "defined": all(math.isfinite(d) for d in drop)}
