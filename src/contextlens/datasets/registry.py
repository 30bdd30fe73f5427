"""Which datasets exist, where their files go under the data directory, and where they come from.

The data directory (``--data-dir``, else ``CONTEXTLENS_DATA``, else
``~/.cache/contextlens/data``) holds each dataset in its original published layout, e.g.
``wic/train/train.data.txt``. :data:`DATASETS` lists, per dataset, the files a complete
copy has (``files``), the held-out or extra files a copy may have (``optional``), and the
official download (:class:`Source`) that ``contextlens data fetch NAME`` uses.

>>> spec = DATASETS["wic"]
>>> spec.files[0], spec.folder
('wic/train/train.data.txt', 'wic')
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, check_choice

__all__ = [
    "DatasetMissingError", "Source", "DatasetSpec", "DATASETS", "resolve_data_dir", "dataset_status",
    "require", "WSD_EVAL_NAMES", "COARSE_WORDS",
]

WSD_EVAL_NAMES = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL")
COARSE_WORDS = ("apple", "arm", "bank", "bass", "bow", "chair", "club", "crane", "deck", "digit",
                "hood", "java", "mole", "pitcher", "pound", "seal", "spring", "square", "trunk", "yard")


class DatasetMissingError(InputError):
    """Files of a dataset are not in the data directory; the message says where they go."""


@dataclass(frozen=True)
class Source:
    """One official download of a dataset.

    ``dest`` is where it lands, relative to the data directory. A plain file is stored
    at ``dest`` as it is; an archive (zip or tar) is unpacked and its folder that holds
    every path of ``files`` (and is named ``dirname``, when given) becomes ``dest``; with
    ``pack`` that folder is stored as a ``.tar.gz`` at ``dest`` instead. ``sha256`` is
    the checksum of the downloaded bytes, or None where no published one is known (the
    checksum is then computed and reported, not verified).
    """

    url: str
    dest: str
    files: tuple[str, ...] = ()
    dirname: str | None = None
    pack: bool = False
    sha256: str | None = None


@dataclass(frozen=True)
class DatasetSpec:
    """A dataset: what it is, the files of a complete copy, and its official sources."""

    name: str
    description: str
    citation: str
    license: str
    folder: str
    files: tuple[str, ...]
    optional: tuple[str, ...] = ()
    sources: tuple[Source, ...] = ()

    @property
    def urls(self) -> tuple[str, ...]:
        return tuple(s.url for s in self.sources)


def _wsd(name: str) -> tuple[str, str]:
    return f"wsd/eval/{name}/{name}.data.xml", f"wsd/eval/{name}/{name}.gold.key.txt"


_FARUQUI = "https://raw.githubusercontent.com/mfaruqui/eval-word-vectors/master/data/word-sim/"
# sha256 of the files as published (the shared copies are byte-for-byte the originals).
_FARUQUI_FILES = {
    "EN-MC-30.txt": "ac193564204b0c4b762055507378a1e65775d8e2050967fc52af9a9a6bcc874c",
    "EN-RG-65.txt": "24b6856dbd54357ac7a14ab00c86073dcdf88be2a0914bcf30500845f9e4c147",
    "EN-MTurk-287.txt": "a9ae3a9decb75a9700fe0cf18b048c1344774d9f40e0196baf8e34d4cd9d1ce5",
    "EN-YP-130.txt": "4b963f0771ba8cf1d378de8cd43387c31eae34a5e57e2de3685c53fc2cdd9a73",
    "EN-WS-353-ALL.txt": "ce12919b240af45bdf46d243601eaca2b6212b159b5e7e9b435ee7ee40c5619c",
    "EN-WS-353-SIM.txt": "f1da938998863c94e53f72f984a5c6e215f0b46c323aae8f0f4930703a339107",
    "EN-WS-353-REL.txt": "66a7c88100624d0a391605ff61ce84e11d11ee620d51ec0298da49592838f8fa",
}
_WORDNET_FILES = ("cntlist.rev", "lexnames", "index.sense", "index.adj", "index.adv", "index.noun",
                  "index.verb", "data.adj", "data.adv", "data.noun", "data.verb", "adj.exc", "adv.exc",
                  "noun.exc", "verb.exc")

DATASETS: dict[str, DatasetSpec] = {s.name: s for s in (
    DatasetSpec(
        "wic", "WiC, Word-in-Context: same sense or not, for a word in two sentences (train 5,428, dev 638)",
        "Pilehvar & Camacho-Collados, WiC: the Word-in-Context Dataset, NAACL 2019", "CC BY-NC 4.0", "wic",
        files=("wic/train/train.data.txt", "wic/train/train.gold.txt", "wic/dev/dev.data.txt",
               "wic/dev/dev.gold.txt"),
        optional=("wic/test/test.data.txt", "wic/test/test.gold.txt"),
        sources=(Source("https://pilehvar.github.io/wic/package/WiC_dataset.zip", "wic",
                        files=("train/train.data.txt", "dev/dev.data.txt")),)),
    DatasetSpec(
        "wic_tsv", "WiC-TSV, target sense verification: does a word in context match a definition",
        "Breit et al., WiC-TSV: An Evaluation Benchmark for Target Sense Verification of Words in Context, "
        "EACL 2021", "CC BY 4.0", "wic_tsv",
        files=tuple(f"wic_tsv/en/{d}/{s}_{k}.txt" for d, s in (("Training", "train"), ("Development", "dev"))
                    for k in ("examples", "definitions", "hypernyms", "labels")),
        optional=tuple(f"wic_tsv/en/Test/test_{k}.txt" for k in ("examples", "definitions", "hypernyms",
                                                                  "domains", "labels")),
        sources=(Source("https://github.com/semantic-web-company/wic-tsv/archive/refs/heads/master.zip",
                        "wic_tsv/en", files=("Training/train_examples.txt",)),)),
    DatasetSpec(
        "scws", "SCWS, Stanford Contextual Word Similarity: 2,003 word pairs rated in context",
        "Huang, Socher, Manning & Ng, Improving Word Representations via Global Context and Multiple "
        "Word Prototypes, ACL 2012", "see the README (cite the paper)", "scws",
        files=("scws/ratings.txt",), optional=("scws/README", "scws/ratings.sample.txt"),
        sources=(Source("http://www-nlp.stanford.edu/~ehhuang/SCWS.zip", "scws", files=("ratings.txt",)),)),
    DatasetSpec(
        "wsd", "WSD unified evaluation framework: Senseval-2/3, SemEval-2007/2013/2015 and ALL "
               "(WordNet 3.0 sense keys)",
        "Raganato, Camacho-Collados & Navigli, Word Sense Disambiguation: A Unified Evaluation Framework "
        "and Empirical Comparison, EACL 2017", "research use; cite the paper and each task", "wsd/eval",
        files=_wsd("semeval2007"),
        optional=tuple(f for n in WSD_EVAL_NAMES if n != "semeval2007" for f in _wsd(n)),
        sources=(Source("http://lcl.uniroma1.it/wsdeval/data/WSD_Evaluation_Framework.zip", "wsd/eval",
                        files=("semeval2007/semeval2007.data.xml",)),)),
    DatasetSpec(
        "semcor", "SemCor 3.0 in NAF XML with WordNet 3.0 sense keys (352 documents), the WSD training set",
        "Miller et al., A Semantic Concordance, HLT 1993; NAF conversion by Izquierdo & Postma "
        "(github.com/rubenIzquierdo/wsd_corpora)", "Apache-2.0 (conversion); SemCor ships with WordNet",
        "wsd/semcor",
        files=("wsd/semcor/semcor3.0_naf.tar.gz",),
        optional=("wsd/semcor/semcor3.0_sentences.tsv", "wsd/semcor/semcor3.0_annotations.tsv"),
        sources=(Source("https://github.com/rubenIzquierdo/wsd_corpora/archive/refs/heads/master.zip",
                        "wsd/semcor/semcor3.0_naf.tar.gz", files=("brown1/br-a01.naf",),
                        dirname="semcor3.0", pack=True),)),
    DatasetSpec(
        "coarsewsd20", "CoarseWSD-20: 20 ambiguous nouns with 2-5 coarse senses each, from Wikipedia",
        "Loureiro, Rezaee, Pilehvar & Camacho-Collados, Analysis and Evaluation of Language Models for "
        "Word Sense Disambiguation, Computational Linguistics 2021", "CC BY-NC 4.0", "coarsewsd20",
        files=tuple(f"coarsewsd20/{w}/{f}" for w in COARSE_WORDS
                    for f in ("train.data.txt", "train.gold.txt", "classes_map.txt")),
        optional=tuple(f"coarsewsd20/{w}/{f}" for w in COARSE_WORDS
                       for f in ("test.data.txt", "test.gold.txt"))
        + ("coarsewsd20/senses.tsv", "coarsewsd20/wn_mappings.tsv"),
        sources=(Source("https://github.com/danlou/bert-disambiguation/archive/refs/heads/master.zip",
                        "coarsewsd20", files=("bank/train.data.txt",), dirname="CoarseWSD-20"),)),
    DatasetSpec(
        "similarity", "word similarity: WordSim-353, MEN, RG-65, MC-30, MTurk-287, YP-130 "
                      "(+ SimLex-999, SimVerb-3500, RW when present)",
        "Finkelstein et al. 2002; Bruni et al. 2014; Rubenstein & Goodenough 1965; Miller & Charles 1991; "
        "Radinsky et al. 2011; Yang & Powers 2006; Faruqui & Dyer 2014 (collection)", "as in each folder",
        "similarity",
        files=("similarity/wordsim353/combined.tab", "similarity/men/MEN_dataset_lemma_form.dev")
        + tuple(f"similarity/faruqui/{f}" for f in _FARUQUI_FILES),
        optional=("similarity/simlex999/SimLex-999.txt", "similarity/simverb3500/SimVerb-3500.txt",
                  "similarity/rw/rw.txt", "similarity/men/MEN_dataset_natural_form_full",
                  "similarity/men/MEN_dataset_lemma_form.test", "similarity/faruqui/EN-MTurk-771.txt",
                  "similarity/faruqui/EN-RW-STANFORD.txt", "similarity/faruqui/EN-MEN-TR-3k.txt"),
        sources=(Source("http://www.cs.technion.ac.il/~gabr/resources/data/wordsim353/wordsim353.zip",
                        "similarity/wordsim353", files=("combined.tab",),
                        sha256="4f12a5fe9650184662306f8ae72c7e6bb44c2627e0275e9f9c6eb067e3441a22"),
                 Source("http://clic.cimec.unitn.it/~elia.bruni/resources/MEN.tar.gz", "similarity/men",
                        files=("MEN_dataset_lemma_form.dev",)),
                 *(Source(_FARUQUI + f, f"similarity/faruqui/{f}", sha256=h)
                   for f, h in _FARUQUI_FILES.items()))),
    DatasetSpec(
        "analogy", "Google word analogies (19,544 questions in 14 sections)",
        "Mikolov, Chen, Corrado & Dean, Efficient Estimation of Word Representations in Vector Space, 2013",
        "Apache-2.0 (word2vec)", "analogy",
        files=("analogy/questions-words.txt",),
        sources=(Source("https://raw.githubusercontent.com/tmikolov/word2vec/master/questions-words.txt",
                        "analogy/questions-words.txt",
                        sha256="8c29b3332afc46f3fb8be04cb5297bf96f39aa7131272dff57869b4485b22a36"),)),
    DatasetSpec(
        "cosimlex", "CoSimLex English: 340 word pairs rated for similarity in two contexts each "
        "(SemEval-2020 Task 3)", "Armendariz, Purver, Ulčar, Pollak, Ljubešić & Granroth-Wilding, CoSimLex: "
        "A Resource for Evaluating Graded Word Similarity in Context, LREC 2020; Armendariz et al., "
        "SemEval-2020 Task 3, 2020",
        "GNU GPL v3 (CLARIN.SI, http://hdl.handle.net/11356/1308)", "cosimlex",
        files=("cosimlex/cosimlex_en.csv",), optional=("cosimlex/cosimlex_hr.csv", "cosimlex/cosimlex_sl.csv",
                                                        "cosimlex/cosimlex_fi.csv")),
    DatasetSpec(
        "wordnet", "WordNet 3.0 database files (the dict folder), the sense inventory of the WSD sets",
        "Miller, WordNet: A Lexical Database for English, CACM 1995; Fellbaum (ed.) 1998",
        "WordNet 3.0 licence", "wordnet",
        files=tuple(f"wordnet/{f}" for f in _WORDNET_FILES),
        sources=(Source("https://wordnetcode.princeton.edu/3.0/WordNet-3.0.tar.gz", "wordnet",
                        files=("data.noun", "index.sense", "lexnames"), dirname="dict"),)),
)}


def resolve_data_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The data directory: ``explicit`` (``--data-dir``), else ``CONTEXTLENS_DATA``, else
    ``~/.cache/contextlens/data``. Nothing is created.

    >>> resolve_data_dir("/tmp/d")
    PosixPath('/tmp/d')
    """
    if explicit is not None and str(explicit) != "":
        return Path(explicit).expanduser()
    env = os.environ.get("CONTEXTLENS_DATA")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "contextlens" / "data"


