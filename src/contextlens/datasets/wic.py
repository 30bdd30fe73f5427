"""WiC (Pilehvar & Camacho-Collados 2019) and WiC-TSV (Breit et al. 2021), official layouts.

WiC: ``wic/{split}/{split}.data.txt`` lines ``word<TAB>POS<TAB>i1-i2<TAB>sentence1<TAB>sentence2``
(sentences tokenised, space-separated; ``i1``/``i2`` the target's token index in each) and
``{split}.gold.txt`` lines ``T``/``F``, one per data line.

>>> import tempfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> (root / "wic/dev").mkdir(parents=True)
>>> _ = (root / "wic/dev/dev.data.txt").write_text("bank\\tN\\t1-0\\tthe bank .\\tbank of it\\n")
>>> _ = (root / "wic/dev/dev.gold.txt").write_text("F\\n")
>>> item = load_wic(root, "dev")[0]
>>> item.tokens1[item.index1], item.tokens2[item.index2], item.label
('bank', 'bank', False)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import FileFormatError, check_choice
from ._io import numbered, read_lines
from .registry import require

__all__ = ["WicItem", "load_wic", "WicTsvItem", "load_wic_tsv", "WIC_SPLITS"]

WIC_SPLITS = ("train", "dev", "test")
_LABELS = {"T": True, "F": False}


@dataclass(frozen=True)
class WicItem:
    """One WiC pair: ``tokens1[index1]`` and ``tokens2[index2]`` are the target word;
    ``label`` says whether both uses have the same sense (None without a gold file)."""

    word: str
    pos: str
    index1: int
    index2: int
    tokens1: tuple[str, ...]
    tokens2: tuple[str, ...]
    label: bool | None


def _labels(path: Path, n_items: int, data_path: Path) -> list[bool]:
    rows = numbered(path, what="gold labels")
    if len(rows) != n_items:
        raise FileFormatError(path, None, f"{len(rows)} gold labels for {n_items} items in {data_path}; "
                                          "the two files must have one line per item")
    out = []
    for line_no, line in rows:
        label = _LABELS.get(line.strip())
        if label is None:
            raise FileFormatError(path, line_no, f"expected a gold label T or F, got {line.strip()!r}")
        out.append(label)
    return out


def _index(path: Path, line_no: int, value: str, tokens: tuple[str, ...], which: int) -> int:
    if not value.isdigit() or int(value) >= len(tokens):
        raise FileFormatError(path, line_no, f"target index {value!r} of sentence {which} is not a token "
                                             f"position (the sentence has {len(tokens)} tokens)")
    return int(value)


def load_wic(root: str | Path, split: str) -> list[WicItem]:
    """The items of WiC split ``train``, ``dev`` or ``test`` under data directory ``root``.

    The gold file may be absent for ``test`` (the labels are then None); for ``train`` and
    ``dev`` it is required. Errors: a missing file → DatasetMissingError (where it goes);
    a malformed line or an index outside its sentence → FileFormatError (file, line); a
    gold file of another length → FileFormatError naming both counts; an empty file →
    EmptyInputError.
    """
    root = Path(root)
    check_choice("WiC split", split, WIC_SPLITS)
    rel = f"wic/{split}/{split}"
    (data_path,) = require(root, "wic", f"{rel}.data.txt")
    items = []
    for line_no, line in numbered(data_path, what="WiC items"):
        fields = line.split("\t")
        if len(fields) != 5:
            raise FileFormatError(data_path, line_no, f"expected 5 tab-separated fields (word, POS, i1-i2, "
                                                      f"sentence1, sentence2), got {len(fields)}")
        word, pos, idx, s1, s2 = fields
        tokens1, tokens2 = tuple(s1.split()), tuple(s2.split())
        parts = idx.split("-")
        if len(parts) != 2:
            raise FileFormatError(data_path, line_no,
                                  f"expected the indices as i1-i2 (e.g. 2-6), got {idx!r}")
        i1 = _index(data_path, line_no, parts[0], tokens1, 1)
        i2 = _index(data_path, line_no, parts[1], tokens2, 2)
        items.append(WicItem(word, pos, i1, i2, tokens1, tokens2, None))
    gold_path = root / f"{rel}.gold.txt"
    if split != "test" or gold_path.exists():
        require(root, "wic", f"{rel}.gold.txt")
        labels = _labels(gold_path, len(items), data_path)
        items = [replace(it, label=label) for it, label in zip(items, labels)]
    return items


@dataclass(frozen=True)
class WicTsvItem:
    """One WiC-TSV item: does ``tokens[index]`` have the sense given by ``definition``
    (and ``hypernyms``)? ``label`` is None for the unlabelled test split."""

    word: str
    index: int
    tokens: tuple[str, ...]
    definition: str
    hypernyms: tuple[str, ...]
    label: bool | None


_TSV_DIRS = {"train": "Training", "dev": "Development", "test": "Test"}


def load_wic_tsv(root: str | Path, split: str) -> list[WicTsvItem]:
    """WiC-TSV split ``train``, ``dev`` or ``test`` from ``wic_tsv/en/<Split>/``.

    ``<split>_examples.txt`` lines are ``word<TAB>index<TAB>context`` (context tokenised,
    space-separated); ``_definitions.txt`` and ``_hypernyms.txt`` (tab-separated, multiword
    hypernyms joined by ``_``) and ``_labels.txt`` (``T``/``F``; absent for test) have one
    line per example.
    """
    root = Path(root)
    check_choice("WiC-TSV split", split, WIC_SPLITS)
    base = f"wic_tsv/en/{_TSV_DIRS[split]}/{split}"
    ex_path, def_path, hyp_path = require(root, "wic_tsv", *(f"{base}_{k}.txt" for k in
                                                             ("examples", "definitions", "hypernyms")))
    examples = numbered(ex_path, what="WiC-TSV examples")
    n = len(examples)
    definitions, hypernyms = read_lines(def_path), read_lines(hyp_path)
    for path, lines in ((def_path, definitions), (hyp_path, hypernyms)):
        if len(lines) != n:
            raise FileFormatError(path, None, f"{len(lines)} lines for {n} examples in {ex_path}; "
                                              "the files must have one line per example")
    labels: list[bool | None] = [None] * n
    label_path = root / f"{base}_labels.txt"
    if split != "test" or label_path.exists():
        require(root, "wic_tsv", f"{base}_labels.txt")
        labels = list(_labels(label_path, n, ex_path))
    items = []
    for k, (line_no, line) in enumerate(examples):
        fields = line.split("\t")
        if len(fields) != 3:
            raise FileFormatError(ex_path, line_no,
                                  f"expected 3 tab-separated fields (word, index, context), "
                                  f"got {len(fields)}")
        tokens = tuple(fields[2].split())
        index = _index(ex_path, line_no, fields[1], tokens, 1)
        hyp = tuple(h for h in hypernyms[k].split("\t") if h)
        items.append(WicTsvItem(fields[0], index, tokens, definitions[k].strip(), hyp, labels[k]))
    return items
