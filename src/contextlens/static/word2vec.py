"""word2vec (skip-gram or CBOW, negative sampling) and fastText, trained with gensim.

The corpus streams from disk: one plain, uncompressed, valid UTF-8 file read as is
(no lower-casing, white-space tokens) goes to gensim's multi-threaded ``corpus_file``
reader, unless it holds a line break or white space that reader would read otherwise than
:mod:`contextlens.corpus.reading` (a lone ``\\r`` ends a line here, not there; U+00A0, U+2028 and
the like separate words here, not there); anything else (``.gz``, a directory, several files,
``lower=True``, the "words" tokenizer, ``errors="skip"`` on a file with bad bytes, an in-memory list) is a
restartable :class:`~contextlens.corpus.reading.SentenceStream` read again on every epoch.

Runs are seeded and word initialisation uses a stable hash (not Python's per-process
``hash``), so a run with ``workers=1`` is reproducible; with several worker threads gensim's
scheduling makes results vary slightly, as documented by gensim.

fastText tables hold the in-vocabulary words; vectors for unseen words are built from
character n-grams by the model: ``fasttext_model(...).wv["unseenword"]``.
"""

from __future__ import annotations

import logging
import mmap
import os
import re
import zlib
from pathlib import Path

from ..corpus.reading import (
    ERROR_MODES,
    TOKENIZERS,
    ProgressHook,
    SentenceStream,
    iter_text_blocks,
    resolve_source,
)
from ..errors import (
    FileFormatError,
    InputError,
    MissingDependencyError,
    TextDecodingError,
    check_choice,
    check_float,
    check_int,
)
from ..vectors import EmbeddingTable

__all__ = [
    "ARCHITECTURES",
    "word2vec_model",
    "fasttext_model",
    "train_word2vec",
    "train_fasttext",
]

log = logging.getLogger(__name__)

ARCHITECTURES = ("skipgram", "cbow")
MAX_DIM, MAX_WINDOW, MAX_EPOCHS = 10_000, 10_000, 10_000  # gensim's batches hold 10,000 words
MAX_BUCKETS = 10_000_000  # fastText n-gram buckets: bucket x dim floats


def _stable_hash(text: str) -> int:
    """A hash that is the same in every process (gensim seeds each word's vector with it)."""
    return zlib.crc32(text.encode("utf-8"))


# what gensim's C++ line reader (std::getline, then ``>>`` words) reads otherwise than str.split()
# of the lines of contextlens.corpus.reading: a lone \r (not a line end there), and the non-ASCII white
# space and \x1c-\x1f (not word separators there), as UTF-8 bytes
_GENSIM_DIFFERS = re.compile(rb"\r(?!\n)|[\x1c-\x1f]|\xc2[\x85\xa0]|\xe1\x9a\x80"
                             rb"|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]|\xe2\x81\x9f|\xe3\x80\x80")


def _gensim_reads_alike(path: Path) -> bool:
    """Whether gensim's ``corpus_file`` reader gives ``path`` the lines and words ours does.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.txt"
    >>> _ = p.write_bytes(b"a b\\r\\nc d\\n"); _gensim_reads_alike(p)
    True
    >>> _ = p.write_bytes(b"a b\\rc d\\n"); _gensim_reads_alike(p)
    False
    """
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return _GENSIM_DIFFERS.search(data) is None


def _corpus_file(corpus, lower: bool, tokenizer: str, errors: str) -> str | None:
    """The path to hand to gensim's ``corpus_file`` reader, or None to stream instead."""
    src = resolve_source(corpus)
    if lower or tokenizer != "whitespace" or len(src.paths) != 1 or src.items is not None:
        return None
    path = src.paths[0]
    if path.name.endswith(".gz"):
        return None
    with open(path, "rb") as f:
        if f.read(3) == b"\xef\xbb\xbf":
            return None
    try:  # one fast pass: gensim would fail on a bad byte without saying where (or keep a NUL)
        for _ in iter_text_blocks(src, errors="strict"):
            pass
    except (TextDecodingError, FileFormatError):
        if errors == "strict":
            raise
        return None
    return str(path) if _gensim_reads_alike(path) else None


def _gensim():
    try:
        import gensim.models
        from gensim.models.callbacks import CallbackAny2Vec
    except ImportError:  # pragma: no cover - gensim is a core dependency
        raise MissingDependencyError("gensim", "all", "word2vec and fastText training") from None
    return gensim.models, CallbackAny2Vec


