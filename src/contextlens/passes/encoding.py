"""Turn a chunk of corpus sentences into encoded usages: the one step every runner shares.

:func:`plan_chunk` finds the target usages of a chunk's sentences (cheap: tokenising, no
model) and keeps the sentences holding some, as :class:`~.rows.PlannedSentence` s;
:func:`encode_planned` encodes them (one ``encode`` call: sentences sorted by length into
batches, only the target words kept) and returns an :class:`~.rows.EncodedChunk`: one
:class:`~.rows.UsageRow` per usage and, per layer, their vectors. A usage the encoder gives
no vector (no piece from the tokenizer, not in a static table) is dropped (and logged).

A runner is anything with ``encode(planned) -> EncodedChunk``, ``chunk_size`` (sentences
per chunk and checkpoint) and ``close()``: :class:`LocalEncoder` here, and
:class:`contextlens.passes.ray_engine.RayEncoder` on Ray Data. The pass
(:func:`contextlens.passes.run.corpus_pass`) is the same for both.

>>> from ..corpus.targets import WordMatcher
>>> planned = plan_chunk([Sentence("d.txt", 0, "No target."), Sentence("d.txt", 1, "The bank.")],
...                      WordMatcher(["bank"]))
>>> [(p.number, p.text, [u.form for u in p.usages]) for p in planned]
[(1, 'The bank.', ['bank'])]
>>> stored_layers([6, 4, 6]), stored_layers(None)
([4, 6], None)
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import numpy as np

from ..corpus.targets import Sentence, WordMatcher, find_usages
from ..errors import InputError
from .rows import EncodedChunk, PlannedSentence, UsageRow

__all__ = ["plan_chunk", "encode_planned", "make_index_encoder",
           "stored_layers", "LocalEncoder", "CHUNK_SENTENCES"]

log = logging.getLogger(__name__)
CHUNK_SENTENCES = 2048  # sentences per chunk and checkpoint (local engine)


def stored_layers(layers) -> list[int] | None:
    """The layer numbers an index stores, sorted, each once (None: the default)."""
    if layers is None:
        return None
    items = [layers] if isinstance(layers, int) else list(layers)
    if not items or not all(isinstance(k, int) and not isinstance(k, bool) and k >= 0 for k in items):
        raise InputError(f"layers must be non-negative layer numbers (0 = embedding row), got {layers!r}")
    return sorted(set(items))


def make_index_encoder(model: str, layers, batch_size: int = 32, threads: int | None = None, *,
                       engine: str | None = None, precision: str | None = None):
    """``(encoder, stored layers)``: the transformer an index uses, with attention off
    (faster, lighter), running only the layers it stores (default: the last one), with
    ``engine`` and ``precision`` (None: the encoder's defaults)."""
    from ..encoders.transformer import TransformerEncoder

    stored = stored_layers(layers)
    contextual = [k for k in stored if k != 0] if stored else None
    chosen = contextual if contextual else ([] if stored else -1)  # default: the last layer only
    running = {k: v for k, v in (("engine", engine), ("precision", precision)) if v is not None}
    enc = TransformerEncoder(model, layers=chosen, attention=False, batch_size=batch_size, threads=threads,
                             **running)
    return enc, (stored or [enc.layer_ids[-1]])


def plan_chunk(sentences: Iterable[Sentence], matcher: WordMatcher) -> list[PlannedSentence]:
    """The sentences of a chunk that hold targets, each with its usages (cheap: no model)."""
    planned = []
    for s in sentences:
        usages = find_usages(s, matcher)
        if usages:
            planned.append(PlannedSentence(s.doc, s.number, s.text, tuple(usages)))
    return planned


def encode_planned(encoder, planned: Sequence[PlannedSentence], layers: Sequence[int], *,
                   missing: int = logging.WARNING) -> EncodedChunk:
    """Encode planned sentences; their usages as rows, and their vectors per layer. A usage
    given no vector is logged at level ``missing``."""
    if not planned:
        return EncodedChunk.empty(layers, encoder.dim)
    spans = [[(u.start, u.end) for u in p.usages] for p in planned]
    encodings = encoder.encode([p.text for p in planned], targets=spans)
    pos = {k: encoder.layer_position(k) for k in layers}
    rows: list[UsageRow] = []
    picked: dict[int, list[np.ndarray]] = {k: [] for k in layers}
    for p, enc in zip(planned, encodings):
        where = {(w.start, w.end): j for j, w in enumerate(enc.words)}
        for u in p.usages:
            j = where.get((u.start, u.end))
            if j is None:
                log.log(missing, "%s, sentence %d: %r got no piece from the tokenizer; not indexed", p.doc,
                        p.number, u.form)
                continue
            rows.append(UsageRow(u.usage_id, u.word, u.form, p.doc, p.number, u.start, u.end, p.text))
            for k in layers:
                picked[k].append(enc.layers[pos[k], j])  # (dim,)
    if not rows:
        return EncodedChunk.empty(layers, encoder.dim)
    return EncodedChunk(rows, {k: np.stack(v).astype(np.float32, copy=False) for k, v in picked.items()})


class LocalEncoder:
    """The local runner: encodes planned chunks in this process with one encoder (a usage
    given no vector logged at level ``missing``)."""

    chunk_size = CHUNK_SENTENCES

    def __init__(self, encoder, layers: Sequence[int], missing: int = logging.WARNING):
        self.encoder, self.layers, self.missing = encoder, list(layers), missing

    def encode(self, planned: Sequence[PlannedSentence]) -> EncodedChunk:
        return encode_planned(self.encoder, planned, self.layers, missing=self.missing)

    def close(self) -> None:
        """Nothing to release: the encoder belongs to the caller."""
