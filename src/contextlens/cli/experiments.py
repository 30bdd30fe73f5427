"""``contextlens explore | senses | layers | attention | rank | geometry``: the experiments.

Each command parses options, calls one library function (``contextlens.analysis``), and
presents its result as a Rich table, one JSON object (``--json``), a figure
(``--plot PATH``, PNG/SVG/PDF by suffix) and/or the interactive views as one HTML file
(``--html PATH``, from :mod:`contextlens.views`).
"""

from pathlib import Path

import typer

from ..bounds import MAX_SENTENCES, MAX_SENTENCES_LIMIT, MAX_STEPS
from ..errors import InputError
from . import options as o
from ._common import add_command, fmt, handle_errors, out, say, table
from .present import present, say_wordnet, say_wordnet_unseen

DEFAULT_TEMPLATE = "A sentence with {word}."  # analysis.ranking.DEFAULT_TEMPLATE
# analysis.faithfulness.METHODS, with all
ATTRIBUTIONS_HELP = "all | raw | rollout | flow | norm | value-zeroing | grad-input | ig"


@handle_errors
def explore(
    words: list[str] = typer.Argument(..., metavar="WORD...", help="The word(s) to explore."),
    sentences: Path = o.SENTENCES, sentence: list[str] = o.SENTENCE, vectors: str = o.VECTORS,
    model: str = o.MODEL, engine: str = o.ENGINE, precision: str = o.PRECISION,
    method: str = o.METHOD, heads: int = o.HEADS, n_layers: int = o.N_LAYERS, window: int = o.WINDOW,
    alpha: float = o.ALPHA, include_self: bool = o.INCLUDE_SELF, layer: int = o.LAYER,
    occurrence: str = o.OCCURRENCE,
    skip_missing: bool = o.SKIP_MISSING, projection: str = o.PROJECTION, seed: int = o.SEED,
    as_json: bool = o.JSON, plot: Path = o.PLOT, html: Path = o.HTML,
) -> None:
    """Polysemy explorer: cosines between a word's usages, and the spread of several words.

    One word: every sentence must contain it (or --skip-missing). Several words: each
    word's usages are the sentences that contain it.
    """
    from ..analysis.explore import explore as explore_words
    from ..analysis.usages import read_sentences

    o.check_plot(plot)
    o.check_html(html)
    o.check_projection(projection)
    occ = o.parse_occurrence(occurrence, allow_all=True)
    texts = read_sentences(sentences, sentence)
    encoder = o.EncoderChoice.given(locals()).encoder()
    r = explore_words(encoder, texts, words, layer=layer, occurrence=occ,
                      missing="skip" if skip_missing else None, projection=projection, seed=seed)
    if present(r, as_json, plot=plot, figure=lambda plots: _explore_figure(plots, r, projection), html=html,
               view=lambda views: views.cosine_view(r)):
        return
    if len(r["words"]) == 1:
        w = r["words"][0]
        out().print(table(f"cosine between the usages of {w['word']!r} ({r['layer_name']})",
                          ["usage", "sentence", *w["labels"]],
                          [(name, s, *row) for name, s, row in zip(w["labels"], w["sentences"], w["matrix"])],
                          left="ll" + "r" * w["n_usages"], widths={1: 50}))
    out().print(table(f"spread = 1 − mean cosine of the usages ({r['layer_name']})",
                      ["word", "usages", "spread", "mean cos", "min cos", "max cos"],
                      [(w["word"], w["n_usages"], w["spread"], w["mean_cosine"], w["min_cosine"],
                        w["max_cosine"])
                       for w in r["words"]]))


def _explore_figure(plots, r: dict, projection: str | None):
    """``explore --plot``: the usages projected, one word's cosine matrix, or the words' spreads."""
    if projection:
        p = r["projection"]
        return plots.projection_scatter(p["points"], p["word"], labels=p["sentence"], method=projection,
                                        group_name="", title=f"usages at {r['layer_name']}")
    if len(r["words"]) == 1:
        w = r["words"][0]
        return plots.cosine_heatmap(w["matrix"], w["sentences"], names=w["labels"],
                                    title=f"{w['word']!r} at {r['layer_name']}: spread {fmt(w['spread'])}")
    return plots.spread_bars(r["words"], title=f"spread of usages at {r['layer_name']}")


