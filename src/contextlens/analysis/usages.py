"""Usages of a word: encode sentences and pick the target word's vector in each.

Every experiment (explore, senses, geometry...) starts from the same step: a list of
sentences, a target word, and the stack of vectors ``(layers + 1, dim)`` the word gets
in each sentence. :func:`collect_usages` does it once, with clear errors: a sentence
that lacks the word is named (or skipped with ``missing="skip"``).

>>> from contextlens.encoders.static import StaticEncoder
>>> from contextlens.vectors import EmbeddingTable
>>> table = EmbeddingTable(["bank", "river", "money"], [[1, 1], [0, 1], [1, 0]])
>>> u = collect_usages(StaticEncoder(table), ["money bank", "river", "bank river"], "bank",
...                    missing="skip")
>>> u.sentences, u.positions, u.vectors.shape, u.skipped[0]["position"], u.layer_ids
(['money bank', 'bank river'], [0, 2], (2, 1, 2), 1, (0,))
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..bounds import check_encoding
from ..encoders.base import Encoder, Encoding, layer_number, layer_position
from ..encoders.targets import check_texts
from ..errors import (
    AmbiguousTargetError,
    EmptyInputError,
    InputError,
    TargetNotFoundError,
    ask,
    check_choice,
    check_int,
    numbered,
)
from ..files import read_text_file
from ..text import split_lines

__all__ = [
    "Usage", "Usages", "collect_usages", "usages_in", "check_pairs", "read_sentences", "read_lines",
    "numbered_lines", "MISSING_POLICIES", "need_usages", "usage_labels", "every_word",
]

log = logging.getLogger(__name__)
MAX_OCCURRENCE = 1_000_000
MISSING_POLICIES = ("error", "skip")


def usage_labels(positions: Sequence[int], occurrences: Sequence[int] | None = None) -> list[str]:
    """How a figure, a table or a pair's label names each usage: ``S`` and its sentence's index
    (from 0, as the JSON numbers sentences), then ``#`` and its occurrence in that sentence (from
    0, what ``occurrence=`` takes) where that sentence holds more than one of the usages.
    Without ``occurrences``, a sentence's usages are taken as its occurrences in order.

    >>> usage_labels([0, 0, 1, 2], [0, 1, 0, 0])
    ['S0 #0', 'S0 #1', 'S1', 'S2']
    >>> usage_labels([3, 5, 5])
    ['S3', 'S5 #0', 'S5 #1']
    """
    if occurrences is None:
        seen: Counter = Counter()
        occurrences = []
        for p in positions:
            occurrences.append(seen[p])
            seen[p] += 1
    occurrences = list(occurrences)
    if len(occurrences) != len(positions):
        raise InputError(f"{len(occurrences)} occurrences for {len(positions)} usages; give one per usage")
    twice = {p for p, n in Counter(positions).items() if n > 1}
    return [f"S{p} #{o}" if p in twice else f"S{p}" for p, o in zip(positions, occurrences, strict=True)]


@dataclass(frozen=True)
class Usage:
    """One occurrence of the target: the sentence, its input position, the word's index."""

    sentence: str
    position: int  # index of the sentence in the input list
    index: int  # index of the word in the sentence's Encoding
    word: str  # the word as the encoder saw it
    span: tuple[int, int]  # char span in the sentence
    occurrence: int = 0  # which occurrence of the word in the sentence (from 0)

    def as_dict(self) -> dict:
        return {"sentence": self.sentence, "position": self.position, "index": self.index,
                "word": self.word, "span": list(self.span), "occurrence": self.occurrence}


