"""The bounds of work and memory of every entry point, in one place.

The goal: no single command or lab request takes more than 2 GB above the loaded model,
or more than about a minute on a 2-core machine, unless the user asked for it with an
explicit option. Each bound below is read by the library function where the size is
known (so the library, the command line and the lab refuse alike, before the work
starts, with one :class:`~contextlens.errors.LimitError` line naming the bound and what
to do; the lab answers it with HTTP 422), or is the size of the pieces work is done in
(memory then stays flat however large the input), or fits a default to the input (a
sample whose size the result states). The lab's per-request limits
(:mod:`contextlens.web.limits`) sit below these; the command line's options take their caps
from here. ``benchmarks/bounds.py`` measures each entry point at its bound.

================================  ==============================  =======================================
entry point (CLI / lab route)     what grows                      bound
================================  ==============================  =======================================
explore, senses' usages,          words of the sentences          MAX_ENCODING_BYTES (check_encoding);
geometry, layers, rank,           (x layers x dim)                vectors only, no attention weights
compare-sentences, contextualize,                                 (analysis.usages.every_word)
attention; /api/explore,
/api/layers, /api/contextualize
explore (/api/explore)            usages of a word, squared       MAX_MATRIX_USAGES
usage_divergence (/api/layers)    pairs of a word's usages        MAX_USAGE_PAIRS
explore / senses projection       points (t-SNE, UMAP)            MAX_EMBED_POINTS (PCA: the words' bound)
attention (/api/attention)        words² x layers x heads         context.attention.WEIGHTS_BUDGET
attention --occlusion             words² (the text once a word)   MAX_ENCODING_BYTES over the n texts
geometry --pairs, rank            pairs compared                  PAIR_BLOCK at a time
predict, lens (/api/views/lens)   pieces of the context           MAX_LM_PIECES (and the model's own);
                                                                  one pass, continuations from its cache
                                                                  (LM_CACHE_BYTES a chunk)
lens --track                      tracked words x vocab x layers  MAX_TRACKED; LM_LENS_ROWS at a time
predict -k, lens -k               words listed                    MAX_PREDICTIONS
bias weat / seat p-value          permutations x |X ∪ Y|          default fitted to MAX_PERMUTATION_CELLS
                                                                  (stated); PERMUTATION_BLOCK_CELLS
bias weat scores                  words x dim                     none needed: mean unit vectors
bias seat                         template sentences' words       MAX_ENCODING_BYTES
bias ceat draws                   samples x words x dim           default fitted to MAX_CEAT_CELLS
                                                                  (stated); CEAT_BLOCK_CELLS
bias ceat --corpus / --db         sentences / usages x layers     MAX_ENCODING_BYTES / CEAT_CONTEXT_BYTES
static distill                    words x layers x dim (state)    DISTILL_STATE_BYTES; the corpus in
                                                                  chunks with checkpoints
probe (/api/views/probes)         SemCor words (train_rows,       MAX_STACK_BYTES (check_stack): every
                                  test_rows; --train-words,       layer of every word is held, in the
                                  --test-words) x layers x dim    cache's precision, and one layer's
                                                                  float64 features (PROBE_WORK)
probe --probe mlp                 its fit: words x dim x 256      none needed: 256 hidden units, at most
                                  units x epochs                  200 epochs, words bounded above
cka (/api/views/cka)              tokens of the sentences         MAX_STACK_BYTES over both models'
                                  (--sample, --sentences) x       stacks; layer pairs compared
                                  layers x dim, of 1 or 2 models  PAIR_BLOCK numbers of rows at a time
cka's corpus sample               lines of the corpora            two passes, the chosen lines kept
================================  ==============================  =======================================

Bounds kept where they were set before (one place each): ``context.attention.WEIGHTS_BUDGET``
and ``MAX_WORDS`` (attention weights, masks), ``static.cooccurrence.MAX_DENSE_BYTES``,
``static.word2vec.MAX_*``,
``bias.stats.MAX_EXACT``, ``views.usages.MAX_POINTS``, ``views.inputs.MAX_INPUT_SENTENCES``,
``analysis.geometry.MAX_PAIRS``;
corpus passes (``index build``, ``static build``, ``eval``) stream their
input in chunks.

This module imports nothing heavy: the command line reads it at start-up.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import check_size

__all__ = [
    "MAX_ENCODING_BYTES", "encoding_word_limit", "check_encoding", "PAIR_BLOCK", "MAX_MATRIX_USAGES",
    "MAX_USAGE_PAIRS",
    "MAX_EMBED_POINTS", "ATTENTION_BUDGET", "MAX_K", "MAX_BATCH", "MAX_LAYERS",
    "MAX_PREDICTIONS", "MAX_PATCH_PREDICTIONS", "MAX_TRACKED", "MAX_LM_PIECES", "LM_CACHE_BYTES",
    "LM_LENS_ROWS", "MAX_PERMUTATION_CELLS", "MIN_PERMUTATIONS", "PERMUTATION_BLOCK_CELLS",
    "MAX_CEAT_CELLS", "MIN_CEAT_SAMPLES", "CEAT_BLOCK_CELLS", "CEAT_CONTEXT_BYTES", "DISTILL_STATE_BYTES",
    "MAX_CLUSTERED", "MAX_SENTENCES", "MAX_SENTENCES_LIMIT", "MAX_STEPS", "MAX_STACK_BYTES",
    "stack_word_limit", "check_stack",
]

# -- encoding many sentences (analysis: explore, geometry, layers, rank, ...; bias: seat, ceat) -------
#: bytes of word vectors (float32, every layer) the sentences of one call may come to: their
#: words x layers x dim x 4 (49,932 words for minilm, 13,443 for mpnet, 7,516 for SmolLM2).
#: The encoding time grows alike (measured here: the three models' words per second are in
#: the ratio of their bytes per word), so the bound is one of time as well as of memory.
MAX_ENCODING_BYTES = 512 << 20


def encoding_word_limit(layers: int, dim: int) -> int:
    """The most words of sentences one call may encode with an encoder of ``layers``
    layers (the static row included) of ``dim`` numbers.

    >>> encoding_word_limit(7, 384), encoding_word_limit(13, 768), encoding_word_limit(31, 576)
    (49932, 13443, 7516)
    """
    return MAX_ENCODING_BYTES // (layers * dim * 4)


def check_encoding(encoder, texts: Sequence[str], *, what: str = "the sentences",
                   todo: str = "give fewer or shorter sentences") -> int:
    """The number of words (:func:`~contextlens.text.tokenize`) of ``texts``, if ``encoder``
    may encode them in one call (:data:`MAX_ENCODING_BYTES`), else a LimitError before any
    work, naming the encoder's cost per word and what to do."""
    from .text import tokenize

    n = sum(len(tokenize(t)) for t in texts)
    layers, dim = len(encoder.layer_ids), int(encoder.dim)
    name = getattr(encoder, "name", type(encoder).__name__)
    return check_size(what, n, encoding_word_limit(layers, dim), "words",
                      why=f"{name}: {layers} layer{'s' * (layers != 1)} x {dim} numbers a word; time and "
                          "memory grow with the words",
                      todo=todo)


