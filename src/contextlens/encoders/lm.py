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
import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError, ask, check_choice, check_int
from ..progress import step
from ..text import tokenize
from . import engines, models, standalone
from .wordprob import (
    CHECK,
    CONTINUE,
    WordProbability,
    ends_word,
    first_piece_words,
    next_words,
    piece_classes,
)

__all__ = ["LanguageModel", "Predictions", "LensLayer", "LensResult", "TrackedWord", "MASK", "NoLMHeadError",
           "not_causal"]

log = logging.getLogger(__name__)
NoLMHeadError = models.NoLMHeadError
MASK = "[MASK]"  # written in a text for a masked LM; replaced by the model's own mask token
_NORMS = ("norm", "ln_f", "final_layer_norm", "final_layernorm", "norm_f")  # a causal LM's final norm


@dataclass(frozen=True)
class Predictions:
    """The best words at a position. ``position``: the word index predicted (the mask's,
    or the number of words before the next one); ``rule``: how pieces became words."""

    model: str
    text: str
    position: int
    kind: str  # "masked" | "causal"
    rule: str
    predictions: list[WordProbability]
    exact: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "text": self.text, "position": self.position, "kind": self.kind,
                "rule": self.rule, "exact": self.exact, "predictions": [p.as_dict() for p in self.predictions]}


@dataclass(frozen=True)
class TrackedWord:
    """A chosen next word under the lens at one layer: its probability (the causal rule,
    through the lens) and the rank of its first piece among all pieces (1 = the top)."""

    word: str
    pieces: tuple[str, ...]
    probability: float
    rank: int

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "pieces": list(self.pieces), "probability": self.probability, "rank": self.rank}


@dataclass(frozen=True)
class LensLayer:
    """One layer under the logit lens: its best next words (first-piece rule) and the tracked words."""

    layer: int
    layer_name: str
    top: list[WordProbability]
    tracked: list[TrackedWord] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"layer": self.layer, "layer_name": self.layer_name, "top": [w.as_dict() for w in self.top],
                "tracked": [t.as_dict() for t in self.tracked]}


@dataclass(frozen=True)
class LensResult:
    """The logit lens after word ``position`` (``word``) of ``text``, layer 0 (embedding
    output) to the last; ``rule`` says how pieces became words."""

    model: str
    text: str
    position: int
    word: str
    rule: str
    layers: list[LensLayer]

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "text": self.text, "position": self.position, "word": self.word,
                "rule": self.rule, "layers": [layer.as_dict() for layer in self.layers]}


CAUSAL_RULE = ("next word: product of the probabilities along its pieces, times the probability "
               "that the next piece ends the word")
MASKED_RULE = "fill-mask: a word's probability is its first piece's (pieces giving one word summed)"
LENS_RULE = ("top: first piece of each next word (pieces giving one word summed); tracked: product "
             "along its pieces times the probability that the word ends, each read through the lens")


def not_causal(name: str, model_type: str) -> NoLMHeadError:
    """The logit lens's refusal of a model that reads both sides of a word, in one sentence
    that says why and what to choose (each front end words the choice: :func:`~contextlens.errors.ask`).

    >>> str(not_causal("minilm", "bert"))
    "the logit lens reads a causal language model's next-word predictions, and minilm (bert) reads the words on \
both sides of each word, so it predicts no next word: pass model='smollm2'"
    """
    return NoLMHeadError(f"the logit lens reads a causal language model's next-word predictions, and {name} "
                         f"({model_type}) reads the words on both sides of each word, so it predicts no next word: "
                         f"{ask('model', 'smollm2')}")


