"""The evaluation figures of benchmarks/RESULTS.md, from the shared data.

    python benchmarks/eval_results.py [--models minilm,mpnet] [--glove] [--json] [--out FILE]
        [--tasks wic,wsd,coarsewsd,scws,similarity,analogy,lmms,wicsenses,coverage,neighbours]
        [--coarse-max 300] [--per-class 10] [--reference TABLE] [--contrast 0.5] [--seed 0]

Per packaged model: WiC dev accuracy (threshold on the best train layer, and logistic
regressions), WSD F1 on semeval2007 (MFS, 1-NN, 1-NN + MFS fallback, for every layer
and the mean of the last four; with the SemCor encoding time), LMMS in full step by step
(``--tasks lmms``: +propagation, +glosses, +static, at the last layer and the last four),
WiC through LMMS senses (``wicsenses``), propagation coverage and gloss speed
(``coverage``), neighbours leaning to the usage's CoarseWSD-20 sense (``neighbours``),
CoarseWSD-20 5-fold CV on train (at most ``--coarse-max`` items per word, stratified), SCWS on
the 40-line sample (a smoke figure), WS-353 / MEN-dev / RG-65 Spearman (the word alone) and Google
analogies (the file's own vocabulary). GloVe 6B-50d (``--glove``): WiC with the static
row and neighbour averaging, SCWS, similarity and Google analogies with gensim's rules
(top 100k and 300k words). Encodings are cached (contextlens.files.cache_dir), so a
rerun only re-scores.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from contextlens.evaluation.runner import evaluate
from contextlens.files import atomic_output

DATA = "/work/shared/data"
SIMILARITY = "ws353,men-dev,rg65"


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def model_figures(model: str, tasks: list[str], coarse_max: int, data: str, save=lambda: None,
                  per_class: int = 10, reference: str | None = None, contrast: float = 0.0,
                  seed: int = 0) -> dict:
    from contextlens.evaluation.runner import make_task_encoder

    encoder = make_task_encoder(model=model)
    n_layers = len(encoder.layers) + 1
    out: dict = {"model": model, "layers": n_layers}
    save(out)
    common = {"encoder": encoder, "model": model, "data_dir": data}
    best_layer = -1
    if "wic" in tasks:
        t = time.perf_counter()
        rows = evaluate("wic", **common)["results"]
        rows += [r for r in evaluate("wic", features="full", **common)["results"]
                 if r["method"] == "logreg-full"]
        out["wic"] = rows
        save(out)
        best_layer = next(r["layer"] for r in rows if r["method"] == "threshold")
        _log(f"{model} wic done in {time.perf_counter() - t:.0f} s")
    if "scws" in tasks:
        out["scws"] = evaluate("scws", split="sample", **common)["results"]
        save(out)
    if "similarity" in tasks:
        out["similarity"] = evaluate("similarity", split=SIMILARITY, **common)["results"]
        save(out)
    if "analogy" in tasks:
        out["analogy"] = evaluate("analogy", **common)["results"]
        save(out)
        _log(f"{model} lexical done")
    if "coarsewsd" in tasks:
        t = time.perf_counter()
        layers = sorted({best_layer % n_layers, n_layers - 1})
        out["coarsewsd"] = [r for r in evaluate("coarsewsd", layers=layers,
                                                max_per_word=coarse_max, **common)["results"]]
        out["coarsewsd_max_per_word"] = coarse_max
        save(out)
        _log(f"{model} coarsewsd done in {time.perf_counter() - t:.0f} s")
    if "wsd" in tasks:
        t = time.perf_counter()
        views = [*range(n_layers), "last4"]
        out["wsd"] = evaluate("wsd", views=views, wsd_method="1nn", **common)["results"]
        out["wsd_seconds"] = time.perf_counter() - t
        out["semcor_encoding"] = semcor_timing(out["wsd"])
        save(out)
        _log(f"{model} wsd done in {time.perf_counter() - t:.0f} s")
    if "lmms" in tasks:
        t, c = time.perf_counter(), time.process_time()
        out["lmms"] = evaluate("wsd", views=["last4", -1], wsd_method="lmms", **common)["results"]
        out["lmms_seconds"] = {"wall": time.perf_counter() - t, "cpu": time.process_time() - c}
        save(out)
        _log(f"{model} lmms done in {time.perf_counter() - t:.0f} s")
    if "wicsenses" in tasks:
        t = time.perf_counter()
        out["wic_senses"] = [r for view in ("last4", -1) for r in evaluate(
            "wic", features="senses", sense_view=view, **common)["results"] if "senses" in r["method"]]
        for r, view in zip(out["wic_senses"], [v for v in ("last4", -1) for _ in range(4)]):
            r["sense_view"] = view
        save(out)
        _log(f"{model} wic senses done in {time.perf_counter() - t:.0f} s")
    if "coverage" in tasks:
        out["coverage"] = propagation_figures(encoder, data)
        save(out)
    if "neighbours" in tasks:
        t = time.perf_counter()
        out["neighbours"] = neighbour_figures(model, data, per_class=per_class, reference=reference,
                                              contrast=contrast, seed=seed)
        save(out)
        _log(f"{model} neighbours done in {time.perf_counter() - t:.0f} s")
    return out


def propagation_figures(encoder, data: str, blocks: int = 2) -> dict:
    """Propagation over every WordNet sense (from the cached SemCor pass of the last layer)
    and the speed of gloss encoding, measured on the first ``blocks`` blocks of WordNet's
    senses (wall and CPU seconds; the full run extrapolated from them, said so)."""
    import numpy as np

    from contextlens import datasets
    from contextlens.encoders.encoding_cache import EncodingCache
    from contextlens.evaluation.lmms import GLOSS_BLOCK, gloss_embeddings, propagate
    from contextlens.evaluation.wsd import semcor_sense_embeddings

    cache = EncodingCache(encoder)
    graph = datasets.wordnet_graph(data)
    view = encoder.layer_position(-1)
    table = semcor_sense_embeddings(cache, data, [view], None, None, None)[view]
    t, c = time.perf_counter(), time.process_time()
    prop = propagate(graph, table["keys"].tolist(), table["vectors"])
    vectors = prop.vectors(np.arange(len(graph.keys)))
    out = {"senses": len(graph.keys), "synsets": len(graph.synsets), "coverage": prop.coverage(),
           "propagation_seconds": {"wall": time.perf_counter() - t, "cpu": time.process_time() - c},
           "uncovered_rows": int(np.isnan(vectors).any(axis=1).sum())}
    rows = np.arange(min(blocks * GLOSS_BLOCK, len(graph.keys)))
    t, c = time.perf_counter(), time.process_time()
    gloss_embeddings(cache, graph, rows, [view])
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    out["glosses_measured"] = {"senses": len(rows), "wall": wall, "cpu": cpu, "per_second": len(rows) / wall}
    out["glosses_all_wordnet_extrapolated_minutes"] = len(graph.keys) / (len(rows) / wall) / 60
    return out


def _wn_mappings(data: str) -> dict[tuple[str, str], str]:
    """CoarseWSD-20's ``wn_mappings.tsv``: (word, sense name) → WordNet sense key (UNK left out)."""
    out = {}
    lines = (Path(data) / "coarsewsd20" / "wn_mappings.tsv").read_text().splitlines()[1:]
    for line in lines:
        word, sense, _offset, _name, key = line.split("\t")
        if key != "UNK":
            out[(word, sense)] = key
    return out


