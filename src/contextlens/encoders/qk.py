"""Queries and keys: the arithmetic behind every attention weight of one layer.

A weight is ``softmax_j(q_i·k_j · scale + bias_ij)`` over the keys ``j`` word ``i`` may
attend to; the others get a score of −∞, so exactly 0 weight. :class:`AttentionParts`
holds each piece of that sum for one layer and all its heads (the queries, the keys, the
scale, any bias, the mask) next to the weights the encoder itself computed, so the neuron
view can show every step and a test can check that they give the encoder's weights back.

The parts are read at the level where the encoder attends: the words of a training-free
:class:`~contextlens.encoders.mixing.SelfAttention`, the sub-word pieces (special tokens
included) of a transformer. For a transformer, :func:`transformer_parts` records what the
attention module of each asked layer receives (a forward pre-hook: hidden states, mask,
MPNet's relative position bias, Llama's rotary cos/sin) and computes q and k with that
module's own projection weights, as its ``forward`` does (:data:`MODEL_TYPES`). When the model
runs on its ONNX export, :func:`standalone_parts` gives the same parts without torch: the
states each layer receives come from the export's run, and numpy computes q and k from the
model's safetensors weights (:mod:`contextlens.encoders.qk_numpy`: BERT, MPNet, Llama).

>>> x = np.array([[0.5, 0.5], [0.9, 0.1]])   # bank, loan on (finance, nature)
>>> parts = AttentionParts("bank loan", ("bank", "loan"), ((0,), (1,)), ("bank", "loan"), 1, "attention 1",
...                        x[None], x[None], 2 ** -0.5, np.ones((2, 2), bool), np.full((1, 2, 2), 0.5))
>>> parts.raw_scores()[0, 0].round(4).tolist(), parts.scores()[0, 0].round(4).tolist()  # bank·bank, bank·loan
([0.5, 0.5], [0.3536, 0.3536])
>>> parts.softmax()[0, 0].tolist()
[0.5, 0.5]
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..context.attention import softmax
from ..errors import DimensionError, InputError, check_int
from ..text import tokenize
from . import hooks
from .alignment import align_pieces
from .base import layer_position

__all__ = ["AttentionParts", "MODEL_TYPES", "pick_layers", "transformer_parts", "standalone_parts",
           "allowed_of", "MAX_PAD"]

MAX_PAD = 64  # padding tokens one may append to show the padding mask


@dataclass(frozen=True)
class AttentionParts:
    """What one layer's attention weights are made of, for every head.

    Attributes
    ----------
    text : the sentence.
    tokens : what attends: pieces (special tokens and padding included) or words.
    token_words : per token, the indices of the words (of ``words``) it covers; ``()``
        for a special token or padding.
    words : the words, as the sentence's Encoding has them (a word the encoder skipped,
        not in its table or given no piece, is not there).
    layer, layer_name : the layer number (as in ``Encoding.layer_ids``) and its name.
    queries, keys : ``(heads, tokens, d_head)``, what the scores are made of (after any
        rotary position embedding; a key head shared by several query heads is repeated).
    scale : multiplies ``q·k`` (``1/√d_head`` unless the encoder says otherwise).
    allowed : ``(tokens, tokens)`` bool, True = token ``i`` may attend to token ``j``.
    weights : ``(heads, tokens, tokens)``, the encoder's own attention weights.
    bias : ``(heads, tokens, tokens)`` added to the scaled scores (MPNet's relative
        positions), or None.
    token_ids : the vocabulary id of each token (None when the tokens are table words).
    padding : how many padding tokens end ``tokens`` (masked out as keys).
    """

    text: str
    tokens: tuple[str, ...]
    token_words: tuple[tuple[int, ...], ...]
    words: tuple[str, ...]
    layer: int
    layer_name: str
    queries: np.ndarray  # (heads, tokens, d_head)
    keys: np.ndarray  # (heads, tokens, d_head)
    scale: float
    allowed: np.ndarray  # (tokens, tokens) bool
    weights: np.ndarray  # (heads, tokens, tokens)
    bias: np.ndarray | None = None  # (heads, tokens, tokens)
    token_ids: tuple[int, ...] | None = None
    padding: int = 0

    def __post_init__(self) -> None:
        q, k = np.asarray(self.queries), np.asarray(self.keys)
        t = len(self.tokens)
        if q.ndim != 3 or q.shape != k.shape or q.shape[1] != t:
            raise DimensionError(f"queries and keys must both be (heads, {t} tokens, d_head), got {q.shape} "
                                 f"and {k.shape}")
        square = (q.shape[0], t, t)
        if np.shape(self.weights) != square or (self.bias is not None and np.shape(self.bias) != square):
            raise DimensionError(f"weights and bias must be {square}, got {np.shape(self.weights)}, "
                                 f"{None if self.bias is None else np.shape(self.bias)}")
        if np.shape(self.allowed) != (t, t) or np.asarray(self.allowed).dtype != bool:
            raise DimensionError(f"allowed must be a ({t}, {t}) boolean mask, got {np.shape(self.allowed)}")
        if len(self.token_words) != t or (self.token_ids is not None and len(self.token_ids) != t):
            raise DimensionError(f"token_words and token_ids need one entry per token ({t})")

    @property
    def heads(self) -> int:
        return int(self.queries.shape[0])

    @property
    def d_head(self) -> int:
        return int(self.queries.shape[2])

    @property
    def special(self) -> tuple[bool, ...]:
        """Per token: True for a special token or padding (it covers no word)."""
        return tuple(not ws for ws in self.token_words)

    def raw_scores(self) -> np.ndarray:
        """``(heads, tokens, tokens)``: ``q_i·k_j`` in float64."""
        q = np.asarray(self.queries, dtype=np.float64)
        return q @ np.asarray(self.keys, dtype=np.float64).transpose(0, 2, 1)

    def scores(self) -> np.ndarray:
        """``(heads, tokens, tokens)``: ``q_i·k_j · scale (+ bias)``, before the mask."""
        s = self.raw_scores() * self.scale
        return s if self.bias is None else s + np.asarray(self.bias, dtype=np.float64)

    def softmax(self, fill: float | None = None) -> np.ndarray:
        """``(heads, tokens, tokens)``: the weights recomputed from the parts. Masked scores
        are −∞ (``fill=None``: exactly 0 weight, what the encoder does) or ``fill`` (e.g.
        0, which lets weight leak to the masked positions)."""
        if fill is None:
            return softmax(self.scores(), mask=np.broadcast_to(self.allowed, self.weights.shape))
        return softmax(np.where(self.allowed, self.scores(), float(fill)))

    def token_of(self, word: str | int, occurrence: int = 0) -> int:
        """The first token of a word: its text (case-insensitive; ``occurrence`` counts from 0)
        or its index in ``words``."""
        if isinstance(word, str):
            hits = [i for i, w in enumerate(self.words) if w.lower() == word.lower()]
            if len(hits) <= occurrence:
                raise InputError(f"{word!r} (occurrence {occurrence}) is not in {self.text!r}; its words: "
                                 f"{', '.join(self.words)}")
            word = hits[occurrence]
        for t, ws in enumerate(self.token_words):
            if word in ws:
                return t
        raise InputError(f"word {word!r} has no token here; the words are 0..{len(self.words) - 1}: "
                         f"{', '.join(self.words)}")


def pick_layers(layer_ids: Sequence[int], layer_names: Sequence[str], layers) -> list[tuple[int, str]]:
    """``(layer number, name)`` of each asked contextual layer: ``layers`` is None (every
    layer after 0) or layer numbers (negative: from the top); layer 0 has no attention.

    >>> pick_layers((0, 1, 2), ("static", "attention 1", "attention 2"), [-1])
    [(2, 'attention 2')]
    """
    if layers is None:
        return list(zip(layer_ids[1:], layer_names[1:]))
    if isinstance(layers, int):
        layers = [layers]
    out = []
    for layer in layers:
        pos = layer_position(layer_ids, layer)
        if pos == 0:
            raise InputError(f"layer 0 is the static row: it has no queries and keys; choose one of "
                             f"{', '.join(map(str, layer_ids[1:]))}")
        out.append((layer_ids[pos], layer_names[pos]))
    return out


# ---- transformers -------------------------------------------------------------------------


def _bound(module, args, kwargs) -> dict:
    """The arguments a module's forward received, by name."""
    bound = inspect.signature(module.forward).bind_partial(*args, **kwargs)
    return {**{k: v for k, v in bound.arguments.items() if k != "kwargs"},
            **bound.arguments.get("kwargs", {})}