@dataclass
class Usages:
    """The usages of one word and their vectors ``(n_usages, layers + 1, dim)``."""

    word: str
    usages: list[Usage]
    vectors: np.ndarray  # (n_usages, layers + 1, dim)
    layer_names: tuple[str, ...]
    skipped: list[dict] = field(default_factory=list)  # {position, sentence, reason}
    encoder: dict = field(default_factory=dict)  # the first encoding's meta
    layer_ids: tuple[int, ...] = ()  # the layer numbers of the stack (default 0, 1, ...)

    def __post_init__(self) -> None:
        self.layer_ids = tuple(self.layer_ids) or tuple(range(len(self.layer_names)))

    def __len__(self) -> int:
        return len(self.usages)

    @property
    def sentences(self) -> list[str]:
        return [u.sentence for u in self.usages]

    @property
    def positions(self) -> list[int]:
        return [u.position for u in self.usages]

    @property
    def labels(self) -> list[str]:
        """Each usage's label (:func:`usage_labels`): ``S0``, or ``S0 #1`` beside another usage of S0."""
        return usage_labels(self.positions, [u.occurrence for u in self.usages])

    def at(self, layer: int = -1) -> np.ndarray:
        """``(n_usages, dim)``: the vectors at ``layer`` (0 = static, -1 = last)."""
        return self.vectors[:, layer_position(self.layer_ids, layer)]

    def layer_id(self, layer: int) -> int:
        """The layer number ``layer`` stands for (-1 → the number of the last layer)."""
        return layer_number(self.layer_ids, layer)

    def layer_name(self, layer: int) -> str:
        return self.layer_names[layer_position(self.layer_ids, layer)]


def every_word(texts: Sequence[str]) -> list[list[int]]:
    """``targets=`` that keep every word of each text but no attention weights (an encoding
    of chosen words has none): what an analysis that reads vectors only asks for. A
    transformer's word attention over 64 sentences of 200 words is 755 MB, and encoding
    them with it took 2 GB at the peak (482 MB without).

    >>> every_word(["We sat on the bank.", "A river"])
    [[0, 1, 2, 3, 4, 5], [0, 1]]
    """
    from ..text import tokenize

    return [list(range(len(tokenize(t)))) for t in texts]


def usages_in(
    encodings: Sequence[Encoding], word: str, *, occurrence: int | str | None = None,
    missing: str = "error", sentences: Sequence[str] | None = None, start: int = 0, takes_all: bool = False,
) -> Usages:
    """The usages of ``word`` in already encoded sentences (see :func:`collect_usages`);
    ``start``: the position of the first of them in a longer list (encoded in parts);
    ``takes_all``: whether the caller takes ``occurrence="all"`` (only then does the error for a
    sentence holding the word twice offer it)."""
    check_choice("missing-word policy", missing, MISSING_POLICIES)
    if occurrence is not None and occurrence != "all":
        check_int("occurrence", occurrence, low=0, high=MAX_OCCURRENCE, hint="or None, or 'all'")
    if not encodings:
        raise EmptyInputError(f"no sentences to look for {word!r} in; give at least one")
    texts = list(sentences) if sentences is not None else [e.text for e in encodings]
    usages, rows, skipped = [], [], []
    for pos, (enc, text) in enumerate(zip(encodings, texts, strict=True), start):
        try:
            if occurrence == "all":
                hits = [i for i, w in enumerate(enc.words) if w.text.lower() == word.lower()]
                if not hits:
                    enc.find(word)  # raises the detailed not-found message
            else:
                hits = [enc.find(word, occurrence=occurrence)]
        except TargetNotFoundError as err:
            if missing == "skip":
                skipped.append({"position": pos, "sentence": text, "reason": str(err)})
                continue
            raise TargetNotFoundError(
                f"{numbered('sentence', pos, text)} lacks {word!r}: {err}; fix or remove that "
                f"sentence, or skip such sentences: {ask('missing', 'skip')}"
            ) from None
        except AmbiguousTargetError as err:
            every = f"take every occurrence ({ask('occurrence', 'all')}) or " if takes_all else ""
            raise AmbiguousTargetError(
                f"{numbered('sentence', pos, text)}: {err}; or {every}take the first in each sentence "
                f"({ask('occurrence', 0)}), or leave the word once in that sentence"
            ) from None
        first = occurrence if isinstance(occurrence, int) else 0
        for occ, i in enumerate(hits, first):
            w = enc.words[i]
            usages.append(Usage(text, pos, i, w.text, (w.start, w.end), occ))
            rows.append(enc.layers[:, i])  # (layers + 1, dim)
    if not usages:
        raise EmptyInputError(f"no sentence contains {word!r}; give sentences that use it")
    shapes = {r.shape for r in rows}
    if len(shapes) > 1:
        raise InputError(f"the encodings have different layer stacks {sorted(shapes)}; use one encoder")
    if skipped:
        log.info("skipped %d sentence(s) without %r", len(skipped), word)
    vectors = np.stack(rows).astype(np.float64)  # (n_usages, layers + 1, dim)
    first = encodings[usages[0].position - start]
    return Usages(word, usages, vectors, tuple(first.layer_names), skipped, first.describe(), first.layer_ids)


