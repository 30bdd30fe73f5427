"""The ONNX Runtime engine on the packaged models: every hidden state equal to Hugging
Face's ``output_hidden_states`` within 1e-5, and every layer of every word of
``TransformerEncoder(engine="onnx")`` equal to ``engine="torch"`` within 1e-5 (for
SmolLM2, whose hidden states reach ~27,000, within 1e-5 of each layer's largest value: float32
carries 7 digits, so the two engines' different summation orders differ at ~1e-7 of the
magnitude). ``minilm`` runs in the default suite; ``mpnet`` and ``smollm2`` (exports of
0.4–0.5 GB, 15–45 s once) are ``slow``."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need, need_model

torch = need("torch")
need("transformers")
need("onnxruntime")

from contextlens.encoders import models  # noqa: E402
from contextlens.encoders.onnx_engine import OnnxRunner  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402

SENTENCES = [
    "She deposited the cheque at the bank",
    "They fished all day from the grassy bank",
    "A well-known café didn't sell 1,200 ☕ in 2024 — naïve Zoë's 🦩 antidisestablishmentarianism.",
    "Go.",
]


def check(name: str, relative: bool = False) -> None:
    need_model(name)
    model, tokenizer, _ = models.load(name, attention=False)
    runner = OnnxRunner(model)
    enc = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    out = runner.run(enc["input_ids"], enc["attention_mask"])
    with torch.no_grad():
        ref = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                    output_hidden_states=True)
    valid = enc["attention_mask"].numpy().astype(bool)
    assert len(out.hidden_states) == model.config.num_hidden_layers + 1
    for k, (got, want) in enumerate(zip(out.hidden_states, ref.hidden_states)):
        want = want.numpy()[valid]
        scale = float(np.abs(want).max()) if relative else 1.0
        assert np.abs(got[valid] - want).max() <= 1e-5 * scale, f"layer {k}"


def test_minilm_hidden_states_equal_hugging_face():
    check("minilm")


@pytest.mark.slow
def test_mpnet_hidden_states_equal_hugging_face():
    check("mpnet")


@pytest.mark.slow
def test_smollm2_hidden_states_equal_hugging_face():
    check("smollm2", relative=True)


def check_encoder(name: str, relative: bool = False) -> None:
    need_model(name)
    torch_engine = TransformerEncoder(name, engine="torch", attention=False)
    encodings = torch_engine.encode(SENTENCES)
    del torch_engine  # one copy of the model in memory at a time
    onnx_engine = TransformerEncoder(name, engine="onnx", attention=False)
    assert onnx_engine.engine == "onnx"
    for want, got in zip(encodings, onnx_engine.encode(SENTENCES)):
        assert [w.text for w in got.words] == [w.text for w in want.words]
        for k, (a, b) in enumerate(zip(got.layers, want.layers)):  # each (words, dim)
            scale = float(np.abs(b).max()) if relative else 1.0
            assert np.abs(a - b).max() <= 1e-5 * scale, f"{name} layer {k}"
        assert np.abs(got.embeddings_output - want.embeddings_output).max() <= 1e-5


def test_minilm_onnx_engine_equals_torch_engine():
    check_encoder("minilm")


@pytest.mark.slow
def test_mpnet_onnx_engine_equals_torch_engine():
    check_encoder("mpnet")


@pytest.mark.slow
def test_smollm2_onnx_engine_equals_torch_engine():
    check_encoder("smollm2", relative=True)
