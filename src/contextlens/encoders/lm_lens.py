"""The logit lens of :class:`~contextlens.encoders.lm.LanguageModel` (causal LMs): each layer's
hidden state at a position, put through the model's final norm and unembedding (nostalgebraist
2020; a tuned lens's translators when given, Belrose et al. 2023), read as a next-piece
distribution, and tracked words' probabilities layer by layer by the rules of
:mod:`contextlens.encoders.wordprob`.

:class:`LensReadings` holds these methods; :class:`~contextlens.encoders.lm.LanguageModel` runs the
model (its context, cache, norm and head) and inherits them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .. import bounds
from ..errors import InputError, check_int, check_size
from ..text import tokenize
from .lm_results import (
    LENS_RULE,
    LensLayer,
    LensResult,
    TrackedWord,
    not_causal,
)
from .wordprob import (
    ends_word,
    first_piece_words,
    local_tail,
    piece_classes,
)

if TYPE_CHECKING:
    from .lm import _Context

__all__ = ["LensReadings"]


class LensReadings:
    """The logit lens's methods of :class:`~contextlens.encoders.lm.LanguageModel` (which gives
    ``_torch``, ``_run_context``, ``_continue``, ``_unembed``, ``_onnx``, ``n_layers``...)."""

    def _require_causal(self) -> None:
        if self.kind != "causal":
            raise not_causal(self.name, self.hf_model.config.model_type)

    def _context(self, text: str, position: int | None) -> tuple[str, int, str]:
        words = tokenize(text)
        if not words:
            raise InputError(f"{text!r} has no words; give a text to read the lens after")
        if position is None:
            position = len(words) - 1
        position = check_int("position", position, low=-len(words), high=len(words) - 1,
                             hint=f"the text has {len(words)} words (0..{len(words) - 1}; -1 = the last)")
        position %= len(words)
        return text[: words[position].end], position, words[position].text

    def lens_probabilities(self, text: str, position: int | None = None) -> np.ndarray:
        """``(layers + 1, vocab)``: the next-piece distribution read from each layer (0 =
        embedding output) after word ``position`` of ``text`` (default: the last word)."""
        self._require_causal()
        context, _, _ = self._context(text, position)
        ids = self._check_pieces(self._ids(context))
        if self._on_onnx(len(ids)):
            return self._onnx.lens([ids], [[len(ids) - 1]], self._pad_id(), len(self.piece_texts))[0][:, 0]
        return self._lens_here(self._run_context(ids, hidden=True))

    def _lens_here(self, ctx: _Context, translate=None) -> np.ndarray:
        """``(layers + 1, vocab)`` float64 probabilities through the lens at the context's last
        piece; checks that the last layer gives the model's own distribution there.
        ``translate(k, h)``: each layer's states changed first (a tuned lens)."""
        torch = self._torch
        tr = translate or (lambda k, h: h)
        # the final norm over the whole context, then the head on the last position: what the
        # model itself computes for its last logits, so the last layer gives exactly its numbers
        rows = torch.cat([self._unembed(tr(k, ctx.states[k]), last=True)[0]
                          for k in range(self.n_layers + 1)])
        if not torch.allclose(rows[-1], ctx.logits, atol=1e-4, rtol=1e-4):
            raise InputError(f"{type(self.hf_model).__name__}'s head does more than final norm + "
                             "unembedding (e.g. logit scaling); the logit lens does not support it")
        return torch.softmax(rows.double(), -1).cpu().numpy()[:, : len(self.piece_texts)]

    def lens(self, text: str, position: int | None = None, *, k: int = 5, track: Sequence[str] = (),
             tuned=None) -> LensResult:
        """The logit lens after word ``position`` of ``text`` (default: the last word; the
        words after it are not read: the model is causal). Per layer: the ``k`` best next
        words and, for each word of ``track``, its probability and the rank of its first piece.
        ``tuned``: a :class:`~contextlens.encoders.tuned_lens.TunedLens` of this model, read
        through instead (each layer translated first).

        Work and memory: one pass over the context, then the tracked words' pieces from its
        cache, in chunks (:mod:`contextlens.bounds`); each layer's distribution at the context
        is sorted once, and a tracked word's rank is read from it."""
        self._require_causal()
        k = check_int("k", k, low=1, high=bounds.MAX_PREDICTIONS)
        check_size("the lens's tracked list", len(track), bounds.MAX_TRACKED, "words",
                   why="each costs a pass over the vocabulary per layer and piece",
                   todo="track fewer words, or run the lens again for the others")
        context, position, word = self._context(text, position)
        ids = self._check_pieces(self._ids(context))
        tracked = [self._tracked_pieces(context, w) for w in track]
        texts, classes = self.piece_texts, piece_classes(self.piece_texts)
        translate = None if tuned is None else tuned.translate
        rows = (len(tracked) + 1) * (len(ids) + max((len(p) for _, p in tracked), default=0))
        if translate is None and self._on_onnx(rows):
            here, along, end = self._onnx.follow(ids, tracked, local_tail(context), texts, classes,
                                                 self._pad_id())
        else:  # the torch engine (a tuned lens translates torch states)
            ctx = self._run_context(ids, hidden=True)
            here = self._lens_here(ctx, translate)  # (layers + 1, vocab)
            along, end = self._follow(ctx, tracked, local_tail(context), texts, classes, translate)
        order = np.sort(here, axis=1)  # (layers + 1, vocab): each row sorted once for every rank
        words = self._starting_words(context)
        tokens = self._tok.convert_ids_to_tokens(list(range(len(texts))))
        layers = []
        for layer in range(self.n_layers + 1):
            top = first_piece_words(here[layer], words, tokens, k)
            rows = []
            for t, (added, pieces) in enumerate(tracked):
                p0 = here[layer, pieces[0]]
                rank = 1 + len(texts) - int(np.searchsorted(order[layer], p0, side="right"))  # 1 + #{> p0}
                rows.append(TrackedWord(added.strip(), tuple(texts[i] for i in pieces),
                                        float(p0 * along[t, layer] * end[t, layer]), rank))
            layers.append(LensLayer(layer, "embedding output" if layer == 0 else f"layer {layer}", top, rows))
        kind = "logit" if tuned is None else "tuned"
        return LensResult(self.name, text, position, word, LENS_RULE, layers, kind)

    def _follow(self, ctx: _Context, tracked: list[tuple[str, list[int]]], tail: str, texts, classes,
                translate=None):
        """Per tracked word and layer, through the lens (``translate``: as in :meth:`_lens_here`):
        the product of its pieces' probabilities after the first, and the probability that the
        word ends after its last piece; both ``(tracked, layers + 1)``. Each word's pieces run after
        the context's cache; only their own rows go through the unembedding,
        :data:`~contextlens.bounds.LM_LENS_ROWS` at a time."""
        torch = self._torch
        along = np.ones((len(tracked), self.n_layers + 1))
        end = np.zeros((len(tracked), self.n_layers + 1))
        size = len(texts)
        for start, _, states in self._continue(ctx, [p for _, p in tracked], hidden=True):
            chunk = tracked[start : start + len(states[0])]
            m = [len(p) for _, p in chunk]
            word = torch.tensor([j for j, n in enumerate(m) for _ in range(n)])  # (rows,) row -> word
            place = torch.tensor([i for n in m for i in range(n)])  # row -> its piece's position
            last = torch.tensor(np.cumsum(m) - 1)  # (chunk,) each word's last row: is the word over?
            inner = torch.tensor([r for r in range(len(word)) if r not in set(last.tolist())],
                                 dtype=torch.long)
            following = torch.tensor([p[i + 1] for _, p in chunk for i in range(len(p) - 1)],
                                     dtype=torch.long)
            ends = torch.from_numpy(np.stack([ends_word(tail, added, texts, classes) for added, _ in chunk]))
            for layer in range(self.n_layers + 1):
                rows = states[layer][word, place][None]  # (1, rows, dim): only the words' own pieces
                rows = rows if translate is None else translate(layer, rows)
                logp = torch.log_softmax(self._unembed(rows)[0].double(), -1)[:, :size]  # (rows, vocab)
                inside = torch.zeros(len(chunk), dtype=torch.float64).index_add_(
                    0, word[inner], logp[inner, following])  # log Π P(piece i + 1 | pieces ..i)
                along[start : start + len(chunk), layer] = torch.exp(inside).numpy()
                end[start : start + len(chunk), layer] = (torch.exp(logp[last]) * ends).sum(-1).numpy()
        return along, end

    def _tracked_pieces(self, context: str, word: str) -> tuple[str, list[int]]:
        """``(added text, piece ids)`` of ``word`` written after ``context`` (a space first
        unless it starts with a symbol)."""
        found = tokenize(word) if isinstance(word, str) else []
        if len(found) != 1 or found[0].text != word.strip():
            raise InputError(f"track one word at a time (a word of contextlens' tokenizer), got {word!r}")
        added = (" " if word.strip()[0].isalnum() else "") + word.strip()
        pieces = list(self._tok(added, add_special_tokens=False)["input_ids"])
        if self._ids(context + added)[: len(self._ids(context))] != self._ids(context):
            raise InputError(f"{word!r} changes how the text before it is cut into pieces; "
                             "track another word")
        return added, pieces
