"""Same-sense precision@k of usage search, per stored layer and model.

Does ``index search`` find usages of the *sense* a query usage has, or only of the word?
For sense-labelled usages (CoarseWSD-20 train: coarse senses of 20 nouns; SemCor: WordNet
senses), this builds a real usage index of the labelled sentences with every layer of
the model stored (``build_index``), then queries it with each labelled usage in turn
(``like_usage``: the usages of the same word nearest a stored usage, itself left out) and
counts how many of the ``k`` nearest labelled usages share the query's sense.

- ``precision@k``: the mean over queries (a word's queries weigh by its usages);
  ``macro``: the mean over words of each word's mean; ``chance``: what neighbours drawn
  at random from the word's other usages would give, ``sum_s n_s (n_s - 1) / (n (n - 1))``
  per word (a skewed word scores high by chance: compare against it).
- Sample (bounded run): CoarseWSD-20, ``--coarse-per-word`` sentences per word drawn at
  random (seed 0) from train, every word; SemCor, the ``--semcor-lemmas`` most frequent
  lemmas with at least two senses each holding 10 % of its single-word tagged instances,
  ``--semcor-per-lemma`` instances each (seed 0). CoarseWSD matches the word exactly
  (lower-cased); SemCor matches WordNet base forms (``match="lemma"``). An index usage
  that is not a labelled instance (another occurrence of the word in a sentence) is
  neither a query nor counted among the neighbours.

    python benchmarks/index_senses.py [--models minilm,mpnet] [--datasets coarsewsd,semcor] [--json]

``--task clustering`` measures instead how well sense induction (``index senses``, ``senses``:
:class:`~contextlens.analysis.senses.SenseClusterer`) recovers the labelled senses, per
clustering method and stored layer, on the same indexes; ``--datasets`` may then also name
``bank``: the README's index of the shipped corpora (``--words bank,spring --match lemma``),
whose 326 usages of *bank* are labelled by hand in ``bank_senses.tsv`` (32 of them the
river-side sense). Per word (then the mean over words): the adjusted Rand index (ARI) and
V-measure against the gold senses, ``minority recall`` (each sense but the most frequent one
with at least 5 usages: the share of its usages in clusters where it is the most common sense;
0 when a larger sense swallows it), and k found against the senses with at least 5 usages; for
``bank``, the river sense's recall (its usages in clusters where it is the most common sense)
and precision (its share of those clusters). Methods (``METHODS``): the previous default
(average linkage on raw cosine, k by silhouette), average / complete linkage on centred vectors
(k by silhouette), spectral on raw and on centred vectors (k by eigengap; the new default), and
scikit-learn's HDBSCAN on centred vectors (minimum cluster 3 % of the usages, noise joined to
the nearest cluster).

    python benchmarks/index_senses.py --task clustering --coarse-per-word 400 \
        --datasets coarsewsd,semcor,bank [--models minilm,mpnet] [--work DIR] [--json]

``--work DIR`` keeps the corpora and indexes there (a complete index is not built again).

``--task bounds`` measures time (wall and CPU, every thread) and peak memory (the peak resident
size, reset once the imports and model are loaded and a first small run is done, above the
resident size then; Linux) of both senses entry points at their bounds, each in a fresh
process: ``senses`` with minilm on 2,000 Brown sentences (its default ``max_sentences``) and on
the issue's 13,146 (``max_sentences`` raised: the user asks), and ``induce_senses`` clustering
10,000 usages (``max_usages``' bound) of a word with 12,000, on a synthetic index of
384-dimensional vectors.

    python benchmarks/index_senses.py --task bounds [--cases 0,2] [--work DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

KS = (1, 5, 10)


def data_root() -> Path:
    return Path(os.environ.get("CONTEXTLENS_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def coarse_sample(root: Path, per_word: int, seed: int = 0):
    """``(words, [(doc, tokens, target index, sense)])``: ``per_word`` random train items per word."""
    from contextlens.datasets import coarsewsd_words, load_coarsewsd

    items = []
    words = coarsewsd_words(root)
    for word in words:
        got = load_coarsewsd(root, word, "train")
        random.Random(seed).shuffle(got := list(got))
        items += [(word, it.tokens, it.index, it.label) for it in got[:per_word]]
    return words, items


def semcor_sample(root: Path, n_lemmas: int, per_lemma: int, seed: int = 0):
    """``(lemmas, [(doc, tokens, target index, sense key)])`` of polysemous SemCor lemmas."""
    from contextlens.datasets.semcor import load_semcor

    by_lemma = defaultdict(list)
    for s in load_semcor(root):
        for inst in s.instances:
            token = s.tokens[inst.index]
            if inst.keys and token.isalpha() and inst.lemma.isalpha():  # single words only
                by_lemma[inst.lemma.lower()].append((s.tokens, inst.index, inst.keys[0]))
    chosen = []
    for lemma, found in sorted(by_lemma.items(), key=lambda t: (-len(t[1]), t[0])):
        senses = Counter(key for _, _, key in found)
        if sum(1 for c in senses.values() if c >= 0.1 * len(found)) >= 2:
            chosen.append(lemma)
        if len(chosen) == n_lemmas:
            break
    items = []
    for lemma in chosen:
        found = list(by_lemma[lemma])
        random.Random(seed).shuffle(found)
        items += [(lemma, tokens, index, key) for tokens, index, key in found[:per_lemma]]
    return chosen, items


def write_corpus(folder: Path, items) -> dict[tuple, str]:
    """One file per word (a line per item); returns ``(file name, line number, start, end) → sense``."""
    from contextlens.encoders.tokenized import target_text

    lines, labels = defaultdict(list), {}
    for word, tokens, index, sense in items:
        text, (start, end) = target_text(tokens, index)
        doc = str(folder / f"{word}.txt")
        labels[(f"{word}.txt", len(lines[doc]), start, end)] = sense
        lines[doc].append(text)
    folder.mkdir(parents=True, exist_ok=True)
    for doc, texts in lines.items():
        Path(doc).write_text("\n".join(texts) + "\n", encoding="utf-8")
    return labels


def precision(db: str, labels: dict[tuple, str], layers: list[int]) -> dict[int, dict]:
    """Per layer: same-sense precision@k (micro, macro over words) and the chance level."""
    from contextlens.index import like_usage, open_store

    store = open_store(db)
    table = store.table.search().select(["usage_id", "word", "doc", "sentence_no", "start", "end"]) \
        .limit(None).to_arrow().to_pylist()
    sense = {r["usage_id"]: labels.get((Path(r["doc"]).name, r["sentence_no"], r["start"], r["end"]))
             for r in table}
    word_of = {r["usage_id"]: r["word"] for r in table}
    unlabelled = Counter(r["word"] for r in table if sense[r["usage_id"]] is None)
    queries = sorted(u for u, s in sense.items() if s is not None)
    per_word_senses = defaultdict(Counter)
    for u in queries:
        per_word_senses[word_of[u]][sense[u]] += 1
    chance = {w: sum(c * (c - 1) for c in cnt.values()) / max(sum(cnt.values()) * (sum(cnt.values()) - 1), 1)
              for w, cnt in per_word_senses.items()}
    out = {}
    for layer in layers:
        hits = {k: defaultdict(list) for k in KS}
        started = time.perf_counter()
        for u in queries:
            w = word_of[u]
            found = like_usage(store, u, k=max(KS) + unlabelled[w], layer=layer)["results"]
            near = [sense[r["usage_id"]] for r in found if sense[r["usage_id"]] is not None][: max(KS)]
            for k in KS:
                if near[:k]:
                    hits[k][w].append(sum(s == sense[u] for s in near[:k]) / len(near[:k]))
        row = {"layer": layer, "queries": len(queries), "seconds": round(time.perf_counter() - started, 1)}
        for k in KS:
            row[f"p@{k}"] = round(float(np.mean([x for v in hits[k].values() for x in v])), 4)
            row[f"macro_p@{k}"] = round(float(np.mean([np.mean(v) for v in hits[k].values()])), 4)
        row["chance"] = round(float(np.mean([chance[w] for w in hits[1]])), 4)
        row["chance_micro"] = round(float(sum(chance[w] * len(hits[1][w]) for w in hits[1])
                                          / sum(len(v) for v in hits[1].values())), 4)
        out[layer] = row
    return out


def build(dataset: str, model: str, args, tmp: Path):
    """``(db, labels, words, items, match, seconds)``: the labelled sample indexed with every layer."""
    from contextlens.index import build_index
    from contextlens.passes.encoding import make_index_encoder

    root = data_root()
    if dataset == "coarsewsd":
        words, items = coarse_sample(root, args.coarse_per_word)
        match, wn = "lower", None
    else:
        from contextlens.datasets.wordnet import wordnet

        words, items = semcor_sample(root, args.semcor_lemmas, args.semcor_per_lemma)
        match, wn = "lemma", wordnet(root)
    labels = write_corpus(tmp / f"{dataset}-{model}-corpus", items)
    depth = make_index_encoder(model, None)[0].n_model_layers
    encoder = make_index_encoder(model, list(range(depth + 1)))  # every layer, 0 = embedding row
    started = time.perf_counter()
    db = str(tmp / f"{dataset}-{model}-db")
    build_index(sorted(str(p) for p in (tmp / f"{dataset}-{model}-corpus").iterdir()), db, words,
                match=match, wordnet=wn, encoder=encoder)
    return db, labels, words, items, match, time.perf_counter() - started


def run(dataset: str, model: str, args, tmp: Path) -> dict:
    from contextlens.index import open_store

    db, labels, words, items, match, build_s = build(dataset, model, args, tmp)
    rows = precision(db, labels, open_store(db).layers)
    return {"dataset": dataset, "model": model, "words": len(words), "items": len(items),
            "usages": open_store(db).count(), "match": match, "build_seconds": round(build_s, 1),
            "layers": list(rows.values())}


# -- sense induction -------------------------------------------------------------------------------
#: name → (method, centred) of SenseClusterer, or "hdbscan"
METHODS = {
    "average, raw, silhouette (previous default)": ("average", False),
    "average, centred, silhouette": ("average", True),
    "complete, centred, silhouette": ("complete", True),
    "spectral, raw, eigengap": ("spectral", False),
    "spectral, centred, eigengap (default)": ("spectral", True),
    "hdbscan 3 %, centred": "hdbscan",
}
MIN_SENSE = 5  # usages a sense needs to count in k and minority recall


def cluster_with(name: str, x: np.ndarray) -> np.ndarray:
    """``(n,)`` cluster ids of the usage vectors ``x`` by the method ``name`` of :data:`METHODS`."""
    from contextlens.analysis.senses import SenseClusterer, unit_rows

    if METHODS[name] != "hdbscan":
        method, centre = METHODS[name]
        return SenseClusterer(method=method, centre=centre).fit(x).labels_
    from sklearn.cluster import HDBSCAN

    z = unit_rows(unit_rows(x) - unit_rows(x).mean(axis=0))
    labels = HDBSCAN(min_cluster_size=max(5, round(0.03 * len(z)))).fit(z).labels_
    kept = sorted(set(labels.tolist()) - {-1})
    if kept and (labels < 0).any():  # noise joins the nearest cluster centroid
        centroids = unit_rows(np.stack([z[labels == c].mean(axis=0) for c in kept]))
        labels[labels < 0] = np.asarray(kept)[np.argmax(z[labels < 0] @ centroids.T, axis=1)]
    return labels


def induction_scores(gold: list, labels: np.ndarray) -> dict:
    """ARI, V-measure, minority recall (per minority sense), k and the gold senses' count."""
    from sklearn.metrics import adjusted_rand_score, v_measure_score

    gold_a = np.asarray(gold)
    plural = {c: Counter(gold_a[labels == c].tolist()).most_common(1)[0][0] for c in set(labels.tolist())}
    counts = Counter(gold)
    major = counts.most_common(1)[0][0]
    minority = [s for s, n in counts.items() if s != major and n >= MIN_SENSE]
    return {"ari": float(adjusted_rand_score(gold, labels)), "v": float(v_measure_score(gold, labels)),
            "minority_recall": [float(np.mean([plural[c] == s for c in labels[gold_a == s]]))
                                for s in minority],
            "k": len(set(labels.tolist())), "k_gold": sum(n >= MIN_SENSE for n in counts.values())}