def _train(kind: str, corpus, *, dim: int, window: int, min_count: int, max_vocab: int | None,
           epochs: int, architecture: str, negative: int, sample: float, learning_rate: float,
           seed: int, workers: int | None, lower: bool, tokenizer: str, errors: str,
           progress: ProgressHook | None, **extra):
    check_choice("architecture", architecture, ARCHITECTURES)
    check_choice("tokenizer", tokenizer, TOKENIZERS)
    check_choice("errors", errors, ERROR_MODES)
    check_int("dim", dim, low=1, high=MAX_DIM)
    check_int("window", window, low=1, high=MAX_WINDOW)
    check_int("min_count", min_count, low=1)
    check_int("epochs", epochs, low=1, high=MAX_EPOCHS)
    check_int("negative", negative, low=1, high=100, hint="negative samples per positive one (5-20 is usual)")
    check_float("sample", sample, low=0.0, high=1.0,
                hint="the down-sampling threshold (1e-3 is usual, 0 = none)")
    check_float("learning_rate", learning_rate, low=1e-12, high=1.0)
    check_int("seed", seed, low=0, high=2**32 - 1)
    if max_vocab is not None:
        check_int("max_vocab", max_vocab, low=1)
    if workers is not None:
        check_int("workers", workers, low=1, high=1024)
    if kind == "fasttext":  # character n-grams of min_n..max_n characters, hashed into bucket rows
        check_int("min_n", extra["min_n"], low=1, high=32)
        check_int("max_n", extra["max_n"], low=extra["min_n"], high=32, hint="at least min_n")
        check_int("bucket", extra["bucket"], low=1, high=MAX_BUCKETS,
                  hint="each bucket holds a dim-sized vector")
    models, CallbackAny2Vec = _gensim()
    workers = workers or os.cpu_count() or 1

    class _Progress(CallbackAny2Vec):
        def __init__(self):
            self.epoch = 0

        def on_epoch_end(self, model):
            self.epoch += 1
            if progress is not None:
                progress(self.epoch * model.corpus_count)

    path = _corpus_file(corpus, lower, tokenizer, errors)
    data = {"corpus_file": path} if path else {
        "sentences": SentenceStream(corpus, lower=lower, tokenizer=tokenizer, errors=errors)
    }
    cls = models.Word2Vec if kind == "word2vec" else models.FastText
    log.info("training %s (%s, dim %d, window %d, %d epochs, %d workers) on %s", kind,
             architecture, dim, window, epochs, workers, path or data["sentences"])
    try:
        model = cls(
            **data, vector_size=dim, window=window, min_count=min_count,
            max_final_vocab=max_vocab, sg=int(architecture == "skipgram"), hs=0,
            negative=negative, sample=sample, alpha=learning_rate, epochs=epochs, seed=seed,
            workers=workers, hashfxn=_stable_hash, callbacks=[_Progress()], **extra,
        )
    except RuntimeError as exc:  # gensim: "you must first build vocabulary before training"
        raise InputError(
            f"{kind} found no word occurring at least min_count={min_count} times; lower "
            f"min_count or give a larger corpus ({exc})"
        ) from None
    model.callbacks = ()  # the hook may not pickle; a saved model should not need it
    if len(model.wv) == 0:
        raise InputError(f"{kind} kept no words; lower min_count={min_count}")
    return model


_DOC_PARAMS = """
    Parameters
    ----------
    corpus : a path, directory, list of paths or in-memory strings (see contextlens.corpus.reading).
    dim : vector size; window : context words on each side; min_count, max_vocab : the
        vocabulary (max_vocab keeps the most frequent words).
    epochs : passes over the corpus; architecture : "skipgram" or "cbow";
    negative : negative samples per positive one; sample : down-sampling threshold of
        frequent words; learning_rate : the initial learning rate.
    seed, workers : the random seed; threads (default: all CPUs).
    lower, tokenizer, errors : as in :func:`contextlens.corpus.reading.iter_sentences`.
    progress : a ProgressHook, called after each epoch with the sentences trained on so far.
"""


def word2vec_model(corpus, *, dim: int = 100, window: int = 5, min_count: int = 5,
                   max_vocab: int | None = None, epochs: int = 5, architecture: str = "skipgram",
                   negative: int = 5, sample: float = 1e-3, learning_rate: float = 0.025,
                   seed: int = 0, workers: int | None = None, lower: bool = False,
                   tokenizer: str = "whitespace", errors: str = "strict",
                   progress: ProgressHook | None = None):
    return _train("word2vec", corpus, **_locals(locals()))


def fasttext_model(corpus, *, dim: int = 100, window: int = 5, min_count: int = 5,
                   max_vocab: int | None = None, epochs: int = 5, architecture: str = "skipgram",
                   negative: int = 5, sample: float = 1e-3, learning_rate: float = 0.025,
                   seed: int = 0, workers: int | None = None, lower: bool = False,
                   tokenizer: str = "whitespace", errors: str = "strict",
                   progress: ProgressHook | None = None, min_n: int = 3, max_n: int = 6,
                   bucket: int = 2_000_000):
    return _train("fasttext", corpus, **_locals(locals()))


def _locals(values: dict) -> dict:
    return {k: v for k, v in values.items() if k != "corpus"}


def train_word2vec(corpus, **kw) -> EmbeddingTable:
    """Train word2vec and return its vectors as an :class:`EmbeddingTable` (keys most
    frequent first). Keywords as :func:`word2vec_model`."""
    model = word2vec_model(corpus, **kw)
    return EmbeddingTable.from_gensim(model.wv, name=_name("word2vec", corpus))


def train_fasttext(corpus, **kw) -> EmbeddingTable:
    """Train fastText and return the in-vocabulary vectors as an :class:`EmbeddingTable`
    (the model, from :func:`fasttext_model`, also builds vectors for unseen words from
    their character n-grams). Keywords as :func:`fasttext_model`."""
    model = fasttext_model(corpus, **kw)
    return EmbeddingTable.from_gensim(model.wv, name=_name("fasttext", corpus))


def _name(kind: str, corpus) -> str:
    if isinstance(corpus, (str, os.PathLike)):
        return f"{kind}:{Path(corpus).name}"
    return kind


word2vec_model.__doc__ = "Train a gensim ``Word2Vec`` model (negative sampling).\n" + _DOC_PARAMS
fasttext_model.__doc__ = (
    "Train a gensim ``FastText`` model (negative sampling; character n-grams of length "
    "``min_n``..``max_n`` hashed into ``bucket`` buckets).\n" + _DOC_PARAMS
)