def _spec(name: str) -> DatasetSpec:
    return DATASETS[check_choice("dataset", name, DATASETS)]


def dataset_status(root: str | os.PathLike) -> list[dict]:
    """One row per dataset: ``{name, present, complete, missing, optional_present,
    optional_missing, path}`` (``present``: its folder exists; ``complete``: every file of
    a complete copy is there; file lists are relative to ``root``)."""
    root = Path(root)
    rows = []
    for spec in DATASETS.values():
        missing = [f for f in spec.files if not (root / f).is_file()]
        rows.append({
            "name": spec.name, "present": (root / spec.folder).is_dir(), "complete": not missing,
            "missing": missing, "optional_present": [f for f in spec.optional if (root / f).is_file()],
            "optional_missing": [f for f in spec.optional if not (root / f).is_file()],
            "path": str(root / spec.folder),
        })
    return rows


def how_to_get(name: str) -> str:
    """The sentence that tells a user how to get dataset ``name``."""
    spec = _spec(name)
    urls = " and ".join(spec.urls[:2]) + (" ..." if len(spec.urls) > 2 else "")
    fetch = (f"get them with `contextlens data fetch {name}` (downloads {urls}) or download them by hand"
             if spec.urls else f"download them by hand ({spec.license})")
    return (f"{fetch} in the published layout; point contextlens at another data folder with --data-dir or "
            f"CONTEXTLENS_DATA")


