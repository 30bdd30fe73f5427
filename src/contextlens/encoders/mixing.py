"""Training-free contextual encoders: neighbour averaging and toy self-attention.

Both look the words up in a table (layer 0, via :class:`StaticEncoder`) and then mix them
(layers 1..L), reporting their mixing weights as ``attention (n_layers, heads, n, n)``.
Neighbour averaging is attention with uniform weights; self-attention weighs each word
by ``softmax(q·k · scale)`` with ``q = k = v =`` the static rows unless projections are
given.

>>> from contextlens.vectors import EmbeddingTable
>>> table = EmbeddingTable(["sat", "bank", "river"], [[2, 0], [1, 1], [0, 4]], name="toy")
>>> enc = SelfAttention(table, include_self=False).encode_one("sat bank river")
>>> [round(float(x), 3) for x in enc.weights("bank")]
[0.196, 0.0, 0.804]
>>> NeighbourAverage(table).encode_one("sat bank river").vector("bank")
array([1., 2.], dtype=float32)
"""

from __future__ import annotations

import logging
import math
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..bounds import MAX_LAYERS
from ..context.attention import (
    causal_mask,
    check_scale,
    check_weights_size,
    check_window,
    exclude_self_mask,
    head_inputs,
    multi_head_attention,
    random_projections,
    sinusoidal_positions,
    window_mask,
)
from ..context.mixers import check_alpha, neighbour_average
from ..errors import DimensionError, InputError, check_bool, check_choice, check_int, numbered
from ..vectors import EmbeddingTable
from .base import Encoder, Encoding
from .qk import MAX_PAD, AttentionParts, pick_layers
from .static import StaticEncoder
from .targets import check_texts, keep_targets

__all__ = ["NeighbourAverage", "SelfAttention", "POSITIONS", "PROJECTIONS"]

log = logging.getLogger(__name__)

POSITIONS = ("sinusoidal",)
PROJECTIONS = ("random",)
MAX_D_HEAD = 4096  # query/key dims per head of random projections


def _sentence(enc: Encoding) -> str:
    return " ".join(enc.tokens)


class _Mixer(Encoder):
    """What both mixers share: the table lookup (layer 0) and the protocol around ``_mix``."""

    static: StaticEncoder
    layer_names: tuple[str, ...]

    @property
    def dim(self) -> int:
        return self.static.dim

    @property
    def layer_ids(self) -> tuple[int, ...]:
        return tuple(range(len(self.layer_names)))

    def static_vectors(self, words: Sequence[str]) -> np.ndarray:
        return self.static.static_vectors(words)

    @abstractmethod
    def _mix(self, base: Encoding) -> Encoding:
        """Layers 1.. of a looked-up sentence (``base`` has at least one word)."""

    #: (heads, layers of weights, bytes of float64 work arrays per head and word pair)
    _weights_shape: tuple[int, int, int]

    def _encode_texts(self, texts: list[str], chosen: list[list[int] | None]) -> list[Encoding]:
        out = []
        for i, (text, keep) in enumerate(zip(texts, chosen)):
            base = self.static.lookup(text, required=keep is None)
            heads, n_layers, work = self._weights_shape
            check_weights_size(len(base.words), n_layers, heads, work_bytes=work,
                               what=numbered("text", i, text),
                               todo=f"use a shorter text ({self.name} weighs every pair of words)")
            try:
                mixed = self._mix(base) if base.words else None
            except InputError as err:  # e.g. a lone known word with nothing to attend to
                if keep is None:
                    raise
                log.debug("no contextual vector in %r: %s", text, err)
                mixed = None
            if mixed is None:  # only targets were asked for, and they have no vector here
                empty = np.zeros((len(self.layer_names), 0, self.dim), dtype=np.float32)
                mixed = Encoding(text, [], empty, None, self.layer_names,
                                 {**base.meta, "encoder": self.name, "params": self.params()},
                                 source=base.source)
            out.append(keep_targets(mixed, text, keep))
        return out


class NeighbourAverage(_Mixer):
    """Layer 1 = ``α·e(w_i) + (1 − α)·mean of e(w_j)`` over ``|i − j| <= window``, ``j ≠ i``.

    ``window=None`` uses the whole sentence; ``static_kw`` (``lowercase``, ``oov``) go to
    :class:`StaticEncoder`. The uniform weights are reported as ``attention (1, 1, n, n)``.
    """

    name = "average"  # the method name of encoders.registry.make_encoder
    layer_names = ("static", "mixed")

    def __init__(self, table: EmbeddingTable, alpha: float = 0.0, window: int | None = None,
                 **static_kw):
        self.alpha = check_alpha(alpha)
        self.window = check_window(window)
        self.static = StaticEncoder(table, **static_kw)
        self.table = table
        self._weights_shape = (1, 1, 24)  # float64 weights, int64 distances, boolean masks

    def params(self) -> dict[str, Any]:
        return {**self.static.params(), "encoder": self.name, "alpha": self.alpha, "window": self.window}

    def _mix(self, base: Encoding) -> Encoding:
        x = base.layers[0].astype(np.float64)  # (words, dim)
        try:
            out, weights = neighbour_average(x, self.alpha, self.window)
        except InputError as err:
            raise InputError(f"in {_sentence(base)!r} (after the table lookup): {err}") from None
        layers = np.stack([x, out]).astype(np.float32)  # (2, words, dim)
        attention = weights[None, None].astype(np.float32)  # (1, 1, words, words)
        meta = {**base.meta, "encoder": self.name, "params": self.params()}
        return Encoding(base.text, base.words, layers, attention, self.layer_names, meta, source=base.source)


