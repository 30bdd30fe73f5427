"""One row of a bias audit: the same fields for WEAT, SEAT and CEAT, on any model and layer.

>>> from contextlens.bias.sets import WordSets
>>> none = WordSets("career_family", (), (), (), ())
>>> row = BiasResult("career_family", "weat", "glove-6b-50d", None, 1.2345, 0.01, None, 8, 8, 8, 8, none)
>>> list(row.as_dict())[:12]
['test', 'measure', 'model', 'layer', 'effect_size', 'p_value', 'ci', 'n_x', 'n_y', 'n_a', 'n_b', 'missing']
>>> row.missing_count
0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .sets import WordSets

__all__ = ["MEASURES", "BiasResult", "model_label"]

MEASURES = ("weat", "seat", "ceat")


@dataclass(frozen=True)
class BiasResult:
    """The outcome of one association test.

    ``effect_size`` is Caliskan's d (CEAT: the combined effect size); ``p_value`` is
    one-sided; ``ci`` is CEAT's interval (None for WEAT and SEAT); ``n_*`` count the words
    actually used and ``missing`` lists, per set, the words the model could not place.
    ``statistic`` is WEAT's Σ_x s(x) - Σ_y s(y); ``exact`` and ``permutations`` say how the
    p-value was obtained (every partition, or that many seeded random ones). CEAT adds the
    number of ``samples`` and the heterogeneity of their effect sizes: Cochran's ``q``, the
    between-sample variance ``tau2`` and ``i2``.
    """

    test: str
    measure: str
    model: str
    layer: int | None
    effect_size: float
    p_value: float | None
    ci: tuple[float, float] | None
    n_x: int
    n_y: int
    n_a: int
    n_b: int
    missing: WordSets
    statistic: float | None = None
    exact: bool | None = None
    permutations: int | None = None
    samples: int | None = None
    q: float | None = None
    tau2: float | None = None
    i2: float | None = None

    @property
    def missing_count(self) -> int:
        return sum(self.missing.sizes)

    def as_dict(self) -> dict[str, Any]:
        """The JSON row: test, measure, model, layer, effect_size, p_value, ci, n_x ... missing,
        then statistic, exact, permutations, samples, q, tau2 and i2 (None where they do not apply)."""
        return {
            "test": self.test, "measure": self.measure, "model": self.model, "layer": self.layer,
            "effect_size": self.effect_size, "p_value": self.p_value,
            "ci": None if self.ci is None else list(self.ci),
            "n_x": self.n_x, "n_y": self.n_y, "n_a": self.n_a, "n_b": self.n_b,
            "missing": self.missing.as_dict(),
            "statistic": self.statistic, "exact": self.exact, "permutations": self.permutations,
            "samples": self.samples, "q": self.q, "tau2": self.tau2, "i2": self.i2,
        }


def model_label(encoder) -> str:
    """What a row's ``model`` says of an encoder: its model (``minilm``), else its kind over
    its table (``static over glove-6b-50d``), else its name."""
    params = encoder.params()
    if params.get("model"):
        return str(params["model"])
    return f"{encoder.name} over {params['vectors']}" if params.get("vectors") else encoder.name