@handle_errors
def senses(
    word: str = typer.Argument(..., metavar="WORD", help="The word whose usages to cluster."),
    sentences: Path = o.SENTENCES, sentence: list[str] = o.SENTENCE, k: str = o.k_senses(),
    labels: Path = o.reads(o.option(None, "--labels", metavar="FILE",
                                    help="Gold sense labels, one per sentence, same order.")),
    vectors: str = o.VECTORS, model: str = o.MODEL, engine: str = o.ENGINE, precision: str = o.PRECISION,
    method: str = o.METHOD, heads: int = o.HEADS,
    n_layers: int = o.N_LAYERS, window: int = o.WINDOW, alpha: float = o.ALPHA,
    include_self: bool = o.INCLUDE_SELF,
    layer: int = o.LAYER, occurrence: str = o.OCCURRENCE, skip_missing: bool = o.SKIP_MISSING,
    projection: str = o.PROJECTION, seed: int = o.SEED, as_json: bool = o.JSON, plot: Path = o.PLOT,
    html: Path = o.HTML,
    max_sentences: int = o.bounded(o.option(MAX_SENTENCES, "--max-sentences", metavar="N",
                                            help="Read at most this many sentences (each is encoded; see "
                                            "benchmarks/RESULTS.md for times)."),
                                   1, MAX_SENTENCES_LIMIT, hint="sentences encoded"),
    wordnet: bool = o.flag("--wordnet",
                           help="Match each cluster to WordNet senses, as `index senses --wordnet` does "
                                "(LMMS sense embeddings of the model at the clustered layer: SemCor "
                                "propagated through WordNet, and glosses; needs --model and WordNet and "
                                "SemCor in the data folder; the first time per model, layer and word reads "
                                "SemCor, cached)."),
    data_dir: Path = o.DATA_DIR,
) -> None:
    """Sense probe: cluster WORD's usages; purity and adjusted Rand index with --labels; with
    --wordnet, each cluster's nearest WordNet senses and their glosses."""
    from ..analysis.senses import senses as probe_senses
    from ..analysis.usages import read_lines, read_sentences
    from ..evaluation.wordnet_map import WordNetNamer

    o.check_plot(plot)
    o.check_html(html)
    o.check_projection(projection)
    if data_dir is not None and not wordnet:
        raise InputError("--data-dir only applies with --wordnet (WordNet and SemCor are read from it)")
    n_senses, occ = o.parse_k(k), o.parse_occurrence(occurrence)  # one usage per sentence: no 'all'
    texts = read_sentences(sentences, sentence)
    gold = read_lines(labels, "sense labels") if labels is not None else None
    encoder = o.EncoderChoice.given(locals()).encoder()
    proj = projection or ("pca" if plot or html else None)
    r = probe_senses(encoder, texts, word, k=n_senses, gold=gold, layer=layer, occurrence=occ,
                     missing="skip" if skip_missing else "error", projection=proj, seed=seed,
                     max_sentences=max_sentences, wordnet=WordNetNamer(data_dir) if wordnet else None)
    def figure(plots):
        kept = [lab for lab in r["labels"] if lab is not None]
        return plots.projection_scatter(r["projection"]["points"], kept,
                                        labels=[texts[p] for p in r["projection"]["positions"]], method=proj,
                                        title=f"{word!r}: {r['k']} clusters at {r['layer_name']}")

    if present(r, as_json, plot=plot, figure=figure, html=html,
               view=lambda views: views.senses_view(r, texts)):
        return
    extra = f", purity {fmt(r['purity'])}, ARI {fmt(r['ari'])}" if "purity" in r else ""
    sample = f" (a sample of {r['n_clustered']:,} clustered)" if r["n_clustered"] < r["n_usages"] else ""
    say(f"{word!r}: {r['n_usages']} usages at {r['layer_name']}{sample}, k = {r['k']} ({r['k_chosen_by']}), "
        f"silhouette {fmt(r['silhouette'])}{extra}")
    if r["score_by_k"]:
        out().print(table(f"{r['k_chosen_by']} by k", ["k", r["k_chosen_by"]], r["score_by_k"].items()))
    rows = [(c["id"], c["size"], s, ", ".join(f"{g}×{n}" for g, n in c.get("gold", {}).items()))
            if j == 0 else ("", "", s, "")
            for c in r["clusters"] for j, s in enumerate(c["sentences"])]
    out().print(table("clusters", ["cluster", "size", "sentence", "gold"], rows, left=4, widths={2: 70}))
    if wordnet:
        for c in r["clusters"]:
            say(f"\ncluster {c['id']} ({c['size']} usage{'' if c['size'] == 1 else 's'}): "
                f"{c['sentences'][0]}")
            say_wordnet(c["wordnet"])
        say_wordnet_unseen(r)


