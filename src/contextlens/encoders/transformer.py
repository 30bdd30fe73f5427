"""TransformerEncoder: word-level layers and attention from a real transformer.

For each sentence, an :class:`~contextlens.encoders.base.Encoding` over the words of
:func:`contextlens.text.tokenize`:

- layer 0 (``"embedding row"``): the raw rows of the model's embedding matrix for the
  word's pieces, pooled, so the same pieces give the same vector in every sentence;
  ``embeddings_output`` holds ``hidden_states[0]`` (rows + positions + LayerNorm);
- layers 1..L: the hidden states after each transformer layer (the last one as the
  model returns it, after any final norm), pooled over the word's pieces (``pooling``);
- ``attention (layers, heads, words, words)``: a word's row is the mean of its pieces'
  rows, a word's column the sum of its pieces' columns; the attention given to special
  and white-space pieces is ``special_attention (layers, heads, words)``, so a row plus
  its special share sums to 1;
- ``sentence_vectors``: every piece of the text (special tokens included) pooled at each
  layer, ``mean`` (over the attention mask), ``cls`` (the first piece) and ``max``, the
  way sentence-transformers pools; only for a text that fits one window.

How pieces map to words, and words that get no piece, are described in
:mod:`contextlens.encoders.alignment`; such a word is left out and named in
``meta["skipped"]``. A text longer than ``max_length`` pieces is never truncated: it is
cut into overlapping windows (on word boundaries), and each word is read from the window
where it is most central (``meta["windows"]``, ``meta["word_window"]``); its attention
row is then its attention *inside that window* (words outside it get 0).

Engines and precisions (:mod:`contextlens.encoders.engines`): ``engine="torch"`` runs
the model with forward hooks, ``"onnx"`` its ONNX export through onnxruntime (every layer
within 1e-5 of torch), ``"auto"`` picks; ``precision="bf16"`` (torch only, opt-in) logs its
measured fidelity to fp32 as a warning the first time it encodes.

``encode`` is safe to call from several threads at once: the model is never changed (a
pass that needs only the first k layers is stopped by a hook after layer k, one that acts
only for its own thread: :mod:`contextlens.encoders.hooks`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import bounds
from ..context.attention import check_weights_size
from ..errors import InputError, check_bool, check_choice, check_int, numbered
from ..progress import step
from ..text import tokenize
from . import engines, hooks, models, standalone
from .alignment import POOLINGS, Alignment, pool_terms, pooling_weights, window_attention
from .base import SENTENCE_POOLINGS, Encoder, Encoding, WordPieces, contextual_layers
from .batching import Plan, Pooled, Segment, batches, plan_text, pool_sentences
from .targets import check_texts

__all__ = ["TransformerEncoder"]

log = logging.getLogger(__name__)
ATTENTION_BUDGET = bounds.ATTENTION_BUDGET  # bytes of piece attention one batch may hold
MAX_BATCH = bounds.MAX_BATCH  # sequences per forward pass
FIDELITY_TEXTS = 16  # bf16: texts of the first call encoded in fp32 too, to measure the difference


class TransformerEncoder(Encoder):
    """Word vectors (every layer) and word-level attention from a transformer.

    Parameters
    ----------
    model : a packaged model (``minilm``, ``mpnet``, ``smollm2``), a local transformers
        directory, or a Hugging Face id.
    layers : which layers after layer 0 to keep: None or ``"all"`` (every layer), an int
        (one layer; negative counts from the end; 0 keeps only the embedding row), or a
        list of ints. Only the layers up to the deepest one requested are run.
    pooling : how a word's pieces combine: ``mean``, ``first`` or ``last``.
    batch_size : sequences per forward pass (sorted by length to waste little padding;
        default: the engine's, ``engines.BATCH_SIZE``).
    max_length : pieces per sequence, special tokens included (default: the model's
        maximum); longer texts are split into overlapping windows.
    stride : pieces between the starts of consecutive windows (default: half a window).
    device : a torch device (``"cpu"``, ``"cuda"``...).
    attention : compute word-level attention (needs the eager attention implementation,
        slower and heavier); False leaves ``attention`` None.
    threads : CPU threads of the engine (default: ``CONTEXTLENS_THREADS`` or every core available).
    engine : ``torch``, ``onnx`` (onnxruntime over the model's ONNX export, exported once
        and cached; CPU only) or ``auto`` (``onnx`` where onnxruntime is installed, on the
        CPU in fp32, falling back to ``torch`` if the model does not export).
    precision : ``fp32``, or ``bf16`` (torch autocast; opt-in: the vectors move at the 1e-2
        level, its fidelity is logged and kept in ``fidelity``).
    random_weights : None, or a seed: the model's architecture with every weight re-drawn
        (:func:`~contextlens.encoders.models.random_twin`; the tokenizer is the model's own),
        named ``"<model> (random weights, seed N)"`` so results and caches never take it for
        the trained model.
    """

    has_attention_parts = True

    def __init__(self, model: str = models.DEFAULT_MODEL, layers=None, pooling: str = "mean",
                 batch_size: int | None = None, max_length: int | None = None, device: str = "cpu",
                 attention: bool = True, stride: int | None = None,
                 threads: int | None = None, engine: str = "auto", precision: str = "fp32",
                 random_weights: int | None = None):
        self.pooling = check_choice("pooling", pooling, POOLINGS)
        self.attention, self.device = check_bool("attention", attention), str(device)
        self.engine = engines.resolve_engine(engine, precision, device)
        self.precision = precision
        self._given_batch = None if batch_size is None else check_int(
            "batch_size", batch_size, low=1, high=MAX_BATCH)
        models.check_name(model)  # a mistyped name is answered before torch loads
        if random_weights is not None:
            check_int("random_weights", random_weights, low=0, high=2**32 - 1,
                      hint="the seed of the random weights")
        self.random_weights = random_weights
        self.name = models.packaged_name(model) or str(model)
        if random_weights is not None:
            self.name = f"{self.name} (random weights, seed {random_weights})"
        self._source, self._threads, self._hf = model, threads, None
        self.path = models.resolve(model)
        self._runner = None
        self._qk = None  # the query/key weights read by numpy (False: not readable)
        side = self._onnx_side(threads, fallback=engine == "auto") if self.engine == "onnx" else None
        if side is None:  # the torch engine, or a model whose tokenizer does not stand alone
            hf_model, tokenizer = self._torch_side()
            facts, self._tok = standalone.facts_of(hf_model, tokenizer), tokenizer
            rows = hf_model.get_input_embeddings().weight
            self._embedding = rows.detach().float().cpu().numpy()  # (vocab, dim)
        else:  # the ONNX export stands alone: no torch, no transformers
            facts, self._tok, self._embedding = side.facts, side.tokenizer, side.embedding
        self._facts = facts
        self.n_model_layers = facts.n_layers
        self.layers = contextual_layers(layers, self.n_model_layers)
        self.model_max_length = facts.max_length
        self.max_length = self.model_max_length if max_length is None else check_int(
            "max_length", max_length, low=2, high=self.model_max_length,
            hint="the model's own maximum is the top")
        self.stride = None if stride is None else check_int("stride", stride, low=1, high=self.max_length)
        self.causal = facts.causal
        self._pad = facts.pad_id
        self.fidelity: list[engines.LayerFidelity] | None = None  # bf16: measured on the first texts
        if precision == "bf16" and not engines.bf16_instructions():
            log.warning("this CPU has no bf16 matmul instructions (AVX-512 BF16, AMX): bf16 is emulated and "
                        "slower than fp32 here; use precision='fp32'")

    def _onnx_side(self, threads, fallback: bool) -> standalone.Standalone | None:
        """The onnxruntime runner, its plain graph found in the cache (without loading the
        model) or exported now; its stand-alone side (tokenizer, facts, embedding rows), or
        None when the model's tokenizer does not stand alone. With ``fallback`` (engine
        ``auto``) a model that does not export runs on torch."""
        from .onnx_engine import OnnxExportError, OnnxRunner

        if self.random_weights is None:
            runner = OnnxRunner(threads=threads, source=self.path, loader=self._torch_side)
        else:  # a random twin: exported by its own weights, never through the directory's pointer
            model, tokenizer = self._torch_side()
            runner = OnnxRunner(model, threads=threads, tokenizer=tokenizer)
        try:
            runner.session(attention=False)
        except (OnnxExportError, OSError) as e:
            if not fallback:
                raise
            log.warning("%s does not run on onnxruntime (%s); using the torch engine", self.name, e)
            self.engine = "torch"
            return None
        self._runner = runner
        return standalone.open_folder(runner.paths[False])

    def _torch_side(self):
        """``(HF model, transformers tokenizer)``, loaded with torch the first time it is
        needed: the torch engine, an export, ``attention_parts`` of a model numpy cannot read."""
        if self._hf is None:
            lazy = self.engine == "onnx"
            with step(f"loading {self.name} with torch") if lazy else contextlib.nullcontext():
                torch, _ = models.require_hf()
                models.set_threads(self._threads)
                if self.device.startswith("cuda") and not torch.cuda.is_available():
                    raise InputError(f"device {self.device!r} is not available (no CUDA); use device='cpu'")
                model, tokenizer, self.path = models.load(self._source, attention=self.attention,
                                                          device=self.device)
                if self.random_weights is not None:
                    model = models.random_twin(model, self.random_weights)
            self._hf = (model, tokenizer)
        return self._hf

    @property
    def hf_model(self):
        """The Hugging Face model (loaded with torch when first asked for on the ONNX engine)."""
        return self._torch_side()[0]

    @property
    def tokenizer(self):
        """transformers' tokenizer of the model (loaded with torch when first asked for on
        the ONNX engine; the encoder itself uses the stand-alone one there)."""
        return self._torch_side()[1]

    @property
    def batch_size(self) -> int:
        """Sequences per forward pass: as given, else the engine's default."""
        return self._given_batch or engines.BATCH_SIZE[self.engine]

    @property
    def dim(self) -> int:
        return int(self._facts.dim)

    @property
    def layer_ids(self) -> tuple[int, ...]:
        return (0, *self.layers)

    def params(self) -> dict[str, Any]:
        """What keys caches and index metadata. The engine is left out in fp32 (both give
        the same vectors within 1e-5, so an index built with one is searched with the
        other); bf16 changes the numbers, so it is named, with its engine."""
        out = {"encoder": "transformer", "model": self.name, "path": str(self.path), "pooling": self.pooling,
               "layers": list(self.layers), "max_length": self.max_length, "stride": self.stride,
               "attention": self.attention, "batch_size": self.batch_size}
        if self.random_weights is not None:
            out["random_weights"] = self.random_weights
        return out if self.precision == "fp32" else {**out, "precision": self.precision,
                                                     "engine": self.engine}

    def _meta(self) -> dict[str, Any]:
        return {
            "encoder": "transformer", "model": self.name, "path": str(self.path),
            "architecture": self._facts.architecture,
            "model_type": self._facts.model_type, "causal": self.causal, "pooling": self.pooling,
            "layers": list(self.layers), "n_model_layers": self.n_model_layers,
            "max_length": self.max_length, "params": self.params(), "engine": self.engine,
            "precision": self.precision, "threads": models.threads_in_use(self._runner),
            "vectors": f"{self.name}'s pieces (its tokenizer gave the word no sub-word piece)",
        }

    def static_vectors(self, words: Sequence[str]) -> np.ndarray:
        """Each word's embedding-matrix rows, pooled like the layers (the word tokenised alone)."""
        out = np.zeros((len(words), self.dim), dtype=np.float32)
        for i, word in enumerate(words):
            ids = self._tok(str(word), add_special_tokens=False)["input_ids"]
            if not str(word).strip() or not ids:
                raise InputError(f"{self.name}'s tokenizer gives {word!r} no piece; give a word it can read")
            ids = {"first": ids[:1], "last": ids[-1:]}.get(self.pooling, ids)
            out[i] = np.asarray(self._embedding[ids], dtype=np.float32).mean(axis=0)
        return out

    def sentence_vectors(self, texts: Sequence[str]) -> np.ndarray:
        """``(layers, texts, dim)``: every piece of each text, special tokens included, averaged
        over the attention mask at each layer of ``layer_ids`` (layer 0: the embedding-matrix
        rows), as sentence-transformers' mean pooling; a text longer than ``max_length``
        pieces is truncated, as that pipeline truncates it."""
        texts = check_texts(texts)
        out = np.zeros((len(self.layer_ids), len(texts), self.dim), dtype=np.float32)
        with self._forward(max(self.layers, default=1), bf16=False) as forward:
            for start in range(0, len(texts), self.batch_size):
                enc = self._tok(texts[start : start + self.batch_size], truncation=True,
                                max_length=self.max_length, return_attention_mask=False)
                ids, mask = standalone.pad_batch(enc["input_ids"], self._pad)  # (batch, pieces)
                store, _ = forward(ids, mask, False)
                m = mask[:, :, None].astype(np.float32)  # (batch, pieces, 1)
                rows = np.asarray(self._embedding[ids], dtype=np.float32)
                states = [rows, *(store[k] for k in self.layers)]
                for j, h in enumerate(states):  # h: (batch, pieces, dim)
                    out[j, start : start + len(h)] = (h * m).sum(1) / np.maximum(m.sum(1), 1e-9)
        return out

    def attention_parts(self, text: str, *, layers=None, pad: int = 0) -> list:
        """Each layer's queries, keys and mask over ``text``'s pieces: :mod:`contextlens.encoders.qk`.
        On the ONNX engine, for a model numpy can read (:mod:`~contextlens.encoders.qk_numpy`),
        without torch; else from the torch model (loaded then, behind its progress line)."""
        from .qk import pick_layers, standalone_parts, transformer_parts

        picked = pick_layers(self.layer_ids, ("embedding row", *(f"layer {k}" for k in self.layers)), layers)
        text = check_texts([text])[0]
        numbers, names = [k for k, _ in picked], [n for _, n in picked]
        weights = self._qk_weights()
        if weights is not None:
            if not self.attention:
                raise InputError("the model returns no attention weights; create the encoder with "
                                 "attention=True")

            def run(ids, mask):
                out = self._runner.run(ids, mask, True)
                return out.hidden_states, out.attentions

            return standalone_parts(run, weights, self._tok, text, numbers, names, max_length=self.max_length,
                                    pad_id=self._pad, pad=pad)
        model, tokenizer = self._torch_side()
        _, blocks = hooks.layer_list(model, self.n_model_layers)
        return transformer_parts(model, tokenizer, blocks, text, numbers, names, max_length=self.max_length,
                                 pad_id=self._pad, pad=pad)

    def _qk_weights(self):
        """The query/key weights numpy computes the parts with, read from the model's
        safetensors once: on the ONNX engine, for the trained weights (a random twin's are in
        no file) of a covered model; else None."""
        if self._runner is None or self.random_weights is not None:
            return None
        if self._qk is None:
            from .qk_numpy import open_weights

            self._qk = open_weights(self.path) or False
        return self._qk or None

    def _encode_texts(self, texts: list[str], chosen: list[list[int] | None]) -> list[Encoding]:
        """With targets, only those words are pooled, windows without them are not run,
        texts without them give an Encoding with no words, and ``attention`` is None (a
        word row over a subset of words would not sum to 1)."""
        plans = self._plans(texts, chosen, attention=self.attention and bool(self.layers))
        heads = self._facts.n_heads
        for i, plan in enumerate(plans):  # before the model runs: dense word attention grows as words²
            if plan.attention:
                check_weights_size(
                    len(plan.kept), len(self.layers), heads, what=numbered("text", i, texts[i]), todo=(
                        "pass attention=False (vectors of any length go through windows), keep only some "
                        "words (targets=), fewer layers, or a shorter text"), cli_todo="give a shorter text")
        fidelity = self.fidelity
        if self.precision == "bf16" and fidelity is None:
            fidelity = self.fidelity = self._measure_fidelity(texts[:FIDELITY_TEXTS], chosen[:FIDELITY_TEXTS])
        pooled = self._run(plans, bf16=self.precision == "bf16")
        encodings = [self._encoding(text, plan, out) for text, plan, out in zip(texts, plans, pooled)]
        if fidelity is not None:
            for e in encodings:
                e.meta["fidelity"] = [f._asdict() for f in fidelity]
        return encodings

    def _measure_fidelity(self, texts: list[str], chosen: list) -> list[engines.LayerFidelity] | None:
        """bf16 against fp32 on ``texts``: per layer, the cosines of matching word vectors."""
        plans = self._plans(texts, chosen, attention=False)
        stacks = {precision: np.concatenate([p.layers for p in self._run(plans, bf16=precision == "bf16")],
                                            axis=1)
                  for precision in ("fp32", "bf16")}  # (layers, words, dim)
        if stacks["fp32"].shape[1] == 0:  # no word kept (targets): measure on the next call
            return None
        fidelity = engines.layer_fidelity(stacks["fp32"], stacks["bf16"], self.layer_ids)
        log.warning("%s: %s", self.name, engines.describe_fidelity(fidelity, stacks["fp32"].shape[1]))
        return fidelity

    def _plans(self, texts: list[str], chosen: list, attention: bool) -> list[Plan]:
        """Each text aligned to its pieces and cut into windows
        (:func:`~contextlens.encoders.batching.plan_text`)."""
        enc = self._tok(texts, add_special_tokens=True, return_offsets_mapping=True,
                        return_special_tokens_mask=True, return_attention_mask=False,
                        return_token_type_ids=False, verbose=False)
        return [plan_text(i, text, tokenize(text), enc["input_ids"][i], enc["offset_mapping"][i],
                          enc["special_tokens_mask"][i], chosen[i], tokens=self._tok.convert_ids_to_tokens,
                          capacity=self.max_length, stride=self.stride, attention=attention, name=self.name)
                for i, text in enumerate(texts)]

    def _attention_bytes(self, width: int) -> tuple[int, int]:
        """Every run layer's ``(batch, heads, T, T)`` attention of one sequence, and the budget."""
        return 4 * self._facts.n_heads * max(self.layers, default=1) * width**2, ATTENTION_BUDGET

    def _run(self, plans: list[Plan], bf16: bool = False) -> list[Pooled]:
        """Run the model over the plans' segments in batches; per plan, its pooled word
        vectors, embedding output and attention (:class:`~contextlens.encoders.batching.Pooled`)."""
        depth = max(self.layers, default=1)  # run at least one layer: its input is hidden_states[0]
        dim = self.dim
        out = [Pooled(np.zeros((len(self.layers) + 1, len(p.kept), dim), dtype=np.float32),
                      np.zeros((len(p.kept), dim), dtype=np.float32)) for p in plans]
        segments = [s for p in plans for s in p.segments]
        budget = self._attention_bytes if self.attention else None
        with self._forward(depth, bf16) as forward:
            for batch in batches(segments, size=self.batch_size, tokens=engines.BATCH_TOKENS[self.engine],
                                 attention_bytes=budget):
                lengths = [len(s.ids) for s in batch]
                ids, mask = standalone.pad_batch([s.ids for s in batch], self._pad)  # (batch, width)
                width = ids.shape[1]
                rows, cols, weights, n_rows = [], [], [], 0
                for b, seg in enumerate(batch):
                    r, c, w = pooling_weights(seg.alignment, self.pooling, seg.take)
                    rows += [n_rows + x for x in r]
                    cols += [b * width + x for x in c]
                    weights += w
                    n_rows += len(seg.take)
                need_att = any(plans[s.text].attention for s in batch)
                store, attentions = forward(ids, mask, need_att)  # numpy states (batch, width, dim)
                cols_a = np.asarray(cols, dtype=np.int64)
                rows_a, w_a = np.asarray(rows), np.asarray(weights, dtype=np.float32)
                states = [np.asarray(self._embedding[ids.reshape(-1)[cols_a]], dtype=np.float32)]
                # each (pieces used, dim):
                states += [store[k].reshape(-1, dim)[cols_a] for k in (0, *self.layers)]
                pooled = np.stack([pool_terms(s, rows_a, w_a, n_rows) for s in states])
                # pooled: (embedding row, emb. output, layers..., rows, dim)
                rows_0 = np.asarray(self._embedding[ids], dtype=np.float32)  # (batch, width, dim)
                sentence = pool_sentences([rows_0] + [store[k] for k in self.layers], mask)
                start = 0
                for b, seg in enumerate(batch):
                    plan, result = plans[seg.text], out[seg.text]
                    if len(plan.windows) == 1:
                        result.sentence = sentence[:, b]  # (layers + 1, poolings, dim)
                    chunk = pooled[:, start : start + len(seg.take)]
                    where = [plan.index[w] for w in seg.take]
                    result.layers[0, where] = chunk[0]
                    result.layers[1:, where] = chunk[2:]
                    result.embeddings_output[where] = chunk[1]
                    start += len(seg.take)
                if need_att:
                    self._word_attention(batch, plans, out, attentions, lengths)
        return out

    def _word_attention(self, batch: list[Segment], plans: list[Plan], out: list[Pooled], attentions,
                        lengths: list[int]) -> None:
        if not attentions or any(a is None for a in attentions):
            problem = (f"{self.name} returns no attention weights (its attention implementation is "
                       f"{self._facts.attn_implementation!r})")
            raise InputError(f"{problem}; use attention=False",
                             cli=f"{problem}; this command shows attention weights: use another model")
        att = np.stack([_numpy(attentions[k - 1]) for k in self.layers], 1)
        for b, seg in enumerate(batch):  # att[b]: (layers, heads, T, T) float32
            if plans[seg.text].attention:
                t = lengths[b]
                out[seg.text].attention[seg.window] = (
                    seg.take, *window_attention(att[b, :, :, :t, :t], seg.alignment, seg.take))

    @contextlib.contextmanager
    def _forward(self, depth: int, bf16: bool):
        """The engine's forward: ``(ids, mask, attention) -> (states, attentions)`` for numpy
        ``(batch, seq)`` ids and mask, where ``states[k]`` is ``hidden_states[k]`` ``(batch,
        seq, dim)`` float32 numpy for 0 and the kept layers. Safe to use from several threads
        at once: the torch engine's hooks act only for their own thread, and a pass that needs
        no attention stops after layer ``depth`` (:class:`~contextlens.encoders.hooks.StopForward`)."""
        if self._runner is not None:  # onnxruntime runs every layer, whatever is kept
            def run_onnx(ids, mask, attention):
                out = self._runner.run(ids, mask, attention)
                return dict(enumerate(out.hidden_states)), out.attentions  # numpy arrays

            yield run_onnx
            return
        import torch

        model, n = self.hf_model, self.n_model_layers
        _, blocks = hooks.layer_list(model, n)
        precision = (torch.autocast(torch.device(self.device).type, dtype=torch.bfloat16) if bf16
                     else contextlib.nullcontext())

        def run_torch(ids, mask, attention):
            store: dict[int, Any] = {}
            stop = depth if depth < n and not attention else None  # attention weights come from the whole run
            handles = hooks.hook_states(blocks, [k for k in self.layers if k < n], store, stop)
            result = None
            try:
                with precision, contextlib.suppress(hooks.StopForward):
                    result = model(input_ids=torch.from_numpy(ids).to(self.device),
                                   attention_mask=torch.from_numpy(mask).to(self.device),
                                   output_attentions=attention)
            finally:
                for h in handles:
                    h.remove()
            if depth == n:
                store[depth] = result.last_hidden_state
            return {k: _numpy(v) for k, v in store.items()}, None if result is None else result.attentions

        with torch.inference_mode():
            yield run_torch

    def _encoding(self, text: str, plan: Plan, out: Pooled) -> Encoding:
        kept, words = plan.kept, plan.words
        meta = self._meta()
        al: Alignment = plan.alignment
        tokens = [[plan.pieces[p] for p in al.word_pieces[w]] for w in kept]
        ids = [self._tok.convert_tokens_to_ids(t) for t in tokens]
        meta.update(word_indices=list(kept), skipped={words[w].text: [] for w in plan.missing})
        if len(plan.windows) > 1:
            meta.update(windows=[list(s) for s in plan.spans], word_window=[plan.owner[w] for w in kept])
        attention = special = None
        if plan.attention and kept:
            n, index = len(kept), plan.index
            att_shape = next(iter(out.attention.values()))[1].shape[:2]
            attention = np.zeros((*att_shape, n, n), dtype=np.float32)  # (layers, heads, words, words)
            special = np.zeros((*att_shape, n), dtype=np.float32)
            for take, word_att, share, cols in out.attention.values():  # (layers, heads, take, cols)
                rows = np.array([index[w] for w in take])
                attention[:, :, rows[:, None], [index[w] for w in cols]] = word_att
                special[:, :, rows] = share
            if len(plan.windows) > 1:
                meta["attention"] = "windowed: a word's row is its attention inside its window; 0 outside"
        elif self.attention:
            meta["attention"] = ("not computed: only some words were kept (targets=)" if self.layers
                                 else "no layers requested")
        names = ("embedding row",) + tuple(f"layer {k}" for k in self.layers)
        sentence = out.sentence
        if sentence is None:
            meta["sentence"] = (f"not computed: the text ran in {len(plan.windows)} windows of at most "
                                f"{self.max_length} pieces" if len(plan.windows) > 1 else
                                "not computed: the text holds none of the target words")
        return Encoding(text, [words[w] for w in kept], out.layers, attention, names, meta, special,
                        out.embeddings_output, self.layer_ids,
                        {} if sentence is None else dict(zip(SENTENCE_POOLINGS, sentence.transpose(1, 0, 2))),
                        self.name, WordPieces(tuple(map(tuple, tokens)), tuple(map(tuple, ids))))


def _numpy(array) -> np.ndarray:
    """A float32 numpy array of a torch tensor (any device, any float type) or an array."""
    if isinstance(array, np.ndarray):
        return array.astype(np.float32, copy=False)
    return array.detach().float().cpu().numpy()
