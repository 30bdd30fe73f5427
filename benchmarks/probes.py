"""What each layer knows (benchmarks/RESULTS.md, issue 25): probes with control tasks, CKA maps
and the papers' geometry, for minilm, mpnet, smollm2, their random-weights twins and GloVe.

    python benchmarks/probes.py probes [--models glove,minilm,minilm+random,...]
                                       [--tasks pos,supersense,sense]
    python benchmarks/probes.py cka [--models minilm,mpnet,smollm2] [--sample 500] [--seed 0] [--only M]
    python benchmarks/probes.py geometry [--models minilm,mpnet,smollm2] [--sample 500] [--min-count 5]
    python benchmarks/probes.py massive [--model smollm2] [--pairs 3-8,5-20] [--sample 500] [--seed 0]
    python benchmarks/probes.py speed [--model minilm]
    python benchmarks/probes.py baselines
    python benchmarks/probes.py tables

A model is ``glove`` (GloVe 6B-50d, its one layer), a packaged model, or ``NAME+random`` (its
random-weights twin, seed 0). Every result is kept as JSON under ``--out`` (default
``out/probes``), one file per run; a run whose file exists is skipped, so a killed sweep
resumes. ``baselines``: what answering without a vector gives on the same words: the train
words' most frequent label, and a lookup of each word type's most frequent train label (an
unseen type gets the most frequent label: a probe over static vectors can beat it by
generalising to unseen types, not on the types it has seen), for ``sense`` per lemma and
averaged over lemmas. ``tables`` prints the markdown tables of
RESULTS.md from those files. ``speed``
times ``probe pos`` from cold (a fresh encodings cache in a temporary folder; the model, its
ONNX export and the parsed SemCor stay in the usual cache) and then warm, in this process:
wall and CPU seconds (``time.process_time``: every thread of the process).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from contextlens.analysis.cka import corpus_sample, layer_cka
from contextlens.analysis.geometry import geometry
from contextlens.analysis.probing import PROBE_TASKS, probe
from contextlens.datasets import resolve_data_dir
from contextlens.evaluation.runner import make_task_encoder
from contextlens.files import atomic_output

MODELS = ("glove", "minilm", "minilm+random", "mpnet", "mpnet+random", "smollm2", "smollm2+random")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def encoder(spec: str):
    """``glove`` | ``NAME`` | ``NAME+random``: the task encoder (every layer, no attention)."""
    if spec == "glove":
        return make_task_encoder(vectors="glove-6b-50d")
    name, _, random = spec.partition("+")
    return make_task_encoder(name, random_weights=0 if random == "random" else None)


def _save(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as tmp:
        tmp.write_text(json.dumps(data, indent=1))


def _load(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.is_file() else None


def run_probes(models, tasks, out: Path) -> None:
    for spec in models:
        todo = [t for t in tasks if not (out / f"probe-{spec}-{t}.json").is_file()]
        if not todo:
            continue
        enc = encoder(spec)
        for task in todo:
            start, cpu = time.perf_counter(), time.process_time()
            r = probe(enc, task).as_dict()
            r["seconds"] = {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu}
            _save(out / f"probe-{spec}-{task}.json", r)
            _log(f"{spec} {task}: " + " ".join(f"{x['layer']}:{x['accuracy']:.3f}/{x['selectivity']:.3f}"
                                                for x in r["rows"]) + f" E={r['expected_layer']} "
                 f"({r['seconds']['wall']:.0f} s wall, {r['seconds']['cpu']:.0f} s CPU)")
        del enc


def run_cka(models, sample: int, seed: int, out: Path, only: str | None = None) -> None:
    """Every model's map and every pair's; ``only``: just the maps that involve that model."""
    texts = corpus_sample(resolve_data_dir(), sample, seed=seed)
    source = f"{sample} sentences of the shared corpora (seed {seed})"
    pairs = [(m, None) for m in models] + [(a, b) for i, a in enumerate(models) for b in models[i + 1:]]
    pairs = [(a, b) for a, b in pairs if only is None or only in (a, b)]
    for a, b in pairs:
        path = out / f"cka-{a}-{b or a}-{sample}-{seed}.json"
        if path.is_file():
            continue
        start, cpu = time.perf_counter(), time.process_time()
        r = layer_cka(encoder(a), texts, other=None if b is None else encoder(b), source=source).as_dict()
        r["seconds"] = {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu}
        _save(path, r)
        _log(f"CKA {a} x {b or a}: {r['n_words']} tokens, {r['seconds']['wall']:.0f} s")


def run_geometry(models, sample: int, seed: int, min_count: int, out: Path) -> None:
    texts = corpus_sample(resolve_data_dir(), sample, seed=seed)
    for spec in models:
        for standardize in (False, True):
            path = out / f"geometry-{spec}-{sample}-{seed}{'-z' if standardize else ''}.json"
            if path.is_file():
                continue
            r = geometry(encoder(spec), texts, min_count=min_count, seed=seed, standardize=standardize)
            for layer in r["layers"]:
                layer.pop("per_word")
            _save(path, r)
            _log(f"geometry {spec}{' standardized' if standardize else ''}: {len(r['words'])} words")


def massive(model: str, sample: int, seed: int, pairs: str) -> None:
    """Why a causal model's CKA map has blocks of 1.00: per layer, the median norm of the
    tokens' vectors, of the sentences' first tokens, and the largest; then linear CKA of some
    layer pairs over every token, without the first tokens, and without them on z-scored
    dimensions. The vectors are the ``cka`` run's, read from the evaluation cache."""
    import numpy as np

    from contextlens.analysis.cka import CACHE_TASK, linear_cka
    from contextlens.analysis.layerstack import cached_layers
    from contextlens.encoders.encoding_cache import EncodingCache

    texts = corpus_sample(resolve_data_dir(), sample, seed=seed)
    items = [(tuple(s.split()), i) for s in texts for i in range(len(s.split()))]
    stack = cached_layers(EncodingCache(encoder(model)), CACHE_TASK, items)
    first = np.array([i == 0 for _, i in items])
    print("| layer | median norm | median norm, first tokens | largest norm |\n|---|---:|---:|---:|")
    for k, layer in enumerate(stack):
        norms = np.linalg.norm(layer.astype(np.float32), axis=1)
        print(f"| {k} | {np.median(norms):.1f} | {np.median(norms[first]):.1f} | {norms.max():.1f} |")

    def z(x):
        x = x.astype(np.float64)
        return (x - x.mean(0)) / (x.std(0) + 1e-12)

    print("\n| layers | every token | without the first tokens | z-scored, without the first |\n"
          "|---|---:|---:|---:|")
    for pair in pairs.split(","):
        a, b = (int(k) for k in pair.split("-"))
        x, y = stack[a], stack[b]
        print(f"| {a} × {b} | {linear_cka(x, y):.3f} | {linear_cka(x[~first], y[~first]):.3f} | "
              f"{linear_cka(z(x[~first]), z(y[~first])):.3f} |")


