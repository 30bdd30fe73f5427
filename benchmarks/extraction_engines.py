"""The work ``extraction.py`` times: every layer of every word, pooled (mean) from pieces.

Two ways, each doing the whole work (tokenising with offsets, running the model, pooling
every hidden state 0..L to words, keeping the pooled vectors):

- **engine candidates** (what ``TransformerEncoder`` would do with each engine, its
  batching and pooling copied here so stage 2 can choose their settings): contextlens
  words and alignment (:mod:`contextlens.encoders.alignment`), batches of at most
  ``batch_size`` sequences and about ``cap`` padded pieces, sorted by piece count or
  not, one gather + ``index_add_`` per layer; the forward is torch or ONNX Runtime;
- **peers** (the loops a user writes): sentences sorted by length, batches of 64,
  ``tokenizer(..., padding=True)``, a forward with every hidden state (plain transformers,
  an ONNX Runtime session on the same exported graph with default options, or
  sentence-transformers' own ``tokenize`` + ``forward`` with ``all_layer_embeddings``),
  pooled to the tokenizer's words (``word_ids``) by the same ``index_add_`` mean.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from contextlens.encoders.alignment import align_pieces, pooling_weights
from contextlens.text import tokenize


class Sequence_(NamedTuple):
    ids: list[int]  # pieces, special tokens included
    cols: list[int]  # piece of each pooling term
    rows: list[int]  # word of each pooling term
    weights: list[float]
    n_words: int


@dataclass(frozen=True)
class Batching:
    cap: int | None = 1024  # padded pieces per batch (None: only batch_size limits it)
    batch_size: int = 32
    sort: bool = True  # by piece count (else: in corpus order)

    def label(self) -> str:
        return f"cap={self.cap or 'none'} batch={self.batch_size} sort={'yes' if self.sort else 'no'}"


def prepare(tokenizer, sentences: list[str]) -> list[Sequence_]:
    """Words, pieces and mean-pooling terms of each sentence, as TransformerEncoder aligns them."""
    enc = tokenizer(sentences, add_special_tokens=True, return_offsets_mapping=True,
                    return_special_tokens_mask=True, return_attention_mask=False, verbose=False)
    out = []
    for text, ids, offsets, special in zip(sentences, enc["input_ids"], enc["offset_mapping"],
                                           enc["special_tokens_mask"]):
        n = len(ids)
        before = next((p for p in range(n) if not special[p]), n)
        after = next((n - p for p in range(n, before, -1) if not special[p - 1]), 0)
        words = tokenize(text)
        al = align_pieces(text, words, offsets[before : n - after], special[before : n - after])
        kept = [w for w in range(len(words)) if w not in set(al.missing)]
        rows, cols, weights = pooling_weights(al.restrict(0, n - before - after, before, after), "mean", kept)
        out.append(Sequence_(list(ids), cols, rows, weights, len(kept)))
    return out


def plan_batches(seqs: list[Sequence_], batching: Batching) -> list[list[int]]:
    """Indices of the sequences in each batch: in order (longest first when sorted), a
    batch grows while it has fewer than ``batch_size`` sequences and its padded size
    (sequences × longest) stays within ``cap``."""
    order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i].ids)) if batching.sort else range(len(seqs))
    batches, current, width = [], [], 0
    for i in order:
        wider = max(width, len(seqs[i].ids))
        if current and (len(current) >= batching.batch_size
                        or (batching.cap and (len(current) + 1) * wider > batching.cap)):
            batches.append(current)
            current, wider = [], len(seqs[i].ids)
        current.append(i)
        width = wider
    return batches + ([current] if current else [])


def run_candidate(torch, forward: Callable, tokenizer, sentences: list[str], batching: Batching,
                  pad: int) -> list[np.ndarray]:
    """The engine-candidate pass; ``forward(ids, mask)`` gives the L + 1 hidden states
    ``(batch, seq, dim)`` as torch tensors. Returns each batch's pooled words
    ``(layers + 1, words, dim)``."""
    seqs = prepare(tokenizer, sentences)
    kept = []
    with torch.inference_mode():
        for batch in plan_batches(seqs, batching):
            width = max(len(seqs[i].ids) for i in batch)
            ids = torch.full((len(batch), width), pad, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            rows, cols, weights, n_rows = [], [], [], 0
            for b, i in enumerate(batch):
                s = seqs[i]
                ids[b, : len(s.ids)] = torch.tensor(s.ids)
                mask[b, : len(s.ids)] = 1
                rows += [n_rows + r for r in s.rows]
                cols += [b * width + c for c in s.cols]
                weights += s.weights
                n_rows += s.n_words
            states = forward(ids, mask)
            dim = states[0].shape[-1]
            rows_t, cols_t = torch.tensor(rows), torch.tensor(cols)
            w_t = torch.tensor(weights, dtype=torch.float32)[:, None]
            pooled = torch.zeros((len(states), n_rows, dim))  # (layers + 1, words, dim)
            for j, state in enumerate(states):
                pooled[j].index_add_(0, rows_t, state.reshape(-1, dim)[cols_t].float() * w_t)
            kept.append(pooled.numpy())
    return kept


def pool_word_ids(torch, states, enc) -> np.ndarray:
    """Mean of each tokenizer word's pieces in every layer: ``(layers, words, dim)``."""
    rows, cols, n = [], [], 0
    width = states[0].shape[1]
    for b in range(states[0].shape[0]):
        ids = enc.word_ids(b)
        seen = {w for w in ids if w is not None}
        for t, w in enumerate(ids):
            if w is not None:
                rows.append(n + w)
                cols.append(b * width + t)
        n += len(seen)
    rows_t, cols_t = torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long)
    counts = torch.zeros(n).index_add_(0, rows_t, torch.ones(len(rows)))[:, None]
    dim = states[0].shape[-1]
    pooled = torch.zeros((len(states), n, dim))
    for j, state in enumerate(states):
        state = torch.as_tensor(state)
        pooled[j].index_add_(0, rows_t, state.reshape(-1, dim)[cols_t])
    return (pooled / counts).numpy()