# -- every layer of many words held at once (analysis.probing, analysis.cka) -------------------------
#: bytes of the layer stacks one probe or CKA call holds: words x layers x dim in the encoding
#: cache's precision (2 bytes a number for a model, 4 for a table), both models' together for
#: a CKA pair, and beside them the work on one layer (a probe's float64 features and the
#: scaler's deviations: words x dim x 18). SemCor's 40,000 probe words take 1.72 GiB with
#: SmolLM2 (31 x 576), 1.26 GiB with MPNet (13 x 768); the 11,090 tokens of CKA's 500 corpus
#: sentences 0.37 GiB with SmolLM2. Encoding them takes minutes for a transformer, once: the
#: cache keeps them.
MAX_STACK_BYTES = 7 << 28


def stack_word_limit(word_bytes: Sequence[int]) -> int:
    """The most words whose stacks and work (``word_bytes[i]`` bytes a word each) one call
    may hold.

    >>> stack_word_limit([31 * 576 * 2 + 576 * 18]), stack_word_limit([7 * 384 * 2, 13 * 768 * 2])
    (40777, 74141)
    """
    return MAX_STACK_BYTES // sum(word_bytes)


def check_stack(caches: Sequence, n: int, *, what: str, todo: str, unit: str = "words",
                work: int = 0) -> int:
    """``n`` if every layer of ``n`` words of the encoders of ``caches`` (evaluation caches:
    :class:`~contextlens.encoders.encoding_cache.EncodingCache`, whose ``dtype`` is what
    their vectors are held in), and ``work`` bytes a word for each encoder's dimension (what
    is made of one layer at a time), fit :data:`MAX_STACK_BYTES`, else a LimitError before
    any work, naming each encoder's cost per word and what to do."""
    import numpy as np

    sizes, why = [], []
    for cache in caches:
        enc = cache.encoder
        layers, dim, item = len(enc.layer_ids), int(enc.dim), np.dtype(cache.dtype).itemsize
        sizes.append(layers * dim * item + dim * work)
        why.append(f"{getattr(enc, 'name', type(enc).__name__)}: {layers} layer{'s' * (layers != 1)} x {dim} "
                   f"numbers x {item} bytes a {unit[:-1]}" + (f", and {work} bytes a number of one layer's "
                                                               "work" if work else ""))
    return check_size(what, n, stack_word_limit(sizes), unit,
                      why="; ".join(why) + "; every layer of every word held at once", todo=todo)


