"""Inside a transformer layer: its two blocks, read and changed through hooks on the model's own modules.

Every layer of a transformer is two blocks, and the stage after each is named once, here and
everywhere (the library, the CLI, JSON, the views):

- ``attention``: the attention block's output as the model itself computes it, after the
  residual add, and after the block's LayerNorm in a post-LN model (BERT, MPNet: the output of
  the layer's ``attention`` module); in a pre-LN model (Llama) the residual stream right after
  the attention add, which is what the feed-forward block's norm reads (the input of
  ``post_attention_layernorm``);
- ``ffn``: the feed-forward block's output, which is the layer's output (``hidden_states[L]``;
  for the last layer of a model with a final norm, after that norm, as the encoder reports it).

The functions here take a loaded torch model (:class:`Internals`, made from a transformer encoder
by :func:`internals`) and one text cut into pieces (:func:`read_pieces`), and return numpy arrays
at the piece level; :mod:`contextlens.analysis.blocks` turns them into words. Only this package
imports torch, and only when one of these functions runs: an encoder served by ONNX Runtime gets
its torch model loaded here, then, and kept beside it.

What each architecture keeps where (:data:`ARCHITECTURES`, relative to one layer block) is
checked against the model's own modules in ``tests/integration/test_blocks_tiny.py`` for a BERT,
an MPNet and a Llama-style model.
"""

from __future__ import annotations

import contextlib
import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError
from ..text import Word, tokenize
from . import hooks, models
from .alignment import align_pieces

__all__ = ["STAGES", "Architecture", "ARCHITECTURES", "Internals", "internals", "Pieces", "read_pieces",
           "Capture", "capture", "PATCH_AT", "patched_runs", "value_zeroing", "norm_contributions",
           "pool_pieces", "NotATransformerError", "run"]

log = logging.getLogger(__name__)
STAGES = ("attention", "ffn")  # the stage after each block of a layer, in order
FINAL_NORMS = ("norm", "ln_f", "final_layer_norm", "final_layernorm", "norm_f")  # as encoders.lm reads them


class NotATransformerError(InputError):
    """An explanation that hooks a transformer's modules was asked of another encoder."""


@dataclass(frozen=True)
class Architecture:
    """Where a model type keeps, inside one layer block, what these functions hook.

    attention : the attention block (its output is the ``attention`` stage in a post-LN model).
    value : the value projection (its output: every head's value vectors, ``(batch, T, kv_heads · d_head)``).
    out : the projection of the heads' outputs back to the model's width (``W_O``, with its bias):
        what the attention block writes before its residual add.
    ffn_out : the feed-forward block's last projection: what it writes before its residual add.
    ffn_norm : in a pre-LN model, the norm the feed-forward block starts with; its input is the
        ``attention`` stage (the residual stream after the attention add). None: post-LN.
    """

    attention: str
    value: str
    out: str
    ffn_out: str
    ffn_norm: str | None = None

    @property
    def post_ln(self) -> bool:
        return self.ffn_norm is None


#: model type → where its layer block keeps the parts (the model types tested against their modules)
ARCHITECTURES = {
    "bert": Architecture("attention", "attention.self.value", "attention.output.dense", "output.dense"),
    "mpnet": Architecture("attention", "attention.attn.v", "attention.attn.o", "output.dense"),
    "llama": Architecture("self_attn", "self_attn.v_proj", "self_attn.o_proj", "mlp.down_proj",
                          "post_attention_layernorm"),
}


@dataclass
class Internals:
    """A loaded torch transformer, as these functions use it.

    model : the base transformer (eager attention, so it returns its weights), in eval mode.
    blocks : its list of layer blocks; arch : where each block keeps its parts.
    final_norm : the norm after the last block (pre-LN models), or None.
    lm : a :class:`~contextlens.encoders.lm.LanguageModel` whose model this is (causal LMs,
        when its language-model head is needed), else None; head : that head, or None.
    pooling : how a word's pieces become its vector (the encoder's: ``mean``, ``first``, ``last``).
    """

    name: str
    model: Any
    tokenizer: Any
    blocks: Any
    arch: Architecture
    causal: bool
    max_length: int
    pooling: str
    final_norm: Any = None
    lm: Any = None
    head: Any = None

    @property
    def n_layers(self) -> int:
        return len(self.blocks)

    @property
    def heads(self) -> int:
        return int(self.model.config.num_attention_heads)

    @property
    def kv_heads(self) -> int:
        config = self.model.config
        return int(getattr(config, "num_key_value_heads", None) or config.num_attention_heads)

    def block_part(self, k: int, path: str):
        """The module at ``path`` inside the block of layer ``k`` (1-based)."""
        return self.blocks[k - 1].get_submodule(path)


