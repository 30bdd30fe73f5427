"""``contextlens sublayers`` and ``contextlens patch``: inside a transformer's layers
(:mod:`contextlens.analysis.sublayers`, :mod:`contextlens.analysis.patching`); the attributions
beside occlusion are ``contextlens attention --attribution`` (``cli/experiments.py``).

Each command parses options, calls one library function and presents its result: a table, one
JSON object (``--json``), a figure (``--plot``) and/or its view as one HTML file (``--html``).
"""

from pathlib import Path

import typer

from ..bounds import MAX_PATCH_PREDICTIONS
from . import options as o
from ._common import add_command, fmt, handle_errors, out, say, spinner, table
from .present import present

STAGES_HELP = "layer | attention | ffn"  # analysis.patching.PATCH_POINTS
TRANSFORMER = o.reads(o.option("minilm", "--model", "-m", metavar="NAME", help="A transformer: minilm, "
                               "mpnet, smollm2, a local directory or a Hugging Face id."))


@handle_errors
def sublayers(
    text1: str = typer.Argument(..., metavar="TEXT1", help="A sentence with the word."),
    text2: str = typer.Argument(None, metavar="TEXT2", help="A second sentence with the word (optional): the "
                                "cosine between the two usages after every block."),
    word: str = o.WORD, vectors: str = o.VECTORS, model: str = o.MODEL, engine: str = o.ENGINE,
    precision: str = o.PRECISION, method: str = o.METHOD, alpha: float = o.ALPHA, window: int = o.WINDOW,
    include_self: bool = o.INCLUDE_SELF, heads: int = o.HEADS, n_layers: int = o.N_LAYERS,
    as_json: bool = o.JSON, plot: Path = o.PLOT, html: Path = o.HTML,
) -> None:
    """WORD after the attention block and after the feed-forward block of every layer.

    Per layer and block: how far the block moved the word (cosine distance between its vector
    before and after the block, and the norm of the change) and, with TEXT2, the cosine between
    the two usages after the block. The feed-forward rows are the layers `compare` reports. A
    training-free method (--vectors) has one attention stage per layer and no feed-forward block."""
    from ..analysis.sublayers import sublayers as follow

    o.check_plot(plot)
    o.check_html(html)
    encoder = o.EncoderChoice.given(locals()).encoder()
    with spinner("looking inside the layers..."):
        r = follow(encoder, text1, text2, word)
    title = f"{word!r}, {r['model']}"
    if present(r, as_json, plot=plot, figure=lambda plots: plots.sublayer_bars(r, title=title), html=html,
               view=lambda views: views.sublayers_view(r)):
        return
    two = len(r["sentences"]) == 2
    labels = [f" S{u}" if two else "" for u in range(len(r["sentences"]))]  # usages numbered from 0
    cols = ["layer", "after", *[f"moved{u}" for u in labels], *[f"norm of change{u}" for u in labels]]
    cols += ["cosine S0–S1"] if two else []
    rows = [(x["layer_name"], x["after"], *x["moved"], *x["update_norm"], *([x["cosine"]] if two else []))
            for x in r["rows"]]
    out().print(table(f"{r['word']!r} through every block of {r['model']} (moved: 1 − cos before/after the "
                      "block)",
                      cols, rows, left=2))
    if r["note"]:
        say(r["note"])
    if r["largest_drop"]:
        d = r["largest_drop"]
        say(f"the two usages separate most after the {d['after']} block of layer {d['layer']} "
            f"(cosine −{fmt(d['drop'])}; before the first block {fmt(r['start']['cosine'])})")


@handle_errors
def patch(
    recipient: str = typer.Argument(..., metavar="RECIPIENT", help="The sentence whose word gets the donor's "
                                    "state."),
    donor: str = typer.Argument(..., metavar="DONOR", help="The sentence the state comes from."),
    word: str = o.WORD, model: str = TRANSFORMER, engine: str = o.ENGINE,
    at: str = o.option("layer", "--at", metavar="POINT", help=f"Where in each layer: {STAGES_HELP} (layer: "
                       "its output; attention / ffn: what that block writes before its residual add)."),
    k: int = o.bounded(o.option(5, "-k", metavar="N", help="Causal LMs: next words listed per layer."), 1,
                       MAX_PATCH_PREDICTIONS),
    as_json: bool = o.JSON, plot: Path = o.PLOT, html: Path = o.HTML,
) -> None:
    """Patch WORD's hidden state from DONOR into RECIPIENT at each layer in turn.

    For each layer L, the recipient's pieces of WORD get the donor's states at L (--at), the
    rest of the recipient runs as usual; reported: the patched word's last-layer cosine to the
    donor's word and to the unpatched recipient's, and for a causal LM the next words after
    each patch. WORD must be cut into the same pieces in both sentences."""
    from ..analysis.patching import PATCH_POINTS
    from ..analysis.patching import patch as patch_word
    from ..errors import check_choice

    check_choice("--at", at, PATCH_POINTS)
    o.check_plot(plot)
    o.check_html(html)
    encoder = o.EncoderChoice.given(locals()).encoder()
    with spinner("patching every layer..."):
        r = patch_word(encoder, recipient, donor, word, at=at, k=k)
    if present(r, as_json, plot=plot,
               figure=lambda plots: plots.patch_lines(r, title=f"{word!r} patched, {r['model']}"),
               html=html, view=lambda views: views.patch_view(r)):
        return
    pred = r.get("predictions")
    extra = ["next words after the patch"] if pred else []
    def listed(x) -> list[str]:
        return [", ".join(f"{w['word']} {w['probability']:.3g}" for w in x["next"])] if pred else []

    rows = [(x["layer_name"], x["cosine_to_donor"], x["cosine_to_recipient"], *listed(x)) for x in r["rows"]]
    out().print(table(f"{word!r} from {donor!r} patched into {recipient!r} at each layer ({at}); last-layer "
                      "cosine",
                      ["layer patched", "to donor", "to recipient", *extra], rows, widths={3: 70}))
    say(f"unpatched: cosine {fmt(r['unpatched'])} between the recipient's and the donor's {word!r}")
    if pred:
        say(f"next words ({pred['rule']}): recipient {', '.join(w['word'] for w in pred['recipient'])}; "
            f"donor {', '.join(w['word'] for w in pred['donor'])}")
    elif r.get("unavailable"):
        say(f"no next words: {r['unavailable']['predictions']}")


def register(app: typer.Typer) -> None:
    """Add ``sublayers`` and ``patch`` to ``app``."""
    add_command(app, sublayers)
    add_command(app, patch)
