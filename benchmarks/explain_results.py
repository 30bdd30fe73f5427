"""What the course claims about attention and feed-forward blocks, measured (benchmarks/RESULTS.md,
issue 24 § 4 and § 5).

    python benchmarks/explain_results.py blocks --model minilm [--pairs 200] [--keep DIR] [--json]
    python benchmarks/explain_results.py faithfulness --model minilm [--sentences 100] [--steps 32]
        [--methods all|M1,M2] [--keep DIR]
    python benchmarks/explain_results.py lens [--model smollm2] [--json]

``blocks``: ``--pairs`` pairs of usages of the same CoarseWSD-20 word with different senses and as
many with the same sense (train split, a seeded sample spread over the 20 words, sentences of at
most 40 words), each through :func:`contextlens.sublayers`: per layer and block the mean cosine of
the two usages for each kind of pair, their gap (same − different: how far apart the senses are),
what each block adds to the gap, and how far each block moves a word (mean cosine distance).

``faithfulness``: ``--sentences`` CoarseWSD-20 sentences (a seeded sample, 5 per word, the target
at least third, at most 40 words) through :func:`contextlens.attributions` with every method: per
layer and method the mean Spearman with occlusion (and, for a causal LM, with the next-piece
log-probability drop), over the sentences where it is defined.

``lens``: the tuned lens of the model (trained on the data folder's corpora, or read from the
cache), its KL divergence from the final distribution per layer beside the logit lens's, on
held-out corpus positions, and the time it took.

Results are kept per item in ``--keep`` (JSON lines), so a killed run resumes; CPU and wall
seconds are reported (the machine is shared and busy: run with ``nice -n 19``).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

from contextlens.analysis.faithfulness import METHODS, attributions
from contextlens.analysis.sublayers import sublayers
from contextlens.datasets.coarse import coarsewsd_words, load_coarsewsd
from contextlens.datasets.registry import resolve_data_dir
from contextlens.encoders.registry import make_encoder
from contextlens.text import tokenize

MAX_WORDS = 40


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def usage(item) -> tuple[str, str, int] | None:
    """``(text, word, occurrence)`` of a CoarseWSD item as contextlens reads it, or None when its
    tokenizer does not find the target where the dataset puts it."""
    text = " ".join(item.tokens)
    start = sum(len(t) + 1 for t in item.tokens[: item.index])
    words = tokenize(text)
    if len(words) > MAX_WORDS:
        return None
    hit = [i for i, w in enumerate(words) if w.start == start and w.text.lower() == item.word.lower()]
    if not hit:
        return None
    occurrence = sum(1 for w in words[: hit[0]] if w.text.lower() == item.word.lower())
    return text, item.word, occurrence


def _senses(data: Path, word: str) -> dict[str, list]:
    """``sense → [(text, word, occurrence), ...]`` of a word's train sentences that contextlens reads."""
    by_sense = defaultdict(list)
    for item in load_coarsewsd(data, word, "train"):
        found = usage(item)
        if found:
            by_sense[item.label].append(found)
    return by_sense


def sample_pairs(data: Path, n: int, seed: int) -> list[dict]:
    """``n`` different-sense and ``n`` same-sense pairs, spread over the words in turn."""
    rng = random.Random(seed)
    words = coarsewsd_words(data)
    senses = {w: _senses(data, w) for w in words}
    out = []
    for kind in ("different", "same"):
        for k in range(n):
            word = words[k % len(words)]
            by_sense = senses[word]
            if kind == "different":
                a, b = rng.sample(sorted(by_sense), 2)
                one, two = rng.choice(by_sense[a]), rng.choice(by_sense[b])
            else:
                s = rng.choice(sorted(x for x in by_sense if len(by_sense[x]) >= 2))
                one, two = rng.sample(by_sense[s], 2)
            out.append({"kind": kind, "word": word, "one": one, "two": two})
    return out


def sample_sentences(data: Path, n: int, seed: int) -> list[tuple[str, str, int]]:
    rng = random.Random(seed)
    words = coarsewsd_words(data)
    per = math.ceil(n / len(words))
    out = []
    for word in words:
        items = [usage(i) for i in load_coarsewsd(data, word, "train") if i.index >= 2]
        items = [u for u in items if u]
        out += rng.sample(items, min(per, len(items)))
    return out[:n]


def _resume(path: Path) -> dict[int, dict]:
    done = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[row["i"]] = row
    return done


def blocks(model: str, data: Path, keep: Path, n: int, seed: int) -> dict:
    encoder = make_encoder(model=model)
    pairs = sample_pairs(data, n, seed)
    path = keep / f"blocks-{model}-{n}-{seed}.jsonl"
    done = _resume(path)
    started, cpu = time.perf_counter(), time.process_time()
    with path.open("a") as f:
        for i, p in enumerate(pairs):
            if i in done:
                continue
            occurrences = (p["one"][2], p["two"][2])
            r = sublayers(encoder, p["one"][0], p["two"][0], p["word"], occurrences=occurrences)
            row = {"i": i, "kind": p["kind"], "word": p["word"], "start": r["start"]["cosine"],
                   "rows": [(x["layer"], x["after"], x["cosine"], *x["moved"]) for x in r["rows"]]}
            f.write(json.dumps(row) + "\n")
            f.flush()
            done[i] = row
            if i % 20 == 0:
                _log(f"{model} blocks: {len(done)}/{len(pairs)} pairs, {time.perf_counter() - started:.0f} s")
    rows = [done[i] for i in range(len(pairs))]
    keys = [(x[0], x[1]) for x in rows[0]["rows"]]
    out = []
    mean = lambda v: sum(v) / len(v)  # noqa: E731
    before = {k: mean([r["start"] for r in rows if r["kind"] == k]) for k in ("same", "different")}
    gap_before = before["same"] - before["different"]
    for j, (layer, after) in enumerate(keys):
        same = mean([r["rows"][j][2] for r in rows if r["kind"] == "same"])
        diff = mean([r["rows"][j][2] for r in rows if r["kind"] == "different"])
        moved = mean([m for r in rows for m in r["rows"][j][3:]])
        out.append({"layer": layer, "after": after, "same": same, "different": diff, "gap": same - diff,
                    "gap_added": same - diff - gap_before, "moved": moved})
        gap_before = same - diff
    return {"model": model, "pairs": {"same": n, "different": n}, "start": before, "blocks": out,
            "wall_s": round(time.perf_counter() - started, 1), "cpu_s": round(time.process_time() - cpu, 1)}


