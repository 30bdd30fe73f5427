"""The views of the packaged models show their real pieces without the tokenizer's markers:
MPNet's WordPiece (``##bank``) and SmolLM2's byte-level BPE (``Ġbank``, ``ĠcafÃ©``) alike
become *bank*, ``·bank`` and *café* in the head, model and neuron views of
``attention_views`` (what ``attention --html`` and the lab draw) and in the input view.
``mpnet`` and ``smollm2`` are ``slow``."""

from __future__ import annotations

import pytest

from contextlens import views
from tests.missing import need

need("torch")
need("transformers")

from tests.acceptance.test_packaged_models import _encoder  # noqa: E402

TEXT = "We sat on the riverbank by the café, then walked to the bank."
MARKERS = ("Ġ", "▁", "##", "</w>", "Ã")


def check_pieces(name: str, *, river: list[str], cafe: list[str], **kw) -> None:
    encoder = _encoder(name, **kw)
    head, model, neuron = (v.data for v in views.attention_views(encoder, TEXT, "bank"))
    pieces = head["attention"]["pieces"]
    tokens, words = pieces["tokens"], pieces["token_words"]
    assert not [t for t in tokens if any(m in t for m in MARKERS)], tokens
    assert neuron["tokens"] == tokens and model["attention"]["pieces"]["tokens"] == tokens
    word_index = head["attention"]["words"]["tokens"].index
    assert [t for t, ws in zip(tokens, words) if ws == [word_index("riverbank")]] == river
    assert [t for t, ws in zip(tokens, words) if ws == [word_index("café")]] == cafe
    assert [t for t, ws in zip(tokens, words) if ws == [word_index("bank")]] == ["bank"]
    raw = [t for t in head["attention"]["pieces"]["titles"] if "bank" in t]
    assert raw, "the tooltips keep each piece's id (and spelling)"
    enc = encoder.encode([TEXT])[0]
    shown = views.input_view([enc]).data["sentences"][0]["pieces"]
    assert shown[enc.tokens.index("riverbank")] == river and shown[enc.tokens.index("café")] == cafe


def test_minilm():
    check_pieces("minilm", river=["river", "·bank"], cafe=["cafe"])  # uncased WordPiece drops the accent


@pytest.mark.slow
def test_mpnet():
    check_pieces("mpnet", river=["river", "·bank"], cafe=["cafe"])


@pytest.mark.slow
def test_smollm2():
    check_pieces("smollm2", river=["river", "·bank"], cafe=["café"], layers=[1, 30])
