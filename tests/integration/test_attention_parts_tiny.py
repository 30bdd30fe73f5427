"""Queries and keys read from transformers (tiny random models, no download):
softmax(q·k · scale + bias + mask) must equal the model's own attention weights, for
BERT, MPNet (relative position bias), Llama (rotary, grouped keys) and GPT-2."""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need

torch = need("torch")
transformers = need("transformers")

from contextlens.encoders.alignment import aggregate_attention, align_pieces, attention_matrices  # noqa: E402
from contextlens.encoders.qk import MODEL_TYPES  # noqa: E402
from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.errors import InputError  # noqa: E402
from contextlens.text import tokenize  # noqa: E402
from tests.integration.tiny_models import tiny_model  # noqa: E402

TEXT = "The river bank flooded, didn't it?"
KINDS = ("bert", "mpnet", "llama", "gpt2")


@pytest.fixture(scope="module")
def encoders(tmp_path_factory):
    root = tmp_path_factory.mktemp("qk")
    return {kind: TransformerEncoder(str(tiny_model(root, kind, init=0.2))) for kind in KINDS}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("pad", [0, 3])
def test_softmax_of_the_parts_is_the_models_attention(encoders, kind, pad):
    encoder = encoders[kind]
    parts = encoder.attention_parts(TEXT, pad=pad)
    assert [p.layer for p in parts] == [1, 2]
    tok = encoder.tokenizer(TEXT)
    for p in parts:
        assert p.tokens[: len(tok["input_ids"])] == tuple(
            encoder.tokenizer.convert_ids_to_tokens(tok["input_ids"])
        )
        assert p.token_ids[: len(tok["input_ids"])] == tuple(tok["input_ids"]) and p.padding == pad
        assert p.heads == 2 and p.d_head == 16
        np.testing.assert_allclose(p.softmax(), p.weights, atol=2e-6)
        assert (p.bias is not None) == (kind == "mpnet")
        assert not p.allowed[:, len(p.tokens) - pad:].any()  # padding is never attended to
        causal = kind in ("llama", "gpt2")
        real = len(p.tokens) - pad
        assert np.array_equal(p.allowed[:real, :real], np.tril(np.ones((real, real), bool)) if causal
                              else np.ones((real, real), bool))
        assert p.weights.max() > 0.3  # not uniform: the check above is not trivial


@pytest.mark.parametrize("kind", KINDS)
def test_the_pieces_attention_is_the_encodings_word_attention(encoders, kind):
    encoder = encoders[kind]
    enc = encoder.encode([TEXT])[0]
    parts = encoder.attention_parts(TEXT)
    tok = encoder.tokenizer(TEXT, return_offsets_mapping=True, return_special_tokens_mask=True)
    al = align_pieces(TEXT, tokenize(TEXT), tok["offset_mapping"], tok["special_tokens_mask"])
    query, key = attention_matrices(al)
    for p, words, special in zip(parts, enc.attention, enc.special_attention, strict=True):
        w, s = aggregate_attention(p.weights.astype(np.float64), query, key)
        np.testing.assert_allclose(w, words, atol=1e-5)
        np.testing.assert_allclose(s, special, atol=1e-5)
    assert [t for t, ws in zip(parts[0].tokens, parts[0].token_words) if 3 in ws] == ["flooded"]
    assert parts[0].words == tuple(enc.tokens)


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_the_encodings_carry_the_piece_ids(encoders, kind):
    encoder = encoders[kind]
    enc = encoder.encode(["The riverbank flooded."])[0]
    for pieces, ids in zip(enc.pieces.tokens, enc.pieces.ids, strict=True):
        assert list(ids) == encoder.tokenizer.convert_tokens_to_ids(list(pieces))
        assert all(isinstance(i, int) for i in ids)
    assert list(enc.pieces.ids[1]) == encoder.tokenizer("riverbank", add_special_tokens=False)["input_ids"]


def test_limits_and_unsupported_models(encoders, tmp_path):
    bert = encoders["bert"]
    with pytest.raises(InputError, match="one window of at most 128 pieces"):
        bert.attention_parts(" ".join(["bank"] * 200))
    with pytest.raises(InputError, match="layer 0 is the static row"):
        bert.attention_parts(TEXT, layers=[0])
    assert [p.layer for p in bert.attention_parts(TEXT, layers=[-1])] == [2]
    config = transformers.DistilBertConfig(vocab_size=bert.tokenizer.vocab_size, dim=32, n_layers=1,
                                           n_heads=2, hidden_dim=37)
    path = tmp_path / "distil"
    transformers.DistilBertModel(config).save_pretrained(path)
    bert.tokenizer.save_pretrained(path)
    with pytest.raises(InputError, match="'distilbert' model is not supported; supported model types: "
                                         + ", ".join(MODEL_TYPES)):
        TransformerEncoder(str(path)).attention_parts(TEXT)
    no_weights = TransformerEncoder(str(bert.path), attention=False)
    with pytest.raises(InputError, match="attention=True"):
        no_weights.attention_parts(TEXT)