@handle_errors
def layers(
    texts: list[str] = typer.Argument(..., metavar="TEXT1 TEXT2 [--pair TEXT3 TEXT4]...",
                                      help="Two sentences; more pairs after --pair."),
    word: str = o.WORD, vectors: str = o.VECTORS, model: str = o.MODEL, engine: str = o.ENGINE,
    precision: str = o.PRECISION, method: str = o.METHOD, heads: int = o.HEADS,
    n_layers: int = o.N_LAYERS, window: int = o.WINDOW, alpha: float = o.ALPHA,
    include_self: bool = o.INCLUDE_SELF,
    static_vectors: str = o.STATIC_VECTORS, as_json: bool = o.JSON, plot: Path = o.PLOT, html: Path = o.HTML,
) -> None:
    """Layer divergence: cosine between WORD in two sentences at every layer (0 = static)."""
    from ..analysis.layers import layer_divergence

    o.check_plot(plot)
    o.check_html(html)
    pairs = o.sentence_pairs(texts)
    encoder = o.EncoderChoice.given(locals()).encoder()
    r = layer_divergence(encoder, pairs, word, static=o.static_table(static_vectors))
    def figure(plots):
        series = {f"{p['label']}: {plots.short(p['sentences'][0], 22)} | "
                  f"{plots.short(p['sentences'][1], 22)}": p["cosine_by_layer"] for p in r["pairs"]}
        return plots.layer_cosines(series, r["layer_names"], title=f"{word!r}")

    if present(r, as_json, plot=plot, figure=figure, html=html, view=lambda views: views.layers_view(r)):
        return
    for p in r["pairs"]:
        say(f"{p['label']}: {p['sentences'][0]!r} vs {p['sentences'][1]!r}")
    static = [(f"static: {r['static']['vectors']}",
               *[p["static_cosine"] for p in r["pairs"]])] if static_vectors else []
    out().print(table(f"cosine between the two usages of {word!r}",
                      ["layer"] + [p["label"] for p in r["pairs"]],
                      [*static, *[(name, *[p["cosine_by_layer"][i] for p in r["pairs"]])
                                  for i, name in enumerate(r["layer_names"])]]))