_LOADED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # encoder -> {head: Internals}


def internals(encoder, *, head: bool = False) -> Internals:
    """The torch model behind a transformer ``encoder`` (its own when it has one loaded with eager
    attention, else loaded here once and kept for that encoder), with the language-model head when
    ``head`` (causal LMs: next-word log-probabilities). Any other encoder is an error saying why."""
    params = encoder.params()
    name = str(params.get("model") or params.get("encoder"))
    if params.get("encoder") != "transformer":
        raise NotATransformerError(
            f"this explanation reads the modules inside a transformer's layers; {name} is no transformer: "
            "give a transformer model (e.g. minilm)")
    loaded = _LOADED.setdefault(encoder, {})
    if head in loaded:
        return loaded[head]
    torch, _ = models.require_hf("explanations inside a transformer")
    path, lm = params["path"], None
    if head:
        from .lm import LanguageModel

        lm = LanguageModel(path, threads=torch.get_num_threads())
        if lm.kind != "causal":
            raise InputError(f"{name} is not a causal language model; next-word log-probabilities need one "
                             "(e.g. smollm2)")
        model, tokenizer = lm.hf_model.base_model, lm.tokenizer
    else:
        model, tokenizer = getattr(encoder, "hf_model", None), getattr(encoder, "tokenizer", None)
        if model is None or model.config._attn_implementation != "eager":
            model, tokenizer, _ = models.load(path, attention=True)
    kind = model.config.model_type
    if kind not in ARCHITECTURES:
        raise InputError(f"looking inside the layers of a {kind!r} model is not supported; supported model "
                         f"types: {', '.join(ARCHITECTURES)}")
    n = int(model.config.num_hidden_layers)
    _, blocks = hooks.layer_list(model, n)
    norms = [getattr(model, a) for a in FINAL_NORMS if isinstance(getattr(model, a, None), torch.nn.Module)]
    head_module = None if lm is None else lm.hf_model.get_output_embeddings()
    found = Internals(name, model.eval(), tokenizer, blocks, ARCHITECTURES[kind],
                      models.is_causal(model.config), models.max_length_of(model.config, tokenizer),
                      str(params.get("pooling", "mean")), norms[0] if norms else None, lm, head_module)
    loaded[head] = found
    return found


@dataclass(frozen=True)
class Pieces:
    """One text as the model reads it: its pieces (special tokens included) and which belong to each word.

    words : every word of :func:`~contextlens.text.tokenize`; word_pieces : per word, the positions
    of its pieces in ``ids`` (empty: the tokenizer gave it none); special : the positions of the
    pieces that belong to no word (special tokens, white space).
    """

    text: str
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    words: tuple[Word, ...]
    word_pieces: tuple[tuple[int, ...], ...]
    special: tuple[int, ...]

    @property
    def kept(self) -> list[int]:
        """The words with pieces, in order (an Encoding's words)."""
        return [w for w, ps in enumerate(self.word_pieces) if ps]


def read_pieces(model: Internals, text: str) -> Pieces:
    """``text`` cut into ``model``'s pieces, aligned to its words; a text longer than one window of
    the model is an error (these functions read one forward pass)."""
    tok = model.tokenizer
    enc = tok(text, add_special_tokens=True, return_offsets_mapping=True, return_special_tokens_mask=True)
    ids = list(enc["input_ids"])
    if len(ids) > model.max_length:
        raise InputError(f"{text[:40]!r}… has {len(ids)} pieces; an explanation reads one window of at most "
                         f"{model.max_length} pieces of {model.name}: give a shorter text")
    words = tokenize(text)
    al = align_pieces(text, words, enc["offset_mapping"], enc["special_tokens_mask"])
    special = tuple(p for p, ws in enumerate(al.piece_words) if not ws)
    tokens = tuple(tok.convert_ids_to_tokens(ids))
    return Pieces(text, tuple(ids), tokens, tuple(words), al.word_pieces, special)


