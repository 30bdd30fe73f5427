"""Static word vectors: one row per word, whatever the sentence.

Build them from a corpus (co-occurrence counts, PPMI, PPMI + SVD, word2vec, fastText,
GloVe) with :func:`build_table`, or load a packaged or saved table with
:func:`load_vectors`. gensim is imported only when word2vec or fastText is trained.
"""

from .build import DEFAULTS, METHODS, build_table
from .cooccurrence import Cooccurrence, cooccurrence_matrix, count_table, dense_rows
from .glove import GloVe
from .ppmi import ppmi, svd_embeddings
from .pretrained import PACKAGED, load_vectors
from .word2vec import fasttext_model, train_fasttext, train_word2vec, word2vec_model

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
