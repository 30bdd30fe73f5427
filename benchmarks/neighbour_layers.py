"""Which layers' contextual neighbours are meaningful, per model (the lab's default layer).

The lab's neighbours card lists the reference words nearest a usage at a layer
(:func:`contextlens.analysis.neighbours.contextual_neighbours`: 20,000 frequent words,
each encoded alone by the same model). At a causal LM's last layers a word's vector holds
the model's guess of the *next* word, so its neighbours stop being about the word. This
measures, layer by layer, on usages of the 20 nouns of CoarseWSD-20 (train, ``--per-word``
sentences each, drawn at random with seed 0):

- ``self@10``: the share of usages whose own word is among the 10 reference words nearest
  it (centred cosine, as the lab ranks them; the word itself not excluded);
- ``related@10``: the mean GloVe 6B-50d cosine between the word and its 10 nearest
  reference words (itself excluded): an outside judge of whether the neighbours are about
  the word (``chance``: the same mean over 10 reference words drawn at random);
- ``ws353`` / ``men``: Spearman of the reference table itself (each word alone at that
  layer) on WordSim-353 (all) and MEN (dev), pairs with both words in the table.

    python benchmarks/neighbour_layers.py [--models smollm2,minilm] [--per-word 5] [--json]

The reference tables are built once per model (minutes for a transformer) and cached.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from pathlib import Path

import numpy as np
from scipy import stats


def data_root() -> Path:
    return Path(os.environ.get("CONTEXTLENS_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def usages(root: Path, per_word: int, seed: int = 0) -> list[tuple[str, str, tuple[int, int]]]:
    """``(word, sentence, char span of the word)`` for ``per_word`` random train items per word."""
    from contextlens.datasets import coarsewsd_words, load_coarsewsd

    out = []
    for word in coarsewsd_words(root):
        items = list(load_coarsewsd(root, word, "train"))
        random.Random(seed).shuffle(items)
        for it in items[:per_word]:
            start = sum(len(t) + 1 for t in it.tokens[: it.index])
            out.append((it.tokens[it.index], " ".join(it.tokens), (start, start + len(it.tokens[it.index]))))
    return out


def centred_cosines(table: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """``(queries, words)`` cosines after taking the table's mean row off both sides."""
    mean = table.mean(axis=0)
    t, q = table - mean, queries - mean
    t /= np.maximum(np.linalg.norm(t, axis=1, keepdims=True), 1e-12)
    q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    return q @ t.T


def similarity(table, pairs) -> float | None:
    idx = table.key_to_index
    got = [(table.vectors[idx[p.word1]], table.vectors[idx[p.word2]], p.score) for p in pairs
           if p.word1 in idx and p.word2 in idx]
    if len(got) < 10:
        return None
    a, b, human = (np.array(x, dtype=np.float64) for x in zip(*got))
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return float(stats.spearmanr(cos, human).statistic)


def measure(model: str, sample, glove, sets) -> dict:
    from contextlens.analysis.neighbours import reference_table, reference_words
    from contextlens.encoders.registry import make_encoder

    encoder = make_encoder(model=model, threads=os.cpu_count())
    t0 = time.perf_counter()
    tables = {layer: reference_table(encoder, layer) for layer in encoder.layer_ids}
    built = time.perf_counter() - t0
    encs = encoder.encode([s for _, s, _ in sample], targets=[[span] for _, _, span in sample])
    keep = [(w, e) for (w, _, _), e in zip(sample, encs) if len(e.words) == 1]
    words = [w for w, _ in keep]
    rng = np.random.default_rng(0)
    gvec = glove.vectors.astype(np.float64)
    gvec /= np.linalg.norm(gvec, axis=1, keepdims=True)
    gi = glove.key_to_index
    rows = []
    for pos, layer in enumerate(encoder.layer_ids):
        table = tables[layer]
        q = np.stack([e.layers[pos, 0] for _, e in keep]).astype(np.float64)  # (usages, dim)
        cos = centred_cosines(table.vectors.astype(np.float64), q)  # (usages, words)
        order = np.argsort(-cos, axis=1)[:, :11]
        hits, related, chance = [], [], []
        for u, w in enumerate(words):
            top = [table.keys[j] for j in order[u]]
            if w in table.key_to_index:
                hits.append(w in top[:10])
            if w in gi:
                near = [t for t in top if t != w][:10]
                related.append(np.mean([gvec[gi[w]] @ gvec[gi[t]] for t in near if t in gi]))
                drawn = [table.keys[j] for j in rng.choice(len(table), 10, replace=False)]
                chance.append(np.mean([gvec[gi[w]] @ gvec[gi[t]] for t in drawn if t in gi]))
        rows.append({"layer": layer, "self@10": float(np.mean(hits)), "related@10": float(np.mean(related)),
                     "chance": float(np.mean(chance)),
                     **{name: similarity(table, pairs) for name, pairs in sets.items()}})
    return {"model": model, "layers": rows, "usages": len(keep), "reference_words": len(reference_words()),
            "reference_seconds": round(built, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="smollm2,minilm")
    ap.add_argument("--per-word", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from contextlens.datasets.similarity import load_similarity
    from contextlens.static.pretrained import load_vectors

    root = data_root()
    sets = {"ws353": load_similarity(root / "similarity/faruqui/EN-WS-353-ALL.txt"),
            "men": load_similarity(root / "similarity/men/MEN_dataset_lemma_form.dev")}
    sample = usages(root, args.per_word)
    glove = load_vectors("glove-6b-50d")
    out = {"machine": platform.node(), "cpus": os.cpu_count(), "per_word": args.per_word,
           "results": [measure(m, sample, glove, sets) for m in args.models.split(",")]}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    for r in out["results"]:
        print(f"{r['model']}: {r['usages']} usages, reference of {r['reference_words']} words "
              f"({r['reference_seconds']} s)")
        print("layer  self@10  related@10  chance  ws353   men")
        for row in r["layers"]:
            print(f"{row['layer']:>5}  {row['self@10']:7.3f}  {row['related@10']:10.3f}  "
                  f"{row['chance']:6.3f}  {row['ws353'] or float('nan'):6.3f}  "
                  f"{row['men'] or float('nan'):6.3f}")


if __name__ == "__main__":
    main()
