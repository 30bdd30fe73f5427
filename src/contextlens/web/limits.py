"""Every bound of the lab's API, in one place.

Each field of a request has a bound here: the request schemas (:mod:`.schemas`) take their
caps from :data:`CAPS` (so the OpenAPI schema states them, and a value past one is a 422
naming the field and the limit before any work starts), and a server may lower the four
sizes it checks itself (``create_app(limits=Limits(max_sentences=8))``), never raise them
past the schema's. Text fields must also be real text: a lone surrogate (``"\\ud800"``,
valid JSON, not encodable as UTF-8) is a 422, not a 500 when the answer is written.

>>> Limits(max_sentences=8).max_sentences
8
>>> Limits(max_sentences=1000)
Traceback (most recent call last):
...
contextlens.errors.InputError: max_sentences must be a whole number from 1 to 64, got 1000; a server may lower the lab's limits, not raise them past its request schema
>>> utf8_text("bank\\ud800")
Traceback (most recent call last):
...
ValueError: the text has a lone surrogate (U+D800 at character 4), which is not text; send valid UTF-8
"""  # noqa: E501 (a doctest's expected output, printed whole)

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from ..errors import LimitError, check_int
from ..text import tokenize

__all__ = ["Limits", "LimitError", "CAPS", "utf8_text"]


@dataclass(frozen=True)
class Limits:
    """Per-request input limits; an error names the limit that was hit."""

    # sizes the server checks itself (it may lower them)
    max_chars: int = 1000  # characters per sentence
    max_sentences: int = 64  # sentences per request
    max_attention_words: int = 80  # words in a sentence whose attention is shown
    max_results: int = 50  # usages per index search
    # fixed by the request schema
    max_word_chars: int = 100  # a word, a probe, an encoder or model name
    max_probes: int = 20  # probe words per request
    max_neighbours: int = 50  # contextual neighbours per view
    max_layer: int = 100  # |layer|: no lab model has more layers
    max_head: int = 63  # the largest attention head index
    max_occurrence: int = 100  # which occurrence of a word (0-based)
    max_scale: float = 100.0  # |scale| of the attention scores (1/√d is 0.04..0.14)
    max_toy_words: int = 10  # neighbours of bank per toy sentence, moved toy vectors
    max_id_chars: int = 200  # a usage id of the index
    max_body_bytes: int = 2**20  # one request body

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name.startswith("max_") and f.type == "int":
                check_int(f.name, getattr(self, f.name), low=1, high=f.default,
                          hint="a server may lower the lab's limits, not raise them past its request schema")

    def as_dict(self) -> dict[str, int | float]:
        """Every limit by name (``/api/status`` reports them)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def check_sentences(self, sentences: Sequence[str]) -> None:
        if len(sentences) > self.max_sentences:
            raise LimitError(f"{len(sentences)} sentences given; the limit is {self.max_sentences} sentences "
                             "per request")
        for i, s in enumerate(sentences):
            if len(s) > self.max_chars:
                raise LimitError(
                    f"sentence {i} (numbered from 0) has {len(s)} characters; the limit is {self.max_chars} "
                    "characters per sentence"
                )

    def check_results(self, k: int) -> None:
        if k > self.max_results:
            raise LimitError(f"k = {k} usages asked; the limit is {self.max_results} usages per search (k <= "
                             f"{self.max_results})")

    def check_attention_sentence(self, sentence: str) -> None:
        """One sentence whose attention a request draws: its length, then its words."""
        self.check_sentences([sentence])
        self.check_attention(len(tokenize(sentence)))

    def check_attention(self, n_words: int) -> None:
        if n_words > self.max_attention_words:
            raise LimitError(
                f"the sentence has {n_words} words; the limit is {self.max_attention_words} words per "
                "sentence for attention"
            )


#: the caps the request schemas state
CAPS = Limits()


def utf8_text(text):
    """``text`` if it encodes as UTF-8 (no lone surrogate), else a ValueError saying where
    (run before pydantic's own string check, whose message says less; not a str: unchanged)."""
    if not isinstance(text, str):
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise ValueError(f"the text has a lone surrogate (U+{ord(text[err.start]):04X} at character "
                         f"{err.start}), which is not text; send valid UTF-8") from None
    return text
