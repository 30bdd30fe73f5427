"""Build an encoder from a method name and options (what the CLI and the web app call).

>>> from contextlens.vectors import EmbeddingTable
>>> table = EmbeddingTable(["bank", "river"], [[1.0, 0.0], [0.0, 1.0]])
>>> make_encoder("average", vectors=table, alpha=0.5).name
'average'
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ..errors import InputError, check_choice

if TYPE_CHECKING:  # imported where used: the CLI reads this module's names before numpy is needed
    from ..vectors import EmbeddingTable
    from .base import Encoder

__all__ = ["STATIC_METHODS", "METHOD_OPTIONS", "method_options", "make_encoder", "resolve_vectors"]

STATIC_METHODS = ("static", "average", "attention")
# The mixing options each static method takes (the table lookup options apply to all).
METHOD_OPTIONS: dict[str, tuple[str, ...]] = {
    "static": (),
    "average": ("alpha", "window"),
    "attention": ("include_self", "causal", "window", "positions", "heads", "projections",
                  "scale", "seed", "n_layers", "d_head"),
}


def method_options(method: str, **options: Any) -> dict[str, Any]:
    """The ``options`` that are set (not None), checked to be ones ``method`` takes.

    A front end offering every option for every method passes them all; one that is set
    but belongs to another method is an error naming the method (silently dropping it
    would report results for settings the user did not get).

    >>> method_options("average", alpha=0.5, heads=None, window=None)
    {'alpha': 0.5}
    >>> method_options("average", alpha=0.5, heads=2)
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: heads does not apply to method 'average' (it takes: alpha, window)
    """
    check_choice("method", method, STATIC_METHODS)
    given = {k: v for k, v in options.items() if v is not None}
    wrong = [k for k in given if k not in METHOD_OPTIONS[method]]
    if wrong:
        takes = f"it takes: {', '.join(METHOD_OPTIONS[method])}" if METHOD_OPTIONS[method] else \
            "it takes no mixing options"
        raise InputError(f"{', '.join(wrong)} {'does' if len(wrong) == 1 else 'do'} not apply to method "
                         f"{method!r} ({takes})")
    return given


def resolve_vectors(vectors: str | os.PathLike | EmbeddingTable) -> EmbeddingTable:
    """A table as given, or loaded from a packaged name (``glove-6b-50d``) or a file."""
    from ..vectors import EmbeddingTable

    if isinstance(vectors, EmbeddingTable):
        return vectors
    from ..static.pretrained import load_vectors

    return load_vectors(vectors)


def make_encoder(
    method: str = "static", *, vectors=None, model: str | None = None, **params: Any
) -> Encoder:
    """An encoder: a transformer when ``model`` is given, else one over a static table.

    ``model`` is a registry name (``minilm``, ``mpnet``, ``smollm2``), a local directory or
    a Hugging Face id; ``params`` then go to :class:`TransformerEncoder` and ``method`` is
    ignored. Over a table (``vectors``: an EmbeddingTable, a file or a packaged name),
    ``static`` looks words up; ``average`` is :class:`NeighbourAverage` (``alpha``,
    ``window``); ``attention`` is :class:`SelfAttention` (``include_self``, ``causal``,
    ``window``, ``positions``, ``heads``, ``projections``, ``scale``, ``seed``...).
    Options that are ``None`` take the encoder's default.
    """
    params = {k: v for k, v in params.items() if v is not None}
    if model is not None:
        from .transformer import TransformerEncoder

        return TransformerEncoder(model, **params)
    check_choice("method", method, STATIC_METHODS)
    if vectors is None:
        raise InputError("give vectors (a file or a packaged name such as glove-6b-50d) or a model")
    table = resolve_vectors(vectors)
    if method == "static":
        from .static import StaticEncoder

        return StaticEncoder(table, **params)
    if method == "average":
        from .mixing import NeighbourAverage

        return NeighbourAverage(table, **params)
    from .mixing import SelfAttention

    return SelfAttention(table, **params)
