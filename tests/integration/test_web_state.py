"""The lab's memory: one encoding cache for every encoder together, bounded by bytes, under a
stream of new sentences; mixers kept for a bounded number of option sets."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.encoders.registry import make_encoder
from contextlens.text import tokenize
from contextlens.vectors import EmbeddingTable
from contextlens.web import state as state_mod
from contextlens.web.state import EncodingCache, LabState, SharedEncoder, encoding_bytes
from contextlens.web.worker import LabClosingError

WORDS = [f"w{i}" for i in range(200)]


@pytest.fixture(scope="module")
def table():
    vecs = np.random.default_rng(0).normal(size=(len(WORDS), 16))
    return EmbeddingTable(WORDS, vecs, name="rand")


def sentence(i: int) -> str:
    """A sentence no other i gives (its words spell i in base 200), 6 words long."""
    return " ".join(WORDS[(i // 200**k) % 200] for k in range(3)) + " w1 w2 w3"


def test_encoding_bytes_counts_arrays_and_words(table):
    enc = make_encoder("attention", vectors=table).encode([sentence(5)])[0]
    arrays = enc.layers.nbytes + enc.attention.nbytes
    assert encoding_bytes(enc) == arrays + 2048 + 400 * len(tokenize(sentence(5)))


def test_the_cache_stays_under_its_bound_for_every_encoder_together(table):
    one = encoding_bytes(make_encoder("attention", vectors=table).encode([sentence(0)])[0])
    cache = EncodingCache(max_bytes=40 * one)
    encoders = [SharedEncoder(make_encoder(name, vectors=table), cache, name)
                for name in ("static", "attention")]
    for i in range(300):  # a new sentence every request, both encoders
        for enc in encoders:
            enc.encode([sentence(i), sentence(i + 1)])
        assert cache.nbytes <= cache.max_bytes
    assert cache.nbytes == sum(size for _, size in cache._items.values())
    assert 40 <= len(cache) <= 80  # full: between 40 attention and 80 static encodings fit
    # least recently used first out: the last sentences are still there, the first are gone
    last = encoders[1].encode([sentence(300)])[0]
    assert encoders[1].encode([sentence(300)])[0] is last
    assert cache.get("attention", sentence(0)) is None and cache.get("static", sentence(0)) is None


def test_an_encoding_larger_than_the_whole_cache_is_not_kept(table):
    cache = EncodingCache(max_bytes=100)
    SharedEncoder(make_encoder("static", vectors=table), cache, "s").encode([sentence(1)])
    assert len(cache) == 0 and cache.nbytes == 0


def test_mixers_are_kept_for_a_bounded_number_of_option_sets(table, monkeypatch):
    monkeypatch.setattr(state_mod, "resolve_vectors", lambda name: table)
    lab = LabState(vectors="rand")
    first = lab.encoder("average", alpha=0.0)
    first.encode([sentence(1)])
    assert len(lab.cache) == 1
    for k in range(1, state_mod.MAX_MIXERS + 5):
        lab.encoder("average", alpha=k / 100).encode([sentence(1)])
    assert len(lab._mixers) == state_mod.MAX_MIXERS
    assert len(lab.cache) == state_mod.MAX_MIXERS  # the dropped mixers' encodings went with them
    assert lab.encoder("average", alpha=0.0) is not first


def test_a_closing_lab_runs_no_more_encodes(table, monkeypatch):
    monkeypatch.setattr(state_mod, "resolve_vectors", lambda name: table)
    lab = LabState(vectors="rand")
    enc = lab.encoder("static")
    enc.encode([sentence(2)])
    lab.close()
    with pytest.raises(LabClosingError, match="the lab is stopping"):
        enc.encode([sentence(3)])