def _split(x, d: int):
    """``(batch, tokens, heads * d)`` → ``(batch, heads, tokens, d)``."""
    return x.view(*x.shape[:-1], -1, d).transpose(1, 2)


def _bert(module, inputs: dict):
    h, d = inputs["hidden_states"], module.attention_head_size
    return _split(module.query(h), d), _split(module.key(h), d), float(module.scaling), None


def _mpnet(module, inputs: dict):
    h, d = inputs["hidden_states"], module.attention_head_size
    return _split(module.q(h), d), _split(module.k(h), d), float(d) ** -0.5, inputs.get("position_bias")


def _llama(module, inputs: dict):
    h, d = inputs["hidden_states"], module.head_dim
    q, k = _split(module.q_proj(h), d), _split(module.k_proj(h), d)
    rotate = sys.modules[type(module).__module__].apply_rotary_pos_emb  # the model's own rotary code
    q, k = rotate(q, k, *inputs["position_embeddings"])
    return q, k.repeat_interleave(module.num_key_value_groups, dim=1), float(module.scaling), None


def _gpt2(module, inputs: dict):
    q, k, _ = module.c_attn(inputs["hidden_states"]).split(module.split_size, dim=2)
    return _split(q, module.head_dim), _split(k, module.head_dim), float(module.scaling), None


