"""A tiny SemCor in the published NAF layout (``wsd/semcor/semcor3.0_naf.tar.gz``) and
WordNet's ``lexnames``, written under a data folder, for the probe tests (no shared data)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from xml.sax.saxutils import escape

#: WordNet 3.0's lexicographer files, by number (the ``lexnames`` file)
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()

Token = tuple  # (text, lemma or None, Penn tag or None, lexical key such as "1:14:00::" or None)


def naf(sentences: list[list[Token]]) -> str:
    """One NAF document: ``<wf>`` tokens, and a ``<term>`` (with its sense key when given)
    for every token that has a lemma."""
    words, terms, n = [], [], 0
    for s, tokens in enumerate(sentences, 1):
        for text, lemma, pos, key in tokens:
            n += 1
            words.append(f'<wf id="w{n}" sent="{s}">{escape(text)}</wf>')
            if lemma is not None:
                refs = (f'<externalReferences><externalRef reftype="lexical_key" reference="{key}"/>'
                        "</externalReferences>") if key else ""
                terms.append(f'<term id="t{n}" lemma="{escape(lemma)}" pos="{pos}"><span><target id="w{n}"/>'
                             f"</span>{refs}</term>")
    return f"<NAF><text>{''.join(words)}</text><terms>{''.join(terms)}</terms></NAF>"


def write_semcor(root: Path, docs: dict[str, list[list[Token]]]) -> Path:
    """Write ``docs`` (``brown1/br-a01`` -> sentences) as SemCor's NAF archive and WordNet's
    lexnames under ``root``; returns ``root``."""
    archive = root / "wsd" / "semcor" / "semcor3.0_naf.tar.gz"
    archive.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "w:gz") as tar:
        for name, sentences in docs.items():
            data = naf(sentences).encode()
            info = tarfile.TarInfo(f"semcor3.0/{name}.naf")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    (root / "wordnet").mkdir(exist_ok=True)
    (root / "wordnet" / "lexnames").write_text("".join(f"{k:02d}\t{name}\t0\n" for k,
                                                       name in enumerate(LEXNAMES)))
    return root


# nouns (bank in two senses), verbs, adjectives and adverbs, with their sense keys
WORDS = {
    "bank": ("bank", "NN", "1:14:00::"), "shore": ("bank", "NN", "1:17:01::"),
    "river": ("river", "NN", "1:17:00::"),
    "ran": ("run", "VB", "2:38:00::"), "walked": ("walk", "VB", "2:38:00::"),
    "red": ("red", "JJ", "3:00:01::"), "old": ("old", "JJ", "3:00:02::"), "fast": ("fast", "RB", "4:02:00::"),
    "zyzzyva": ("zyzzyva", "NN", "1:05:00::"),
    "Dec.": ("december", "NN", "1:28:00::"), "river_bank": ("riverbank", "NN", "1:17:00::"),
}


def sentence(*words: str) -> list[Token]:
    """Tokens of a sentence: the words of :data:`WORDS` are tagged terms, others plain tokens
    (``shore`` is written ``bank``: the second sense of bank)."""
    out = []
    for w in words:
        if w in WORDS:
            lemma, pos, key = WORDS[w]
            out.append(("bank" if w == "shore" else w, lemma, pos, key))
        else:
            out.append((w, None, None, None))
    return out


def tiny_docs() -> dict[str, list[list[Token]]]:
    """Two brown1 documents (listed out of name order) and one brown2 and one brownv."""
    train = [sentence("the", "bank", "ran", "fast"), sentence("an", "old", "river", "walked"),
             sentence("the", "red", "shore", "ran", "fast"), sentence("a", "zyzzyva", "walked", "fast")]
    more = [sentence("the", "old", "bank", "walked"), sentence("by", "the", "shore", "red", "river")]
    test = [sentence("the", "river", "bank", "ran"), sentence("a", "red", "shore", "walked", "fast"),
            sentence("old", "bank", "of", "Dec.", "ran", "by", "the", "river_bank")]
    return {"brown1/br-b02": more, "brown1/br-a01": train, "brown2/br-e01": test,
            "brownv/br-f01": [sentence("the", "bank", "ran")]}


#: the words of the toy table the probe tests read (a static table: its one layer, 0)
PROBE_WORDS = ["the", "bank", "river", "ran", "walked", "red", "old", "fast", "a", "an", "by", "of", "money",
               "sat"]


def probe_files(folder: Path) -> Path:
    """In ``folder``: ``toy.npz`` (a seeded table of :data:`PROBE_WORDS`), ``data/`` (a tiny
    SemCor) and ``s.txt`` (four sentences for CKA); returns ``folder``."""
    import numpy as np

    from contextlens.vectors import EmbeddingTable

    rng = np.random.default_rng(0)
    EmbeddingTable(PROBE_WORDS, rng.normal(size=(len(PROBE_WORDS), 6)), name="toy").save(folder / "toy.npz")
    write_semcor(folder / "data", tiny_docs())
    (folder / "s.txt").write_text("the bank ran by the river\nan old red bank\nthe river ran fast by a bank\n"
                                  "money sat in the bank\n")
    return folder