def river_scores(gold: list, labels: np.ndarray) -> dict:
    """The river sense's recall (the share of its usages in clusters where it is the most
    common sense) and precision (its share of those clusters' usages); 0 and 0 when swallowed."""
    gold_a = np.asarray(gold)
    river = [c for c in set(labels.tolist())
             if Counter(gold_a[labels == c].tolist()).most_common(1)[0][0] == "river"]
    inside = np.isin(labels, river)
    hits = int((inside & (gold_a == "river")).sum())
    return {"river_recall": round(hits / int((gold_a == "river").sum()), 3),
            "river_precision": round(hits / int(inside.sum()), 3) if river else 0.0}


def bank_labels() -> dict[tuple, str]:
    """``(file name, sentence number, start) → sense`` of the shipped corpora's usages of bank."""
    out = {}
    for line in (Path(__file__).parent / "bank_senses.tsv").read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            name, number, start, _form, sense, _sentence = line.split("\t", 5)
            out[(name, int(number), int(start))] = sense
    return out


def build_bank(model: str, tmp: Path) -> str:
    """The README's index of the shipped corpora, with every layer stored."""
    from contextlens.datasets.wordnet import wordnet
    from contextlens.index import build_index
    from contextlens.passes.encoding import make_index_encoder

    depth = make_index_encoder(model, None)[0].n_model_layers
    db = str(tmp / f"bank-{model}-db")
    build_index(data_root() / "corpora", db, ["bank", "spring"], match="lemma", wordnet=wordnet(data_root()),
                encoder=make_index_encoder(model, list(range(depth + 1))))
    return db


