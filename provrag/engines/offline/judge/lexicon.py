"""The judge's word lists and stem: hand-written, because the judge must run with no
downloaded lexicon (no NLI model offline; WordNet 3.0's antonyms are added from a table
shipped in the package, wordnet.py), and shared by its quantity reader (units after a
number) and its text analysis (content words, negation cues, antonyms)."""
from __future__ import annotations

from functools import lru_cache

from provrag.text.words import stem as snowball_stem

NEGATION = frozenset("""not no never none nobody nothing neither nor without cannot cant n't
dont doesnt didnt isnt wasnt arent werent hasnt havent hadnt wont wouldnt couldnt shouldnt
unable fail fails failed failing refuse refused refuses lack lacks lacked deny denied denies
""".split())

# Opposites that flip a claim without a negation word. Hand list, beside WordNet's (wordnet.py):
# the comparatives, directions and quantifiers WordNet does not pair. Each pair is symmetric,
# written as words and matched on their Snowball stems (`stem` below): a list once written as
# stems by hand missed every claim where the hand's stem was not Snowball's ("before" is "befor",
# "above" "abov", "only" "onli"), so before/after never turned a claim. No ("with", "without"):
# "without" is a negation cue, judged in its scope; as an unscoped pair any "met with"
# contradicted "without a permit".
_ANTONYM_WORDS = [
    ("more", "less"), ("more", "fewer"), ("most", "least"), ("increase", "decrease"),
    ("rise", "fall"), ("rose", "fell"), ("gain", "loss"), ("win", "lose"), ("won", "lost"),
    ("win", "defeat"), ("before", "after"), ("early", "later"), ("first", "last"),
    ("begin", "end"), ("start", "end"), ("start", "finish"), ("high", "low"), ("higher", "lower"),
    ("highest", "lowest"), ("large", "small"), ("larger", "smaller"), ("largest", "smallest"),
    ("big", "small"), ("bigger", "smaller"), ("biggest", "smallest"), ("long", "short"),
    ("longer", "shorter"), ("longest", "shortest"), ("old", "young"), ("older", "younger"),
    ("oldest", "youngest"), ("old", "new"), ("above", "below"), ("over", "under"),
    ("major", "minor"), ("maximum", "minimum"), ("positive", "negative"), ("success", "failure"),
    ("accept", "reject"), ("allow", "forbid"), ("allow", "prohibit"), ("include", "exclude"),
    ("open", "close"), ("alive", "dead"), ("male", "female"), ("man", "woman"), ("men", "women"),
    ("husband", "wife"), ("son", "daughter"), ("father", "mother"), ("brother", "sister"),
    ("king", "queen"), ("north", "south"), ("east", "west"), ("northern", "southern"),
    ("eastern", "western"), ("international", "domestic"), ("public", "private"),
    ("urban", "rural"), ("modern", "ancient"), ("true", "false"), ("right", "wrong"),
    ("good", "bad"), ("best", "worst"), ("better", "worse"), ("strong", "weak"), ("rich", "poor"),
    ("hot", "cold"), ("warm", "cool"), ("fast", "slow"), ("easy", "difficult"), ("easy", "hard"),
    ("entire", "partial"), ("always", "never"), ("every", "none"), ("all", "none"),
    ("present", "absent"), ("support", "oppose"), ("agree", "disagree"), ("like", "dislike"),
    ("love", "hate"), ("friend", "enemy"), ("ally", "enemy"), ("legal", "illegal"),
    ("import", "export"), ("buy", "sell"), ("bought", "sold"), ("arrive", "depart"),
    ("enter", "exit"), ("fiction", "nonfiction"), ("comedy", "drama"), ("comedy", "tragedy"),
    ("film", "television"), ("film", "series"), ("movie", "television"), ("single", "married"),
    ("only", "many"), ("exclusive", "primarily"), ("sole", "joint"), ("full", "part"),
    ("full-time", "part-time"), ("professional", "amateur"), ("same", "different"),
    ("similar", "different"), ("possible", "impossible"), ("like", "unlike"), ("able", "unable"),
    ("known", "unknown"), ("popular", "unpopular"), ("success", "unsuccessful"),
]

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "hundred": 100, "once": 1, "twice": 2, "thrice": 3, "single": 1, "double": 2, "triple": 3,
    "dozen": 12, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6,
    "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
}


@lru_cache(maxsize=100_000)
def stem(word: str) -> str:
    """A word's Snowball stem after the judge's folding: lower case, curly apostrophes made
    straight, a possessive "'s" and edge quotes or hyphens dropped ("Ward's" matches "Ward")."""
    w = word.lower().strip("'’-").replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    return snowball_stem(w)


ANTONYMS = [(stem(a), stem(b)) for a, b in _ANTONYM_WORDS]
