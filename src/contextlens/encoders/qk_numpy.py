"""Queries and keys without torch: a transformer layer's ``q`` and ``k`` computed with numpy
from the hidden states the layer receives (the ONNX export's outputs, ``hidden_{k-1}`` for
layer ``k``) and the model's own weights, read from its safetensors files with the safetensors
numpy API (issue 23 §1: the neuron view imports neither torch nor transformers).

What each covered architecture does before its attention weights (as transformers computes it):

- ``bert``: ``q = h Wq + bq``, ``k = h Wk + bk`` of the layer's input ``h`` (its LayerNorm
  comes after the attention), split into heads; scale ``1/√d_head``;
- ``mpnet``: the same, plus a relative-position bias ``(heads, T, T)``, one table shared by
  every layer, looked up by :func:`relative_buckets` of ``j − i`` (32 buckets, as the model's
  encoder calls it, whatever its config says);
- ``llama``: ``h`` RMS-normed (:func:`rms_norm`, the layer's ``input_layernorm``) first, then
  ``q_proj``/``k_proj`` (biases where the checkpoint has them), the rotary position embedding
  (:func:`rotate`) at positions ``0..T−1``, and each key head repeated for its group of query
  heads; causal.

Anything else (another model type, BERT with relative position embeddings or as a decoder,
scaled rotary embeddings, weights not in safetensors or not in float16/32/64) gets None from
:func:`open_weights`, with the reason logged, and the encoder reads ``q`` and ``k`` from the
torch model instead.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Spec", "Projection", "LayerWeights", "QKWeights", "spec_of", "open_weights", "rms_norm",
           "rotate", "relative_buckets", "layer_qk", "MPNET_BUCKETS"]

log = logging.getLogger(__name__)
MPNET_BUCKETS = 32  # MPNetEncoder.compute_position_bias's own default, the one it is called with
FLOATS = ("F16", "F32", "F64")  # safetensors dtypes numpy reads exactly (not BF16)


@dataclass(frozen=True)
class Spec:
    """What a covered model's config says about its attention."""

    model_type: str  # "bert" | "mpnet" | "llama"
    heads: int
    kv_heads: int
    d_head: int
    n_layers: int
    causal: bool = False
    eps: float = 0.0  # the RMSNorm's epsilon (llama)
    rope_theta: float = 0.0  # the rotary embedding's base (llama)

    @property
    def scale(self) -> float:
        return float(self.d_head) ** -0.5


def _rope(config: dict) -> tuple[float, str | None]:
    """``(theta, problem)`` of a Llama config's rotary embedding: written as ``rope_theta`` +
    ``rope_scaling`` (transformers 4) or ``rope_parameters`` (5); only the plain one is covered."""
    params = config.get("rope_parameters") or {}
    scaling = config.get("rope_scaling") or {}
    kind = params.get("rope_type") or scaling.get("rope_type") or scaling.get("type") or "default"
    theta = float(params.get("rope_theta") or config.get("rope_theta") or 10000.0)
    partial = params.get("partial_rotary_factor", config.get("partial_rotary_factor", 1.0))
    if kind != "default" or float(partial) != 1.0:
        return theta, (f"its rotary embedding is {kind!r} (partial factor {partial}); only the plain one "
                       "is read")
    return theta, None


