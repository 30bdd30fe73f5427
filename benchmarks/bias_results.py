"""The bias figures of benchmarks/RESULTS.md: Caliskan et al.'s ten WEAT tests on GloVe 6B-50d.

    python benchmarks/bias_results.py [--permutations 100000] [--seed 0] [--tests weat6,weat7]
        [--wefe-p N] [--json]

Per test: our effect size d (Caliskan's sample standard deviation) and one-sided permutation
p-value (exact when C(|X|+|Y|, |X|) <= --permutations, else that many seeded partitions);
WEFE 0.4.1's effect size on the same words and vectors (its population standard deviation,
so it is ours with ddof=0) and the largest difference from ours with ddof=0; with
``--wefe-p N``, WEFE's sampled p-value from N draws (slow: scikit-learn's input checks make
each draw of a 25 × 2 test take ~0.3 s); and the published GloVe-840B figures (Table 1).
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from contextlens.bias import TESTS, get_test, weat_table
from contextlens.bias.weat import resolve_sets
from contextlens.static.pretrained import load_vectors


def _wefe(table):
    np.float_ = np.float64  # wefe 0.4.1 annotates with np.float_, removed in NumPy 2 (import only)
    try:
        from wefe.metrics import WEAT
        from wefe.query import Query
        from wefe.word_embedding_model import WordEmbeddingModel
    finally:
        del np.float_
    return WEAT(), Query, WordEmbeddingModel(table.to_gensim(), table.name)


def figures(names: list[str], permutations: int, seed: int, wefe_p: int) -> dict:
    table = load_vectors("glove-6b-50d")
    metric, Query, model = _wefe(table)
    rows = []
    for name in names:
        test = get_test(name)
        ours = weat_table(table, test.sets, permutations=permutations, seed=seed)
        ours0 = weat_table(table, test.sets, ddof=0, permutations=1)
        found, _ = resolve_sets(table, test.sets)
        query = Query([list(found.X), list(found.Y)], [list(found.A), list(found.B)])
        start = time.perf_counter()
        np.random.seed(seed)  # wefe 0.4.1 draws with np.random.choice
        theirs = metric.run_query(query, model, lost_vocabulary_threshold=0.0, calculate_p_value=wefe_p > 0,
                                  p_value_iterations=max(wefe_p, 1))
        print(f"{test.name}: d {ours.effect_size:.3f} p {ours.p_value:.2g}; WEFE d "
              f"{theirs['effect_size']:.3f} ({time.perf_counter() - start:.1f} s)",
              file=sys.stderr, flush=True)
        rows.append({
            "test": test.name, "alias": test.alias, "n": [ours.n_x, ours.n_y, ours.n_a, ours.n_b],
            "missing": [w for words in ours.missing.as_dict().values() for w in words],
            "d": ours.effect_size, "p": ours.p_value, "exact": ours.exact, "permutations": ours.permutations,
            "d_ddof0": ours0.effect_size, "wefe_d": float(theirs["effect_size"]),
            "wefe_p": float(theirs["p_value"]) if wefe_p > 0 else None,
            "published": {"n": test.published.n, "d": test.published.d, "p": test.published.p},
        })
    diff = max(abs(r["d_ddof0"] - r["wefe_d"]) for r in rows)
    return {"vectors": table.name, "permutations": permutations, "seed": seed, "wefe_p_draws": wefe_p,
            "max_abs_diff_vs_wefe": diff, "rows": rows}


def _markdown(out: dict) -> str:
    lines = ["| test | n X/Y/A/B | ours d | ours p | WEFE d | WEFE p | published d (840B) | published p |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in out["rows"]:
        how = "exact" if r["exact"] else f"{r['permutations']:,} sampled"
        wefe_p = "" if r["wefe_p"] is None else f"{r['wefe_p']:.2g}"
        lines.append(f"| {r['alias']} {r['test']} | {'/'.join(map(str, r['n']))} | {r['d']:.2f} | "
                     f"{r['p']:.2g} ({how}) | {r['wefe_d']:.2f} | {wefe_p} | {r['published']['d']:.2f} | "
                     f"{r['published']['p']:.2g} |")
    lines.append(f"\nlargest |ours (ddof=0) - WEFE| = {out['max_abs_diff_vs_wefe']:.1e}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--permutations", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tests", default=",".join(TESTS), help="comma-separated test names (default: all ten)")
    ap.add_argument("--wefe-p", type=int, default=0, help="draws for WEFE's p-value (0: skip it)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = figures(args.tests.split(","), args.permutations, args.seed, args.wefe_p)
    print(json.dumps(out) if args.json else _markdown(out))


if __name__ == "__main__":
    main()