#: model type → (the self-attention module inside a layer block, how it makes q, k, scale, bias)
MODEL_TYPES = {
    "bert": ("attention.self", _bert),
    "mpnet": ("attention.attn", _mpnet),
    "llama": ("self_attn", _llama),
    "gpt2": ("attn", _gpt2),
}


def _allowed(mask, t: int) -> np.ndarray:
    """``(t, t)`` bool from the mask the module received: None (all allowed), boolean, or
    additive (0 where allowed, a huge negative number where not)."""
    if mask is None:
        return np.ones((t, t), dtype=bool)
    m = mask[0].detach().float().cpu().numpy() if mask.dtype.is_floating_point else mask[0].cpu().numpy()
    m = np.broadcast_to(m.reshape(-1, *m.shape[-2:])[0], (t, t))
    return m.copy() if m.dtype == bool else m > np.finfo(np.float32).min / 2


class _Pieces(NamedTuple):
    """A text's pieces as :class:`AttentionParts` holds them (``pad`` padding pieces at the end)."""

    ids: list[int]  # the text's own pieces, special tokens included
    tokens: tuple[str, ...]
    token_words: tuple[tuple[int, ...], ...]
    words: tuple[str, ...]
    token_ids: tuple[int, ...]


def _pieces(tokenizer, text: str, *, max_length: int, pad_id: int, pad: int) -> _Pieces:
    """``text``'s pieces by ``tokenizer`` (transformers' or the stand-alone one), aligned to its
    words as the Encoding keeps them, with ``pad`` padding pieces; checked to fit one window."""
    enc = tokenizer(text, add_special_tokens=True, return_offsets_mapping=True,
                    return_special_tokens_mask=True)
    ids, special = list(enc["input_ids"]), list(enc["special_tokens_mask"])
    if len(ids) + pad > max_length:
        raise InputError(f"{text[:40]!r}… has {len(ids)} pieces (+ {pad} padding); queries and keys are read "
                         f"from one window of at most {max_length} pieces: give a shorter text")
    words = tokenize(text)
    al = align_pieces(text, words, enc["offset_mapping"], special)
    # as the Encoding keeps them
    kept = {w: j for j, w in enumerate(w for w, ps in enumerate(al.word_pieces) if ps)}
    piece_words = tuple(tuple(kept[w] for w in ws) for ws in al.piece_words)
    return _Pieces(ids, tuple(tokenizer.convert_ids_to_tokens(ids)) + (tokenizer.pad_token or "[PAD]",) * pad,
                   piece_words + ((),) * pad, tuple(words[w].text for w in kept),
                   tuple(int(i) for i in ids) + (int(pad_id),) * pad)


