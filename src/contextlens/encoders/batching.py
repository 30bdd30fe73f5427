"""How a :class:`~contextlens.encoders.transformer.TransformerEncoder` cuts its texts into
sequences and batches: each text's :class:`Plan` (its alignment, windows and the words each
window yields, as :class:`Segment` objects), the :class:`Pooled` arrays its run fills, and
:func:`batches`, length-sorted batches within the engine's memory budgets.

>>> seg = Segment(text=0, window=0, ids=(101, 7, 102), alignment=None, take=(0,))
>>> [[s.ids for s in b] for b in batches([seg, seg._replace(ids=(1, 2))], size=1, tokens=64)]
[[(101, 7, 102)], [(1, 2)]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..errors import InputError
from ..text import Word
from .alignment import Alignment, align_pieces, assign_windows, plan_windows

__all__ = ["Segment", "Plan", "Pooled", "plan_text", "batches", "pool_sentences"]


class Segment(NamedTuple):
    """One sequence the model runs: window ``window`` of text ``text`` (its index in the
    call), its piece ``ids`` (special pieces included), the alignment of those pieces to
    the text's words, and the kept words (``take``, word indices) it yields."""

    text: int
    window: int
    ids: tuple[int, ...]
    alignment: Alignment
    take: tuple[int, ...]


@dataclass
class Pooled:
    """What a run writes for one text: ``layers`` ``(layers + 1, kept words, dim)``,
    ``embeddings_output`` ``(kept words, dim)``, per window its word attention
    ``(take, word attention, special share, columns)``, and its sentence vectors
    ``(layers + 1, poolings, dim)`` when the text fits one window."""

    layers: np.ndarray
    embeddings_output: np.ndarray
    attention: dict[int, tuple] = field(default_factory=dict)
    sentence: np.ndarray | None = None


@dataclass(frozen=True)
class Plan:
    """One text, aligned and cut into windows before the model runs.

    ``kept``: the word indices (into ``words``) the Encoding holds; ``index``: word index
    -> row; ``spans``: each window's char span; ``owner``: word -> the window it is read
    from; ``missing``: words that got no piece; ``pieces``: the text's content pieces;
    ``attention``: whether word attention is computed for this text."""

    words: tuple[Word, ...]
    kept: tuple[int, ...]
    windows: tuple[tuple[int, int], ...]
    spans: tuple[tuple[int, int], ...]
    owner: tuple[int, ...]
    missing: tuple[int, ...]
    segments: tuple[Segment, ...]
    pieces: tuple[str, ...]
    alignment: Alignment
    attention: bool

    @property
    def index(self) -> dict[int, int]:
        """Word index -> its row among the kept words."""
        return {w: j for j, w in enumerate(self.kept)}


def plan_text(number: int, text: str, words: Sequence[Word], ids: Sequence[int], offsets, special,
              chosen: Sequence[int] | None, *, tokens, capacity: int, stride: int | None,
              attention: bool, name: str) -> Plan:
    """Align text ``number`` (its pieces ``ids`` with their char ``offsets`` and special
    mask), choose its windows of at most ``capacity`` pieces (special ones included) and the
    words each window yields; ``tokens(ids)`` names pieces; ``chosen``: the words to keep
    (None: every one; then no word at all is an error naming the model ``name``)."""
    n = len(ids)
    before = next((p for p in range(n) if not special[p]), n)
    after = next((n - p for p in range(n, before, -1) if not special[p - 1]), 0)
    content = slice(before, n - after)
    al = align_pieces(text, words, offsets[content], special[content])
    missing = set(al.missing)
    kept = [w for w in (range(len(words)) if chosen is None else chosen) if w not in missing]
    if not kept and chosen is None:
        raise InputError(
            f"no word of {text!r} got a piece from {name}'s tokenizer "
            f"(words: {', '.join(repr(w.text) for w in words)}); give text the model can read"
        )
    windows = plan_windows(al, capacity - before - after, stride) if kept else []
    owner = assign_windows(windows, al)
    takes: dict[int, list[int]] = {}  # window -> the kept words it yields
    for w in kept:
        takes.setdefault(owner[w], []).append(w)
    segments, spans = [], []
    for k, (a, b) in enumerate(windows):
        inside = sorted({w for ws in al.piece_words[a:b] for w in ws})  # whole words only
        spans.append((words[inside[0]].start, words[inside[-1]].end) if inside else (0, 0))
        if k in takes:
            seq = (*ids[:before], *ids[content][a:b], *ids[n - after:])
            segments.append(Segment(number, k, tuple(seq), al.restrict(a, b, before, after), tuple(takes[k])))
    return Plan(tuple(words), tuple(kept), tuple(map(tuple, windows)), tuple(spans), tuple(owner),
                tuple(sorted(missing)), tuple(segments), tuple(tokens(list(ids[content]))), al,
                attention and chosen is None)


def batches(segments: Sequence[Segment], *, size: int, tokens: int,
            attention_bytes=None) -> list[list[Segment]]:
    """Length-sorted batches (longest first: memory trouble shows early) of at most ``size``
    sequences and about ``tokens`` padded pieces; ``attention_bytes(width) -> (bytes per
    sequence, budget)``, when attention is kept, bounds a batch's attention weights too
    (a single sequence over 8 budgets is refused)."""
    order = sorted(segments, key=lambda s: -len(s.ids))
    out, i = [], 0
    while i < len(order):
        width = len(order[i].ids)
        n = max(1, min(size, tokens // width))
        if attention_bytes is not None:
            per_seq, budget = attention_bytes(width)
            if per_seq > 8 * budget:
                problem = (f"the attention weights of a {width}-piece sequence would take "
                           f"{per_seq / 2**30:.1f} GiB")
                raise InputError(f"{problem}; pass max_length= (e.g. 512: longer texts go through windows) "
                                 "or attention=False", cli=f"{problem}; give a shorter text")
            n = max(1, min(n, budget // per_seq))
        out.append(order[i : i + n])
        i += n
    return out


def pool_sentences(states: list, mask: np.ndarray) -> np.ndarray:
    """``(layers, batch, 3, dim)``: each sequence's pieces pooled per layer by
    :data:`~contextlens.encoders.base.SENTENCE_POOLINGS` (mean over the mask, the first
    piece, max over the mask), as sentence-transformers' ``Pooling`` module computes them;
    ``states`` are ``(batch, T, dim)`` float32 arrays, ``mask`` ``(batch, T)``.

    >>> h = np.array([[[1.0, 4.0], [3.0, 0.0], [9.0, 9.0]]], dtype=np.float32)  # the last piece is padding
    >>> pool_sentences([h], np.array([[1, 1, 0]]))[0, 0].tolist()
    [[2.0, 2.0], [1.0, 4.0], [3.0, 4.0]]
    """
    m = np.asarray(mask, dtype=np.float32)[:, :, None]  # (batch, T, 1)
    out = []
    for h in states:
        mean = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        top = np.where(m > 0, h, -np.inf).max(1)
        out.append(np.stack([mean, h[:, 0], top], 1).astype(np.float32))  # (batch, 3, dim)
    return np.stack(out)
