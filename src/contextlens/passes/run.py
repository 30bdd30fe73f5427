"""One pass over a corpus: stream → plan → runner (local or Ray) → on_chunk → progress.

The usage index (:func:`contextlens.index.build_index`) and distillation
(:func:`contextlens.passes.distill.distill`) read a corpus the same way, and so will
whatever comes next: :func:`corpus_pass` skips the sentences an earlier run already did
(read, not encoded), cuts the rest into chunks of ``chunk_size`` sentences, lets the caller
``plan`` each chunk (keep the sentences holding target usages: cheap, no model), has the
runner encode the planned sentences, and hands each encoded chunk to ``on_chunk``, which
writes it and commits the caller's checkpoint (the index's ``progress`` table,
distillation's ``.npz``) before the next chunk is read. Memory holds one chunk at a time.

A runner (:func:`make_runner`) is :class:`~.encoding.LocalEncoder` (this process) or
:class:`~.ray_engine.RayEncoder` (Ray Data actors loading the same model by name); both
give the same :class:`~.rows.EncodedChunk` for the same planned sentences.

>>> list(chunks(iter("abcde"), 2))
[['a', 'b'], ['c', 'd'], ['e']]
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple, TypeVar

from ..corpus.targets import Sentence
from ..errors import InputError, check_choice
from .encoding import LocalEncoder
from .rows import EncodedChunk, PlannedSentence

__all__ = ["ENGINES", "ChunkDone", "PassEnd", "chunks", "corpus_pass", "make_runner", "check_ray_encoder"]

log = logging.getLogger(__name__)
ENGINES = ("local", "ray")
T = TypeVar("T")
#: ``plan(sentences, first)``: the chunk's sentences holding targets (``first``: sentences read before it)
Plan = Callable[[list[Sentence], int], list[PlannedSentence]]
#: ``progress(sentences_done, results)`` after each chunk (``results``: what ``on_chunk`` returned)
PassProgress = Callable[[int, int], None]


class ChunkDone(NamedTuple):
    """One chunk of a pass, encoded: its number (counted on from the ``chunk`` a pass starts
    after), the sentences read before it (``first``) and with it (``done``), its planned
    sentences and their encoded usages."""

    number: int
    first: int
    done: int
    planned: list[PlannedSentence]
    encoded: EncodedChunk


class PassEnd(NamedTuple):
    """How a pass ended: sentences read in all, the last chunk's number, the sentences this
    run encoded, and (Ray) the usages encoded per node id."""

    done: int
    chunk: int
    encoded_sentences: int
    nodes: dict[str, int]


def chunks(stream: Iterator[T], size: int) -> Iterator[list[T]]:
    """``stream`` in lists of ``size`` items (the last one shorter)."""
    while chunk := list(itertools.islice(stream, size)):
        yield chunk


def check_ray_encoder(encoder) -> None:
    """The Ray actors load the model by its name with the index's settings (mean pooling)."""
    from ..encoders.transformer import TransformerEncoder

    if not isinstance(encoder, TransformerEncoder):
        raise InputError("engine='ray' runs a transformer model on Ray actors; this encoder is "
                         f"{type(encoder).__name__}: use engine='local' (a static table is fast without Ray)")
    if encoder.pooling != "mean":
        raise InputError(f"engine='ray' pools a word's pieces by their mean (as the usage index does); this "
                         f"encoder pools by {encoder.pooling!r}: use engine='local', or pooling='mean'")


def make_runner(engine: str, encoder, layers: Sequence[int], *, address: str | None = None,
                concurrency: int = 1, batch_size: int | None = None, missing: int = logging.WARNING):
    """The runner that encodes a pass's chunks: ``local`` (``encoder`` itself, a usage given
    no vector logged at level ``missing``) or ``ray`` (``encoder``'s model loaded by name on
    ``concurrency`` actors at ``address``, ``batch_size`` sentences per call: by default
    the encoder's)."""
    check_choice("engine", engine, ENGINES)
    if engine == "local":
        return LocalEncoder(encoder, layers, missing=missing)
    from .ray_engine import RayEncoder

    check_ray_encoder(encoder)
    params = {"model": encoder.name, "layers": list(layers), "dim": encoder.dim,
              "precision": encoder.precision}
    return RayEncoder(params, address=address, concurrency=concurrency,
                      batch_size=encoder.batch_size if batch_size is None else batch_size)


def corpus_pass(stream: Iterator[Sentence], plan: Plan, runner, on_chunk: Callable[[ChunkDone], int], *,
                done: int = 0, chunk: int = 0, chunk_size: int | None = None,
                progress: PassProgress | None = None) -> PassEnd:
    """Run ``stream`` through ``runner`` chunk by chunk, after the ``done`` sentences (and
    the ``chunk`` chunks) an earlier run committed; ``on_chunk`` writes each encoded chunk
    and commits its checkpoint, and returns the results so far (reported to ``progress``).
    ``chunk_size``: sentences per chunk (default: the runner's). The runner is closed at the
    end, and on an error."""
    try:
        for _ in itertools.islice(stream, done):  # already done: read, not encoded
            pass
        encoded = 0
        for sentences in chunks(stream, chunk_size or runner.chunk_size):
            planned = plan(sentences, done)
            chunk += 1
            results = on_chunk(ChunkDone(chunk, done, done + len(sentences), planned, runner.encode(planned)))
            done += len(sentences)
            encoded += len(planned)
            if progress is not None:
                progress(done, results)
    finally:
        runner.close()
    return PassEnd(done, chunk, encoded, dict(getattr(runner, "nodes", {})))