class LanguageModel:
    """A transformer with its language-model head.

    Parameters
    ----------
    model : a packaged model (``smollm2``), a local transformers directory or a Hugging
        Face id; a causal config loads ``AutoModelForCausalLM``, any other
        ``AutoModelForMaskedLM``.
    device : a torch device; threads : CPU threads (default: all cores).
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
        self._onnx = self._open_onnx(kind) if use_onnx else None  # (runner, head, stand-alone side)
        if self._onnx is None:
            _, transformers = models.require_hf("predictions")
            config = transformers.AutoConfig.from_pretrained(self.path)
            self.kind = "causal" if models.is_causal(config) else "masked"
            if kind == "causal" and self.kind != "causal":  # said before the weights load
                raise not_causal(self.name, config.model_type)
            self._tok = self._torch_side()[1]
            self.n_layers = int(self.hf_model.config.num_hidden_layers)
            if use_onnx and self.kind == "causal":
                self._onnx = self._prepare_onnx()
        if self._onnx is not None:
            side = self._onnx[2]
            self.kind, self._tok, self.n_layers = "causal", side.tokenizer, side.facts.n_layers
        self._texts: list[str] | None = None
        self._words: list[str | None] | None = None

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
            self._hf = (model, tokenizer)
        return self._hf

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

    def _open_onnx(self, kind: str | None = None):
        """``(runner, head, stand-alone side)`` when the export and the head of this causal
        LM are cached (found without loading it), else None; a ``kind="causal"`` request
        for a model its export shows is not causal is refused here, without torch."""
        from .onnx_engine import ExportSettings

        found = standalone.find(self.path, dataclasses.asdict(ExportSettings()))
        side = standalone.open_folder(found) if found is not None else None
        if side is not None and kind == "causal" and not side.facts.causal:
            raise not_causal(self.name, side.facts.model_type)
        head_dir = standalone.head_folder(self.path)
        usable = side is not None and side.facts.causal and head_dir.is_dir()
        head = standalone.open_head(head_dir) if usable else None
        if head is None:
            return None
        runner = self._runner()
        runner.session(False)
        return runner, head, side

    def _prepare_onnx(self):
        """Export the loaded causal LM and keep its head, so the next run needs no torch;
        None (it stays on torch) when its head or export cannot stand alone."""
        from ..disk_cache import DiskCache, write_marker
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
                return self._open_onnx("causal")
        except (OnnxExportError, OSError, InputError) as e:
            log.warning("%s; it runs on torch", e)
            return None

    # -- pieces as text ----------------------------------------------------------------------
    @property
    def piece_texts(self) -> list[str]:
        """The text each piece adds to a text (``""`` for special tokens); WordPiece
        continuation pieces (``##s``) add their text without a space, others a space first."""
        if self._texts is None:
            tok = self._tok
            size = len(tok)
            special = set(tok.all_special_ids)
            prefix = getattr(tok.backend_tokenizer.model, "continuing_subword_prefix", None)
            if prefix:  # WordPiece: spaces are not pieces
                tokens = tok.convert_ids_to_tokens(list(range(size)))
                texts = [t[len(prefix):] if t.startswith(prefix) else " " + t for t in tokens]
            else:  # BPE / Unigram: decode each piece after an anchor piece, keep what it adds
                anchor = tok("a", add_special_tokens=False)["input_ids"][:1]
                base = tok.decode(anchor, clean_up_tokenization_spaces=False)
                pairs = tok.batch_decode([anchor + [i] for i in range(size)], clean_up_tokenization_spaces=False)
                texts = [p[len(base):] if p.startswith(base) else p for p in pairs]
            self._texts = ["" if i in special else t for i, t in enumerate(texts)]
        return self._texts

    def _piece_words(self) -> list[str | None]:
        """The one word each piece's text holds (None: a continuation, white space, special, or several words)."""
        if self._words is None:
            prefix = getattr(self._tok.backend_tokenizer.model, "continuing_subword_prefix", None)
            tokens = self._tok.convert_ids_to_tokens(list(range(len(self.piece_texts))))
            out: list[str | None] = []
            for t, token in zip(self.piece_texts, tokens):
                words = tokenize(t)
                whole = len(words) == 1 and not (prefix and token.startswith(prefix))
                out.append(words[0].text if whole else None)
            self._words = out
        return self._words

    def _starting_words(self, tail: str) -> list[str | None]:
        """Per piece, the word it starts right after ``tail`` (None if it glues onto tail's last word)."""
        words = list(self._piece_words())
        if not tail.strip():
            return words
        texts = self.piece_texts
        classes = piece_classes(texts)
        last = tail[-1]
        for i in np.flatnonzero(classes != 0):
            if words[i] is None:
                continue
            if classes[i] == CONTINUE and (last.isalnum() or last == "_"):
                words[i] = None
            elif classes[i] == CHECK and len(tokenize(tail + texts[i])) != len(tokenize(tail)) + 1:
                words[i] = None
        return words

    # -- model calls -------------------------------------------------------------------------
    def _ids(self, text: str) -> list[int]:
        return list(self._tok(text, add_special_tokens=True)["input_ids"])

    def _forward(self, sequences: list[list[int]], hidden: bool = False):
        """Run padded sequences: ``(logits (batch, T, vocab), hidden states per layer or None)``."""
        import torch

        width = max(len(s) for s in sequences)
        pad = self._tok.pad_token_id if self._tok.pad_token_id is not None else 0
        ids = torch.full((len(sequences), width), pad, dtype=torch.long)
        mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for b, s in enumerate(sequences):
            ids[b, : len(s)] = torch.tensor(s)
            mask[b, : len(s)] = 1
        with torch.inference_mode(), self._capture(hidden) as states:
            out = self.hf_model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device))
        return out.logits, (states if hidden else None)

    @contextlib.contextmanager
    def _capture(self, on: bool):
        """Record each block's input (layer 0) and outputs (layers 1..L, before the final norm)."""
        states: dict[int, Any] = {}
        if not on:
            yield states
            return
        _, blocks = models.layer_list(self.hf_model, self.n_layers)
        handles = models.hook_states(blocks, range(1, self.n_layers + 1), states)
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

    # -- predictions -------------------------------------------------------------------------
    def predict(self, text: str, k: int = 10, *, max_expansions: int = 64) -> Predictions:
        """The ``k`` most probable words at the text's ``[MASK]`` (masked LM) or after the
        text (causal LM), best first."""
        k = check_int("k", k, low=1, high=1000)
        if not isinstance(text, str) or not text.strip():
            raise InputError("give a non-empty text to predict in")
        if self.kind == "masked":
            return self._fill_mask(text, k)
        return self._next_word(text, k, max_expansions)

    def _fill_mask(self, text: str, k: int) -> Predictions:
        import torch

        tok = self._tok
        mark = MASK if MASK in text else tok.mask_token
        count = text.count(mark) + (text.count(tok.mask_token) if mark != tok.mask_token else 0)
        if count != 1:
            raise InputError(f"a masked LM fills exactly one {MASK} (or {tok.mask_token}); {text!r} holds "
                             f"{count}: write the text with one {MASK} where the word goes")
        start = text.index(mark)
        filled = text.replace(mark, tok.mask_token)
        ids = self._ids(filled)
        where = [i for i, t in enumerate(ids) if t == tok.mask_token_id]
        logits, _ = self._forward([ids])
        probs = torch.softmax(logits[0, where[0]].double(), -1).cpu().numpy()  # (vocab,)
        tail = text[:start].rstrip()
        words = self._starting_words(tail)
        tokens = tok.convert_ids_to_tokens(list(range(len(words))))
        best = first_piece_words(probs[: len(words)], words, tokens, k)
        return Predictions(self.name, text, len(tokenize(text[:start])), "masked", MASKED_RULE, best)

    def _next_word(self, text: str, k: int, max_expansions: int) -> Predictions:
        tail = text.rstrip()
        context = self._ids(tail)
        texts = self.piece_texts

        def probabilities(paths):
            sequences = [context + list(p) for p in paths]
            return self._next_probabilities(sequences)[:, : len(texts)]  # (paths, vocab)

        def canonical(added: str) -> tuple[int, ...]:
            return tuple(self._tok(added, add_special_tokens=False)["input_ids"])

        found = next_words(probabilities, texts, canonical, tail, k=k, max_expansions=max_expansions)
        return Predictions(self.name, text, len(tokenize(tail)), "causal", CAUSAL_RULE, found.words, found.exact)

    def _next_probabilities(self, sequences: list[list[int]]) -> np.ndarray:
        """``(len(sequences), vocab)`` float64: the next-piece distribution after each sequence."""
        last = np.array([len(s) - 1 for s in sequences])
        if self._onnx is not None:
            runner, head, _ = self._onnx
            hidden = runner.run(*standalone.pad_batch(sequences, self._pad_id())).hidden_states[-1]
            return _softmax(head.logits(hidden[np.arange(len(sequences)), last]))
        import torch

        logits, _ = self._forward(sequences)
        rows = logits[torch.arange(len(sequences)), torch.from_numpy(last)].double()
        return torch.softmax(rows, -1).cpu().numpy()

    def _pad_id(self) -> int:
        return self._tok.pad_token_id if self._tok.pad_token_id is not None else 0

    # -- the logit lens ----------------------------------------------------------------------
    def _require_causal(self) -> None:
        if self.kind != "causal":
            raise not_causal(self.name, self.hf_model.config.model_type)

    def _context(self, text: str, position: int | None) -> tuple[str, int, str]:
        words = tokenize(text)
        if not words:
            raise InputError(f"{text!r} has no words; give a text to read the lens after")
        if position is None:
            position = len(words) - 1
        position = check_int("position", position, low=-len(words), high=len(words) - 1,
                             hint=f"the text has {len(words)} words (0..{len(words) - 1}; -1 = the last)")
        position %= len(words)
        return text[: words[position].end], position, words[position].text

    def lens_probabilities(self, text: str, position: int | None = None) -> np.ndarray:
        """``(layers + 1, vocab)``: the next-piece distribution read from each layer (0 =
        embedding output) after word ``position`` of ``text`` (default: the last word)."""
        self._require_causal()
        context, _, _ = self._context(text, position)
        ids = self._ids(context)
        return self._lens([ids], [[len(ids) - 1]])[0][:, 0]

    def _lens(self, sequences: list[list[int]], positions: list[list[int]]) -> list[np.ndarray]:
        """Per sequence, ``(layers + 1, len(positions), vocab)`` float64 probabilities through
        the lens at its ``positions``; checks that the last layer gives the model's own
        distribution there."""
        if self._onnx is not None:  # the last state is already normed, as the model's logits read it
            runner, head, _ = self._onnx
            states = runner.run(*standalone.pad_batch(sequences, self._pad_id())).hidden_states
            size = len(self.piece_texts)
            last = self.n_layers
            return [_softmax(np.stack([head.logits(h[b, where] if k == last else head.normed(h[b, where]))
                                       for k, h in enumerate(states)]))[..., :size]
                    for b, where in enumerate(positions)]
        import torch

        logits, states = self._forward(sequences, hidden=True)
        norm, head = self._final_norm(), self.hf_model.get_output_embeddings()
        out = [[] for _ in sequences]
        with torch.inference_mode():
            for k in range(self.n_layers + 1):
                # the whole (batch, T) block, as the model computes its own logits: the last
                # layer then gives exactly the model's numbers
                lens = head(norm(states[k]))  # (batch, T, vocab)
                for b, where in enumerate(positions):
                    out[b].append(lens[b, where])
            last = [logits[b, where] for b, where in enumerate(positions)]
            if not all(torch.allclose(o[-1], x, atol=1e-4, rtol=1e-4) for o, x in zip(out, last)):
                raise InputError(f"{type(self.hf_model).__name__}'s head does more than final norm + "
                                 "unembedding (e.g. logit scaling); the logit lens does not support it")
            size = len(self.piece_texts)
            return [torch.softmax(torch.stack(o).double(), -1).cpu().numpy()[..., :size] for o in out]

    def lens(self, text: str, position: int | None = None, *, k: int = 5, track: Sequence[str] = ()) -> LensResult:
        """The logit lens after word ``position`` of ``text`` (default: the last word; the
        words after it are not read: the model is causal). Per layer: the ``k`` best next
        words and, for each word of ``track``, its probability and the rank of its first piece."""
        self._require_causal()
        k = check_int("k", k, low=1, high=1000)
        context, position, word = self._context(text, position)
        ids = self._ids(context)
        tracked = [self._tracked_pieces(context, w) for w in track]
        n = len(ids)
        probs = self._lens([ids] + [ids + p for _, p in tracked],
                           [[n - 1]] + [list(range(n - 1, n + len(p))) for _, p in tracked])
        texts, classes = self.piece_texts, piece_classes(self.piece_texts)
        words = self._starting_words(context)
        tokens = self._tok.convert_ids_to_tokens(list(range(len(texts))))
        layers = []
        for layer in range(self.n_layers + 1):
            here = probs[0][layer, 0]  # (vocab,)
            top = first_piece_words(here, words, tokens, k)
            rows = []
            for (added, pieces), p in zip(tracked, probs[1:]):
                along = [p[layer, j, piece] for j, piece in enumerate(pieces)]
                end = p[layer, len(pieces)][ends_word(context, added, texts, classes)].sum()
                rank = 1 + int((here > here[pieces[0]]).sum())
                rows.append(TrackedWord(added.strip(), tuple(texts[i] for i in pieces),
                                        float(np.prod(along) * end), rank))
            layers.append(LensLayer(layer, "embedding output" if layer == 0 else f"layer {layer}", top, rows))
        return LensResult(self.name, text, position, word, LENS_RULE, layers)

    def _tracked_pieces(self, context: str, word: str) -> tuple[str, list[int]]:
        """``(added text, piece ids)`` of ``word`` written after ``context`` (a space first
        unless it starts with a symbol)."""
        found = tokenize(word) if isinstance(word, str) else []
        if len(found) != 1 or found[0].text != word.strip():
            raise InputError(f"track one word at a time (a word of contextlens' tokenizer), got {word!r}")
        added = (" " if word.strip()[0].isalnum() else "") + word.strip()
        pieces = list(self._tok(added, add_special_tokens=False)["input_ids"])
        if self._ids(context + added)[: len(self._ids(context))] != self._ids(context):
            raise InputError(f"{word!r} changes how the text before it is cut into pieces; track another word")
        return added, pieces


def _softmax(logits: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, in float64.

    >>> _softmax(np.array([[0.0, np.log(3.0)]])).round(4).tolist()
    [[0.25, 0.75]]
    """
    x = np.asarray(logits, dtype=np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)