@handle_errors
def attention(
    text: str = o.TEXT, word: str = o.WORD,
    layer: int = o.layer_option(None,
                                help="One layer number (1 = the first mixing layer, -1 = the last): a words "
                                     "× words map."),
    head: int = o.bounded(o.option(None, "--head", metavar="N",
                                   help="One head of that layer, 0-based (default: "
                                   "the mean over heads)."), 0, o.MAX_HEADS - 1),
    rollout: bool = o.flag("--rollout", help="Add attention rollout (Abnar & Zuidema 2020)."),
    occlusion: bool = o.flag("--occlusion",
                             help="Leave each other word out in turn: how far WORD's vector moves per layer, "
                             "beside the attention it gave that word, and their Spearman."),
    attribution: str = o.option(None, "--attribution", metavar="METHOD[,...]", help=f"Attributions beside "
                                f"occlusion: {ATTRIBUTIONS_HELP}; each method's score for every other word "
                                "at --layer (default: the last) and its Spearman with occlusion at every "
                                "layer."),
    steps: int = o.bounded(o.option(32, "--steps", metavar="N", help="--attribution ig: points of the "
                                    "integral."), 1, MAX_STEPS),
    occurrence: str = o.OCCURRENCE, vectors: str = o.VECTORS, model: str = o.MODEL, engine: str = o.ENGINE,
    precision: str = o.PRECISION, method: str = o.METHOD,
    heads: int = o.HEADS, n_layers: int = o.N_LAYERS, window: int = o.WINDOW, alpha: float = o.ALPHA,
    include_self: bool = o.INCLUDE_SELF, as_json: bool = o.JSON, plot: Path = o.PLOT, html: Path = o.HTML,
) -> None:
    """Attention attribution: the weights WORD gave every word, per layer and head.

    --html writes the head view (at --layer, --head), the model view of WORD and, where the
    encoder has queries and keys, its neuron view; with --occlusion, those views (at the last
    layer, mean over heads) followed by the occlusion view; with --attribution, the attribution
    view (methods x words at a layer, the Spearman column, the faithfulness table)."""
    from ..analysis.attribution import attribute
    from ..errors import InputError

    if method is not None and method in ATTRIBUTIONS_HELP.split(" | "):
        raise InputError(f"--method {method} would choose how to mix --vectors ({o.STATIC_METHODS_HELP}); "
                         f"attribution methods are given with --attribution {method}")
    o.check_plot(plot)
    o.check_html(html)
    occ = o.parse_occurrence(occurrence)
    encoder = o.EncoderChoice.given(locals()).encoder()
    if attribution is not None:
        flags = (("--head", head), ("--rollout", rollout or None), ("--occlusion", occlusion or None))
        given = [f for f, v in flags if v is not None]
        if given:
            raise InputError(f"{', '.join(given)} do not apply to --attribution (it reports the mean over "
                             "heads, rollout and occlusion itself): drop them")
        return _attributions(encoder, text, word, occ, attribution, steps, layer, as_json, plot, html)
    if occlusion:
        given = [f for f, v in (("--layer", layer), ("--head", head), ("--rollout", rollout or None))
                 if v is not None]
        if given:
            from ..errors import InputError

            raise InputError(f"{', '.join(given)} do not apply to --occlusion (it reports every layer, the "
                             "mean over heads and rollout): drop them")
        return _occlusion(encoder, text, word, occ, as_json, plot, html)
    r = attribute(encoder, text, word, occurrence=occ, layer=layer, head=head, rollout=rollout)
    def figure(plots):
        sel = r.get("selected")
        if sel is None:
            return plots.attention_heads(r)
        if rollout:
            return plots.attention_matrix(sel["rollout_matrix"], r["words"], special=sel["rollout_special"],
                                          title=f"rollout up to {sel['layer_name']}")
        which = "mean over heads" if head is None else f"head {head}"
        return plots.attention_matrix(sel["matrix"], r["words"], special=sel["special"],
                                      title=f"{sel['layer_name']}, {which}")

    def view(views):
        return views.Page(*views.attention_views(encoder, text, word, layer=layer, head=head, occurrence=occ),
                          title=f"attention of {word!r}")

    if present(r, as_json, plot=plot, figure=figure, html=html, view=view):
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
    out().print(table(f"weights {r['word']!r} gave each word", ["layer · head"] + cols, rows))


def _attributions(encoder, text: str, word: str, occurrence, methods: str, steps: int, layer: int | None,
                  as_json: bool, plot: Path | None, html: Path | None) -> None:
    from ..analysis.faithfulness import attributions
    from ._common import spinner

    with spinner("attributing..."):
        r = attributions(encoder, text, word, methods=methods, occurrence=occurrence, steps=steps)
    title = f"{r['word']!r}: Spearman with occlusion"
    if present(r, as_json, plot=plot, figure=lambda plots: plots.faithfulness_lines(r, title=title),
               html=html, view=lambda views: views.attributions_view(r)):
        return
    at = r["layers"][encoder.layer_position(-1 if layer is None else layer) - 1]
    causal = r.get("next_word") is not None
    refs = [("occlusion", at["occlusion"])] + ([("next-word drop", r["next_word"]["drop"])] if causal else [])
    columns = refs + [(m, at["scores"][m]) for m in r["methods"]]
    rows = [(c["position"], c["word"], *[v[j] for _, v in columns]) for j, c in enumerate(r["context"])]
    rows.append(("", "ρ occlusion", *[""] * len(refs), *[at["spearman"][m] for m in r["methods"]]))
    if causal:
        rows.append(("", "ρ next word", "", "", *[at["next_word_spearman"][m] for m in r["methods"]]))
    out().print(table(f"what shaped {r['word']!r} at {at['layer_name']}: each method's score for every other "
                      "word",
                      ["#", "word", *[name for name, _ in columns]], rows, left="rl" + "r" * len(columns),
                      widths={1: 16}))
    out().print(table("Spearman with occlusion, every layer", ["layer", *r["methods"]],
                      [(x["layer_name"], *[x["spearman"][m] for m in r["methods"]]) for x in r["layers"]]))
    for m, why in r["unavailable"].items():
        say(f"{m}: not available ({why})")
    if causal:
        nw = r["next_word"]
        say(f"next piece after {r['word']!r}: {nw['piece']!r} (log p {fmt(nw['log_probability'])})")