def sorted_batches(sentences: list[str], size: int = 64):
    order = sorted(sentences, key=len)
    return [order[i : i + size] for i in range(0, len(order), size)]


def run_hf_sorted_pooled(torch, model, tokenizer, sentences: list[str]) -> int:
    n = 0
    with torch.inference_mode():
        for batch in sorted_batches(sentences):
            enc = tokenizer(batch, padding=True, return_tensors="pt")
            out = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                        output_hidden_states=True)
            n += pool_word_ids(torch, out.hidden_states, enc).shape[1]
    return n


def run_ort_direct(torch, session, tokenizer, sentences: list[str]) -> int:
    n = 0
    for batch in sorted_batches(sentences):
        enc = tokenizer(batch, padding=True, return_tensors="np")
        feed = {"input_ids": enc["input_ids"].astype(np.int64),
                "attention_mask": enc["attention_mask"].astype(np.int64)}
        n += pool_word_ids(torch, session.run(None, feed), enc).shape[1]
    return n


def run_st_tokens(torch, st, sentences: list[str]) -> int:
    n = 0
    with torch.inference_mode():
        for batch in sorted_batches(sentences):
            features = st.tokenize(batch)
            out = st.forward(dict(features))
            n += pool_word_ids(torch, out["all_layer_embeddings"], features).shape[1]
    return n


def paired(runs: dict[str, Callable[[], object]], repeats: int,
           between: Callable[[str], None] | None = None) -> dict[str, list[float]]:
    """Seconds of each run per repeat, the order rotating every repeat (a shared machine
    slows whatever runs at a bad moment; rotation spreads that)."""
    names = list(runs)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            start = time.perf_counter()
            runs[name]()
            seconds[name].append(time.perf_counter() - start)
            print(f"    repeat {r + 1} {name}: {seconds[name][-1]:.2f} s", file=sys.stderr)
            if between:
                between(name)
    return seconds


def ratio(seconds: dict[str, list[float]], other: str, subject: str) -> float:
    """Median over repeats of other's time / subject's time (> 1: the subject is faster)."""
    return round(statistics.median(o / s for o, s in zip(seconds[other], seconds[subject])), 3)


def layer_cosines(a: list[np.ndarray], b: list[np.ndarray]) -> tuple[list[float], list[float]]:
    """Per layer, the mean and min cosine between matching word vectors of two runs
    (each a list of ``(layers, words, dim)`` arrays)."""
    x, y = np.concatenate(a, axis=1), np.concatenate(b, axis=1)  # (layers, words, dim)
    cos = (x * y).sum(-1) / np.maximum(np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1), 1e-12)
    return [round(float(c), 6) for c in cos.mean(1)], [round(float(c), 6) for c in cos.min(1)]