def transformer_parts(model, tokenizer, blocks, text: str, layers: Sequence[int], names: Sequence[str], *,
                      max_length: int, pad_id: int, pad: int = 0) -> list[AttentionParts]:
    """:class:`AttentionParts` of ``text`` at each of ``layers`` (1-based layer numbers of
    ``blocks``, the model's layer list), from one forward pass of ``model`` (eager
    attention, so it returns its weights). ``pad`` padding pieces are appended, masked
    out as in a batch with a longer sentence."""
    import torch

    kind = model.config.model_type
    if kind not in MODEL_TYPES:
        raise InputError(f"reading queries and keys of a {kind!r} model is not supported; supported model "
                         f"types: {', '.join(MODEL_TYPES)}")
    pad = check_int("pad", pad, low=0, high=MAX_PAD)
    pieces = _pieces(tokenizer, text, max_length=max_length, pad_id=pad_id, pad=pad)
    ids = pieces.ids
    path, make = MODEL_TYPES[kind]
    store: dict[int, dict] = {}
    handles = []
    for k in layers:
        module = blocks[k - 1].get_submodule(path)
        def keep(m, args, kwargs, k=k):
            store[k] = _bound(m, args, kwargs)
        handles.append(hooks.place(module, keep, before=True))
    input_ids = torch.tensor([ids + [pad_id] * pad], device=model.device)
    mask = torch.tensor([[1] * len(ids) + [0] * pad], device=model.device)
    try:
        with torch.inference_mode():
            out = model(input_ids=input_ids, attention_mask=mask, output_attentions=True)
            if not out.attentions or out.attentions[0] is None:
                raise InputError("the model returns no attention weights; create the encoder with "
                                 "attention=True")
            t = len(ids) + pad
            result = []
            for k, name in zip(layers, names, strict=True):
                inputs = store[k]
                q, key, scale, bias = make(blocks[k - 1].get_submodule(path), inputs)
                result.append(AttentionParts(
                    text, pieces.tokens, pieces.token_words, pieces.words, int(k), name,
                    q[0].float().cpu().numpy(), key[0].float().cpu().numpy(), scale,
                    _allowed(inputs.get("attention_mask"), t), out.attentions[k - 1][0].float().cpu().numpy(),
                    None if bias is None else bias[0].float().cpu().numpy().copy(), pieces.token_ids, pad,
                ))
    finally:
        for h in handles:
            h.remove()
    return result


def allowed_of(real: int, pad: int, causal: bool) -> np.ndarray:
    """``(real + pad, real + pad)`` bool: which keys each token may attend to: the ``real``
    pieces (those up to itself when ``causal``), never the padding.

    >>> allowed_of(2, 1, causal=True).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 0]]
    """
    t = real + pad
    allowed = np.zeros((t, t), dtype=bool)
    allowed[:, :real] = True
    return np.tril(allowed) if causal else allowed


def standalone_parts(run, weights, tokenizer, text: str, layers: Sequence[int], names: Sequence[str], *,
                     max_length: int, pad_id: int, pad: int = 0) -> list[AttentionParts]:
    """:class:`AttentionParts` as :func:`transformer_parts` gives them, without torch: one run
    of the model's ONNX export (``run(ids, mask)`` → its hidden states and attention weights,
    numpy ``(1, T, dim)`` and ``(1, heads, T, T)``) gives the states each asked layer receives
    and its own weights; ``weights`` (:class:`~contextlens.encoders.qk_numpy.QKWeights`, read
    from the model's safetensors) turn those states into queries and keys."""
    from threadpoolctl import threadpool_limits

    pad = check_int("pad", pad, low=0, high=MAX_PAD)
    pieces = _pieces(tokenizer, text, max_length=max_length, pad_id=pad_id, pad=pad)
    real = len(pieces.ids)
    ids = np.array([list(pieces.token_ids)], dtype=np.int64)
    mask = np.array([[1] * real + [0] * pad], dtype=np.int64)
    states, attentions = run(ids, mask)
    allowed = allowed_of(real, pad, weights.spec.causal)
    result = []
    with threadpool_limits(limits=1, user_api="blas"):  # small products: waking BLAS threads cost ~20 ms each
        for k, name in zip(layers, names, strict=True):
            q, key, bias = weights.parts(k, states[k - 1][0])
            result.append(AttentionParts(text, pieces.tokens, pieces.token_words, pieces.words, int(k), name,
                                         q, key, weights.spec.scale, allowed.copy(),
                                         np.asarray(attentions[k - 1][0], dtype=np.float32), bias,
                                         pieces.token_ids, pad))
    return result
