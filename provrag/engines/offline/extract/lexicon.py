"""The offline extractor's word lists: the rules of the package docstring, spelled out.

Closed classes (honorifics, connectors, determiners, modals, irregular past tenses) and the
last/first words that type a name (organisation, event and place words) are data, not code:
kept in one module so a rule can be read next to the words it applies to.
"""
from __future__ import annotations

from functools import lru_cache

from provrag.text.words import ENGLISH_STOP_WORDS

HONORIFICS = {
    "mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "sir", "dame", "lord", "lady",
    "president", "senator", "governor", "mayor", "minister", "chancellor", "general", "colonel",
    "major", "captain", "capt", "lieutenant", "lt", "sergeant", "sgt", "commander", "admiral",
    "agent", "officer", "detective", "inspector", "judge", "justice", "king", "queen", "prince",
    "princess", "pope", "father", "sister", "brother", "rev", "reverend", "saint", "uncle", "aunt",
    "gen", "col", "cmdr", "hon", "sen", "rep", "gov", "st",
}
# abbreviations written with a period that must not end a name ("Dr. Jordan Hayes")
HONORIFIC_ABBR = {"mr", "mrs", "ms", "dr", "prof", "st", "gen", "col", "capt", "lt", "sgt", "rev",
                  "hon", "sen", "rep", "gov", "cmdr", "jr", "sr"}
CONNECTORS = {"of", "de", "du", "des", "del", "della", "degli", "di", "da", "van", "von", "der",
              "den", "la", "le", "for", "on", "upon", "y", "al", "bin", "ibn", "the"}
ORG_WORDS = {
    "inc", "corp", "corporation", "company", "co", "ltd", "llc", "plc", "gmbh", "ag", "sa",
    "university", "college", "institute", "school", "academy", "agency", "department", "ministry",
    "committee", "commission", "council", "foundation", "association", "society", "squad", "team",
    "group", "bank", "party", "union", "army", "navy", "force", "forces", "corps", "bureau",
    "office", "board", "organization", "organisation", "consortium", "laboratory", "laboratories",
    "labs", "lab", "project", "church", "court", "parliament", "congress", "senate", "assembly",
    "government", "administration", "service", "services", "unit", "division", "club", "press",
    "network", "federation", "alliance", "league", "hospital", "police",
}
EVENT_FIRST = {"operation", "battle", "siege", "war", "treaty", "festival", "summit", "conference"}
EVENT_WORDS = {
    "war", "wars", "battle", "conference", "summit", "festival", "election", "elections",
    "revolution", "crisis", "games", "olympics", "championship", "cup", "meeting", "incident",
    "attack", "massacre", "expedition", "mission", "ceremony", "encounter", "descent", "briefing",
    "operation", "explosion", "launch", "crash", "event", "invasion", "raid", "rescue", "release",
    "earthquake", "storm", "flood", "trial", "debate", "speech", "visit", "tour", "strike",
    "protest", "uprising", "coup", "celebration", "funeral", "wedding", "checks", "check",
    "exercise", "test", "experiment", "investigation", "escape", "assault", "ambush", "detection",
}
GEO_WORDS = {
    "city", "town", "village", "county", "state", "states", "country", "kingdom", "republic",
    "province", "region", "district", "river", "lake", "sea", "ocean", "bay", "island", "islands",
    "mountain", "mountains", "mount", "valley", "desert", "forest", "park", "street", "road",
    "avenue", "square", "bridge", "station", "airport", "port", "harbor", "harbour", "base",
    "room", "hall", "building", "complex", "facility", "site", "compound", "tower", "castle",
    "palace", "house", "chamber", "corridor", "tunnel", "camp", "lab", "bunker", "continent",
    "coast", "peninsula", "canyon", "creek", "plains", "territory", "capital", "headquarters",
    "area", "zone", "quarter", "shore", "border", "land", "world", "planet", "earth", "center",
    "centre", "hub", "bay", "office", "lobby", "deck", "floor", "wing", "vault", "warehouse",
}
GEO_PREPS = {"in", "at", "near", "into", "inside", "outside", "across", "throughout", "from"}
# capitalised only as part of a longer name ("Operation: Dulce", "the Agency"): never a name alone
LONE_GENERIC = {
    "operation", "battle", "siege", "war", "treaty", "university", "college", "institute", "school",
    "academy", "agency", "department", "ministry", "committee", "commission", "council",
    "foundation", "association", "society", "squad", "team", "group", "bank", "party", "union",
    "office", "board", "project", "center", "centre", "city", "county", "state", "river", "lake",
    "island", "mount", "street", "road", "avenue", "station", "base", "room", "hall", "building",
    "chapter", "section", "part", "appendix", "figure", "table", "volume", "book", "article",
}
SPEECH_VERBS = {  # speech and human-only gestures: who does them is a person
    "said", "says", "say", "asked", "asks", "replied", "replies", "answered", "whispered", "muttered",
    "shouted", "nodded", "smiled", "frowned", "laughed", "sighed", "thought", "added", "admitted",
    "mused", "noted", "explained", "continued", "interjected", "agreed", "countered", "insisted",
    "urged", "exclaimed", "murmured", "remarked", "responded", "told", "declared", "announced",
    "argued", "cried", "suggested", "warned", "grinned", "chuckled", "confided", "retorted",
    "shrugged", "winked", "sneered", "scoffed", "snorted",
}
SUBJECT_PRONOUNS = {"i", "he", "she", "they", "we", "you", "it", "who", "which", "that"}
MODALS = {"to", "will", "would", "can", "could", "should", "shall", "must", "may", "might", "did",
          "does", "do", "didn", "doesn", "don", "won", "wouldn", "couldn", "shouldn", "cannot"}