#: usages whose cosine matrix a result holds (explore): n x n numbers, 4 million at the bound
#: (32 MB as an array, ~130 MB as the lists a result holds, ~80 MB of JSON)
MAX_MATRIX_USAGES = 2000
#: pairs of a word's usages compared at every layer (layers' usage_divergence, /api/layers): 100
#: usages (the lab's 64 sentences, some holding the word twice); each pair is a line of the chart
#: and carries its two sentences in the JSON
MAX_USAGE_PAIRS = 5_000
#: points a t-SNE or UMAP projection places (explore, senses): their time grows faster than
#: the points (t-SNE: 300 points took 6-8 s on this busy machine); PCA is not bounded here
MAX_EMBED_POINTS = 2000
#: numbers held at once where all pairs of something are compared (geometry's anisotropy
#: pairs: PAIR_BLOCK // dim pairs of rows; rank's inversions: PAIR_BLOCK sign comparisons)
PAIR_BLOCK = 1 << 20


#: bytes of piece attention one batch of a transformer holds while its word attention is
#: made (encoders/transformer.py; copied once per batch): 64 sentences of 1,000 characters
#: with minilm's attention kept peaked at 2.1 GB with 512 MiB, 1.8 GB with this
ATTENTION_BUDGET = 128 << 20


# -- sizes of a request or an option (read by the library's checks and the command line's options) ----
#: results one call lists (neighbours, usages found in an index, answers): -k, --k, k=
MAX_K = 10_000
#: sequences a transformer runs per forward pass (batch_size=, --batch-size)
MAX_BATCH = 4096
#: stacked layers of the toy attention encoder (n_layers=, --layers)
MAX_LAYERS = 64
#: next words listed per layer after a patch (patch k=): one LM-head pass per layer and patch point
MAX_PATCH_PREDICTIONS = 50


# -- language models (encoders/lm.py: predict, lens) ----------------------------------------
#: best words asked of ``predict`` / ``lens`` (-k): each is a word of the answer
MAX_PREDICTIONS = 1000
#: words one lens run tracks (--track): each costs a full-vocabulary pass per layer and piece
MAX_TRACKED = 100
#: pieces of context a language model reads (predict, lens): one forward pass over them,
#: whose time grows with their number (and the model's own maximum may be lower)
MAX_LM_PIECES = 2048
#: bytes of the context's key/value cache copied for the continuations run together
#: (the next-word search's paths, the tracked words): more continuations, fewer at a time
LM_CACHE_BYTES = 256 << 20
#: rows (positions) put through the unembedding at once under the lens: rows x vocabulary
#: float64 logits (256 x 49,152 x 8 B = 96 MiB for SmolLM2)
LM_LENS_ROWS = 256

# -- association tests (bias/stats.py, weat.py, seat.py) ---------------------------------------
#: random keys drawn for a permutation p-value when the number of partitions is left to the
#: default: permutations x |X ∪ Y| (one key per word per partition; ~10-40 ns each here), so
#: 100,000 partitions up to 5,000 target words, fewer (stated in the result) beyond
MAX_PERMUTATION_CELLS = 500_000_000
#: ... but never fewer partitions than this (p-values down to 1 / 10,001)
MIN_PERMUTATIONS = 10_000
#: random keys held at once while partitions are drawn (float64: 32 MiB)
PERMUTATION_BLOCK_CELLS = 1 << 22
#: numbers multiplied by CEAT's draws when their number is left to the default:
#: samples x words x dim (10,000 draws of 32 words x 768 dims: 2.5e8), fewer draws beyond
MAX_CEAT_CELLS = 1_000_000_000
#: ... but never fewer draws than this
MIN_CEAT_SAMPLES = 1000
#: numbers of drawn vectors held at once (draws x words x dim, float64: 128 MiB)
CEAT_BLOCK_CELLS = 1 << 24
#: bytes of contexts CEAT reads from a usage index: usages x stored layers x dim x 4
#: (``limit=`` / --limit, usages per word, brings a large index under it)
CEAT_CONTEXT_BYTES = 1 << 30

# -- corpus passes (passes/distill.py: static distill) -----------------------------------------
#: bytes of distillation's pooling state (layers x words x dim float64 sums, and min / max /
#: median's arrays): the state is held for the whole pass, so it is bounded, not the corpus
DISTILL_STATE_BYTES = 3 << 29

# -- senses (analysis.senses; index senses) --------------------------------------------------------
#: the most usages one clustering takes (an n × n cosine pass, n × neighbours graph)
MAX_CLUSTERED = 10_000
#: sentences senses() encodes unless asked for more (max_sentences, ``senses --max-sentences``)
MAX_SENTENCES = 2_000
#: the most it may be asked for: encoded in chunks, one layer kept
MAX_SENTENCES_LIMIT = 200_000

# -- gradient attributions (encoders.gradients; attention --attribution ig --steps) ------------
#: points of the integrated-gradients integral, each a forward and backward pass
MAX_STEPS = 256
