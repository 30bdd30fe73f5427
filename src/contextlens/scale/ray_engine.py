"""Encode usage-index chunks on Ray Data (``--engine ray``).

The driver streams the corpus and plans each chunk (finds the target usages: cheap
tokenising), exactly as the local engine does, so both give the same usages with the same
ids. A chunk's :class:`~contextlens.index.encode.PlannedSentence` s become a Ray Dataset
(as Python objects, pickled by Ray); ``map_batches`` runs an encoder actor class over it
(one model per actor, ``concurrency`` actors, ``batch_size`` sentences per call, sorted by
length inside the actor), which runs :func:`~contextlens.index.encode.encode_planned`, the
local engine's own function. The driver gathers the batches into one
:class:`~contextlens.index.encode.EncodedChunk` and the build loop writes it and commits the
chunk's checkpoint, as for a local build, so a Ray build resumes like a local one.

Where it runs: ``address=None`` starts a local Ray cluster (the machine's cores);
``"auto"`` joins the cluster this machine is part of (``ray start --head`` /
``ray start --address=HEAD:6379``); ``"ray://HEAD:10001"`` connects through Ray Client.
The worker nodes need contextlens with its ``hf`` extra and the model installed (or a
``runtime_env``). What scales: actors (``concurrency``; each takes ``num_cpus`` CPUs and
runs torch on that many threads), the sentences per actor call (``batch_size``), and the
chunk size (sentences per Ray Dataset and per checkpoint: larger amortises actor start-up,
smaller loses less work to a crash).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import MissingDependencyError, check_int
from ..index.encode import EncodedChunk, PlannedSentence, encode_planned, make_index_encoder

__all__ = ["RayEncoder", "UsageEncoderActor", "CHUNK_SENTENCES"]

log = logging.getLogger(__name__)
CHUNK_SENTENCES = 20_000  # sentences per Ray Dataset (and per checkpoint)


def _ray():
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise MissingDependencyError("ray", "scale", "The Ray engine") from None
    return ray


class UsageEncoderActor:
    """A Ray Data actor: loads the model once; turns a batch of planned sentences (column
    ``planned``) into their encoded usages (column ``row``: the :class:`UsageRow` s, and
    one ``(n_usages, dim)`` column per stored layer, named by its layer number)."""

    def __init__(self, model: str, layers: list[int], batch_size: int, threads: int):
        self.encoder, self.layers = make_index_encoder(model, layers, batch_size, threads=threads)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        encoded = encode_planned(self.encoder, list(batch["planned"]), self.layers)
        rows = np.empty(len(encoded.rows), dtype=object)
        rows[:] = encoded.rows
        return {"row": rows, **{str(k): x for k, x in encoded.vectors.items()}}


class RayEncoder:
    """Encodes planned chunks on Ray Data (the engine protocol of
    :mod:`contextlens.index.encode`); ``close()`` shuts down a cluster it started."""

    chunk_size = CHUNK_SENTENCES

    def __init__(self, params: dict[str, Any], *, address: str | None = None, concurrency: int = 1,
                 batch_size: int = 32, num_cpus: int = 1):
        check_int("concurrency", concurrency, low=1, hint="it is the number of encoder actors")
        ray = _ray()
        self._ray, self._started = ray, False
        if not ray.is_initialized():
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
            if address not in (None, "local"):
                kwargs["address"] = address
            log.info("starting Ray (%s)", address or "a local cluster")
            ray.init(**kwargs)
            self._started = True
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.enable_fallback_to_arrow_object_ext_type = True  # planned sentences and rows travel pickled
        self.params, self.concurrency, self.batch_size, self.num_cpus = params, concurrency, batch_size, num_cpus
        self.layers, self.dim = list(params["layers"]), int(params["dim"])

    def encode(self, planned: Sequence[PlannedSentence]) -> EncodedChunk:
        """What :func:`contextlens.index.encode.encode_planned` gives, computed on Ray."""
        if not planned:
            return EncodedChunk.empty(self.layers, self.dim)
        ray = self._ray
        ds = ray.data.from_items([{"planned": p} for p in planned]).map_batches(
            UsageEncoderActor, batch_format="numpy", batch_size=self.batch_size,
            compute=ray.data.ActorPoolStrategy(size=self.concurrency), num_cpus=self.num_cpus,
            fn_constructor_kwargs={"model": self.params["model"], "layers": self.layers,
                                   "batch_size": self.batch_size, "threads": self.num_cpus},
        )
        parts = [EncodedChunk(list(b["row"]), {k: np.asarray(b[str(k)], np.float32).reshape(-1, self.dim)
                                               for k in self.layers})
                 for b in ds.iter_batches(batch_format="numpy", batch_size=None)]
        return EncodedChunk.concat(parts, self.layers, self.dim)

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False
