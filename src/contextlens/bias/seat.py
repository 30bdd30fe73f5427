"""SEAT (May et al., NAACL 2019): WEAT on sentence vectors of short "bleached" sentences.

Each word of X, Y, A and B becomes the few sentences of May et al.'s templates for its kind
(their ``scripts/generate_basic_contexts.py``, in the sent-bias repository that goes with
the paper): a capitalised word is a name ("This is Amanda.", "Amanda is a person."...);
May et al.'s listed adjectives, mass nouns, verbs and pronouns get their own templates;
any other word is a noun, singular then plural ("This is a rose.", "The roses are here.",
and "A rose is a thing." or, for person words, "A man is a person."; these last three keep
the templates' fixed "a", as the published sentences do: "It is a orchid."). The test runs
on the sentence vectors (:meth:`~contextlens.encoders.base.Encoder.sentence_vectors`): the
sets are of sentences, so ``n_x`` ... ``n_b`` count sentences. Unlike May et al., X and Y
are not cut to one size at random (the permutation test takes sets of any two sizes).

>>> sentences_for("rose")
('This is a rose.', 'That is a rose.', 'There is a rose.', 'Here is a rose.', 'The rose is here.', \
'The rose is there.', 'A rose is a thing.', 'It is a rose.', 'These are roses.', 'Those are roses.', \
'They are roses.', 'The roses are here.', 'The roses are there.', 'Roses are things.')
>>> sentences_for("Amanda")[:3], sentences_for("her"), sentences_for("love")[0]
(('This is Amanda.', 'That is Amanda.', 'There is Amanda.'), ('It is her.', 'This is her.', 'That is her.'), \
'This is love.')
"""

from __future__ import annotations

import logging
import re

import numpy as np

from ..bounds import check_encoding
from ..encoders.base import Encoder
from .result import BiasResult, model_label
from .sets import SET_KEYS, WordSets
from .weat import association_test

__all__ = ["TEMPLATES_SOURCE", "sentences_for", "seat_sentences", "seat"]

log = logging.getLogger(__name__)
TEMPLATES_SOURCE = ("May, Wang, Bordia, Bowman & Rudinger (2019), On Measuring Social Biases in Sentence "
                    "Encoders, NAACL; templates of sent-bias scripts/generate_basic_contexts.py")

# May et al.'s word kinds (generate_basic_contexts.py); a word in none of them is a noun
ADJECTIVES = frozenset(
    "loyal honest gentle lucky happy ugly rotten soft quiet compromising rational calm kind agreeable "
    "servile pleasant cautious friendly supportive nice mild demure passive indifferent submissive shrill "
    "loud argumentative irrational angry abusive obnoxious controlling nagging brash hostile emasculating "
    "mean harsh sassy aggressive opinionated domineering wonderful terrible horrible nasty awful "
    "professional evil".split())
MASS_NOUNS = frozenset("freedom health love peace cheer heaven loyalty pleasure laughter filth grief hatred "
                       "poverty agony dynamite teargas joy".split())
PLURAL_NOUNS = frozenset("parents children cousins relatives".split())
VERBS = frozenset("pollute kill stink".split())
PERSON = re.compile(r"\b(?:woman|man|female|male|girl|boy|sister|brother|daughter|son|American)\b")

NAME = ("This is {}.", "That is {}.", "There is {}.", "Here is {}.", "{} is here.", "{} is there.",
        "{} is a person.", "The person's name is {}.")
TEMPLATES = {
    "adjective": ("This is {}.", "That is {}.", "They are {}."),
    "mass": ("This is {}.", "That is {}.", "There is {}.", "It is {}."),
    "verb": ("This will {}.", "This did {}.", "This can {}.", "This may {}.", "That will {}.", "That did {}.",
             "That can {}.", "That may {}."),
    "subject": ("{} is here.", "{} is there.", "Here {} is.", "There {} is.", "{} is a person."),
    "object": ("It is {}.", "This is {}.", "That is {}."),
    "possessive": ("This is {}.", "That is {}.", "There is {}.", "Here is {}.", "It is {}.", "{} is there.",
                   "{} is here."),
}
PRONOUNS = {"he": "subject", "she": "subject", "him": "object", "her": "object", "his": "possessive",
            "hers": "possessive"}
