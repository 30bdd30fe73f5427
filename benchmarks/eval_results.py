"""The evaluation figures of benchmarks/RESULTS.md, from the shared data.

    python benchmarks/eval_results.py [--models minilm,mpnet] [--glove] [--json] [--out FILE]
        [--tasks wic,wsd,coarsewsd,scws,similarity,analogy] [--coarse-max 300]

Per packaged model: WiC dev accuracy (threshold on the best train layer, and logistic
regressions), WSD F1 on semeval2007 (MFS, 1-NN, 1-NN + MFS fallback, for every layer
and the mean of the last four; with the SemCor encoding time), CoarseWSD-20 5-fold CV on
train (at most ``--coarse-max`` items per word, stratified), SCWS on the 40-line sample
(a smoke figure), WS-353 / MEN-dev / RG-65 Spearman (the word alone) and Google
analogies (the file's own vocabulary). GloVe 6B-50d (``--glove``): WiC with the static
row and neighbour averaging, SCWS, similarity and Google analogies with gensim's rules
(top 100k and 300k words). Encodings are cached (contextlens.files.cache_dir), so a
rerun only re-scores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from contextlens.bench.runner import evaluate
from contextlens.files import atomic_output

DATA = "/work/shared/data"
SIMILARITY = "ws353,men-dev,rg65"


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def model_figures(model: str, tasks: list[str], coarse_max: int, data: str, save=lambda: None) -> dict:
    from contextlens.bench.runner import make_task_encoder

    encoder = make_task_encoder(model=model)
    n_layers = len(encoder.layers) + 1
    out: dict = {"model": model, "layers": n_layers}
    save(out)
    common = {"encoder": encoder, "model": model, "data_dir": data}
    best_layer = -1
    if "wic" in tasks:
        t = time.perf_counter()
        rows = evaluate("wic", **common)["results"]
        rows += [r for r in evaluate("wic", features="full", **common)["results"] if r["method"] == "logreg-full"]
        out["wic"] = rows
        save(out)
        best_layer = next(r["layer"] for r in rows if r["method"] == "threshold")
        _log(f"{model} wic done in {time.perf_counter() - t:.0f} s")
    if "scws" in tasks:
        out["scws"] = evaluate("scws", split="sample", **common)["results"]
        save(out)
    if "similarity" in tasks:
        out["similarity"] = evaluate("similarity", split=SIMILARITY, **common)["results"]
        save(out)
    if "analogy" in tasks:
        out["analogy"] = evaluate("analogy", **common)["results"]
        save(out)
        _log(f"{model} lexical done")
    if "coarsewsd" in tasks:
        t = time.perf_counter()
        layers = sorted({best_layer % n_layers, n_layers - 1})
        out["coarsewsd"] = [r for r in evaluate("coarsewsd", layers=layers, max_per_word=coarse_max, **common)["results"]]
        out["coarsewsd_max_per_word"] = coarse_max
        save(out)
        _log(f"{model} coarsewsd done in {time.perf_counter() - t:.0f} s")
    if "wsd" in tasks:
        t = time.perf_counter()
        views = [*range(n_layers), "last4"]
        out["wsd"] = evaluate("wsd", views=views, **common)["results"]
        out["wsd_seconds"] = time.perf_counter() - t
        out["semcor_encoding"] = semcor_timing(out["wsd"])
        save(out)
        _log(f"{model} wsd done in {time.perf_counter() - t:.0f} s")
    return out


def semcor_timing(rows: list[dict]) -> dict | None:
    """The time the (cached) SemCor pass took, as the WSD rows report it."""
    row = next((r for r in rows if "semcor_seconds" in r), None)
    if row is None:
        return None
    seconds, sentences = row["semcor_seconds"], int(row["semcor_encoded"])
    return {"seconds": seconds, "sentences": sentences, "sentences_per_second": sentences / seconds}


def glove_figures(tasks: list[str], data: str) -> dict:
    from contextlens.encoders.registry import resolve_vectors

    table = resolve_vectors("glove-6b-50d")
    out: dict = {"vectors": table.name}
    if "wic" in tasks:
        out["wic"] = {m: evaluate("wic", vectors=table, method=m, data_dir=data)["results"]
                      for m in ("static", "average")}
    if "scws" in tasks:
        out["scws"] = evaluate("scws", vectors=table, method="static", split="sample", data_dir=data)["results"]
    if "similarity" in tasks:
        out["similarity"] = evaluate("similarity", vectors=table, split=SIMILARITY, data_dir=data)["results"]
    if "analogy" in tasks:
        out["analogy"] = [r for k in (100000, 300000)
                          for r in evaluate("analogy", vectors=table, restrict=k, data_dir=data)["results"]]
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="minilm", help="comma-separated packaged models (minilm,mpnet)")
    p.add_argument("--glove", action="store_true", help="also GloVe 6B-50d")
    p.add_argument("--tasks", default="wic,scws,similarity,analogy,coarsewsd,wsd")
    p.add_argument("--coarse-max", type=int, default=300, help="CoarseWSD-20 items per word (stratified)")
    p.add_argument("--data", default=DATA)
    p.add_argument("--out", type=Path, help="write the JSON here")
    p.add_argument("--json", action="store_true", help="print the JSON on stdout")
    args = p.parse_args(argv)
    tasks = args.tasks.split(",")
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M"), "models": {}}
    if args.glove:
        results["glove"] = glove_figures(tasks, args.data)
        _log("glove done")
    for model in [m for m in args.models.split(",") if m]:
        def save(part, model=model):  # after each task: a late failure keeps the earlier figures
            results["models"][model] = part
            if args.out:
                with atomic_output(args.out) as tmp:
                    tmp.write_text(json.dumps(results, indent=1, default=str))

        model_figures(model, tasks, args.coarse_max, args.data, save)
    if args.out:
        with atomic_output(args.out) as tmp:
            tmp.write_text(json.dumps(results, indent=1, default=str))
    if args.json or not args.out:
        print(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
