"""An encoder's metadata (the encoder block of every --json) says how many CPU threads its
engine runs on and why (issue 23 §3)."""

from __future__ import annotations

import pytest

from contextlens.threads import ENV
from tests.integration.tiny_models import tiny_bert
from tests.missing import need


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    need("torch")
    return str(tiny_bert(tmp_path_factory.mktemp("threads")))


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE", str(tmp_path / "cache"))


def test_the_encoder_block_names_the_engine_threads_and_why(model, monkeypatch):
    import torch

    from contextlens.encoders.transformer import TransformerEncoder

    before = torch.get_num_threads()
    try:
        monkeypatch.setenv(ENV, "1")
        meta = TransformerEncoder(model, engine="torch", attention=False).encode(["a bank"])[0].meta
        assert (meta["threads"]["engine"] == "torch"
                and meta["threads"]["threads"] == 1 == torch.get_num_threads())
        assert meta["threads"]["why"] == f"1 thread: set by {ENV}"
        monkeypatch.delenv(ENV)
        need("onnxruntime")
        onnx = TransformerEncoder(model, engine="onnx", attention=False)
        meta = onnx.encode(["a bank"])[0].meta["threads"]
        assert meta["engine"] == "onnxruntime" and meta["threads"] == onnx._runner.threads >= 1
        assert meta["source"] == "automatic" and meta["policy"] == "cores" and "usable core" in meta["why"]
    finally:
        torch.set_num_threads(before)
