"""Queries and keys of the packaged models: softmax(q·k/√d (+ bias) + mask) must be the
model's own attention, for every layer and head. ``minilm`` (BERT) runs in the default
suite; ``mpnet`` (relative position bias) and ``smollm2`` (Llama: rotary, grouped keys,
causal) are ``slow``."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

need("torch")
need("transformers")

from tests.acceptance.test_packaged_models import _encoder  # noqa: E402

TEXT = "They fished all day from the grassy riverbank, then walked to the bank."


def check_parts(name: str, **kw) -> None:
    encoder = _encoder(name, **kw)
    parts = encoder.attention_parts(TEXT)
    assert [p.layer for p in parts] == list(encoder.layer_ids[1:])
    for p in parts:
        np.testing.assert_allclose(p.softmax(), p.weights, atol=1e-5)
        assert p.weights.max() > 0.5
    bank = parts[-1].token_of("bank")
    assert parts[-1].tokens[bank].lstrip("Ġ▁") == "bank"


def test_minilm():
    check_parts("minilm")


@pytest.mark.slow
def test_mpnet():
    check_parts("mpnet")


@pytest.mark.slow
def test_smollm2():
    check_parts("smollm2", layers=[1, 15, 30])
