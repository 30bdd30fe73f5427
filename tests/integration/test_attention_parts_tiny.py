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


# ---- without torch: the ONNX export's states and numpy's q and k -------------------------------

NUMPY_KINDS = ("bert", "mpnet", "llama")


def assert_same_parts(got, want, atol: float = 1e-5) -> None:
    """The torch-free parts ``got`` equal the torch ones ``want``: tokens, mask and scale exactly;
    queries and keys at the real pieces (measured against the layer's magnitude when above 1, as
    SmolLM2's are), bias and weights within ``atol`` (``prepare.parts_difference``); queries and
    keys at the padding pieces within ``10·atol``; and their softmax is the model's attention."""
    from contextlens.encoders.prepare import layers_difference, parts_difference

    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert (a.tokens, a.token_words, a.words, a.token_ids, a.layer, a.layer_name, a.padding) == \
            (b.tokens, b.token_words, b.words, b.token_ids, b.layer, b.layer_name, b.padding)
        assert a.scale == pytest.approx(b.scale, rel=1e-12) and np.array_equal(a.allowed, b.allowed)
        assert (a.bias is None) == (b.bias is None)
        for x, y in ((a.queries, b.queries), (a.keys, b.keys)):
            assert layers_difference(x[None], y[None]) <= 10 * atol  # padding: states no weight depends on
        np.testing.assert_allclose(a.softmax(), b.weights, atol=atol)
    assert parts_difference(got, want) <= atol


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    """Per kind: (ONNX encoder, torch encoder) of the same tiny model, both its graphs exported."""
    root = tmp_path_factory.mktemp("qk-engines")
    paths = {kind: str(tiny_model(root, kind, init=0.2)) for kind in (*NUMPY_KINDS, "gpt2")}
    out = {kind: (TransformerEncoder(p, engine="onnx"), TransformerEncoder(p, engine="torch"))
           for kind, p in paths.items()}
    for onnx, _ in out.values():
        onnx.encode([TEXT])  # with attention: the second graph
    return out


@pytest.mark.parametrize("kind", NUMPY_KINDS)
@pytest.mark.parametrize("pad", [0, 3])
def test_the_parts_without_torch_equal_the_torch_ones(engines, kind, pad):
    onnx, torch_enc = engines[kind]
    fresh = TransformerEncoder(str(onnx.path), engine="onnx")  # its export cached: opened without torch
    parts = fresh.attention_parts(TEXT, pad=pad)
    assert fresh._hf is None and fresh._qk  # neither the torch model nor transformers' tokenizer was loaded
    assert_same_parts(parts, torch_enc.attention_parts(TEXT, pad=pad))
    assert_same_parts(fresh.attention_parts(TEXT, layers=[-1]), torch_enc.attention_parts(TEXT, layers=[-1]))


@pytest.mark.parametrize("kind", NUMPY_KINDS)
def test_a_long_text_without_torch(engines, kind):
    """Positions far apart: MPNet's logarithmic buckets, high rotary angles."""
    onnx, torch_enc = engines[kind]
    text = " ".join(["The river bank flooded, didn't it?"] * 11)  # ~120 pieces of 128
    assert_same_parts(onnx.attention_parts(text), torch_enc.attention_parts(text))


def test_mpnet_buckets_and_llama_rotary_are_the_models_own():
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb
    from transformers.models.mpnet.modeling_mpnet import MPNetEncoder

    from contextlens.encoders.qk_numpy import relative_buckets, rotate

    pos = torch.arange(600)
    want = MPNetEncoder.relative_position_bucket(pos[None, :] - pos[:, None]).numpy()
    assert np.array_equal(relative_buckets(600), want)
    config = transformers.LlamaConfig(hidden_size=64, num_attention_heads=4, rope_theta=10000.0)
    x = torch.randn(1, 4, 128, 16, generator=torch.Generator().manual_seed(0))
    cos, sin = LlamaRotaryEmbedding(config)(x, torch.arange(128)[None])
    rotated, _ = apply_rotary_pos_emb(x, x, cos, sin)
    np.testing.assert_allclose(rotate(x[0].numpy(), 10000.0), rotated[0].numpy(), atol=2e-6)


def test_models_numpy_does_not_read_keep_the_torch_path(engines, tmp_path):
    gpt2, gpt2_torch = engines["gpt2"]
    parts = gpt2.attention_parts(TEXT)
    assert gpt2._qk is False and gpt2._hf is not None  # read from torch, behind "loading … with torch"
    assert_same_parts(parts, gpt2_torch.attention_parts(TEXT))
    twin = TransformerEncoder(str(engines["bert"][0].path), engine="onnx", random_weights=1)
    assert twin._qk_weights() is None  # a random twin's weights are in no file
    np.testing.assert_allclose(twin.attention_parts(TEXT)[0].softmax(), twin.attention_parts(TEXT)[0].weights,
                               atol=2e-6)
    no_weights = TransformerEncoder(str(engines["bert"][0].path), engine="onnx", attention=False)
    with pytest.raises(InputError, match="attention=True"):
        no_weights.attention_parts(TEXT)
    assert no_weights._hf is None
