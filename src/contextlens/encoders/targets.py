"""What ``encode(texts, targets=...)`` is given: the texts, checked once (:func:`check_texts`), and
which words of each it keeps, resolved once (:func:`select_targets`), with a whole-sentence Encoding
cut down to them (:func:`keep_targets`)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import EmptyInputError, InputError, numbered
from ..text import Word, locate, tokenize

if TYPE_CHECKING:
    from .base import Encoding

__all__ = ["Targets", "check_texts", "select_targets", "keep_targets"]

#: What ``encode(..., targets=)`` accepts: None (every word), a word or a set/list of words
#: (those words in every text, case-insensitive), or one entry per text: None or a list of
#: word indices (into ``tokenize(text)``), ``(start, end)`` char spans and word strings.
Targets = Any


def select_targets(targets: Targets, texts: Sequence[str],
                   all_words: Sequence[Sequence[Word]]) -> list[list[int] | None]:
    """Per text, the sorted indices (into ``tokenize(text)``) of the words ``targets`` asks
    for; None means every word.

    ``targets`` is None (every word), a string or a set/list of strings (those words in
    every text, case-insensitive), or one entry per text: None (every word), or a list of
    word indices, ``(start, end)`` char spans and strings.

    >>> texts = ["The bank, the Bank.", "A river bank"]
    >>> words = [tokenize(t) for t in texts]
    >>> select_targets({"bank"}, texts, words)
    [[1, 4], [2]]
    >>> select_targets([[0, (4, 8)], None], texts, words)
    [[0, 1], None]
    """
    if targets is None:
        return [None] * len(texts)
    if isinstance(targets, str):
        targets = [targets]
    if isinstance(targets, set | frozenset) or (
        isinstance(targets, list | tuple) and targets and all(isinstance(s, str) for s in targets)
    ):
        wanted = {str(s).lower() for s in targets}
        return [[i for i, w in enumerate(ws) if w.text.lower() in wanted] for ws in all_words]
    if not isinstance(targets, list | tuple) or len(targets) != len(texts):
        raise InputError(
            "targets must be None, a set of word strings, or one entry per text (None or a list of "
            f"word indices, (start, end) spans or strings); got {type(targets).__name__} "
            f"for {len(texts)} text(s)"
        )
    chosen: list[list[int] | None] = []
    for ws, items in zip(all_words, targets):
        if items is None:
            chosen.append(None)
            continue
        if isinstance(items, str) or not isinstance(items, Sequence | set | frozenset):
            items = [items]
        picked = set()
        for item in items:
            if isinstance(item, numbers.Integral) and not isinstance(item, bool):
                if not 0 <= item < len(ws):
                    raise InputError(f"word index {item} is out of range 0..{len(ws) - 1}")
                picked.add(int(item))
            elif isinstance(item, tuple) and len(item) == 2:
                picked.add(locate(list(ws), span=(int(item[0]), int(item[1]))))
            elif isinstance(item, str):
                picked.update(i for i, w in enumerate(ws) if w.text.lower() == item.lower())
            else:
                raise InputError("a target must be a word index, a (start, end) span or a string, got "
                                 f"{item!r}")
        chosen.append(sorted(picked))
    return chosen


def keep_targets(enc: Encoding, text: str, keep: list[int] | None) -> Encoding:
    """``enc`` (a whole sentence) restricted to the words of ``tokenize(text)`` at ``keep``
    (None: unchanged); words the encoder skipped are not there to keep."""
    if keep is None:
        return enc
    wanted = set(keep)
    spans = {(w.start, w.end) for i, w in enumerate(tokenize(text)) if i in wanted}
    picked = [j for j, w in enumerate(enc.words) if (w.start, w.end) in spans]
    return enc.select(picked, "not computed: only some words were kept (targets=)")


def check_texts(texts) -> list[str]:
    """``texts`` as a list of non-empty strings; a single string is an error (it would be
    read character by character), as is anything that is not a list of strings.

    >>> check_texts(("a bank", "the river"))
    ['a bank', 'the river']
    >>> check_texts("a bank")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: give a list of sentences, not one string: ['a bank']
    """
    if isinstance(texts, str):
        raise InputError(f"give a list of sentences, not one string: [{texts!r}]")
    if not isinstance(texts, Sequence):
        raise InputError(f"give a list of sentences, got {type(texts).__name__}")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise InputError(f"{numbered('sentence', i)} is a {type(text).__name__}, not a string")
        if not text.strip():
            raise EmptyInputError(f"{numbered('sentence', i)} is empty; give some words to encode")
    return out
