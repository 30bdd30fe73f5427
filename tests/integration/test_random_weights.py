"""The random-weights twin of a transformer (``random_weights=SEED``) on tiny models built from
configs: the same architecture and tokenizer with every weight re-drawn, reproducible from
its seed, named as a twin, keyed apart in the caches, and the same on the ONNX engine as on
torch (the export is keyed by the weights, so the twin never runs the trained graph)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.integration.tiny_models import tiny_model
from tests.missing import need

torch = need("torch")
need("transformers")

from contextlens.encoders.encoding_cache import EncodingCache  # noqa: E402
from contextlens.encoders.models import random_twin  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.errors import InputError  # noqa: E402

TEXTS = ["I deposited money at the bank.", "We sat on the river bank."]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {kind: tiny_model(root, kind, init=0.2) for kind in ("bert", "llama")}


def stack(encoder) -> np.ndarray:
    return np.concatenate([e.layers for e in encoder.encode(TEXTS)], axis=1)  # (layers, words, dim)


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_the_twin_is_the_same_architecture_with_other_weights(models, kind):
    trained = TransformerEncoder(str(models[kind]), engine="torch", attention=False)
    twin = TransformerEncoder(str(models[kind]), engine="torch", attention=False, random_weights=1)
    assert type(twin.hf_model) is type(trained.hf_model) and twin.layer_ids == trained.layer_ids
    assert twin.hf_model.config.to_dict() == trained.hf_model.config.to_dict()
    weights = dict(trained.hf_model.named_parameters())
    assert {k: p.shape for k, p in twin.hf_model.named_parameters()} == {k: p.shape for k,
                                                                         p in weights.items()}
    moved = [k for k, p in twin.hf_model.named_parameters() if not torch.equal(p, weights[k])]
    assert "embeddings.word_embeddings.weight" in moved or "embed_tokens.weight" in moved
    drawn = [k for k, p in weights.items() if p.numel() > 1 and p.std() > 0]  # not a constant norm or bias
    assert set(drawn) <= set(moved) and len(drawn) >= 10
    a, b = stack(trained), stack(twin)
    assert a.shape == b.shape and not np.allclose(a, b)
    again = TransformerEncoder(str(models[kind]), engine="torch", attention=False, random_weights=1)
    np.testing.assert_array_equal(stack(again), b)  # the seed fixes the weights
    other = TransformerEncoder(str(models[kind]), engine="torch", attention=False, random_weights=2)
    assert not np.allclose(stack(other), b)


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_the_twin_is_the_class_initialiser_under_the_seed(models, kind):
    # tiny_model drew its weights exactly so: torch.manual_seed(0), then the class on its config
    trained = TransformerEncoder(str(models[kind]), engine="torch", attention=False)
    twin = TransformerEncoder(str(models[kind]), engine="torch", attention=False, random_weights=0)
    weights = dict(trained.hf_model.named_parameters())
    assert all(torch.equal(p, weights[k]) for k, p in twin.hf_model.named_parameters())


def test_the_twin_is_named_and_cached_apart(models):
    trained = TransformerEncoder(str(models["bert"]), engine="torch", attention=False)
    twin = TransformerEncoder(str(models["bert"]), engine="torch", attention=False, random_weights=3)
    assert twin.name == f"{trained.name} (random weights, seed 3)"
    assert twin.params()["random_weights"] == 3 and "random_weights" not in trained.params()
    assert twin.params()["model"] == twin.name
    assert EncodingCache(twin).key != EncodingCache(trained).key


def test_the_twin_on_onnx_equals_the_twin_on_torch(models):
    need("onnxruntime")
    ref = TransformerEncoder(str(models["bert"]), engine="torch", attention=False, random_weights=5)
    onnx = TransformerEncoder(str(models["bert"]), engine="onnx", attention=False, random_weights=5)
    trained = TransformerEncoder(str(models["bert"]), engine="onnx", attention=False)
    assert np.abs(stack(ref) - stack(onnx)).max() <= 1e-5
    assert not np.allclose(stack(onnx), stack(trained))


def test_the_global_torch_generator_is_left_alone(models):
    model = TransformerEncoder(str(models["bert"]), engine="torch", attention=False).hf_model
    torch.manual_seed(11)
    expected = torch.rand(3)
    torch.manual_seed(11)
    random_twin(model, 0)
    assert torch.equal(torch.rand(3), expected)


def test_a_bad_seed_is_refused_before_loading(models):
    with pytest.raises(InputError, match="random_weights must be a whole number from 0"):
        TransformerEncoder(str(models["bert"]), random_weights=-1)
    with pytest.raises(InputError, match="random_weights must be a whole number"):
        TransformerEncoder(str(models["bert"]), random_weights="0")
