"""WordNet 3.0 from the data directory's ``wordnet/`` folder, and the sense-key helpers WSD needs.

:func:`wordnet` gives an ``nltk.corpus.reader.WordNetCorpusReader`` over ``root/wordnet``
(the standard ``dict`` files: ``data.*``, ``index.*``, ``index.sense``, ``*.exc``,
``cntlist.rev``, ``lexnames``), one per folder, cached. Nothing is downloaded. Two nltk
details are handled here: nltk >= 3.9 only opens corpus folders listed in
``nltk.data.path`` (the folder is appended to it), and its reader's constructor maps
synsets to the default ``wordnet`` corpus package when the version differs from it,
which would need that package downloaded; that mapping only serves the multilingual
(OMW) functions, which a reader without an OMW reader cannot use, so it is skipped.

POS tags are the framework's: NOUN, VERB, ADJ, ADV.

:func:`wordnet_graph` gives every sense of WordNet and the structure LMMS propagates
through (synsets, hypernyms, lexicographer files, definitions) as arrays: walking nltk's
117,659 synsets takes 30-40 s, so the arrays are kept in the ``datasets`` cache
(:mod:`contextlens.disk_cache`), named by a hash of the ``data.*`` and ``lexnames`` files
they come from; a later read takes well under a second.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import FileFormatError, MissingDependencyError, OutputPathError, check_choice
from .registry import DATASETS, require
from .wsd import WSD_POS

__all__ = ["wordnet", "candidate_keys", "word_senses", "most_frequent_key", "key_synset", "unknown_keys",
           "WORDNET_POS", "WordNetGraph", "wordnet_graph", "graph_from_reader"]

log = logging.getLogger(__name__)
WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}


@functools.lru_cache(maxsize=1)
def _reader_class():
    try:
        from nltk.corpus.reader.wordnet import WordNetCorpusReader
    except ImportError:
        raise MissingDependencyError("nltk", "bench", "Reading WordNet") from None

    class LocalWordNet(WordNetCorpusReader):
        """A WordNetCorpusReader that never reaches for the downloadable ``wordnet`` package."""

        def map_wn(self, version="wordnet"):
            return None

    return LocalWordNet


@functools.lru_cache(maxsize=8)
def _open(directory: str):
    import nltk

    if directory not in [str(p) for p in nltk.data.path]:
        nltk.data.path.append(directory)
    cls = _reader_class()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        try:
            reader = cls(directory, None)
        except (OSError, ValueError, AssertionError, IndexError) as e:
            raise FileFormatError(directory, None,
                                  f"not a WordNet dict folder nltk can read ({e}); it should "
                                  "hold the WordNet 3.0 database files") from None
    log.info("WordNet %s read from %s", reader.get_version(), directory)
    return reader


def wordnet(root: str | Path):
    """The WordNet reader over ``root/wordnet`` (cached per folder).

    Raises DatasetMissingError naming any missing database file.
    """
    require(root, "wordnet", *DATASETS["wordnet"].files)
    return _open(str((Path(root) / "wordnet").resolve()))


def candidate_keys(wn, lemma: str, pos: str) -> list[str]:
    """The sense keys of ``lemma`` as a ``pos`` (NOUN, VERB, ADJ, ADV), in WordNet order.

    WordNet lists a lemma's senses by decreasing frequency in its sense-tagged corpora,
    so the first key is the most frequent sense. A multiword lemma may use ``_`` or
    spaces. A lemma WordNet does not have gives ``[]`` and a logged warning (the caller
    decides whether that is an error).
    """
    wn_pos = WORDNET_POS[check_choice("WordNet POS", pos, WSD_POS)]
    name = "_".join(lemma.split())
    keys: list[str] = []
    for lem in wn.lemmas(name, pos=wn_pos):
        key = lem.key()
        if key not in keys:
            keys.append(key)
    if not keys:
        log.warning("%r is not a %s in WordNet %s: it has no candidate sense", lemma, pos, wn.get_version())
    return keys


def word_senses(wn, word: str) -> tuple[str, list[str]]:
    """``(lemma, keys)``: the sense keys of ``word`` as every POS WordNet has it as (NOUN,
    VERB, ADJ, ADV, each in WordNet order), else of its first base form that has some
    (``wn.morphy``: *banks* → *bank*); ``(word, [])`` when neither has a sense."""
    def keys_of(lemma: str) -> list[str]:
        keys: list[str] = []
        for pos, p in WORDNET_POS.items():
            if wn.lemmas("_".join(lemma.split()), pos=p):  # asked first: candidate_keys warns on a miss
                keys += [k for k in candidate_keys(wn, lemma, pos) if k not in keys]
        return keys

    keys = keys_of(word)
    if not keys:
        for p in WORDNET_POS.values():
            base = wn.morphy(word.lower(), p)
            if base and base != word.lower() and (found := keys_of(base)):
                return base, found
    return word, keys


def most_frequent_key(wn, lemma: str, pos: str) -> str | None:
    """WordNet's first sense of ``lemma`` as a ``pos``: the most-frequent-sense baseline.

    This is the "WordNet first sense" baseline of the WSD literature: WordNet numbers a
    lemma's senses by their tag counts in its sense-tagged corpora (``cntlist``, mostly
    SemCor), so sense 1 is the most frequent one there, and lemmas SemCor never tagged
    still get an answer. (An MFS counted on SemCor 3.0 itself can differ for a few
    lemmas.) None, with the warning of :func:`candidate_keys`, when WordNet lacks the
    lemma.
    """
    keys = candidate_keys(wn, lemma, pos)
    return keys[0] if keys else None


def key_synset(wn, key: str):
    """The synset of sense key ``key``, or None with a logged warning when this WordNet
    does not know the key (e.g. a WordNet 1.6 key, or a typo)."""
    from nltk.corpus.reader.wordnet import WordNetError

    try:
        return wn.lemma_from_key(key).synset()
    except (WordNetError, ValueError, KeyError, AttributeError):
        log.warning("sense key %r is unknown to WordNet %s", key, wn.get_version())
        return None


@functools.lru_cache(maxsize=8)
def _sense_index(directory: str) -> frozenset[str]:
    path = Path(directory) / "index.sense"
    keys = set()
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) != 4 or "%" not in fields[0]:
                raise FileFormatError(path, line_no, "expected 'sense_key offset sense_number tag_count'")
            keys.add(fields[0])
    return frozenset(keys)


def unknown_keys(wn, keys: Iterable[str]) -> list[str]:
    """The keys of ``keys`` that this WordNet's ``index.sense`` does not list, in order
    (fast: one set look-up per key; nothing is logged)."""
    known = _sense_index(str(Path(wn.root.path)))
    return [k for k in keys if k.lower() not in known]


GRAPH_VERSION = 1  # bump when the arrays graph_from_reader makes change
_GRAPH_SOURCES = ("data.noun", "data.verb", "data.adj", "data.adv", "lexnames")


@dataclass(frozen=True)
class WordNetGraph:
    """Every sense key of WordNet and the structure around it, as arrays.

    ``keys`` (k,): each sense key once, in WordNet's order (synset by synset, then the
    synset's lemmas; a key listed twice in one synset, as ``a%1:10:00::`` for *A* and *a*,
    is kept at its first place); ``names`` (k,): the lemma as WordNet writes it (``Earth``,
    ``bank_holiday``); ``key_synset`` (k,): the row of its synset (:meth:`keys_of` gives a
    synset's key rows). Per synset (s,): ``synsets`` (``bank.n.01``), ``definitions``,
    ``lemma_names`` (every lemma name, duplicates kept, joined by spaces), ``lexname`` (a
    row of ``lexnames``, the lexicographer files such as ``noun.artifact``).
    ``hypernyms`` (e, 2): ``(synset, one of its hypernyms)``, instance hypernyms included.
    """

    keys: tuple[str, ...]
    names: tuple[str, ...]
    key_synset: np.ndarray
    synsets: tuple[str, ...]
    definitions: tuple[str, ...]
    lemma_names: tuple[str, ...]
    lexname: np.ndarray
    lexnames: tuple[str, ...]
    hypernyms: np.ndarray

    @functools.cached_property
    def key_row(self) -> dict[str, int]:
        """Sense key → its row."""
        return {k: i for i, k in enumerate(self.keys)}

    @functools.cached_property
    def synset_start(self) -> np.ndarray:
        """``(s + 1,)`` where each synset's keys start in :attr:`synset_keys`."""
        return np.concatenate([[0], np.cumsum(np.bincount(self.key_synset, minlength=len(self.synsets)))])

    @functools.cached_property
    def synset_keys(self) -> np.ndarray:
        """Key rows grouped by synset (stable: each synset's keys in WordNet order)."""
        return np.argsort(self.key_synset, kind="stable")

    @functools.cached_property
    def digest(self) -> str:
        """A hash of the keys, lemma names and definitions (what gloss sentences are made of)."""
        h = hashlib.sha256()
        for f in ("keys", "names", "lemma_names", "definitions"):
            h.update("\n".join(getattr(self, f)).encode())
        h.update(np.ascontiguousarray(self.key_synset, dtype=np.int64).tobytes())
        return h.hexdigest()[:16]

    def keys_of(self, synset: int) -> np.ndarray:
        """The key rows of synset row ``synset``."""
        return self.synset_keys[self.synset_start[synset]:self.synset_start[synset + 1]]

    def arrays(self) -> dict[str, np.ndarray]:
        """The fields as arrays: a text field is its strings joined by newlines, as UTF-8 bytes
        (a fixed-width string array of the definitions alone would take 170 MB)."""
        return {f: np.frombuffer("\n".join(v).encode(), dtype=np.uint8) if isinstance(v, tuple) else v
                for f, v in ((f, getattr(self, f)) for f in self.__dataclass_fields__)}

    @classmethod
    def from_arrays(cls, arrays) -> WordNetGraph:
        """The graph :meth:`arrays` gave (``arrays``: a mapping of its fields)."""
        ints = ("key_synset", "lexname", "hypernyms")
        return cls(**{f: np.asarray(arrays[f]) if f in ints else tuple(bytes(arrays[f]).decode().split("\n"))
                      for f in cls.__dataclass_fields__})


def graph_from_reader(wn) -> WordNetGraph:
    """Walk every synset of an nltk WordNet reader (30-40 s for WordNet 3.0)."""
    keys, names, key_synset = [], [], []
    synsets, definitions, lemma_names, lexname, hypernyms = [], [], [], [], []
    lex_rows: dict[str, int] = {}
    seen: set[str] = set()
    all_synsets = list(wn.all_synsets())
    row_of = {s: i for i, s in enumerate(all_synsets)}
    for i, s in enumerate(all_synsets):
        synsets.append(s.name())
        definitions.append(s.definition())
        lemma_names.append(" ".join(lemma.name() for lemma in s.lemmas()))
        lexname.append(lex_rows.setdefault(s.lexname(), len(lex_rows)))
        for lemma in s.lemmas():
            key = lemma.key()
            if key not in seen:
                seen.add(key)
                keys.append(key)
                names.append(lemma.name())
                key_synset.append(i)
        for h in dict.fromkeys(s.hypernyms() + s.instance_hypernyms()):
            hypernyms.append((i, row_of[h]))
    return WordNetGraph(tuple(keys), tuple(names), np.array(key_synset, dtype=np.int32), tuple(synsets),
                        tuple(definitions), tuple(lemma_names), np.array(lexname, dtype=np.int16),
                        tuple(lex_rows), np.array(hypernyms, dtype=np.int32).reshape(-1, 2))


def _graph_copy(folder: Path) -> Path:
    """Where the arrays of the WordNet in ``folder`` are kept: named by its files' content."""
    from ..disk_cache import DiskCache

    h = hashlib.sha256()
    for name in _GRAPH_SOURCES:
        with open(folder / name, "rb") as f:
            h.update(hashlib.file_digest(f, "sha256").digest())
    return DiskCache("datasets").folder / f"wordnet-graph-{h.hexdigest()[:16]}-v{GRAPH_VERSION}.npz"


@functools.lru_cache(maxsize=2)
def _graph(directory: str) -> WordNetGraph:
    from ..disk_cache import DiskCache
    from ..files import atomic_output

    try:
        copy = _graph_copy(Path(directory))
    except OutputPathError as e:
        log.info("the WordNet graph is built without a cached copy: %s", e)
        return graph_from_reader(_open(directory))
    cache = DiskCache("datasets", copy.parent)
    with cache.use(copy):
        if copy.is_file():
            try:
                with np.load(copy, allow_pickle=False) as data:
                    return WordNetGraph.from_arrays(data)
            except (OSError, ValueError, KeyError, TypeError) as e:
                log.warning("the cached WordNet graph %s is damaged (%s); building it again", copy, e)
        log.info("walking WordNet's synsets (once: the arrays are cached)")
        graph = graph_from_reader(_open(directory))
        try:
            with atomic_output(copy, suffix=".npz") as tmp:
                np.savez(tmp, **graph.arrays())
            cache.stored(copy)
        except OutputPathError as e:
            log.info("could not keep the WordNet graph: %s", e)
        return graph


def wordnet_graph(root: str | Path) -> WordNetGraph:
    """Every sense of the WordNet under ``root/wordnet`` and its structure (cached).

    Raises DatasetMissingError naming any missing database file.
    """
    require(root, "wordnet", *DATASETS["wordnet"].files)
    return _graph(str((Path(root) / "wordnet").resolve()))
