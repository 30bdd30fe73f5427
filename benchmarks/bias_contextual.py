"""The contextual bias figures of benchmarks/RESULTS.md: SEAT on minilm and mpnet, WEAT on their
layer-0 rows, and CEAT per layer on minilm over the shared corpora.

    nice -n 10 python benchmarks/bias_contextual.py [--models minilm,mpnet] [--ceat-model minilm]
        [--per-word 30] [--samples 10000] [--permutations 10000] [--seed 0] [--json]

SEAT: May et al.'s template sentences of each word, mean-pooled over the model's pieces at
its last layer (its own sentence vector), one-sided permutation p (exact up to
--permutations partitions, else that many seeded ones). CEAT: for each word at most
--per-word sentences of $CONTEXTLENS_DATA/corpora (Brown, ABC, movie reviews; seeded
sample), encoded once; --samples draws per test and layer, combined by DerSimonian-Laird.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from contextlens.bias import SET_KEYS, TESTS, ceat_by_layer, ceat_contexts, seat, weat_encoder
from contextlens.encoders.registry import make_encoder


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def figures(models: list[str], ceat_model: str, per_word: int, samples: int,
            permutations: int, seed: int) -> dict:
    out: dict = {"per_word": per_word, "samples": samples, "permutations": permutations, "seed": seed,
                 "seat": [], "layer0": [], "ceat": [], "seconds": {}}
    for name in models:
        start = time.perf_counter()
        encoder = make_encoder(model=name, attention=False)
        for t in TESTS.values():
            out["seat"].append(seat(encoder, t.sets, permutations=permutations, seed=seed).as_dict())
            out["layer0"].append(weat_encoder(encoder, t.sets,
                                              permutations=permutations, seed=seed).as_dict())
            _log(f"{name} {t.name}: SEAT d {out['seat'][-1]['effect_size']:.2f}, layer-0 WEAT d "
                 f"{out['layer0'][-1]['effect_size']:.2f}")
        out["seconds"][f"seat+layer0 {name}"] = time.perf_counter() - start
    if ceat_model:
        start = time.perf_counter()
        words = [w for t in TESTS.values() for key in SET_KEYS for w in getattr(t.sets, key)]
        contexts = ceat_contexts(words, model=ceat_model, per_word=per_word, seed=seed)
        top = max(contexts)
        out["contexts"] = {"words": len(set(words)), "with_contexts": len(contexts[top]),
                           "sentences": int(sum(len(v) for v in contexts[top].values()))}
        out["seconds"]["ceat contexts"] = time.perf_counter() - start
        start = time.perf_counter()
        for t in TESTS.values():
            try:
                rows = ceat_by_layer(contexts, t.sets, model=ceat_model, samples=samples, seed=seed)
            except Exception as err:  # a test whose sets lack contexts is reported, not fatal
                out["ceat"].append({"test": t.name, "error": str(err)})
                _log(f"CEAT {t.name}: {err}")
                continue
            out["ceat"] += [r.as_dict() for r in rows]
            _log(f"CEAT {t.name}: " + " ".join(f"L{r.layer} {r.effect_size:.2f}" for r in rows))
        out["seconds"]["ceat"] = time.perf_counter() - start
    return out


def _markdown(out: dict) -> str:
    lines = ["| test | " + " | ".join(f"{m} {k}" for m in sorted({r["model"] for r in out["seat"]})
                                        for k in ("layer-0 d", "SEAT d", "SEAT p")) + " |"]
    models = sorted({r["model"] for r in out["seat"]})
    lines.append("|---|" + "---:|" * (3 * len(models)))
    for name in TESTS:
        cells = []
        for m in models:
            z = next(r for r in out["layer0"] if r["model"] == m and r["test"] == name)
            s = next(r for r in out["seat"] if r["model"] == m and r["test"] == name)
            cells += [f"{z['effect_size']:.2f}", f"{s['effect_size']:.2f}", f"{s['p_value']:.2g}"]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    if out["ceat"]:
        layers = sorted({r["layer"] for r in out["ceat"] if "layer" in r})
        lines += ["", "| test | " + " | ".join(f"L{k}" for k in layers) + " | last layer 95 % CI, p, I² | "
                  "n X/Y/A/B |", "|---|" + "---:|" * len(layers) + "---|---|"]
        for name in TESTS:
            rs = [r for r in out["ceat"] if r["test"] == name]
            if rs and "error" in rs[0]:
                lines.append(f"| {name} | {rs[0]['error']} |")
                continue
            last = rs[-1]
            lines.append(f"| {name} | " + " | ".join(f"{r['effect_size']:.2f}" for r in rs) +
                         f" | {last['ci'][0]:.2f}–{last['ci'][1]:.2f}, {last['p_value']:.2g}, "
                         f"{last['i2']:.2f} | {last['n_x']}/{last['n_y']}/{last['n_a']}/{last['n_b']} |")
    lines.append(f"\ncontexts: {out.get('contexts')}; seconds: "
                 + ", ".join(f"{k} {v:.0f}" for k, v in out["seconds"].items()))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="minilm,mpnet")
    ap.add_argument("--ceat-model", default="minilm", help="'' skips CEAT")
    ap.add_argument("--per-word", type=int, default=30)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--permutations", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = figures([m for m in args.models.split(",") if m], args.ceat_model, args.per_word, args.samples,
                  args.permutations, args.seed)
    print(json.dumps(out) if args.json else _markdown(out))


if __name__ == "__main__":
    main()
