"""The ONNX side of a causal :class:`~contextlens.encoders.lm.LanguageModel`: its export run by
onnxruntime, its head (final norm and unembedding) in numpy, and its stand-alone tokenizer;
neither torch nor transformers is imported. The graph keeps no key/value cache, so each
sequence runs whole."""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np

from .. import bounds
from . import standalone
from .wordprob import ends_word

__all__ = ["OnnxLM", "open_cached", "softmax"]


class OnnxLM(NamedTuple):
    """A causal LM's ONNX runner, its head (:class:`~contextlens.encoders.standalone.LMHead`)
    and its stand-alone side (:class:`~contextlens.encoders.standalone.Standalone`)."""

    runner: Any
    head: standalone.LMHead
    side: standalone.Standalone

    def lens(self, sequences: list[list[int]], positions: list[list[int]], pad: int,
             size: int) -> list[np.ndarray]:
        """per sequence, ``(layers + 1, len(positions), vocab)`` float64
        probabilities through the lens at its ``positions`` (the last layer, already normed
        in the graph, is the model's own distribution)."""
        runner, head = self.runner, self.head
        states = runner.run(*standalone.pad_batch(sequences, pad)).hidden_states
        last = self.side.facts.n_layers
        return [softmax(np.stack([head.logits(h[b, where] if k == last else head.normed(h[b, where]))
                                   for k, h in enumerate(states)]))[..., :size]
                for b, where in enumerate(positions)]

    def next_pieces(self, sequences: list[list[int]], pad: int) -> np.ndarray:
        """``(len(sequences), vocab)`` float64, the next-piece distribution after
        each sequence (run whole: the graph keeps no key/value cache), a few thousand pieces a pass."""
        runner, head = self.runner, self.head
        out = []
        width = max(len(s) for s in sequences)
        size = max(1, bounds.LM_LENS_ROWS // width)
        for start in range(0, len(sequences), size):
            chunk = sequences[start : start + size]
            hidden = runner.run(*standalone.pad_batch(chunk, pad)).hidden_states[-1]
            last = np.array([len(s) - 1 for s in chunk])
            out.append(softmax(head.logits(hidden[np.arange(len(chunk)), last])))
        return np.concatenate(out)


    def follow(self, ids: list[int], tracked: list[tuple[str, list[int]]], tail: str, texts, classes,
               pad: int):
        """the lens at the context's last piece ``(layers + 1, vocab)``, and as
        :meth:`LanguageModel._follow <contextlens.encoders.lm.LanguageModel._follow>` gives them,
        per tracked word and layer the product of its pieces' probabilities after the first and
        the probability that the word ends after its last
        (only the words' own rows are unembedded, :data:`~contextlens.bounds.LM_LENS_ROWS` at a time)."""
        runner, head = self.runner, self.head
        n, size, top = len(ids), len(texts), self.side.facts.n_layers
        here = self.lens([ids], [[n - 1]], pad, size)[0][:, 0]
        along = np.ones((len(tracked), top + 1))
        end = np.zeros((len(tracked), top + 1))
        start = 0
        while start < len(tracked):
            stop, rows = start + 1, len(tracked[start][1])
            while stop < len(tracked) and rows + len(tracked[stop][1]) <= bounds.LM_LENS_ROWS:
                rows, stop = rows + len(tracked[stop][1]), stop + 1
            chunk = tracked[start:stop]
            states = runner.run(*standalone.pad_batch([ids + p for _, p in chunk], pad)).hidden_states
            for k, h in enumerate(states):
                for t, (added, pieces) in enumerate(chunk):
                    rows_k = h[t, n : n + len(pieces)]  # after each piece: (pieces, dim)
                    probs = softmax(head.logits(rows_k if k == top else head.normed(rows_k)))[:, :size]
                    along[start + t, k] = np.prod([probs[j - 1, pieces[j]] for j in range(1, len(pieces))])
                    end[start + t, k] = probs[-1][ends_word(tail, added, texts, classes)].sum()
            start = stop
        return here, along, end


def open_cached(path, name: str, kind: str | None, make_runner) -> OnnxLM | None:
    """The ONNX side of the causal LM in directory ``path`` when its export and its head are
    cached (found without loading the model), its session opened by ``make_runner()``; else
    None. A ``kind="causal"`` request for a model its export shows is not causal is refused
    here, without torch."""
    from .lm_results import not_causal
    from .onnx_engine import ExportSettings

    found = standalone.find(path, dataclasses.asdict(ExportSettings()))
    side = standalone.open_folder(found) if found is not None else None
    if side is not None and kind == "causal" and not side.facts.causal:
        raise not_causal(name, side.facts.model_type)
    head_dir = standalone.head_folder(path)
    usable = side is not None and side.facts.causal and head_dir.is_dir()
    head = standalone.open_head(head_dir) if usable else None
    if head is None:
        return None
    runner = make_runner()
    runner.session(False)
    return OnnxLM(runner, head, side)


def softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, in float64.

    >>> softmax(np.array([[0.0, np.log(3.0)]])).round(4).tolist()
    [[0.25, 0.75]]
    """
    x = np.asarray(logits, dtype=np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)