def _occlusion(encoder, text: str, word: str, occurrence, as_json: bool, plot: Path | None,
               html: Path | None) -> None:
    from ..analysis.occlusion import occlusion_vs_attention

    r = occlusion_vs_attention(encoder, text, word, occurrence=occurrence)
    def view(views):
        return views.Page(*views.attention_views(encoder, text, word, occurrence=occurrence),
                          views.occlusion_view(r), title=f"attention and occlusion of {word!r}")

    if present(r, as_json, plot=plot, html=html, view=view,
               figure=lambda plots: plots.occlusion_lines(r, title=f"{r['word']!r}: occlusion vs attention")):
        return
    others = [w["word"] for w in r["others"]]
    rows = []
    for x in r["layers"]:
        rows += [(f"{x['layer_name']} occlusion", *x["occlusion"], ""),
                 (f"{x['layer_name']} attention", *x["attention"], x["spearman_attention"]),
                 (f"{x['layer_name']} rollout", *x["rollout"], x["spearman_rollout"])]
    out().print(table(f"leaving each word out: how far {r['word']!r} moves (cosine distance) beside the "
                      "attention it gave that word", ["layer", *others, "Spearman"], rows))


@handle_errors
def rank(
    pairs_file: Path = o.reads(typer.Argument(..., metavar="PAIRS",
                                              help="Word pairs, 'word1 word2 [score]' per line.")),
    template: str = o.option(DEFAULT_TEMPLATE, "--template", metavar="TEXT",
                             help="A neutral sentence with {word}."),
    layer: int = o.LAYER, top: int = o.top_k(5, "How many most-moved pairs to list.", "--top"),
    skip_missing: bool = o.flag("--skip-missing", help="Skip pairs with a word lacking a vector."),
    vectors: str = o.VECTORS, model: str = o.MODEL, engine: str = o.ENGINE, precision: str = o.PRECISION,
    method: str = o.METHOD, heads: int = o.HEADS,
    n_layers: int = o.N_LAYERS, window: int = o.WINDOW, alpha: float = o.ALPHA,
    include_self: bool = o.INCLUDE_SELF,
    static_vectors: str = o.STATIC_VECTORS, as_json: bool = o.JSON, plot: Path = o.PLOT,
) -> None:
    """Static vs contextual ranking of word pairs: Spearman, Kendall tau, inversions."""
    from ..analysis.ranking import rank_pairs, read_pairs

    o.check_plot(plot)
    pairs = read_pairs(pairs_file)
    encoder = o.EncoderChoice.given(locals()).encoder()
    r = rank_pairs(encoder, pairs, template=template, layer=layer, top=top,
                   missing="skip" if skip_missing else "error", static=o.static_table(static_vectors))
    if present(r, as_json, plot=plot, figure=lambda plots: plots.rank_scatter(r)):
        return
    rows = [("Spearman rho", r["spearman"]), ("Kendall tau", r["kendall_tau"]),
            ("inversions", f"{r['inversions']} of {r['comparisons']}")]
    if r["gold"]:
        rows += [("static vs gold (Spearman)", r["gold"]["static_spearman"]),
                 ("contextual vs gold (Spearman)", r["gold"]["contextual_spearman"])]
    if r["skipped"]:
        rows.append(("skipped pairs", len(r["skipped"])))
    side = r["static_side"].get("vectors") or r["static_side"].get("layer_name")
    out().print(table(f"{r['n_pairs']} pairs: static ({side}) vs {r['layer_name']} in {template!r}",
                      ["measure", "value"],
                      rows))
    if not r["moved"]:
        say("no pair changed rank")
        return
    out().print(table("pairs that moved most (rank 1 = most similar)",
                      ["pair", "static", "contextual", "static rank", "context rank", "shift"],
                      [(f"{m['word1']} – {m['word2']}", m["static"], m["contextual"], f"{m['static_rank']:g}",
                        f"{m['contextual_rank']:g}", f"{m['shift']:+g}") for m in r["moved"]]))


