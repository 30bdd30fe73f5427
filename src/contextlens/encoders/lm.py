"""What the model expects here: predictions at a position and the logit lens.

:class:`LanguageModel` loads a transformer *with* its language-model head, through the
same names as every encoder (a packaged model, a local directory, a Hugging Face id):

- a causal LM (SmolLM2, GPT-2, Llama...) predicts the **next word** after a text;
- a masked LM (any ``*ForMaskedLM``) **fills** the one ``[MASK]`` of a text (the model's own
  mask token, e.g. ``<mask>``, works too);
- the **logit lens** (causal LMs): each layer's hidden state at a position, put through the
  model's final norm and unembedding, read as a next-piece distribution.

Predictions are words of :func:`contextlens.text.tokenize`, scored by the rules of
:mod:`contextlens.encoders.wordprob`: a causal word's probability is the product along its
pieces times the probability that the word ends there; a masked word's is its first
piece's. The packaged ``minilm`` and ``mpnet`` are sentence encoders whose heads were
removed: loading them raises :class:`~contextlens.encoders.models.NoLMHeadError`, which says
what to use instead.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import logging
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import bounds
from ..errors import InputError, check_choice, check_int, check_size
from ..progress import step
from ..text import tokenize
from . import engines, hooks, models, standalone
from .lm_lens import LensReadings
from .lm_onnx import open_cached
from .lm_results import (
    CAUSAL_RULE,
    MASKED_RULE,
    Predictions,
    not_causal,
)
from .wordprob import (
    PieceWords,
    first_piece_words,
    local_tail,
    next_words,
)

__all__ = ["LanguageModel", "MASK", "NoLMHeadError"]

log = logging.getLogger(__name__)
NoLMHeadError = models.NoLMHeadError
MASK = "[MASK]"  # written in a text for a masked LM; replaced by the model's own mask token
ONNX_PIECES = 4096  # pieces one predict step or lens may run on the ONNX engine (it keeps no key/value
# cache, so a path reruns its context): beyond, the torch engine's cache does less work and is used
_NORMS = ("norm", "ln_f", "final_layer_norm", "final_layernorm", "norm_f")  # a causal LM's final norm


@dataclass(frozen=True)
class _Context:
    """A context run once: its last logits ``(vocab,)``, its key/value cache (what follows
    the context reuses it), its hidden states per layer ``{layer: (1, pieces, dim)}`` when
    asked for, and the cache's size in bytes."""

    logits: Any
    cache: Any
    states: dict[int, Any] | None
    kv_bytes: int


