"""The ten WEAT tests of Caliskan, Bryson & Narayanan (Science 356:183, 2017), with their
published GloVe figures.

Word lists: the paper's supplementary materials (section "WEAT_DATA 1-10"), as printed.
Words in italics there were left out of the paper's own runs, and are left out here:

- test 3: 18 European-American and 18 African-American names (the African-American names
  too rare in GloVe's Common Crawl corpus, and as many European-American names at random);
  32 × 2 remain, as the paper's Table 1 says;
- tests 4 and 5: Jay, Kristen, Tremayne and Latonya, leaving the 16 × 2 of Table 1.

The published figures are the paper's Table 1, "our finding" column: N (words per target
set), effect size d and p-value, computed on GloVe 840B (Common Crawl, 300-d, cased). The
p-values are printed there as orders of magnitude (10⁻⁷, .018, ...).

Two other copies of these lists differ from the paper, so results on them differ too.
WEFE's ``load_weat()`` (0.4.1) uses test 1's unpleasant words for test 3 (the paper's test 3
and 4 lists swap *agony, prison* for *bomb, evil*), keeps Sara and Amber in test 3 (34
names), keeps Jay, Kristen, Tremayne and Latonya in tests 4-5, and has *short* for
*short-term* (test 9) and *Bill* for *Billy* (test 10). The authors' CEAT code has *short*
as well. Will Lowe's ``cbn`` R package, which ships the GloVe-840B vectors of these words,
uses the lists as here and reproduces every published effect size to two decimals with the
sample standard deviation.

>>> [t.name for t in TESTS.values()][:3]
['flowers_insects', 'instruments_weapons', 'eur_afr_names']
>>> get_test("weat6").sets.sizes, get_test("career_family").published.d
((8, 8, 8, 8), 1.81)
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import check_choice
from .sets import WordSets

__all__ = ["Published", "CaliskanTest", "TESTS", "SOURCE", "get_test", "all_names"]

SOURCE = ("Caliskan, Bryson & Narayanan (2017), Semantics derived automatically from language "
          "corpora contain human-like biases, Science 356(6334):183-186, Table 1 and supplement")


@dataclass(frozen=True)
class Published:
    """Table 1's figures on GloVe 840B: words per target set, effect size, p-value."""

    n: int
    d: float
    p: float


@dataclass(frozen=True)
class CaliskanTest:
    """One of the ten tests: its word sets, what they stand for, the published result."""

    number: int
    sets: WordSets
    labels: tuple[str, str, str, str]  # X, Y, A, B
    published: Published

    @property
    def name(self) -> str:
        return self.sets.name

    @property
    def alias(self) -> str:
        return f"weat{self.number}"

    @property
    def description(self) -> str:
        x, y, a, b = self.labels
        return f"{x} vs {y}, {a} vs {b}"


def _words(text: str) -> tuple[str, ...]:
    return tuple(w.strip() for w in text.split(",") if w.strip())


FLOWERS = _words("""aster, clover, hyacinth, marigold, poppy, azalea, crocus, iris, orchid, rose, bluebell,
    daffodil, lilac, pansy, tulip, buttercup, daisy, lily, peony, violet, carnation, gladiola, magnolia,
    petunia, zinnia""")
INSECTS = _words("""ant, caterpillar, flea, locust, spider, bedbug, centipede, fly, maggot, tarantula, bee,
    cockroach, gnat, mosquito, termite, beetle, cricket, hornet, moth, wasp, blackfly, dragonfly, horsefly,
    roach, weevil""")
PLEASANT = _words("""caress, freedom, health, love, peace, cheer, friend, heaven, loyal, pleasure, diamond,
    gentle, honest, lucky, rainbow, diploma, gift, honor, miracle, sunrise, family, happy, laughter,
    paradise, vacation""")
UNPLEASANT = _words("""abuse, crash, filth, murder, sickness, accident, death, grief, poison, stink, assault,
    disaster, hatred, pollute, tragedy, divorce, jail, poverty, ugly, cancer, kill, rotten, vomit, agony,
    prison""")
