"""Whole words from a language model's pieces: which pieces end a word, and a word's probability.

A *word* is a word of :func:`contextlens.text.tokenize` (the words of every other command),
never a tokenizer piece. The rules, stated once:

- **next word** (causal LM):
  ``P(w) = P(p1 | c) · P(p2 | c, p1) ··· P(pn | c, p1..pn-1) · P(end | c, p1..pn)``,
  the product along the pieces of ``w``'s own (canonical) tokenization, times the
  probability that the next piece ends the word (it starts with white space, is a
  special token, or is a symbol that cannot continue the word; a piece holding only part
  of a UTF-8 character is not counted, as what it becomes depends on the bytes after it).
  Without that last factor " Par" would always outrank " Paris" (Pimentel & Meister, *How to Compute the
  Probability of a Word*, EMNLP 2024).
- **fill-mask** (masked LM): one mask is one piece, so a word's probability is its *first*
  piece's probability; pieces that continue a word (WordPiece ``##ing``) are not words,
  and pieces that give the same word are summed.

The next-word search is best-first over piece paths; every word it returns is scored
exactly by the rule above, and ``exact`` says whether no unexplored path could beat the
k-th word (a path's probability bounds every word through it).

>>> piece_classes(["", " Paris", "is", "'s", ".", "\\n", "\ufffd"]).tolist()
[0, 0, 1, 2, 2, 0, 2]
>>> next_word("is", " Par"), next_word("is", " Paris,"), next_word("is", "land")
(('open', 'Par'), ('complete', 'Paris'), ('glued', None))
"""

from __future__ import annotations

import functools
import heapq
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from ..text import tokenize

__all__ = ["END", "CONTINUE", "CHECK", "WordProbability", "NextWords", "piece_classes", "next_word",
           "ends_word", "first_piece_words", "next_words", "local_tail", "PieceWords"]

log = logging.getLogger(__name__)
END, CONTINUE, CHECK = 0, 1, 2  # a piece ends the word before it / continues it / depends on the word
_JOINERS = frozenset("'’-‐.,:/")  # can glue onto a word in tokenize(): don't, well-known, 1,200
_LAST_SPACE = re.compile(r"\s\S*\Z")


@dataclass(frozen=True)
class WordProbability:
    """One predicted word: its text, probability, and the pieces it was scored on."""

    word: str
    probability: float
    pieces: tuple[str, ...]

    def as_dict(self) -> dict:
        return {"word": self.word, "probability": self.probability, "pieces": list(self.pieces)}


@dataclass(frozen=True)
class NextWords:
    """The best next words, best first; ``exact``: no unexplored path could outrank the last."""

    words: list[WordProbability]
    exact: bool
    expansions: int


def piece_classes(texts: Sequence[str]) -> np.ndarray:
    """``(vocab,)`` int8: per piece (the text it adds), ``END`` if appending it always ends an
    open word (empty = a special token, leading white space, a symbol that never joins),
    ``CONTINUE`` if it always continues one (word characters only), else ``CHECK``."""
    out = np.full(len(texts), CHECK, dtype=np.int8)
    for i, t in enumerate(texts):
        if "\ufffd" in t:  # part of a UTF-8 character: what it becomes depends on the bytes after it
            continue
        if not t or t[0].isspace():
            out[i] = END
        elif all(c.isalnum() or c == "_" for c in t):
            out[i] = CONTINUE
        elif not (t[0].isalnum() or t[0] == "_" or t[0] in _JOINERS):
            out[i] = END
    return out


def local_tail(tail: str) -> str:
    """The end of ``tail`` that text appended to it can still change: from its last white
    space on. No word of :func:`~contextlens.text.tokenize` spans white space and the
    tokenizer never looks back, so :func:`next_word` and :func:`ends_word` give the same
    answers after it as after the whole tail, at a cost that does not grow with the text.

    >>> local_tail("We sat on the bank"), local_tail("pay 1,2,3,"), local_tail("end. "), local_tail("one")
    (' bank', ' 1,2,3,', ' ', 'one')
    >>> next_word("We sat on the bank", "'s") == next_word(local_tail("We sat on the bank"), "'s")
    True
    """
    m = _LAST_SPACE.search(tail)
    return tail if m is None else tail[m.start():]


