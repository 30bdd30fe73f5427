"""Gloss embeddings with a tiny random-weight BERT: cached per sense and encoded in batches
of other senses' sentences, each equals its sentence encoded alone (the mean of its words'
vectors at the view) within 1e-5, whatever the requests that encoded it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from contextlens.encoders.encoding_cache import EncodingCache
from contextlens.evaluation import glosses
from contextlens.evaluation.runner import make_task_encoder
from contextlens.evaluation.wsd import view_vectors
from tests.integration.tiny_models import tiny_bert
from tests.missing import need
from tests.unit.evaluation.test_lmms import SYNSETS, make_graph

# definitions of very different lengths, so a batch pads the shorter sentences
DEFINITIONS = ["a thing", "a living organism that feeds on organic matter and can move about freely",
               "a member of the genus Canis", "a young dog", "a domesticated animal kept for companionship",
               "a lump or mass of hard consolidated mineral matter, e.g. a rock or a stone of the river bed",
               "building material", "the content of cognition; the main thought in a mind",
               "a living being"]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    need("torch")
    return make_task_encoder(model=str(tiny_bert(tmp_path_factory.mktemp("glosses"))))


def test_each_gloss_equals_its_sentence_encoded_alone(encoder, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "root"))
    monkeypatch.setattr(glosses, "GLOSS_BLOCK", 4)
    graph = dataclasses.replace(make_graph(), definitions=tuple(DEFINITIONS[: len(SYNSETS)]))
    cache = EncodingCache(encoder, root=tmp_path / "cache", dtype=np.float32)  # no float16 rounding
    views = [encoder.layer_position(-1), "last4", 0]
    texts = glosses._gloss_texts(graph, range(len(graph.keys)))
    alone = {v: np.stack([view_vectors(np.transpose(encoder.encode([t])[0].layers, (1, 0, 2)), v).mean(axis=0)
                          for t in texts]) for v in views}  # (senses, dim)
    some = gloss_embeddings_of(cache, graph, [5, 1, 9], views)
    every = gloss_embeddings_of(cache, graph, None, views)  # the rest, batched together
    for v in views:
        np.testing.assert_allclose(some[v], alone[v][[5, 1, 9]], atol=1e-5)
        np.testing.assert_allclose(every[v], alone[v], atol=1e-5)
        assert np.abs(alone[v]).max() > 1e-2  # vectors far larger than the tolerance


def gloss_embeddings_of(cache, graph, rows, views):
    return glosses.gloss_embeddings(cache, graph, rows, views)