def run_clustering(dataset: str, model: str, args, tmp: Path) -> dict:
    """Per method and contextual layer: the scores of :func:`induction_scores` (means over words)."""
    from contextlens.index import open_store

    if dataset == "bank":
        db, gold_of, words = build_bank(model, tmp), bank_labels(), ["bank"]
        key = lambda r: (Path(r["doc"]).name, r["sentence_no"], r["start"])  # noqa: E731
    else:
        db, labels, words, *_ = build(dataset, model, args, tmp)
        gold_of = labels
        key = lambda r: (Path(r["doc"]).name, r["sentence_no"], r["start"], r["end"])  # noqa: E731
    store = open_store(db)
    layers = [k for k in store.layers if k != 0] if args.cluster_layers is None else args.cluster_layers
    out = []
    for layer in layers:
        data = []
        for word in words:
            rows, x = store.vectors_of(word, layer)
            keep = [i for i, r in enumerate(rows) if key(r) in gold_of]
            if len(keep) >= 10:
                data.append(([gold_of[key(rows[i])] for i in keep], x[keep].astype(np.float64)))
        for name in METHODS:
            started = time.perf_counter()
            scores = [(gold, cluster_with(name, x)) for gold, x in data]
            row = {"layer": layer, "method": name, "seconds": round(time.perf_counter() - started, 1)}
            if dataset == "bank":
                row.update(river_scores(*scores[0]))
            per = [induction_scores(gold, labels) for gold, labels in scores]
            minority = [r for p in per for r in p["minority_recall"]]
            row.update(ari=round(float(np.mean([p["ari"] for p in per])), 3),
                       v=round(float(np.mean([p["v"] for p in per])), 3),
                       minority_recall=round(float(np.mean(minority)), 3) if minority else None,
                       minority_senses=len(minority), k=round(float(np.mean([p["k"] for p in per])), 2),
                       k_gold=round(float(np.mean([p["k_gold"] for p in per])), 2))
            out.append(row)
            print(f"{dataset} {model} layer {layer} {name}: {row}", file=sys.stderr, flush=True)
    return {"dataset": dataset, "model": model, "task": "clustering", "words": len(words),
            "usages": sum(len(g) for g, _ in data), "rows": out}


