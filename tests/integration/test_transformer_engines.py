"""TransformerEncoder's engines and precisions on tiny random-weight models (BERT, MPNet,
Llama): ``engine="onnx"`` gives the torch engine's Encoding, every layer within 1e-5, with
attention, targets and windows; ``auto`` falls back to torch when the export fails;
``precision="bf16"`` is refused on onnx, measures and logs its fidelity on torch, and
names itself in ``params()``."""

from __future__ import annotations

import logging

import numpy as np
import pytest

from tests.integration.tiny_models import tiny_model
from tests.missing import need

torch = need("torch")
need("transformers")
need("onnxruntime")

from contextlens.encoders import engines, onnx_engine  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.errors import InputError, UnknownOptionError  # noqa: E402

TEXTS = [
    "I deposited money at the bank.",
    "We sat on the river bank and watched the water flow past the old mill in the evening.",
    "A well-known café didn't sell 1,200 cups in 2024.",
    "Go.",
]


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {kind: tiny_model(root, kind, init=0.2) for kind in ("bert", "mpnet", "llama")}


def same_encodings(a, b, atol=1e-5):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert [w.text for w in x.words] == [w.text for w in y.words] and x.layer_ids == y.layer_ids
        assert np.abs(x.layers - y.layers).max(initial=0) <= atol  # (layers, words, dim)
        assert np.abs(x.embeddings_output - y.embeddings_output).max(initial=0) <= atol
        if x.attention is None:
            assert y.attention is None
        else:
            assert np.abs(x.attention - y.attention).max() <= atol  # (layers, heads, words, words)
            assert np.abs(x.special_attention - y.special_attention).max() <= atol


@pytest.mark.parametrize("kind", ["bert", "mpnet", "llama"])
def test_onnx_engine_equals_torch_engine(models_dir, kind):
    path = models_dir[kind]
    ref = TransformerEncoder(str(path), engine="torch", threads=1)
    onnx = TransformerEncoder(str(path), engine="onnx", threads=1)
    assert (ref.engine, onnx.engine) == ("torch", "onnx")
    same_encodings(ref.encode(TEXTS), onnx.encode(TEXTS))  # attention too (the default)
    targets = [{"bank"}, {"bank"}, {"cups"}, {"Go"}]
    same_encodings(ref.encode(TEXTS, targets=targets), onnx.encode(TEXTS, targets=targets))
    assert (ref.batch_size, onnx.batch_size) == (engines.BATCH_SIZE["torch"], engines.BATCH_SIZE["onnx"])
    # the same numbers: the engine is no part of params() (the batch size, the engine's default, is)
    assert {**ref.params(), "batch_size": 0} == {**onnx.params(), "batch_size": 0}
    assert onnx.encode(TEXTS[:1])[0].meta["engine"] == "onnx"


def test_onnx_engine_windows_and_layer_subsets(models_dir):
    path = str(models_dir["bert"])
    kwargs = dict(layers=[1], max_length=8, attention=False, threads=1)  # long texts go through windows
    ref = TransformerEncoder(path, engine="torch", **kwargs).encode(TEXTS)
    got = TransformerEncoder(path, engine="onnx", **kwargs).encode(TEXTS)
    assert len(ref[1].meta["windows"]) > 1
    same_encodings(ref, got)


def test_auto_picks_onnx_and_falls_back_to_torch(models_dir, monkeypatch, caplog):
    path = str(models_dir["bert"])
    assert TransformerEncoder(path, engine="auto", attention=False).engine == "onnx"  # installed, CPU, fp32

    def broken(*args, **kwargs):
        raise onnx_engine.OnnxExportError("no exporter for this model")

    monkeypatch.setenv("CONTEXTLENS_CACHE", str(models_dir["bert"].parent / "other-cache"))
    monkeypatch.setattr(onnx_engine, "export", broken)
    with caplog.at_level(logging.WARNING):
        enc = TransformerEncoder(path, engine="auto", attention=False)
    assert enc.engine == "torch" and "using the torch engine" in caplog.text
    assert enc.encode(TEXTS[:1])[0].meta["engine"] == "torch"
    with pytest.raises(onnx_engine.OnnxExportError, match="no exporter"):
        TransformerEncoder(path, engine="onnx", attention=False)  # asked for by name: no silent fallback


def test_bad_engine_and_precision_are_refused(models_dir):
    path = str(models_dir["bert"])
    with pytest.raises(UnknownOptionError, match="onnx"):
        TransformerEncoder(path, engine="tensorrt")
    with pytest.raises(UnknownOptionError, match="bf16"):
        TransformerEncoder(path, precision="fp16")
    with pytest.raises(InputError, match="no bf16 MatMul"):
        TransformerEncoder(path, engine="onnx", precision="bf16")
    with pytest.raises(InputError, match="CPU only"):
        TransformerEncoder(path, engine="onnx", device="cuda")
    assert engines.resolve_engine("auto", "bf16") == "torch"


def test_bf16_logs_its_fidelity_and_names_itself(models_dir, caplog):
    path = str(models_dir["bert"])
    fp32 = TransformerEncoder(path, engine="torch", attention=False, threads=1)
    with caplog.at_level(logging.WARNING):
        bf16 = TransformerEncoder(path, engine="auto", precision="bf16", attention=False, threads=1)
        # no word yet
        assert bf16.encode(["Go."], targets=[{"bank"}])[0].words == () and bf16.fidelity is None
        got = bf16.encode(TEXTS)
    assert bf16.engine == "torch" and bf16.fidelity is not None and len(bf16.fidelity) == 3
    assert "bf16 fidelity over" in caplog.text and "layer 2" in caplog.text
    if not engines.bf16_instructions():
        assert "no bf16 matmul instructions" in caplog.text
    ref = fp32.encode(TEXTS)
    stack = np.concatenate([e.layers for e in ref], 1), np.concatenate([e.layers for e in got], 1)
    assert not np.array_equal(*stack)  # bf16 did run
    want = engines.layer_fidelity(*stack, fp32.layer_ids)
    for f, w in zip(bf16.fidelity, want):  # measured on these same texts (the first call's)
        assert f.layer == w.layer and f.mean_cosine == pytest.approx(w.mean_cosine, abs=1e-6)
        assert 0.99 < f.min_cosine <= f.mean_cosine <= 1 + 1e-6
    assert got[0].meta["fidelity"][0] == bf16.fidelity[0]._asdict()
    assert bf16.params() == {**fp32.params(), "precision": "bf16", "engine": "torch"}
    assert fp32.params().get("precision") is None