@handle_errors
def geometry(
    sentences: Path = o.SENTENCES, sentence: list[str] = o.SENTENCE,
    words: str = o.option(None, "--words", metavar="WORD,...",
                          help="Comma-separated words (default: every word in at least --min-count "
                          "sentences)."),
    min_count: int = o.bounded(o.option(2, "--min-count", metavar="N",
                                        help="Without --words: the sentences a word must be in."), 2, 10**9,
                         hint="self-similarity compares a word's vectors across sentences: at least 2"),
    n_pairs: int = o.bounded(o.option(1000, "--pairs", metavar="N", help="Random cross-sentence pairs for "
                                      "anisotropy."), 1, 10**6),
    standardize: bool = o.flag("--standardize",
                               help="Z-score every dimension of a layer first, then measure (Timkey & van "
                               "Schijndel 2021: removes the rogue dimensions' hold on cosine)."),
    n_rogue: int = o.bounded(o.option(3, "--rogue", metavar="K",
                                      help="The K dimensions that contribute most to the expected cosine, "
                                      "per layer."), 1, 10_000),
    seed: int = o.SEED, vectors: str = o.VECTORS, model: str = o.MODEL, engine: str = o.ENGINE,
    precision: str = o.PRECISION, method: str = o.METHOD, heads: int = o.HEADS,
    n_layers: int = o.N_LAYERS, window: int = o.WINDOW, alpha: float = o.ALPHA,
    include_self: bool = o.INCLUDE_SELF, as_json: bool = o.JSON, plot: Path = o.PLOT,
) -> None:
    """Self-similarity, intra-sentence similarity, maximum explainable variance and anisotropy per
    layer (Ethayarajh 2019), and the rogue dimensions (Timkey & van Schijndel 2021)."""
    from ..analysis.geometry import geometry as measure_geometry
    from ..analysis.usages import read_sentences

    o.check_plot(plot)
    texts = read_sentences(sentences, sentence)
    chosen = o.parse_words("--words", words)
    encoder = o.EncoderChoice.given(locals()).encoder()
    r = measure_geometry(encoder, texts, chosen, min_count=min_count, n_pairs=n_pairs, seed=seed,
                         standardize=standardize, n_rogue=n_rogue)
    title = f"{len(r['words'])} words, {r['n_sentences']} sentences"
    if present(r, as_json, plot=plot, figure=lambda plots: plots.geometry_lines(r, title=title)):
        return
    out().print(table(
        f"geometry by layer ({len(r['words'])} words{', standardized' if r['standardized'] else ''}): self- "
        "and intra-sentence similarity, maximum explainable variance; adj = raw − baseline (anisotropy; for "
        "MEV, the MEV of random words)",
        ["layer", "anisotropy", "self", "self adj", "intra", "intra adj", "MEV", "MEV adj"],
        [(x["name"], x["anisotropy"], x["self_similarity"], x["self_similarity_adjusted"],
          x["intra_sentence"],
          x["intra_sentence_adjusted"], x["mev"], x["mev_adjusted"]) for x in r["layers"]]))
    out().print(table(
        "rogue dimensions: the largest contributions to the expected cosine (dimension: share)",
        ["layer", "dimensions"],
        [(x["name"], ", ".join(f"{d['dimension']}: {fmt(d['share'])}" for d in x["rogue"]))
         for x in r["layers"]],
        left=2))


def register(app: typer.Typer) -> None:
    """Add the experiment commands to ``app``."""
    add_command(app, explore)
    add_command(app, senses)
    # ``layers`` reads ``--pair`` among its arguments, so unknown options reach the command
    add_command(app, layers, context_settings={"ignore_unknown_options": True})
    for fn in (attention, rank, geometry):
        add_command(app, fn)
