"""Word-similarity sets in their published formats, and gensim-readable copies of them.

:func:`load_similarity` reads, by looking at the file:

- ``w1 w2 score`` lines, tab- or space-separated (Faruqui's ``EN-*.txt``, MEN natural form);
- WordSim-353's ``combined.tab`` / ``.csv`` / ``set1`` / ``set2`` (a header line, the mean
  in the third column, the individual ratings after it);
- MEN lemma form (``berry-n seed-n 37.000000``: the ``-n``/``-v``/``-j`` suffixes are
  removed when every word of the file has one);
- SimLex-999 (tab-separated, header, the score in the ``SimLex999`` column);
- SimVerb-3500 (``w1 w2 V score relation``) and RW (``w1 w2 mean r1 ... r10``).

``#`` lines and blank lines are skipped.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "men.dev"
>>> _ = p.write_text("berry-n seed-n 37.000000\\nrun-v jog-v 45.0\\n")
>>> load_similarity(p)[0]
SimilarityPair(word1='berry', word2='seed', score=37.0)
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import EmptyInputError, FileFormatError, TextDecodingError
from ..files import atomic_output
from ._io import numbered, parse_float
from .registry import DatasetMissingError, how_to_get

__all__ = ["SimilarityPair", "load_similarity", "SIMILARITY_FILES", "available_similarity",
           "gensim_pairs_file"]

SIMILARITY_FILES: dict[str, str] = {
    "ws353": "similarity/wordsim353/combined.tab",
    "ws353-all": "similarity/faruqui/EN-WS-353-ALL.txt",
    "ws353-sim": "similarity/faruqui/EN-WS-353-SIM.txt",
    "ws353-rel": "similarity/faruqui/EN-WS-353-REL.txt",
    "men-dev": "similarity/men/MEN_dataset_lemma_form.dev",
    "men-test": "similarity/men/MEN_dataset_lemma_form.test",
    "men-full": "similarity/men/MEN_dataset_natural_form_full",
    "men-3k": "similarity/faruqui/EN-MEN-TR-3k.txt",
    "rg65": "similarity/faruqui/EN-RG-65.txt",
    "mc30": "similarity/faruqui/EN-MC-30.txt",
    "mturk287": "similarity/faruqui/EN-MTurk-287.txt",
    "mturk771": "similarity/faruqui/EN-MTurk-771.txt",
    "yp130": "similarity/faruqui/EN-YP-130.txt",
    "simlex999": "similarity/simlex999/SimLex-999.txt",
    "simverb3500": "similarity/simverb3500/SimVerb-3500.txt",
    "rw": "similarity/rw/rw.txt",
    "rw-faruqui": "similarity/faruqui/EN-RW-STANFORD.txt",
}
_MEN_SUFFIX = re.compile(r".-[nvja]$")


@dataclass(frozen=True)
class SimilarityPair:
    """Two words and their human similarity score (on the dataset's own scale)."""

    word1: str
    word2: str
    score: float


def available_similarity(root: str | Path) -> dict[str, Path]:
    """``name → path`` of the :data:`SIMILARITY_FILES` present under ``root``."""
    root = Path(root)
    return {name: root / rel for name, rel in SIMILARITY_FILES.items() if (root / rel).is_file()}


def _fields(line: str, delimiter: str | None) -> list[str]:
    parts = line.split() if delimiter is None else [f.strip() for f in line.split(delimiter)]
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _layout(row: list[str]) -> tuple[bool, int]:
    """``(first row is a header, score column)`` from the first row's fields."""
    if len(row) >= 3 and parse_float(row[2]) is not None:
        return False, 2
    if len(row) >= 4 and parse_float(row[3]) is not None and len(row[2]) <= 2:  # SimVerb: w1 w2 V score
        return False, 3
    names = [n.lower() for n in row]
    if "simlex999" in names:
        return True, names.index("simlex999")
    for i, n in enumerate(names[2:], 2):
        if "mean" in n or "score" in n:
            return True, i
    return True, 2


def load_similarity(path: str | Path) -> list[SimilarityPair]:
    """The pairs of a word-similarity file, in file order (see the module doc for formats).

    A line without two words and a number in the score column raises FileFormatError
    with its line number; an empty file raises EmptyInputError.
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetMissingError(f"similarity file {path} does not exist; {how_to_get('similarity')}")
    rows = numbered(path, what="word pairs", skip_comments=True)
    first = rows[0][1]
    delimiter = "\t" if "\t" in first else "," if path.suffix == ".csv" or first.count(",") >= 2 else None
    header, col = _layout(_fields(first, delimiter))
    pairs = []
    for line_no, line in rows[1:] if header else rows:
        f = _fields(line, delimiter)
        score = parse_float(f[col]) if len(f) > col else None
        if len(f) <= col or score is None or not f[0] or not f[1]:
            raise FileFormatError(path, line_no,
                                  f"expected word1, word2 and a numeric score in column {col + 1} "
                                  f"({'tab' if delimiter == chr(9) else delimiter or 'space'}-"
                                  f"separated), got {line.strip()!r}")
        pairs.append(SimilarityPair(f[0], f[1], score))
    if not pairs:
        raise EmptyInputError(f"{path} holds a header but no word pair")
    if all(_MEN_SUFFIX.search(p.word1) and _MEN_SUFFIX.search(p.word2) for p in pairs):
        pairs = [SimilarityPair(p.word1[:-2], p.word2[:-2], p.score) for p in pairs]
    return pairs


def _gensim_reads(path: Path) -> list[tuple[str, str, float]]:
    """The pairs gensim's ``evaluate_word_pairs`` (default ``delimiter='\\t'``) reads from ``path``."""
    out = []
    try:
        with open(path, encoding="utf8") as fin:
            for line in fin:
                if not line or line.startswith("#"):
                    continue
                try:
                    a, b, sim = line.split("\t")
                    out.append((a, b, float(sim)))
                except ValueError:
                    continue
    except UnicodeDecodeError as e:
        raise TextDecodingError(path, e.start, e.reason) from None
    return out


def gensim_pairs_file(path: str | Path, out_dir: str | Path) -> Path:
    """A file with exactly the pairs of :func:`load_similarity` that gensim's
    ``KeyedVectors.evaluate_word_pairs`` reads as they are (``w1<TAB>w2<TAB>score`` lines,
    ``#`` comments).

    ``path`` itself when gensim already reads the same pairs from it (Faruqui's tab files,
    WordSim-353 ``combined.tab`` whose header gensim skips); otherwise a converted copy in
    ``out_dir`` (MEN without POS suffixes, space-separated files, SimLex-999's score
    column...), written atomically, named after the file and a hash of its full path.
    """
    path = Path(path)
    pairs = load_similarity(path)
    if _gensim_reads(path) == [(p.word1, p.word2, p.score) for p in pairs]:
        return path
    tag = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:8]
    target = Path(out_dir) / f"{path.name}.{tag}.tsv"
    with atomic_output(target) as tmp, open(tmp, "w", encoding="utf8", newline="\n") as out:
        out.write(f"# {len(pairs)} word pairs from {path}, converted by contextlens\n"
                  "# word1\tword2\tscore\n")
        for p in pairs:
            out.write(f"{p.word1}\t{p.word2}\t{p.score!r}\n")
    return target