# -- bounds -----------------------------------------------------------------------------------------
BOUND_CASES = {
    "senses, minilm, 2,000 sentences (default max_sentences)": ("senses", 2_000),
    "senses, minilm, 13,146 sentences (max_sentences=20,000)": ("senses", 13_146),
    "induce_senses, 10,000 of 12,000 usages clustered (max_usages' bound), 384 dims": ("index", 12_000),
}
_CHILD = """
import json, os, sys, time
def status(key):
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith(key + ":"))
kind, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if kind == "senses":
    from contextlens import make_encoder
    from contextlens.analysis.senses import senses
    lines = [l for l in open(os.path.join(work, "brown.txt"), encoding="utf-8").read().splitlines()][:n]
    encoder = make_encoder(model="minilm")
    run = lambda n: senses(encoder, lines[:n], "the", occurrence=0, max_sentences=max(n, 2000))
else:
    from contextlens.index import induce_senses
    run = lambda n: induce_senses(os.path.join(work, "synthetic-db"), "bank", max_usages=min(n, 10_000))
run(20)  # imports, first forward pass
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")  # the peak resident size starts again from here (Linux)
base = status("VmRSS")
started, cpu = time.perf_counter(), time.process_time()
out = run(n)
print(json.dumps({"seconds": round(time.perf_counter() - started, 1),
                  "cpu_seconds": round(time.process_time() - cpu, 1), "base_mib": round(base / 2**20),
                  "peak_mib": round(status("VmHWM") / 2**20),
                  "k": out["k"], "n_clustered": out["n_clustered"]}))
"""