def need_usages(usages: Usages, n: int = 2) -> Usages:
    """``usages`` when it holds at least ``n`` usages, else the error every comparison of a
    word's usages gives (explore's matrix, the lab's pairs of sentences).

    >>> need_usages(Usages("bank", [], np.zeros((0, 1, 2)), ("static",)))
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: 'bank' has 0 usage(s); comparing usages needs at least 2 sentences that \
contain it (add some, or leave the word out)
    """
    if len(usages) < n:
        raise InputError(
            f"{usages.word!r} has {len(usages)} usage(s); comparing usages needs at least {n} "
            "sentences that contain it (add some, or leave the word out)"
        )
    return usages


def collect_usages(
    encoder: Encoder, sentences: Sequence[str], word: str, *, occurrence: int | str | None = None,
    missing: str = "error",
) -> Usages:
    """Encode ``sentences`` and pick ``word``'s vectors in each.

    ``occurrence``: None (the word must occur once per sentence, else an error says which
    to choose), an index (0-based) or ``"all"`` (every occurrence is a usage).
    ``missing``: ``"error"`` (a sentence without the word raises, naming it) or
    ``"skip"`` (such sentences are left out and listed in ``Usages.skipped``).
    """
    check_choice("missing-word policy", missing, MISSING_POLICIES)
    sentences = check_texts(sentences)
    if not sentences:
        raise EmptyInputError(f"no sentences to look for {word!r} in; give at least one")
    check_encoding(encoder, sentences, todo="give fewer or shorter sentences")
    return usages_in(encoder.encode(sentences, targets=every_word(sentences)), word, occurrence=occurrence,
                     missing=missing, sentences=sentences)


def check_pairs(pairs, what: str = "sentences") -> list[tuple]:
    """``pairs`` as a list of tuples; one string, or a pair given as one string, is an error
    (it would be read character by character), as is a bare pair instead of a list of pairs.

    >>> check_pairs([("a bank", "the bank")])
    [('a bank', 'the bank')]
    >>> check_pairs(("a bank", "the bank"))
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: give a list of pairs of sentences, not one pair: [('a bank', 'the bank')]
    """
    if isinstance(pairs, str) or not isinstance(pairs, Sequence):
        raise InputError(f"give a list of pairs of {what}, got {type(pairs).__name__}")
    if pairs and all(isinstance(p, str) for p in pairs):
        raise InputError(f"give a list of pairs of {what}, not one pair: [{tuple(pairs)!r}]")
    for n, p in enumerate(pairs):
        if isinstance(p, str) or not isinstance(p, Sequence):
            raise InputError(f"{numbered('pair', n)} is a {type(p).__name__}; give each pair as a tuple of "
                             f"{what}")
    return [tuple(p) for p in pairs]


def numbered_lines(path: str | os.PathLike, what: str = "lines") -> list[tuple[int, str]]:
    """``(line number, text)`` of the non-blank, non-``#`` lines of a UTF-8 file, stripped;
    lines end at ``\\n``, ``\\r\\n`` or ``\\r`` only (:func:`contextlens.text.split_lines`)."""
    text = read_text_file(path, "file", f"give a text file of {what}, one per line")
    return [(n, s) for n, line in enumerate(split_lines(text), 1)
            if (s := line.strip()) and not s.startswith("#")]


def read_lines(path: str | os.PathLike, what: str = "lines") -> list[str]:
    """The non-blank, non-``#`` lines of a UTF-8 file, stripped.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "s.txt"
    >>> _ = p.write_text("# bank sentences\\nThe bank lends.\\n\\n  A river bank. \\n")
    >>> read_lines(p)
    ['The bank lends.', 'A river bank.']
    """
    return [s for _, s in numbered_lines(path, what)]


def read_sentences(path: str | os.PathLike | None = None, extra: Sequence[str] = ()) -> list[str]:
    """Sentences from a file (one per line; blank lines and ``#`` comments ignored), then
    ``extra`` ones; an error if there are none at all."""
    sentences = read_lines(path, "sentences") if path is not None else []
    sentences += [s.strip() for s in extra if s.strip()]
    if not sentences:
        where = f"{path} holds no sentences" if path is not None else "no sentences given"
        raise EmptyInputError(f"{where}; {ask('sentences')}")
    return sentences
