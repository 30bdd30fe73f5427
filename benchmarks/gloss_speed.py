"""How fast a model encodes LMMS's gloss sentences (benchmarks/RESULTS.md, issue 26).

    python benchmarks/gloss_speed.py MODEL [N] [--data DIR]

Encodes the gloss sentences of WordNet's first N senses (default 2,048, one cached block)
at the model's last layer, through the evaluation cache (a block already cached is read,
not timed: clear it first), and prints wall and CPU seconds with the extrapolation to all
of WordNet's senses as JSON.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from contextlens import datasets
from contextlens.encoders.encoding_cache import EncodingCache
from contextlens.evaluation.glosses import GLOSS_BLOCK, gloss_embeddings
from contextlens.evaluation.runner import make_task_encoder


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("n", type=int, nargs="?", default=GLOSS_BLOCK, help="senses to encode")
    p.add_argument("--data", default="/work/shared/data")
    args = p.parse_args(argv)
    encoder = make_task_encoder(model=args.model)
    graph = datasets.wordnet_graph(args.data)
    n = min(args.n, len(graph.keys))
    wall, cpu = time.perf_counter(), time.process_time()
    gloss_embeddings(EncodingCache(encoder), graph, np.arange(n), [encoder.layer_position(-1)])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    total = len(graph.keys)
    print(json.dumps({"model": args.model, "senses": n, "wall": wall, "cpu": cpu, "per_second": n / wall,
                      "all_wordnet_minutes": total / (n / wall) / 60,
                      "all_wordnet_cpu_minutes": total / (n / cpu) / 60}))


if __name__ == "__main__":
    main()
