"""Prepare a model for the stand-alone ONNX engine when it is installed, and verify it, so a
user's first command is not the one that pays for the export (issue 23 §1).

:func:`prepare_onnx` exports the model's two graphs (hidden states; hidden states and
attentions) with their stand-alone files, and for a causal LM its head; then it opens the
model as a later command will (through the pointer, without loading it with torch) and
checks every layer (relative to the layer's magnitude, :func:`layers_difference`), the word
attention, the queries and keys the neuron view computes without torch (where numpy can read
the model: :mod:`~contextlens.encoders.qk_numpy`, :func:`parts_difference`) and, for a causal
LM, the logit lens of :data:`CHECK_TEXTS` against the torch engine:
the largest difference must be within :data:`TOLERANCE`, else
:class:`~contextlens.encoders.onnx_engine.OnnxOutputError`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass

import numpy as np

from ..progress import step

__all__ = ["PreparedModel", "prepare_onnx", "layers_difference", "parts_difference", "CHECK_TEXTS",
           "TOLERANCE"]

log = logging.getLogger(__name__)
CHECK_TEXTS = ("The bank approved my loan.", "We sat on the bank of the river, watching the boats.")
TOLERANCE = 1e-5


@dataclass(frozen=True)
class PreparedModel:
    """What preparing one model did: whether it stands alone, where its export is, how far
    its numbers are from the torch engine's (the largest absolute difference)."""

    model: str
    standalone: bool
    export: str
    max_difference: float
    lm_max_difference: float | None
    seconds: float
    qk_max_difference: float | None = None  # the neuron view's parts without torch (None: read from torch)

    def as_dict(self) -> dict:
        return asdict(self)


def layers_difference(got: np.ndarray, want: np.ndarray) -> float:
    """The largest difference of two ``(layers, words, dim)`` stacks, each layer's measured
    against its own magnitude when that is above 1 (SmolLM2's residual stream holds values in
    the hundreds, where float32 rounding alone is ~1e-3 absolute; a layer of small values is
    compared absolutely).

    >>> want = np.array([[[0.5, -0.25]], [[400.0, 2.0]]])
    >>> round(layers_difference(want + np.array([[[1e-6, 0]], [[4e-3, 0]]]), want), 9)
    1e-05
    """
    scale = np.maximum(1.0, np.abs(want).max(axis=(1, 2)))
    return float((np.abs(got - want).max(axis=(1, 2)) / scale).max())


def parts_difference(got, want) -> float:
    """The largest difference of two lists of :class:`~contextlens.encoders.qk.AttentionParts`
    of the same text: queries and keys at the real (unpadded) pieces as :func:`layers_difference`
    measures them, the bias and the weights absolutely.

    >>> from contextlens.encoders.qk import AttentionParts
    >>> x = np.array([[[1.0, 0.0], [0.0, 1.0]]])
    >>> def parts(q):
    ...     return AttentionParts("a b", ("a", "b"), ((0,), (1,)), ("a", "b"), 1, "layer 1", q, x, 1.0,
    ...                           np.ones((2, 2), bool), np.full((1, 2, 2), 0.5))
    >>> round(parts_difference([parts(x + 2e-6)], [parts(x)]), 9)   # the queries moved by 2e-6
    2e-06
    """
    worst = 0.0
    for a, b in zip(got, want, strict=True):
        real = len(a.tokens) - a.padding
        for x, y in ((a.queries, b.queries), (a.keys, b.keys)):
            worst = max(worst, layers_difference(x[None, :, :real], y[None, :, :real]))
        if (a.bias is None) != (b.bias is None):
            return float("inf")
        pairs = [(a.weights, b.weights)] + ([] if a.bias is None else [(a.bias, b.bias)])
        worst = max(worst, *(float(np.abs(np.asarray(p) - np.asarray(q)).max()) for p, q in pairs))
    return worst


def prepare_onnx(name: str) -> PreparedModel:
    """Export ``name`` for the stand-alone ONNX engine and verify it against torch."""
    from .lm import LanguageModel, NoLMHeadError
    from .onnx_engine import OnnxOutputError
    from .transformer import TransformerEncoder

    start = time.perf_counter()
    with step(f"exporting {name} to ONNX and checking it against torch"):
        TransformerEncoder(name, engine="onnx").encode(list(CHECK_TEXTS))  # both graphs exported
        fresh = TransformerEncoder(name, engine="onnx")  # as a later command opens it
        standalone = fresh._hf is None
        reference = TransformerEncoder(name, engine="torch")
        diff = 0.0
        for a, b in zip(fresh.encode(list(CHECK_TEXTS)), reference.encode(list(CHECK_TEXTS)), strict=True):
            diff = max(diff, layers_difference(a.layers, b.layers),
                       float(np.abs(a.attention - b.attention).max()))
        qk_diff = None
        if fresh._qk_weights() is not None:  # the neuron view's queries and keys, computed without torch
            qk_diff = parts_difference(fresh.attention_parts(CHECK_TEXTS[1]),
                                       reference.attention_parts(CHECK_TEXTS[1]))
        lm_diff = None
        if fresh.causal:  # predict and the logit lens, where the checkpoint has a causal-LM head
            try:
                LanguageModel(name, engine="onnx")  # its head kept beside the export
                onnx_lm, torch_lm = LanguageModel(name, engine="onnx"), LanguageModel(name, engine="torch")
            except NoLMHeadError as e:
                log.info("%s: no language-model head to prepare (%s)", name, e)
            else:
                standalone = standalone and onnx_lm._onnx is not None
                lm_diff = float(np.abs(onnx_lm.lens_probabilities(CHECK_TEXTS[0])
                                       - torch_lm.lens_probabilities(CHECK_TEXTS[0])).max())
    worst = max(diff, lm_diff or 0.0, qk_diff or 0.0)
    if worst > TOLERANCE:
        raise OnnxOutputError(f"the ONNX export of {name} ({fresh._runner.paths[False]}) differs from torch "
                              f"by {worst:.2g} (more than {TOLERANCE:g}); run it with --engine torch and "
                              "report it")
    return PreparedModel(name, standalone, str(fresh._runner.paths[False]), diff, lm_diff,
                         round(time.perf_counter() - start, 1), qk_diff)
