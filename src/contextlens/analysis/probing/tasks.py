"""The probing tasks: words of SemCor 3.0 with a label to read off their vectors.

**Rows** (every task). The tagged terms of SemCor as :func:`~contextlens.datasets.load_semcor`
reads them from the NAF archive (the rows of the derived ``semcor3.0_annotations.tsv``,
whose every term is one token: ``tok_start == tok_end``), keeping a term whose token holds
no ``_`` (a multiword expression) and is one word to contextlens's tokenizer
(:func:`contextlens.text.tokenize`): tokens like ``Dec.``, ``'s`` or ``U.S.`` are several
words, which no encoder gives one vector (142 are passed over on the way to the rows
below). Rows come in the order of the TSV: documents in name order, sentences by number,
tokens in order.
**Train** = the first :data:`TRAIN_ROWS` (30,000) rows of the documents ``brown1/*``,
**test** = the first :data:`TEST_ROWS` (10,000) of ``brown2/*``. A row's vector at a layer is
its word's vector in its sentence (:mod:`contextlens.encoders.tokenized`).

**Labels**:

- ``pos``: the term's part of speech, the universal tag (Petrov et al. 2012) of the TSV's
  ``pos`` column as the reader maps it (``NN``, ``NNP`` → NOUN; ``VB`` → VERB; ``JJ`` → ADJ;
  ``RB`` → ADV). The terms are SemCor's sense-tagged content words, so this is a 4-way task;
  a proper noun (``NNP``) is a NOUN.
- ``supersense``: the WordNet lexicographer file (``noun.artifact``) of the first sense key,
  from the key's ``lex_filenum`` field and WordNet's ``lexnames`` file (45 files).
- ``sense``: the first sense key, among the rows of *polysemous lemmas*: a lemma (with the
  part of speech of its keys, ``bank.NOUN``) whose rows show at least two sense keys in
  train and at least two in test. Each lemma gets its own probe; the score is the mean
  over lemmas (macro).

>>> supersense_of("bank%1:14:00::", ("adj.all", "adj.pert", "adv.all", "noun.Tops") + ("x",) * 10
...               + ("noun.group",))
'noun.group'
>>> lemma_of(ProbeRow("d", "d.s1", ("the", "banks"), 1, "bank", "NOUN", "bank%1:14:00::"))
'bank.NOUN'
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from ...errors import FileFormatError, InputError, check_choice, check_int
from ...text import tokenize

__all__ = ["PROBE_TASKS", "TRAIN_ROWS", "TEST_ROWS", "SPLITS", "ProbeRow", "semcor_rows", "read_lexnames",
           "supersense_of", "lemma_of", "task_labels", "polysemous_lemmas"]

log = logging.getLogger(__name__)
PROBE_TASKS = ("pos", "supersense", "sense")
TRAIN_ROWS, TEST_ROWS = 30_000, 10_000
SPLITS = {"train": "brown1/", "test": "brown2/"}  # split -> the prefix of its documents' names
_KEY_POS = {"1": "NOUN", "2": "VERB", "3": "ADJ", "4": "ADV", "5": "ADJ"}  # a sense key's ss_type


class ProbeRow(NamedTuple):
    """One probed word: ``tokens[index]`` of its sentence, with its labels' sources."""

    doc: str  # brown1/br-a01
    sentence: str  # brown1/br-a01.s1
    tokens: tuple[str, ...]
    index: int
    lemma: str
    pos: str  # universal tag
    key: str  # the first sense key

    @property
    def word(self) -> str:
        return self.tokens[self.index]


def _sentence_order(sentence_id: str) -> tuple[str, int]:
    """``brown1/br-a01.s12`` → ``('brown1/br-a01', 12)``: the TSV's order (documents by name,
    sentences by number)."""
    doc, _, number = sentence_id.rpartition(".s")
    return doc, int(number) if number.isdigit() else -1


def _is_one_word(token: str) -> bool:
    """A token without ``_`` that the tokenizer reads as exactly one word.

    >>> _is_one_word("bank"), _is_one_word("river_bank"), _is_one_word("Dec."), _is_one_word("well-known")
    (True, False, False, True)
    """
    return "_" not in token and len(tokenize(token)) == 1


