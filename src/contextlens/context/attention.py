"""Scaled dot-product attention, its masks and positions, as small numpy functions.

Attention turns scores into weights with a softmax and mixes value vectors with them:
``out = softmax(q kᵀ · scale) v``, with ``scale = 1/√d_k`` unless given (Vaswani et al.
2017). With ``q = k = v = x`` (the static rows of a sentence) it is a training-free
contextualiser: each word becomes a weighted average of the words it attends to.

Mask convention (as PyTorch's ``F.scaled_dot_product_attention`` for boolean masks):
**True means "may attend"**, False means "masked out" (weight exactly 0). Masks combine
with ``&``: ``causal_mask(n) & exclude_self_mask(n)``.

>>> x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])  # (words, dim)
>>> out, w = scaled_dot_product_attention(x, x, x, mask=exclude_self_mask(3), scale=0.0)
>>> w  # scale 0: every allowed score is equal, so attention is a plain average
array([[0. , 0.5, 0.5],
       [0.5, 0. , 0.5],
       [0.5, 0.5, 0. ]])
>>> out[0]  # word 0 = mean of words 1 and 2
array([0.5, 1. ])
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DimensionError, InputError, check_float, check_int

__all__ = [
    "softmax",
    "scaled_dot_product_attention",
    "causal_mask",
    "exclude_self_mask",
    "window_mask",
    "check_window",
    "check_scale",
    "sinusoidal_positions",
    "multi_head_attention",
    "head_inputs",
    "random_projections",
    "check_weights_size",
    "WEIGHTS_BUDGET",
]

WEIGHTS_BUDGET = 1 << 29  # bytes the attention weights of one text may take (512 MiB)
MAX_WORDS = 50_000  # words of one mask (n x n booleans: 2.5 GB)
MAX_WINDOW = 1_000_000  # words each side (any window past the sentence is the whole sentence)
MAX_DIM, MAX_HEADS = 65_536, 4096
MAX_SCALE = 1e6


def _float_array(a, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise InputError(f"{name} must be a numeric array, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise InputError(f"{name} must be real, got dtype {arr.dtype}")
    return arr if np.issubdtype(arr.dtype, np.floating) else arr.astype(np.float64)


def _bool_mask(mask, shape: tuple[int, ...], what: str) -> np.ndarray:
    m = np.asarray(mask)
    if m.dtype != bool:
        raise InputError(
            f"mask must be boolean (True = may attend, False = masked out), got dtype {m.dtype}; "
            "build one with causal_mask / exclude_self_mask / window_mask"
        )
    try:
        return np.broadcast_to(m, shape)
    except ValueError:
        raise DimensionError(
            f"mask of shape {m.shape} does not fit {what} of shape {shape}"
        ) from None


def softmax(scores, axis: int = -1, mask=None) -> np.ndarray:
    """Weights that are non-negative and sum to 1 along ``axis``, numerically stable.

    The largest allowed score of each row is subtracted before ``exp``, so huge scores do
    not overflow. Entries where ``mask`` is False (or the score is ``-inf``) get exactly 0
    weight. A row with nothing left to weigh is an error, never NaN.

    >>> softmax(np.array([1.0, 2.0, 3.0])).round(4)
    array([0.09  , 0.2447, 0.6652])
    >>> softmax(np.array([1e4, 1e4, -1e4]))
    array([0.5, 0.5, 0. ])
    >>> softmax(np.array([[1.0, 5.0], [2.0, 2.0]]), mask=np.array([[True, False], [True, True]]))
    array([[1. , 0. ],
           [0.5, 0.5]])
    >>> softmax(np.zeros((2, 2)), mask=np.array([[True, True], [False, False]]))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: row 1 of the scores has every entry masked out; ...
    """
    s = _float_array(scores, "scores")
    if s.ndim == 0:
        raise DimensionError("softmax needs at least a 1-D array of scores, got a scalar")
    if np.isnan(s).any() or np.isposinf(s).any():
        raise InputError("scores contain NaN or +inf; check the vectors and the scale")
    axis = axis % s.ndim if -s.ndim <= axis < s.ndim else None
    if axis is None:
        raise DimensionError(f"axis out of range for scores of shape {s.shape}")
    allowed = ~np.isneginf(s)
    if mask is not None:
        allowed = allowed & _bool_mask(mask, s.shape, "the scores")
    has_any = allowed.any(axis=axis, keepdims=True)
    if not has_any.all():
        bad = tuple(int(i) for i in np.argwhere(~np.squeeze(has_any, axis=axis))[0])
        where = "the scores" if not bad else f"row {bad[0] if len(bad) == 1 else bad} of the scores"
        raise InputError(
            f"{where} has every entry masked out; a softmax over nothing is undefined: "
            "let every row attend to at least one position"
        )
    z = np.where(allowed, s, -np.inf)
    z = z - z.max(axis=axis, keepdims=True)  # row max is 0: exp never overflows
    e = np.exp(z)  # masked entries: exp(-inf) = 0 exactly
    return e / e.sum(axis=axis, keepdims=True)


def scaled_dot_product_attention(q, k, v, mask=None, scale: float | None = None):
    """``softmax(q kᵀ · scale) v`` and the weights; ``scale`` defaults to ``1/√d_k``.

    Shapes: ``q (..., n_q, d_k)``, ``k (..., n_k, d_k)``, ``v (..., n_k, d_v)``; leading
    dims (e.g. heads) broadcast. Returns ``out (..., n_q, d_v)`` and
    ``weights (..., n_q, n_k)``, where ``weights[..., i, j]`` is what query ``i`` gives key
    ``j``. ``mask`` is boolean, broadcastable to ``(..., n_q, n_k)``, True = may attend
    (PyTorch's convention); masked scores become ``-inf`` and get exactly 0 weight.
    ``scale`` overrides ``1/√d_k``: larger sharpens the weights, 0 makes them uniform.

    >>> q = np.array([[1.0, 0.0]])                 # (1, 2)
    >>> k = v = np.array([[2.0, 0.0], [0.0, 2.0]])  # (2, 2)
    >>> out, w = scaled_dot_product_attention(q, k, v, scale=math.log(3) / 2)
    >>> w                                           # scores log(3) and 0 -> 3:1
    array([[0.75, 0.25]])
    >>> out
    array([[1.5, 0.5]])
    >>> scaled_dot_product_attention(q, np.ones((2, 3)), v)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.DimensionError: q has shape (1, 2) and k (2, 3): their last dims ...
    """
    q, k, v = (_float_array(a, name) for a, name in ((q, "q"), (k, "k"), (v, "v")))
    for a, name in ((q, "q"), (k, "k"), (v, "v")):
        if a.ndim < 2:
            raise DimensionError(f"{name} must be at least 2-D (..., n, d), got shape {a.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise DimensionError(
            f"q has shape {q.shape} and k {k.shape}: their last dims (d_k) must match"
        )
    if k.shape[-2] != v.shape[-2]:
        raise DimensionError(
            f"k has shape {k.shape} and v {v.shape}: they need one row per key (n_k must match)"
        )
    try:
        lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        raise DimensionError(
            f"leading dims of q {q.shape}, k {k.shape} and v {v.shape} do not broadcast"
        ) from None
    d_k = q.shape[-1]
    if scale is None:
        if d_k == 0:
            raise DimensionError("q and k have 0 dimensions; nothing to score")
        scale = 1.0 / math.sqrt(d_k)
    else:
        scale = check_scale(scale)
    dtype = np.result_type(q, k, v, np.float32)
    q, k, v = q.astype(dtype, copy=False), k.astype(dtype, copy=False), v.astype(dtype, copy=False)
    scores = (q @ np.swapaxes(k, -1, -2)) * dtype.type(scale)  # (..., n_q, n_k)
    shape = lead + scores.shape[-2:]
    scores = np.broadcast_to(scores, shape)
    if mask is not None:
        mask = _bool_mask(mask, shape, "the scores (..., n_q, n_k)")
    weights = softmax(scores, mask=mask)  # (..., n_q, n_k)
    return weights @ v, weights


def causal_mask(n: int) -> np.ndarray:
    """``(n, n)`` True on and below the diagonal: word ``i`` sees words ``0..i`` only.

    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    """
    n = check_int("n", n, low=0, high=MAX_WORDS, hint="words; the mask is n x n")
    return np.tril(np.ones((n, n), dtype=bool))


def exclude_self_mask(n: int) -> np.ndarray:
    """``(n, n)`` True everywhere except the diagonal: no word attends to itself.

    >>> exclude_self_mask(2)
    array([[False,  True],
           [ True, False]])
    """
    n = check_int("n", n, low=0, high=MAX_WORDS, hint="words; the mask is n x n")
    return ~np.eye(n, dtype=bool)


def check_window(window: int | None) -> int | None:
    """``window`` if it is None (whole sentence) or a whole number 0..``MAX_WINDOW``, else a
    clear error.

    >>> check_window(2), check_window(None)
    (2, None)
    >>> check_window(-1)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: window must be a whole number from 0 to 1,000,000, got -1; words each side (None: the whole sentence)
    """  # noqa: E501 (a doctest's expected output, printed whole)
    if window is None:
        return None
    return check_int("window", window, low=0, high=MAX_WINDOW,
                     hint="words each side (None: the whole sentence)")


def check_scale(scale: float | None) -> float | None:
    """``scale`` (what multiplies the scores) as a float, None (``1/√d_k``), or a clear error.

    >>> check_scale(0), check_scale(None)
    (0.0, None)
    >>> check_scale(float("inf"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: scale must be a finite number from -1e+06 to 1e+06, got inf; ...
    """
    if scale is None:
        return None
    return check_float("scale", scale, low=-MAX_SCALE, high=MAX_SCALE,
                       hint="it multiplies the scores: 0 gives uniform weights, larger sharpens them")


def window_mask(n: int, window: int) -> np.ndarray:
    """``(n, n)`` True where ``|i - j| <= window`` (window 0: only the word itself).

    >>> window_mask(4, 1).astype(int)
    array([[1, 1, 0, 0],
           [1, 1, 1, 0],
           [0, 1, 1, 1],
           [0, 0, 1, 1]])
    >>> (window_mask(3, 1) & exclude_self_mask(3)).astype(int)
    array([[0, 1, 0],
           [1, 0, 1],
           [0, 1, 0]])
    """
    n = check_int("n", n, low=0, high=MAX_WORDS, hint="words; the mask is n x n")
    if check_window(window) is None:
        return np.ones((n, n), dtype=bool)
    pos = np.arange(n)
    return np.abs(pos[:, None] - pos[None, :]) <= window


def sinusoidal_positions(n: int, dim: int) -> np.ndarray:
    """``(n, dim)`` sinusoidal position codes (Vaswani et al. 2017, section 3.5).

    ``PE[pos, 2i] = sin(pos / 10000^(2i/dim))`` and ``PE[pos, 2i+1] = cos(...)``, same
    angle; an odd ``dim`` ends with a sine column. Add them to a sentence's vectors
    (``x + sinusoidal_positions(*x.shape)``) to make attention see word order.

    >>> sinusoidal_positions(2, 3).round(4)
    array([[0.    , 1.    , 0.    ],
           [0.8415, 0.5403, 0.0022]])
    """
    n = check_int("n", n, low=0, high=MAX_WORDS, hint="words; the mask is n x n")
    dim = check_int("dim", dim, low=1, high=MAX_DIM)
    pair = np.arange(dim) // 2  # column c uses frequency index i = c // 2
    angle = np.arange(n)[:, None] / np.power(10000.0, 2 * pair / dim)[None, :]  # (n, dim)
    return np.where(np.arange(dim) % 2 == 0, np.sin(angle), np.cos(angle))


def multi_head_attention(
    x, heads: int = 1, w_q=None, w_k=None, w_v=None, mask=None, scale: float | None = None
):
    """Self-attention of the rows of ``x (n, dim)`` with ``heads`` heads.

    Each head's queries, keys and values are ``x @ w[h]`` when the projection
    ``w_q``/``w_k``/``w_v`` (shape ``(heads, dim, d_head)``) is given, else the head's own
    slice of the dimensions (``x`` itself with one head). Unprojected queries and keys need
    ``dim`` to divide by ``heads``; unprojected values do not: with projected queries and
    keys, head ``h`` mixes the ``h``-th of ``heads`` nearly equal slices of the dims
    (``np.array_split``: the first ``dim % heads`` heads get one more), so the output keeps
    ``dim``. Head outputs are concatenated: ``out (n, heads * d_v)``;
    ``weights (heads, n, n)``. ``mask`` is ``(n, n)`` or ``(heads, n, n)``, True = may
    attend. ``scale`` defaults to ``1/√d_k`` of one head (``d_k``: the projection's size).

    >>> x = np.array([[1.0, 0.0, 2.0, 0.0], [0.0, 1.0, 0.0, 2.0]])  # (2 words, dim 4)
    >>> out, w = multi_head_attention(x, heads=2, scale=0.0)
    >>> w.shape, out.shape
    ((2, 2, 2), (2, 4))
    >>> out[0]  # each head averages its own 2 dims of both words
    array([0.5, 0.5, 1. , 1. ])
    >>> w_q = w_k = np.ones((2, 5, 1))  # 5 dims, 2 heads: values split 3 + 2
    >>> multi_head_attention(np.ones((2, 5)), 2, w_q, w_k, scale=0.0)[0].shape
    (2, 5)
    >>> multi_head_attention(np.ones((2, 5)), heads=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.errors.DimensionError: dim 5 does not divide into 2 heads; ...
    """
    x = _float_array(x, "x")
    if x.ndim != 2:
        raise DimensionError(f"x must be (words, dim), got shape {x.shape}")
    heads = check_int("heads", heads, low=1, high=MAX_HEADS)
    n, dim = x.shape
    if (w_q is None or w_k is None) and dim % heads:
        raise DimensionError(
            f"dim {dim} does not divide into {heads} heads; choose a number of heads that "
            "divides it, or give projections w_q and w_k (their size is the head size)"
        )
    q, k = head_inputs(x, heads, w_q, "w_q"), head_inputs(x, heads, w_k, "w_k")
    if w_v is None and dim % heads:  # every head mixes all dims; each keeps its own share
        # (heads, n, dim)
        mixed, weights = scaled_dot_product_attention(q, k, x[None], mask=mask, scale=scale)
        parts = np.array_split(np.arange(dim), heads)
        return np.concatenate([mixed[h][:, cols] for h, cols in enumerate(parts)], axis=1), weights
    out, weights = scaled_dot_product_attention(q, k, head_inputs(x, heads, w_v, "w_v"), mask=mask,
                                                scale=scale)
    return out.transpose(1, 0, 2).reshape(n, -1), weights  # (n, heads * d_v), (heads, n, n)


def head_inputs(x, heads: int, w=None, name: str = "w") -> np.ndarray:
    """``(heads, n, d)``: what each head of :func:`multi_head_attention` reads from the rows
    of ``x (n, dim)`` in one role (query, key or value): ``x @ w[h]`` with a projection
    ``w (heads, dim, d)``, else head ``h``'s own slice of the dimensions.

    >>> head_inputs(np.array([[1.0, 2.0, 3.0, 4.0]]), 2).tolist()
    [[[1.0, 2.0]], [[3.0, 4.0]]]
    """
    x = _float_array(x, "x")
    n, dim = x.shape
    if w is None:
        if dim % heads:
            raise DimensionError(f"dim {dim} does not divide into {heads} heads; give a projection {name}")
        return x.reshape(n, heads, dim // heads).transpose(1, 0, 2)
    w = _float_array(w, name)
    if w.ndim != 3 or w.shape[:2] != (heads, dim):
        raise DimensionError(f"{name} must be (heads={heads}, dim={dim}, d_head), got {w.shape}")
    return x @ w


def random_projections(dim: int, heads: int = 1, d_head: int | None = None, seed=0):
    """Seeded random ``(w_q, w_k, w_v)``, each ``(heads, dim, d_head)``.

    Entries are standard normal scaled by ``1/√dim``, so a projected vector keeps roughly
    the length of the original. ``d_head`` defaults to ``max(1, dim // heads)``; ``seed`` is
    anything ``np.random.default_rng`` takes (an int, or a tuple such as ``(seed, layer)``).

    >>> w_q, w_k, w_v = random_projections(6, heads=2)
    >>> w_q.shape, bool((w_q == random_projections(6, heads=2)[0]).all())
    ((2, 6, 3), True)
    """
    dim = check_int("dim", dim, low=1, high=MAX_DIM)
    heads = check_int("heads", heads, low=1, high=MAX_HEADS)
    d_head = max(1, dim // heads) if d_head is None else check_int("d_head", d_head, low=1, high=MAX_DIM)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((3, heads, dim, d_head)) / math.sqrt(dim)
    return w[0], w[1], w[2]


def check_weights_size(n_words: int, n_layers: int, heads: int, *, work_bytes: int = 0,
                       what: str = "the text", todo: str = "use a shorter text",
                       cli_todo: str | None = None) -> None:
    """Refuse a text whose ``(n_layers, heads, n_words, n_words)`` float32 attention weights
    (plus ``work_bytes`` per head and word pair while one layer is computed) would take
    more than ``WEIGHTS_BUDGET`` bytes: they grow with the square of the words, so a long
    text must be refused before the work starts, with the limit named. ``todo`` says what to
    do; ``cli_todo``, where it differs, what a command-line user can do (``err.cli``).

    >>> check_weights_size(1_000, 6, 12)  # 288 MB: fine
    >>> check_weights_size(10_000, 6, 12, what="text 0", todo="pass attention=False")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: text 0 has 10,000 words: its attention weights (6 layers x 12 heads x 10,000 x 10,000) would take 26.8 GiB, over the 512 MiB limit (1,365 words with 6 layers x 12 heads); pass attention=False
    """  # noqa: E501 (a doctest's expected output, printed whole)
    per_pair = heads * (4 * n_layers + work_bytes)
    if per_pair * n_words**2 > WEIGHTS_BUDGET:
        most = int((WEIGHTS_BUDGET / per_pair) ** 0.5)
        shape = f"{n_layers} layer{'s' * (n_layers != 1)} x {heads} head{'s' * (heads != 1)}"
        problem = (f"{what} has {n_words:,} words: its attention weights ({shape} x {n_words:,} x "
                   f"{n_words:,}) would take {per_pair * n_words**2 / 2**30:.1f} GiB, over the "
                   f"{WEIGHTS_BUDGET >> 20} MiB limit ({most:,} words with {shape})")
        raise InputError(f"{problem}; {todo}", cli=f"{problem}; {cli_todo}" if cli_todo else None)