def pool_pieces(states: np.ndarray, pieces: Sequence[int], pooling: str = "mean") -> np.ndarray:
    """A word's vector from its pieces' rows of ``states`` ``(..., T, dim)``: their mean, the first
    or the last one, as the encoder pools (:data:`~contextlens.encoders.alignment.POOLINGS`).

    >>> s = np.array([[1.0, 0.0], [3.0, 2.0], [9.0, 9.0]])
    >>> pool_pieces(s, [0, 1]).tolist(), pool_pieces(s, [0, 1], "last").tolist()
    ([2.0, 1.0], [3.0, 2.0])
    """
    chosen = list(pieces)
    if not chosen:
        raise InputError("a word without pieces has no vector")
    chosen = {"first": chosen[:1], "last": chosen[-1:]}.get(pooling, chosen)
    return np.asarray(states)[..., chosen, :].mean(axis=-2)


def _tensor(model: Internals, ids: Sequence[int], batch: int = 1):
    import torch

    return torch.tensor([list(ids)] * batch, device=model.model.device)


def run(model: Internals, **inputs):
    """The base model's forward on ``inputs``, without a key/value cache (a causal model would
    otherwise keep one, and a block called again would append to it)."""
    import inspect

    if "use_cache" in inspect.signature(model.model.forward).parameters:
        inputs["use_cache"] = False
    return model.model(**inputs)


def next_logits(model: Internals, ids: Sequence[int]) -> np.ndarray:
    """``(vocab,)`` float32: the next-piece logits after the last of the piece ids ``ids`` (a model
    loaded with its LM head: ``internals(encoder, head=True)``), the base model run once."""
    import torch

    with torch.inference_mode():
        out = run(model, input_ids=_tensor(model, ids))
        return _numpy(model.head(out.last_hidden_state[0, -1]))


def _first(output):
    """A module's main output: the tensor, or the first item of the tuple it returns."""
    return output[0] if isinstance(output, tuple) else output


def _replace_first(output, value):
    return (value, *output[1:]) if isinstance(output, tuple) else value


def _numpy(t) -> np.ndarray:
    return t.detach().float().cpu().numpy()


@contextlib.contextmanager
def _hooked(handles: list):
    try:
        yield
    finally:
        for h in handles:
            h.remove()


def _block_input(args, kwargs):
    return args[0] if args else kwargs["hidden_states"]


@dataclass
class Capture:
    """One text's hidden states at every stage, piece by piece (numpy, float32).

    embedding : ``(T, dim)`` the first block's input (``hidden_states[0]``);
    attention : ``(layers, T, dim)`` the ``attention`` stage of each layer;
    ffn : ``(layers, T, dim)`` the ``ffn`` stage (the layer's output; the last one after the
    final norm, if any); last_block : ``(T, dim)`` the last block's own output (before that norm);
    writes : ``{"attention": (layers, T, dim), "ffn": ...}`` what each block writes before its
    residual add (the output of ``Architecture.out`` and ``Architecture.ffn_out``).
    """

    embedding: np.ndarray
    attention: np.ndarray
    ffn: np.ndarray
    last_block: np.ndarray
    writes: dict[str, np.ndarray]

    def blocks_out(self) -> np.ndarray:
        """``(layers, T, dim)`` each block's own output (the ``ffn`` stage; the last one before any final
        norm)."""
        raw = self.ffn.copy()
        raw[-1] = self.last_block
        return raw


