"""CoarseWSD-20 (Loureiro et al. 2021): 20 ambiguous nouns, one folder per word.

``coarsewsd20/<word>/{split}.data.txt`` lines ``i<TAB>sentence`` (``i`` the target's
position in the tokenised, lower-cased sentence), ``{split}.gold.txt`` one class id per
line, and ``classes_map.txt`` a JSON object class id → sense name (``"0": "bank_bank"``).

>>> import tempfile, pathlib, json
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> d = root / "coarsewsd20/bank"
>>> d.mkdir(parents=True)
>>> _ = (d / "classes_map.txt").write_text(json.dumps({"0": "bank_bank", "1": "bank_bank_(geography)"}))
>>> _ = (d / "train.data.txt").write_text("1\\tthe bank of the river\\n")
>>> _ = (d / "train.gold.txt").write_text("1\\n")
>>> coarsewsd_words(root), load_coarsewsd(root, "bank", "train")[0].label
(['bank'], 'bank_bank_(geography)')
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..errors import FileFormatError, check_choice
from ._io import numbered, read_lines
from .registry import DatasetMissingError, how_to_get, require

__all__ = ["CoarseItem", "coarsewsd_words", "load_coarsewsd", "coarse_classes", "COARSE_SPLITS"]

COARSE_SPLITS = ("train", "test")


@dataclass(frozen=True)
class CoarseItem:
    """One sentence: ``tokens[index]`` is ``word``; ``label`` its sense name (None
    without a gold file)."""

    word: str
    index: int
    tokens: tuple[str, ...]
    label: str | None


def coarsewsd_words(root: str | Path) -> list[str]:
    """The words of CoarseWSD-20 present under ``root`` (folders holding a split), sorted."""
    base = Path(root) / "coarsewsd20"
    words = sorted(d.name for d in base.iterdir() if d.is_dir() and any(
        (d / f"{s}.data.txt").is_file() for s in COARSE_SPLITS)) if base.is_dir() else []
    if not words:
        raise DatasetMissingError(f"no CoarseWSD-20 word folder (<word>/train.data.txt) in {base}; "
                                  f"{how_to_get('coarsewsd20')}")
    return words


def coarse_classes(root: str | Path, word: str) -> dict[str, str]:
    """``class id → sense name`` of ``word`` from its ``classes_map.txt``."""
    (path,) = require(root, "coarsewsd20", f"coarsewsd20/{word}/classes_map.txt")
    try:
        classes = json.loads("\n".join(read_lines(path)))
    except json.JSONDecodeError as e:
        raise FileFormatError(path, e.lineno,
                              f"expected a JSON object class id → sense name: {e.msg}") from None
    if not isinstance(classes, dict) or not classes or not all(isinstance(v, str) for v in classes.values()):
        raise FileFormatError(path, None, 'expected a non-empty JSON object like {"0": "bank_bank", ...}')
    return {str(k): v for k, v in classes.items()}


def load_coarsewsd(root: str | Path, word: str, split: str) -> list[CoarseItem]:
    """The ``train`` or ``test`` sentences of ``word``, labelled with sense names.

    The gold file may be absent for ``test`` (labels None). A malformed line, an index
    outside its sentence or a class id missing from ``classes_map.txt`` raises
    FileFormatError with the line number; a gold file of another length names both counts.
    """
    root = Path(root)
    check_choice("CoarseWSD-20 word", word, coarsewsd_words(root))
    check_choice("CoarseWSD-20 split", split, COARSE_SPLITS)
    rel = f"coarsewsd20/{word}/{split}"
    (data_path,) = require(root, "coarsewsd20", f"{rel}.data.txt")
    items = []
    for line_no, line in numbered(data_path, what=f"CoarseWSD-20 {word} sentences"):
        fields = line.split("\t")
        if len(fields) != 2:
            raise FileFormatError(data_path, line_no,
                                  f"expected 'index<TAB>sentence', got {len(fields)} fields")
        tokens = tuple(fields[1].split())
        if not fields[0].isdigit() or int(fields[0]) >= len(tokens):
            raise FileFormatError(data_path, line_no, f"target index {fields[0]!r} is not a token position "
                                                      f"(the sentence has {len(tokens)} tokens)")
        items.append(CoarseItem(word, int(fields[0]), tokens, None))
    gold_path = root / f"{rel}.gold.txt"
    if split == "test" and not gold_path.exists():
        return items
    require(root, "coarsewsd20", f"{rel}.gold.txt")
    classes = coarse_classes(root, word)
    gold = numbered(gold_path, what="gold class ids")
    if len(gold) != len(items):
        raise FileFormatError(gold_path, None, f"{len(gold)} gold lines for {len(items)} sentences in "
                                               f"{data_path}; the two files must have one line per sentence")
    out = []
    for item, (line_no, line) in zip(items, gold):
        label = classes.get(line.strip())
        if label is None:
            raise FileFormatError(gold_path, line_no, f"class id {line.strip()!r} is not in classes_map.txt "
                                                      f"(ids: {', '.join(classes)})")
        out.append(CoarseItem(word, item.index, item.tokens, label))
    return out
