"""Arrays as compact JSON: base64 bytes a browser reads straight into typed arrays.

A view carries its numbers to the page as :class:`Packed` arrays (little-endian bytes,
base64) rather than JSON lists: a float32 costs 5.3 characters instead of ~10, and the
page decodes it with no parsing. Attention weights, which lie in [0, 1], are *quantised*
to ``uint16`` steps of ``1/65535`` (an error of at most 7.7e-6, below the 3 decimals a view
prints), and a stack of attention matrices keeps only the weights a view draws, those at
or above a threshold (:class:`SparseWeights`), with the share of the weight kept.

>>> p = pack(np.array([[0.5, 0.25]], dtype=np.float32))
>>> p.dtype, p.shape, p.data, p.unpack().tolist()
('float32', (1, 2), 'AAAAPwAAgD4=', [[0.5, 0.25]])
>>> s = sparsify(np.array([[0.7, 0.3, 0.0], [0.001, 0.999, 0.0], [0.2, 0.2, 0.6]]), threshold=0.01)
>>> s.counts.unpack().tolist(), s.cols.unpack().tolist(), round(s.stored, 4)
([2, 1, 3], [0, 1, 1, 0, 1, 2], 0.9997)
>>> s.dense().round(4).tolist()
[[0.7, 0.3, 0.0], [0.0, 0.999, 0.0], [0.2, 0.2, 0.6]]
"""

from __future__ import annotations

import base64
from dataclasses import dataclass

import numpy as np

from ..errors import DimensionError, InputError

__all__ = ["Packed", "pack", "quantise", "SparseWeights", "sparsify", "QUANT"]

QUANT = 65535  # a weight w in [0, 1] is stored as round(w * QUANT), a uint16
DTYPES = ("float32", "float64", "uint8", "uint16", "uint32")


@dataclass(frozen=True)
class Packed:
    """An array as base64 little-endian bytes; ``scale`` (quantised weights) divides the
    stored integers back into values."""

    dtype: str
    shape: tuple[int, ...]
    data: str
    scale: float | None = None

    def unpack(self) -> np.ndarray:
        """The array back (quantised values divided by ``scale``)."""
        raw = np.frombuffer(base64.b64decode(self.data), dtype=np.dtype(self.dtype).newbyteorder("<"))
        a = raw.reshape(self.shape)
        return a / self.scale if self.scale else a.astype(a.dtype.newbyteorder("="))

    def as_dict(self) -> dict:
        out = {"dtype": self.dtype, "shape": list(self.shape), "data": self.data}
        if self.scale:
            out["scale"] = self.scale
        return out


def pack(a, dtype: str | None = None) -> Packed:
    """``a`` as a :class:`Packed` array of ``dtype`` (default: float64 stays float64, any
    other float becomes float32; integers and booleans as given, booleans as uint8)."""
    arr = np.asarray(a)
    if dtype is None:
        dtype = ("float64" if arr.dtype == np.float64 else "float32") if arr.dtype.kind == "f" else (
            "uint8" if arr.dtype == bool else arr.dtype.name)
    if dtype not in DTYPES:
        raise InputError(f"cannot pack dtype {dtype!r}; valid: {', '.join(DTYPES)}")
    out = np.ascontiguousarray(arr, dtype=np.dtype(dtype).newbyteorder("<"))
    return Packed(dtype, tuple(int(n) for n in arr.shape), base64.b64encode(out.tobytes()).decode("ascii"))


def quantise(w) -> Packed:
    """Weights in [0, 1] as ``uint16`` steps of ``1/QUANT``.

    >>> quantise([0.0, 0.5, 1.0]).unpack().round(6).tolist()
    [0.0, 0.500008, 1.0]
    """
    arr = np.asarray(w, dtype=np.float64)
    if arr.size and (np.nanmin(arr) < -1e-6 or np.nanmax(arr) > 1 + 1e-6 or np.isnan(arr).any()):
        raise InputError("only weights in [0, 1] can be quantised, got "
                         f"{np.nanmin(arr):g}..{np.nanmax(arr):g}")
    q = np.rint(np.clip(arr, 0.0, 1.0) * QUANT).astype(np.uint16)
    return Packed("uint16", q.shape, pack(q, "uint16").data, float(QUANT))


