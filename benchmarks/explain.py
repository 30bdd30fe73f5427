"""Explanations inside a layer: speed (warm) and the size of their views (issue 24).

    python benchmarks/explain.py [--model minilm] [--repeats 3] [--steps 32] [--json]

A 20-word sentence (and a second one, for the two-text functions) through the model, each function
run once to warm up and then ``--repeats`` times: ``sublayers`` (two texts), ``patch`` (every layer,
the layer's output), ``attributions`` with every method (integrated gradients at ``--steps`` points)
and with each method alone; wall and CPU seconds (median, and the CPU time of this process, which
on a busy shared machine says more than the wall clock). Then the views of a 40-word sentence:
each page's size in bytes (standalone HTML, scripts inlined). Torch runs on ``CONTEXTLENS_THREADS``
threads (default: every core).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

from contextlens import views
from contextlens.analysis.faithfulness import METHODS, attributions
from contextlens.analysis.patching import patch
from contextlens.analysis.sublayers import sublayers
from contextlens.encoders.registry import make_encoder
from contextlens.text import tokenize

TWENTY = "We sat on the bank of the river and watched the small boats drift past the mill at dusk."
OTHER = "She walked into the bank on Monday morning and asked the clerk about a loan for her new shop."
FORTY = ("After the long winter the old bank by the river where my grandfather kept his savings closed "
         "its doors and the town council argued for months about what to do with the empty stone building "
         "next to the bridge.")


def timed(fn, repeats: int) -> dict:
    fn()  # warm: the model loaded, the first pass run
    walls, cpus = [], []
    for _ in range(repeats):
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return {"wall_s": round(statistics.median(walls), 3), "cpu_s": round(statistics.median(cpus), 3),
            "walls": [round(x, 3) for x in walls]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="minilm")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args()
    encoder = make_encoder(model=args.model)
    out = {"model": args.model, "threads": os.environ.get("CONTEXTLENS_THREADS", "all cores"),
           "words": len(tokenize(TWENTY)), "view_words": len(tokenize(FORTY)),
           "load_average": [round(x, 1) for x in os.getloadavg()], "speed": {}}
    speed = out["speed"]
    speed["sublayers"] = timed(lambda: sublayers(encoder, TWENTY, OTHER, "bank"), args.repeats)
    speed["patch"] = timed(lambda: patch(encoder, TWENTY, OTHER, "bank"), args.repeats)
    speed["attributions all"] = timed(lambda: attributions(encoder, TWENTY, "bank", steps=args.steps),
                                      args.repeats)
    for m in METHODS:
        speed[f"attributions {m}"] = timed(lambda m=m: attributions(encoder, TWENTY, "bank", methods=m,
                                                                    steps=args.steps), 1)
    print(f"speed done: {speed}", file=sys.stderr, flush=True)
    made = [views.sublayers_view(sublayers(encoder, FORTY, OTHER, "bank")),
            views.attributions_view(attributions(encoder, FORTY, "bank", steps=args.steps)),
            views.patch_view(patch(encoder, FORTY, OTHER, "bank"))]
    out["views_40_words"] = {v.kind: len(v.html().encode()) for v in made}
    out["load_average_after"] = [round(x, 1) for x in os.getloadavg()]
    if args.json:
        print(json.dumps(out))
    else:
        for k, v in out.items():
            print(f"{k}: {v}")


if __name__ == "__main__":
    main()
