"""A transformer's ONNX export made to stand alone: run with onnxruntime, the ``tokenizers``
library and numpy, importing neither torch nor transformers.

Importing torch and transformers cost a model command 4.4 s of CPU above a bare Python start
(issue 23), while the ONNX engine that runs the model needs neither. So what the encoder
reads from them is written into the export's cache folder (kind ``onnx``, beside
``model.onnx``, under the same marker and SHA-256 check) when the model is exported:

- ``tokenizer.json``: the fast tokenizer's own file, as transformers configured it (its
  post-processor adds the model's special tokens; it reports offsets for the word alignment);
- ``standalone.json``: the config values the encoder reads (:class:`ModelFacts`) and the
  tokenizer's special tokens;
- ``embedding.npy``: the embedding matrix ``(vocab, dim)`` float32 (layer 0, the static row).

The tokenizer is verified at export: on :data:`SAMPLES` the stand-alone one must give the
pieces, offsets and special-token mask transformers gives, or no stand-alone files are
written (the model then keeps the torch side for its tokenizer). A model directory finds its
export without loading its weights through a pointer file in the same cache
(``src-<key>.json``), keyed by :func:`source_key`: the directory, each of its files' name,
size and modification time, the export settings and the library versions; a changed file
gives another key, hence a fresh export.

>>> pad_batch([[5, 6, 7], [8]], pad_id=0)[0].tolist(), pad_batch([[5, 6, 7], [8]], pad_id=0)[1].tolist()
([[5, 6, 7], [8, 0, 0]], [[1, 1, 1], [1, 0, 0]])
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import logging
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np

from ..build_marker import check_marker
from ..disk_cache import DiskCache
from ..errors import MissingDependencyError
from ..files import atomic_output

__all__ = ["ModelFacts", "PieceTokenizer", "Standalone", "LMHead", "FACTS", "TOKENIZER", "EMBEDDING", "HEAD",
           "SAMPLES", "LAYOUT", "source_key", "pointer", "remember", "find", "open_folder", "write",
           "facts_of", "pad_batch", "tokenizer_problem", "head_folder", "write_head", "open_head"]

log = logging.getLogger(__name__)
LAYOUT = 2  # the export folder's format (part of every key); 2: graph optimised, weights beside it
FACTS, TOKENIZER, EMBEDDING = "standalone.json", "tokenizer.json", "embedding.npy"
SAMPLES = ("The bank approved my loan.", "We sat on the bank of the river!",
           "  naïve café, riverbank's 1,200.50 ", "Ünïcödé — «quotes» and emoji 🙂 here", "x")


@dataclass(frozen=True)
class ModelFacts:
    """The config and tokenizer values the encoder reads (what ``standalone.json`` holds)."""

    model_type: str
    architecture: str
    n_layers: int
    n_heads: int
    dim: int
    causal: bool
    max_length: int  # pieces per sequence, special tokens included
    pad_id: int  # the id padding positions get
    attn_implementation: str
    special_ids: tuple[int, ...] = ()
    pad_token_id: int | None = None
    unk_token_id: int | None = None
    mask_token: str | None = None
    mask_token_id: int | None = None
    pad_token: str | None = None
    model_max_length: int = 0

    @classmethod
    def from_dict(cls, data: dict) -> ModelFacts:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        values["special_ids"] = tuple(values.get("special_ids", ()))
        return cls(**values)


def facts_of(model, tokenizer) -> ModelFacts:
    """The facts of a loaded HF model and its fast tokenizer (the torch side)."""
    from . import models

    config = model.config
    pad = tokenizer.pad_token_id
    return ModelFacts(
        model_type=str(config.model_type),
        architecture=(getattr(config, "architectures", None) or [type(model).__name__])[0],
        n_layers=int(config.num_hidden_layers), n_heads=int(getattr(config, "num_attention_heads", 1)),
        dim=int(model.get_input_embeddings().weight.shape[1]), causal=models.is_causal(config),
        max_length=models.max_length_of(config, tokenizer),
        pad_id=int(pad if pad is not None else (getattr(config, "pad_token_id", None) or 0)),
        attn_implementation=str(getattr(config, "_attn_implementation", None) or "eager"),
        special_ids=tuple(int(i) for i in tokenizer.all_special_ids), pad_token_id=pad,
        unk_token_id=tokenizer.unk_token_id, mask_token=tokenizer.mask_token,
        mask_token_id=tokenizer.mask_token_id, pad_token=tokenizer.pad_token,
        model_max_length=int(min(tokenizer.model_max_length or 0, 2**31 - 1)),
    )


def _require_tokenizers():
    try:
        import tokenizers
    except ImportError:
        raise MissingDependencyError("tokenizers", "onnx", "the stand-alone ONNX engine") from None
    return tokenizers


class PieceTokenizer:
    """A model's fast tokenizer read from its ``tokenizer.json`` with the ``tokenizers``
    library: the part of transformers' ``PreTrainedTokenizerFast`` contextlens calls
    (``tok(texts, ...)`` with offsets and the special-token mask, ``convert_ids_to_tokens``,
    ``decode``...), giving the same pieces (checked at export: :func:`tokenizer_problem`)."""

    is_fast = True

    def __init__(self, path: str | os.PathLike, facts: ModelFacts):
        self.backend_tokenizer = _require_tokenizers().Tokenizer.from_file(str(path))
        self.backend_tokenizer.no_padding()
        self.backend_tokenizer.no_truncation()
        self.all_special_ids = list(facts.special_ids)
        self.pad_token_id, self.unk_token_id = facts.pad_token_id, facts.unk_token_id
        self.mask_token, self.mask_token_id = facts.mask_token, facts.mask_token_id
        self.pad_token = facts.pad_token
        self.model_max_length = facts.model_max_length

    def __len__(self) -> int:
        return self.backend_tokenizer.get_vocab_size(with_added_tokens=True)

    @property
    def vocab_size(self) -> int:
        return self.backend_tokenizer.get_vocab_size(with_added_tokens=False)

    def get_vocab(self) -> dict[str, int]:
        return self.backend_tokenizer.get_vocab(with_added_tokens=True)

    def __call__(self, texts, *, add_special_tokens: bool = True, return_offsets_mapping: bool = False,
                 return_special_tokens_mask: bool = False, return_attention_mask: bool = True,
                 return_token_type_ids: bool = False, truncation: bool = False, max_length: int | None = None,
                 verbose: bool = True) -> dict:
        """As transformers' tokenizer called without ``return_tensors``: lists, one per
        text (or one list for a single string)."""
        single = isinstance(texts, str)
        backend = self.backend_tokenizer
        if truncation and max_length is not None:
            backend.enable_truncation(max_length, strategy="longest_first", direction="right")
        try:
            encs = backend.encode_batch([texts] if single else list(texts),
                                        add_special_tokens=add_special_tokens)
        finally:
            backend.no_truncation()
        out = {"input_ids": [e.ids for e in encs]}
        if return_attention_mask:
            out["attention_mask"] = [e.attention_mask for e in encs]
        if return_token_type_ids:
            out["token_type_ids"] = [e.type_ids for e in encs]
        if return_offsets_mapping:
            out["offset_mapping"] = [e.offsets for e in encs]
        if return_special_tokens_mask:
            out["special_tokens_mask"] = [e.special_tokens_mask for e in encs]
        return {k: v[0] for k, v in out.items()} if single else out

    def convert_ids_to_tokens(self, ids):
        if isinstance(ids, int | np.integer):
            return self.backend_tokenizer.id_to_token(int(ids))
        return [self.backend_tokenizer.id_to_token(int(i)) for i in ids]

    def convert_tokens_to_ids(self, tokens):
        def one(t):
            i = self.backend_tokenizer.token_to_id(t)
            return self.unk_token_id if i is None else i
        return one(tokens) if isinstance(tokens, str) else [one(t) for t in tokens]

    def decode(self, ids, skip_special_tokens: bool = False,
               clean_up_tokenization_spaces: bool = False) -> str:
        if clean_up_tokenization_spaces:
            raise ValueError("the stand-alone tokenizer decodes without clean-up only")
        return self.backend_tokenizer.decode([int(i) for i in ids], skip_special_tokens=skip_special_tokens)

    def batch_decode(self, sequences, skip_special_tokens: bool = False,
                     clean_up_tokenization_spaces: bool = False) -> list[str]:
        if clean_up_tokenization_spaces:
            raise ValueError("the stand-alone tokenizer decodes without clean-up only")
        return self.backend_tokenizer.decode_batch([[int(i) for i in s] for s in sequences],
                                                   skip_special_tokens=skip_special_tokens)


def tokenizer_problem(hf_tokenizer, standalone: PieceTokenizer, texts=SAMPLES) -> str | None:
    """How the stand-alone tokenizer differs from transformers' on ``texts`` (ids, offsets,
    special-token mask, with and without special tokens), or None."""
    for special in (True, False):
        want = hf_tokenizer(list(texts), add_special_tokens=special, return_offsets_mapping=True,
                            return_special_tokens_mask=True)
        got = standalone(list(texts), add_special_tokens=special, return_offsets_mapping=True,
                         return_special_tokens_mask=True)
        for key in ("input_ids", "offset_mapping", "special_tokens_mask"):
            for text, a, b in zip(texts, want[key], got[key]):
                if [tuple(x) if isinstance(x, list | tuple) else x for x in a] != \
                        [tuple(x) if isinstance(x, list | tuple) else x for x in b]:
                    return f"{key} of {text!r} (special tokens: {special}): transformers {a}, tokenizers {b}"
    return None


def write(model, tokenizer, folder: Path) -> bool:
    """Write the stand-alone files of a loaded model into ``folder`` (an export being
    built); False (and nothing written) when its tokenizer cannot stand alone."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or not getattr(tokenizer, "is_fast", False):
        log.info("%s has no fast tokenizer: its export does not stand alone", type(model).__name__)
        return False
    facts = facts_of(model, tokenizer)
    folder = Path(folder)
    backend.save(str(folder / TOKENIZER))
    problem = tokenizer_problem(tokenizer, PieceTokenizer(folder / TOKENIZER, facts))
    if problem:
        (folder / TOKENIZER).unlink()
        log.warning("the tokenizer of %s does not stand alone (%s); its model commands will import "
                    "transformers", type(model).__name__, problem)
        return False
    rows = model.get_input_embeddings().weight.detach().float().cpu().numpy()  # (vocab, dim)
    np.save(folder / EMBEDDING, np.ascontiguousarray(rows, dtype=np.float32))
    (folder / FACTS).write_text(json.dumps({"layout": LAYOUT, **asdict(facts)}, indent=1))
    return True


