"""2-D and 3-D projections of vectors for plots: PCA, t-SNE and UMAP, with every degenerate input defined.

t-SNE and UMAP are native code that does not guard its corners: scikit-learn's t-SNE with
``init="pca"`` divides its start by the standard deviation of the first component, so
points without variance (one word's static row in two sentences) gave NaN and then a
segmentation fault; UMAP's spectral start fails below 4 points. So the rules are stated
here, once, before any of it runs:

- coordinates must be finite (an error names the rows that are not);
- points that all coincide (their spread under ``1e-6`` of their size: float32 rounding)
  are one point: every method puts each of them at the origin;
- t-SNE and UMAP see the points centred and scaled to unit radius (both depend only on
  relative distances, and this keeps huge or tiny coordinates in range); t-SNE starts from
  our PCA, scaled as scikit-learn scales its own PCA start (std 1e-4);
- UMAP needs at least 4 points in 2-D, 5 in 3-D (an error says to use pca or tsne).

t-SNE runs on one OpenMP thread: its 1,000 short iterations each end at a thread barrier,
and on a busy 2-core machine (load 12) 10 / 64 / 300 points took 0.4–0.6 / 1.0–1.1 /
5.8–8.4 s on one thread against 21–101 / 16–37 / 65–83 s on two (paired runs, scikit-learn
1.9, ``init="random"``).

>>> import numpy as np
>>> x = np.array([[0.0, 0, 0], [2, 0, 0], [0, 1, 0]])
>>> project(x).shape, project(x, dims=3).shape
((3, 2), (3, 3))
>>> project(np.ones((3, 50)), "tsne").tolist()  # three copies of one point
[[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
>>> project(np.array([[0.0, 1.0], [np.nan, 0.0]]))
Traceback (most recent call last):
...
contextlens.errors.InputError: points [1] have NaN or infinite coordinates; a projection needs finite vectors (check the table or model that made them)
"""  # noqa: E501 (a doctest's expected output, printed whole)

from __future__ import annotations

import logging

import numpy as np

from ..bounds import MAX_EMBED_POINTS
from ..errors import InputError, MissingDependencyError, check_choice, check_size
from ..progress import step
from ..quiet import quiet_warnings

__all__ = ["project", "check_points", "run_here", "PROJECTIONS", "COINCIDE", "UMAP_MIN_POINTS"]

log = logging.getLogger(__name__)
PROJECTIONS = ("pca", "tsne", "umap")
COINCIDE = 1e-6  # points whose spread is under this share of their size are one point
UMAP_MIN_POINTS = 4  # in 2-D: UMAP's spectral start needs more points than components + 1


def run_here(fn, /, *args, **kwargs):
    """Call ``fn(*args, **kwargs)``: how analyses run their numeric steps unless told otherwise
    (the lab runs them in worker processes, :mod:`contextlens.web.worker`)."""
    return fn(*args, **kwargs)


def check_points(x, what: str = "points") -> np.ndarray:
    """``x`` as a float64 ``(n, dim)`` array of finite numbers, else an error naming the rows.

    >>> check_points([[1, 2], [3, 4]]).dtype
    dtype('float64')
    >>> check_points([[1.0, float("inf")]], "usages")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: usages [0] have NaN or infinite coordinates; a projection needs finite vectors (check the table or model that made them)
    """  # noqa: E501 (a doctest's expected output, printed whole)
    x = np.asarray(x, dtype=np.float64)  # (n, dim)
    if x.ndim != 2:
        raise InputError(f"{what} must be an (n, dim) array, got shape {x.shape}")
    bad = np.flatnonzero(~np.isfinite(x).all(axis=1))
    if bad.size:
        shown = bad[:10].tolist()
        raise InputError(f"{what} {shown}{'...' if bad.size > 10 else ''} have NaN or infinite coordinates; "
                         "a projection needs finite vectors (check the table or model that made them)")
    return x


def _pca(centred: np.ndarray, dims: int = 2) -> np.ndarray:
    """``(n, dim)`` centred points on their first ``dims`` principal axes, each axis signed so
    its largest loading is positive; a missing axis (rank < dims) is zero."""
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    vt = vt[:dims]  # (<= dims, dim)
    signs = np.sign(vt[np.arange(len(vt)), np.abs(vt).argmax(axis=1)])
    out = centred @ (vt * signs[:, None]).T  # (n, <= 2)
    if out.shape[1] < dims:
        out = np.hstack([out, np.zeros((len(centred), dims - out.shape[1]))])
    return out


def project(x: np.ndarray, method: str = "pca", *, seed: int = 0, dims: int = 2) -> np.ndarray:
    """Project ``(n, dim)`` points to ``(n, dims)`` (``dims`` 2 or 3; the rules of the module docstring).

    PCA is exact and deterministic, in the units of ``x``; t-SNE and UMAP are seeded. With
    fewer than ``dims`` dimensions of variation the missing axes are zero.
    """
    check_choice("projection", method, PROJECTIONS)
    if dims not in (2, 3):
        raise InputError(f"a projection has 2 or 3 dimensions, got {dims!r}")
    x = check_points(x)  # (n, dim)
    if len(x) < 2:
        raise InputError(f"a projection needs at least 2 points, got {len(x)}")
    if method != "pca":
        check_size(f"the {method} projection", len(x), MAX_EMBED_POINTS, "points",
                   why="its time grows faster than the points", todo="use pca, or give fewer sentences")
    centred = x - x.mean(axis=0)  # (n, dim)
    size = float(np.abs(x).max())
    radius = float(np.abs(centred).max())
    if radius <= COINCIDE * size or radius == 0.0:
        log.info("the %d points coincide: all at the origin", len(x))
        return np.zeros((len(x), dims))
    unit = centred / radius  # (n, dim), largest |coordinate| = 1
    if method == "pca":
        out = _pca(unit, dims) * radius
        if not np.isfinite(out).all():
            raise InputError("the PCA coordinates overflow float64; scale the vectors down")
        return out
    if method == "tsne":
        from sklearn.manifold import TSNE
        from threadpoolctl import threadpool_limits

        start = _pca(unit, dims)  # (n, dims); the first axis has variance, since the points do not coincide
        start = (start / start[:, 0].std() * 1e-4).astype(np.float32)
        perplexity = max(1.0, min(30.0, (len(x) - 1) / 3))
        with threadpool_limits(1, user_api="openmp"):  # see the module docstring
            xy = TSNE(dims, perplexity=perplexity, random_state=seed, init=start).fit_transform(unit)
        return xy.astype(np.float64)
    need = UMAP_MIN_POINTS + dims - 2  # more points than components + 1
    if len(x) < need:
        raise InputError(f"UMAP needs at least {need} points, got {len(x)}; use pca or tsne for so few "
                         f"({dims}-D)")
    n_neighbors = max(2, min(15, len(x) - 1))
    # UMAP's numba code compiles on its first use (27 to 70 s here), then loads from numba's cache; its
    # warnings (a seed turns parallelism off, no TensorFlow for ParametricUMAP; numba's) are not the user's
    # to act on
    with step(f"UMAP of {len(x):,} points", once="its first run compiles numba code, later runs load it"), \
            quiet_warnings("umap", "pynndescent", "numba"):
        try:
            import umap
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise MissingDependencyError("umap-learn", "umap", "UMAP projection") from e
        xy = umap.UMAP(n_components=dims, n_neighbors=n_neighbors, random_state=seed).fit_transform(unit)
    return xy.astype(np.float64)
