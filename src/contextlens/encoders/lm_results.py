"""What :class:`~contextlens.encoders.lm.LanguageModel` returns: the best words at a position
(:class:`Predictions`), the logit lens layer by layer (:class:`LensResult` of :class:`LensLayer`,
with :class:`TrackedWord`), the rules that turn pieces into words, and the lens's refusal of a
model that is not causal (:func:`not_causal`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import ask
from .models import NoLMHeadError
from .wordprob import WordProbability

__all__ = ["Predictions", "TrackedWord", "LensLayer", "LensResult", "not_causal", "CAUSAL_RULE",
           "MASKED_RULE", "LENS_RULE"]


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
                "rule": self.rule, "exact": self.exact,
                "predictions": [p.as_dict() for p in self.predictions]}


@dataclass(frozen=True)
class TrackedWord:
    """A chosen next word under the lens at one layer: its probability (the causal rule,
    through the lens) and the rank of its first piece among all pieces (1 = the top)."""

    word: str
    pieces: tuple[str, ...]
    probability: float
    rank: int

    def as_dict(self) -> dict[str, Any]:
        return {"word": self.word, "pieces": list(self.pieces), "probability": self.probability,
                "rank": self.rank}


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
    lens: str = "logit"  # or "tuned": each layer translated first (encoders.tuned_lens)

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "text": self.text, "position": self.position, "word": self.word,
                "rule": self.rule, "lens": self.lens, "layers": [layer.as_dict() for layer in self.layers]}


CAUSAL_RULE = ("next word: product of the probabilities along its pieces, times the probability "
               "that the next piece ends the word")
MASKED_RULE = "fill-mask: a word's probability is its first piece's (pieces giving one word summed)"
LENS_RULE = ("top: first piece of each next word (pieces giving one word summed); tracked: product "
             "along its pieces times the probability that the word ends, each read through the lens")


def not_causal(name: str, model_type: str) -> NoLMHeadError:
    """The logit lens's refusal of a model that reads both sides of a word, in one sentence
    that says why and what to choose (each front end words the choice: :func:`~contextlens.errors.ask`).

    >>> str(not_causal("minilm", "bert"))
    "the logit lens reads a causal language model's next-word predictions, and minilm (bert) reads the words \
on both sides of each word, so it predicts no next word: pass model='smollm2'"
    """
    return NoLMHeadError(f"the logit lens reads a causal language model's next-word predictions, and {name} "
                         f"({model_type}) reads the words on both sides of each word, so it predicts no next "
                         f"word: {ask('model', 'smollm2')}")
