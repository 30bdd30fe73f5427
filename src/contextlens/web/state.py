"""What the lab server keeps between requests: its limits, encoders loaded once, lazily, the
encodings of recent sentences, and the worker processes of the numeric steps.

A table or model is loaded on first use (or when the page asks for it in advance), under a
lock, so two requests never load it twice; its state (``not loaded``, ``loading``,
``ready``, ``failed``) is what ``/api/status`` reports while the page waits. Transformer
encoders are not thread-safe, so each encoder's ``encode`` runs under its own lock, and so does
an explanation that hooks the modules of its model (:meth:`SharedEncoder.alone`).

The encodings of recent sentences are kept so the several figures of one view encode a
sentence once: one :class:`EncodingCache` for every encoder of the lab together, LRU,
bounded by bytes (``CACHE_BYTES``: arrays plus the measured cost of their Python objects).
Under 16 clients sending new sentences the server grew from 607 MB to 1.2 GB when each
encoder had its own 256 MB; ``benchmarks/lab_load.py`` measures it levelling off now.
The mixers (``average`` or ``attention`` with given options) are kept for the last
``MAX_MIXERS`` option sets; a mixer dropped from there drops its encodings.

The lab may also hold one usage index (``contextlens lab --index PATH``), opened at start;
its queries are encoded by the lab's shared encoder of the index's model when the lab
serves that model, so the model is not loaded twice.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from ..encoders.base import Encoding
from ..encoders.models import check_name, list_models
from ..encoders.registry import STATIC_METHODS, make_encoder, resolve_vectors
from ..encoders.targets import check_texts
from ..errors import InputError, ask, check_choice
from .limits import Limits
from .worker import LabClosingError, WorkerPool

__all__ = ["NoIndexError", "LabState", "SharedEncoder", "EncodingCache", "encoding_bytes"]

log = logging.getLogger(__name__)
CACHE_BYTES = 128 * 2**20  # the encodings kept, every encoder of the lab together
MAX_MIXERS = 16  # option sets of the average / attention encoders kept


class NoIndexError(InputError):
    """The lab was started without a usage index (HTTP 409)."""


NO_INDEX = ("no usage index is loaded in this lab: start it with `contextlens lab --index PATH`, PATH being "
            "the --db folder of `contextlens index build`")


def encoding_bytes(enc: Encoding) -> int:
    """The memory an :class:`Encoding` holds: its arrays, plus its words and metadata as Python
    objects (2 KB + 400 bytes a word: measured with tracemalloc on 22-word sentences, 3.8 KB
    beyond the arrays for GloVe's, 8.9 KB for MiniLM's with their word pieces).

    >>> import numpy as np
    >>> from contextlens.text import tokenize
    >>> encoding_bytes(Encoding("the bank", tokenize("the bank"), np.zeros((1, 2, 50), np.float32)))
    3248
    """
    arrays = (enc.layers, enc.attention, enc.special_attention, enc.embeddings_output)
    return sum(a.nbytes for a in arrays if a is not None) + 2048 + 400 * len(enc.words)


class EncodingCache:
    """Encodings by ``(owner, sentence)`` for every encoder of the lab together: least
    recently used first out, at most ``max_bytes`` (by :func:`encoding_bytes`) in all."""

    def __init__(self, max_bytes: int = CACHE_BYTES):
        self.max_bytes = max_bytes
        self.nbytes = 0
        self._items: OrderedDict[tuple[Hashable, str], tuple[Encoding, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, owner: Hashable, text: str) -> Encoding | None:
        with self._lock:
            item = self._items.get((owner, text))
            if item is None:
                return None
            self._items.move_to_end((owner, text))
            return item[0]

    def put(self, owner: Hashable, text: str, enc: Encoding) -> None:
        size = encoding_bytes(enc)
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop((owner, text), None)
            self.nbytes += size - (old[1] if old else 0)
            self._items[(owner, text)] = (enc, size)
            while self.nbytes > self.max_bytes:
                self.nbytes -= self._items.popitem(last=False)[1][1]

    def drop(self, owner: Hashable) -> None:
        """Forget every encoding of ``owner``."""
        with self._lock:
            for key in [k for k in self._items if k[0] == owner]:
                self.nbytes -= self._items.pop(key)[1]


class SharedEncoder:
    """An encoder shared between requests: ``encode`` runs under a lock and reuses the
    encodings of sentences seen before, from the lab's :class:`EncodingCache` (the other
    attributes are the wrapped encoder's). Once ``closing`` is set (the lab stopping),
    waiting requests end with :class:`LabClosingError` instead of running the model."""

    def __init__(self, encoder, cache: EncodingCache | None = None, owner: Hashable = None,
                 closing: threading.Event | None = None):
        self._encoder = encoder
        self._lock = threading.Lock()
        self._cache = cache if cache is not None else EncodingCache()
        self._owner = owner
        self._closing = closing or threading.Event()

    def __getattr__(self, name: str):
        return getattr(self._encoder, name)

    def encode(self, texts: Sequence[str], *, targets=None) -> list:
        texts = check_texts(texts)
        with self._lock:
            if self._closing.is_set():
                raise LabClosingError("the lab is stopping")
            # some words only (the index's queries): not cached, the cache holds whole sentences
            if targets is not None:
                return self._encoder.encode(texts, targets=targets)
            found = {t: self._cache.get(self._owner, t) for t in dict.fromkeys(texts)}
            todo = [t for t, enc in found.items() if enc is None]
            if todo:
                for text, enc in zip(todo, self._encoder.encode(todo), strict=True):
                    found[text] = enc
                    self._cache.put(self._owner, text, enc)
            return [found[t] for t in texts]

    @contextlib.contextmanager
    def alone(self) -> Iterator[Any]:
        """The wrapped encoder, for a computation that no other request may share: the explanations
        inside a layer (``contextlens.encoders.blocks``) hook the modules of the model, and another
        request running it meanwhile would feed their hooks (its ``encode`` waits for the lock)."""
        with self._lock:
            if self._closing.is_set():
                raise LabClosingError("the lab is stopping")
            yield self._encoder

    def attention_parts(self, text: str, **kwargs) -> list:
        """The wrapped encoder's queries and keys of ``text``, under the lock (not cached)."""
        with self._lock:
            if self._closing.is_set():
                raise LabClosingError("the lab is stopping")
            return self._encoder.attention_parts(text, **kwargs)


