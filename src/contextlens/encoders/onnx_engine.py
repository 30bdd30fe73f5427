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

The cache (kind ``onnx`` of :mod:`contextlens.disk_cache`: one policy for every cache)
holds one folder per export, named by a checksum of the weights, the model's config, the
export settings and the library versions; it is built in a temporary folder and renamed
into place under a lock, with a marker written last that records each file's size and
SHA-256. A folder whose files do not match their marker (by content: an overwrite of the
same size is seen), or whose graph onnxruntime cannot load, is rebuilt; so is one whose
graph gives NaN or infinite hidden states (a damaged export the checksum could not see),
and if a fresh export gives them too the error names the folder. Every use stamps its
folder; after a new export, the least recently used exports are removed until the cache
holds at most its bound (``CONTEXTLENS_CACHE_LIMIT_ONNX``, default 4 GiB); an export in
use by another process, and the new one, stay.

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
import re
import threading
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..build_marker import check_marker, write_marker
from ..disk_cache import DiskCache, Lease
from ..errors import ContextLensError, InputError, MissingDependencyError, check_choice
from ..progress import step
from . import models, standalone

__all__ = [
    "EXPORTERS", "ExportSettings", "OnnxOutput", "OnnxRunner", "OnnxExportError", "OnnxOutputError",
    "weights_checksum", "cache_key", "output_names", "export", "exported", "session_options",
    "require_onnxruntime", "all_finite", "optimize",
]

log = logging.getLogger(__name__)
EXPORTERS = ("torchscript", "dynamo")
GRAPH = "model.onnx"
WEIGHTS = "model.onnx.data"  # the graph's weights, beside it (memory-mapped when a session loads)


class OnnxExportError(ContextLensError):
    """The model could not be exported to ONNX, or the export does not load."""


class OnnxOutputError(ContextLensError):
    """A freshly exported graph gives NaN or infinite values where the model's own must be finite."""


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
        "layout": standalone.LAYOUT,
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
    """Export ``model`` (a loaded HF model, float32, eval) to ``target / model.onnx`` (optimised by
    :func:`optimize`, its weights in ``target / model.onnx.data``)."""
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
    raw = target / "exported.onnx"
    log.info("exporting %s to ONNX (%s, %d outputs) into %s", type(model).__name__, settings.exporter,
             len(names), target)
    chatter = io.StringIO()  # the exporters print progress and warn about traced branches
    try:
        with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings(), \
                contextlib.redirect_stdout(chatter):
            warnings.simplefilter("ignore")
            torch.onnx.export(wrapper, (ids, mask), str(raw), input_names=["input_ids", "attention_mask"],
                              output_names=names, opset_version=settings.opset, **kwargs)
    except Exception as e:
        raise OnnxExportError(f"exporting {type(model).__name__} to ONNX ({settings.exporter}) failed: {e}; "
                              "use the torch engine") from e
    log.debug("exporter output: %s", chatter.getvalue()[-2000:])
    return optimize(raw, target / GRAPH)


def optimize(raw: Path, path: Path) -> Path:
    """Save onnxruntime's optimised form of the graph in ``raw`` (deleted after) at ``path``,
    its weights beside it in :data:`WEIGHTS`.

    Every session then loads a graph whose fusions are already made and maps its weights
    instead of parsing them: SmolLM2-135M's session starts in 0.5 s of CPU instead of 1.6–2.0 s
    (issue 23). The level saved is ``ORT_ENABLE_EXTENDED`` (fusions for the CPU provider,
    not tied to this CPU's instruction set, unlike ``ORT_ENABLE_ALL``'s layouts); sessions
    still load with every optimisation on (:func:`session_options`), which finds nothing
    more to fuse in these graphs.
    """
    ort = require_onnxruntime()
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(path)
    options.log_severity_level = 3
    saved = "session.optimized_model_external_initializers"
    options.add_session_config_entry(f"{saved}_file_name", WEIGHTS)
    options.add_session_config_entry(f"{saved}_min_size_in_bytes", "1024")  # every weight matrix
    try:
        ort.InferenceSession(str(raw), options, providers=["CPUExecutionProvider"])
    except Exception as e:
        raise OnnxExportError(f"onnxruntime cannot load the export {raw}: {e}; use the torch engine") from e
    raw.unlink()
    return path


