"""CEAT's corpus contexts are encoded as a counted progress step (sentences done of the total,
so a front end can say the time left), in parts that give the same vectors as one call."""

from __future__ import annotations

import logging

import numpy as np

from contextlens import progress
from contextlens.bias import contexts as contexts_module
from contextlens.encoders.mixing import SelfAttention
from contextlens.vectors import EmbeddingTable

TABLE = EmbeddingTable(["rose", "tulip", "ant", "flea", "the", "is", "a"],
                       np.random.default_rng(0).normal(size=(7, 4)).astype(np.float32))
LINES = ["the rose is a rose", "a tulip is", "the ant", "a flea is a flea", "the tulip", "an ant is"]


class Collect(logging.Handler):
    def __init__(self):
        super().__init__(logging.INFO)
        self.reports = []

    def emit(self, record):
        if hasattr(record, "progress"):
            self.reports.append(record.progress)


def test_the_contexts_are_a_counted_step_and_parts_change_no_vector(monkeypatch):
    encoder = SelfAttention(TABLE, include_self=True)
    words = ["rose", "tulip", "ant", "flea"]
    whole = contexts_module.contexts_from_corpus(encoder, LINES, words)
    handler, log = Collect(), progress.LOG
    saved = log.level, log.propagate, log.handlers[:]
    log.handlers, log.propagate = [handler], False
    log.setLevel(logging.INFO)
    monkeypatch.setattr(progress, "EVERY", 0.0)
    monkeypatch.setattr(contexts_module, "CHUNK", 2)
    try:
        parts = contexts_module.contexts_from_corpus(encoder, LINES, words)
    finally:
        log.setLevel(saved[0])
        log.propagate, log.handlers = saved[1], saved[2]
    reports = handler.reports
    assert reports[0].what == "encoding 6 CEAT contexts with attention" and reports[0].total == 6
    assert [r.done for r in reports if r.state == "advance"] == [2, 4, 6] and reports[-1].state == "end"
    assert parts.keys() == whole.keys()
    for layer in whole:
        assert parts[layer].keys() == whole[layer].keys()
        for w in whole[layer]:
            np.testing.assert_allclose(parts[layer][w], whole[layer][w], atol=1e-6)