STOP = frozenset("the a an of or and to in on for with by as at from that which who is are be its it this "
                 "their his her one any some used usually especially".split())


def neighbour_figures(model: str, data: str, per_class: int = 10, k: int = 10, seed: int = 0,
                      reference: str | None = None, contrast: float = 0.0) -> dict:
    """On CoarseWSD-20 train usages of the words whose every class maps to a WordNet sense
    (``per_class`` per class, seeded): whether a usage's top-``k`` neighbour words (the
    word's forms left out) lean to its sense, and whether its top WordNet sense
    (``neighbours --senses``) is the mapped gold sense.

    ``reference``: a table at the model's last layer (e.g. ``contextlens static distill``'s;
    :func:`~contextlens.analysis.neighbours.reference_at_layer` reads it); default the words
    encoded alone; a word the table lacks is left out (``words_not_in_reference``).
    ``contrast``: the neighbours' ``contrast`` λ (ranked by the cosine to the usage minus λ
    times the cosine to the word's own reference row).

    A neighbour word is given to the class whose *signature* it is closest to in GloVe
    6B-50d (an outside judge: not the model being measured): the mean GloVe vector of the
    content words of the class's WordNet synset (its lemmas, definition and hypernyms'
    lemmas, the target word and its forms left out). A usage *leans* to its sense when
    more of its neighbours go to its class than to any other class.
    """
    import random

    import numpy as np

    from contextlens import datasets
    from contextlens.analysis.neighbours import contextual_neighbours, is_form, reference_at_layer
    from contextlens.encoders.base import layer_number
    from contextlens.encoders.registry import make_encoder, resolve_vectors
    from contextlens.evaluation.usage_senses import usage_senses

    glove = resolve_vectors("glove-6b-50d")
    wn = datasets.wordnet(data)
    mapping = _wn_mappings(data)
    encoder = make_encoder(model=model)
    table = None if reference is None else reference_at_layer(reference, layer_number(encoder.layer_ids, -1))
    rng = random.Random(seed)
    per_word, usages, not_in_reference = {}, [], []
    for word in datasets.coarsewsd_words(data):
        classes = list(datasets.coarse_classes(data, word).values())
        if not all((word, c) in mapping for c in classes):
            continue
        if table is not None and word not in table:  # a distilled table lacks a word rarer than its min count
            not_in_reference.append(word)
            continue
        signature = {}
        for c in classes:
            syn = wn.lemma_from_key(mapping[(word, c)]).synset()
            text = " ".join([*syn.lemma_names(), syn.definition(), *(n for h in syn.hypernyms()
                                                                     for n in h.lemma_names())])
            words = [w for w in text.lower().replace("_", " ").replace(";", " ").replace(",", " ").split()
                     if w.isalpha() and w not in STOP and len(w) > 2 and not is_form(word, w) and w in glove]
            signature[c] = np.mean([glove.vector(w) for w in words], axis=0)
        items = datasets.load_coarsewsd(data, word, "train")
        chosen = []
        for c in classes:
            pool = [it for it in items if it.label == c]
            chosen += rng.sample(pool, min(per_class, len(pool)))
        per_word[word] = {"classes": classes, "usages": len(chosen)}
        for it in chosen:
            sentence = " ".join(it.tokens)
            occurrence = sum(1 for t in it.tokens[:it.index] if t == it.tokens[it.index])
            r = contextual_neighbours(encoder, sentence, it.tokens[it.index], k=k, occurrence=occurrence,
                                      reference=table, contrast=contrast)
            votes = {c: 0 for c in classes}
            for n in r["neighbours"]:
                if n["word"] in glove:
                    v = glove.vector(n["word"])
                    best = max(classes, key=lambda c, v=v: float(v @ signature[c]) / (
                        np.linalg.norm(v) * np.linalg.norm(signature[c])))
                    votes[best] += 1
            senses = usage_senses(encoder, sentence, it.tokens[it.index], occurrence=occurrence,
                                  data_dir=data, top=1)
            top = senses["senses"][0]["key"] if senses["senses"] else None
            usages.append({"word": word, "gold": it.label, "votes": votes,
                           "lean": votes[it.label] > max(v for c, v in votes.items() if c != it.label),
                           "top_sense": top, "top_is_gold": top == mapping[(word, it.label)],
                           "neighbours": [n["word"] for n in r["neighbours"]]})
    n = len(usages)
    return {"words": per_word, "usages": n, "k": k, "per_class": per_class,
            "reference": r["reference"] if usages else None, "contrast": contrast, "seed": seed,
            "words_not_in_reference": not_in_reference,
            "lean_rate": sum(u["lean"] for u in usages) / n,
            "top_sense_rate": sum(u["top_is_gold"] for u in usages) / n, "detail": usages}