def _safe_label(model) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(model.config.model_type)).strip("-.") or "model"


def _check(path: Path) -> str | None:
    if problem := check_marker(path):
        return problem
    return None if (path / GRAPH).is_file() else f"{path / GRAPH} is missing"


def _check_standalone(path: Path) -> str | None:
    """As :func:`_check`, and the stand-alone files were tried (written, or found impossible)."""
    if problem := _check(path):
        return problem
    return None if (path / standalone.FACTS).is_file() else f"{path} has no stand-alone files"


def _target(model, settings: ExportSettings) -> Path:
    return DiskCache("onnx").folder / f"{_safe_label(model)}-{cache_key(model, settings)[:24]}"


def _export_into(model, settings: ExportSettings, target: Path, rebuild: bool, tokenizer=None) -> Lease:
    """The export of ``model`` in ``target`` (checked, else built), held in use; with the
    model's ``tokenizer``, its stand-alone files too (:mod:`~contextlens.encoders.standalone`)."""
    cache = DiskCache("onnx", target.parent)
    lease = cache.use(target)
    check = _check if tokenizer is None else _check_standalone
    with cache.building(target, rebuild=rebuild, check=check) as tmp:
        if tmp is not None:
            with step(f"exporting {_safe_label(model)} to ONNX (once per model and settings)"):
                export(model, tmp, settings)
            (tmp / "export.json").write_text(json.dumps(
                {"class": type(model).__name__, "settings": asdict(settings), "versions": _versions(),
                 "outputs": output_names(int(model.config.num_hidden_layers), settings)}, indent=1))
            if tokenizer is not None and not standalone.write(model, tokenizer, tmp):
                facts = {"layout": standalone.LAYOUT, "standalone": False}
                (tmp / standalone.FACTS).write_text(json.dumps(facts))
            write_marker(tmp, f"onnx: {_safe_label(model)} ({settings.exporter})")
    return lease


def exported(model, settings: ExportSettings = ExportSettings(), *, rebuild: bool = False,
             tokenizer=None) -> Path:
    """The cached export of ``model`` with ``settings`` (its folder), built once; with the
    model's ``tokenizer``, made to stand alone."""
    target = _target(model, settings)
    _export_into(model, settings, target, rebuild, tokenizer).release()
    return target


