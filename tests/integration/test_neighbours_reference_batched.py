"""The neighbours reference is built in batches (thousands of words per call, padded batches
through the fast engine); each word's vectors must be those of the word encoded on its own,
one call per word, on both engines and on a causal model (issue 23 §2)."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.analysis.neighbours import CAUSAL_PREFIX, reference_table, reference_words
from tests.integration.tiny_models import tiny_model
from tests.missing import need

# frequent words of every length in pieces: padding in a batch must not move any of them
WORDS = reference_words(300)[::10] + ["riverbank", "unbelievably", "antidisestablishmentarianism"]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))


@pytest.mark.parametrize("kind, engine", [("bert", "onnx"), ("bert", "torch"), ("llama", "torch")])
def test_the_batched_reference_equals_each_word_encoded_alone(tmp_path, kind, engine):
    need("torch")
    if engine == "onnx":
        need("onnxruntime")
    from contextlens.encoders.transformer import TransformerEncoder

    encoder = TransformerEncoder(str(tiny_model(tmp_path, kind)), engine=engine, attention=False)
    prefix = CAUSAL_PREFIX if encoder.causal else ""
    assert encoder.causal == (kind == "llama")
    for layer in encoder.layer_ids:
        table = reference_table(encoder, layer, WORDS, root=tmp_path / "neighbours")
        assert len(table) > 0.9 * len(WORDS)
        position = encoder.layer_position(layer)
        alone = np.stack([encoder.encode([prefix + w], targets=[[0]])[0].layers[position, 0]
                          for w in table.keys])
        np.testing.assert_allclose(table.vectors, alone, rtol=0, atol=1e-5)
