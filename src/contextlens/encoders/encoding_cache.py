"""On-disk cache of encoded targets, so a layer sweep, a second classifier or a rerun
never re-encodes.

Layout under the ``encodings`` cache (:mod:`contextlens.disk_cache`; ``CONTEXTLENS_CACHE``
overrides the root)::

    <encoder key>/identity.json          what the key stands for (model, path, params...)
    <encoder key>/<task>/index.json      shard file → {n, shape, sha256}
    <encoder key>/<task>/<shard>.npy     (n, n_layers, dim), every layer the encoder gives

The encoder key hashes the encoder's identity (:func:`encoder_identity`: its name and
``params()``, which name the model and its path, or the table with a fingerprint of its
rows); a shard's name hashes the texts and target spans of its items, so any change of
data or encoder is a miss. Every shard is checked against its index entry (shape and
sha256) when read; a corrupt or truncated one is logged, recomputed and rewritten
(atomically). Named arrays (``save_array``/``load_array``: SemCor sense embeddings) are
``.npz`` files checked the same way. An encoder's folder is one entry of the cache: held
in use while its :class:`EncodingCache` lives (no other process evicts it mid-run), and
after each new shard the least recently used encoders' folders go beyond the cache's
bound (``CONTEXTLENS_CACHE_LIMIT_ENCODINGS``).

>>> identity = {"class": "X", "name": "toy"}
>>> len(key_of(identity))
16
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..disk_cache import DiskCache
from ..errors import InputError
from ..files import atomic_output
from .tokenized import Item, layer_positions, target_text, target_vectors

__all__ = ["EncodingCache", "encoder_identity", "key_of", "SHARD"]

log = logging.getLogger(__name__)
SHARD = 2048  # items per shard file


def key_of(obj) -> str:
    """A short stable hash of a JSON-able object."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


#: a transformer's settings that change no vector beyond float rounding (shards are float16)
RUN_SETTINGS = ("batch_size", "attention")


