"""Encode a corpus pass's chunks on Ray Data (``--engine ray``): the usage index and distillation.

The driver streams the corpus and plans each chunk (finds the target usages: cheap
tokenising), exactly as the local runner does, so both give the same usages with the same
ids. A chunk's :class:`~contextlens.passes.rows.PlannedSentence` s become a Ray Dataset
(as Python objects, pickled by Ray); ``map_batches`` runs an encoder actor class over it
(one model per actor, ``concurrency`` actors, ``batch_size`` sentences per call, sorted by
length inside the actor), which runs :func:`~contextlens.passes.encoding.encode_planned`, the
local runner's own function. The driver gathers the batches into one
:class:`~contextlens.passes.rows.EncodedChunk` and the pass hands it on (the index writes it and
commits the chunk's checkpoint), as for a local run, so a Ray run resumes like a local one.

Where it runs: ``address=None`` (or ``"local"``) starts a local Ray cluster of its own (the
machine's cores), even when another cluster runs on the machine or ``RAY_ADDRESS`` names one;
``"auto"`` joins the cluster this machine is part of (``ray start --head`` /
``ray start --address=HEAD:6379``); ``"ray://HEAD:10001"`` connects through Ray Client.
The worker nodes need contextlens with its ``hf`` extra and the model installed (or a
``runtime_env``). What scales: actors (``concurrency``; each takes ``num_cpus`` CPUs and
runs torch on that many threads), the sentences per actor call (``batch_size``), and the
chunk size (sentences per Ray Dataset and per checkpoint: larger amortises actor start-up,
smaller loses less work to a crash).

A chunk runs on a pool of exactly ``concurrency`` actors and starts once they are all up,
so each takes a share (a cluster with fewer CPUs than they need is refused at once, naming
both). Each actor reports the node it runs on with every batch (``nodes``: usages encoded
per node id). A node lost while a chunk is being encoded (its actors, and the batches it
held, gone): the chunk fails at once (its actors are not restarted: their place may not
exist any more) and is encoded again, up to ``retries`` times; from then on every chunk
runs on an elastic pool, one actor at first and as many as the CPUs left allow (Ray
restarts an actor of it that dies and retries its tasks). Nothing of a failed chunk was
written, so the build still ends with exactly the usages of a clean run.
"""

from __future__ import annotations

import gc
import logging
import warnings
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..errors import InputError, ask, check_int, import_optional
from .encoding import encode_planned, make_index_encoder
from .rows import EncodedChunk, PlannedSentence

__all__ = ["RayEncoder", "UsageEncoderActor", "CHUNK_SENTENCES", "RETRIES", "node_lost"]

log = logging.getLogger(__name__)
CHUNK_SENTENCES = 20_000  # sentences per Ray Dataset (and per checkpoint)
RETRIES = 3  # times a chunk is encoded again after a node was lost
ACTORS_START_S = 900  # a chunk waits this long for its actors (loading a model) before it fails
#: Ray's errors that say a node, a worker or the objects it held are gone (not a bug of ours)
LOST = ("RayActorError", "ActorDiedError", "ActorUnavailableError", "ObjectLostError", "OwnerDiedError",
        "ObjectReconstructionFailedError", "ObjectReconstructionFailedMaxAttemptsExceededError",
        "ObjectReconstructionFailedLineageEvictedError", "NodeDiedError", "WorkerCrashedError",
        "ObjectFetchTimedOutError", "LocalRayletDiedError")


def node_lost(error: BaseException) -> bool:
    """Whether ``error`` (or an error it was raised from) is Ray saying that a node, a worker
    or the objects one held are gone: the work can be done again elsewhere."""
    import ray.exceptions as rex

    kinds = tuple(getattr(rex, name) for name in LOST if hasattr(rex, name))
    seen: set[int] = set()
    stack = [error]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, kinds):
            return True
        stack += [e.__cause__, e.__context__, getattr(e, "cause", None)]
    return False


def _ray():
    return import_optional("ray", "scale", "The Ray engine", "ray.data")


class UsageEncoderActor:
    """A Ray Data actor: loads the model once; turns a batch of planned sentences (column
    ``planned``) into their encoded usages (column ``row``: the :class:`UsageRow` s, and
    one ``(n_usages, dim)`` column per stored layer, named by its layer number)."""

    def __init__(self, model: str, layers: list[int], batch_size: int, threads: int,
                 precision: str | None = None):
        import ray

        self.encoder, self.layers = make_index_encoder(model, layers, batch_size, threads=threads,
                                                       precision=precision)
        self.node = ray.get_runtime_context().get_node_id()

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        encoded = encode_planned(self.encoder, list(batch["planned"]), self.layers)
        rows = np.empty(len(encoded.rows), dtype=object)
        rows[:] = encoded.rows
        return {"row": rows, "node": np.full(len(rows), self.node),
                **{str(k): x for k, x in encoded.vectors.items()}}