@dataclass
class Standalone:
    """An export folder's stand-alone side: facts, tokenizer, embedding rows (memory-mapped)."""

    folder: Path
    facts: ModelFacts
    tokenizer: PieceTokenizer
    embedding: np.ndarray  # (vocab, dim) float32, read-only


def open_folder(folder: Path) -> Standalone | None:
    """The stand-alone side of an export folder (checked by its marker), or None when it
    has none."""
    folder = Path(folder)
    data = _read_layout(folder / FACTS)
    if data is None:
        return None
    facts = ModelFacts.from_dict(data)
    return Standalone(folder, facts, PieceTokenizer(folder / TOKENIZER, facts),
                      np.load(folder / EMBEDDING, mmap_mode="r"))


def _read_layout(path: Path) -> dict | None:
    """The JSON file at ``path`` when it is written in this :data:`LAYOUT`, else None (missing,
    unreadable, or from another version of the layout)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("layout") == LAYOUT else None


def _versions() -> dict[str, str]:
    out = {}
    for package in ("torch", "transformers", "onnx", "onnxruntime", "tokenizers"):
        try:
            out[package] = md.version(package)
        except md.PackageNotFoundError:
            pass
    return out


def source_key(path: str | os.PathLike, settings: dict) -> str:
    """A checksum of what a model directory's export depends on, read without loading it:
    the directory, each file's name, size and modification time, the export ``settings``,
    the library versions and :data:`LAYOUT`.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "config.json").write_text("{}")
    >>> a = source_key(d, {"attention": False})
    >>> a == source_key(d, {"attention": False}), a == source_key(d, {"attention": True})
    (True, False)
    >>> _ = (d / "config.json").write_text('{"x": 1}'); a == source_key(d, {"attention": False})
    False
    """
    path = Path(path).expanduser().resolve()
    files = []
    for f in sorted(path.iterdir()) if path.is_dir() else [path]:
        if f.name.startswith(".") or not f.is_file():
            continue
        st = f.stat()
        files.append([f.name, st.st_size, st.st_mtime_ns])
    described = {"path": str(path), "files": files, "settings": settings, "versions": _versions(),
                 "layout": LAYOUT}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def pointer(path: str | os.PathLike, settings: dict, cache: DiskCache | None = None) -> Path:
    """The pointer file naming the export of the model in ``path`` made with ``settings``."""
    cache = cache or DiskCache("onnx")
    return cache.folder / f"src-{source_key(path, settings)[:32]}.json"


def remember(path: str | os.PathLike, settings: dict, folder: Path, cache: DiskCache | None = None) -> None:
    """Point the model in ``path`` (with ``settings``) at its export ``folder``."""
    cache = cache or DiskCache("onnx")
    target = pointer(path, settings, cache)
    with atomic_output(target) as tmp:
        tmp.write_text(json.dumps({"export": Path(folder).name, "model": str(Path(path).resolve())}))
    cache.stored(target)


def find(path: str | os.PathLike, settings: dict, cache: DiskCache | None = None) -> Path | None:
    """The export folder the model in ``path`` points at, when it exists, passes its
    marker check and stands alone; else None (the caller exports)."""
    cache = cache or DiskCache("onnx")
    try:
        name = json.loads(pointer(path, settings, cache).read_text())["export"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    folder = cache.folder / str(name)
    if not (folder / FACTS).is_file():
        return None
    if problem := check_marker(folder):
        log.info("the ONNX export %s is not usable (%s); exporting again", folder, problem)
        return None
    return folder


def pad_batch(sequences: list[list[int]], pad_id: int) -> tuple[np.ndarray, np.ndarray]:
    """``(ids, mask)``, both ``(batch, longest)`` int64: the sequences right-padded with ``pad_id``."""
    width = max((len(s) for s in sequences), default=0)
    ids = np.full((len(sequences), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(sequences), width), dtype=np.int64)
    for b, s in enumerate(sequences):
        ids[b, : len(s)] = s
        mask[b, : len(s)] = 1
    return ids, mask


# -- a causal LM's head: what predict and the logit lens need beyond the hidden states ------------
HEAD = "head.json"


@dataclass
class LMHead:
    """A causal LM's final norm and unembedding, read as numpy: ``logits(h) = h @ W.T`` for
    the last hidden state (the graph's, already normed), ``normed(h)`` for the earlier ones
    (the logit lens)."""

    norm: str  # "rms" (Llama) | "layer" (GPT-2)
    eps: float
    weight: np.ndarray  # (dim,)
    bias: np.ndarray | None  # (dim,), LayerNorm only
    unembedding: np.ndarray  # (vocab, dim)

    def normed(self, h: np.ndarray) -> np.ndarray:
        """The final norm of ``h`` ``(..., dim)`` float32, as the model computes it.

        >>> head = LMHead("rms", 0.0, np.array([1.0, 2.0], np.float32), None, np.eye(2, dtype=np.float32))
        >>> [round(float(x), 4) for x in head.normed(np.array([3.0, 4.0], np.float32))]  # x / rms(x) * w
        [0.8485, 2.2627]
        """
        h = np.asarray(h, dtype=np.float32)
        if self.norm == "rms":
            out = h / np.sqrt((h * h).mean(-1, keepdims=True) + np.float32(self.eps))
            return (self.weight * out).astype(np.float32)
        centred = h - h.mean(-1, keepdims=True)
        out = centred / np.sqrt((centred * centred).mean(-1, keepdims=True) + np.float32(self.eps))
        return (out * self.weight + (0 if self.bias is None else self.bias)).astype(np.float32)

    def logits(self, h: np.ndarray) -> np.ndarray:
        """``(..., vocab)`` float32 logits of normed states ``(..., dim)``."""
        return np.asarray(h, dtype=np.float32) @ self.unembedding.T


def head_folder(path: str | os.PathLike, cache: DiskCache | None = None) -> Path:
    """Where the head of the causal LM in ``path`` is kept (kind ``onnx``)."""
    cache = cache or DiskCache("onnx")
    return cache.folder / f"lmhead-{source_key(path, {'head': 'causal'})[:32]}"


def _norm_kind(module) -> tuple[str, float] | None:
    eps = getattr(module, "variance_epsilon", None)
    if eps is None:
        eps = getattr(module, "eps", None)
    if eps is None:
        return None
    name = type(module).__name__.lower()
    if "rms" in name:
        return "rms", float(eps)
    return ("layer", float(eps)) if name == "layernorm" else None


def write_head(model, norm, folder: Path) -> str | None:
    """Write a loaded causal LM's head into ``folder`` (being built), checked against the
    model's own logits and final norm on a sample; the reason it cannot be, or None."""
    import torch

    kind = _norm_kind(norm)
    head = model.get_output_embeddings()
    if kind is None or head is None or getattr(head, "bias", None) is not None:
        return f"its final norm ({type(norm).__name__}) or head is not a plain norm + unembedding"
    weight = norm.weight.detach().float().cpu().numpy()
    bias = getattr(norm, "bias", None)
    bias = None if bias is None else bias.detach().float().cpu().numpy()
    lm = LMHead(kind[0], kind[1], weight, bias, head.weight.detach().float().cpu().numpy())
    vocab = int(lm.unembedding.shape[0])
    ids = torch.arange(6, dtype=torch.long)[None] % max(vocab - 1, 1) + min(3, vocab - 1)
    with torch.inference_mode():
        out = model(input_ids=ids, output_hidden_states=True)
        states = [h.float().cpu().numpy() for h in out.hidden_states]
        own_norm = norm(out.hidden_states[1]).float().cpu().numpy()
    if not np.allclose(lm.logits(states[-1]), out.logits.float().cpu().numpy(), atol=1e-4, rtol=1e-4):
        return "its logits are more than the unembedding of the last hidden state (e.g. logit scaling)"
    if not np.allclose(lm.normed(states[1]), own_norm, atol=1e-5, rtol=1e-5):
        return "its final norm is not computed as numpy computes it here"
    np.save(folder / "norm_weight.npy", weight)
    if bias is not None:
        np.save(folder / "norm_bias.npy", bias)
    np.save(folder / "unembedding.npy", np.ascontiguousarray(lm.unembedding, dtype=np.float32))
    (folder / HEAD).write_text(json.dumps({"layout": LAYOUT, "norm": kind[0], "eps": kind[1]}))
    return None


def open_head(folder: Path) -> LMHead | None:
    """The head kept in ``folder`` (checked by its marker), or None."""
    folder = Path(folder)
    if check_marker(folder) is not None:
        return None
    data = _read_layout(folder / HEAD)
    if data is None:
        return None
    bias = folder / "norm_bias.npy"
    return LMHead(data["norm"], float(data["eps"]), np.load(folder / "norm_weight.npy"),
                  np.load(bias) if bias.is_file() else None,
                  np.load(folder / "unembedding.npy", mmap_mode="r"))
