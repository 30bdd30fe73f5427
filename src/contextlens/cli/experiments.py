"""``contextlens explore | senses | layers | attention | rank | geometry``: the experiments.

Each command parses options, calls one library function (``contextlens.analysis``), and
presents its result as a Rich table, one JSON object (``--json``) and/or a figure
(``--plot PATH``, PNG/SVG/PDF by suffix).
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich.table import Table

from .. import plots
from ..analysis.attribution import attribute
from ..analysis.explore import explore as explore_words
from ..analysis.geometry import geometry as measure_geometry
from ..analysis.layers import layer_divergence
from ..analysis.projection import PROJECTIONS
from ..analysis.ranking import DEFAULT_TEMPLATE, rank_pairs, read_pairs
from ..analysis.senses import senses as probe_senses
from ..analysis.usages import read_lines, read_sentences
from ..encoders.registry import STATIC_METHODS, make_encoder, method_options
from ..errors import InputError, check_choice
from ._common import console, fmt, handle_errors, print_json
from .static_cmds import VECTORS_HELP

DEFAULT_VECTORS = "glove-6b-50d"
VECTORS = typer.Option(None, "--vectors", help=f"{VECTORS_HELP} Default {DEFAULT_VECTORS} (unless --model).")
MODEL = typer.Option(None, "--model", help="A transformer: registry name (minilm...), directory or HF id.")
METHOD = typer.Option("attention", "--method", help=f"With --vectors: {' | '.join(STATIC_METHODS)}.")
HEADS = typer.Option(None, "--heads", help="attention: number of heads.")
N_LAYERS = typer.Option(None, "--n-layers", help="attention: stacked attention layers.")
WINDOW = typer.Option(None, "--window", help="average / attention: context window (words each side).")
ALPHA = typer.Option(None, "--alpha", help="average: weight of the word's own vector.")
SENTENCES = typer.Option(None, "--sentences", help="A file of sentences, one per line (# comments ignored).")
SENTENCE = typer.Option([], "--sentence", "-s", help="A sentence (repeat for more).")
LAYER = typer.Option(-1, "--layer", help="Layer: 0 = static, -1 = last.")
OCCURRENCE = typer.Option(None, "--occurrence", help="Which occurrence of the word in a sentence: 0, 1... or all.")
SKIP = typer.Option(False, "--skip-missing", help="Skip sentences that lack the word instead of failing.")
PROJECTION = typer.Option(None, "--projection", help=" | ".join(PROJECTIONS))
SEED = typer.Option(0, "--seed", help="Seed of projections and sampling.")
JSON = typer.Option(False, "--json", help="Print one JSON object.")
PLOT = typer.Option(None, "--plot", help="Write a figure (.png, .svg or .pdf).")


def _encoder(vectors, model, method, heads=None, n_layers=None, window=None, alpha=None):
    if vectors and model:
        raise InputError("give --vectors (a static table) or --model (a transformer), not both")
    if model:
        return make_encoder(model=model)
    options = method_options(method, alpha=alpha, window=window, heads=heads, n_layers=n_layers)
    return make_encoder(method, vectors=vectors or DEFAULT_VECTORS, **options)


def _early(plot: Path | None, projection: str | None = None) -> None:
    """Check the cheap options before any encoding work."""
    if plot is not None:
        plots.figure_format(plot)
    if projection is not None:
        check_choice("projection", projection, PROJECTIONS)


def _table(title: str, columns: list[str], rows, left: int = 1) -> Table:
    t = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if i < left else "right")
    for row in rows:
        t.add_row(*[fmt(v) if isinstance(v, float) else ("–" if v is None else str(v)) for v in row])
    return t


def _occurrence(value: str | None) -> int | str | None:
    if value is None or value == "all":
        return value
    if not value.isdigit():
        raise InputError(f"--occurrence must be a whole number (0 = first) or 'all', got {value!r}")
    return int(value)


def split_pairs(texts: list[str]) -> list[tuple[str, str]]:
    """``T1 T2 --pair T3 T4 ...`` (as the command line gives it) as pairs of sentences."""
    groups: list[list[str]] = [[]]
    for t in texts:
        if t == "--pair":
            groups.append([])
        elif t.startswith("--"):
            raise InputError(f"unknown option {t!r}; see contextlens layers --help")
        else:
            groups[-1].append(t)
    bad = [i for i, g in enumerate(groups) if len(g) != 2]
    if bad:
        raise InputError(f"pair {bad[0] + 1} has {len(groups[bad[0]])} sentence(s); give exactly two: "
                         "TEXT1 TEXT2 [--pair TEXT3 TEXT4]...")
    return [(a, b) for a, b in groups]


def register(app: typer.Typer) -> None:
    @app.command()
    @handle_errors
    def explore(
        words: list[str] = typer.Argument(..., help="The word(s) to explore."),
        sentences: Path = SENTENCES, sentence: list[str] = SENTENCE, vectors: str = VECTORS,
        model: str = MODEL, method: str = METHOD, heads: int = HEADS, n_layers: int = N_LAYERS,
        window: int = WINDOW, alpha: float = ALPHA, layer: int = LAYER, occurrence: str = OCCURRENCE,
        skip_missing: bool = SKIP, projection: str = PROJECTION, seed: int = SEED,
        as_json: bool = JSON, plot: Path = PLOT,
    ) -> None:
        """Polysemy explorer: cosines between a word's usages, and the spread of several words.

        One word: every sentence must contain it (or --skip-missing). Several words: each
        word's usages are the sentences that contain it.
        """
        _early(plot, projection)
        texts = read_sentences(sentences, sentence)
        encoder = _encoder(vectors, model, method, heads, n_layers, window, alpha)
        r = explore_words(encoder, texts, words, layer=layer, occurrence=_occurrence(occurrence),
                          missing="skip" if skip_missing else None, projection=projection, seed=seed)
        if plot:
            if projection:
                p = r["projection"]
                fig = plots.projection_scatter(p["points"], p["word"], labels=p["sentence"], method=projection,
                                               group_name="", title=f"usages at {r['layer_name']}")
            elif len(r["words"]) == 1:
                w = r["words"][0]
                fig = plots.cosine_heatmap(w["matrix"], w["sentences"],
                                           title=f"{w['word']!r} at {r['layer_name']}: spread {w['spread']:.3f}")
            else:
                fig = plots.spread_bars(r["words"], title=f"spread of usages at {r['layer_name']}")
            plots.save_figure(fig, plot)
        if as_json:
            print_json(r)
            return
        if len(r["words"]) == 1:
            w = r["words"][0]
            t = Table(title=f"cosine between the usages of {w['word']!r} ({r['layer_name']})", title_justify="left")
            t.add_column("#", justify="right")
            t.add_column("sentence")
            for j in range(w["n_usages"]):
                t.add_column(str(j + 1), justify="right")
            for i, (s, row) in enumerate(zip(w["sentences"], w["matrix"])):
                t.add_row(str(i + 1), plots.short(s, 50), *[fmt(c) for c in row])
            console.print(t)
        console.print(_table(f"spread = 1 − mean cosine of the usages ({r['layer_name']})",
                             ["word", "usages", "spread", "mean cos", "min cos", "max cos"],
                             [(w["word"], w["n_usages"], w["spread"], w["mean_cosine"], w["min_cosine"],
                               w["max_cosine"]) for w in r["words"]]))

    @app.command()
    @handle_errors
    def senses(
        word: str = typer.Argument(..., help="The word whose usages to cluster."),
        sentences: Path = SENTENCES, sentence: list[str] = SENTENCE,
        k: str = typer.Option("auto", "--k", "-k", help="Number of clusters, or 'auto' (best silhouette)."),
        labels: Path = typer.Option(None, "--labels", help="Gold sense labels, one per sentence, same order."),
        vectors: str = VECTORS, model: str = MODEL, method: str = METHOD, heads: int = HEADS,
        n_layers: int = N_LAYERS, window: int = WINDOW, alpha: float = ALPHA, layer: int = LAYER,
        occurrence: str = OCCURRENCE, skip_missing: bool = SKIP, projection: str = PROJECTION,
        seed: int = SEED, as_json: bool = JSON, plot: Path = PLOT,
    ) -> None:
        """Sense probe: cluster WORD's usages; purity and adjusted Rand index with --labels."""
        _early(plot, projection)
        if k != "auto" and not k.isdigit():
            raise InputError(f"--k must be 'auto' or a whole number, got {k!r}")
        texts = read_sentences(sentences, sentence)
        gold = read_lines(labels, "sense labels") if labels is not None else None
        encoder = _encoder(vectors, model, method, heads, n_layers, window, alpha)
        proj = projection or ("pca" if plot else None)
        r = probe_senses(encoder, texts, word, k="auto" if k == "auto" else int(k), gold=gold, layer=layer,
                         occurrence=_occurrence(occurrence), missing="skip" if skip_missing else "error",
                         projection=proj, seed=seed)
        if plot:
            kept = [lab for lab in r["labels"] if lab is not None]
            sents = [texts[p] for p in r["projection"]["positions"]]
            plots.save_figure(plots.projection_scatter(
                r["projection"]["points"], kept, labels=sents, method=proj,
                title=f"{word!r}: {r['k']} clusters at {r['layer_name']}"), plot)
        if as_json:
            print_json(r)
            return
        sil = "–" if r["silhouette"] is None else fmt(r["silhouette"])
        extra = f", purity {fmt(r['purity'])}, ARI {fmt(r['ari'])}" if "purity" in r else ""
        console.print(f"[bold]{word!r}[/]: {r['n_usages']} usages at {r['layer_name']}, k = {r['k']} "
                      f"({r['k_chosen_by']}), silhouette {sil}{extra}", highlight=False)
        if r["k_chosen_by"] == "silhouette":
            console.print(_table("silhouette of each k", ["k", "silhouette"], r["silhouette_by_k"].items()))
        rows = [(c["id"], c["size"], plots.short(s, 70), ", ".join(f"{g}×{n}" for g, n in c.get("gold", {}).items()))
                if j == 0 else ("", "", plots.short(s, 70), "")
                for c in r["clusters"] for j, s in enumerate(c["sentences"])]
        console.print(_table("clusters", ["cluster", "size", "sentence", "gold"], rows, left=4))

    @app.command(context_settings={"ignore_unknown_options": True})
    @handle_errors
    def layers(
        texts: list[str] = typer.Argument(..., metavar="TEXT1 TEXT2 [--pair TEXT3 TEXT4]...",
                                          help="Two sentences; more pairs after --pair."),
        word: str = typer.Option(..., "--word", "-w", help="The target word."),
        vectors: str = VECTORS, model: str = MODEL, method: str = METHOD, heads: int = HEADS,
        n_layers: int = N_LAYERS, window: int = WINDOW, alpha: float = ALPHA,
        as_json: bool = JSON, plot: Path = PLOT,
    ) -> None:
        """Layer divergence: cosine between WORD in two sentences at every layer (0 = static)."""
        _early(plot)
        pairs = split_pairs(texts)
        encoder = _encoder(vectors, model, method, heads, n_layers, window, alpha)
        r = layer_divergence(encoder, pairs, word)
        if plot:
            series = {f"{p['label']}: {plots.short(p['sentences'][0], 22)} | {plots.short(p['sentences'][1], 22)}":
                      p["cosine_by_layer"] for p in r["pairs"]}
            plots.save_figure(plots.layer_cosines(series, r["layer_names"], title=f"{word!r}"), plot)
        if as_json:
            print_json(r)
            return
        for p in r["pairs"]:
            console.print(f"{p['label']}: {p['sentences'][0]!r} vs {p['sentences'][1]!r}", highlight=False)
        console.print(_table(f"cosine between the two usages of {word!r}", ["layer"] + [p["label"] for p in r["pairs"]],
                             [(name, *[p["cosine_by_layer"][i] for p in r["pairs"]])
                              for i, name in enumerate(r["layer_names"])]))

    @app.command()
    @handle_errors
    def attention(
        text: str = typer.Argument(..., help="The sentence."),
        word: str = typer.Option(..., "--word", "-w", help="The target word."),
        layer: int = typer.Option(None, "--layer", help="One layer (1-based, -1 = last): a words × words map."),
        head: int = typer.Option(None, "--head", help="One head of that layer (default: mean over heads)."),
        rollout: bool = typer.Option(False, "--rollout", help="Add attention rollout (Abnar & Zuidema 2020)."),
        occurrence: int = typer.Option(None, "--occurrence", help="Which occurrence of the word (0-based)."),
        vectors: str = VECTORS, model: str = MODEL, method: str = METHOD,
        heads: int = HEADS, n_layers: int = N_LAYERS, window: int = WINDOW, alpha: float = ALPHA,
        as_json: bool = JSON, plot: Path = PLOT,
    ) -> None:
        """Attention attribution: the weights WORD gave every word, per layer and head."""
        _early(plot)
        encoder = _encoder(vectors, model, method, heads, n_layers, window, alpha)
        r = attribute(encoder, text, word, occurrence=occurrence, layer=layer, head=head, rollout=rollout)
        if plot:
            sel = r.get("selected")
            if sel is None:
                fig = plots.attention_heads(r)
            elif rollout:
                fig = plots.attention_matrix(sel["rollout_matrix"], r["words"], special=sel["rollout_special"],
                                             title=f"rollout up to {sel['layer_name']}")
            else:
                which = "mean over heads" if head is None else f"head {head}"
                fig = plots.attention_matrix(sel["matrix"], r["words"], special=sel["special"],
                                             title=f"{sel['layer_name']}, {which}")
            plots.save_figure(fig, plot)
        if as_json:
            print_json(r)
            return
        cols = r["words"] + (["[special]"] if r["special_mean"] is not None else [])
        rows = []
        for li, name in enumerate(r["layer_names"]):
            special = [] if r["special_share"] is None else [r["special_share"][li]]
            for h in range(r["heads"]):
                rows.append((f"{name} h{h}", *r["per_head"][li][h], *[s[h] for s in special]))
            if r["heads"] > 1:
                rows.append((f"{name} mean", *r["mean"][li], *([r["special_mean"][li]] if special else [])))
            if rollout:
                extra = [] if r["rollout_special"] is None else [r["rollout_special"][li]]
                rows.append((f"{name} rollout", *r["rollout"][li], *extra))
        console.print(_table(f"weights {r['word']!r} gave each word", ["layer · head"] + cols, rows))

    @app.command()
    @handle_errors
    def rank(
        pairs_file: Path = typer.Argument(..., help="Word pairs, 'word1 word2 [score]' per line."),
        template: str = typer.Option(DEFAULT_TEMPLATE, "--template", help="Neutral sentence with {word}."),
        layer: int = LAYER, top: int = typer.Option(5, "--top", help="How many most-moved pairs to list."),
        skip_missing: bool = typer.Option(False, "--skip-missing", help="Skip pairs with a word lacking a vector."),
        vectors: str = VECTORS, model: str = MODEL, method: str = METHOD, heads: int = HEADS,
        n_layers: int = N_LAYERS, window: int = WINDOW, alpha: float = ALPHA,
        as_json: bool = JSON, plot: Path = PLOT,
    ) -> None:
        """Static vs contextual ranking of word pairs: Spearman, Kendall tau, inversions."""
        _early(plot)
        pairs = read_pairs(pairs_file)
        encoder = _encoder(vectors, model, method, heads, n_layers, window, alpha)
        r = rank_pairs(encoder, pairs, template=template, layer=layer, top=top,
                       missing="skip" if skip_missing else "error")
        if plot:
            plots.save_figure(plots.rank_scatter(r), plot)
        if as_json:
            print_json(r)
            return
        rows = [("Spearman rho", r["spearman"]), ("Kendall tau", r["kendall_tau"]),
                ("inversions", f"{r['inversions']} of {r['comparisons']}")]
        if r["gold"]:
            rows += [("static vs gold (Spearman)", r["gold"]["static_spearman"]),
                     ("contextual vs gold (Spearman)", r["gold"]["contextual_spearman"])]
        if r["skipped"]:
            rows.append(("skipped pairs", len(r["skipped"])))
        console.print(_table(f"{r['n_pairs']} pairs: static vs {r['layer_name']} in {template!r}",
                             ["measure", "value"], rows))
        if not r["moved"]:
            console.print("no pair changed rank")
            return
        console.print(_table("pairs that moved most (rank 1 = most similar)",
                             ["pair", "static", "contextual", "static rank", "context rank", "shift"],
                             [(f"{m['word1']} – {m['word2']}", m["static"], m["contextual"], f"{m['static_rank']:g}",
                               f"{m['contextual_rank']:g}", f"{m['shift']:+g}") for m in r["moved"]]))

    @app.command()
    @handle_errors
    def geometry(
        sentences: Path = SENTENCES, sentence: list[str] = SENTENCE,
        words: str = typer.Option(None, "--words", help="Comma-separated words (default: all in ≥ 2 sentences)."),
        min_count: int = typer.Option(2, "--min-count", help="Without --words: sentences a word must be in."),
        n_pairs: int = typer.Option(1000, "--pairs", help="Random cross-sentence pairs for anisotropy."),
        seed: int = SEED, vectors: str = VECTORS, model: str = MODEL, method: str = METHOD, heads: int = HEADS,
        n_layers: int = N_LAYERS, window: int = WINDOW, alpha: float = ALPHA,
        as_json: bool = JSON, plot: Path = PLOT,
    ) -> None:
        """Self-similarity, intra-sentence similarity and anisotropy per layer (Ethayarajh 2019)."""
        _early(plot)
        texts = read_sentences(sentences, sentence)
        chosen = [w.strip() for w in words.split(",") if w.strip()] if words else None
        encoder = _encoder(vectors, model, method, heads, n_layers, window, alpha)
        r = measure_geometry(encoder, texts, chosen, min_count=min_count, n_pairs=n_pairs, seed=seed)
        if plot:
            plots.save_figure(plots.geometry_lines(r, title=f"{len(r['words'])} words, {r['n_sentences']} sentences"),
                              plot)
        if as_json:
            print_json(r)
            return
        console.print(_table(
            f"geometry by layer ({len(r['words'])} words; adjusted = raw − anisotropy)",
            ["layer", "anisotropy", "self-sim", "self-sim adj", "intra-sent", "intra-sent adj"],
            [(x["name"], x["anisotropy"], x["self_similarity"], x["self_similarity_adjusted"], x["intra_sentence"],
              x["intra_sentence_adjusted"]) for x in r["layers"]]))
