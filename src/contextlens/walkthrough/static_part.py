"""Walkthrough parts 1 and 2: the course's worked example, then five ambiguous words
with a static table (GloVe 6B-50d) and the two training-free mixers."""

from __future__ import annotations

import logging
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from .. import plots
from ..analysis.incontext import compare, contextualize
from ..analysis.projection import project
from ..encoders.mixing import NeighbourAverage, SelfAttention
from ..encoders.registry import resolve_vectors
from ..text import split_lines

__all__ = ["worked_example", "polysemy", "worked_example_corpus", "markdown", "POLYSEMY"]

log = logging.getLogger(__name__)

# Two senses per word, in sentences of our own, with one probe word per sense.
POLYSEMY: dict[str, list[tuple[str, str]]] = {
    "bank": [("She paid her salary into the bank and asked about a loan.", "money"),
             ("They pulled the canoe onto the muddy bank of the river.", "river")],
    "bat": [("He swung the bat and hit the ball over the fence.", "baseball"),
            ("At dusk a bat flew out of the cave to hunt insects.", "animal")],
    "light": [("Turn on the light because the room is dark.", "lamp"),
              ("The suitcase was so light that a child could carry it.", "heavy")],
    "lead": [("Old lead pipes can poison the drinking water.", "metal"),
             ("She will lead the team through the final season.", "guide")],
    "spring": [("The flowers bloom every spring after the snow melts.", "summer"),
               ("A broken spring in the old mattress poked his back.", "coil")],
}


def worked_example_corpus() -> list[str]:
    """The 16 phrases of the worked 'bank' example (packaged data file ``data/worked_example.txt``)."""
    text = resources.files("contextlens").joinpath("data", "worked_example.txt").read_text("utf-8")
    return [line for line in split_lines(text) if line.strip() and not line.startswith("#")]


def worked_example(out: Path) -> dict[str, Any]:
    from ..static.cooccurrence import count_table

    table = count_table(worked_example_corpus(), window=3,
                        vocab_order="alphabetical")
    result: dict[str, Any] = {
        "vocabulary": len(table),
        "static": {p: table.similarity("bank", p) for p in ("money", "river")},
        "average": {}, "attention": {}, "figures": [],
    }
    average = NeighbourAverage(table, alpha=0.0)
    attention = SelfAttention(table, include_self=False)
    for sentence in ("deposited money bank", "sat bank river"):
        r = contextualize(average, sentence, "bank", probes=["money", "river"])
        result["average"][sentence] = {p["probe"]: p["contextual_cosine"] for p in r["probes"]}
        a = contextualize(attention, sentence, "bank")
        result["attention"][sentence] = {w["word"]: w["weight"] for w in a["weights"] if w["word"] != "bank"}
        name = f"worked_attention_{sentence.replace(' ', '_')}.png"
        plots.save_figure(plots.weights_bar(a["weights"], highlight=a["index"],
                                            title=f"attention of 'bank' in '{sentence}'"), out / name)
        result["figures"].append(name)
    return result


def polysemy(out: Path, vectors: str) -> dict[str, Any]:
    table = resolve_vectors(vectors)
    encoders = {"average": NeighbourAverage(table, alpha=0.0, window=5),
                "attention": SelfAttention(table, include_self=False, window=5)}
    words: dict[str, Any] = {}
    for word, usages in POLYSEMY.items():
        (s1, p1), (s2, p2) = usages
        entry: dict[str, Any] = {"sentences": [s1, s2], "probes": [p1, p2], "methods": {}}
        points, labels, kinds, arrows = [table.vector(p) for p in (p1, p2)], [p1, p2], ["probe"] * 2, []
        points.append(table.vector(word))
        labels.append(f"{word} (static)")
        kinds.append("static")
        for method, encoder in encoders.items():
            cmp = compare(encoder, s1, s2, word)
            rows = [contextualize(encoder, s, word, probes=[p1, p2]) for s in (s1, s2)]
            entry["methods"][method] = {
                "cosine_between_usages": cmp["cosine_by_layer"][-1],
                "probes": [{p["probe"]: (p["static_cosine"], p["contextual_cosine"]) for p in r["probes"]}
                           for r in rows],
                "weights": [[(w["word"], w["weight"]) for w in r["weights"]] for r in rows],
            }
            if method == "attention":
                for k, r in enumerate(rows):
                    enc = encoder.encode([r["sentence"]])[0]
                    points.append(enc.layers[-1, r["index"]])
                    labels.append(f"{word} in s{k}")
                    kinds.append("contextual")
                    arrows.append((2, len(points) - 1))
                name = f"weights_{word}.png"
                plots.save_figure(plots.weights_bar(rows[0]["weights"], highlight=rows[0]["index"],
                                                    title=f"attention of {word!r} in s0"), out / name)
                entry["weights_figure"] = name
        xy = project(np.vstack(points))
        name = f"pca_{word}.png"
        plots.save_figure(plots.static_vs_contextual(
            xy, labels, kinds, arrows=arrows,
            title=f"{word!r}: static vs contextualised (attention), PCA of {table.name}"), out / name)
        entry["pca_figure"] = name
        words[word] = entry
    return {"vectors": table.name, "words": words}


def markdown(results: dict[str, Any]) -> list[str]:
    w = results["worked_example"]
    lines = [
        "## 1. The worked example: 16 short phrases about a 'bank'", "",
        f"16 phrases, window 3, raw co-occurrence counts over the sorted vocabulary ({w['vocabulary']} "
        "words).",
        "", "| | cos to money | cos to river |", "|---|---:|---:|",
        f"| static bank | {w['static']['money']:.3f} | {w['static']['river']:.3f} |",
    ]
    for s, cos in w["average"].items():
        lines.append(f"| bank averaged over '{s}' (self excluded) | {cos['money']:.3f} | "
                     f"{cos['river']:.3f} |")
    lines += ["", "Attention of bank (q = k = v = the count vectors, self excluded):", ""]
    for s, weights in w["attention"].items():
        lines.append(f"- '{s}': " + ", ".join(f"{k} {v:.3f}" for k, v in weights.items()))
    lines += [""] + [f"![]({f})" for f in w["figures"]]
    p = results["polysemy"]
    lines += ["", f"## 2. Five ambiguous words with {p['vectors']}", "",
              "Each word in two sentences (s0, s1). Static vectors are one row per word, so the two "
              "usages have cosine 1.0; mixing in the neighbours (window 5, the word itself excluded) "
              "separates them.", "",
              "| word | method | cos(s0, s1) | s0: cos to probe1 / probe2 | s1: cos to probe1 / probe2 |",
              "|---|---|---:|---:|---:|"]
    for word, e in p["words"].items():
        p1, p2 = e["probes"]
        static = e["methods"]["average"]["probes"][0]
        lines.append(f"| {word} | static | 1.000 | {p1} {static[p1][0]:.3f} / {p2} {static[p2][0]:.3f} | "
                     "same |")
        for method, m in e["methods"].items():
            a, b = m["probes"]
            lines.append(f"| {word} | {method} | {m['cosine_between_usages']:.3f} | "
                         f"{a[p1][1]:.3f} / {a[p2][1]:.3f} | {b[p1][1]:.3f} / {b[p2][1]:.3f} |")
    for word, e in p["words"].items():
        lines += ["", f"### {word}", "", f"- s0: {e['sentences'][0]}", f"- s1: {e['sentences'][1]}", "",
                  f"![]({e['weights_figure']}) ![]({e['pca_figure']})"]
    return lines