# tests 3 and 4: the same list with bomb and evil in place of agony and prison
UNPLEASANT_3 = _words("""abuse, crash, filth, murder, sickness, accident, death, grief, poison, stink,
    assault, disaster, hatred, pollute, tragedy, bomb, divorce, jail, poverty, ugly, cancer, evil, kill,
    rotten, vomit""")
INSTRUMENTS = _words("""bagpipe, cello, guitar, lute, trombone, banjo, clarinet, harmonica, mandolin,
    trumpet, bassoon, drum, harp, oboe, tuba, bell, fiddle, harpsichord, piano, viola, bongo, flute, horn,
    saxophone, violin""")
WEAPONS = _words("""arrow, club, gun, missile, spear, axe, dagger, harpoon, pistol, sword, blade, dynamite,
    hatchet, rifle, tank, bomb, firearm, knife, shotgun, teargas, cannon, grenade, mace, slingshot, whip""")
# test 3 (Greenwald et al. 1998), the italic names removed
EUR_NAMES_3 = _words("""Adam, Harry, Josh, Roger, Alan, Frank, Justin, Ryan, Andrew, Jack, Matthew, Stephen,
    Brad, Greg, Paul, Jonathan, Peter, Amanda, Courtney, Heather, Melanie, Katie, Betsy, Kristin, Nancy,
    Stephanie, Ellen, Lauren, Colleen, Emily, Megan, Rachel""")
AFR_NAMES_3 = _words("""Alonzo, Jamel, Theo, Alphonse, Jerome, Leroy, Torrance, Darnell, Lamar, Lionel, Tyree,
    Deion, Lamont, Malik, Terrence, Tyrone, Lavon, Marcellus, Wardell, Nichelle, Shereen, Ebony, Latisha,
    Shaniqua, Jasmine, Tanisha, Tia, Lakisha, Latoya, Yolanda, Malika, Yvette""")
# tests 4 and 5 (Bertrand & Mullainathan 2004), Jay, Kristen, Tremayne and Latonya removed
EUR_NAMES_4 = _words("""Brad, Brendan, Geoffrey, Greg, Brett, Matthew, Neil, Todd, Allison, Anne, Carrie,
    Emily, Jill, Laurie, Meredith, Sarah""")
AFR_NAMES_4 = _words("""Darnell, Hakim, Jermaine, Kareem, Jamal, Leroy, Rasheed, Tyrone, Aisha, Ebony,
    Keisha, Kenya, Lakisha, Latoya, Tamika, Tanisha""")
# Nosek, Banaji & Greenwald (2002)
PLEASANT_9 = _words("joy, love, peace, wonderful, pleasure, friend, laughter, happy")
UNPLEASANT_9 = _words("agony, terrible, horrible, nasty, evil, war, awful, failure")
MALE_NAMES = _words("John, Paul, Mike, Kevin, Steve, Greg, Jeff, Bill")
FEMALE_NAMES = _words("Amy, Joan, Lisa, Sarah, Diana, Kate, Ann, Donna")
CAREER = _words("executive, management, professional, corporation, salary, office, business, career")
FAMILY = _words("home, parents, children, family, cousins, marriage, wedding, relatives")
MATH = _words("math, algebra, geometry, calculus, equations, computation, numbers, addition")
ARTS_7 = _words("poetry, art, dance, literature, novel, symphony, drama, sculpture")
MALE_TERMS_7 = _words("male, man, boy, brother, he, him, his, son")
FEMALE_TERMS_7 = _words("female, woman, girl, sister, she, her, hers, daughter")
SCIENCE = _words("science, technology, physics, chemistry, Einstein, NASA, experiment, astronomy")
ARTS_8 = _words("poetry, art, Shakespeare, dance, literature, novel, symphony, drama")
MALE_TERMS_8 = _words("brother, father, uncle, grandfather, son, he, his, him")
FEMALE_TERMS_8 = _words("sister, mother, aunt, grandmother, daughter, she, hers, her")
MENTAL = _words("sad, hopeless, gloomy, tearful, miserable, depressed")
PHYSICAL = _words("sick, illness, influenza, disease, virus, cancer")
TEMPORARY = _words("impermanent, unstable, variable, fleeting, short-term, brief, occasional")
PERMANENT = _words("stable, always, constant, persistent, chronic, prolonged, forever")
YOUNG_NAMES = _words("Tiffany, Michelle, Cindy, Kristy, Brad, Eric, Joey, Billy")
OLD_NAMES = _words("Ethel, Bernice, Gertrude, Agnes, Cecil, Wilbert, Mortimer, Edgar")