def encoder_identity(encoder) -> dict:
    """What makes two encoders give the same vectors: the encoder's name and ``params()``
    (its kind, its model and path or its table's fingerprint, and its settings), without
    a model's :data:`RUN_SETTINGS`.

    >>> class E:
    ...     name, layer_ids = "transformer", (0, 1)
    ...     def params(self): return {"model": "minilm", "batch_size": 32, "attention": True}
    >>> encoder_identity(E())
    {'name': 'transformer', 'layer_ids': [0, 1], 'params': {'model': 'minilm'}}
    """
    params = encoder.params()
    if params.get("model") is not None:
        params = {k: v for k, v in params.items() if k not in RUN_SETTINGS}
    return {"name": encoder.name, "layer_ids": list(encoder.layer_ids), "params": params}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class EncodingCache:
    """Cached :func:`~contextlens.encoders.tokenized.target_vectors` for one encoder.

    Parameters
    ----------
    encoder : any Encoder.
    root : the cache folder (default: ``cache_dir("encodings")``).
    enabled : False computes everything and writes nothing.
    dtype : what shards store; default float16 for a model (half the disk; cosines
        move by ~1e-3), float32 for a static table. Fresh vectors are rounded to it too,
        so a first run and a rerun give the same numbers.
    """

    def __init__(self, encoder, root: str | Path | None = None, enabled: bool = True, dtype=None):
        if dtype is None:
            dtype = np.float16 if encoder.params().get("model") is not None else np.float32
        self.encoder, self.enabled, self.dtype = encoder, enabled, dtype
        self.identity = encoder_identity(encoder)
        self.key = key_of(self.identity)
        self._cache = DiskCache("encodings", root)
        self.root = self._cache.folder
        self.folder = self.root / self.key
        self._lease = self._cache.use(self.folder) if enabled else None  # released with this object
        self.hits = self.misses = 0

    @property
    def layer_ids(self) -> tuple[int, ...]:
        """The layer numbers of the arrays :meth:`targets` returns without ``layers``."""
        return tuple(self.encoder.layer_ids)

    def _write_identity(self) -> None:
        path = self.folder / "identity.json"
        if not path.exists():
            with atomic_output(path) as tmp:
                tmp.write_text(json.dumps(self.identity, indent=1, sort_keys=True, default=str))

    # -- index -------------------------------------------------------------------------------
    def _index(self, task: str) -> dict:
        path = self.folder / task / "index.json"
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            log.warning("cache index %s is unreadable; its shards will be recomputed", path)
            return {}

    def _record(self, task: str, name: str, entry: dict) -> None:
        index = self._index(task)  # re-read: another run may have added shards meanwhile
        index[name] = entry
        with atomic_output(self.folder / task / "index.json") as tmp:
            tmp.write_text(json.dumps(index, indent=1, sort_keys=True))

    def _read(self, task: str, name: str, entry: dict | None, suffix: str):
        path = self.folder / task / f"{name}{suffix}"
        if entry is None or not path.exists():
            return None
        try:
            if _sha256(path) != entry["sha256"]:
                raise ValueError("checksum differs")
            data = np.load(path, allow_pickle=False)
            if suffix == ".npy" and list(data.shape) != entry["shape"]:
                raise ValueError(f"shape {data.shape} differs from {entry['shape']}")
            return data
        except (OSError, ValueError, KeyError, EOFError) as err:
            log.warning("cache file %s is corrupt (%s); recomputing it", path, err)
            return None

    def _write(self, task: str, name: str, suffix: str, save: Callable[[Path], None], shape) -> None:
        self._write_identity()
        path = self.folder / task / f"{name}{suffix}"
        with atomic_output(path, suffix=suffix) as tmp:
            save(tmp)
            digest = _sha256(tmp)
        self._record(task, name, {"shape": list(shape), "sha256": digest})
        self._cache.stored(self.folder)

    # -- targets -------------------------------------------------------------------------------
    def targets(self, task: str, items: Sequence[Item], *, layers=None,
                progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """``(n, n_layers_kept, dim)`` float32 target vectors, read from the cache where
        present and encoded (then stored) where not; ``layers``: layer numbers as in
        target_vectors (None: every layer, numbered :attr:`layer_ids`)."""
        items = list(items)
        index = self._index(task) if self.enabled else {}
        parts, done = [], 0
        for s in range(0, len(items), SHARD):
            shard = items[s : s + SHARD]
            name = key_of([np.dtype(self.dtype).name, *(target_text(t, i) for t, i in shard)])
            data = self._read(task, name, index.get(name), ".npy") if self.enabled else None
            if data is None:
                self.misses += 1
                base = done

                def tick(k, _n, base=base):
                    if progress is not None:
                        progress(base + k, len(items))

                data = target_vectors(self.encoder, shard, progress=tick, dtype=np.float32).astype(self.dtype)
                if self.enabled:
                    self._write(task, name, ".npy", lambda p, a=data: np.save(p, a), data.shape)
            else:
                self.hits += 1
            parts.append(np.asarray(data, dtype=np.float32))
            done += len(shard)
            if progress is not None:
                progress(done, len(items))
        if not parts:
            raise InputError(f"no items to encode for {task}")
        widths = {p.shape[1:] for p in parts}
        if len(widths) > 1:
            raise InputError(f"cached shards of {task} disagree in shape ({widths}); clear {self.folder}")
        out = np.concatenate(parts)  # (n, all layers, dim)
        return out if layers is None else out[:, layer_positions(self.layer_ids, layers)]

    # -- named arrays ---------------------------------------------------------------------------
    def load_array(self, task: str, name: str) -> dict[str, np.ndarray] | None:
        """The arrays saved under ``task/name``, or None (absent, corrupt, or cache off)."""
        if not self.enabled:
            return None
        data = self._read(task, name, self._index(task).get(name), ".npz")
        if data is None:
            return None
        with data:
            return {k: data[k] for k in data.files}

    def save_array(self, task: str, name: str, **arrays: np.ndarray) -> None:
        """Store arrays under ``task/name`` (no-op when the cache is off)."""
        if self.enabled:
            first = next(iter(arrays.values()))
            self._write(task, name, ".npz", lambda p: np.savez(p, **arrays), np.shape(first))
