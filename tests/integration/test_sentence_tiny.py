"""Sentence vectors of a tiny random-weight BERT equal its hidden states pooled over every
piece (special tokens included), at every layer; a text cut into windows has none."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

torch = need("torch")
transformers = need("transformers")

from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from tests.integration.tiny_models import tiny_bert  # noqa: E402


def test_sentence_vectors_pool_every_piece(tmp_path):
    path = tiny_bert(tmp_path)
    texts = ["We sat on the river bank.", "The bank approved the loan, didn't it?"]
    encoder = TransformerEncoder(str(path))
    tok = transformers.AutoTokenizer.from_pretrained(path)
    model = transformers.AutoModel.from_pretrained(path).eval()
    for text, enc in zip(texts, encoder.encode(texts)):
        ids = tok(text, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            states = model(input_ids=ids, output_hidden_states=True).hidden_states
        rows = [model.get_input_embeddings().weight[ids[0]]] + [h[0] for h in states[1:]]  # (T, dim) each
        for layer, h in enumerate(rows):
            h = h.detach().numpy()
            np.testing.assert_allclose(enc.sentence_vector("mean", layer, normalize=False), h.mean(0),
                                       atol=1e-5)
            np.testing.assert_allclose(enc.sentence_vector("cls", layer, normalize=False), h[0], atol=1e-5)
            np.testing.assert_allclose(enc.sentence_vector("max", layer, normalize=False), h.max(0),
                                       atol=1e-5)
    short = TransformerEncoder(str(path), max_length=8).encode([texts[1]])[0]
    with pytest.raises(InputError, match="windows of at most 8 pieces"):
        short.sentence_vector()
