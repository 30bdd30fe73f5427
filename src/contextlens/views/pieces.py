"""How a view shows a tokenizer's pieces: the text each piece stands for, without the
tokenizer's markers.

Tokenizers mark pieces in their own ways: WordPiece (BERT, MiniLM, MPNet) writes a piece
that continues a word as ``##ing``; byte-level BPE (GPT-2, SmolLM2) writes the bytes of
the text through a table of printable stand-ins, ``Ġ`` for the space before a word and
``Ã©`` for the two bytes of ``é``; SentencePiece writes ``▁bank``; older BPE vocabularies
end a word with ``</w>``. Like bertviz, a view shows none of these; unlike it, it also
decodes the byte-level stand-ins (``ĠcafÃ©`` is *café*) and marks a continuation the same
way for every tokenizer, from the alignment of pieces to words rather than from the
tokenizer's spelling:

- a piece is shown as the text it stands for: ``Ġbank``, ``▁bank`` and ``bank`` are *bank*;
- a piece that continues a word (any piece of a word but its first) gets a leading ``·``:
  *river* ``·bank``, whichever tokenizer split *riverbank*;
- bytes of a character split over several pieces (byte-level BPE splits 😀 in two) are
  shown as escapes, ``\\xf0\\x9f\\x98`` then ``·\\x80``;
- a special token (``[CLS]``, ``<s>``, ``<|endoftext|>``, padding) is shown as it is, and a
  piece that is only white space as ``␣`` (a space) or ``↵`` (a line break).

The piece's own spelling and vocabulary id stay in the views' tooltips.

>>> piece_label("Ġbank", "bank"), piece_label("▁bank", "bank"), piece_label("bank</w>", "bank")
('bank', 'bank', 'bank')
>>> piece_label("##bank", "riverbank", continues=True), piece_label("bank", "riverbank", continues=True)
('·bank', '·bank')
>>> piece_label("ĠcafÃ©", "café"), piece_label("ĠðŁĺ", "😀"), piece_label("Ģ", "😀", continues=True)
('café', '\\\\xf0\\\\x9f\\\\x98', '·\\\\x80')
>>> piece_label("[CLS]"), piece_label("Ġ"), piece_label("ĊĊ"), piece_label("łodz", "Łódź")
('[CLS]', '␣', '↵↵', 'łodz')
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["piece_label", "word_piece_labels", "token_labels", "parts_labels", "piece_title", "CONTINUES"]

CONTINUES = "·"  # before a piece that continues a word
_WHITE = {" ": "␣", "\n": "↵", "\r": "↵", "\t": "⇥"}


def _byte_table() -> dict[str, int]:
    """Byte-level BPE's printable stand-in of each byte (GPT-2's ``bytes_to_unicode``), inverted."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    others = [b for b in range(256) if b not in printable]
    table = {chr(b): b for b in printable}
    table.update({chr(256 + n): b for n, b in enumerate(others)})
    return table


_BYTES = _byte_table()


def _as_bytes(piece: str) -> bytes | None:
    """The bytes a byte-level BPE piece stands for (None: it is not written in byte stand-ins)."""
    try:
        return bytes(_BYTES[c] for c in piece)
    except KeyError:
        return None


def _strip_markers(piece: str) -> str:
    """``piece`` without WordPiece's ``##``, SentencePiece's ``▁``, byte-level BPE's ``Ġ``
    and BPE's ``</w>`` (the piece itself if nothing would be left)."""
    text = piece[2:] if piece.startswith("##") else piece
    text = text.lstrip("▁Ġ")
    text = text.removesuffix("</w>")
    return text or piece


def piece_label(piece: str, word: str | None = None, *, continues: bool = False) -> str:
    """What a view shows for ``piece`` (see the module notes): ``word`` is the text of the
    word the piece belongs to (None for a special token, padding or white space) and
    ``continues`` says whether the piece continues that word (it is not its first piece).

    A piece is read as byte-level BPE only when the bytes it stands for occur in its word,
    so a WordPiece or SentencePiece piece that happens to use the same characters
    (``łodz``) is never garbled.
    """
    if word is None:
        raw = _as_bytes(piece)
        spaces = raw.decode("utf-8", errors="replace") if raw is not None else piece.replace("▁", " ")
        if spaces and not spaces.strip():
            return "".join(_WHITE.get(c, "␣") for c in spaces)
        return piece
    raw = _as_bytes(piece)
    core = raw.strip() if raw is not None else b""
    if core and core.lower() in word.encode("utf-8", errors="surrogatepass").lower():
        text = core.decode("utf-8", errors="backslashreplace")
    else:
        text = _strip_markers(piece)
    return CONTINUES + text if continues else text


def word_piece_labels(pieces: Sequence[Sequence[str]], words: Sequence[str]) -> list[list[str]]:
    """Per word, the labels of its pieces (an Encoding's ``pieces.tokens``, one list per
    word of ``words``): every piece after a word's first continues it.

    >>> word_piece_labels([["Ġriver", "bank"], ["Ġof"]], ["riverbank", "of"])
    [['river', '·bank'], ['of']]
    """
    return [
        [piece_label(p, w, continues=k > 0) for k, p in enumerate(ps)]
        for ps, w in zip(pieces, words, strict=True)
    ]


def token_labels(
    tokens: Sequence[str], token_words: Sequence[Sequence[int]], words: Sequence[str]
) -> list[str]:
    """The labels of a sequence of pieces (special tokens included), given the words each
    covers (indices into ``words``, empty for a special token; a merged piece such as
    ``bank,`` covers two): a piece continues a word when the piece before it covers the same
    word.

    >>> token_labels(["<s>", "ĠWe", "Ġriver", "bank", "</s>"], [(), (0,), (1,), (1,), ()],
    ...              ["We", "riverbank"])
    ['<s>', 'We', 'river', '·bank', '</s>']
    """
    out = []
    for t, (token, ws) in enumerate(zip(tokens, token_words, strict=True)):
        if not ws:
            out.append(piece_label(token))
            continue
        continues = t > 0 and ws[0] in token_words[t - 1]
        # a piece over two words (GPT-2's ``?"``) stands for their text together
        out.append(piece_label(token, "".join(words[w] for w in ws), continues=continues))
    return out


def parts_labels(parts) -> tuple[list[str], list[str]]:
    """The labels and tooltips (:func:`piece_title`) of an
    :class:`~contextlens.encoders.qk.AttentionParts`' tokens: its pieces'
    (:func:`token_labels`) for a transformer; where the tokens are the words of a table (no
    vocabulary ids), the words themselves: there is nothing to strip."""
    if parts.token_ids is None:
        return list(parts.tokens), list(parts.tokens)
    labels = token_labels(parts.tokens, parts.token_words, parts.words)
    return labels, [piece_title(lab, t, i) for lab, t, i in zip(labels, parts.tokens, parts.token_ids)]


def piece_title(label: str, piece: str, piece_id: int | None) -> str:
    """A piece's tooltip: its label, vocabulary id and, when it differs, its own spelling.

    >>> piece_title("bank", "Ġbank", 4015), piece_title("[CLS]", "[CLS]", 101)
    ('bank (id 4015: Ġbank)', '[CLS] (id 101)')
    """
    if piece_id is None:
        return label if label == piece else f"{label} ({piece})"
    return f"{label} (id {piece_id})" if label == piece else f"{label} (id {piece_id}: {piece})"
