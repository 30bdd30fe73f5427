"""The ONNX Runtime engine: a loaded Hugging Face model exported once to ONNX with every
hidden state (and, in a second variant, every attention) as outputs, then run by
onnxruntime.

Why: on a shared CPU (other processes on the cores) onnxruntime kept 2.1–3.6× the
throughput of the torch forward with the same vectors (issue 15); its graph optimisations
fuse LayerNorm, GELU and the residual adds, and its thread pool degrades less when the
cores are taken.

The export (``torch.onnx.export``, TorchScript tracer: 2.5 s for minilm and 44 s for
smollm2 where the dynamo exporter took 17 s and 342 s, with the same numbers; Optimum was
not used because installing it downgrades transformers) has dynamic batch and sequence
axes and outputs ``hidden_0 .. hidden_L`` ``(batch, seq, dim)`` and, with attention,
``attention_1 .. attention_L`` ``(batch, heads, seq, seq)``. It is traced on a padded
batch of two sequences so the attention mask stays in the graph.

Fusions: onnxruntime's own graph optimisations (``ORT_ENABLE_ALL``, applied when a session
is created) fuse LayerNorm, bias + GELU and the matmul scalings of the exported graph.
The offline ``onnxruntime.transformers`` optimizer (SkipLayerNorm, BiasGelu) was measured
on minilm and not kept: its graph ran 1.23× slower (median of 5 paired passes over 400
Brown sentences) and moved the hidden states by 7.6e-6. onnxruntime runs the whole graph
whatever outputs are asked for (only ``hidden_1``: 0.97 of the time of all of them).

The cache (``contextlens.files.cache_dir("onnx")``) holds one folder per export, named by
a checksum of the weights, the model's config, the export settings and the library
versions; it is built in a temporary folder and renamed into place under a lock (the
pattern of :mod:`contextlens.encoders.model_cache`), with a marker written last. A folder
whose marker does not match its files, or whose graph onnxruntime cannot load, is rebuilt.
Every use stamps its folder; after a new export, the least recently used exports are
removed until the cache holds at most ``CACHE_BYTES`` (the new one always stays), so
exports of models and settings no longer used do not pile up.

>>> settings = ExportSettings(attention=True)
>>> output_names(2, settings)
['hidden_0', 'hidden_1', 'hidden_2', 'attention_1', 'attention_2']
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata as md
import io
import json
import logging
import os
import re
import shutil
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import ContextLensError, InputError, MissingDependencyError, check_choice
from ..files import cache_dir
from . import models
from .model_cache import _building, _write_marker, check_marker

__all__ = [
    "EXPORTERS", "ExportSettings", "OnnxOutput", "OnnxRunner", "OnnxExportError",
    "weights_checksum", "cache_key", "output_names", "export", "exported", "session_options",
    "require_onnxruntime", "prune_exports", "CACHE_BYTES",
]

log = logging.getLogger(__name__)
EXPORTERS = ("torchscript", "dynamo")
GRAPH = "model.onnx"
CACHE_BYTES = 4 * 2**30  # exports kept: the packaged models' six (with and without attentions) take ~2 GB


class OnnxExportError(ContextLensError):
    """The model could not be exported to ONNX, or the export does not load."""


@dataclass(frozen=True)
class ExportSettings:
    """What an export is made with (part of its cache key).

    attention : attentions as outputs too (the model must use the eager attention).
    exporter : ``torchscript`` (traced; fast) or ``dynamo`` (``torch.export``).
    opset : the ONNX opset.
    """

    attention: bool = False
    exporter: str = "torchscript"
    opset: int = 17

    def __post_init__(self):
        check_choice("exporter", self.exporter, EXPORTERS)
        if not isinstance(self.attention, bool):
            raise InputError(f"attention must be True or False, got {self.attention!r}")


class OnnxOutput(NamedTuple):
    """What one forward pass gives, as the torch path gets it."""

    hidden_states: list[np.ndarray]  # L + 1 arrays, each (batch, seq, dim)
    attentions: list[np.ndarray] | None  # L arrays, each (batch, heads, seq, seq)


def require_onnxruntime(feature: str = "the ONNX Runtime engine"):
    """The ``onnxruntime`` module, or MissingDependencyError naming ``contextlens[onnx]``."""
    try:
        import onnxruntime
    except ImportError:
        raise MissingDependencyError("onnxruntime", "onnx", feature) from None
    return onnxruntime


def output_names(n_layers: int, settings: ExportSettings) -> list[str]:
    """The graph's outputs: every hidden state, then (with attention) every layer's weights."""
    names = [f"hidden_{k}" for k in range(n_layers + 1)]
    return names + ([f"attention_{k}" for k in range(1, n_layers + 1)] if settings.attention else [])


def weights_checksum(model) -> str:
    """SHA-256 of every parameter and buffer (name, dtype, shape, bytes), in name order.

    >>> import torch
    >>> a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    >>> with torch.no_grad():
    ...     _ = b.weight.copy_(a.weight), b.bias.copy_(a.bias)
    >>> weights_checksum(a) == weights_checksum(b)
    True
    >>> with torch.no_grad():
    ...     b.bias[0] += 1e-7
    >>> weights_checksum(a) == weights_checksum(b)
    False
    """
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().cpu().contiguous().reshape(-1)
        digest.update(f"{name}|{flat.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(flat.view(torch.uint8).numpy().data)
    return digest.hexdigest()


def _versions() -> dict[str, str]:
    out = {}
    for package in ("torch", "transformers", "onnx", "onnxruntime", "onnxscript"):
        with contextlib.suppress(md.PackageNotFoundError):
            out[package] = md.version(package)
    return out


def cache_key(model, settings: ExportSettings) -> str:
    """A checksum of what the export depends on: weights, config, class, settings, versions."""
    described = {
        "weights": weights_checksum(model), "class": type(model).__name__,
        "config": model.config.to_dict(), "settings": asdict(settings), "versions": _versions(),
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()


def _all_states(model, attention: bool):
    """``model`` wrapped so its forward returns the hidden states (then attentions) as a tuple."""
    import torch

    class AllStates(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask):
            out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                             output_hidden_states=True, output_attentions=attention)
            return tuple(out.hidden_states) + (tuple(out.attentions) if attention else ())

    return AllStates().eval()


def _sample_inputs(model):
    """A padded batch of two sequences (lengths 5 and 3) of ordinary token ids."""
    import torch

    vocab = int(model.config.vocab_size)
    ids = torch.arange(5, dtype=torch.long).repeat(2, 1) % max(vocab - 1, 1) + min(4, vocab - 1)
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=torch.long)
    return ids, mask


def _attn_implementation(model) -> str:
    return str(getattr(model.config, "_attn_implementation", None) or "eager")


def export(model, target: Path, settings: ExportSettings) -> Path:
    """Export ``model`` (a loaded HF model, float32, eval) to ``target / model.onnx``."""
    import torch

    if settings.attention and _attn_implementation(model) != "eager":
        raise InputError("exporting attentions needs the model loaded with the eager attention "
                         "(models.load(..., attention=True))")
    n_layers = int(model.config.num_hidden_layers)
    names = output_names(n_layers, settings)
    wrapper = _all_states(model, settings.attention)
    ids, mask = _sample_inputs(model)
    axes = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}}
    if settings.exporter == "torchscript":
        kwargs = {"dynamo": False, "dynamic_axes": {**axes, **{n: {0: "batch"} for n in names}}}
    else:
        batch, seq = torch.export.Dim("batch"), torch.export.Dim("seq")
        kwargs = {"dynamo": True, "external_data": False,
                  "dynamic_shapes": {"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}}}
    path = target / GRAPH
    log.info("exporting %s to ONNX (%s, %d outputs) into %s", type(model).__name__, settings.exporter,
             len(names), target)
    chatter = io.StringIO()  # the exporters print progress and warn about traced branches
    try:
        with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings(), \
                contextlib.redirect_stdout(chatter):
            warnings.simplefilter("ignore")
            torch.onnx.export(wrapper, (ids, mask), str(path), input_names=["input_ids", "attention_mask"],
                              output_names=names, opset_version=settings.opset, **kwargs)
    except Exception as e:
        raise OnnxExportError(f"exporting {type(model).__name__} to ONNX ({settings.exporter}) failed: {e}; "
                              "use the torch engine") from e
    log.debug("exporter output: %s", chatter.getvalue()[-2000:])
    return path


def _safe_label(model) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(model.config.model_type)).strip("-.") or "model"


def _check(path: Path) -> str | None:
    if problem := check_marker(path):
        return problem
    return None if (path / GRAPH).is_file() else f"{path / GRAPH} is missing"


def exported(model, settings: ExportSettings = ExportSettings(), *, rebuild: bool = False) -> Path:
    """The cached export of ``model`` with ``settings`` (its folder), built once."""
    target = cache_dir("onnx") / f"{_safe_label(model)}-{cache_key(model, settings)[:24]}"
    with _building(target, rebuild, check=_check) as tmp:
        if tmp is None:
            _stamp(target)
            return target
        export(model, tmp, settings)
        (tmp / "export.json").write_text(json.dumps(
            {"class": type(model).__name__, "settings": asdict(settings), "versions": _versions(),
             "outputs": output_names(int(model.config.num_hidden_layers), settings)}, indent=1))
        _write_marker(tmp, f"onnx: {_safe_label(model)} ({settings.exporter})")
    _stamp(target)
    prune_exports(target.parent, keep=target)
    return target


def _stamp(folder: Path) -> None:
    """Mark an export as just used (its folder's modification time)."""
    with contextlib.suppress(OSError):
        os.utime(folder)


def prune_exports(root: Path, *, keep: Path | None = None, budget: int | None = None) -> list[Path]:
    """Remove the least recently used exports under ``root`` until they take at most
    ``budget`` bytes (default :data:`CACHE_BYTES`); ``keep`` and exports another process
    is building (their lock held) stay. Returns the folders removed.

    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for i, name in enumerate(["bert-old", "bert-new"]):
    ...     (root / name).mkdir(); _ = (root / name / GRAPH).write_bytes(b"x" * 600)
    ...     os.utime(root / name, (i, i))
    >>> [p.name for p in prune_exports(root, budget=1000)], sorted(p.name for p in root.iterdir())
    (['bert-old'], ['bert-new'])
    """
    budget = CACHE_BYTES if budget is None else budget
    found = []
    for folder in root.iterdir():
        if folder.name.startswith(".") or not folder.is_dir():
            continue  # locks and half-built temporary folders
        with contextlib.suppress(OSError):
            size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
            found.append((folder.stat().st_mtime, folder, size))
    total = sum(size for _, _, size in found)
    removed = []
    for _, folder, size in sorted(found, key=lambda t: t[0]):
        if total <= budget:
            break
        if keep is not None and folder == keep:
            continue
        if _remove_unlocked(folder):
            total -= size
            removed.append(folder)
    if removed:
        log.info("ONNX cache: removed %d least recently used export(s), %.1f GB kept", len(removed), total / 1e9)
    return removed


def _remove_unlocked(folder: Path) -> bool:
    """Remove ``folder`` unless another process holds its build lock."""
    lock_path = folder.parent / f".{folder.name}.lock"
    try:
        import fcntl
    except ImportError:  # no flock (Windows): never remove what might be in use
        return False
    with open(lock_path, "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        lock_path.unlink()
    return not folder.exists()


def session_options(threads: int, spinning: bool = False):
    """onnxruntime session options: every graph optimisation, ``threads`` intra-op threads,
    and whether idle threads spin (busy-wait) for work (faster on idle cores, a waste of
    the other processes' time on busy ones)."""
    ort = require_onnxruntime()
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3  # errors only
    flag = "1" if spinning else "0"
    options.add_session_config_entry("session.intra_op.allow_spinning", flag)
    options.add_session_config_entry("session.inter_op.allow_spinning", flag)
    return options


class OnnxRunner:
    """A loaded HF model run by onnxruntime: ``run(input_ids, attention_mask,
    want_attention)`` gives the hidden states (and attentions) the torch path gets.

    Parameters
    ----------
    model : the model :func:`contextlens.encoders.models.load` returns (float32, eval). With
        ``attention=True`` it must use the eager attention; the attention graph is then
        exported too, when first asked for.
    threads : intra-op threads (as for torch: default ``CONTEXTLENS_THREADS`` or every core).
    spinning : let idle threads busy-wait for work.
    exporter : ``torchscript`` or ``dynamo``.
    """

    def __init__(self, model, *, threads: int | None = None, spinning: bool = False,
                 exporter: str = "torchscript"):
        self._ort = require_onnxruntime()
        self.threads = models.thread_count(threads)
        self.spinning = bool(spinning)
        self.model = model
        self.n_layers = int(model.config.num_hidden_layers)
        self.exporter = check_choice("exporter", exporter, EXPORTERS)
        self._sessions: dict[bool, object] = {}
        self.paths: dict[bool, Path] = {}

    def session(self, attention: bool = False):
        """The onnxruntime session of the plain (or the attention) graph, exported when needed."""
        if attention not in self._sessions:
            if attention and _attn_implementation(self.model) != "eager":
                raise InputError("attention weights need the model loaded with attention=True "
                                 "(the eager attention implementation)")
            settings = ExportSettings(attention=attention, exporter=self.exporter)
            path = exported(self.model, settings)
            try:
                session = self._load(path)
            except Exception as e:  # a corrupt graph: rebuild once
                log.warning("the cached ONNX export %s does not load (%s); rebuilding it", path, e)
                path = exported(self.model, settings, rebuild=True)
                session = self._load(path)
            self._sessions[attention], self.paths[attention] = session, path
        return self._sessions[attention]

    def _load(self, path: Path):
        return self._ort.InferenceSession(str(path / GRAPH), session_options(self.threads, self.spinning),
                                          providers=["CPUExecutionProvider"])

    def run(self, input_ids, attention_mask, want_attention: bool = False) -> OnnxOutput:
        """One forward pass; ``input_ids``, ``attention_mask``: ``(batch, seq)`` integer
        arrays (numpy or torch)."""
        feed = {"input_ids": _int64(input_ids), "attention_mask": _int64(attention_mask)}
        if feed["input_ids"].shape != feed["attention_mask"].shape or feed["input_ids"].ndim != 2:
            raise InputError(f"input_ids {feed['input_ids'].shape} and attention_mask "
                             f"{feed['attention_mask'].shape} must both be (batch, seq)")
        out = self.session(bool(want_attention)).run(None, feed)
        n = self.n_layers + 1
        return OnnxOutput(out[:n], out[n:] if want_attention else None)


def _int64(array) -> np.ndarray:
    if hasattr(array, "detach"):
        array = array.detach().cpu().numpy()
    return np.ascontiguousarray(array, dtype=np.int64)
