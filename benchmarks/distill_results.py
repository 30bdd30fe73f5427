"""Static vectors distilled from context, on word similarity (benchmarks/RESULTS.md).

    python benchmarks/distill_results.py [--models minilm,mpnet] [--corpora brown | brown,abc,movie_reviews]
        [--pools mean,min,max] [--max-usages 100] [--min-count 1] [--keep DIR] [--out FILE] [--json]

For each model and corpus set: every usage (at most ``--max-usages`` per word, a seeded
sample) of the words of the similarity sets present is encoded and pooled per layer
(contextlens.passes.distill), then scored by Spearman on each set, next to GloVe 6B-50d
(gensim's rules, on all its pairs and on the pairs the distilled table covers), the same
model's layer-0 embedding rows and its words encoded alone (each layer). Tables go to
``--keep`` (default a temporary folder); a killed run resumes there.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from contextlens.datasets import available_similarity, load_similarity
from contextlens.datasets.registry import resolve_data_dir
from contextlens.evaluation.lexical import similarity_spearman
from contextlens.evaluation.runner import evaluate, make_task_encoder
from contextlens.files import atomic_output
from contextlens.passes.distill import distill, table_paths
from contextlens.static.pretrained import load_vectors
from contextlens.vectors import EmbeddingTable

SETS = ("ws353", "men-dev", "rg65", "mc30", "mturk287", "yp130", "ws353-sim", "ws353-rel")
CORPORA = {"brown": "corpora/brown_plain.txt", "abc": "corpora/abc_plain.txt",
           "movie_reviews": "corpora/movie_reviews_plain.txt"}


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _pairs(data: Path) -> dict[str, list]:
    files = available_similarity(data)
    return {name: load_similarity(files[name]) for name in SETS if name in files}


def _covered(pairs, table: EmbeddingTable) -> list:
    keys = {k.upper() for k in table.keys}
    return [p for p in pairs if p.word1.upper() in keys and p.word2.upper() in keys]


def distilled_figures(model: str, corpora: list[str], data: Path, keep: Path, pools: list[str],
                      max_usages: int, min_count: int) -> dict:
    sets = _pairs(data)
    words = sorted({w.lower() for pairs in sets.values() for p in pairs for w in (p.word1, p.word2)})
    encoder = make_task_encoder(model=model)
    out = keep / f"{model}-{'+'.join(corpora)}-{max_usages}.npz"
    paths = table_paths(out, list(encoder.layer_ids), pools)
    started, last = time.perf_counter(), [0.0]

    def progress(done: int, usages: int) -> None:
        if time.perf_counter() - last[0] > 60:
            last[0] = time.perf_counter()
            _log(f"{model}: {done:,} sentences, {usages:,} usages pooled, {done / (last[0] - started):.0f} "
                 "sent/s")

    info: dict = {}
    if all(p.is_file() for p in paths.values()):
        tables = {k: EmbeddingTable.load(p) for k, p in paths.items()}
        _log(f"{model}: tables read back from {keep}")
    else:
        result = distill([data / CORPORA[c] for c in corpora], encoder, out, words=words, layers="all",
                         pools=pools, min_count=min_count, max_usages=max_usages, progress=progress)
        tables = result.tables
        info = {"seconds": result.seconds, "sentences": result.sentences, "encoded_sentences":
                result.encoded_sentences, "usages": int(sum(result.usages.values())),
                "words": len(result.usages), "missing": len(result.missing), "resumed_at": result.resumed_at}
        _log(f"{model}: distilled in {result.seconds:.0f} s ({info})")
    glove = load_vectors("glove-6b-50d")
    alone = evaluate("similarity", model=model, encoder=encoder,
                     split=",".join(sets), data_dir=data)["results"]
    rows = []
    for name, pairs in sets.items():
        covered = _covered(pairs, next(iter(tables.values())))
        row = {"set": name, "pairs": len(pairs), "covered": len(covered),
               "glove_all": similarity_spearman(glove, pairs)["spearman"],
               "glove_covered": similarity_spearman(glove, covered)["spearman"],
               "alone": {r["layer"]: r["spearman"] for r in alone if r["split"] == name},
               "distilled": {f"{k} {p}": similarity_spearman(t, covered, restrict=None)["spearman"]
                             for (k, p), t in tables.items()}}
        rows.append(row)
    return {"model": model, "corpora": corpora, "max_usages": max_usages, "min_count": min_count,
            "pools": pools, "words_asked": len(words), **info, "sets": rows}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="minilm")
    p.add_argument("--corpora", default="brown", help=f"comma-separated: {', '.join(CORPORA)}")
    p.add_argument("--pools", default="mean,min,max")
    p.add_argument("--max-usages", type=int, default=100)
    p.add_argument("--min-count", type=int, default=1)
    p.add_argument("--data", type=Path, default=resolve_data_dir(), help="default: CONTEXTLENS_DATA")
    p.add_argument("--keep", type=Path, help="folder for the distilled tables (and checkpoints)")
    p.add_argument("--out", type=Path, help="write the JSON here")
    p.add_argument("--json", action="store_true", help="print the JSON on stdout")
    args = p.parse_args(argv)
    keep = args.keep or Path(tempfile.mkdtemp(prefix="distill-"))
    keep.mkdir(parents=True, exist_ok=True)
    results = {"date": time.strftime("%Y-%m-%d %H:%M"), "runs": []}
    for model in args.models.split(","):
        results["runs"].append(distilled_figures(model, args.corpora.split(","), args.data, keep,
                                                 args.pools.split(","), args.max_usages, args.min_count))
        if args.out:
            with atomic_output(args.out) as tmp:
                tmp.write_text(json.dumps(results, indent=1))
    if args.json or not args.out:
        print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
