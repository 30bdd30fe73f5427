"""``contextlens demo``: the walkthrough, printed and written to a report."""

from pathlib import Path

import typer

from . import options as o
from ._common import add_command, handle_errors, out, say, spinner, table


@handle_errors
def demo(
    out_dir: Path = o.writes(o.option(Path("out/demo"), "--out", metavar="DIR",
                                      help="Folder for the report and figures.")),
    vectors: str = o.reads(o.option(o.DEFAULT_VECTORS, "--vectors", metavar="FILE|NAME",
                                    help="Static table for the polysemy part.")),
    model: str = o.reads(o.option("minilm", "--model", "-m", metavar="NAME",
                                  help="Transformer for part 3 ('none' skips it).")),
) -> None:
    """Run the walkthrough: the worked 'bank' example, five ambiguous words, a transformer."""
    from ..walkthrough import run

    o.check_output(out_dir, folder=True)
    with spinner("computing the walkthrough..."):
        r = run(out_dir, vectors=vectors, model=None if model == "none" else model)
    w = r["worked_example"]
    rows = [("static", w["static"]["money"], w["static"]["river"])]
    rows += [(f"averaged in '{s}'", cos["money"], cos["river"]) for s, cos in w["average"].items()]
    out().print(table("1. worked example: 'bank' (16 phrases, window 3, raw counts)",
                      ["vector of bank", "cos to money", "cos to river"], rows))
    for s, weights in w["attention"].items():
        say(f"attention of bank in '{s}': " + ", ".join(f"{k} {v:.3f}" for k, v in weights.items()))
    p = r["polysemy"]
    out().print(table(f"2. cosine between two usages ({p['vectors']}, window 5, self excluded)",
                      ["word", "static", "average", "attention"],
                      [(word, "1.000", e["methods"]["average"]["cosine_between_usages"],
                        e["methods"]["attention"]["cosine_between_usages"]) for word,
                       e in p["words"].items()]))
    if "transformer" in r:
        _print_transformer(r["transformer"])
    say(f"report: {r['report']}")


def _print_transformer(r: dict) -> None:
    same = r["same_row"]
    out().print(table(f"3. 'bank' across the layers of {r['model']} (layer 0: same token id, same row)",
                      ["layer", "finance vs river", "finance vs finance"],
                      zip(same["layer_names"], same["finance_vs_river"], same["finance_vs_finance"])))
    out().print(table("polysemy explorer: mean cosine between usages (top layer)",
                      ["word", "senses", "same sense", "different senses", "spread"],
                      [(word, ", ".join(e["senses"]), e["mean_same_sense"], e["mean_other_sense"],
                        e["spread"])
                       for word, e in r["explorer"].items()], left=2))
    a = r["attention"]
    say(f"attention of bank in {a['sentence']!r} (last layer, mean over heads): "
        + ", ".join(f"{w} {x:.3f}" for w, x in zip(a["words"], a["last_layer_mean"])))
    s = r["senses"]
    say(f"sense probe, ten bank sentences: k = {s['k']}, silhouette {s['silhouette']:.3f}, "
        f"purity {s['purity']:.3f}, ARI {s['ari']:.3f}")


def register(app: typer.Typer) -> None:
    """Add ``demo`` to ``app``."""
    add_command(app, demo)
