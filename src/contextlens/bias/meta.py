"""The random-effects combination CEAT uses (Guo & Caliskan, AIES 2021): DerSimonian–Laird.

CEAT draws N samples (one random context per word of X, Y, A, B), computes the WEAT effect
size ``ES_i`` of each and its *in-sample variance* ``V_i`` = the sample variance
(``ddof=1``) of ``s(w, A, B)`` over X ∪ Y, and combines them as follows (this is what the
authors' released code, ``ceat_meta``, does; DerSimonian & Laird 1986):

- fixed-effect weights ``W_i = 1 / V_i`` and Cochran's ``Q = Σ W_i ES_i² - (Σ W_i ES_i)² / Σ W_i``;
- the between-sample variance ``τ² = (Q - (N - 1)) / (Σ W_i - Σ W_i² / Σ W_i)``, or 0 when
  Q < N - 1 (no more spread than the in-sample variances explain);
- random-effects weights ``v_i = 1 / (V_i + τ²)``; the combined effect size
  ``CES = Σ v_i ES_i / Σ v_i``, with standard error ``SE = sqrt(1 / Σ v_i)``;
- ``z = CES / SE``; the released code reports the one-sided ``P(Z ≥ z)`` (``norm.sf``), and
  so does ``p_value`` here, like WEAT's one-sided test.

Beyond the paper we report the interval ``CES ± z_{(1+level)/2} · SE`` and Higgins' ``I² =
max(0, (Q - df) / Q)``, the share of the spread that is heterogeneity rather than noise.

Worked example, by hand: effects 0.2 and 0.6 with variances 0.01 and 0.04.
W = (100, 25); fixed mean = (20 + 15) / 125 = 0.28; Q = 100·0.08² + 25·0.32² = 3.2 on 1
degree of freedom; C = 125 - (100² + 25²) / 125 = 40; τ² = (3.2 - 1) / 40 = 0.055;
v = (1/0.065, 1/0.095); CES = (0.2/0.065 + 0.6/0.095) / (1/0.065 + 1/0.095) = 0.3625.

>>> r = random_effects([0.2, 0.6], [0.01, 0.04])
>>> round(r.q, 6), r.df, round(r.tau2, 6), round(r.i2, 4), round(r.effect, 4), round(r.se, 4)
(3.2, 1, 0.055, 0.6875, 0.3625, 0.1965)
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import stats

from ..errors import DimensionError, InputError

__all__ = ["RandomEffects", "random_effects"]


class RandomEffects(NamedTuple):
    """A DerSimonian–Laird random-effects combination of effect sizes."""

    effect: float  # combined effect size (CES)
    se: float  # its standard error
    ci: tuple[float, float]  # its confidence interval at ``level``
    z: float  # effect / se
    p_value: float  # one-sided P(Z >= z), as CEAT's released code
    q: float  # Cochran's Q
    df: int  # samples - 1
    tau2: float  # between-sample variance τ²
    i2: float  # Higgins' I² in [0, 1)
    level: float


def random_effects(effects, variances, *, level: float = 0.95) -> RandomEffects:
    """Combine effect sizes with their in-sample variances (DerSimonian–Laird).

    When the effects spread no more than their variances predict, τ² = 0 and the result is
    the fixed-effect (inverse-variance) mean:

    >>> r = random_effects([0.5, 0.5, 0.5], [0.1, 0.1, 0.1])
    >>> r.tau2, round(r.effect, 6), round(r.se, 6)           # SE = sqrt(1 / (3 / 0.1))
    (0.0, 0.5, 0.182574)
    """
    es = np.asarray(effects, dtype=np.float64)  # (samples,)
    v = np.asarray(variances, dtype=np.float64)  # (samples,)
    if es.ndim != 1 or v.shape != es.shape:
        raise DimensionError(f"effects and variances must be 1-D of one length, got {es.shape} and {v.shape}")
    if es.size < 2:
        raise InputError(f"a random-effects combination needs at least 2 samples, got {es.size}")
    if not (np.all(np.isfinite(es)) and np.all(np.isfinite(v))):
        raise InputError("effects and variances must be finite (no NaN or infinity)")
    if np.any(v <= 0):
        raise InputError("every variance must be > 0 (a sample whose scores are all equal has none)")
    if not 0 < level < 1:
        raise InputError(f"level must be between 0 and 1 (e.g. 0.95), got {level!r}")
    w = 1.0 / v
    sw = w.sum()
    q = float(np.sum(w * es**2) - np.sum(w * es) ** 2 / sw)
    df = es.size - 1
    c = float(sw - np.sum(w**2) / sw)
    tau2 = (q - df) / c if q > df and c > 0 else 0.0
    w_star = 1.0 / (v + tau2)
    effect = float(np.sum(w_star * es) / w_star.sum())
    se = math.sqrt(1.0 / float(w_star.sum()))
    z = effect / se
    half = float(stats.norm.ppf(0.5 + level / 2)) * se
    i2 = max(0.0, (q - df) / q) if q > 0 else 0.0
    return RandomEffects(effect, se, (effect - half, effect + half), z, float(stats.norm.sf(z)),
                         q, df, float(tau2), i2, level)