def require(root: str | os.PathLike, name: str, *files: str) -> tuple[Path, ...]:
    """The full paths of ``files`` (relative to ``root``; default: the dataset's files),
    or :class:`DatasetMissingError` naming every missing one and how to get it.

    >>> require("/nonexistent", "analogy")
    Traceback (most recent call last):
    ...
    contextlens.datasets.registry.DatasetMissingError: dataset 'analogy' is incomplete in /nonexistent: missing /nonexistent/analogy/questions-words.txt; get them with `contextlens data fetch analogy` (downloads https://raw.githubusercontent.com/tmikolov/word2vec/master/questions-words.txt) or download them by hand in the published layout; point contextlens at another data folder with --data-dir or CONTEXTLENS_DATA
    """  # noqa: E501 (a doctest's expected output, printed whole)
    root = Path(root)
    spec = _spec(name)
    paths = tuple(root / f for f in (files or spec.files))
    missing = [p for p in paths if not p.exists()]
    if missing:
        shown = ", ".join(str(p) for p in missing[:6]) + (f" (and {len(missing) - 6} more)"
                                                          if len(missing) > 6 else "")
        raise DatasetMissingError(f"dataset {name!r} is incomplete in {root}: missing {shown}; "
                                  f"{how_to_get(name)}")
    return paths