BE_VERBS = {"is", "was", "were", "are", "am", "be", "been", "being", "seemed", "seems", "became",
            "become", "becomes", "looked", "felt", "remained", "appeared", "got", "get", "gets"}
DETERMINERS = {"a", "an", "the", "this", "that", "these", "those", "his", "her", "their", "its",
               "our", "my", "your", "every", "each", "some", "any", "no", "another", "such",
               "whose", "which", "what"}
NP_PRECEDERS = DETERMINERS | {"of", "in", "on", "at", "with", "by", "for", "from", "into", "onto",
                              "through", "about", "under", "over", "between", "among", "against",
                              "within", "without", "across", "toward", "towards", "upon", "via"}
# generic words that are never an entity on their own (key phrases or sentence-initial words)
GENERIC = {
    "thing", "things", "way", "ways", "time", "times", "lot", "lots", "kind", "kinds", "sort",
    "part", "parts", "one", "ones", "something", "anything", "everything", "nothing", "someone",
    "anyone", "everyone", "somebody", "moment", "moments", "fact", "case", "cases", "point",
    "end", "side", "place", "use", "number", "example", "instance", "yes", "okay", "ok", "oh",
    "hey", "well", "now", "then", "still", "even", "just", "also", "yet", "like", "said", "says",
    "let", "lets", "got", "get", "gets", "make", "makes", "made", "need", "needs", "know", "knew",
    "see", "saw", "seen", "look", "looks", "looked", "come", "came", "go", "went", "gone",
    "chapter", "section", "figure", "table", "page", "pages", "note", "notes", "see", "step",
    "steps", "item", "items", "line", "lines", "version", "day", "days", "year", "years", "today",
    "tomorrow", "yesterday", "mr", "mrs", "ms", "dr", "sir", "sure", "right", "left", "back",
    "away", "around", "here", "there", "where", "when", "why", "how", "what", "who", "whom",
    "good", "great", "new", "old", "first", "last", "next", "many", "much", "more", "most",
    "other", "others", "another", "same", "different", "certain", "own", "able", "likely",
    "really", "quite", "rather", "perhaps", "maybe", "indeed", "however", "therefore", "thus",
    "although", "though", "while", "whilst", "because", "since", "unless", "until", "whether",
    "having", "being", "doing", "getting", "going", "instead", "already", "almost", "again",
    "ever", "never", "always", "often", "soon", "later", "ago", "once", "twice", "enough", "too",
    "very", "anyway", "somehow", "together", "ahead", "aside", "apart", "forward", "upward",
    "eyes", "eye", "voice", "voices", "tone", "face", "faces", "hand", "hands", "head", "heads",
    "mind", "minds", "heart", "hearts", "words", "word", "thoughts", "thought", "people", "man",
    "men", "woman", "women", "person", "life", "lives", "fingers", "finger", "gaze", "breath",
    "ought", "concerning", "regarding", "including", "according", "following", "despite",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday",
    "earlier", "longer", "further", "rather", "else", "anymore", "underneath", "beneath",
    "s", "t", "d", "ll", "re", "ve", "m", "don", "didn", "doesn", "isn", "wasn", "weren", "aren",
    "couldn", "wouldn", "shouldn", "won", "can", "let's", "i'm", "i've", "i'll", "i'd",
}
# irregular past tenses: a closed class, so spelled out (regular ones end in -ed, handled by rule)
IRREGULAR_PAST = set("""
arose awoke bore beat became began bent bit bled blew broke brought built burnt burst bought caught
chose clung came crept cut dealt dug did drew dreamt drank drove ate fell fed felt fought found fled
flung flew forbade forgot forgave froze got gave went ground grew hung had heard hid hit held hurt
kept knelt knew laid led leant leapt learnt left lent let lay lit lost made meant met paid put quit
read rode rang rose ran said saw sought sold sent set shook shone shot showed shrank shut sang sank
sat slept slid slung spoke sped spent spun spat split spread sprang stood stole stuck stung strode
struck swore swept swam swung took taught tore told thought threw understood woke wore wove wept won
wound wrote
""".split())

# abstract nominalisations ("anticipation", "stillness", "gravity"): a key phrase on their
# own says little about what a text unit is about, so a one-word phrase must not be one
ABSTRACT_SUFFIXES = ("tion", "sion", "ness", "ment", "ance", "ence", "ism", "ship", "hood", "dom")
DEMONYM_SUFFIXES = ("an", "ish", "ese", "ern", "ic")  # "British", "Japanese": adjectives before a noun
ADJECTIVE_SUFFIXES = ("ed", "ing", "ous", "ive", "ful", "less", "ic", "al", "able", "ible")


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    """scikit-learn's English stop words plus GENERIC: words never an entity or a phrase's part."""
    # scikit-learn's list also holds content nouns ("system", "computer", "fire") that can be terms
    return (ENGLISH_STOP_WORDS - _NOT_STOP) | GENERIC


_NOT_STOP = {"system", "computer", "fire", "bill", "interest", "mill", "name", "amount", "front",
             "top", "bottom", "detail", "con"}
