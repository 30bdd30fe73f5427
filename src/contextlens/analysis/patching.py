"""Activation patching: put a word's hidden state from one sentence (the donor) into another (the
recipient) at one layer, run the rest of the recipient as usual, and see where its last layer goes.

For each layer ``L``, the recipient's pieces of the word get the donor's states of the same pieces
at the same point of layer ``L``, every other piece and every other layer running unchanged (Vig et
al. 2020 and Meng et al. 2022 patch the same way, on token positions; here on a word's pieces).
The point (``at``):

- ``layer``: the layer's output (the ``ffn`` stage of :mod:`contextlens.encoders.blocks`);
- ``attention``: what the attention block writes before its residual add (its output projection),
  the recipient's own residual stream kept;
- ``ffn``: what the feed-forward block writes before its residual add, likewise.

Replacing the ``attention`` *stage* itself would be the same run as replacing the layer's output
(the feed-forward block reads each piece alone, so it maps the donor's stage to the donor's
output), which is why ``attention`` and ``ffn`` patch what each block writes. Read at the last
layer, the patched word's cosine to the donor's word and to the unpatched recipient's word says
from which layer on the donor's reading of the word survives the recipient's context.

A word must be cut into the same number of pieces in both texts (piece ``i`` replaces piece
``i``); otherwise it is an error naming both splits. For a causal LM the recipient's next-word
predictions after each patched run are reported too (first-piece rule, as the logit lens's best
words), with the donor's own best next words and their probability before, in the donor and
after each patch: how the donor's sense moved the recipient's expectation.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from ..bounds import MAX_PATCH_PREDICTIONS
from ..encoders.base import Encoder
from ..encoders.blocks import PATCH_AT, next_logits
from ..encoders.models import NoLMHeadError
from ..errors import InputError, check_choice, check_int
from ..text import locate
from ..vectors import cosine

__all__ = ["patch", "PATCH_POINTS"]

log = logging.getLogger(__name__)
PATCH_POINTS = PATCH_AT  # the layer's output, or what its attention / feed-forward block writes
MEANING = {"layer": "the layer's output (the ffn stage)",
           "attention": "what the attention block writes before its residual add (its output projection)",
           "ffn": "what the feed-forward block writes before its residual add"}


def _word(model, pieces, word: str, occurrence, which: str) -> tuple[int, tuple[int, ...]]:
    position = locate(list(pieces.words), word, occurrence=occurrence)
    mine = pieces.word_pieces[position]
    if not mine:
        raise InputError(f"{model.name}'s tokenizer gives {word!r} no piece in the {which} "
                         f"({pieces.text!r}); "
                         "choose another word")
    return position, mine


def _split(pieces, mine) -> str:
    return " + ".join(repr(pieces.tokens[p]) for p in mine)


def _starting(model, text: str) -> list[str | None]:
    """Per piece, the word it starts right after ``text`` (None: it continues a word, or is special)."""
    return model.lm._starting_words(text.rstrip())


def _next_words(model, probs: np.ndarray, starting: list[str | None], k: int) -> list[dict[str, Any]]:
    """The ``k`` best next words from next-piece probabilities (first-piece rule)."""
    from ..encoders.wordprob import first_piece_words

    tokens = model.tokenizer.convert_ids_to_tokens(list(range(len(starting))))
    return [w.as_dict() for w in first_piece_words(probs[: len(starting)], starting, tokens, k)]


def _softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, np.float64)
    z = np.exp(z - z.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def patch(encoder: Encoder, recipient: str, donor: str, word: str, *, at: str = "layer",
          occurrences: tuple[int | None, int | None] = (None, None), k: int = 5) -> dict[str, Any]:
    """Patch ``word``'s hidden state from ``donor`` into ``recipient`` at each layer in turn.

    Returns ``{model, word, at, point, recipient, donor, pieces, unpatched, rows, encoder}`` (``point``:
    what ``at`` replaces, in words) and, for a causal LM, ``predictions``: ``rows`` lists per layer
    ``{layer, cosine_to_donor, cosine_to_recipient}`` (the last-layer vector of the patched word against
    the donor's word and the unpatched recipient's word); ``unpatched`` is the cosine of the two words
    unpatched;
    ``predictions`` holds ``recipient`` and ``donor`` (the best ``k`` next words of each text),
    ``donor_words`` (the donor's best next words: probability in the recipient, in the donor and
    after each layer's patch) and, per row, ``next`` (the best ``k`` next words after that patch).
    """
    from ..encoders import blocks

    check_choice("patch point (at)", at, PATCH_POINTS)
    k = check_int("k", k, low=1, high=MAX_PATCH_PREDICTIONS, hint="next words listed per layer")
    model = blocks.internals(encoder)
    causal, no_head = model.causal, None
    if causal:
        try:
            model = blocks.internals(encoder, head=True)
        except NoLMHeadError as e:  # a causal model saved without its head: vectors only
            causal, no_head = False, str(e)
    rec, don = blocks.read_pieces(model, recipient), blocks.read_pieces(model, donor)
    _, r_pieces = _word(model, rec, word, occurrences[0], "recipient")
    _, d_pieces = _word(model, don, word, occurrences[1], "donor")
    if len(r_pieces) != len(d_pieces):
        raise InputError(f"{word!r} is cut into {len(r_pieces)} piece(s) in the recipient "
                         f"({_split(rec, r_pieces)}) and {len(d_pieces)} in the donor "
                         f"({_split(don, d_pieces)}); patching replaces piece by piece: choose texts where "
                         "the word is cut the same way")
    r_cap, d_cap = blocks.capture(model, rec), blocks.capture(model, don)
    source = d_cap.blocks_out() if at == "layer" else d_cap.writes[at]
    last, logits = blocks.patched_runs(model, rec, r_pieces, source[:, list(d_pieces)], at, logits=causal)
    pool = blocks.pool_pieces
    mine_d = pool(d_cap.ffn[-1], d_pieces, model.pooling)
    mine_r = pool(r_cap.ffn[-1], r_pieces, model.pooling)
    rows = []
    for layer in range(1, model.n_layers + 1):
        v = pool(last[layer - 1], r_pieces, model.pooling)
        rows.append({"layer": layer, "layer_name": f"layer {layer}", "cosine_to_donor": cosine(v, mine_d),
                     "cosine_to_recipient": cosine(v, mine_r)})
    out = {"model": model.name, "word": word, "at": at, "point": MEANING[at], "recipient": recipient,
           "donor": donor, "pieces": [rec.tokens[p] for p in r_pieces], "unpatched": cosine(mine_r, mine_d),
           "rows": rows,
           "encoder": encoder.params()}
    if causal:
        out["predictions"] = _predictions(model, rec, don, logits, rows, k)
    elif no_head:
        out["predictions"], out["unavailable"] = None, {"predictions": no_head}
    log.info("patched %r from %r into %r at %s", word, donor, recipient, at)
    return out


def _predictions(model, rec, don, logits: np.ndarray, rows: list[dict], k: int) -> dict[str, Any]:
    """The causal LM's next words: each text's own, and the donor's best words before and after each patch."""
    probs_r, probs_d = (_softmax(next_logits(model, p.ids)) for p in (rec, don))
    patched = _softmax(logits)  # (layers, vocab)
    after_r, after_d = _starting(model, rec.text), _starting(model, don.text)
    best_d = _next_words(model, probs_d, after_d, k)
    for row, p in zip(rows, patched):
        row["next"] = _next_words(model, p, after_r, k)
    size = len(after_r)
    donor_words = []
    for w in best_d:
        in_r = np.array([x == w["word"] for x in after_r])  # pieces starting this word after the recipient
        in_d = np.array([x == w["word"] for x in after_d])
        donor_words.append({"word": w["word"], "in_recipient": float(probs_r[:size][in_r].sum()),
                            "in_donor": float(probs_d[: len(after_d)][in_d].sum()),
                            "patched": [float(p[:size][in_r].sum()) for p in patched]})
    return {"rule": "first piece of each next word (pieces giving one word summed)",
            "recipient": _next_words(model, probs_r, after_r, k), "donor": best_d, "donor_words": donor_words}
