"""Queries and keys of the packaged models: softmax(q·k/√d (+ bias) + mask) must be the
model's own attention, for every layer and head, on either engine; and on the ONNX engine,
where they are computed without torch (numpy over the export's states and the safetensors
weights), they must equal the torch engine's. ``minilm`` (BERT) runs in the default suite;
``mpnet`` (relative position bias) and ``smollm2`` (Llama: rotary, grouped keys, causal) are
``slow``."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

need("torch")
need("transformers")

from tests.acceptance.test_packaged_models import _encoder  # noqa: E402

TEXT = "They fished all day from the grassy riverbank, then walked to the bank."


def check_parts(name: str, **kw) -> None:
    from tests.integration.test_attention_parts_tiny import assert_same_parts

    onnx, torch_enc = _encoder(name, engine="onnx", **kw), _encoder(name, engine="torch", **kw)
    onnx.encode([TEXT])  # both graphs exported (once per model)
    fresh = _encoder(name, engine="onnx", **kw)  # as a later command opens it
    for encoder in (fresh, torch_enc):
        parts = encoder.attention_parts(TEXT)
        assert [p.layer for p in parts] == list(encoder.layer_ids[1:])
        for p in parts:
            np.testing.assert_allclose(p.softmax(), p.weights, atol=1e-5)
            assert p.weights.max() > 0.5
        bank = parts[-1].token_of("bank")
        assert parts[-1].tokens[bank].lstrip("Ġ▁") == "bank"
    assert fresh._hf is None and fresh._qk  # without torch
    for pad in (0, 2):
        assert_same_parts(fresh.attention_parts(TEXT, pad=pad), torch_enc.attention_parts(TEXT, pad=pad))


def test_minilm():
    check_parts("minilm")


@pytest.mark.slow
def test_mpnet():
    check_parts("mpnet")


@pytest.mark.slow
def test_smollm2():
    check_parts("smollm2", layers=[1, 15, 30])
