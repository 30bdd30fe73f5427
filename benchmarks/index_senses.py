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
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
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
    from contextlens.bench.datasets import coarsewsd_words, load_coarsewsd

    items = []
    words = coarsewsd_words(root)
    for word in words:
        got = load_coarsewsd(root, word, "train")
        random.Random(seed).shuffle(got := list(got))
        items += [(word, it.tokens, it.index, it.label) for it in got[:per_word]]
    return words, items


def semcor_sample(root: Path, n_lemmas: int, per_lemma: int, seed: int = 0):
    """``(lemmas, [(doc, tokens, target index, sense key)])`` of polysemous SemCor lemmas."""
    from contextlens.bench.datasets.semcor import load_semcor

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
    """One file per word (a line per item); returns ``(doc, line number, start, end) → sense``."""
    from contextlens.bench.targets import target_text

    lines, labels = defaultdict(list), {}
    for word, tokens, index, sense in items:
        text, (start, end) = target_text(tokens, index)
        doc = str(folder / f"{word}.txt")
        labels[(doc, len(lines[doc]), start, end)] = sense
        lines[doc].append(text)
    folder.mkdir(parents=True)
    for doc, texts in lines.items():
        Path(doc).write_text("\n".join(texts) + "\n", encoding="utf-8")
    return labels


def precision(db: str, labels: dict[tuple, str], layers: list[int]) -> dict[int, dict]:
    """Per layer: same-sense precision@k (micro, macro over words) and the chance level."""
    from contextlens.index import like_usage, open_store

    store = open_store(db)
    table = store.table.search().select(["usage_id", "word", "doc", "sentence_no", "start", "end"]) \
        .limit(None).to_arrow().to_pylist()
    sense = {r["usage_id"]: labels.get((r["doc"], r["sentence_no"], r["start"], r["end"])) for r in table}
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


def run(dataset: str, model: str, args, tmp: Path) -> dict:
    from contextlens.index import build_index
    from contextlens.index.encode import make_index_encoder

    root = data_root()
    if dataset == "coarsewsd":
        words, items = coarse_sample(root, args.coarse_per_word)
        match, wn = "lower", None
    else:
        from contextlens.bench.datasets.wordnet import wordnet

        words, items = semcor_sample(root, args.semcor_lemmas, args.semcor_per_lemma)
        match, wn = "lemma", wordnet(root)
    labels = write_corpus(tmp / f"{dataset}-{model}-corpus", items)
    depth = make_index_encoder(model, None)[0].n_model_layers
    encoder = make_index_encoder(model, list(range(depth + 1)))  # every layer, 0 = embedding row
    layers = encoder[1]
    started = time.perf_counter()
    db = str(tmp / f"{dataset}-{model}-db")
    built = build_index(sorted(str(p) for p in (tmp / f"{dataset}-{model}-corpus").iterdir()), db, words,
                        match=match, wordnet=wn, encoder=encoder)
    build_s = time.perf_counter() - started
    rows = precision(db, labels, layers)
    return {"dataset": dataset, "model": model, "words": len(words), "items": len(items), "usages": built.usages,
            "match": match, "build_seconds": round(build_s, 1), "layers": list(rows.values())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="minilm,mpnet")
    ap.add_argument("--datasets", default="coarsewsd,semcor")
    ap.add_argument("--coarse-per-word", type=int, default=200)
    ap.add_argument("--semcor-lemmas", type=int, default=30)
    ap.add_argument("--semcor-per-lemma", type=int, default=150)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
           "sample": {"coarse_per_word": args.coarse_per_word, "semcor_lemmas": args.semcor_lemmas,
                      "semcor_per_lemma": args.semcor_per_lemma, "seed": 0}, "runs": []}
    with tempfile.TemporaryDirectory() as tmp:
        for dataset in args.datasets.split(","):
            for model in args.models.split(","):
                out["runs"].append(run(dataset, model, args, Path(tmp)))
    if args.json:
        print(json.dumps(out))
        return
    for r in out["runs"]:
        print(f"\n{r['dataset']}, {r['model']}: {r['items']:,} labelled usages of {r['words']} words "
              f"(index built in {r['build_seconds']:.0f} s)")
        print("| layer | p@1 | p@5 | p@10 | macro p@5 | chance |")
        print("|---:|---:|---:|---:|---:|---:|")
        for row in r["layers"]:
            print(f"| {row['layer']} | {row['p@1']:.3f} | {row['p@5']:.3f} | {row['p@10']:.3f} | "
                  f"{row['macro_p@5']:.3f} | {row['chance_micro']:.3f} |")


if __name__ == "__main__":
    main()
