"""contextlens: see and measure how a word's vector goes from static to contextual.

>>> from contextlens import EmbeddingTable, make_encoder, compare
>>> table = EmbeddingTable(["money", "bank", "river"], [[1, 0], [1, 1], [0, 1]])
>>> enc = make_encoder("average", vectors=table)
>>> [round(c, 3) for c in compare(enc, "money bank", "river bank", "bank")["cosine_by_layer"]]
[1.0, 0.0]
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("contextlens")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0+unknown"

from .analysis.incontext import compare, contextualize, word_weights  # noqa: E402
from .encoders.base import Encoder, Encoding  # noqa: E402
from .encoders.registry import make_encoder, resolve_vectors  # noqa: E402
from .errors import ContextLensError  # noqa: E402
from .text import Word, split_sentences, tokenize  # noqa: E402
from .vectors import EmbeddingTable, cosine  # noqa: E402

__all__ = [
    "__version__", "EmbeddingTable", "cosine", "Encoding", "Encoder", "Word", "tokenize",
    "split_sentences", "make_encoder", "resolve_vectors", "contextualize", "compare",
    "word_weights", "ContextLensError",
]