class SelfAttention(_Mixer):
    """Toy self-attention over the static rows, ``n_layers`` times, with no training.

    Parameters
    ----------
    table : the static vectors; ``static_kw`` (``lowercase``, ``oov``) go to StaticEncoder.
    include_self : may a word attend to itself.
    causal : a word attends only to itself and the words before it.
    window : attend only to words at most ``window`` positions away (None: all).
    positions : None, or ``"sinusoidal"``: position codes are added once, to the input of
        the first attention layer (layer 0 stays the plain table row).
    heads : number of heads; without value projections each head mixes its own slice of
        the dimensions (nearly equal slices when ``heads`` does not divide the table's dim;
        without query and key projections it must divide it).
    projections : None (``q = k = v =`` the inputs); ``"random"``: seeded random query
        and key projections of ``d_head`` dims per head, values unprojected so every layer
        stays in the table's space; or your own ``(w_q, w_k, w_v)``, each
        ``(heads, dim, d)`` or None, used in every layer (values must give back ``dim``).
    d_head : query/key dims per head for ``projections="random"`` (default
        ``max(1, dim // heads)``); the scale is ``1/√d_head``.
    scale : multiplies the scores instead of ``1/√d_k`` (0 gives uniform weights).
    n_layers : attention layers stacked, each reading the previous one's output.
    seed : seeds the random projections (layer ``l`` uses ``(seed, l)``).
    """

    name = "attention"  # the method name of encoders.registry.make_encoder
    has_attention_parts = True

    def __init__(
        self, table: EmbeddingTable, include_self: bool = True, causal: bool = False,
        window: int | None = None, positions: str | None = None, heads: int = 1,
        projections=None, d_head: int | None = None, scale: float | None = None,
        n_layers: int = 1, seed: int = 0, **static_kw,
    ):
        self.static = StaticEncoder(table, **static_kw)
        self.table = table
        self.include_self = check_bool("include_self", include_self)
        self.causal = check_bool("causal", causal)
        self.window = check_window(window)
        self.positions = None if positions is None else check_choice(
            "positions", positions, POSITIONS
        )
        self.heads = check_int("heads", heads, low=1, high=max(1, table.dim))
        self.n_layers = check_int("n_layers", n_layers, low=1, high=MAX_LAYERS)
        self.seed = check_int("seed", seed, low=0, high=2**32 - 1)
        self.d_head = None if d_head is None else check_int("d_head", d_head, low=1, high=MAX_D_HEAD)
        self.scale = check_scale(scale)
        self.projections = projections
        self._layer_weights = self._resolve_projections(table.dim)  # per layer (w_q, w_k, w_v)
        self.layer_names = ("static",) + tuple(f"attention {i}" for i in range(1, self.n_layers + 1))
        self._weights_shape = (self.heads, self.n_layers, 32)  # float64 scores, exp, weights; masks

    def _resolve_projections(self, dim: int) -> list[tuple]:
        proj = self.projections
        if isinstance(proj, str):
            check_choice("projections", proj, PROJECTIONS)
            layers = [random_projections(dim, self.heads, self.d_head, seed=(self.seed, i))[:2]
                      + (None,) for i in range(self.n_layers)]
        elif proj is None or isinstance(proj, tuple | list):
            if self.d_head is not None:
                raise InputError("d_head applies only to projections='random'; leave it None")
            if proj is not None and len(proj) != 3:
                raise InputError(f"projections must be (w_q, w_k, w_v), got {len(proj)} items")
            triple = (None, None, None) if proj is None else tuple(
                None if w is None else np.asarray(w, dtype=np.float64) for w in proj
            )
            layers = [triple] * self.n_layers
        else:
            raise InputError(
                f"projections must be None, 'random' or (w_q, w_k, w_v), got {type(proj).__name__}"
            )
        if (layers[0][0] is None or layers[0][1] is None) and dim % self.heads:
            raise DimensionError(
                f"dim {dim} does not divide into {self.heads} heads: a head without query and key "
                "projections scores with its own slice of the table's dims; choose heads dividing "
                f"{dim}, or pass projections='random' (or your own w_q and w_k)"
            )
        # a dry run on one zero row reports any shape problem now, not at the first sentence
        out, _ = multi_head_attention(np.zeros((1, dim)), self.heads, *layers[0], scale=0.0)
        if out.shape[1] != dim:
            raise DimensionError(
                f"the value projections give {self.heads} heads x {out.shape[1] // self.heads} "
                f"= {out.shape[1]} dims, but every layer must keep the table's dim {dim}; "
                "make heads * d_v equal it, or pass w_v=None"
            )
        return layers

    def _effective_scale(self) -> float:
        """What multiplies the scores: ``scale``, else 1/√d_k."""
        return 1.0 / math.sqrt(self._d_k()) if self.scale is None else self.scale

    def _d_k(self) -> int:
        w_q = self._layer_weights[0][0]
        return int(w_q.shape[-1]) if w_q is not None else self.table.dim // self.heads

    def params(self) -> dict[str, Any]:
        proj = self.projections
        params: dict[str, Any] = {
            "include_self": self.include_self, "causal": self.causal, "window": self.window,
            "positions": self.positions, "heads": self.heads,
            "projections": proj if proj is None or isinstance(proj, str) else "custom",
            "d_head": self._d_k(), "scale": self.scale,
            "effective_scale": self._effective_scale(),
            "n_layers": self.n_layers, "seed": self.seed,
        }
        if params["projections"] == "custom":  # the weights themselves identify the encoder
            import hashlib

            digest = hashlib.sha256()
            for w in self._layer_weights[0]:
                digest.update(b"-" if w is None else np.ascontiguousarray(w).tobytes())
            params["projection_sha256"] = digest.hexdigest()[:16]
        if params["projections"] == "custom":
            params["projection_shapes"] = [
                None if w is None else list(w.shape) for w in self._layer_weights[0]
            ]
        return {**self.static.params(), **params, "encoder": self.name}

    def mask(self, n: int) -> np.ndarray:
        """``(n, n)`` boolean, True = word ``i`` may attend to word ``j``."""
        allowed = np.ones((n, n), dtype=bool)
        if not self.include_self:
            allowed &= exclude_self_mask(n)
        if self.causal:
            allowed &= causal_mask(n)
        if self.window is not None:
            allowed &= window_mask(n, self.window)
        return allowed

    def _layers(self, x: np.ndarray, allowed: np.ndarray):
        """Per attention layer: its input ``(words, dim)``, output ``(words, dim)`` and
        weights ``(heads, words, words)``; positions are added once, to the first input."""
        h = x + sinusoidal_positions(*x.shape) if self.positions == "sinusoidal" else x
        for w_q, w_k, w_v in self._layer_weights:
            out, weights = multi_head_attention(h, self.heads, w_q, w_k, w_v, mask=allowed, scale=self.scale)
            yield h, out, weights
            h = out

    def _checked_mask(self, base: Encoding, n: int) -> np.ndarray:
        allowed = self.mask(n)  # (n, n)
        empty = np.flatnonzero(~allowed[: len(base.words)].any(axis=1))
        if empty.size:
            i = int(empty[0])
            raise InputError(
                f"in {_sentence(base)!r} word {i} ({base.words[i].text!r}) may attend to no "
                f"word (include_self={self.include_self}, causal={self.causal}, "
                f"window={self.window}); allow include_self=True or give more context"
            )
        return allowed

    def _mix(self, base: Encoding) -> Encoding:
        x = base.layers[0].astype(np.float64)  # (words, dim)
        allowed = self._checked_mask(base, len(x))
        steps = list(self._layers(x, allowed))
        meta = {**base.meta, "encoder": self.name, "params": self.params()}
        return Encoding(
            base.text, base.words, np.stack([x] + [out for _, out, _ in steps]).astype(np.float32),
            np.stack([w for _, _, w in steps]).astype(np.float32), self.layer_names, meta, source=base.source,
        )

    def attention_parts(self, text: str, *, layers=None, pad: int = 0) -> list[AttentionParts]:
        """Each layer's queries and keys over the words of ``text`` (``q = k =`` the layer's
        input, or its projections) and the mask; ``pad`` zero rows are appended as padding,
        masked out as keys (as in a batch with a longer sentence). See :mod:`contextlens.encoders.qk`.
        """
        picked = pick_layers(self.layer_ids, self.layer_names, layers)
        pad = check_int("pad", pad, low=0, high=MAX_PAD)
        base = self.static.lookup(check_texts([text])[0], required=True)
        n = len(base.words)
        x = np.vstack([base.layers[0], np.zeros((pad, self.dim))]).astype(np.float64)  # (words + pad, dim)
        allowed = self._checked_mask(base, n + pad)
        allowed[:, n:] = False  # nothing attends to padding
        steps = list(self._layers(x, allowed))
        scale = self._effective_scale()
        out = []
        for layer, name in picked:
            h, _, weights = steps[layer - 1]
            w_q, w_k, _ = self._layer_weights[layer - 1]
            out.append(AttentionParts(
                text, tuple(base.tokens) + ("[PAD]",) * pad, tuple((i,) for i in range(n)) + ((),) * pad,
                tuple(base.tokens), layer, name, head_inputs(h, self.heads, w_q, "w_q"),
                head_inputs(h, self.heads, w_k, "w_k"), scale, allowed, weights, padding=pad,
            ))
        return out