def speed(model: str) -> None:
    with tempfile.TemporaryDirectory() as cache:
        for run in ("cold", "warm"):
            start, cpu = time.perf_counter(), time.process_time()
            enc = encoder(model)
            loaded = time.perf_counter() - start
            r = probe(enc, "pos", cache_root=cache)
            _log(f"{run}: {time.perf_counter() - start:.1f} s wall ({loaded:.1f} s loading the model), "
                 f"{time.process_time() - cpu:.1f} s CPU; accuracy by layer "
                 + " ".join(f"{x.accuracy:.3f}" for x in r.rows))


def baselines() -> None:
    from collections import Counter, defaultdict

    import numpy as np

    from contextlens.analysis.probing import semcor_rows
    from contextlens.analysis.probing.tasks import lemma_of, polysemous_lemmas, read_lexnames, task_labels
    from contextlens.datasets import load_semcor

    root = resolve_data_dir()
    split = semcor_rows(load_semcor(root))
    train, test = split["train"], split["test"]

    def scores(tr, te, y_tr, y_te) -> tuple[float, float]:
        overall = Counter(y_tr).most_common(1)[0][0]
        by_type = defaultdict(Counter)
        for r, y in zip(tr, y_tr):
            by_type[r.word.lower()][y] += 1
        typed = [by_type[r.word.lower()].most_common(1)[0][0] if r.word.lower() in by_type else overall
                 for r in te]
        return (float(np.mean([y == overall for y in y_te])),
                float(np.mean([p == y for p, y in zip(typed, y_te)])))

    lexnames = read_lexnames(root)
    for task in ("pos", "supersense"):
        y_train, y_test = task_labels(task, train, lexnames), task_labels(task, test, lexnames)
        major, typed = scores(train, test, y_train, y_test)
        print(f"{task}: most frequent label {major:.3f}, most frequent label of the word type {typed:.3f}")
    per_lemma = []
    for lemma in polysemous_lemmas(train, test):
        tr = [r for r in train if lemma_of(r) == lemma]
        te = [r for r in test if lemma_of(r) == lemma]
        per_lemma.append(scores(tr, te, [r.key for r in tr], [r.key for r in te]))
    mfs, typed = np.mean(per_lemma, axis=0)
    print(f"sense ({len(per_lemma)} lemmas, macro): most frequent sense {mfs:.3f}, most frequent sense of "
          f"the word type {typed:.3f}")