def all_finite(arrays, attention_mask) -> bool:
    """Whether every value of ``arrays`` at real (unpadded) positions is finite: hidden
    states ``(batch, seq, dim)`` where ``attention_mask`` ``(batch, seq)`` is 1, attentions
    ``(batch, heads, seq, seq)`` between two such positions.

    >>> mask = np.array([[1, 0]])
    >>> all_finite([np.array([[[1.0], [np.nan]]])], mask), all_finite([np.array([[[np.inf], [0.0]]])], mask)
    (True, False)
    """
    real = np.asarray(attention_mask).astype(bool)  # (batch, seq)
    for a in arrays:
        if a.ndim == 3 and not np.isfinite(a[real]).all():
            return False
        if a.ndim == 4:
            pairs = real[:, :, None] & real[:, None, :]  # (batch, seq, seq)
            if not (np.isfinite(a).all(axis=1) | ~pairs).all():
                return False
    return True


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
    """A model run by onnxruntime: ``run(input_ids, attention_mask, want_attention)`` gives
    the hidden states (and attentions) the torch path gets.

    Parameters
    ----------
    model : the model :func:`contextlens.encoders.models.load` returns (float32, eval). With
        ``attention=True`` it must use the eager attention; the attention graph is then
        exported too, when first asked for. None with ``loader``: loaded only when an
        export has to be made.
    threads : intra-op threads (default: ``CONTEXTLENS_THREADS``, else every usable core).
    spinning : let idle threads busy-wait for work.
    exporter : ``torchscript`` or ``dynamo``.
    source : the model's directory: its export is found through a pointer file without
        loading the model (:func:`contextlens.encoders.standalone.find`), and made to stand alone.
    loader : ``() -> (model, tokenizer)``, called at most once, when an export is needed.
    tokenizer : the loaded model's tokenizer (its export is then made to stand alone).
    """

    def __init__(self, model=None, *, threads: int | None = None, spinning: bool = False,
                 exporter: str = "torchscript", source: str | Path | None = None, loader=None,
                 tokenizer=None):
        if model is None and loader is None:
            raise InputError("give the model, or a loader that loads it")
        self._ort = require_onnxruntime()
        self.threads = models.thread_count(threads)
        self.spinning = bool(spinning)
        self._model, self._loader, self.tokenizer = model, loader, tokenizer
        self.source = None if source is None else Path(source)
        self.n_layers = None if model is None else int(model.config.num_hidden_layers)
        self.exporter = check_choice("exporter", exporter, EXPORTERS)
        self._sessions: dict[bool, object] = {}
        self.paths: dict[bool, Path] = {}
        self._lock = threading.RLock()  # one loader call and one session per graph, whoever asks first

    @property
    def model(self):
        """The HF model (loaded by the loader the first time it is needed: an export)."""
        with self._lock:
            if self._model is None:
                self._model, self.tokenizer = self._loader()
                self.n_layers = int(self._model.config.num_hidden_layers)
        return self._model

    def session(self, attention: bool = False, *, rebuild: bool = False):
        """The onnxruntime session of the plain (or the attention) graph, exported when
        needed (``rebuild``: exported again whatever the cache holds); made once, under a lock,
        when two threads first ask at once."""
        with self._lock:
            if rebuild or attention not in self._sessions:
                settings = ExportSettings(attention=attention, exporter=self.exporter)
                found = None if rebuild or self.source is None else standalone.find(self.source,
                                                                                      asdict(settings))
                session = None
                if found is not None:
                    with DiskCache("onnx", found.parent).use(found):
                        try:
                            session, path = self._load(found), found
                        except Exception as e:  # a graph onnxruntime cannot read: exported again below
                            log.warning("the cached ONNX export %s does not load (%s); rebuilding it",
                                        found, e)
                            rebuild = True
                if session is None:
                    session, path = self._export_and_load(settings, rebuild)
                outputs = [o.name for o in session.get_outputs()]
                self.n_layers = sum(name.startswith("hidden_") for name in outputs) - 1
                self._sessions[attention], self.paths[attention] = session, path
            return self._sessions[attention]

    def _export_and_load(self, settings: ExportSettings, rebuild: bool):
        model = self.model
        if settings.attention and _attn_implementation(model) != "eager":
            raise InputError("attention weights need the model loaded with attention=True "
                             "(the eager attention implementation)")
        path = _target(model, settings)
        with _export_into(model, settings, path, rebuild, self.tokenizer):  # in use until loaded
            try:
                session = self._load(path)
            except Exception as e:  # a graph onnxruntime cannot read: rebuild once
                log.warning("the cached ONNX export %s does not load (%s); rebuilding it", path, e)
                with _export_into(model, settings, path, True, self.tokenizer):
                    session = self._load(path)
        if self.source is not None and standalone.open_folder(path) is not None:
            standalone.remember(self.source, asdict(settings), path)
        return session, path

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
        want_attention = bool(want_attention)
        out = self.session(want_attention).run(None, feed)
        if not all_finite(out, feed["attention_mask"]):  # a damaged graph: export it again, once
            log.warning("the cached ONNX export %s gave NaN or infinite values; exporting the model again",
                        self.paths[want_attention])
            out = self.session(want_attention, rebuild=True).run(None, feed)
            if not all_finite(out, feed["attention_mask"]):
                raise OnnxOutputError(
                    f"the ONNX export of {type(self.model).__name__} in {self.paths[want_attention]} gives "
                    "NaN or infinite values even when exported afresh; run the model with the torch engine "
                    "to see whether the model itself gives them")
        n = self.n_layers + 1
        return OnnxOutput(out[:n], out[n:] if want_attention else None)


def _int64(array) -> np.ndarray:
    if hasattr(array, "detach"):
        array = array.detach().cpu().numpy()
    return np.ascontiguousarray(array, dtype=np.int64)