def next_word(tail: str, added: str) -> tuple[str, str | None]:
    """The state of the word that follows ``tail`` once ``added`` is appended:
    ``("none", None)`` (only white space so far), ``("open", w)`` (``w`` may still grow),
    ``("complete", w)`` (something after ``w`` ends it) or ``("glued", None)`` (``added``
    changed the last word of ``tail``: it is not a next word).

    >>> next_word("river", "'s"), next_word("river", " "), next_word("a", " well-"), next_word("a",
    ...                                                                               " well-known ")
    (('glued', None), ('none', None), ('open', 'well'), ('complete', 'well-known'))
    """
    before = tokenize(tail)
    text = tail + added
    after = tokenize(text)
    n = len(before)
    if n and (len(after) < n or (after[n - 1].start, after[n - 1].end) != (before[-1].start, before[-1].end)):
        return "glued", None
    rest = after[n:]
    if not rest:
        return "none", None
    word, after_word = rest[0], text[rest[0].end:]
    if not after_word or after_word[-1] == "\ufffd":  # (a piece may hold part of a UTF-8 character)
        return "open", word.text
    if len(after_word) == 1 and _may_join(word.text, after_word):
        return "open", word.text  # "well-" may still become "well-known"
    return "complete", word.text


def _may_join(word: str, char: str) -> bool:
    """Whether ``char`` right after ``word`` can still become part of it in tokenize()
    (``well-`` → ``well-known``; ``1,`` → ``1,200``).

    >>> _may_join("well", "-"), _may_join("Paris", ","), _may_join("1", ",")
    (True, False, True)
    """
    if char in "'’-‐":
        return word[-1:].isalnum() or word[-1:] == "_"
    return char in ".,:/" and word[-1:].isdigit()


def ends_word(tail: str, added: str, texts: Sequence[str], classes: np.ndarray) -> np.ndarray:
    """``(vocab,)`` bool: the pieces that, appended after ``tail + added`` (an open word),
    leave that word exactly as it is (they end it)."""
    word = next_word(tail, added)[1] or ""
    out = classes == END
    if not (word[-1:].isalnum() or word[-1:] == "_"):  # after a symbol, a letter starts a new word
        out |= classes == CONTINUE
    for i in np.flatnonzero(classes == CHECK):
        state, w = next_word(tail, added + texts[i])
        out[i] = state == "complete" and w == word
    return out


def first_piece_words(probs: np.ndarray, words: Sequence[str | None], pieces: Sequence[str],
                      k: int) -> list[WordProbability]:
    """The fill-mask rule: ``probs`` ``(vocab,)`` over pieces; ``words[i]`` the word piece
    ``i`` starts (None: it continues a word or is special); pieces giving one word are summed.
    Words of equal probability keep the order of their best pieces (most probable, then
    first); a word's pieces are listed most probable first. Vectorised: a few numpy passes
    over the vocabulary, whatever ``k``.

    >>> first_piece_words(np.array([0.5, 0.3, 0.2]), ["bank", None, "bank"], ["bank", "##s", "Bank"], 2)
    [WordProbability(word='bank', probability=0.7, pieces=('bank', 'Bank'))]
    """
    probs = np.asarray(probs, dtype=np.float64)
    index: dict[str, int] = {}
    wid = np.fromiter((-1 if w is None else index.setdefault(w, len(index)) for w in words), dtype=np.int64,
                      count=len(words))  # (vocab,) the word of each piece, -1 for none
    if not index:
        return []
    order = np.argsort(-probs, kind="stable")  # pieces, most probable first
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    kept = np.flatnonzero(wid >= 0)
    total = np.bincount(wid[kept], weights=probs[kept], minlength=len(index))  # (words,)
    first = np.full(len(index), len(order), dtype=np.int64)
    np.minimum.at(first, wid[kept], rank[kept])  # each word's best piece
    best = np.lexsort((first, -total))[:k]  # (k,) by probability, then by best piece
    chosen = kept[np.isin(wid[kept], best)]
    chosen = chosen[np.argsort(rank[chosen])]  # their pieces, most probable first
    used: dict[int, list[str]] = {int(w): [] for w in best}
    for i in chosen:
        used[int(wid[i])].append(pieces[i])
    names = list(index)
    return [WordProbability(names[w], float(total[w]), tuple(used[int(w)])) for w in best]