def synthetic_index(path: Path, n: int, dim: int = 384, seed: int = 0) -> None:
    """An index of ``n`` usages of "bank" with vectors in 4 groups around a common direction."""
    from contextlens.corpus.targets import usage_id
    from contextlens.index.store import UsageStore
    from contextlens.passes.rows import EncodedChunk, UsageRow

    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((4, dim))
    store = UsageStore.create(path, {"model": "synthetic", "model_path": "synthetic", "layers": [1],
                                     "dim": dim, "dtype": "float16", "match": "lower", "layout": "lines",
                                     "words": ["bank"], "pooling": "mean"})
    rows = [UsageRow(usage_id("s.txt", i, 0, 4, "bank"), "bank", "bank", "s.txt", i, 0, 4, f"bank {i}")
            for i in range(n)]
    x = 8 + centres[np.arange(n) % 4] + rng.standard_normal((n, dim))
    store.append(0, EncodedChunk(rows, {1: x.astype(np.float32)}))
    store.commit(0, n, n)
    store.finish(0, n)


def run_bounds(tmp: Path, cases: list[int] | None = None) -> list[dict]:
    """Each case of :data:`BOUND_CASES` (or those numbered ``cases``, from 0) in a fresh process:
    seconds (wall and CPU, every thread), peak and base resident MiB."""
    import subprocess

    lines = [t for t in (data_root() / "corpora" / "brown_plain.txt").read_text(encoding="utf-8").splitlines()
             if " the " in f" {t.lower()} "]
    (tmp / "brown.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if not (tmp / "synthetic-db").exists():
        synthetic_index(tmp / "synthetic-db", 12_000)
    out = []
    for number, (name, (kind, n)) in enumerate(BOUND_CASES.items()):
        if cases is not None and number not in cases:
            continue
        done = subprocess.run([sys.executable, "-c", _CHILD, kind, str(n), str(tmp)], capture_output=True,
                              text=True, check=True)
        row = {"case": name, **json.loads(done.stdout.strip().splitlines()[-1])}
        row["above_base_mib"] = row["peak_mib"] - row["base_mib"]
        print(row, file=sys.stderr, flush=True)
        out.append(row)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="search", choices=("search", "clustering", "bounds"))
    ap.add_argument("--models", default="minilm,mpnet")
    ap.add_argument("--datasets", default="coarsewsd,semcor")
    ap.add_argument("--coarse-per-word", type=int, default=200)
    ap.add_argument("--semcor-lemmas", type=int, default=30)
    ap.add_argument("--semcor-per-lemma", type=int, default=150)
    ap.add_argument("--cluster-layers", type=lambda v: [int(x) for x in v.split(",")], default=None,
                    help="with --task clustering: the layers (default: every stored contextual layer)")
    ap.add_argument("--cases", type=lambda v: [int(x) for x in v.split(",")], default=None,
                    help="with --task bounds: the cases to run, numbered from 0 (default: all)")
    ap.add_argument("--work", type=Path, default=None, help="keep corpora and indexes here (default: a "
                    "temporary folder)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
           "sample": {"coarse_per_word": args.coarse_per_word, "semcor_lemmas": args.semcor_lemmas,
                      "semcor_per_lemma": args.semcor_per_lemma, "seed": 0}, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.task == "bounds":
            out["bounds"] = run_bounds(work, args.cases)
            print(json.dumps(out) if args.json else "\n".join(
                f"| {r['case']} | {r['seconds']} s ({r['cpu_seconds']} s CPU) | {r['above_base_mib']:,} MiB "
                f"(peak {r['peak_mib']:,}, base {r['base_mib']:,}) |" for r in out["bounds"]))
            return
        for dataset in args.datasets.split(","):
            for model in args.models.split(","):
                task = run_clustering if args.task == "clustering" else run
                out["runs"].append(task(dataset, model, args, work))
    if args.json:
        print(json.dumps(out))
        return
    for r in out["runs"]:
        if r.get("task") == "clustering":
            print(f"\n{r['dataset']}, {r['model']}: {r['usages']:,} labelled usages of {r['words']} word(s)")
            river = r["dataset"] == "bank"
            print("| layer | method | ARI | V | minority recall | k (gold) |"
                  + (" river recall | river precision |" if river else ""))
            print("|---:|---|---:|---:|---:|---:|" + ("---:|---:|" if river else ""))
            for row in r["rows"]:
                extra = f" {row['river_recall']:.3f} | {row['river_precision']:.3f} |" if river else ""
                mr = "-" if row["minority_recall"] is None else f"{row['minority_recall']:.3f}"
                print(f"| {row['layer']} | {row['method']} | {row['ari']:.3f} | {row['v']:.3f} | {mr} | "
                      f"{row['k']:.1f} ({row['k_gold']:.1f}) |{extra}")
            continue
        print(f"\n{r['dataset']}, {r['model']}: {r['items']:,} labelled usages of {r['words']} words "
              f"(index built in {r['build_seconds']:.0f} s)")
        print("| layer | p@1 | p@5 | p@10 | macro p@5 | chance |")
        print("|---:|---:|---:|---:|---:|---:|")
        for row in r["layers"]:
            print(f"| {row['layer']} | {row['p@1']:.3f} | {row['p@5']:.3f} | {row['p@10']:.3f} | "
                  f"{row['macro_p@5']:.3f} | {row['chance_micro']:.3f} |")


if __name__ == "__main__":
    main()