PLEASANT_UNPLEASANT = ("pleasant", "unpleasant")
_SPECS = [
    # number, name, (X, Y, A, B), labels, published (N, d, p)
    (1, "flowers_insects", (FLOWERS, INSECTS, PLEASANT, UNPLEASANT),
     ("flowers", "insects", *PLEASANT_UNPLEASANT), (25, 1.50, 1e-7)),
    (2, "instruments_weapons", (INSTRUMENTS, WEAPONS, PLEASANT, UNPLEASANT),
     ("instruments", "weapons", *PLEASANT_UNPLEASANT), (25, 1.53, 1e-7)),
    (3, "eur_afr_names", (EUR_NAMES_3, AFR_NAMES_3, PLEASANT, UNPLEASANT_3),
     ("European-American names", "African-American names", *PLEASANT_UNPLEASANT), (32, 1.41, 1e-8)),
    (4, "eur_afr_names_bertrand", (EUR_NAMES_4, AFR_NAMES_4, PLEASANT, UNPLEASANT_3),
     ("European-American names (Bertrand)", "African-American names (Bertrand)", *PLEASANT_UNPLEASANT),
     (16, 1.50, 1e-4)),
    (5, "eur_afr_names_nosek", (EUR_NAMES_4, AFR_NAMES_4, PLEASANT_9, UNPLEASANT_9),
     ("European-American names (Bertrand)", "African-American names (Bertrand)", "pleasant (Nosek)",
      "unpleasant (Nosek)"), (16, 1.28, 1e-3)),
    (6, "career_family", (MALE_NAMES, FEMALE_NAMES, CAREER, FAMILY),
     ("male names", "female names", "career", "family"), (8, 1.81, 1e-3)),
    (7, "math_arts", (MATH, ARTS_7, MALE_TERMS_7, FEMALE_TERMS_7),
     ("math", "arts", "male terms", "female terms"), (8, 1.06, 0.018)),
    (8, "science_arts", (SCIENCE, ARTS_8, MALE_TERMS_8, FEMALE_TERMS_8),
     ("science", "arts", "male terms", "female terms"), (8, 1.24, 1e-2)),
    (9, "mental_physical_disease", (MENTAL, PHYSICAL, TEMPORARY, PERMANENT),
     ("mental disease", "physical disease", "temporary", "permanent"), (6, 1.38, 1e-2)),
    (10, "young_old_names", (YOUNG_NAMES, OLD_NAMES, PLEASANT_9, UNPLEASANT_9),
     ("young people's names", "old people's names", "pleasant (Nosek)", "unpleasant (Nosek)"),
     (8, 1.21, 1e-2)),
]

#: The ten tests by name, in the paper's order.
TESTS: dict[str, CaliskanTest] = {
    name: CaliskanTest(number, WordSets(name, *sets), labels, Published(*published))
    for number, name, sets, labels, published in _SPECS
}
_ALIASES = {t.alias: t.name for t in TESTS.values()}


def all_names() -> list[str]:
    """Every accepted name: the ten names, then their aliases ``weat1``...``weat10``."""
    return [*TESTS, *_ALIASES]


def get_test(name: str) -> CaliskanTest:
    """A test by name (``career_family``) or by its number in the paper (``weat6``).

    >>> get_test("career_famly")
    Traceback (most recent call last):
    ...
    contextlens.errors.UnknownOptionError: unknown WEAT test 'career_famly' (did you mean 'career_family'?); valid values: flowers_insects, instruments_weapons, eur_afr_names, eur_afr_names_bertrand, eur_afr_names_nosek, career_family, math_arts, science_arts, mental_physical_disease, young_old_names, weat1, weat2, weat3, weat4, weat5, weat6, weat7, weat8, weat9, weat10
    """  # noqa: E501 (a doctest's expected output, printed whole)
    check_choice("WEAT test", name, all_names())
    return TESTS[_ALIASES.get(name, name)]