class LanguageModel(LensReadings):
    """A transformer with its language-model head.

    Parameters
    ----------
    model : a packaged model (``smollm2``), a local transformers directory or a Hugging
        Face id; a causal config loads ``AutoModelForCausalLM``, any other
        ``AutoModelForMaskedLM``.
    device : a torch device; threads : torch CPU threads (default: :func:`models.set_threads`).
    kind : ``"causal"`` refuses, from the config alone, a model that does not predict the next
        word (the logit lens needs one); None takes the model's own kind.
    engine : ``auto`` (a causal LM whose ONNX export and head are cached runs on onnxruntime
        and numpy, importing neither torch nor transformers; the first run prepares them),
        ``onnx`` or ``torch``. A masked LM runs on torch.
    """

    def __init__(self, model: str = "smollm2", device: str = "cpu", threads: int | None = None,
                 kind: str | None = None, engine: str = "auto"):
        if kind is not None:
            check_choice("kind", kind, ("causal", "masked"))
        use_onnx = engines.resolve_engine(engine, "fp32", device) == "onnx" and kind != "masked"
        models.check_name(model)
        self.name = models.packaged_name(model) or str(model)
        self.device, self._source, self._threads = str(device), model, threads
        self._hf = self._onnx = None
        self.path = models.resolve(model)
        self._onnx = open_cached(self.path, self.name, kind, self._runner) if use_onnx else None
        if self._onnx is None:
            _, transformers = models.require_hf("predictions")
            config = transformers.AutoConfig.from_pretrained(self.path)
            self.kind = "causal" if models.is_causal(config) else "masked"
            if kind == "causal" and self.kind != "causal":  # said before the weights load
                raise not_causal(self.name, config.model_type)
            self._tok = self._torch_side()[1]
            self.n_layers = int(self.hf_model.config.num_hidden_layers)
            self.max_pieces = models.max_length_of(self.hf_model.config, self.tokenizer)
            if use_onnx and self.kind == "causal":
                self._onnx = self._prepare_onnx()
        if self._onnx is not None:
            side = self._onnx.side
            self.kind, self._tok, self.n_layers = "causal", side.tokenizer, side.facts.n_layers
            self.max_pieces = side.facts.max_length
        self._pieces = PieceWords(self._tok)

    def __repr__(self) -> str:
        return f"LanguageModel({self.name!r}, {self.kind})"

    # -- engines -----------------------------------------------------------------------------
    def _torch_side(self):
        """``(HF model with its head, transformers tokenizer)``, loaded with torch when first needed."""
        if self._hf is None:
            lazy = self._onnx is not None
            with step(f"loading {self.name} with torch") if lazy else contextlib.nullcontext():
                models.require_hf("predictions")
                models.set_threads(self._threads)
                head = getattr(self, "kind", None) or "causal"
                model, tokenizer, self.path = models.load(self._source, attention=False, device=self.device,
                                                          head=head)
            forward = inspect.signature(model.forward).parameters
            self._cache_arg = "cache" if "cache" in forward else "past_key_values"  # transformers 5.x / 4.x
            self._keeps_logits = "logits_to_keep" in forward
            self._hf = (model, tokenizer)
        return self._hf

    @property
    def _torch(self):
        import torch

        return torch

    @property
    def hf_model(self):
        """The Hugging Face model with its head (loaded with torch when first asked for on the
        ONNX engine)."""
        return self._torch_side()[0]

    @property
    def tokenizer(self):
        """transformers' tokenizer (loaded when first asked for on the ONNX engine, which
        uses the stand-alone one)."""
        return self._torch_side()[1]

    def _runner(self):
        from .onnx_engine import OnnxRunner

        return OnnxRunner(threads=self._threads, source=self.path,
                          loader=lambda: (self.hf_model.base_model, self.tokenizer))

    def _prepare_onnx(self):
        """Export the loaded causal LM and keep its head, so the next run needs no torch;
        None (it stays on torch) when its head or export cannot stand alone."""
        from ..build_marker import write_marker
        from ..disk_cache import DiskCache
        from .onnx_engine import OnnxExportError

        cache = DiskCache("onnx")
        folder = standalone.head_folder(self.path, cache)
        try:
            with step(f"preparing {self.name} for the ONNX engine (once)"):
                with cache.building(folder) as tmp:
                    if tmp is not None:
                        problem = standalone.write_head(self.hf_model, self._final_norm(), tmp)
                        if problem:
                            raise OnnxExportError(f"{self.name} does not run on onnxruntime: {problem}")
                        write_marker(tmp, f"lm head: {self.name}")
                self._runner().session(False)  # exported from the loaded model, found from now on
                opened = open_cached(self.path, self.name, "causal", self._runner)
            # this run reads the export as every later one will; torch's model is let go
            if opened is not None:
                self._hf = None
            return opened
        except (OnnxExportError, OSError, InputError) as e:
            log.warning("%s; it runs on torch", e)
            return None

    def _pad_id(self) -> int:
        return self._tok.pad_token_id if self._tok.pad_token_id is not None else 0

    def _on_onnx(self, pieces: int) -> bool:
        """Whether a call that runs ``pieces`` pieces in all runs on the ONNX engine (see
        :data:`ONNX_PIECES`)."""
        if self._onnx is None:
            return False
        if self._hf is not None:  # torch is loaded anyway (a tuned lens, a long context): its exact numbers
            return False
        if pieces > ONNX_PIECES:
            log.info("%d pieces: the torch engine's key/value cache runs them with less work", pieces)
            return False
        return True

    # -- pieces as text ----------------------------------------------------------------------
    @property
    def piece_texts(self) -> list[str]:
        """The text each piece adds to a text (:attr:`~contextlens.encoders.wordprob.PieceWords.texts`)."""
        return self._pieces.texts

    def _starting_words(self, tail: str) -> list[str | None]:
        """Per piece, the word it starts right after ``tail`` (None if it glues onto tail's last word)."""
        return self._pieces.starting_words(tail)

    # -- model calls -------------------------------------------------------------------------
    def _ids(self, text: str) -> list[int]:
        return list(self._tok(text, add_special_tokens=True)["input_ids"])

    def _check_pieces(self, ids: list[int], what: str = "the text") -> list[int]:
        """``ids`` if the model may read that many pieces, else one line naming the bound."""
        most = min(bounds.MAX_LM_PIECES, self.max_pieces)
        why = (f"{self.name} reads at most {self.max_pieces:,}" if most == self.max_pieces
               else "the time of a pass grows with the pieces")
        check_size(what, len(ids), most, "pieces", why=why,
                   todo="give a shorter text (its end: the words just before the prediction matter most)")
        return ids

    def _call(self, ids, cache=None, *, last: bool = False):
        """The model on ``ids`` ``(batch, T)`` after ``cache`` (None: from the start):
        ``(logits, cache)``; with ``last``, only the last position's logits (where the model
        can skip the others)."""
        torch = self._torch
        kwargs: dict[str, Any] = {"use_cache": True}
        if cache is not None:
            kwargs[self._cache_arg] = cache
        if last and self._keeps_logits:
            kwargs["logits_to_keep"] = 1
        with torch.inference_mode():
            out = self.hf_model(input_ids=ids.to(self.device), **kwargs)
        cache = getattr(out, "cache", None)
        return out.logits, cache if cache is not None else out.past_key_values

    def _run_context(self, ids: list[int], hidden: bool = False) -> _Context:
        """Run the context once; what follows it reuses its key/value cache."""
        with self._capture(hidden) as states:
            logits, cache = self._call(self._torch.tensor([ids]), last=True)
        layers = getattr(cache, "layers", None)  # transformers 5.x; 4.x keeps key_cache / value_cache lists
        kv = (sum(t.nbytes for layer in layers for t in (layer.keys, layer.values)) if layers is not None
              else sum(t.nbytes for t in (*cache.key_cache, *cache.value_cache)))
        return _Context(logits[0, -1], cache, dict(states) if hidden else None, kv)

    def _continue(self, ctx: _Context, rows: list[list[int]], hidden: bool = False):
        """Run each row of piece ids right after the context, in chunks (as many rows as
        copies of the context's cache fit :data:`~contextlens.bounds.LM_CACHE_BYTES` and
        their positions :data:`~contextlens.bounds.LM_LENS_ROWS`): yields ``(first row,
        logits (chunk, width, vocab; with ``hidden`` the last position's only), states {layer:
        (chunk, width, dim)} or None)``."""
        torch = self._torch
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        width = max((len(r) for r in rows), default=1)
        size = max(1, min(bounds.LM_CACHE_BYTES // max(ctx.kv_bytes, 1), bounds.LM_LENS_ROWS // width))
        for start in range(0, len(rows), size):
            chunk = rows[start : start + size]
            ids = torch.full((len(chunk), max(len(r) for r in chunk)), pad, dtype=torch.long)
            for b, r in enumerate(chunk):  # right padding: a causal model never reads it
                ids[b, : len(r)] = torch.tensor(r)
            cache = copy.deepcopy(ctx.cache)
            if len(chunk) > 1:
                cache.batch_repeat_interleave(len(chunk))
            with self._capture(hidden) as states:
                logits, _ = self._call(ids, cache, last=hidden)  # the lens reads states, not logits
            yield start, logits, (dict(states) if hidden else None)

    @contextlib.contextmanager
    def _capture(self, on: bool):
        """Record each block's input (layer 0) and outputs (layers 1..L, before the final norm)."""
        states: dict[int, Any] = {}
        if not on:
            yield states
            return
        _, blocks = hooks.layer_list(self.hf_model, self.n_layers)
        handles = hooks.hook_states(blocks, range(1, self.n_layers + 1), states)
        try:
            yield states
        finally:
            for h in handles:
                h.remove()

    def _final_norm(self):
        base = self.hf_model.base_model
        for name in _NORMS:
            module = getattr(base, name, None)
            if module is not None:
                return module
        raise InputError(f"cannot find the final norm of {type(self.hf_model).__name__} (looked for "
                         f"{', '.join(_NORMS)}); the logit lens does not support this architecture")

    def _unembed(self, states, last: bool = False):
        """Logits through the lens of hidden states ``(batch, pieces, dim)``: the final norm,
        then the head (``last``: at the last piece only, as the model computes its own logits)."""
        with self._torch.inference_mode():
            normed = self._final_norm()(states)
            return self.hf_model.get_output_embeddings()(normed[:, -1:] if last else normed)

    # -- predictions -------------------------------------------------------------------------
    def predict(self, text: str, k: int = 10, *, max_expansions: int = 64) -> Predictions:
        """The ``k`` most probable words at the text's ``[MASK]`` (masked LM) or after the
        text (causal LM), best first."""
        k = check_int("k", k, low=1, high=bounds.MAX_PREDICTIONS)
        if not isinstance(text, str) or not text.strip():
            raise InputError("give a non-empty text to predict in")
        if self.kind == "masked":
            return self._fill_mask(text, k)
        return self._next_word(text, k, max_expansions)

    def _fill_mask(self, text: str, k: int) -> Predictions:
        torch, tok = self._torch, self.tokenizer
        mark = MASK if MASK in text else tok.mask_token
        count = text.count(mark) + (text.count(tok.mask_token) if mark != tok.mask_token else 0)
        if count != 1:
            raise InputError(f"a masked LM fills exactly one {MASK} (or {tok.mask_token}); {text!r} holds "
                             f"{count}: write the text with one {MASK} where the word goes")
        start = text.index(mark)
        filled = text.replace(mark, tok.mask_token)
        ids = self._check_pieces(self._ids(filled))
        where = [i for i, t in enumerate(ids) if t == tok.mask_token_id]
        with torch.inference_mode():
            logits = self.hf_model(input_ids=torch.tensor([ids]).to(self.device)).logits
        probs = torch.softmax(logits[0, where[0]].double(), -1).cpu().numpy()  # (vocab,)
        tail = text[:start].rstrip()
        words = self._starting_words(tail)
        tokens = tok.convert_ids_to_tokens(list(range(len(words))))
        best = first_piece_words(probs[: len(words)], words, tokens, k)
        return Predictions(self.name, text, len(tokenize(text[:start])), "masked", MASKED_RULE, best)

    def _next_word(self, text: str, k: int, max_expansions: int) -> Predictions:
        tail = text.rstrip()
        texts = self.piece_texts
        context = self._check_pieces(self._ids(tail))
        if self._on_onnx(len(context) * 32):  # a search step runs up to tens of paths, each from the start

            def probabilities(paths):
                return self._onnx.next_pieces(
                    [context + list(p) for p in paths], self._pad_id())[:, : len(texts)]  # (paths, vocab)
        else:
            probabilities = self._torch_steps(tail, texts)

        def canonical(added: str) -> tuple[int, ...]:
            return tuple(self._tok(added, add_special_tokens=False)["input_ids"])

        found = next_words(probabilities, texts, canonical, local_tail(tail), k=k,
                           max_expansions=max_expansions)
        return Predictions(self.name, text, len(tokenize(tail)), "causal", CAUSAL_RULE, found.words,
                           found.exact)

    def _torch_steps(self, tail: str, texts: list[str]):
        """The torch engine's next-piece probabilities ``paths -> (paths, vocab)`` after ``tail``."""
        torch = self._torch
        ctx = self._run_context(self._check_pieces(self._ids(tail)))
        first = torch.softmax(ctx.logits.double(), -1).cpu().numpy()[: len(texts)]  # (vocab,)

        def step(paths):
            """Next-piece probabilities after the context and each path: the context is run once,
            each path from its cache."""
            out = np.empty((len(paths), len(texts)))
            out[[b for b, p in enumerate(paths) if not p]] = first
            grown = [b for b, p in enumerate(paths) if p]
            for start, logits, _ in self._continue(ctx, [list(paths[b]) for b in grown]):
                for j, row in enumerate(logits):
                    b = grown[start + j]
                    out[b] = torch.softmax(row[len(paths[b]) - 1].double(), -1).cpu().numpy()[: len(texts)]
            return out  # (paths, vocab)

        return step