def _stage_hooks(model: Internals, store: dict) -> list:
    """Hooks writing, for every layer k (1-based), ``store[("attention", k)]``, ``store[("block", k)]``
    and what its blocks write, ``store[("writes", stage, k)]``, and ``store["embedding"]``."""
    arch, handles = model.arch, []

    def keep(key):
        def record(module, args, output):
            store[key] = _first(output)
        return record

    def keep_input(key):
        def record(module, args, kwargs):
            store[key] = _block_input(args, kwargs)
        return record

    handles.append(hooks.place(model.blocks[0], keep_input("embedding"), before=True))
    for k in range(1, model.n_layers + 1):
        if arch.post_ln:
            handles.append(hooks.place(model.block_part(k, arch.attention), keep(("attention", k))))
        else:
            norm = model.block_part(k, arch.ffn_norm)
            handles.append(hooks.place(norm, keep_input(("attention", k)), before=True))
        handles.append(hooks.place(model.blocks[k - 1], keep(("block", k))))
        for stage, path in (("attention", arch.out), ("ffn", arch.ffn_out)):
            handles.append(hooks.place(model.block_part(k, path), keep(("writes", stage, k))))
    return handles


def capture(model: Internals, pieces: Pieces) -> Capture:
    """Run ``pieces`` through the model once and keep every stage of every layer (:class:`Capture`)."""
    import torch

    store: dict = {}
    with torch.inference_mode(), _hooked(_stage_hooks(model, store)):
        out = run(model, input_ids=_tensor(model, pieces.ids))
    layers = range(1, model.n_layers + 1)

    def stack(key):
        return np.stack([_numpy(store[(*key, k)][0]) for k in layers])

    ffn = stack(("block",))
    last_block = ffn[-1].copy()
    ffn[-1] = _numpy(out.last_hidden_state[0])  # after the final norm, as the encoder reports the last layer
    return Capture(_numpy(store["embedding"][0]), stack(("attention",)), ffn, last_block,
                   {s: stack(("writes", s)) for s in STAGES})


#: where :func:`patched_runs` puts the donor's states: the layer's output, or what one block writes
PATCH_AT = ("layer", "attention", "ffn")


