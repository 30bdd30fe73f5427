"""Attention flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in Transformers", ACL, § 3):
how much of a word's vector at layer L can be traced to each input word, as a maximum flow.

The attention graph is layered: node ``(l, j)`` is word ``j`` at layer ``l`` (``l = 0``: the input).
An edge goes from ``(l − 1, j)`` to ``(l, i)`` with capacity ``Â_l[i, j]``, the weight word ``i``
gives word ``j`` at layer ``l`` with the residual connection counted, exactly the matrix attention
rollout multiplies (:func:`~contextlens.analysis.attribution.attention_rollout`):
``Â = 0.5·A + 0.5·I`` with ``A`` the mean over heads, rows renormalised to 1, and the special
tokens as one extra node that keeps its attention to itself. The flow from input word ``j`` to
word ``i`` at layer ``L`` is the maximum flow from ``(0, j)`` to ``(L, i)``: a path carries at most
its weakest edge (rollout multiplies along a path instead), and paths that share an edge share
its capacity.

The maximum flow is computed by :func:`scipy.sparse.csgraph.maximum_flow` (Dinic's algorithm),
which works on integers: capacities are scaled by :data:`SCALE` (10⁶) and rounded, so each flow
is exact to about ``edges × 0.5e-6``. Each of the ``L × m`` flows of a word is one max-flow on a
graph of ``(L + 1)·m`` nodes and ``L·m²`` edges (m words, plus the special node).

>>> a = np.array([[[[0.0, 1.0], [1.0, 0.0]]]])  # (1 layer, 1 head, 2 words, 2 words)
>>> attention_flow(a, 0).round(6).tolist()  # word 0 keeps half of itself (residual) and reads half of word 1
[[0.5, 0.5]]
"""

from __future__ import annotations

import numpy as np

from ..errors import DimensionError, InputError, check_int
from .attribution import RESIDUAL, attention_rollout

__all__ = ["attention_flow", "flow_graph", "max_flow", "SCALE"]

SCALE = 10**6  # capacities are multiplied by this and rounded: scipy's max-flow needs integers


def flow_graph(hat: np.ndarray):
    """The layered attention graph of ``hat`` ``(layers, m, m)`` (each layer's residual-augmented
    attention, rows summing to 1) as a scipy CSR matrix of integer capacities: node ``l·m + j`` is
    word ``j`` at layer ``l``; the edge ``(l − 1, j) → (l, i)`` has capacity ``round(SCALE · hat[l −
    1, i, j])``.

    >>> g = flow_graph(np.array([[[0.75, 0.25], [0.0, 1.0]]]))
    >>> g.toarray().tolist()  # nodes: (0, 0), (0, 1), (1, 0), (1, 1)
    [[0, 0, 750000, 0], [0, 0, 250000, 1000000], [0, 0, 0, 0], [0, 0, 0, 0]]
    """
    import scipy.sparse as sp

    layers, m, _ = hat.shape
    caps = np.rint(np.asarray(hat, np.float64) * SCALE).astype(np.int64)  # (layers, i, j)
    layer, i, j = np.nonzero(caps)
    rows = layer * m + j  # from (l - 1, j)
    cols = (layer + 1) * m + i  # to (l, i)
    size = (layers + 1) * m
    return sp.csr_matrix((caps[layer, i, j].astype(np.int32), (rows, cols)), shape=(size, size))


def max_flow(graph, source: int, sink: int) -> float:
    """The maximum flow from ``source`` to ``sink`` in a :func:`flow_graph`, back in weight units."""
    from scipy.sparse.csgraph import maximum_flow

    return maximum_flow(graph, source, sink, method="dinic").flow_value / SCALE


def attention_flow(attention: np.ndarray, target: int, special_attention: np.ndarray | None = None, *,
                   residual: float = RESIDUAL) -> np.ndarray:
    """``(layers, m)``: the attention flow from each input word (and, last, the special tokens when
    ``special_attention`` is given) to word ``target`` at each layer.

    ``attention`` is ``(layers, heads, n, n)`` as an Encoding holds it, ``special_attention``
    ``(layers, heads, n)`` or None (see :func:`~contextlens.analysis.attribution.attention_rollout`,
    which builds the same graph).
    """
    a = np.asarray(attention, dtype=np.float64)
    if a.ndim != 4 or a.shape[2] != a.shape[3]:
        raise DimensionError(f"attention must be (n_layers, heads, n, n), got {a.shape}")
    n = a.shape[2]
    target = check_int("target word index", target, low=0, high=n - 1)
    # the one-layer rollout of each layer alone is its residual-augmented attention Â
    hat = np.stack([attention_rollout(a[k:k + 1], None if special_attention is None else
                                      np.asarray(special_attention)[k:k + 1], residual=residual)[0]
                    for k in range(a.shape[0])])  # (layers, m, m)
    layers, m, _ = hat.shape
    out = np.zeros((layers, m))
    for L in range(1, layers + 1):
        graph = flow_graph(hat[:L])
        for j in range(m):
            out[L - 1, j] = max_flow(graph, j, L * m + target)
    if not np.all(np.isfinite(out)):
        raise InputError("attention flow is undefined for these weights (not finite); check the attention")
    return out
