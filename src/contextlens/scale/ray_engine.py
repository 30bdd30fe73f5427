"""Encode usage-index chunks on Ray Data (``--engine ray``).

The driver streams the corpus and finds the target usages (cheap: tokenising), exactly as
the local engine does, so both give the same usages with the same ids. Each chunk of
sentences becomes a Ray Dataset; ``map_batches`` runs an encoder actor class over it (one
model per actor, ``concurrency`` actors, ``batch_size`` sentences per call, sorted by
length inside the actor) and the driver writes the rows to the same Lance table, then
commits the chunk's checkpoint, so a Ray build resumes like a local one.

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

import json
import logging
from typing import Any

import numpy as np

from ..errors import InputError, MissingDependencyError
from ..index.extract import Usage

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
    """A Ray Data actor: loads the model once, turns sentence rows into usage rows."""

    def __init__(self, model: str, layers: list[int], batch_size: int, threads: int):
        from ..index.build import make_index_encoder

        self.encoder, self.layers = make_index_encoder(model, layers, batch_size, threads=threads)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        from ..index.build import encode_planned

        items = [{"doc": str(d), "number": int(n), "text": str(t),
                  "usages": [Usage(*u) for u in json.loads(str(s))]}
                 for d, n, t, s in zip(batch["doc"], batch["number"], batch["text"], batch["usages"])]
        cols = encode_planned(self.encoder, items, self.layers)
        out = {k: np.asarray(v, dtype=object if k in ("usage_id", "word", "form", "doc", "sentence") else np.int64)
               for k, v in cols.items() if k != "vectors"}
        for k, x in cols["vectors"].items():
            out[f"v{k}"] = x  # (n_usages, dim)
        return out


class RayEncoder:
    """Encodes planned chunks on Ray Data; ``close()`` shuts down a cluster it started."""

    chunk_size = CHUNK_SENTENCES

    def __init__(self, params: dict[str, Any], *, address: str | None = None, concurrency: int = 1,
                 batch_size: int = 32, num_cpus: int = 1):
        if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
            raise InputError(f"concurrency must be an integer >= 1 (encoder actors), got {concurrency!r}")
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
        self.params, self.concurrency, self.batch_size, self.num_cpus = params, concurrency, batch_size, num_cpus
        self.layers = list(params["layers"])

    def encode(self, items: list[dict[str, Any]]) -> dict[str, Any]:
        """Same output as :func:`contextlens.index.build.encode_planned`, computed on Ray."""
        ray = self._ray
        dim = int(self.params["dim"])
        cols: dict[str, Any] = {k: [] for k in ("usage_id", "word", "form", "doc", "sentence_no", "start", "end",
                                                "sentence")}
        parts: dict[int, list[np.ndarray]] = {k: [] for k in self.layers}
        if items:
            rows = [{"doc": it["doc"], "number": it["number"], "text": it["text"],
                     "usages": json.dumps([[u.usage_id, u.word, u.form, u.start, u.end] for u in it["usages"]])}
                    for it in items]
            ds = ray.data.from_items(rows).map_batches(
                UsageEncoderActor, batch_format="numpy", batch_size=self.batch_size,
                concurrency=self.concurrency, num_cpus=self.num_cpus,
                fn_constructor_kwargs={"model": self.params["model"], "layers": self.layers,
                                       "batch_size": self.batch_size, "threads": self.num_cpus},
            )
            for batch in ds.iter_batches(batch_format="numpy", batch_size=None):
                for k in cols:
                    cols[k] += [x.item() if isinstance(x, np.generic) else x for x in batch[k].tolist()]
                for k in self.layers:
                    parts[k].append(np.asarray(batch[f"v{k}"], dtype=np.float32).reshape(-1, dim))
        cols["vectors"] = {k: np.concatenate(v) if v else np.zeros((0, dim), np.float32) for k, v in parts.items()}
        return cols

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False
