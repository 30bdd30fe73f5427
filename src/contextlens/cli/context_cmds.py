"""``contextlens contextualize`` and ``contextlens compare``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from .. import plots
from ..analysis.incontext import compare as compare_usages
from ..analysis.incontext import contextualize as contextualize_word
from ..encoders.registry import STATIC_METHODS, make_encoder, method_options
from ._common import console, fmt, handle_errors, print_json
from .static_cmds import VECTORS_HELP

# Options shared by both commands (declared once, used as defaults).
WORD = typer.Option(..., "--word", "-w", help="The target word.")
VECTORS = typer.Option("glove-6b-50d", help=VECTORS_HELP)
ALPHA = typer.Option(None, help="average: weight of the word's own vector (0 = neighbours only).")
WINDOW = typer.Option(None, help="Context window in words each side (default: whole sentence).")
SELF = typer.Option(None, "--include-self/--exclude-self", help="attention: may the word attend to itself.")
CAUSAL = typer.Option(None, "--causal/--bidirectional", help="attention: only look left.")
POSITIONS = typer.Option(None, help="attention: add positional encodings (sinusoidal).")
HEADS = typer.Option(None, help="attention: number of heads.")
PROJECTIONS = typer.Option(None, help="attention: 'random' (seeded) W_Q/W_K/W_V per head.")
SCALE = typer.Option(None, help="attention: score scale (default 1/sqrt(d)).")
SEED = typer.Option(None, help="attention: seed of random projections.")
MODEL = typer.Option(None, "--model", "-m", help="A transformer (minilm, mpnet, smollm2, a directory or "
                     "a Hugging Face id) instead of --vectors; reports every layer.")
JSON = typer.Option(False, "--json", help="Print one JSON object.")
PLOT = typer.Option(None, "--plot", help="Write a figure (.png, .svg or .pdf).")


def _encoder(model, method, vectors, alpha, window, include_self, causal, positions, heads,
             projections, scale, seed):
    if model is not None:
        return make_encoder(model=model)
    options = method_options(method, alpha=alpha, window=window, include_self=include_self,
                             causal=causal, positions=positions, heads=heads,
                             projections=projections, scale=scale, seed=seed)
    return make_encoder(method, vectors=vectors, **options)


def register(app: typer.Typer) -> None:
    @app.command()
    @handle_errors
    def contextualize(
        text: str = typer.Argument(..., help="The sentence."),
        word: str = WORD,
        vectors: str = VECTORS,
        method: str = typer.Option("average", help="average | attention"),
        occurrence: int = typer.Option(None, help="Which occurrence of the word (0-based)."),
        probe: list[str] = typer.Option([], "--probe", "-p", help="Probe word(s) to measure against."),
        alpha: float = ALPHA, window: int = WINDOW, include_self: bool = SELF, causal: bool = CAUSAL,
        positions: str = POSITIONS, heads: int = HEADS, projections: str = PROJECTIONS,
        scale: float = SCALE, seed: int = SEED, model: str = MODEL,
        layer: int = typer.Option(-1, help="Layer whose weights and vector to show (-1: the last)."),
        as_json: bool = JSON, plot: Path = PLOT,
    ) -> None:
        """The weight WORD gave each context word, and how its vector moved toward probes."""
        encoder = _encoder(model, method, vectors, alpha, window, include_self, causal, positions, heads,
                           projections, scale, seed)
        r = contextualize_word(encoder, text, word, probes=probe, occurrence=occurrence, layer=layer)
        if plot:
            plots.save_figure(plots.weights_bar(r["weights"], highlight=r["index"],
                                                title=f"{r['word']!r} in {text!r} ({method})"), plot)
        if as_json:
            print_json(r)
            return
        source = model or f"{method} over {vectors}"
        t = Table(title=f"weights {r['word']!r} gave ({source}, {r['layer_name']})",
                  title_justify="left")
        for col in ("word", "weight", ""):
            t.add_column(col, justify="right" if col == "weight" else "left")
        for w in r["weights"]:
            mark = " (itself)" if w["position"] == r["index"] else ""
            t.add_row(w["word"] + mark, fmt(w["weight"]), "█" * round(30 * w["weight"]))
        console.print(t)
        if r["probes"]:
            p = Table(title="cosine to probe words", title_justify="left")
            for col in ("probe", "static", "contextual", "change"):
                p.add_column(col, justify="left" if col == "probe" else "right")
            for row in r["probes"]:
                delta = row["contextual_cosine"] - row["static_cosine"]
                p.add_row(row["probe"], fmt(row["static_cosine"]), fmt(row["contextual_cosine"]),
                          f"{delta:+.3f}")
            console.print(p)

    @app.command()
    @handle_errors
    def compare(
        text1: str = typer.Argument(..., help="First sentence."),
        text2: str = typer.Argument(..., help="Second sentence."),
        word: str = WORD,
        vectors: str = VECTORS,
        method: str = typer.Option("average", help=" | ".join(STATIC_METHODS)),
        alpha: float = ALPHA, window: int = WINDOW, include_self: bool = SELF, causal: bool = CAUSAL,
        positions: str = POSITIONS, heads: int = HEADS, projections: str = PROJECTIONS,
        scale: float = SCALE, seed: int = SEED, model: str = MODEL, as_json: bool = JSON,
        plot: Path = PLOT,
    ) -> None:
        """Cosine between WORD in TEXT1 and in TEXT2 at every layer (layer 0 = static)."""
        encoder = _encoder(model, method, vectors, alpha, window, include_self, causal, positions, heads,
                           projections, scale, seed)
        r = compare_usages(encoder, text1, text2, word)
        if plot:
            plots.save_figure(plots.layer_cosines({f"{word}: 1 vs 2": r["cosine_by_layer"]},
                                                  r["layer_names"], title=f"{word!r}, {model or method}"), plot)
        if as_json:
            print_json(r)
            return
        t = Table(title=f"{word!r} in the two sentences ({model or method})", title_justify="left")
        t.add_column("layer")
        t.add_column("cosine", justify="right")
        for name, c in zip(r["layer_names"], r["cosine_by_layer"]):
            t.add_row(name, fmt(c))
        console.print(t)
