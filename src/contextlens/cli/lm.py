"""``contextlens predict`` and ``contextlens lens``: what a model with its language-model
head expects at a position (:class:`contextlens.encoders.lm.LanguageModel`)."""

from pathlib import Path

import typer

from ..bounds import MAX_PREDICTIONS
from . import options as o
from ._common import add_command, fmt, handle_errors, out, say, spinner, table
from .present import present

LM_MODEL = o.reads(o.option(..., "--model", "-m", metavar="NAME",
                            help="A model with its language-model head: smollm2 (next word), a local "
                            "directory or a Hugging Face id of a causal LM or a *ForMaskedLM."))


def _load(model: str, kind: str | None = None, engine: str = "auto"):
    from ..encoders.lm import LanguageModel

    with spinner(f"loading {model}..."):
        return LanguageModel(model, kind=kind, engine=engine)


@handle_errors
def predict(
    text: str = typer.Argument(..., metavar="TEXT",
                               help="A text with one [MASK] (masked LM), or the start of a text to continue "
                               "(causal LM)."),
    model: str = LM_MODEL,
    k: int = o.bounded(o.option(10, "-k", metavar="N", help="How many words."), 1, MAX_PREDICTIONS),
    as_json: bool = o.JSON,
) -> None:
    """The most probable words at TEXT's [MASK], or next after TEXT, as whole words."""
    r = _load(model).predict(text, k=k)
    if present(r, as_json):
        return
    what = "at the [MASK]" if r.kind == "masked" else "next"
    out().print(table(f"{r.model}: the words {what} in {text!r}", ["#", "word", "probability", "pieces"],
                      [(i, p.word, f"{p.probability:.4g}", " ".join(repr(x) for x in p.pieces))
                       for i, p in enumerate(r.predictions, 1)], left="rlrl"))
    say(f"{r.rule}{'' if r.exact else ' (search cut off: a word below the last could rank higher)'}")


@handle_errors
def lens(
    text: str = typer.Argument(..., metavar="TEXT", help="The text to read the lens in."),
    model: str = LM_MODEL,
    position: int = o.bounded(o.option(None, "--position", metavar="N",
                                       help="The word after which to read the "
                                       "next-word distribution, 0-based (default: the last; -1 counts from "
                                       "the end)."), -10**6, 10**6),
    track: list[str] = o.option([], "--track", "-t", metavar="WORD",
                                help="A next word whose rank and probability to follow layer by layer "
                                "(repeat for more)."),
    k: int = o.bounded(o.option(3, "-k", metavar="N", help="Best next words shown per layer."), 1,
                       MAX_PREDICTIONS),
    tuned: bool = o.flag("--tuned", help="Read through the tuned lens too (Belrose et al. 2023): one affine "
                         "translator per layer, trained once per model on the data folder's corpora and "
                         "cached (minutes, with progress)."),
    data_dir: Path = o.DATA_DIR,
    as_json: bool = o.JSON, plot: Path = o.PLOT, html: Path = o.HTML,
) -> None:
    """The logit lens: each layer's best next words after word --position, and tracked words.

    --html writes the lens view: the layers × k grid of best next words and the tracked
    words' rank and probability layer by layer (with --tuned, for either lens)."""
    o.check_plot(plot)
    o.check_html(html)
    lm = _load(model, kind="causal", engine="torch" if tuned else "auto")  # both lenses on one engine
    r = lm.lens(text, position, k=k, track=track)
    data = r.as_dict()
    if tuned:
        return _tuned(lm, text, position, k, track, data, data_dir, as_json, plot, html)
    title = f"{r.model}: after {r.word!r} (word {r.position})"
    if present(data, as_json, plot=plot, figure=lambda plots: plots.lens_ranks(data, title=title), html=html,
               view=lambda views: views.lens_view(data)):
        return
    tracked = [t["word"] for t in data["layers"][0]["tracked"]]
    cols = ["layer", f"top {k}"] + [c for w in tracked for c in (f"{w}: rank", "probability")]
    rows = [(x["layer_name"], ", ".join(f"{w['word']} {fmt(w['probability'])}" for w in x["top"]),
             *[v for t in x["tracked"] for v in (t["rank"], f"{t['probability']:.3g}")])
            for x in data["layers"]]
    out().print(table(f"{r.model}: the logit lens after {r.word!r} (word {r.position}) in {text!r}", cols,
                      rows, left="ll" + "r" * (2 * len(tracked))))


def _tuned(lm, text: str, position, k: int, track, data: dict, data_dir, as_json: bool, plot, html) -> None:
    """``lens --tuned``: the tuned lens (trained once, cached) beside the logit lens."""
    from ..datasets.registry import resolve_data_dir
    from ..encoders.tuned_lens import tuned_lens_for

    lens = tuned_lens_for(lm, resolve_data_dir(data_dir) / "corpora")  # its progress: the library's steps
    data["tuned"] = {**lm.lens(text, position, k=k, track=track, tuned=lens).as_dict(), "kl": lens.kl_,
                     "settings": vars(lens.settings), "trained_in_seconds": lens.seconds_}
    title = f"{lm.name}: logit and tuned lens after {data['word']!r}"
    if present(data, as_json, plot=plot, figure=lambda plots: plots.tuned_lens_lines(data, title=title),
               html=html, view=lambda views: views.lens_view(data)):
        return
    words = [t["word"] for t in data["layers"][0]["tracked"]]
    rows = []
    kl = zip(lens.kl_["logit"], lens.kl_["tuned"])
    for x, y, (kl_l, kl_t) in zip(data["layers"], data["tuned"]["layers"], kl):
        ranks = [v for a, b in zip(x["tracked"], y["tracked"]) for v in (a["rank"], b["rank"])]
        top_l, top_t = (", ".join(w["word"] for w in z["top"]) for z in (x, y))
        rows.append((x["layer_name"], top_l, top_t, kl_l, kl_t, *ranks))
    cols = ["layer", f"logit lens top {k}", f"tuned lens top {k}", "KL logit", "KL tuned",
            *[c for w in words for c in (f"{w}: rank logit", "tuned")]]
    out().print(table(f"{lm.name}: after {data['word']!r} (word {data['position']}) in {text!r}; KL (nats) "
                      "from the final distribution on held-out corpus text", cols, rows, left=3,
                      widths={1: 30, 2: 30}))


def register(app: typer.Typer) -> None:
    """Add ``predict`` and ``lens`` to ``app``."""
    add_command(app, predict)
    add_command(app, lens)
