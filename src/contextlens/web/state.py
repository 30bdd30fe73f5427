"""What the lab server keeps between requests: its limits, and encoders loaded once, lazily.

A table or model is loaded on first use (or when the page asks for it in advance), under a
lock, so two requests never load it twice; its state (``not loaded``, ``loading``,
``ready``, ``failed``) is what ``/api/status`` reports while the page waits. Transformer
encoders are not thread-safe, so each encoder's ``encode`` runs under its own lock; the
encodings of recent sentences are kept (LRU, up to ``CACHE_BYTES`` of arrays per encoder),
so the several figures of one view encode a sentence once.

The lab may also hold one usage index (``contextlens lab --index PATH``), opened at start;
its queries are encoded by the lab's shared encoder of the index's model when the lab
serves that model, so the model is not loaded twice.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..encoders.base import check_texts
from ..encoders.models import list_models
from ..encoders.registry import STATIC_METHODS, make_encoder, resolve_vectors
from ..errors import InputError, check_choice

__all__ = ["Limits", "LimitError", "NoIndexError", "LabState", "SharedEncoder"]

log = logging.getLogger(__name__)
CACHE_BYTES = 256 * 2**20  # encodings kept per encoder, by the size of their arrays


class LimitError(InputError):
    """A request is larger than the server's limits (HTTP 422)."""


class NoIndexError(InputError):
    """The lab was started without a usage index (HTTP 409)."""


NO_INDEX = ("no usage index is loaded in this lab: start it with `contextlens lab --index PATH`, PATH being "
            "the --db folder of `contextlens index build`")


@dataclass(frozen=True)
class Limits:
    """Per-request input limits; the error names the limit that was hit."""

    max_chars: int = 1000  # characters per sentence
    max_sentences: int = 64  # sentences per request
    max_attention_words: int = 80  # words in a sentence whose attention is shown
    max_results: int = 50  # usages per index search

    def check_sentences(self, sentences: Sequence[str]) -> None:
        if len(sentences) > self.max_sentences:
            raise LimitError(f"{len(sentences)} sentences given; the limit is {self.max_sentences} sentences per request")
        for i, s in enumerate(sentences):
            if len(s) > self.max_chars:
                raise LimitError(
                    f"sentence {i + 1} has {len(s)} characters; the limit is {self.max_chars} characters per sentence"
                )

    def check_results(self, k: int) -> None:
        if k > self.max_results:
            raise LimitError(f"k = {k} usages asked; the limit is {self.max_results} usages per search (k <= "
                             f"{self.max_results})")

    def check_attention(self, n_words: int) -> None:
        if n_words > self.max_attention_words:
            raise LimitError(
                f"the sentence has {n_words} words; the limit is {self.max_attention_words} words per sentence "
                "for attention"
            )


def _size(enc) -> int:
    return sum(a.nbytes for a in (enc.layers, enc.attention, enc.special_attention) if a is not None)


class SharedEncoder:
    """An encoder shared between requests: ``encode`` runs under a lock and reuses the
    encodings of sentences it has seen (the other attributes are the wrapped encoder's)."""

    def __init__(self, encoder):
        self._encoder = encoder
        self._lock = threading.Lock()
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._bytes = 0

    def __getattr__(self, name: str):
        return getattr(self._encoder, name)

    def encode(self, texts: Sequence[str], *, targets=None) -> list:
        texts = check_texts(texts)
        if targets is not None:  # some words only (the index's queries): not cached, the cache holds whole sentences
            with self._lock:
                return self._encoder.encode(texts, targets=targets)
        with self._lock:
            todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
            fresh = dict(zip(todo, self._encoder.encode(todo), strict=True)) if todo else {}
            out = [self._cache[t] if t in self._cache else fresh[t] for t in texts]
            for text, enc in fresh.items():
                self._cache[text] = enc
                self._bytes += _size(enc)
            for t in texts:
                self._cache.move_to_end(t)
            while self._bytes > CACHE_BYTES and self._cache:
                self._bytes -= _size(self._cache.popitem(last=False)[1])
            return out


class LabState:
    """The server's shared state: default model and table names, limits, loaded encoders."""

    def __init__(self, model: str = "minilm", vectors: str = "glove-6b-50d", limits: Limits | None = None,
                 threads: int | None = 1, index=None):
        self.model, self.vectors, self.limits = model, vectors, limits or Limits()
        self.index = index  # a UsageReader, or None
        self.index_lock = threading.Lock()  # one index request at a time reads the store
        self.threads = threads  # torch CPU threads (None: the library's default, every core)
        self._lock = threading.Lock()
        self._loaded: dict[str, Any] = {}  # resource name -> table or SharedEncoder
        self._status: dict[str, dict[str, Any]] = {}
        self._resource_locks: dict[str, threading.Lock] = {}
        self._mixers: dict[tuple, SharedEncoder] = {}

    # ---- what exists -------------------------------------------------------------------
    def models(self) -> list[dict[str, Any]]:
        rows = [m for m in list_models() if m["installed"]]
        names = {m["name"] for m in rows}
        if self.model not in names:
            rows.append({"name": self.model, "installed": True, "description": "model given to `contextlens lab`"})
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
            "limits": {"max_chars": self.limits.max_chars, "max_sentences": self.limits.max_sentences,
                       "max_attention_words": self.limits.max_attention_words},
            "resources": {r: states.get(r, {"state": "not loaded"}) for r in resources},
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
        return self._load(name, lambda: SharedEncoder(make_encoder(model=name, threads=self.threads)))

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
            return found
        made = SharedEncoder(make_encoder(name, vectors=table, **params))
        with self._lock:
            if len(self._mixers) > 64:
                self._mixers.clear()
            return self._mixers.setdefault(key, made)

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