def spec_of(config: dict) -> Spec | str:
    """The :class:`Spec` of a model's ``config.json`` values, or why it is not covered.

    >>> spec_of({"model_type": "bert", "num_attention_heads": 12, "hidden_size": 384,
    ...          "num_hidden_layers": 6}).d_head
    32
    >>> spec_of({"model_type": "gpt2"})
    "model type 'gpt2' (covered: bert, mpnet, llama)"
    """
    kind = config.get("model_type")
    if kind not in ("bert", "mpnet", "llama"):
        return f"model type {kind!r} (covered: bert, mpnet, llama)"
    heads, dim = int(config["num_attention_heads"]), int(config["hidden_size"])
    layers = int(config["num_hidden_layers"])
    if kind == "bert":
        if config.get("position_embedding_type", "absolute") != "absolute":
            return f"BERT with {config['position_embedding_type']!r} position embeddings"
        if config.get("is_decoder"):
            return "BERT as a decoder"
        return Spec(kind, heads, heads, dim // heads, layers)
    if kind == "mpnet":
        return Spec(kind, heads, heads, dim // heads, layers)
    theta, problem = _rope(config)
    if problem:
        return problem
    return Spec(kind, heads, int(config.get("num_key_value_heads") or heads),
                int(config.get("head_dim") or dim // heads), layers, causal=True,
                eps=float(config.get("rms_norm_eps", 1e-6)), rope_theta=theta)


@dataclass(frozen=True)
class Projection:
    """A linear map as ``nn.Linear`` keeps it: ``weight (out, in)``, ``bias (out,)`` or None.

    >>> Projection(np.array([[1.0, 2.0]]), np.array([0.5]))(np.array([[3.0, 4.0]])).tolist()
    [[11.5]]
    """

    weight: np.ndarray
    bias: np.ndarray | None = None

    def __call__(self, h: np.ndarray) -> np.ndarray:
        """``h (..., in) → (..., out)`` float32, summed in float64."""
        out = np.asarray(h, dtype=np.float64) @ np.asarray(self.weight, dtype=np.float64).T
        return (out if self.bias is None else out + self.bias).astype(np.float32)


@dataclass(frozen=True)
class LayerWeights:
    """One layer's query and key maps, and the RMSNorm weight applied before them (llama)."""

    query: Projection
    key: Projection
    norm: np.ndarray | None = None


def rms_norm(h: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    """``weight · h / √(mean(h²) + eps)`` over the last axis, in float32 as Llama's RMSNorm.

    >>> rms_norm(np.array([3.0, 4.0]), np.array([1.0, 2.0]), 0.0).astype(float).round(4).tolist()
    [0.8485, 2.2627]
    """
    h = np.asarray(h, dtype=np.float32)
    variance = (h * h).mean(-1, keepdims=True)
    normed = h / np.sqrt(variance + np.float32(eps))
    return (np.asarray(weight, dtype=np.float32) * normed).astype(np.float32)


def rotate(x: np.ndarray, theta: float) -> np.ndarray:
    """The rotary position embedding of ``x (heads, T, d)`` at positions ``0..T−1``: each
    pair ``(x_i, x_{i+d/2})`` turned by ``position · theta^(−2i/d)``, as Llama's
    ``apply_rotary_pos_emb`` (``x·cos + rotate_half(x)·sin``).

    >>> x = np.array([[[1.0, 0.0], [1.0, 0.0]]])   # one head, positions 0 and 1, d = 2
    >>> rotate(x, 10000.0).astype(float).round(4).tolist()   # position 1 turned by 1 radian
    [[[1.0, 0.0], [0.5403, 0.8415]]]
    """
    x = np.asarray(x, dtype=np.float32)
    d, t = x.shape[-1], x.shape[-2]
    inv_freq = (1.0 / theta ** (np.arange(0, d, 2, dtype=np.float64) / d)).astype(np.float32)
    freqs = np.arange(t, dtype=np.float32)[:, None] * inv_freq[None, :]  # (T, d/2) float32, as torch
    angles = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(angles), np.sin(angles)
    half = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)
    return (x * cos + half * sin).astype(np.float32)


def relative_buckets(t: int, num_buckets: int = MPNET_BUCKETS, max_distance: int = 128) -> np.ndarray:
    """``(t, t)`` MPNet's bucket of the relative position ``j − i`` of key ``j`` to query ``i``:
    half the buckets for keys before the query, half for keys after; exact distances below
    a quarter of the buckets, logarithmic ones above (computed in float32 as the model does).

    >>> relative_buckets(4).tolist()
    [[0, 17, 18, 19], [1, 0, 17, 18], [2, 1, 0, 17], [3, 2, 1, 0]]
    """
    position = np.arange(t, dtype=np.int64)
    n = position[:, None] - position[None, :]  # -(j - i)
    half = num_buckets // 2
    ret = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    with np.errstate(divide="ignore"):
        scaled = (np.log(n.astype(np.float32) / np.float32(exact)) / np.float32(np.log(max_distance / exact))
                  * np.float32(half - exact))
    large = exact + np.where(n < exact, 0, scaled).astype(np.int64)
    return ret + np.where(n < exact, n, np.minimum(large, half - 1))


def _split(x: np.ndarray, d: int) -> np.ndarray:
    """``(T, heads·d) → (heads, T, d)``."""
    return x.reshape(x.shape[0], -1, d).transpose(1, 0, 2)


def layer_qk(spec: Spec, weights: LayerWeights, h: np.ndarray, relative: np.ndarray | None = None):
    """``(queries, keys, bias)`` of one layer for the hidden states ``h (T, dim)`` it receives:
    queries and keys ``(heads, T, d_head)`` float32 (a key head shared by several query heads
    repeated), ``bias`` ``(heads, T, T)`` (MPNet's relative positions, from its ``relative``
    table ``(buckets, heads)``) or None."""
    if weights.norm is not None:
        h = rms_norm(h, weights.norm, spec.eps)
    q, k = _split(weights.query(h), spec.d_head), _split(weights.key(h), spec.d_head)
    if spec.model_type == "llama":
        q, k = rotate(q, spec.rope_theta), rotate(k, spec.rope_theta)
        k = np.repeat(k, spec.heads // spec.kv_heads, axis=0)
    bias = None
    if relative is not None:
        bias = np.asarray(relative, dtype=np.float32)[relative_buckets(len(h))].transpose(2, 0, 1)
    return q, k, bias


#: model type → per layer (query, key, RMSNorm before them), the tensor names after any prefix
_NAMES = {
    "bert": ("encoder.layer.{i}.attention.self.query", "encoder.layer.{i}.attention.self.key", None),
    "mpnet": ("encoder.layer.{i}.attention.attn.q", "encoder.layer.{i}.attention.attn.k", None),
    "llama": ("layers.{i}.self_attn.q_proj", "layers.{i}.self_attn.k_proj", "layers.{i}.input_layernorm"),
}
_RELATIVE = "encoder.relative_attention_bias.weight"


class _Unreadable(Exception):
    """A weight the numpy reader cannot give (missing, ambiguous, or of another dtype)."""


@dataclass
class QKWeights:
    """A covered model's :class:`Spec` and its query/key weights, read per layer on first use
    from its safetensors files (memory-mapped by safetensors, so unread layers cost nothing)."""

    spec: Spec
    files: dict[str, Path]  # tensor name -> the safetensors file holding it
    relative: np.ndarray | None = None  # MPNet: (buckets, heads)
    _layers: dict[int, LayerWeights] = field(default_factory=dict, repr=False)

    def _tensor(self, suffix: str, required: bool = True) -> np.ndarray | None:
        names = [n for n in self.files if n == suffix or n.endswith("." + suffix)]
        if len(names) != 1:
            if not names and not required:
                return None
            raise _Unreadable(f"{len(names)} tensors named like {suffix!r}")
        from safetensors import safe_open

        with safe_open(str(self.files[names[0]]), framework="np") as f:
            dtype = f.get_slice(names[0]).get_dtype()
            if dtype not in FLOATS:
                raise _Unreadable(f"{names[0]} is {dtype}; numpy reads {', '.join(FLOATS)}")
            return np.asarray(f.get_tensor(names[0]), dtype=np.float32)

    def _projection(self, name: str) -> Projection:
        return Projection(self._tensor(name + ".weight"), self._tensor(name + ".bias", required=False))

    def layer(self, k: int) -> LayerWeights:
        """Layer ``k``'s (1-based) weights."""
        if k not in self._layers:
            q, key, norm = (None if n is None else n.format(i=k - 1) for n in _NAMES[self.spec.model_type])
            self._layers[k] = LayerWeights(self._projection(q), self._projection(key),
                                           None if norm is None else self._tensor(norm + ".weight"))
        return self._layers[k]

    def parts(self, k: int, h: np.ndarray):
        """``(queries, keys, bias)`` of layer ``k`` for the states ``h (T, dim)`` it receives."""
        return layer_qk(self.spec, self.layer(k), h, self.relative)


def _tensor_files(path: Path) -> dict[str, Path]:
    """Every tensor name of a model directory's safetensors files (one file, or shards named by
    ``model.safetensors.index.json``); empty when it has none."""
    index = path / "model.safetensors.index.json"
    if index.is_file():
        return {name: path / file for name, file in json.loads(index.read_text())["weight_map"].items()}
    single = path / "model.safetensors"
    if not single.is_file():
        return {}
    from safetensors import safe_open

    with safe_open(str(single), framework="np") as f:
        return dict.fromkeys(f.keys(), single)


def open_weights(path: str | Path) -> QKWeights | None:
    """The query/key weights of the model in directory ``path`` when numpy can compute its
    queries and keys (checked by reading its first layer), else None (the reason logged)."""
    from safetensors import SafetensorError

    path = Path(path)
    try:
        spec = spec_of(json.loads((path / "config.json").read_text()))
        if isinstance(spec, str):
            raise _Unreadable(spec)
        files = _tensor_files(path)
        if not files:
            raise _Unreadable(f"{path} has no safetensors weights")
        weights = QKWeights(spec, files)
        if spec.model_type == "mpnet":
            weights.relative = weights._tensor(_RELATIVE)
        weights.layer(1)
    except (_Unreadable, SafetensorError, OSError, ValueError, KeyError) as e:
        log.info("queries and keys of %s are read from torch: %s", path, e)
        return None
    return weights
