"""Word analogies in the Google ``questions-words.txt`` format (Mikolov et al. 2013).

``: section`` header lines, then ``a b c d`` lines ("a is to b as c is to d").

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "q.txt"
>>> _ = p.write_text(": capital\\nAthens Greece Baghdad Iraq\\n: family\\nboy girl brother sister\\n")
>>> [(s.name, len(s.questions)) for s in load_analogies(p)]
[('capital', 1), ('family', 1)]
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import FileFormatError
from ._io import numbered
from .registry import DatasetMissingError, how_to_get

__all__ = ["AnalogySection", "load_analogies", "ANALOGY_FILES"]

ANALOGY_FILES: dict[str, str] = {"google": "analogy/questions-words.txt"}


@dataclass(frozen=True)
class AnalogySection:
    """A named section of questions ``(a, b, c, d)``: a is to b as c is to d."""

    name: str
    questions: tuple[tuple[str, str, str, str], ...]


def load_analogies(path: str | Path) -> list[AnalogySection]:
    """The sections of an analogy file, in file order, words as written (gensim
    upper-cases them when it evaluates; this loader does not).

    A question before the first ``:`` header, a line that is not four words, or an empty
    section raises FileFormatError with the line number.
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetMissingError(f"analogy file {path} does not exist; {how_to_get('analogy')}")
    sections: list[tuple[str, int, list]] = []
    for line_no, line in numbered(path, what="analogy questions"):
        if line.startswith(":"):
            name = line[1:].strip()
            if not name:
                raise FileFormatError(path, line_no, "a section header needs a name after ':'")
            sections.append((name, line_no, []))
            continue
        words = line.split()
        if len(words) != 4:
            raise FileFormatError(path, line_no,
                                  f"expected a question of 4 words 'a b c d', got {len(words)}")
        if not sections:
            raise FileFormatError(path, line_no, "a question before the first ': section' header")
        sections[-1][2].append(tuple(words))
    for name, line_no, questions in sections:
        if not questions:
            raise FileFormatError(path, line_no, f"section {name!r} has no question")
    return [AnalogySection(name, tuple(questions)) for name, _, questions in sections]
