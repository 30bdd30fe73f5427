"""The packaged models, loaded for real: "bank" moves with its sense, layer 0 does not.

``minilm`` runs in the default suite; ``mpnet`` (12 layers, a 438 MB zip extracted once)
and ``smollm2`` (de-quantised from GGUF once) are ``slow``: run them with ``pytest -m slow``.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.missing import need, need_model

need("torch")
need("transformers")

from contextlens.encoders.transformer import TransformerEncoder  # noqa: E402
from contextlens.text import tokenize  # noqa: E402
from contextlens.vectors import cosine  # noqa: E402

FINANCE = ["She deposited the cheque at the bank", "He took out a loan from the bank"]
RIVER = "They fished all day from the grassy bank"
TRICKY = "A well-known café didn't sell 1,200 ☕ in 2024 — naïve Zoë's 🦩 antidisestablishmentarianism."


def _encoder(name: str, **kw) -> TransformerEncoder:
    need_model(name)
    return TransformerEncoder(name, **kw)


@pytest.fixture(scope="module")
def minilm():
    return _encoder("minilm")


def check_bank(encoder: TransformerEncoder) -> None:
    f1, f2, river = encoder.encode(FINANCE + [RIVER])
    top = [e.vector("bank", layer=-1) for e in (f1, f2, river)]
    assert cosine(top[0], top[1]) > cosine(top[0], top[2])
    assert cosine(top[0], top[1]) > cosine(top[1], top[2])
    rows = [e.vector("bank", layer=0) for e in (f1, f2, river)]
    np.testing.assert_array_equal(rows[0], rows[1])  # the same pieces: the very same row
    np.testing.assert_array_equal(rows[0], rows[2])
    assert cosine(rows[0], rows[2]) == 1.0  # exactly: same token id, same row
    for e in (f1, f2, river):
        np.testing.assert_allclose(e.attention.sum(-1) + e.special_attention, 1.0, atol=1e-5)


def test_minilm_bank_senses(minilm):
    check_bank(minilm)
    enc = minilm.encode_one(FINANCE[0])
    assert enc.layers.shape == (7, 7, 384) and enc.attention.shape == (6, 12, 7, 7)
    assert enc.meta["model"] == "minilm" and enc.meta["architecture"] == "BertModel"
    assert enc.meta["causal"] is False and enc.meta["max_length"] == 512


def test_minilm_reads_every_tricky_word(minilm):
    enc = minilm.encode_one(TRICKY)
    assert enc.tokens == [w.text for w in tokenize(TRICKY)]
    pieces = dict(zip(enc.tokens, enc.describe()["pieces"]))
    assert pieces["café"] == ["cafe"] and pieces["☕"] == ["[UNK]"] and len(pieces["didn't"]) == 3


def test_minilm_windows_a_text_longer_than_512_pieces(minilm):
    text = " ".join(["The bank by the river flooded after the storm, and the bank clerks left."] * 45)
    enc = TransformerEncoder("minilm", attention=False, layers=-1).encode_one(text)
    assert enc.tokens == [w.text for w in tokenize(text)] and len(enc.meta["windows"]) >= 2
    first = minilm.encode_one(text[: text.index(".") + 1])
    # the first sentence sits at the start of the first window: its context differs only by what follows
    assert cosine(enc.vector(1), first.vector(1)) > 0.8


@pytest.mark.slow
def test_mpnet_bank_senses():
    encoder = _encoder("mpnet")
    check_bank(encoder)
    enc = encoder.encode_one(TRICKY)
    assert enc.layers.shape[0] == 13 and enc.dim == 768 and enc.meta["max_length"] == 512
    assert enc.tokens == [w.text for w in tokenize(TRICKY)]


@pytest.mark.slow
def test_smollm2_is_causal_and_reads_every_character():
    encoder = _encoder("smollm2")
    check_bank(encoder)
    enc = encoder.encode_one(TRICKY + ' "ok?"  \x07')
    assert enc.meta["causal"] is True and enc.layers.shape[0] == 31 and enc.dim == 576
    assert enc.tokens == [w.text for w in tokenize(TRICKY + ' "ok?"  \x07')]
    plain = encoder.encode_one(FINANCE[1])  # (a piece such as '?"' that covers two words is shared)
    assert np.abs(np.triu(plain.attention, k=1)).max() == 0.0