def faithfulness(model: str, data: Path, keep: Path, n: int, steps: int, seed: int,
                 methods: str = "all") -> dict:
    encoder = make_encoder(model=model)
    sentences = sample_sentences(data, n, seed)
    chosen = list(METHODS) if methods == "all" else methods.split(",")
    tag = "" if methods == "all" else "-" + methods.replace(",", "+")
    path = keep / f"faith-{model}-{n}-{steps}-{seed}{tag}.jsonl"
    done = _resume(path)
    started, cpu = time.perf_counter(), time.process_time()
    with path.open("a") as f:
        for i, (text, word, occ) in enumerate(sentences):
            if i in done:
                continue
            t = time.process_time()
            r = attributions(encoder, text, word, occurrence=occ, steps=steps, methods=chosen)
            row = {"i": i, "cpu_s": time.process_time() - t, "context": len(r["context"]),
                   "layers": [{"layer": x["layer"], "spearman": x["spearman"],
                               "next_word": x.get("next_word_spearman")} for x in r["layers"]]}
            f.write(json.dumps(row) + "\n")
            f.flush()
            done[i] = row
            _log(f"{model} faithfulness: {len(done)}/{len(sentences)} ({row['cpu_s']:.1f} s CPU)")
    rows = [done[i] for i in range(len(sentences))]
    layers = []
    for j, x in enumerate(rows[0]["layers"]):
        entry = {"layer": x["layer"], "spearman": {}, "defined": {}}
        for m in chosen:
            vals = [r["layers"][j]["spearman"][m] for r in rows
                    if r["layers"][j]["spearman"].get(m) is not None]
            entry["spearman"][m], entry["defined"][m] = (sum(vals) / len(vals) if vals else None), len(vals)
        if x.get("next_word"):
            entry["next_word"] = {}
            for m in ("occlusion", *chosen):
                vals = [r["layers"][j]["next_word"][m] for r in rows
                        if r["layers"][j]["next_word"].get(m) is not None]
                entry["next_word"][m] = sum(vals) / len(vals) if vals else None
        layers.append(entry)
    return {"model": model, "sentences": len(rows), "steps": steps, "methods": chosen, "layers": layers,
            "mean_context_words": sum(r["context"] for r in rows) / len(rows),
            "cpu_s_per_sentence": sum(r["cpu_s"] for r in rows) / len(rows),
            "wall_s": round(time.perf_counter() - started, 1), "cpu_s": round(time.process_time() - cpu, 1)}


def lens(model: str, data: Path) -> dict:
    from contextlens.encoders.lm import LanguageModel
    from contextlens.encoders.tuned_lens import (
        LensSettings,
        TunedLens,
        corpus_texts,
        kl_per_layer,
        tuned_lens_for,
    )

    started, cpu = time.perf_counter(), time.process_time()
    lm = LanguageModel(model)
    import logging

    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s")
    logging.getLogger("contextlens.progress").setLevel(logging.INFO)  # the training's stages, on stderr
    fitted = tuned_lens_for(lm, data / "corpora")
    trained = {"wall_s": round(time.perf_counter() - started, 1),
               "cpu_s": round(time.process_time() - cpu, 1)}
    # a second, larger held-out measure: positions of the corpus shuffled with another seed
    settings = LensSettings(tokens=64, eval_tokens=512, seed=fitted.settings.seed + 1)
    texts = corpus_texts(data / "corpora", seed=settings.seed)
    states = TunedLens._states(lm, texts, settings, lambda *a: None)
    kl = kl_per_layer(states[64:], lm._final_norm(), lm.hf_model.get_output_embeddings(), fitted)
    return {"model": model, "kl_held_out_in_training": fitted.kl_, "kl_512_more": kl,
            "settings": vars(fitted.settings), "trained_in_seconds": fitted.seconds_, "this_run": trained,
            "wall_s": round(time.perf_counter() - started, 1), "cpu_s": round(time.process_time() - cpu, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["blocks", "faithfulness", "lens"])
    ap.add_argument("--model", default=None)
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--sentences", type=int, default=100)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--methods", default="all", help="faithfulness: all, or a comma list (the costly "
                    "gradients of a large model on fewer sentences)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, default=Path("out/explain"))
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    data = resolve_data_dir()
    args.keep.mkdir(parents=True, exist_ok=True)
    if args.what == "blocks":
        out = blocks(args.model or "minilm", data, args.keep, args.pairs, args.seed)
    elif args.what == "faithfulness":
        out = faithfulness(args.model or "minilm", data, args.keep, args.sentences, args.steps, args.seed,
                           args.methods)
    else:
        out = lens(args.model or "smollm2", data)
    print(json.dumps(out) if args.json else json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