def next_words(step: Callable[[list[tuple[int, ...]]], np.ndarray], texts: Sequence[str],
               canonical: Callable[[str], tuple[int, ...]], tail: str, *, k: int = 10,
               width: int = 32, batch: int = 8, max_expansions: int = 64) -> NextWords:
    """The ``k`` most probable next words after a context whose text ends in ``tail``.

    ``step(paths)`` gives ``(len(paths), vocab)`` next-piece probabilities after the
    context followed by each path of piece ids; ``texts[i]`` is the text piece ``i`` adds
    (``""`` for special tokens); ``canonical(added)`` the piece ids the tokenizer gives
    the added text (a word's probability is scored along those pieces only). Each expanded
    path tries its ``width`` most probable pieces; ``batch`` paths go through ``step``
    together; at most ``max_expansions`` paths are expanded.
    """
    classes = piece_classes(texts)
    done: dict[str, WordProbability] = {}
    heap = [(-1.0, (), "")]  # (-probability, path, added text)
    bound, expansions = 0.0, 0  # bound: the best probability left unexplored outside the heap

    def kth() -> float:
        return sorted((w.probability for w in done.values()), reverse=True)[k - 1] if len(done) >= k else 0.0

    while heap and expansions < max_expansions:
        if -heap[0][0] <= kth():
            break
        popped = [heapq.heappop(heap) for _ in range(min(batch, len(heap)))]
        expansions += len(popped)
        dists = step([path for _, path, _ in popped])  # (paths, vocab)
        for (neg, path, added), dist in zip(popped, dists):
            prob = -neg
            state, word = next_word(tail, added)
            if state == "open" and word not in done and path == canonical(added):
                end = float(dist[ends_word(tail, added, texts, classes)].sum())
                done[word] = WordProbability(word, prob * end, tuple(texts[i] for i in path))
            top = np.argpartition(-dist, min(width, len(dist) - 1))[:width]
            for i in top:
                p = prob * float(dist[i])
                if p <= 0.0:
                    continue
                s, _ = next_word(tail, added + texts[i])
                if s in ("none", "open"):
                    heapq.heappush(heap, (-p, path + (int(i),), added + texts[i]))
            rest = np.ones(len(dist), dtype=bool)
            rest[top] = False
            if state == "open":
                rest &= classes != END  # those end the word: counted above, they start no new one
            if rest.any():
                bound = max(bound, prob * float(dist[rest].max()))
    best = sorted(done.values(), key=lambda w: -w.probability)[:k]
    floor = best[-1].probability if len(best) == k else 0.0
    exact = len(best) == k and floor >= bound and (not heap or -heap[0][0] <= floor)
    if not best:
        raise InputError("the model gave no whole next word within the search budget; "
                         "raise max_expansions or give a longer context")
    log.debug("next words after %r: %d expansions, exact=%s", tail, expansions, exact)
    return NextWords(best, exact, expansions)


class PieceWords:
    """A tokenizer's pieces read as text: what each piece adds to a text (:attr:`texts`), the
    one word it holds (:attr:`words`), and the word it starts after a given text
    (:meth:`starting_words`); each computed once over the vocabulary."""

    def __init__(self, tokenizer):
        self._tok = tokenizer

    @functools.cached_property
    def texts(self) -> list[str]:
        """The text each piece adds to a text (``""`` for special tokens); WordPiece
        continuation pieces (``##s``) add their text without a space, others a space first."""
        tok = self._tok
        size = len(tok)
        special = set(tok.all_special_ids)
        prefix = getattr(tok.backend_tokenizer.model, "continuing_subword_prefix", None)
        if prefix:  # WordPiece: spaces are not pieces
            tokens = tok.convert_ids_to_tokens(list(range(size)))
            texts = [t[len(prefix):] if t.startswith(prefix) else " " + t for t in tokens]
        else:  # BPE / Unigram: decode each piece after an anchor piece, keep what it adds
            anchor = tok("a", add_special_tokens=False)["input_ids"][:1]
            base = tok.decode(anchor, clean_up_tokenization_spaces=False)
            pairs = tok.batch_decode([anchor + [i] for i in range(size)], clean_up_tokenization_spaces=False)
            texts = [p[len(base):] if p.startswith(base) else p for p in pairs]
        return ["" if i in special else t for i, t in enumerate(texts)]

    @functools.cached_property
    def words(self) -> list[str | None]:
        """The one word each piece's text holds (None: a continuation, white space, special, or several
        words)."""
        prefix = getattr(self._tok.backend_tokenizer.model, "continuing_subword_prefix", None)
        tokens = self._tok.convert_ids_to_tokens(list(range(len(self.texts))))
        out: list[str | None] = []
        for t, token in zip(self.texts, tokens):
            words = tokenize(t)
            whole = len(words) == 1 and not (prefix and token.startswith(prefix))
            out.append(words[0].text if whole else None)
        return out

    def starting_words(self, tail: str) -> list[str | None]:
        """Per piece, the word it starts right after ``tail`` (None if it glues onto tail's last word)."""
        words = list(self.words)
        if not tail.strip():
            return words
        texts = self.texts
        classes = piece_classes(texts)
        tail = local_tail(tail)  # (the same answers from the few characters a piece can reach)
        last = tail[-1]
        for i in np.flatnonzero(classes != 0):
            if words[i] is None:
                continue
            if classes[i] == CONTINUE and (last.isalnum() or last == "_"):
                words[i] = None
            elif classes[i] == CHECK and len(tokenize(tail + texts[i])) != len(tokenize(tail)) + 1:
                words[i] = None
        return words
