"""``contextlens contextualize``, ``compare`` and ``compare-sentences``."""

from pathlib import Path

import typer

from . import options as o
from ._common import add_command, fmt, handle_errors, out, say, table
from .present import present


@handle_errors
def contextualize(
    text: str = o.TEXT, word: str = o.WORD, occurrence: str = o.OCCURRENCE, probe: list[str] = o.PROBE,
    vectors: str = o.VECTORS, model: str = o.MODEL, engine: str = o.ENGINE, precision: str = o.PRECISION,
    method: str = o.METHOD, alpha: float = o.ALPHA,
    window: int = o.WINDOW, include_self: bool = o.INCLUDE_SELF, causal: bool = o.CAUSAL,
    positions: str = o.POSITIONS, heads: int = o.HEADS, n_layers: int = o.N_LAYERS,
    projections: str = o.PROJECTIONS, scale: float = o.SCALE, seed: int = o.SEED,
    layer: int = o.layer_option(help="The layer whose weights and vector to show (0 = the static row, then "
                                     "the model's own numbers; -1 = the last)."),
    as_json: bool = o.JSON, plot: Path = o.PLOT,
) -> None:
    """The weight WORD gave each context word, and how its vector moved toward probes."""
    from ..analysis.incontext import contextualize as contextualize_word

    o.check_plot(plot)
    encoder = o.EncoderChoice.given(locals()).encoder()
    r = contextualize_word(encoder, text, word, probes=probe, occurrence=o.parse_occurrence(occurrence),
                           layer=layer)
    source = model or f"{method or o.DEFAULT_METHOD} over {vectors or o.DEFAULT_VECTORS}"
    title = f"{r['word']!r} in {text!r} ({model or method or o.DEFAULT_METHOD})"
    if present(r, as_json, plot=plot,
               figure=lambda plots: plots.weights_bar(r["weights"], highlight=r["index"], title=title)):
        return
    rows = [(w["word"] + (" (itself)" if w["position"] == r["index"] else ""), w["weight"],
             "█" * round(30 * w["weight"])) for w in r["weights"]]
    out().print(table(f"weights {r['word']!r} gave ({source}, {r['layer_name']})", ["word", "weight", ""],
                      rows, left="lrl"))
    if r["probes"]:
        out().print(table("cosine to probe words", ["probe", "static", "contextual", "change"],
                          [(p["probe"], p["static_cosine"], p["contextual_cosine"],
                            f"{p['contextual_cosine'] - p['static_cosine']:+.3f}") for p in r["probes"]]))


@handle_errors
def compare(
    text1: str = typer.Argument(..., metavar="TEXT1", help="The first sentence."),
    text2: str = typer.Argument(..., metavar="TEXT2", help="The second sentence."),
    word: str = o.WORD, vectors: str = o.VECTORS, model: str = o.MODEL, engine: str = o.ENGINE,
    precision: str = o.PRECISION, method: str = o.METHOD,
    alpha: float = o.ALPHA, window: int = o.WINDOW, include_self: bool = o.INCLUDE_SELF,
    causal: bool = o.CAUSAL, positions: str = o.POSITIONS, heads: int = o.HEADS, n_layers: int = o.N_LAYERS,
    projections: str = o.PROJECTIONS,
    scale: float = o.SCALE, seed: int = o.SEED, static_vectors: str = o.STATIC_VECTORS,
    as_json: bool = o.JSON, plot: Path = o.PLOT, html: Path = o.HTML,
) -> None:
    """Cosine between WORD in TEXT1 and in TEXT2 at every layer (layer 0 = static)."""
    from ..analysis.incontext import compare as compare_usages

    o.check_plot(plot)
    o.check_html(html)
    encoder = o.EncoderChoice.given(locals()).encoder()
    r = compare_usages(encoder, text1, text2, word, static=o.static_table(static_vectors))
    source = model or method or o.DEFAULT_METHOD
    def figure(plots):
        return plots.layer_cosines({f"{word}: S0–S1": r["cosine_by_layer"]}, r["layer_names"],
                                   title=f"{word!r}, {source}")

    if present(r, as_json, plot=plot, figure=figure, html=html, view=lambda views: views.layers_view(r)):
        return
    static = [(f"static: {r['static']['vectors']}", r["static"]["cosine"])] if static_vectors else []
    out().print(table(f"{word!r} in the two sentences ({source})", ["layer", "cosine"],
                      [*static, *zip(r["layer_names"], r["cosine_by_layer"])]))


@handle_errors
def compare_sentences(
    text1: str = typer.Argument(..., metavar="TEXT1", help="The first sentence."),
    text2: str = typer.Argument(..., metavar="TEXT2", help="The second sentence."),
    model: str = o.MODEL, vectors: str = o.VECTORS, method: str = o.METHOD,
    pooling: str = o.option("mean", "--pooling", metavar="KIND",
                            help="How a sentence's vectors become one: mean | cls | max (a transformer pools "
                            "every piece, as sentence-transformers)."),
    layer: int = o.LAYER, as_json: bool = o.JSON,
) -> None:
    """Cosine between the sentence vectors of TEXT1 and TEXT2 (the last layer: the model's own similarity)."""
    from ..analysis.sentences import compare_sentences as compare_two

    encoder = o.EncoderChoice.given(locals()).encoder()
    r = compare_two(encoder, text1, text2, pooling=pooling, layer=layer)
    if present(r, as_json):
        return
    say(f"cosine {fmt(r['cosine'])} ({pooling} pooling, {r['layer_name']})")
    out().print(table(f"sentence cosine by layer ({model or method or o.DEFAULT_METHOD}, {pooling} pooling)",
                      ["layer", "cosine"], zip(r["layer_names"], r["cosine_by_layer"])))


def register(app: typer.Typer) -> None:
    """Add ``contextualize``, ``compare`` and ``compare-sentences`` to ``app``."""
    add_command(app, contextualize)
    add_command(app, compare)
    add_command(app, compare_sentences, "compare-sentences")
