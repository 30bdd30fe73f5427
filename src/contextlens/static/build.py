"""One entry point to build a static table from a corpus by any method.

>>> t = build_table(["deposited money bank", "sat bank river"], "counts", window=3,
...                 min_count=1, vocab_order="alphabetical")
>>> t.keys, t.vector("bank").tolist()
(('bank', 'deposited', 'money', 'river', 'sat'), [0.0, 1.0, 1.0, 1.0, 1.0])
>>> build_table(["a b"], "counts", dim=50)
Traceback (most recent call last):
...
contextlens.errors.InputError: dim does not apply to method 'counts' (only to ppmi-svd, word2vec, fasttext, glove); leave it out
"""  # noqa: E501 (a doctest's expected output, printed whole)

from __future__ import annotations

import logging
import os
from pathlib import Path

from ..corpus.reading import ProgressHook, longest_sentence, resolve_source
from ..errors import InputError, check_choice, check_int
from ..vectors import EmbeddingTable
from .word2vec import MAX_WINDOW

__all__ = ["METHODS", "DEFAULTS", "build_table"]

log = logging.getLogger(__name__)

METHODS = ("counts", "ppmi", "ppmi-svd", "word2vec", "fasttext", "glove")
_COUNTING = ("counts", "ppmi", "ppmi-svd", "glove")
_GENSIM = ("word2vec", "fasttext")

#: Defaults per method of the options that depend on it (None: the option does not apply).
DEFAULTS: dict[str, dict[str, object]] = {
    "counts": {"window": 5, "weighting": "none", "vocab_order": "frequency"},
    "ppmi": {"window": 5, "weighting": "none", "vocab_order": "frequency", "cds": 0.75,
             "shift": 1.0},
    "ppmi-svd": {"window": 5, "weighting": "none", "vocab_order": "frequency", "cds": 0.75,
                 "shift": 1.0, "dim": 300, "p": 0.5},
    "word2vec": {"window": 5, "dim": 100, "epochs": 5, "architecture": "skipgram",
                 "learning_rate": 0.025, "workers": None},
    "fasttext": {"window": 5, "dim": 100, "epochs": 5, "architecture": "skipgram",
                 "learning_rate": 0.025, "workers": None},
    "glove": {"window": 10, "weighting": "harmonic", "vocab_order": "frequency", "dim": 50,
              "epochs": 25, "learning_rate": 0.05},
}
CAP_WINDOW_FROM = 64  # a counting window wider than this is cut to the longest sentence (one more pass)
_OPTIONS = ("window", "weighting", "vocab_order", "cds", "shift", "dim", "p", "epochs",
            "architecture", "learning_rate", "workers")


def _cap_window(corpus, window: int, tokenizer: str, errors: str) -> tuple[object, int]:
    """``(corpus, window)`` with the window cut to the longest sentence minus one: counts
    are the same (pairs never cross a line), and the counting loop runs once per offset.
    A one-shot iterator is read into a list first, so that it can be read twice."""
    src = resolve_source(corpus)
    if src.one_shot:
        corpus = list(src.items)
    longest = longest_sentence(corpus, tokenizer=tokenizer, errors=errors)
    if window < longest:
        return corpus, window
    log.info("window %d is wider than the longest sentence (%d tokens): counting with window %d, "
             "the same counts", window, longest, max(1, longest - 1))
    return corpus, max(1, longest - 1)


def build_table(
    corpus,
    method: str,
    *,
    window: int | None = None,
    dim: int | None = None,
    min_count: int = 5,
    max_vocab: int | None = None,
    epochs: int | None = None,
    seed: int = 0,
    lower: bool = False,
    tokenizer: str = "whitespace",
    errors: str = "strict",
    progress: ProgressHook | None = None,
    weighting: str | None = None,
    vocab_order: str | None = None,
    cds: float | None = None,
    shift: float | None = None,
    p: float | None = None,
    architecture: str | None = None,
    learning_rate: float | None = None,
    workers: int | None = None,
) -> EmbeddingTable:
    """Build an :class:`EmbeddingTable` from ``corpus`` with ``method``.

    Methods: ``counts`` (raw co-occurrence rows), ``ppmi`` (PPMI rows), ``ppmi-svd``
    (truncated SVD of PPMI), ``word2vec``, ``fasttext``, ``glove``. Options left as None take
    the method's default (:data:`DEFAULTS`); an option that does not apply to the method is
    an error rather than silently ignored. ``cds`` is PPMI's context-distribution smoothing
    exponent, ``shift`` its ``k``, ``p`` the SVD's eigenvalue weight.
    """
    check_choice("method", method, METHODS)
    given = {"window": window, "weighting": weighting, "vocab_order": vocab_order, "cds": cds,
             "shift": shift, "dim": dim, "p": p, "epochs": epochs, "architecture": architecture,
             "learning_rate": learning_rate, "workers": workers}
    defaults = DEFAULTS[method]
    for name in _OPTIONS:
        if given[name] is not None and name not in defaults:
            valid = [m for m in METHODS if name in DEFAULTS[m]]
            raise InputError(f"{name} does not apply to method {method!r} (only to "
                             f"{', '.join(valid)}); leave it out")
    opt = {name: given[name] if given[name] is not None else default
           for name, default in defaults.items()}
    read = {"lower": lower, "tokenizer": tokenizer, "errors": errors}
    name = f"{method}:{Path(corpus).name}" if isinstance(corpus, (str, os.PathLike)) else method
    opt["window"] = check_int("window", opt["window"], low=1, high=MAX_WINDOW,
                              hint="words each side; a window wider than the longest sentence adds nothing")
    if method in _COUNTING and opt["window"] > CAP_WINDOW_FROM:
        corpus, opt["window"] = _cap_window(corpus, opt["window"], tokenizer, errors)

    if method in _GENSIM:
        from .word2vec import fasttext_model, word2vec_model

        train = word2vec_model if method == "word2vec" else fasttext_model
        model = train(corpus, dim=opt["dim"], window=opt["window"], min_count=min_count,
                      max_vocab=max_vocab, epochs=opt["epochs"], architecture=opt["architecture"],
                      learning_rate=opt["learning_rate"], seed=seed, workers=opt["workers"],
                      progress=progress, **read)
        return EmbeddingTable.from_gensim(model.wv, name=name)

    from .cooccurrence import cooccurrence_matrix, dense_rows

    co = cooccurrence_matrix(corpus, window=opt["window"], weighting=opt["weighting"],
                             min_count=min_count, max_vocab=max_vocab,
                             vocab_order=opt["vocab_order"], progress=progress, **read)
    if method == "counts":
        return co.to_table(name=name)
    if method == "glove":
        from .glove import GloVe

        model = GloVe(dim=opt["dim"], epochs=opt["epochs"], learning_rate=opt["learning_rate"],
                      seed=seed)
        hook = None if progress is None else (lambda epoch: progress(co.n_sentences * (1 + epoch)))
        return model.fit(co, progress=hook).to_table(name=name)
    from .ppmi import ppmi, svd_embeddings

    weighted = ppmi(co.counts, alpha=opt["cds"], shift=opt["shift"])
    if method == "ppmi":
        return EmbeddingTable(co.vocab, dense_rows(weighted), name=name)
    dim = opt["dim"]
    if given["dim"] is None and dim > len(co.vocab):  # the default is too big for a tiny corpus
        dim = len(co.vocab)
        log.warning("the default dim %d is more than the %d words; using %d", opt["dim"], dim, dim)
    return EmbeddingTable(co.vocab, svd_embeddings(weighted, dim, p=opt["p"], seed=seed), name=name)
