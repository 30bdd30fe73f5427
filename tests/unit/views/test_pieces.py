"""A view shows a piece as the text it stands for (views.pieces): with real tokenizers of the
three families (byte-level BPE, WordPiece, SentencePiece-style), trained here on a few
sentences, every word's labels put back together give the word, and no label keeps a marker."""

from __future__ import annotations

import re

import numpy as np
import pytest

from contextlens import views
from contextlens.encoders.alignment import align_pieces
from contextlens.encoders.base import Encoding, WordPieces
from contextlens.encoders.qk import AttentionParts
from contextlens.text import tokenize
from contextlens.views.pieces import CONTINUES, piece_label, token_labels, word_piece_labels
from tests.missing import need

CORPUS = [
    "We sat on the riverbank of the river.",
    "The bank approved my loan.",
    "A café 😀 in Łódź, naïve!",
    "Banking banks bank's banked.",
    "She put money in the bank, then the river flooded.",
]
TEXTS = ["We sat on the riverbank café 😀 of Łódź.", "The banker's naïve bank, tab\there."]


def _tokenizer(kind: str):
    tk = need("tokenizers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    if kind == "byte-level":
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=300, special_tokens=["<s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        )
        tok.train_from_iterator(CORPUS * 3, trainer)
        tok.post_processor = processors.Sequence(
            [
                processors.ByteLevel(trim_offsets=False),
                processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)]),
            ]
        )
    elif kind == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.train_from_iterator(
            CORPUS * 3, trainers.WordPieceTrainer(vocab_size=120, special_tokens=["[UNK]", "[CLS]", "[SEP]"])
        )
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
        )
    else:  # SentencePiece-style: ▁ before a word
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        tok.pre_tokenizer = pre_tokenizers.Metaspace()
        tok.train_from_iterator(
            CORPUS * 3, trainers.BpeTrainer(vocab_size=150, special_tokens=["<unk>", "</s>"])
        )
        tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    assert tk  # the package is there
    return tok


def _unescape(label: str) -> bytes:
    """A label's text back as bytes (its \\xNN escapes are bytes of a split character)."""
    out = b""
    for part in re.split(r"(\\x[0-9a-f]{2})", label.removeprefix(CONTINUES)):
        out += bytes([int(part[2:], 16)]) if re.fullmatch(r"\\x[0-9a-f]{2}", part) else part.encode("utf-8")
    return out


@pytest.mark.parametrize("kind", ["byte-level", "wordpiece", "sentencepiece"])
def test_each_words_labels_give_back_the_word(kind):
    tok = _tokenizer(kind)
    for text in TEXTS:
        enc = tok.encode(text)
        words = tokenize(text)
        special = [bool(m) for m in enc.special_tokens_mask]
        al = align_pieces(text, words, enc.offsets, special)
        kept = [w for w, ps in enumerate(al.word_pieces) if ps]
        token_words = [tuple(kept.index(w) for w in ws) for ws in al.piece_words]
        labels = token_labels(enc.tokens, token_words, [words[w].text for w in kept])
        for p, ws in enumerate(al.piece_words):
            if len(ws) > 1:  # a piece over two words ("bank," "?\""): the text of its span
                assert labels[p].removeprefix(CONTINUES) == "".join(words[w].text for w in ws), (
                    kind,
                    labels[p],
                )
        for w in kept:
            ps = al.word_pieces[w]
            if any(len(al.piece_words[p]) > 1 for p in ps):
                continue
            shown = [labels[p] for p in ps]
            assert not shown[0].startswith(CONTINUES) and all(s.startswith(CONTINUES) for s in shown[1:])
            joined = b"".join(_unescape(s) for s in shown).decode("utf-8", errors="replace")
            if "[UNK]" in shown or "<unk>" in shown:
                continue  # an unknown piece stands for nothing it could show
            assert joined == words[w].text, (kind, enc.tokens, shown)
        for p, ws in enumerate(al.piece_words):
            if not ws and special[p]:
                assert labels[p] == enc.tokens[p]  # a special token as it is
        assert not any(m in s for s in labels for m in ("Ġ", "▁", "##", "</w>")), labels


def test_byte_level_pieces_are_decoded_and_others_never_garbled():
    assert piece_label("ĠcafÃ©", "café") == "café"
    assert piece_label("Ġna", "naïve") == "na" and piece_label("Ã¯ve", "naïve", continues=True) == "·ïve"
    assert [
        piece_label(p, "Łódź", continues=k > 0) for k, p in enumerate(["ĠÅ", "ģ", "Ã³", "d", "Å", "º"])
    ] == ["\\xc5", "·\\x81", "·ó", "·d", "·\\xc5", "·\\xba"]
    assert piece_label("łodz", "Łódź") == "łodz"  # WordPiece's text, in byte stand-in letters, is not bytes
    assert piece_label("##ing", "banking", continues=True) == "·ing"
    assert [piece_label(p) for p in ("[CLS]", "<s>", "<|endoftext|>", "Ġ", "ĊĊ", "▁", "ĉ")] == [
        "[CLS]",
        "<s>",
        "<|endoftext|>",
        "␣",
        "↵↵",
        "␣",
        "⇥",
    ]


def test_every_view_of_pieces_shows_the_labels():
    """The head and model views' pieces and word tooltips, the neuron and mask views' tokens and
    the input view's pieces: labels, with each piece's own spelling and id kept for tooltips."""
    text = "the riverbank café"
    words = tokenize(text)
    pieces = [["Ġthe"], ["Ġriver", "bank"], ["ĠcafÃ©"]]
    ids = [[10], [11, 12], [13]]
    rng = np.random.default_rng(0)
    att = rng.dirichlet(np.ones(3), size=(1, 1, 3)).astype(np.float32)
    enc = Encoding(
        text,
        words,
        rng.normal(size=(2, 3, 4)),
        att,
        meta={"pieces": pieces, "piece_ids": ids, "model": "fake"},
        source="fake", pieces=WordPieces(tuple(map(tuple, pieces)), tuple(map(tuple, ids))),
    )
    tokens = ("<s>", "Ġthe", "Ġriver", "bank", "ĠcafÃ©")
    w = rng.dirichlet(np.ones(5), size=(1, 5))
    parts = AttentionParts(
        text,
        tokens,
        ((), (0,), (1,), (1,), (2,)),
        ("the", "riverbank", "café"),
        1,
        "layer 1",
        rng.normal(size=(1, 5, 2)),
        rng.normal(size=(1, 5, 2)),
        2**-0.5,
        np.ones((5, 5), bool),
        w,
        token_ids=(0, 10, 11, 12, 13),
    )
    want = ["<s>", "the", "river", "·bank", "café"]
    head = views.head_view(enc, [parts]).data["attention"]
    assert head["pieces"]["tokens"] == want and head["pieces"]["titles"][3] == "·bank (id 12: bank)"
    assert head["words"]["titles"][1] == "riverbank: river (id 11: Ġriver) ·bank (id 12: bank)"
    for view in (views.neuron_view(parts), views.mask_view(parts)):
        assert view.data["tokens"] == want and view.data["titles"][1] == "the (id 10: Ġthe)"
    got = views.input_view([enc]).data["sentences"][0]
    assert (
        got["pieces"]
        == word_piece_labels(pieces, ["the", "riverbank", "café"])
        == [["the"], ["river", "·bank"], ["café"]]
    )
    assert got["raw_pieces"] == pieces
