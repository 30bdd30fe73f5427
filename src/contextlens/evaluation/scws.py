"""SCWS (Huang et al. 2012): similarity of two words, each in its own context.

The score of a pair is the cosine between the two targets' vectors in their contexts, at
each layer; the figure is Spearman's correlation with the mean human rating. With a
static table (``StaticEncoder``) the target vector is the plain word vector, so the
figure is the single-prototype baseline. Pairs with a missing vector are skipped and
counted (``oov``).
"""

from __future__ import annotations

import numpy as np

from ..errors import EmptyInputError
from .lexical import spearman
from .wic import pair_cosines

__all__ = ["run_scws", "scws_rows"]


def scws_rows(u: np.ndarray, v: np.ndarray, ratings, *, split: str = "scws", method: str = "cosine",
              layer_ids=None) -> list[dict]:
    """Rows ``{split, method, layer, spearman, n, oov}``, one per layer, from the two
    targets' ``(n, layers, dim)`` vectors and the ``(n,)`` mean ratings (``layer_ids``:
    the layer number of each layer, default 0, 1, ...).

    >>> u = np.array([[[1.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]]])
    >>> v = np.array([[[1.0, 0.1]], [[1.0, 1.0]], [[0.0, 1.0]]])
    >>> scws_rows(u, v, [9.0, 5.0, 1.0])[0]["spearman"]
    1.0
    """
    cos = pair_cosines(u, v)  # (n, layers)
    gold = np.asarray(ratings, dtype=np.float64)
    rows = []
    ids = list(range(cos.shape[1])) if layer_ids is None else list(layer_ids)
    for k in range(cos.shape[1]):
        ok = ~np.isnan(cos[:, k])
        if ok.sum() < 2:
            raise EmptyInputError(f"layer {ids[k]}: fewer than 2 SCWS pairs have both vectors; check the "
                                  "vectors")
        rows.append({"split": split, "method": method, "layer": ids[k],
                     "spearman": spearman(gold[ok], cos[ok, k]), "n": int(ok.sum()), "oov": int((~ok).sum())})
    return rows


def run_scws(cache, root, *, path=None, progress=None) -> list[dict]:
    """SCWS rows per layer, from ``root/scws/ratings.txt`` or ``path`` (e.g. the sample)."""
    from .. import datasets

    items = datasets.load_scws(root, path)
    if not items:
        raise EmptyInputError("the SCWS file holds no pair")
    split = "scws" if path is None else f"scws:{getattr(path, 'name', None) or str(path).rsplit('/', 1)[-1]}"
    targets = [(it.context1, it.index1) for it in items] + [(it.context2, it.index2) for it in items]
    vec = cache.targets(f"scws-{len(items)}", targets, progress=progress)
    n = len(items)
    return scws_rows(vec[:n], vec[n:], [it.mean for it in items], split=split, layer_ids=cache.layer_ids)
