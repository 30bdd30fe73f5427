"""The views of a tiny random-weight model with a byte-level BPE (the tokenizer family of
GPT-2 and SmolLM2, trained in the tests) show its pieces as text: no ``Ġ``, the bytes of ``é``
decoded, a piece continuing a word marked ``·``, the white space piece a BPE keeps as ``␣``."""

from __future__ import annotations

import pytest

from contextlens import views
from contextlens.views.pieces import CONTINUES
from tests.missing import need

need("torch")
need("transformers")

TEXT = "We sat on the riverbank by the café."


@pytest.fixture(scope="module")
def causal(tmp_path_factory):
    from contextlens.encoders.transformer import TransformerEncoder
    from tests.integration.tiny_models import tiny_lms

    return TransformerEncoder(str(tiny_lms(tmp_path_factory.mktemp("pieces")) / "causal"))


def test_the_views_show_byte_level_pieces_as_text(causal):
    enc = causal.encode([TEXT])[0]
    raw = enc.describe()["pieces"]
    assert any(p.startswith("Ġ") for ps in raw for p in ps) and "ĠcafÃ©" in raw[enc.tokens.index("café")]
    head, model, neuron = (v.data for v in views.attention_views(causal, TEXT, "café"))
    tokens = head["attention"]["pieces"]["tokens"]
    assert not [t for t in tokens if "Ġ" in t or "Ã" in t] and neuron["tokens"] == tokens
    words = head["attention"]["words"]["tokens"]
    for w, word in enumerate(words):  # each word's labels, put back together, are the word
        shown = [t for t, ws in zip(tokens, head["attention"]["pieces"]["token_words"]) if ws == [w]]
        assert "".join(s.removeprefix(CONTINUES) for s in shown) == word
        assert all(s.startswith(CONTINUES) for s in shown[1:]) and not shown[0].startswith(CONTINUES)
    specials = [t for t, ws in zip(tokens, head["attention"]["pieces"]["token_words"]) if not ws]
    assert specials and set(specials) <= {"<s>", "␣"}
    assert views.input_view([enc]).data["sentences"][0]["pieces"][words.index("café")] == ["café"]


def test_the_encoder_record_keeps_the_pieces_where_meta_had_them(causal):
    """``describe()`` gives the JSON record with ``pieces`` and ``piece_ids`` right after
    ``skipped`` (where ``meta`` held them); ``meta`` no longer holds them; keeping some words keeps
    their pieces."""
    enc = causal.encode([TEXT])[0]
    record = enc.describe()
    keys = list(record)
    assert keys[keys.index("skipped") + 1:keys.index("skipped") + 3] == ["pieces", "piece_ids"]
    assert "pieces" not in enc.meta and record["piece_ids"] == [list(i) for i in enc.pieces.ids]
    assert enc.source == causal.name
    some = enc.select([1, 2], "only two words")
    assert some.pieces.tokens == enc.pieces.tokens[1:3] and some.describe()["pieces"] == record["pieces"][1:3]
