"""Engines and precisions of :class:`~contextlens.encoders.transformer.TransformerEncoder`:
which one runs the forward pass, with what batching, and how far bf16 moves the vectors.

An engine is a setting of the encoder, never a new encoder: ``torch`` (the Hugging Face
model itself, forward hooks on the layers asked for) and ``onnx`` (the same model exported
once with every hidden state as outputs, run by onnxruntime:
:mod:`contextlens.encoders.onnx_engine`) give the same :class:`Encoding`, every layer
within 1e-5 in fp32. ``auto`` is ``onnx`` where onnxruntime is installed, the device is
the CPU and the precision fp32, else ``torch`` (see :data:`AUTO_PICKS_ONNX`).

``precision="bf16"`` is opt-in and never a default: torch autocast runs the matmuls in
bfloat16 (8 bits of mantissa), which moves the vectors at the 1e-2 level. Its fidelity is
measured on the first texts encoded (:func:`layer_fidelity`, per layer the mean and the
lowest cosine of each word's bf16 vector to its fp32 vector) and logged as a warning, so
it is always shown. Only CPUs with bf16 matmul instructions (AVX-512 BF16, AMX, Arm
BF16) run it faster; elsewhere it is emulated and slower (0.33× fp32 measured on this
project's AMD EPYC Zen 3), and the encoder warns. onnxruntime's CPU provider has no bf16
MatMul, so ``engine="onnx"`` with bf16 is refused.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..errors import InputError, check_choice

__all__ = ["ENGINES", "PRECISIONS", "AUTO_PICKS_ONNX", "BATCH_TOKENS", "BATCH_SIZE", "LayerFidelity",
           "resolve_engine", "layer_fidelity", "bf16_instructions", "describe_fidelity"]

log = logging.getLogger(__name__)
ENGINES = ("torch", "onnx", "auto")
PRECISIONS = ("fp32", "bf16")
# The defaults below were chosen by `benchmarks/extraction.py` (benchmarks/RESULTS.md,
# "Extraction engines"), every layer of every word of Brown sentences with minilm on this
# project's shared 2-core machine, which was busy (load average 8-16) in every run; the
# sweep changes one setting at a time from 1,024 padded pieces, 32 sequences, sorted,
# every core, no spinning (ratios > 1: faster than that; 500 sentences, 2 paired repeats):
#   onnx:  4,096 pieces + 64 sequences 1.26, no cap 0.97, no cap + 128 sequences 1.02,
#          unsorted 0.65, 1 thread 0.79, spinning 0.76;
#   torch: no cap 1.24, no cap + 128 sequences 1.16, 4,096 + 64 1.00, unsorted 0.58,
#          1 thread 1.91 (torch's threads wait for each other when the cores are taken;
#          not the default, since on a free machine one thread leaves the other cores idle);
#   onnx / torch at the old settings: 1.65, hence ``auto`` picks onnx.
AUTO_PICKS_ONNX = True
BATCH_TOKENS = {"torch": 8192, "onnx": 4096}  # padded pieces per batch (8192: no cap on sentences)
BATCH_SIZE = {"torch": 32, "onnx": 64}  # sequences per batch when the caller does not say
BF16_FLAGS = ("avx512_bf16", "amx_bf16", "bf16")  # x86 /proc/cpuinfo flags, Arm "Features"


class LayerFidelity(NamedTuple):
    """How close one layer's bf16 word vectors are to fp32's."""

    layer: int  # the layer number (0 = embedding row)
    mean_cosine: float
    min_cosine: float


def resolve_engine(engine: str, precision: str, device: str = "cpu") -> str:
    """The engine that will run: ``torch`` or ``onnx``; bad combinations are refused.

    >>> resolve_engine("torch", "bf16")
    'torch'
    >>> resolve_engine("auto", "fp32", "cuda")
    'torch'
    >>> resolve_engine("onnx", "bf16")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: precision='bf16' needs engine='torch': onnxruntime's CPU provider has no bf16 MatMul; use engine='torch' or precision='fp32'
    """  # noqa: E501 (a doctest's expected output, printed whole)
    check_choice("engine", engine, ENGINES)
    check_choice("precision", precision, PRECISIONS)
    on_cpu = str(device) == "cpu"
    if engine == "onnx":
        if precision == "bf16":
            raise InputError("precision='bf16' needs engine='torch': onnxruntime's CPU provider has no bf16 "
                             "MatMul; use engine='torch' or precision='fp32'")
        if not on_cpu:
            raise InputError(f"engine='onnx' runs on the CPU only (device {device!r}); use engine='torch' "
                             "for another device")
        return "onnx"
    if engine == "auto":
        installed = importlib.util.find_spec("onnxruntime") is not None
        return "onnx" if AUTO_PICKS_ONNX and installed and on_cpu and precision == "fp32" else "torch"
    return "torch"


def bf16_instructions(cpuinfo: str | None = None) -> list[str]:
    """The bf16 matmul instructions the CPU has, from ``/proc/cpuinfo`` (empty: none, so
    bf16 is emulated and slower than fp32).

    >>> bf16_instructions("flags : fpu avx2 avx512f avx512_bf16 amx_tile")
    ['avx512_bf16']
    >>> bf16_instructions("flags : fpu avx2 avx512f")
    []
    """
    if cpuinfo is None:
        path = Path("/proc/cpuinfo")
        cpuinfo = path.read_text(errors="replace") if path.is_file() else ""
    flags = {f for line in cpuinfo.splitlines() if line.split(":")[0].strip() in ("flags", "Features")
             for f in line.split(":", 1)[-1].split()}
    return [f for f in BF16_FLAGS if f in flags]


def layer_fidelity(reference: np.ndarray, other: np.ndarray, layer_ids) -> list[LayerFidelity]:
    """Per layer, the mean and the lowest cosine between matching word vectors.

    reference, other : ``(layers, words, dim)``, the same words in the same order.

    >>> ref = np.array([[[1.0, 0.0], [0.0, 2.0]]])  # (1 layer, 2 words, 2 dims)
    >>> got = np.array([[[1.0, 1.0], [0.0, 3.0]]])  # word 0 turned by 45 degrees
    >>> [tuple(round(x, 4) for x in f) for f in layer_fidelity(ref, got, [0])]
    [(0, 0.8536, 0.7071)]
    """
    if reference.shape != other.shape or reference.ndim != 3 or len(layer_ids) != reference.shape[0]:
        raise InputError(f"fidelity needs two (layers, words, dim) stacks of one shape and one id per layer, "
                         f"got {reference.shape}, {other.shape} and {len(layer_ids)} ids")
    norms = np.linalg.norm(reference, axis=-1) * np.linalg.norm(other, axis=-1)  # (layers, words)
    cos = (reference * other).sum(-1) / np.maximum(norms, 1e-12)
    return [LayerFidelity(int(k), float(c.mean()), float(c.min())) for k, c in zip(layer_ids, cos)]


def describe_fidelity(fidelity: list[LayerFidelity], words: int) -> str:
    """One line: each layer's mean / lowest cosine to fp32.

    >>> describe_fidelity([LayerFidelity(0, 1.0, 1.0), LayerFidelity(1, 0.99991, 0.9971)], 12)
    'bf16 fidelity over 12 words (cosine to fp32, mean / lowest): layer 0 1.00000 / 1.00000, layer 1 0.99991 / 0.99710'
    """  # noqa: E501 (a doctest's expected output, printed whole)
    parts = ", ".join(f"layer {f.layer} {f.mean_cosine:.5f} / {f.min_cosine:.5f}" for f in fidelity)
    return f"bf16 fidelity over {words} words (cosine to fp32, mean / lowest): {parts}"
