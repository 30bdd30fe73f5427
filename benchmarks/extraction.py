"""Word-vector extraction speed: contextlens vs the loops people write with transformers.

The first N sentences of the Brown corpus; every word's last-layer vector,

(a) with contextlens (``TransformerEncoder(layers=-1, attention=False)``: word-aligned,
    pooled vectors);
(b) the straightforward loop: one sentence at a time,
    ``model(**tokenizer(s, return_tensors="pt"), output_hidden_states=True)``, unsorted;
(c) length-sorted batches of 64 through plain transformers (what sentence-transformers
    does), keeping ``last_hidden_state``;

same model, same process, same threads. (b) and (c) stop at piece vectors (no word
alignment or pooling), so they are lower bounds of what their users pay. Reports
words/s (median of ``--repeats`` passes over the whole set), the ratios (median over
repeats of the paired ratio: the machine may be shared, so each repeat runs the three
methods back to back, in rotating order), the peak resident memory each method adds
(contextlens keeps every word's vectors; the baselines drop theirs), and
``fraction_of_matmul_peak``: the weight FLOPs contextlens achieves (2 × transformer-layer
parameters × pieces / s) over a float32 ``torch.mm`` of 2048² matrices measured right
before and after that pass (median over repeats).

    python benchmarks/extraction.py [--model minilm] [--sentences 2000] [--repeats 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def brown_sentences(n: int) -> list[str]:
    data = Path(os.environ.get("CONTEXTLENS_DATA") or ROOT.parent / "shared" / "data")
    path = data / "corpora" / "brown_plain.txt"
    if not path.is_file():
        sys.exit(f"{path} is missing: set CONTEXTLENS_DATA to the shared data folder")
    with open(path, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    return lines[:n]


class PeakRSS:
    """The highest resident set size (bytes) seen while the block runs, sampled every 5 ms."""

    def __init__(self):
        self.page = os.sysconf("SC_PAGE_SIZE")

    def rss(self) -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * self.page

    def __enter__(self):
        self.base = self.peak = self.rss()
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while self.running:
            self.peak = max(self.peak, self.rss())
            time.sleep(0.005)

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()
        self.peak = max(self.peak, self.rss())

    @property
    def added_mb(self) -> float:
        return (self.peak - self.base) / 2**20


def matmul_gflops(torch, n: int = 2048, repeats: int = 5) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - start)
    return 2 * n**3 / statistics.median(times) / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="minilm")
    parser.add_argument("--sentences", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32, help="contextlens batch size (its default: 32)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()

    import torch
    import transformers

    from contextlens.encoders.transformer import TransformerEncoder
    from contextlens.text import tokenize

    sentences = brown_sentences(args.sentences)
    n_words = sum(len(tokenize(s)) for s in sentences)
    encoder = TransformerEncoder(args.model, layers=-1, attention=False, batch_size=args.batch_size)
    tokenizer = encoder.tokenizer
    model = transformers.AutoModel.from_pretrained(encoder.path, dtype=torch.float32).eval()
    n_pieces = sum(len(ids) for ids in tokenizer(sentences)["input_ids"])
    layer_params = sum(p.numel() for p in encoder._blocks.parameters())

    def contextlens_run():
        encs = encoder.encode(sentences)
        assert sum(len(e.words) for e in encs) == n_words

    def naive_run():
        with torch.no_grad():
            for s in sentences:
                out = model(**tokenizer(s, return_tensors="pt"), output_hidden_states=True)
                out.hidden_states[-1].numpy()

    def sorted_batches_run():
        order = sorted(sentences, key=len)
        with torch.no_grad():
            for i in range(0, len(order), 64):
                batch = tokenizer(order[i : i + 64], padding=True, return_tensors="pt")
                model(**batch).last_hidden_state.numpy()

    encoder.encode(sentences[:64])  # warm up every path once
    with torch.no_grad():
        model(**tokenizer(sentences[:64], padding=True, return_tensors="pt"))
    runs = {"contextlens": contextlens_run, "naive_loop": naive_run, "sorted_batches": sorted_batches_run}
    names = list(runs)
    seconds = {name: [] for name in runs}
    memory = {name: 0.0 for name in runs}
    fractions, peaks = [], []
    load_before = os.getloadavg()[0]
    for r in range(args.repeats):
        # the machine may be shared: rotate the order, and pair each contextlens pass with
        # the matmul peak measured just before and after it (the better of the two)
        for name in names[r % 3 :] + names[: r % 3]:
            before = matmul_gflops(torch) if name == "contextlens" else 0.0
            with PeakRSS() as peak:
                start = time.perf_counter()
                runs[name]()
                seconds[name].append(time.perf_counter() - start)
            memory[name] = max(memory[name], peak.added_mb)
            if name == "contextlens":
                peaks.append(max(before, matmul_gflops(torch)))
                fractions.append(2 * layer_params * n_pieces / seconds[name][-1] / 1e9 / peaks[-1])
    median = {name: statistics.median(t) for name, t in seconds.items()}
    words_s = {name: n_words / t for name, t in median.items()}
    paired = {other: statistics.median(o / c for o, c in zip(seconds[other], seconds["contextlens"]))
              for other in ("naive_loop", "sorted_batches")}
    peak_gflops = statistics.median(peaks)
    achieved = 2 * layer_params * n_pieces / median["contextlens"] / 1e9
    import platform

    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor())
    result = {
        "model": args.model, "sentences": len(sentences), "words": n_words, "pieces": n_pieces,
        "threads": torch.get_num_threads(), "cpu": cpu, "repeats": args.repeats,
        "seconds": {k: round(v, 3) for k, v in median.items()},
        "words_per_s": {k: round(v, 1) for k, v in words_s.items()},
        "ratio_vs_naive": round(paired["naive_loop"], 2),
        "ratio_vs_sorted_batch": round(paired["sorted_batches"], 2),
        "peak_memory_mb": {k: round(v, 1) for k, v in memory.items()},
        "matmul_gflops": round(peak_gflops, 1), "achieved_weight_gflops": round(achieved, 1),
        "fraction_of_matmul_peak": round(statistics.median(fractions), 3),
        "load_average": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.model}: {len(sentences)} Brown sentences, {n_words:,} words, {n_pieces:,} pieces, "
          f"{result['threads']} threads ({cpu})")
    for name in runs:
        print(f"  {name:15s} {words_s[name]:9.1f} words/s  {median[name]:7.2f} s  +{memory[name]:.0f} MB")
    print(f"  contextlens vs naive loop: {result['ratio_vs_naive']}x, vs sorted batches: "
          f"{result['ratio_vs_sorted_batch']}x")
    print(f"  {achieved:.1f} weight GFLOP/s, torch.mm 2048² {peak_gflops:.1f} GFLOP/s: "
          f"{result['fraction_of_matmul_peak']:.2f} of matmul peak (median of paired runs)")
    print(f"  load average {result['load_average'][0]} before, {result['load_average'][1]} after")


if __name__ == "__main__":
    main()
