"""LMMS's gloss embeddings of real WordNet senses with minilm (the ONNX engine, as ``eval
wsd`` runs it): asked in two overlapping requests and cached per sense, each equals its
gloss sentence encoded alone (the mean of its words' vectors) within 1e-5."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import missing, need_model

pytestmark = pytest.mark.data
KEYS = ("bank%1:17:01::", "bank%1:14:00::", "bank%2:40:00::", "depository_financial_institution%1:14:00::",
        "globe%1:17:00::", "run%2:38:00::", "a%1:10:00::")


def test_minilm_glosses_equal_each_sentence_encoded_alone(data_dir, tmp_path):
    if not (data_dir / "wordnet" / "index.sense").is_file():
        missing(f"{data_dir / 'wordnet'} is missing (WordNet is needed)")
    need_model("minilm")
    from contextlens import datasets
    from contextlens.encoders.encoding_cache import EncodingCache
    from contextlens.evaluation import glosses
    from contextlens.evaluation.runner import make_task_encoder
    from contextlens.evaluation.wsd import view_vectors

    encoder = make_task_encoder(model="minilm")
    graph = datasets.wordnet_graph(data_dir)
    rows = [graph.key_row[k] for k in KEYS]
    cache = EncodingCache(encoder, root=tmp_path, dtype=np.float32)  # no float16 rounding: the raw vectors
    views = [encoder.layer_position(-1), "last4"]
    first = glosses.gloss_embeddings(cache, graph, rows[:4], views)
    both = glosses.gloss_embeddings(cache, graph, rows[2:], views)  # two read, three encoded
    texts = glosses._gloss_texts(graph, rows)
    assert texts[0] == "bank - bank - sloping land (especially the slope beside a body of water)"
    for v in views:
        alone = np.stack([view_vectors(np.transpose(encoder.encode([t])[0].layers, (1, 0, 2)), v).mean(axis=0)
                          for t in texts])
        got = np.concatenate([first[v], both[v][2:]])
        np.testing.assert_allclose(got, alone, atol=1e-5)
        np.testing.assert_array_equal(both[v][:2], first[v][2:])  # read back as stored
