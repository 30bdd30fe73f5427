"""How a command presents its result: a figure (``--plot``), the interactive views (``--html``),
one JSON object (``--json``), else its tables; and the WordNet lines two commands share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._common import fmt, print_json, say


def present(result: Any, as_json: bool, *, plot: Path | None = None, figure: Callable | None = None,
            html: Path | None = None, view: Callable | None = None) -> bool:
    """Send ``result`` where the options ask, in this order: the figure to ``plot``
    (``figure(plots)`` draws it with :mod:`contextlens.plots`), the views to ``html``
    (``view(views)``: a View or Page of :mod:`contextlens.views`), the JSON on stdout
    (``as_json``). True when the JSON was printed: the command then prints no table.

    >>> present({"cosine": 0.5}, True)
    {"cosine": 0.5}
    True
    """
    if plot and figure is not None:
        from .. import plots

        plots.save_figure(figure(plots), plot)
    if html and view is not None:
        from .. import views

        view(views).save_html(html)
    if as_json:
        print_json(result)
    return as_json


def say_wordnet(senses: list[dict], indent: str = "  ") -> None:
    """Print a cluster's WordNet senses (``index senses --wordnet``, ``senses --wordnet``),
    one line each, best first: similarity, key, synset, gloss, and how often SemCor tags it
    (or where its embedding comes from)."""
    for i, w in enumerate(senses):
        label = "WordNet" if i == 0 else "       "
        seen = f"{w['semcor_count']} in SemCor" if w.get("semcor_count") else f"from its {w.get('source')}"
        say(f"{indent}{label} {fmt(w['similarity'])}  {w['key']} {w['synset']}: {w['gloss']} ({seen})")


def say_wordnet_unseen(result: dict) -> None:
    """Print the word's WordNet senses that have no embedding, if any (their glosses are in
    ``--json``)."""
    if result.get("wordnet_unseen"):
        say(f"\nWordNet senses of {result['wordnet_lemma']!r} with no embedding, so not matched "
            f"(glosses in --json): {', '.join(u['synset'] for u in result['wordnet_unseen'])}")