def semcor_rows(sentences: Iterable, *, train: int = TRAIN_ROWS,
                test: int = TEST_ROWS) -> dict[str, list[ProbeRow]]:
    """``{"train": rows, "test": rows}`` from SemCor sentences (``WsdSentence`` objects,
    as :func:`~contextlens.datasets.load_semcor` yields them, in any order): the first
    ``train`` rows of the ``brown1`` documents and the first ``test`` of the ``brown2`` ones
    (see the module docstring)."""
    check_int("train rows", train, low=1, hint="rows of brown1 to train the probe on")
    check_int("test rows", test, low=1, hint="rows of brown2 to test the probe on")
    wanted = {split: [] for split in SPLITS}
    for s in sentences:
        for split, prefix in SPLITS.items():
            if s.id.startswith(prefix):
                wanted[split].append(s)
    out: dict[str, list[ProbeRow]] = {}
    for split, limit in (("train", train), ("test", test)):
        rows: list[ProbeRow] = []
        for s in sorted(wanted[split], key=lambda s: _sentence_order(s.id)):
            for inst in s.instances:
                if inst.keys and _is_one_word(s.tokens[inst.index]):
                    rows.append(ProbeRow(s.id.rpartition(".s")[0], s.id, s.tokens, inst.index, inst.lemma,
                                         s.pos[inst.index], inst.keys[0]))
            if len(rows) >= limit:
                break
        if not rows:
            raise InputError(f"SemCor has no tagged word in documents {SPLITS[split]}*; check the data "
                             "(contextlens data fetch semcor)")
        if len(rows) < limit:
            log.warning("SemCor's %s documents hold only %d rows (%d asked for)", SPLITS[split], len(rows),
                        limit)
        out[split] = rows[:limit]
    return out


def read_lexnames(root: str | Path) -> tuple[str, ...]:
    """WordNet's lexicographer file names, by number (``wordnet/lexnames``: ``00  adj.all  3``)."""
    from ...datasets import require
    from ...datasets._io import numbered

    (path,) = require(root, "wordnet", "wordnet/lexnames")
    names: dict[int, str] = {}
    for line_no, line in numbered(path, what="lexicographer files"):
        parts = line.split()
        if len(parts) < 2 or not parts[0].isdigit():
            raise FileFormatError(path, line_no, f"expected 'number name [syntactic category]', got {line!r}")
        names[int(parts[0])] = parts[1]
    if sorted(names) != list(range(len(names))):
        raise FileFormatError(path, None, f"the file numbers are not 0..{len(names) - 1}")
    return tuple(names[k] for k in range(len(names)))


def supersense_of(key: str, lexnames: Sequence[str]) -> str:
    """The lexicographer file of a sense key ``lemma%ss_type:lex_filenum:lex_id:...``."""
    try:
        number = int(key.split("%", 1)[1].split(":")[1])
        return lexnames[number]
    except (IndexError, ValueError):
        raise InputError(f"{key!r} is not a WordNet sense key with a lexicographer file number "
                         f"(0..{len(lexnames) - 1}); check the SemCor data") from None


def lemma_of(row: ProbeRow) -> str:
    """The lemma a ``sense`` probe belongs to: the term's lemma and its key's part of speech."""
    ss_type = row.key.split("%", 1)[1][:1] if "%" in row.key else ""
    return f"{row.lemma}.{_KEY_POS.get(ss_type, row.pos)}"


def task_labels(task: str, rows: Sequence[ProbeRow], lexnames: Sequence[str] | None = None) -> list[str]:
    """The label of each row for ``task`` (``supersense`` needs ``lexnames``)."""
    check_choice("probe task", task, PROBE_TASKS)
    if task == "pos":
        return [r.pos for r in rows]
    if task == "supersense":
        if lexnames is None:
            raise InputError("the supersense task needs WordNet's lexnames (read_lexnames(data_dir))")
        return [supersense_of(r.key, lexnames) for r in rows]
    return [r.key for r in rows]


def polysemous_lemmas(train: Sequence[ProbeRow], test: Sequence[ProbeRow]) -> list[str]:
    """The lemmas (:func:`lemma_of`) with at least two sense keys among the train rows and
    at least two among the test rows, sorted."""
    senses: dict[str, list[set[str]]] = defaultdict(lambda: [set(), set()])
    for side, rows in enumerate((train, test)):
        for r in rows:
            senses[lemma_of(r)][side].add(r.key)
    return sorted(lemma for lemma, (a, b) in senses.items() if len(a) >= 2 and len(b) >= 2)