def semcor_timing(rows: list[dict]) -> dict | None:
    """The time the (cached) SemCor pass took, as the WSD rows report it."""
    row = next((r for r in rows if "semcor_seconds" in r), None)
    if row is None:
        return None
    seconds, sentences = row["semcor_seconds"], int(row["semcor_encoded"])
    return {"seconds": seconds, "sentences": sentences, "sentences_per_second": sentences / seconds}


def glove_figures(tasks: list[str], data: str) -> dict:
    from contextlens.encoders.registry import resolve_vectors

    table = resolve_vectors("glove-6b-50d")
    out: dict = {"vectors": table.name}
    if "wic" in tasks:
        out["wic"] = {m: evaluate("wic", vectors=table, method=m, data_dir=data)["results"]
                      for m in ("static", "average")}
    if "scws" in tasks:
        out["scws"] = evaluate("scws", vectors=table, method="static",
                               split="sample", data_dir=data)["results"]
    if "similarity" in tasks:
        out["similarity"] = evaluate("similarity", vectors=table, split=SIMILARITY, data_dir=data)["results"]
    if "analogy" in tasks:
        out["analogy"] = [r for k in (100000, 300000)
                          for r in evaluate("analogy", vectors=table, restrict=k, data_dir=data)["results"]]
    return out


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--models", default="minilm", help="comma-separated packaged models (minilm,mpnet)")
    p.add_argument("--glove", action="store_true", help="also GloVe 6B-50d")
    p.add_argument("--tasks", default="wic,scws,similarity,analogy,coarsewsd,wsd")
    p.add_argument("--coarse-max", type=int, default=300, help="CoarseWSD-20 items per word (stratified)")
    p.add_argument("--per-class", type=int, default=10,
                   help="neighbours: CoarseWSD-20 train usages per class")
    p.add_argument("--reference", default=None,
                   help="neighbours: a reference table at the last layer (e.g. `static distill`'s; "
                        "default the words encoded alone)")
    p.add_argument("--contrast", type=float, default=0.0, help="neighbours: contrast λ (default 0)")
    p.add_argument("--seed", type=int, default=0, help="neighbours: the usages' sampling seed")
    p.add_argument("--data", default=DATA)
    p.add_argument("--out", type=Path, help="write the JSON here")
    p.add_argument("--json", action="store_true", help="print the JSON on stdout")
    args = p.parse_args(argv)
    tasks = args.tasks.split(",")
    results: dict = {"date": time.strftime("%Y-%m-%d %H:%M"), "models": {}}
    if args.glove:
        results["glove"] = glove_figures(tasks, args.data)
        _log("glove done")
    for model in [m for m in args.models.split(",") if m]:
        def save(part, model=model):  # after each task: a late failure keeps the earlier figures
            results["models"][model] = part
            if args.out:
                with atomic_output(args.out) as tmp:
                    tmp.write_text(json.dumps(results, indent=1, default=str))

        model_figures(model, tasks, args.coarse_max, args.data, save, args.per_class, args.reference,
                      args.contrast, args.seed)
    if args.out:
        with atomic_output(args.out) as tmp:
            tmp.write_text(json.dumps(results, indent=1, default=str))
    if args.json or not args.out:
        print(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