@dataclass(frozen=True)
class SparseWeights:
    """The weights ``>= threshold`` of a stack of matrices ``shape = (..., rows, cols)``.

    Row ``r`` (counting over every leading dimension) holds ``counts[r]`` entries, whose
    columns and quantised values follow those of the rows before it in ``cols`` and
    ``values``. ``thresholds`` holds, per matrix (the leading dimensions flattened), the
    threshold used there: ``threshold`` or higher, where a budget made it rise. ``stored``
    is the share of the total weight kept.
    """

    shape: tuple[int, ...]
    threshold: float
    thresholds: tuple[float, ...]
    counts: Packed  # uint16 (rows,)
    cols: Packed  # uint8 or uint16 (entries,)
    values: Packed  # uint16 quantised (entries,)
    stored: float

    def dense(self) -> np.ndarray:
        """The stored weights back as an array of ``shape`` (the dropped ones are 0)."""
        counts = self.counts.unpack().astype(np.int64)
        out = np.zeros((int(np.prod(self.shape[:-1])), self.shape[-1]))
        rows = np.repeat(np.arange(len(counts)), counts)
        out[rows, self.cols.unpack().astype(np.int64)] = self.values.unpack()
        return out.reshape(self.shape)

    def as_dict(self) -> dict:
        return {"shape": list(self.shape), "threshold": self.threshold, "thresholds": list(self.thresholds),
                "stored": self.stored, "counts": self.counts.as_dict(), "cols": self.cols.as_dict(),
                "values": self.values.as_dict()}


def sparsify(w, threshold: float = 0.01, *, budget: int | None = None) -> SparseWeights:
    """Keep the weights of ``w (..., rows, cols)`` that are ``>= threshold``. With
    ``budget`` and more weights than that, each matrix keeps at most its share of the
    budget, its strongest weights: its threshold rises (ties may keep a few more), so the
    size of a view has a ceiling and every matrix keeps its strongest lines.

    >>> s = sparsify(np.array([[[0.5, 0.3, 0.2]], [[0.4, 0.4, 0.2]]]), 0.1, budget=4)
    >>> s.thresholds, s.counts.unpack().tolist()
    ((0.3, 0.4), [2, 2])
    """
    a = np.asarray(w, dtype=np.float64)
    if a.ndim < 2:
        raise DimensionError(f"sparsify needs (..., rows, cols) weights, got shape {a.shape}")
    if not 0.0 <= threshold <= 1.0:
        raise InputError(f"threshold must be in [0, 1], got {threshold!r}")
    per = a.reshape(-1, a.shape[-2] * a.shape[-1])  # (matrices, rows * cols)
    cut = np.full(len(per), float(threshold))
    if budget is not None and int((per >= threshold).sum()) > budget > 0:
        cap = max(1, min(per.shape[1], budget // len(per)))
        # each matrix's cap-th largest
        kth = np.partition(per, per.shape[1] - cap, axis=1)[:, per.shape[1] - cap]
        cut = np.maximum(cut, kth)
    flat = a.reshape(-1, a.shape[-1])  # (rows, cols)
    keep = flat >= np.repeat(cut, a.shape[-2])[:, None]
    rows, cols = np.nonzero(keep)  # row-major: rows ascending, then columns
    counts = np.bincount(rows, minlength=len(flat))
    total = float(flat.sum())
    return SparseWeights(
        tuple(int(n) for n in a.shape), float(threshold), tuple(float(t) for t in cut),
        pack(counts, "uint16"),
        pack(cols, "uint8" if a.shape[-1] <= 256 else "uint16"), quantise(flat[rows, cols]),
        float(flat[rows, cols].sum() / total) if total > 0 else 1.0,
    )