SINGULAR = ("This is {a} {}.", "That is {a} {}.", "There is {a} {}.", "Here is {a} {}.", "The {} is here.",
            "The {} is there.")
PLURAL = ("These are {}.", "Those are {}.", "They are {}.", "The {} are here.", "The {} are there.")


def _fill(template: str, word: str) -> str:
    article = "an" if word[:1].lower() in "aeiou" else "a"
    sentence = template.format(word, a=article)
    return sentence[0].upper() + sentence[1:]


def _plural(word: str) -> str:
    """May et al.'s pluralisation: man/woman → men/women, -y → -ies, -ch/-sh/-s → +es, else +s."""
    if re.search(r"\b(?:woman|man)\b", word):
        return re.sub(r"\bwoman\b", "women", re.sub(r"\bman\b", "men", word))
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return word[:-1] + "ies"
    return word + ("es" if word.endswith(("ch", "sh", "s")) else "s")


def sentences_for(word: str) -> tuple[str, ...]:
    """May et al.'s template sentences for one word (see the module docstring)."""
    if word[:1].isupper() and not word.endswith("American"):
        kind = NAME
    elif word in ADJECTIVES:
        kind = TEMPLATES["adjective"]
    elif word in VERBS:
        kind = TEMPLATES["verb"]
    elif word in MASS_NOUNS:
        kind = TEMPLATES["mass"]
    elif word in PRONOUNS:
        kind = TEMPLATES[PRONOUNS[word]]
    else:
        if word in PLURAL_NOUNS:
            one, many = ("child" if word == "children" else word.removesuffix("s")), word
        else:
            one, many = word, _plural(word)
        person = PERSON.search(word) is not None
        return (*(_fill(t, one) for t in (*SINGULAR, *(("A {} is a person.",) if person else
                                                        ("A {} is a thing.", "It is a {}.")))),
                *(_fill(t, many) for t in (*PLURAL, "{} are people." if person else "{} are things.")))
    return tuple(_fill(t, word) for t in kind)


def seat_sentences(sets: WordSets) -> WordSets:
    """``sets`` with each word replaced by its template sentences (same name)."""
    return WordSets(sets.name, *(tuple(s for w in getattr(sets, key) for s in sentences_for(w))
                                 for key in SET_KEYS))


def seat(encoder: Encoder, sets: WordSets, *, layer: int = -1, ddof: int = 1,
         permutations: int | None = None, seed: int = 0) -> BiasResult:
    """SEAT of ``sets`` with ``encoder``'s sentence vectors at ``layer`` (default: the last)."""
    position = encoder.layer_position(layer)
    sentences = seat_sentences(sets)
    texts = [s for key in SET_KEYS for s in getattr(sentences, key)]
    check_encoding(encoder, texts, what=f"SEAT's {len(texts):,} template sentences",
                   todo="give smaller sets (each word becomes 3 to 14 sentences)")
    vectors = encoder.sentence_vectors(texts)[position]  # (sentences, dim)
    cuts = np.cumsum([0, *sentences.sizes])
    X, Y, A, B = (vectors[a:b] for a, b in zip(cuts, cuts[1:]))
    r = association_test(X, Y, A, B, ddof=ddof, permutations="default" if permutations is None
                         else permutations, seed=seed)
    model = model_label(encoder)
    log.info("SEAT %s on %s layer %d: d = %.3f over %d sentences", sets.name, model,
             encoder.layer_ids[position], r.effect_size, len(texts))
    return BiasResult(sets.name, "seat", model, encoder.layer_ids[position], r.effect_size, r.p.p, None,
                      *sentences.sizes, WordSets(sets.name, (), (), (), ()), statistic=r.statistic,
                      exact=r.p.exact, permutations=r.p.permutations)
