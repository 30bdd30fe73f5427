"""Usage-index build speed and memory: ``contextlens.index.build_index`` vs the naive loop.

Over the first ``--sentences`` sentences of the Brown corpus (1×; 0 = all 57,340), with
``minilm`` (layer 6 stored, float16) and 50 frequent nouns and verbs (WordNet lemma
matching when ``CONTEXTLENS_DATA`` holds WordNet, lower-case otherwise):

(a) build the index (chunked stream, length-sorted batches, only the targets pooled);
(b) the straightforward loop: for each sentence holding a target, encode it on its own
    with every word and layer kept (``TransformerEncoder(...).encode([s])``), timed on the
    first ``--naive`` such sentences and reported as sentences/s;
(c) build again over 4 copies of the 1× slice (4×), to compare peak RSS.

Each run is a freshly spawned process (model loading excluded from the times) that
reports its peak RSS (``ru_maxrss``). Prints sentences/s, usages/s, the speed ratio, the
peak RSS at 1× and 4× and the bytes on disk per usage.

    python benchmarks/index_build.py [--sentences 4000] [--naive 300] [--keep DIR] [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import platform
import resource
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORDS = ("time man year way day thing people world life hand part place case work state house country fact "
         "water money school government end point group number course war area night make take come "
         "see know give find think say go get look use tell ask seem feel leave call keep").split()
assert len(WORDS) == 50


def data_root() -> Path:
    return Path(os.environ.get("CONTEXTLENS_DATA") or ROOT.parent / "shared" / "data")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _wordnet():
    from contextlens.datasets.wordnet import wordnet

    try:
        return wordnet(data_root()), "lemma"
    except Exception:
        return None, "lower"


def run_build(files: list[str], db: str, queue) -> None:
    from contextlens.index import build_index, index_stats
    from contextlens.index.build import make_index_encoder

    wn, match = _wordnet()
    encoder = make_index_encoder("minilm", [6])
    start = time.perf_counter()
    r = build_index(files, db, WORDS, match=match, wordnet=wn, encoder=encoder)
    seconds = time.perf_counter() - start
    stats = index_stats(db)
    queue.put({"sentences": r.sentences, "usages": r.usages, "seconds": seconds, "match": match,
               "peak_rss_mb": _peak_mb(), "bytes_per_usage": stats["bytes_per_usage"],
               "size_mb": stats["size_bytes"] / 2**20})


def run_naive(files: list[str], limit: int, queue) -> None:
    from contextlens.corpus.targets import WordMatcher, find_usages, iter_corpus_sentences
    from contextlens.encoders.transformer import TransformerEncoder

    wn, match = _wordnet()
    matcher = WordMatcher(WORDS, match=match, wordnet=wn)
    texts, n_target = [], 0
    for s in iter_corpus_sentences(files):
        if find_usages(s, matcher):
            n_target += 1
            if len(texts) < limit:
                texts.append(s.text)
    encoder = TransformerEncoder("minilm", attention=False)
    start = time.perf_counter()
    for t in texts:
        encoder.encode([t])
    seconds = time.perf_counter() - start
    queue.put({"timed_sentences": len(texts), "target_sentences_in_slice": n_target, "seconds": seconds,
               "peak_rss_mb": _peak_mb()})


def spawn(fn, *args):
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=fn, args=(*args, queue))
    p.start()
    out = queue.get()
    p.join()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=str(data_root() / "corpora" / "brown_plain.txt"))
    ap.add_argument("--sentences", type=int, default=4000,
                    help="sentences in the 1x slice (0: the whole corpus)")
    ap.add_argument("--naive", type=int, default=300, help="target sentences timed in the naive loop")
    ap.add_argument("--keep", type=Path, help="build in this new folder and keep the indexes (db1, db4)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=False)
    folder = tempfile.TemporaryDirectory() if args.keep is None else contextlib.nullcontext(str(args.keep))
    with folder as tmp:
        lines = Path(args.corpus).read_text(encoding="utf-8").splitlines()
        lines = lines[: args.sentences] if args.sentences else lines
        one = Path(tmp, "brown-1.txt")
        one.write_text("\n".join(lines) + "\n", encoding="utf-8")
        four = [str(one)] + [str(Path(tmp, f"brown-{i}.txt")) for i in (2, 3, 4)]
        for f in four[1:]:
            os.symlink(one, f)
        b1 = spawn(run_build, [str(one)], str(Path(tmp, "db1")))
        naive = spawn(run_naive, [str(one)], args.naive)
        b4 = spawn(run_build, four, str(Path(tmp, "db4")))
    # both encode only the sentences holding a target: compare target sentences per second
    naive_rate = naive["timed_sentences"] / naive["seconds"]
    build_rate = naive["target_sentences_in_slice"] / b1["seconds"]
    out = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
        "words": len(WORDS), "match": b1["match"], "model": "minilm", "layers": [6], "dtype": "float16",
        "build_1x": b1, "build_4x": b4, "naive": naive,
        "sentences_per_s": b1["sentences"] / b1["seconds"], "usages_per_s": b1["usages"] / b1["seconds"],
        "naive_target_sentences_per_s": naive_rate, "build_target_sentences_per_s": build_rate,
        "speedup_vs_naive": build_rate / naive_rate, "rss_growth_4x": b4["peak_rss_mb"] / b1["peak_rss_mb"],
    }
    if args.json:
        print(json.dumps(out))
        return
    print(f"1x: {b1['sentences']:,} sentences, {b1['usages']:,} usages in {b1['seconds']:.1f} s: "
          f"{out['sentences_per_s']:.0f} sentences/s, {out['usages_per_s']:.0f} usages/s, "
          f"peak RSS {b1['peak_rss_mb']:.0f} MB, {b1['bytes_per_usage']} bytes/usage on disk")
    print(f"4x: {b4['sentences']:,} sentences in {b4['seconds']:.1f} s, peak RSS {b4['peak_rss_mb']:.0f} MB "
          f"({out['rss_growth_4x']:.2f}x the 1x peak)")
    print(f"target sentences/s: index build {build_rate:.1f}, naive loop {naive_rate:.1f}: "
          f"{out['speedup_vs_naive']:.2f}x")


if __name__ == "__main__":
    main()