def patched_runs(model: Internals, recipient: Pieces, positions: Sequence[int], donor: np.ndarray, at: str,
                 *, logits: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """The recipient run once per layer, with the pieces at ``positions`` given the donor's states
    at that layer, the rest of the model run as usual.

    at : ``layer``, the layer's output (the block's own output; a final norm then applies to it as
    to any), or what one block writes before its residual add: ``attention`` (the output of
    ``Architecture.out``) or ``ffn`` (of ``Architecture.ffn_out``); the recipient's residual stream
    is kept. (Replacing the ``attention`` *stage* would give the very run that replacing the layer's
    output gives: the feed-forward block reads each piece alone.)
    donor : ``(layers, len(positions), dim)``, the donor's pieces at that point of each layer
    (:meth:`Capture.blocks_out` or ``Capture.writes``). Returns ``(last, logits)``: ``last``
    ``(layers, T, dim)``, each run's last layer (after any final norm), and, with ``logits`` (a
    model with its LM head), ``(layers, vocab)`` the next-piece logits after the last piece.
    """
    import torch

    n, arch = model.n_layers, model.arch
    pos = torch.tensor(list(positions), device=model.model.device)
    given = torch.as_tensor(np.asarray(donor, dtype=np.float32), device=model.model.device)  # (layers, P, d)

    def put(k):  # batch element k - 1 gets the donor's states at layer k
        def hook(module, args, output):
            h = _first(output).clone()
            h[k - 1, pos] = given[k - 1].to(h.dtype)
            return _replace_first(output, h)
        return hook

    path = {"attention": arch.out, "ffn": arch.ffn_out}.get(at)
    where = [model.blocks[k - 1] if path is None else model.block_part(k, path) for k in range(1, n + 1)]
    handles = [hooks.place(module, put(k)) for k, module in enumerate(where, 1)]
    with torch.inference_mode(), _hooked(handles):
        out = run(model, input_ids=_tensor(model, recipient.ids, n))
        last = out.last_hidden_state  # (layers, T, dim)
        scores = _numpy(model.head(last[:, -1])) if logits else None
    return _numpy(last), scores


def _expand(value, size: int):
    """A block's call argument for ``size`` copies of a one-sequence batch (tensors whose first
    dimension is 1 repeated along it; tuples and lists item by item; anything else as it is)."""
    import torch

    if isinstance(value, torch.Tensor) and value.dim() >= 1 and value.shape[0] == 1:
        return value.expand(size, *value.shape[1:])
    if isinstance(value, tuple | list):
        return type(value)(_expand(v, size) for v in value)
    return value


def value_zeroing(model: Internals, pieces: Pieces, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """Value zeroing (Mohebbi et al. 2023, "Quantifying Context Mixing in Transformers", EACL):
    for each layer and each group of pieces, that layer run again on its own unchanged input with
    the value vectors of the group's pieces set to zero in every head; returns ``(layers, groups, T,
    dim)``, each such layer's output (its ``ffn`` stage: the last layer after the final norm), to be
    compared with the unchanged output (:func:`capture`). Only the one layer runs again: the layers
    before it are unchanged, as in the paper."""
    import torch

    calls: dict[int, tuple] = {}

    def keep(k):
        def record(module, args, kwargs):
            calls[k] = (args, kwargs)
        return record

    n, g = model.n_layers, len(groups)
    handles = [hooks.place(model.blocks[k - 1], keep(k), before=True) for k in range(1, n + 1)]
    with torch.inference_mode(), _hooked(handles):
        run(model, input_ids=_tensor(model, pieces.ids))
    rows = torch.ones((g, len(pieces.ids), 1), device=model.model.device)  # 1: keep the piece's value
    for i, group in enumerate(groups):
        rows[i, list(group)] = 0.0

    def zero(module, args, output):
        return output * rows.to(output.dtype)

    out = np.zeros((n, g, len(pieces.ids), model.model.config.hidden_size), dtype=np.float32)
    for k in range(1, n + 1):
        args, kwargs = calls[k]
        handle = hooks.place(model.block_part(k, model.arch.value), zero)
        with torch.inference_mode(), _hooked([handle]):
            h = _first(model.blocks[k - 1](*_expand(args, g), **_expand(kwargs, g)))
            if k == n and model.final_norm is not None:
                h = model.final_norm(h)
        out[k - 1] = _numpy(h)
    return out


def norm_contributions(model: Internals, pieces: Pieces,
                       rows: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The weighted, value-transformed vectors of Kobayashi et al. 2020 ("Attention is Not Only a
    Weight: Analyzing Transformers with Vector Norms", EMNLP), every layer: for query piece ``i``
    and key piece ``j``, ``Σ_h α^h_ij f^h(x_j)`` where ``f^h(x_j) = W_O^h (W_V^h x_j + b_V^h)`` is
    piece ``j``'s value in head ``h`` projected by that head's slice of the output matrix (the
    output bias is no piece's). Summed over ``j`` and with the output bias added, it is the
    attention module's output before the residual.

    rows : the query pieces wanted. Returns ``(vectors, out_bias)``: ``vectors`` ``(layers,
    len(rows), T, dim)`` and ``out_bias`` ``(layers, dim)``.
    """
    import torch

    values: dict[int, Any] = {}

    def keep(k):
        def record(module, args, output):
            values[k] = output
        return record

    n, arch = model.n_layers, model.arch
    handles = [hooks.place(model.block_part(k, arch.value), keep(k)) for k in range(1, n + 1)]
    with torch.inference_mode(), _hooked(handles):
        out = run(model, input_ids=_tensor(model, pieces.ids), output_attentions=True)
        heads, kv = model.heads, model.kv_heads
        r = torch.tensor(list(rows), device=model.model.device)
        result, biases = [], []
        for k in range(1, n + 1):
            alpha = out.attentions[k - 1][0][:, r]  # (heads, rows, T)
            v = values[k][0]  # (T, kv · d)
            t = v.shape[0]
            v = v.view(t, kv, -1).repeat_interleave(heads // kv, dim=1)  # (T, heads, d): grouped keys shared
            proj = model.block_part(k, arch.out)
            w = proj.weight.view(proj.weight.shape[0], heads, -1)  # (dim, heads, d)
            f = torch.einsum("thd,ohd->hto", v, w)  # (heads, T, dim): f^h(x_j)
            result.append(_numpy(torch.einsum("hrt,hto->rto", alpha, f)))
            biases.append(np.zeros(w.shape[0], np.float32) if proj.bias is None else _numpy(proj.bias))
    return np.stack(result), np.stack(biases)