class LabState:
    """The server's shared state: default model and table names, limits, loaded encoders."""

    def __init__(self, model: str = "minilm", vectors: str = "glove-6b-50d", limits: Limits | None = None,
                 threads: int | None = 1, index=None, models: Sequence[str] | None = None,
                 pool: WorkerPool | None = None, cache_bytes: int = CACHE_BYTES,
                 add_models: Sequence[str] = (), engine: str | None = None):
        self.model, self.vectors, self.limits = model, vectors, limits or Limits()
        # the models offered (None: every installed one)
        self.offered = None if models is None else list(models)
        self.added = list(dict.fromkeys(add_models))  # offered too: local folders, hub ids (`lab --model`)
        for name in self.added:
            check_name(name)  # a typo of a packaged name fails here, before the lab serves
        self.index = index  # a UsageReader, or None
        self.index_lock = threading.Lock()  # one index request at a time reads the store
        # torch CPU threads (None: chosen from the cores and the load, contextlens.threads)
        self.threads = threads
        self.engine = engine  # what runs the transformers (None: the encoder's default)
        self.pool = pool or WorkerPool()  # runs the numeric steps (projections, clustering)
        self.cache = EncodingCache(cache_bytes)
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._loaded: dict[str, Any] = {}  # resource name -> table or SharedEncoder
        self._status: dict[str, dict[str, Any]] = {}
        self._resource_locks: dict[str, threading.Lock] = {}
        self._mixers: OrderedDict[tuple, SharedEncoder] = OrderedDict()

    def open(self) -> None:
        """The lab is starting (again): take requests, start the worker processes in the background."""
        self.closing.clear()
        self.pool.open()
        self.pool.warm()

    def close(self) -> None:
        """The lab is stopping: waiting requests end now, the worker processes are killed."""
        self.closing.set()
        self.pool.close()

    # ---- what exists -------------------------------------------------------------------
    def models(self) -> list[dict[str, Any]]:
        rows = [m for m in list_models() if m["installed"]
                and (self.offered is None or m["name"] in self.offered)]
        names = {m["name"] for m in rows}
        for name in dict.fromkeys([self.model, *self.added]):
            if name not in names:
                rows.append({"name": name, "installed": True,
                             "description": "model given to `contextlens lab`"})
        return rows

    def encoder_names(self) -> list[str]:
        return list(STATIC_METHODS) + [m["name"] for m in self.models()]

    def status(self) -> dict[str, Any]:
        with self._lock:
            states = {k: dict(v) for k, v in self._status.items()}
        now = time.monotonic()
        for s in states.values():
            s["seconds"] = round((s.pop("finished", None) or now) - s.pop("started"), 2)
        resources = [self.vectors] + [m["name"] for m in self.models()]
        return {
            "default_model": self.model, "vectors": self.vectors, "encoders": self.encoder_names(),
            "limits": self.limits.as_dict(),
            "resources": {r: states.get(r, {"state": "not loaded"}) for r in resources},
            "workers": {"running": len(self.pool.pids()), "busy": len(self.pool.pids(busy=True))},
            "cache": {"encodings": len(self.cache), "bytes": self.cache.nbytes,
                      "max_bytes": self.cache.max_bytes},
        }

    # ---- loading -----------------------------------------------------------------------
    def _load(self, name: str, loader):
        if name in self._loaded:
            return self._loaded[name]
        with self._lock:
            lock = self._resource_locks.setdefault(name, threading.Lock())
        with lock:  # one load per resource; others wait for it
            if name in self._loaded:
                return self._loaded[name]
            with self._lock:
                self._status[name] = {"state": "loading", "started": time.monotonic()}
            try:
                value = loader()
            except Exception as err:  # recorded for /api/status, then raised to the caller
                with self._lock:
                    self._status[name].update(state="failed", error=str(err), finished=time.monotonic())
                raise
            log.info("loaded %s", name)
            self._loaded[name] = value
            with self._lock:
                self._status[name].update(state="ready", finished=time.monotonic())
            return value

    def table(self):
        return self._load(self.vectors, lambda: resolve_vectors(self.vectors))

    def _model(self, name: str) -> SharedEncoder:
        return self._load(name, lambda: SharedEncoder(make_encoder(model=name, threads=self.threads,
                                                                   engine=self.engine), self.cache,
                                                      ("model", name), self.closing))

    def language_model(self, name: str):
        """``(LanguageModel, lock)`` of the model ``name`` with its language-model head (for the
        logit lens), loaded once beside its encoder; the lock serialises its use."""
        if name in STATIC_METHODS:
            raise InputError("the logit lens reads a causal language model's next-word predictions, and "
                             f"{name} mixes the rows of a static table, which predict no word: "
                             f"{ask('model', 'smollm2')}")
        check_choice("model", name, [m["name"] for m in self.models()])

        def load():
            from ..encoders.lm import LanguageModel

            return LanguageModel(name, threads=self.threads, kind="causal"), threading.Lock()

        return self._load(f"{name} (language-model head)", load)

    def preload(self, name: str) -> dict[str, Any]:
        """Start loading a table or model in the background; returns its status at once."""
        if name == self.vectors:
            target = self.table
        else:
            check_choice("model", name, [m["name"] for m in self.models()])
            target = lambda: self._model(name)  # noqa: E731
        if name not in self._loaded and self._status.get(name, {}).get("state") != "loading":
            with self._lock:
                self._status[name] = {"state": "loading", "started": time.monotonic()}

            def run():
                try:
                    target()
                except Exception as err:  # recorded in the status by _load
                    log.warning("loading %s failed: %s", name, err)

            threading.Thread(target=run, name=f"load-{name}", daemon=True).start()
        return self.status()["resources"][name]

    def encoder(self, name: str, *, alpha: float | None = None, include_self: bool | None = None,
                scale: float | None = None) -> SharedEncoder:
        """The encoder ``name`` (a static method over the table, or a model), loaded once."""
        check_choice("encoder", name, self.encoder_names())
        if name not in STATIC_METHODS:
            return self._model(name)
        table = self.table()
        params = {"static": {}, "average": {"alpha": alpha},
                  "attention": {"include_self": include_self, "scale": scale}}[name]
        key = (name, *sorted(params.items()))
        with self._lock:
            found = self._mixers.get(key)
            if found is not None:
                self._mixers.move_to_end(key)
                return found
        made = SharedEncoder(make_encoder(name, vectors=table, **params), self.cache, key, self.closing)
        with self._lock:
            shared = self._mixers.setdefault(key, made)
            while len(self._mixers) > MAX_MIXERS:
                self.cache.drop(self._mixers.popitem(last=False)[0])
            return shared

    # ---- the usage index ---------------------------------------------------------------
    def store(self):
        """The lab's usage index; :class:`NoIndexError` when it was started without one."""
        if self.index is None:
            raise NoIndexError(NO_INDEX)
        return self.index

    def index_model(self) -> str | None:
        """The lab model that encodes the index's queries (None: the library loads its own)."""
        model = self.store().params["model"]
        return model if model in {m["name"] for m in self.models()} else None

    def index_encoder(self, layer: int | None):
        """The lab's shared encoder of the index's model, when the lab serves that model with
        the index's pooling and it holds ``layer`` (default: the index's last); else None."""
        store, name = self.store(), self.index_model()
        store.layer_column(layer)  # a layer the index does not store fails before a model loads
        if name is None:
            return None
        enc = self._model(name)
        wanted = store.layers[-1] if layer is None else layer
        if wanted not in enc.layer_ids or enc.params().get("pooling") != store.params.get("pooling", "mean"):
            return None
        return enc