def _fmt(x, digits: int = 3) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def tables(out: Path) -> None:
    for task in PROBE_TASKS:
        runs = [r for r in (_load(out / f"probe-{spec}-{task}.json") for spec in MODELS) if r is not None]
        if not runs:
            continue
        print(f"\n#### {task}: accuracy / selectivity by layer\n")
        print("| layer | " + " | ".join(r["model"] for r in runs) + " |")
        print("|---" * (len(runs) + 1) + "|")
        for k in range(max(len(r["rows"]) for r in runs)):
            rows = [r["rows"][k] if k < len(r["rows"]) else None for r in runs]
            cells = ["" if x is None else f"{x['accuracy']:.3f} / {x['selectivity']:.3f}" for x in rows]
            print(f"| {k} | " + " | ".join(cells) + " |")
        print("| expected layer | " + " | ".join(_fmt(r["expected_layer"], 2) for r in runs) + " |")
        sizes = [f"{x['n_train']} / {x['n_test']}; {x['missing']}" for x in (r["rows"][0] for r in runs)]
        print("| words (train / test; missing) | " + " | ".join(sizes) + " |")
    for path in sorted(out.glob("cka-*.json")):
        r = _load(path)
        a, b = r["models"]
        print(f"\n#### CKA {a} (rows) × {b} (columns), {r['n_words']} tokens\n")
        print("| | " + " | ".join(str(k) for k in r["layers"][1]) + " |")
        print("|---" * (len(r["layers"][1]) + 1) + "|")
        for k, row in zip(r["layers"][0], r["matrix"]):
            print(f"| {k} | " + " | ".join(f"{v:.2f}" for v in row) + " |")
    for path in sorted(out.glob("geometry-*.json")):
        r = _load(path)
        print(f"\n#### geometry {path.stem}: {len(r['words'])} words, {r['n_sentences']} sentences\n")
        print("| layer | anisotropy | self-sim | self adj | intra | intra adj | MEV | MEV adj "
              "| top rogue (share) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for x in r["layers"]:
            rogue = ", ".join(f"{d['dimension']} ({_fmt(d['share'])})" for d in x["rogue"])
            print(f"| {x['layer']} | {x['anisotropy']:.3f} | {x['self_similarity']:.3f} | "
                  f"{x['self_similarity_adjusted']:.3f} | {x['intra_sentence']:.3f} | "
                  f"{x['intra_sentence_adjusted']:.3f} | {x['mev']:.3f} | {x['mev_adjusted']:.3f} "
                  f"| {rogue} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("probes", "cka", "geometry", "massive", "speed", "baselines",
                                         "tables"))
    parser.add_argument("--models", default=None)
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--only", default=None, help="cka: only the maps that involve this model")
    parser.add_argument("--pairs", default="3-8,5-20,15-25,2-15,11-20", help="massive: layer pairs a-b,...")
    parser.add_argument("--tasks", default=",".join(PROBE_TASKS))
    parser.add_argument("--sample", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("out/probes"))
    args = parser.parse_args()
    models = args.models.split(",") if args.models else None
    if args.what == "probes":
        run_probes(models or list(MODELS), args.tasks.split(","), args.out)
    elif args.what == "cka":
        run_cka(models or ["minilm", "mpnet", "smollm2"], args.sample, args.seed, args.out, args.only)
    elif args.what == "geometry":
        run_geometry(models or ["minilm", "mpnet", "smollm2"], args.sample, args.seed, args.min_count,
                     args.out)
    elif args.what == "massive":
        massive(args.model, args.sample, args.seed, args.pairs)
    elif args.what == "speed":
        speed(args.model)
    elif args.what == "baselines":
        baselines()
    else:
        tables(args.out)


if __name__ == "__main__":
    main()
