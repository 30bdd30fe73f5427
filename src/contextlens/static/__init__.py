"""Static word vectors: one row per word, whatever the sentence.

Build them from a corpus (co-occurrence counts, PPMI, PPMI + SVD, word2vec, fastText,
GloVe) with :func:`build_table`, or load a packaged or saved table with
:func:`load_vectors`. gensim is imported only when word2vec or fastText is trained.

Floor 3 (ARCHITECTURE.md): imports ``errors``, ``files``, ``progress``, ``disk_cache``,
``vectors`` (the :class:`~contextlens.vectors.EmbeddingTable` it builds) and ``corpus`` (reading
the text); never encoders or anything above them. numpy, SciPy and scikit-learn; numba in
:mod:`.kernel`.
"""

import importlib

# name -> the submodule that defines it, imported on first use (PEP 562): loading a
# packaged table (``static.pretrained``) does not pull SciPy in through the builders.
_LAZY = {
    "DEFAULTS": ".build", "METHODS": ".build", "build_table": ".build",
    "Cooccurrence": ".cooccurrence", "cooccurrence_matrix": ".cooccurrence", "count_table": ".cooccurrence",
    "dense_rows": ".cooccurrence", "GloVe": ".glove", "ppmi": ".ppmi", "svd_embeddings": ".ppmi",
    "PACKAGED": ".pretrained", "load_vectors": ".pretrained",
    "fasttext_model": ".word2vec", "train_fasttext": ".word2vec", "train_word2vec": ".word2vec",
    "word2vec_model": ".word2vec",
}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


__all__ = [
    "METHODS",
    "DEFAULTS",
    "build_table",
    "Cooccurrence",
    "cooccurrence_matrix",
    "count_table",
    "dense_rows",
    "ppmi",
    "svd_embeddings",
    "GloVe",
    "word2vec_model",
    "fasttext_model",
    "train_word2vec",
    "train_fasttext",
    "PACKAGED",
    "load_vectors",
]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
