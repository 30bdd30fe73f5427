"""How fast a model encodes LMMS's gloss sentences (benchmarks/RESULTS.md, issue 26).

    python benchmarks/gloss_speed.py MODEL [N] [--split NAME] [--first] [--engine E] [--data DIR]

Encodes the gloss sentences of N WordNet senses (default 2,048; a seeded sample spread over
all of WordNet, or its first N with ``--first``) at the model's last layer through
:func:`~contextlens.evaluation.glosses.gloss_embeddings`, in a fresh temporary cache (so
every sense is encoded and timed), then asks for them again with as many others (only the
new ones are encoded). With ``--split``, the senses are instead the candidates of that WSD
split's instances (what ``eval wsd`` encodes). Prints one JSON object: wall and CPU
seconds, the load average before and after, the engine and its threads, the word pieces
of the sentences, and the extrapolation to all of WordNet's senses by their pieces.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

from contextlens import datasets
from contextlens.encoders import models
from contextlens.encoders.encoding_cache import EncodingCache
from contextlens.evaluation import glosses
from contextlens.evaluation.runner import make_task_encoder


def split_rows(data: str, split: str, graph) -> np.ndarray:
    """The sense rows of the candidates of ``split``'s instances (their lemma and POS)."""
    wn = datasets.wordnet(data)
    sentences, _ = datasets.load_wsd_eval(data, split)
    keys = {k for s in sentences for i in s.instances for k in datasets.candidate_keys(wn, i.lemma, i.pos)}
    return np.array(sorted(graph.key_row[k] for k in keys))


def timed(fn) -> dict:
    load, wall, cpu = os.getloadavg()[0], time.perf_counter(), time.process_time()
    fn()
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
            "load": [round(load, 2), round(os.getloadavg()[0], 2)]}


def pieces(encoder, texts: list[str]) -> int:
    """Word pieces of the texts, special tokens included (what the model runs over)."""
    return sum(len(ids) for ids in encoder._tok(texts, add_special_tokens=True)["input_ids"])


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("n", type=int, nargs="?", default=2048, help="senses to encode")
    p.add_argument("--first", action="store_true", help="WordNet's first N senses, not a sample")
    p.add_argument("--split", help="the candidates of this WSD split instead (e.g. semeval2007)")
    p.add_argument("--engine", default=None, help="torch, onnx or auto (default: the encoder's)")
    p.add_argument("--data", default=os.environ.get("CONTEXTLENS_DATA", "/work/shared/data"))
    args = p.parse_args(argv)
    encoder = make_task_encoder(model=args.model, engine=args.engine)
    graph = datasets.wordnet_graph(args.data)
    total = len(graph.keys)
    rng = np.random.default_rng(0)
    if args.split:
        rows = split_rows(args.data, args.split, graph)
    elif args.first:
        rows = np.arange(min(args.n, total))
    else:
        rows = np.sort(rng.choice(total, min(args.n, total), replace=False))
    view = encoder.layer_position(-1)
    encoder.encode(["warm up"])  # the session's first run is not timed
    sample = glosses._gloss_texts(graph, rows.tolist())
    every = glosses._gloss_texts(graph, range(total))
    with tempfile.TemporaryDirectory() as root:
        cache = EncodingCache(encoder, root=root)
        first = timed(lambda: glosses.gloss_embeddings(cache, graph, rows, [view]))
        others = np.setdiff1d(rng.choice(total, 2 * len(rows), replace=False), rows)[:len(rows)]
        again = np.concatenate([rows, others])
        counted = []
        real = glosses._encode_glosses

        def counting(enc, texts, *a, **k):
            counted.append(len(texts))
            return real(enc, texts, *a, **k)

        glosses._encode_glosses = counting
        try:
            second = timed(lambda: glosses.gloss_embeddings(cache, graph, again, [view]))
        finally:
            glosses._encode_glosses = real
    n_pieces, all_pieces = pieces(encoder, sample), pieces(encoder, every)
    rate = n_pieces / first["cpu"]
    print(json.dumps({
        "model": args.model, "engine": encoder.engine, "threads": models.threads_in_use(encoder._runner),
        "senses": len(rows), "what": args.split or ("first" if args.first else "sample (seed 0)"),
        "pieces": n_pieces, "first_request": first, "senses_per_second": len(rows) / first["wall"],
        "pieces_per_cpu_second": rate,
        "second_request": {"senses": len(again), "encoded": sum(counted), **second},
        "all_wordnet": {"senses": total, "pieces": all_pieces, "cpu_minutes": all_pieces / rate / 60,
                        "wall_minutes_at_this_rate": all_pieces / (n_pieces / first["wall"]) / 60}}))


if __name__ == "__main__":
    main()
