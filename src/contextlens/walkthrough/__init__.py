"""The walkthrough behind ``make demo``.

:func:`run` computes every number — the course's worked example, five ambiguous words with
GloVe and the training-free mixers, then a real transformer layer by layer — writes a
Markdown report with its figures and a JSON file of the results to ``out_dir``, and
returns the results; the CLI prints a summary.

Floor 10 (ARCHITECTURE.md): imports ``text``, ``files``, :mod:`contextlens.static`,
:mod:`contextlens.encoders`, :mod:`contextlens.analysis` and :mod:`contextlens.plots`; only the
CLI's ``demo`` imports it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from ..files import atomic_output
from . import model_part, static_part
from .static_part import POLYSEMY, worked_example_corpus

__all__ = ["run", "worked_example_corpus", "POLYSEMY"]

log = logging.getLogger(__name__)


def run(
    out_dir: str | Path = "out/demo", *, vectors: str = "glove-6b-50d", model: str | None = "minilm"
) -> dict[str, Any]:
    """Compute the walkthrough; write ``report.md``, ``results.json`` and figures to ``out_dir``.

    ``model=None`` skips part 3 (the transformer).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    log.info("part 1: the worked example")
    results: dict[str, Any] = {"worked_example": static_part.worked_example(out)}
    log.info("part 2: polysemy with %s", vectors)
    results["polysemy"] = static_part.polysemy(out, vectors)
    lines = ["# contextlens walkthrough", "", *static_part.markdown(results)]
    if model is not None:
        log.info("part 3: %s", model)
        results["transformer"] = model_part.transformer_part(out, model)
        lines += model_part.markdown(results["transformer"])
    with atomic_output(out / "results.json") as tmp:
        tmp.write_text(json.dumps(results, indent=1), encoding="utf-8")
    with atomic_output(out / "report.md") as tmp:
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    results["report"] = str(out / "report.md")
    return results