class RayEncoder:
    """Encodes planned chunks on Ray Data (the engine protocol of
    :mod:`contextlens.passes.encoding`); ``close()`` shuts down a cluster it started.
    ``nodes``: usages encoded per node id; ``retried``: chunks encoded again after a node
    was lost (see the module docstring)."""

    chunk_size = CHUNK_SENTENCES

    def __init__(self, params: dict[str, Any], *, address: str | None = None, concurrency: int = 1,
                 batch_size: int = 32, num_cpus: int = 1, retries: int = RETRIES):
        check_int("concurrency", concurrency, low=1, hint="it is the number of encoder actors")
        self.nodes: Counter = Counter()
        self.retried, self.retries = 0, check_int("retries", retries, low=0)
        self.lost_node = False  # from the first node lost on: elastic pools (see _batches)
        ray = _ray()
        self._ray, self._started = ray, False
        if not ray.is_initialized():
            # no address: a local cluster of our own ("local"), never one Ray would otherwise find and
            # join (RAY_ADDRESS, or the last cluster started on this machine: another user's, a test's)
            log.info("starting Ray (%s)", address or "a local cluster")
            ray.init(address=address or "local", include_dashboard=False, log_to_driver=False)
            self._started = True
        ctx = ray.data.DataContext.get_current()
        ctx.enable_progress_bars = False
        ctx.enable_fallback_to_arrow_object_ext_type = True  # planned sentences and rows travel pickled
        ctx.wait_for_min_actors_s = ACTORS_START_S  # a chunk starts when its actors are up
        cpus = ray.cluster_resources().get("CPU", 0)
        if cpus < concurrency * num_cpus:
            self.close()
            raise InputError(f"the Ray cluster has {cpus:g} CPU(s): {concurrency} encoder actor(s) need "
                             f"{concurrency * num_cpus}; {ask('concurrency')} of at most "
                             f"{int(cpus // num_cpus)}, or add nodes (`ray start --address HEAD:6379` on "
                             "another machine)")
        self.params, self.concurrency, self.batch_size, self.num_cpus = (params, concurrency, batch_size,
                                                                         num_cpus)
        self.layers, self.dim = list(params["layers"]), int(params["dim"])

    def encode(self, planned: Sequence[PlannedSentence]) -> EncodedChunk:
        """What :func:`contextlens.passes.encoding.encode_planned` gives, computed on Ray (a
        chunk lost with a node encoded again)."""
        if not planned:
            return EncodedChunk.empty(self.layers, self.dim)
        for attempt in range(self.retries + 1):
            parts, nodes, lost = [], Counter(), None
            try:
                for b in self._batches(planned, elastic=self.lost_node):
                    parts.append(EncodedChunk(list(b["row"]), {k: np.asarray(b[str(k)], np.float32)
                                                               .reshape(-1, self.dim) for k in self.layers}))
                    nodes.update(Counter(b["node"].tolist()))
            except Exception as e:
                if attempt == self.retries or not node_lost(e):
                    raise
                lost = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
            if lost is None:
                self.nodes.update(nodes)
                return EncodedChunk.concat(parts, self.layers, self.dim)
            self.retried, self.lost_node = self.retried + 1, True
            log.warning("a chunk of %d sentences was lost with a Ray node or worker (%s); encoding it again "
                        "(%d of %d)", len(planned), lost, attempt + 1, self.retries)
            # the failed attempt's actors keep their CPUs until their handles (held in cycles) go
            gc.collect()
        raise AssertionError("unreachable")  # the last attempt returns or raises

    def _batches(self, planned: Sequence[PlannedSentence],
                 elastic: bool = False) -> Iterator[dict[str, np.ndarray]]:
        """The encoded batches of one chunk, as Ray Data hands them back (any order): by
        exactly ``concurrency`` actors, none restarted (a dead one fails the chunk); or, once
        a node was lost (``elastic``), by 1 to as many actors as the cluster has CPUs left
        (at most ``concurrency``), restarted when they die, asking no CPU of the scheduler so
        that actors a failed attempt left behind (idle, freed when Ray collects them) cannot
        keep them from starting."""
        ray = self._ray
        if not elastic:
            pool, how = ray.data.ActorPoolStrategy(size=self.concurrency), {"max_restarts": 0,
                                                                            "num_cpus": self.num_cpus}
        else:
            most = max(1, min(self.concurrency, int(ray.cluster_resources().get("CPU", 1) // self.num_cpus)))
            pool, how = ray.data.ActorPoolStrategy(min_size=1, max_size=most, initial_size=1), {"num_cpus": 0}
        with warnings.catch_warnings():  # max_restarts has no named parameter yet (Ray 2.60 warns)
            warnings.filterwarnings("ignore", "`ray_remote_args` is deprecated")
            ds = ray.data.from_items([{"planned": p} for p in planned]).map_batches(
                UsageEncoderActor, batch_format="numpy", batch_size=self.batch_size, compute=pool, **how,
                fn_constructor_kwargs={"model": self.params["model"], "layers": self.layers,
                                       "batch_size": self.batch_size, "threads": self.num_cpus,
                                       "precision": self.params.get("precision")},
            )
        yield from ds.iter_batches(batch_format="numpy", batch_size=None)

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False
