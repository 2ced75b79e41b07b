"""The offline engine's entity/relationship extractor: statistics instead of an LLM.

What it finds in a batch of text units (GraphRAG's output format, one dict per unit):
- **Names**: runs of Capitalised words with connectors between them ("Bank of England",
  "House of Representatives": of, de, van, von, …); honorifics are stripped and kept as a
  PERSON cue. A capitalised word at a sentence start (or after an opening quote, a dash, a
  colon, a list bullet; every word of a Title Case heading) is ambiguous: it counts only if
  the batch also capitalises it mid-sentence at least as often as it writes it in lower case,
  so "The", "When", "Focus" at sentence starts never become entities. A lone given name or
  surname ("Mercer") is merged into the one person name of the batch it belongs to ("Alex
  Mercer"): a cheap coreference step that keeps one person from becoming three nodes. A
  demonym only ever used before a noun ("British subjects") is an adjective, not a name.
  URLs, e-mail addresses and paths are masked first ("HTTPS" is not an entity).
- **Acronyms**: 2–6 capital letters/digits ("FAQ", "GNU", "LED"), plural "s" stripped,
  Roman numerals excluded.
- **Key phrases**: noun-ish n-grams (≤ 3 words) from runs of lower-case content words, cut at
  stop words and punctuation. No POS tagger ships offline, so a shallow parse with corpus
  cues does the job: a run right after a subject pronoun, "to", a modal or a form of "be"
  starts with a verb or a predicate; one right before a determiner ends with a verb ("monitors
  cast a …"); -ly adverbs, irregular past tenses and a leading gerund are cut; the head (last
  word) must not be used as a verb more than as a noun, nor be an -ed/-ing/adjective-suffixed
  word the batch never puts after a determiner. A phrase is the run's last ≤ 3 words,
  shortened to a nested suffix the batch uses more often ("sterile briefing room" → "briefing
  room", C-value's idea) and merged with its plural. A one-word phrase must be a concrete-ish
  noun: not an abstract nominalisation (-tion, -ness, -ment, …), not a generic word, and seen
  ending a noun phrase or in the plural.
- **Selection**: TF-IDF over the batch × log(1 + the phrase's count in the batch) × a length
  bonus ranks each unit's phrases; the top `keyphrases_per_unit` of every unit form the
  batch's phrase vocabulary, and each unit then reports every vocabulary phrase it contains
  (names first, at most `max_entities_per_unit`), so an entity's text units are complete.
- **Types** (first matching rule wins): PERSON — an honorific before it (Mr, Dr, Agent,
  Captain, …); ORGANIZATION — last word an organisation word (Inc, University, Agency, Squad,
  Department, …); EVENT — first word "Operation"/"Battle"/… or last word an event word (War,
  Conference, Mission, Encounter, …); GEO — last word a place word (City, River, Base, Room,
  Street, …); key phrases stop here as CONCEPT, acronyms as ORGANIZATION when written "the
  XYZ", else CONCEPT; a name next to a speech verb ("…, Cruz said") — PERSON; a name mostly
  after in/at/near/into/from or before a place noun ("the Dulce base") — GEO; a 2–3 word
  name seen twice whose words the batch never writes in lower case (no acronym among them) —
  PERSON; else CONCEPT.
- **Descriptions**: the (first two) sentences mentioning the entity, trimmed.
- **Relationships**: two entities in one sentence, the sentence(s) as description, the weight
  the number of the unit's sentences where they co-occur. In a "sentence" naming more than 8
  entities (a list or table row of PDF text) each is linked to its next 8 in reading order only.

Sentences come from a regex splitter with an abbreviation guard (see `sentences`: ~80× faster
than pysbd here, with the same sentence ends on 99 % of a novella's sentences).
"""
from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from functools import lru_cache

from provrag.config import Config

# ---- word lists (the rules above, spelled out) ------------------------------------------

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
_WORD = re.compile(r"[^\W\d_][\w]*(?:[-'’.][^\W_][\w]*)*|\d[\w.,]*")
_URLISH = re.compile(r"(?:[a-z][a-z0-9+.-]*://|www\.)\S+|\S+@\S+\.\w+|(?<!\w)(?:~|\.{0,2})/[\w./~-]+|\b[\w-]+(?:\.[\w-]+)+/\S*", re.I)
_ACRONYM = re.compile(r"^[A-Z][A-Z0-9&]{1,5}$")
_ROMAN = re.compile(r"^(?=[MDCLXVI])M*(C[MD]|D?C{0,3})(X[CL]|L?X{0,3})(I[XV]|V?I{0,3})$")
_INITIAL_GAP = re.compile(r"[\"“”‘(\[—–:;*#_>|•]|^\s*-|\n\s*\n")


@lru_cache(maxsize=1)
def stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    # scikit-learn's list also holds content nouns ("system", "computer", "fire") that can be terms
    return (frozenset(ENGLISH_STOP_WORDS) - _NOT_STOP) | GENERIC


_NOT_STOP = {"system", "computer", "fire", "bill", "interest", "mill", "name", "amount", "front",
             "top", "bottom", "detail", "con"}


def norm_key(text: str) -> str:
    """Case/whitespace/punctuation-insensitive key (the merge key of extract.py too)."""
    return " ".join(re.sub(r"[^\w]+", " ", text.casefold().replace("_", " ")).split())


# ---- tokens and sentences -------------------------------------------------------------

# Sentence ends: . ! ? … (+ closing quotes/brackets) before whitespace, blank lines, and line
# starts of list items/headings. Hand-written rather than pysbd: measured on the Operation
# Dulce novella (95 units, 134 k chars) pysbd took 0.56–1.8 s, this 0.02 s (~80× faster) and
# agreed on 1,125 of pysbd's 1,136 sentence ends; it also splits inside quoted speech, where
# pysbd does not. The abbreviation guard keeps "Dr. Jordan Hayes" in one sentence.
_SENT_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)|\n\s*\n|\n(?=\s*(?:[-*•#>|]|\d+[.)]\s))")
_ABBR_BEFORE = re.compile(r"([\w.]+)\.$")
ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "vs", "etc", "e.g", "i.e", "inc", "ltd", "co",
    "corp", "no", "nos", "fig", "figs", "cf", "al", "gen", "col", "capt", "lt", "sgt", "rev", "hon",
    "sen", "rep", "gov", "dept", "univ", "vol", "pp", "p", "ed", "eds", "approx", "est", "mt", "ft",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s",
    "u.k", "ph.d", "a.m", "p.m", "op", "ch", "sec", "ca", "viz", "resp", "incl", "max", "min",
}


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence spans (start, end) of text, surrounding whitespace trimmed."""
    from provrag.text.sentences import trim_spans

    raw, start = [], 0
    add = lambda a, b: raw.append((a, b))  # noqa: E731 - trimmed at the end

    for m in _SENT_END.finditer(text):
        if text[m.start()] == ".":
            w = _ABBR_BEFORE.search(text, max(start, m.start() - 12), m.start() + 1)
            if w and (w.group(1).lower() in ABBREVIATIONS or (len(w.group(1)) == 1 and w.group(1).isupper())):
                continue  # "Dr. Hayes", "J. R. R. Tolkien", "e.g. this"
        if text[m.start()] in ".!?…":
            nxt = text[m.end():m.end() + 3].lstrip()
            if nxt[:1].islower():
                continue  # "the U.S. economy", "… and then"
        add(start, m.end())
        start = m.end()
    add(start, len(text))
    return trim_spans(text, raw)


def _acronym(text: str) -> bool:
    """"FAQ", "GNU", "LEDs" — not a Roman numeral ("XIV")."""
    base = text[:-1] if len(text) > 2 and text.endswith("s") and text[:-1].isupper() else text
    return bool(_ACRONYM.match(base)) and not _ROMAN.match(base)


class _Tok:
    __slots__ = ("text", "low", "start", "end", "cap", "acr", "initial", "poss", "brk")

    def __init__(self, text, start, end, initial, brk):
        poss = text.endswith(("'s", "’s", "'S", "’S")) and len(text) > 2
        if poss:
            text, end = text[:-2], end - 2
        self.text, self.low, self.start, self.end = text, text.lower(), start, end
        self.cap = text[:1].isupper()
        self.acr = self.cap and text[1:2].isupper() and _acronym(text)
        self.initial, self.poss, self.brk = initial, poss, brk  # brk: punctuation before it


def _tokens(text: str, s: int, e: int) -> list[_Tok]:
    toks: list[_Tok] = []
    prev_end = s
    for m in _WORD.finditer(text, s, e):
        gap = text[prev_end:m.start()]
        g = gap.strip()
        abbr = g == "." and toks and toks[-1].low in HONORIFIC_ABBR  # "Dr. Hayes" goes on
        initial = not toks or bool(_INITIAL_GAP.search(gap)) or ("." in g or "!" in g or "?" in g) and not abbr
        brk = not toks or (bool(g) and not abbr) or toks[-1].poss
        toks.append(_Tok(m.group(), m.start(), m.end(), initial, brk))
        prev_end = m.end()
    return toks


# ---- the extractor ---------------------------------------------------------------------

class _Batch:
    """Everything extracted from one batch of units, before selection."""

    def __init__(self, units: list[tuple[str, str]], stop: frozenset[str]):
        self.sents: list[list[tuple[int, int]]] = []
        self.toks: list[list[list[_Tok]]] = []
        self.lower = Counter()     # word used in lower case
        self.cap_mid = Counter()   # word capitalised away from a sentence start
        self.np_cue = Counter()    # word right after a determiner ("the briefing", "the anomaly")
        self.head_cue = Counter()  # word ends a noun phrase opened by a determiner/preposition
        self.verb_cue = Counter()  # word follows a subject pronoun, "to" or a modal
        for _, text in units:
            spans = sentences(text)
            # URLs, e-mail addresses and paths are not prose: their words must not become
            # names ("HTTPS") — masked with a non-space so they also break names and phrases
            masked = _URLISH.sub(lambda m: "~" * len(m.group()), text)
            tl = [_tokens(masked, a, b) for a, b in spans]
            for toks in tl:
                if len(toks) >= 3 and sum(t.cap for t in toks) >= 0.5 * len(toks):
                    for t in toks:  # a heading or a Title Case list: capitals say nothing here
                        t.initial = True
            self.sents.append(spans)
            self.toks.append(tl)
            for toks in tl:
                for i, t in enumerate(toks):
                    if t.text.islower():
                        self.lower[t.low] += 1
                    elif t.cap and not t.initial:
                        self.cap_mid[t.low] += 1
                    if i and not t.brk:
                        p = toks[i - 1].low
                        if p in SUBJECT_PRONOUNS - {"that", "which"} or p in MODALS:
                            self.verb_cue[t.low] += 1
                        if p in DETERMINERS:
                            self.np_cue[t.low] += 1
                        if p in NP_PRECEDERS and t.text.islower() and t.low not in stop and not t.low.endswith("ly"):
                            j = i  # "the sterile briefing room": the last word is the head noun
                            while (j + 1 < len(toks) and not toks[j + 1].brk and toks[j + 1].text.islower()
                                   and toks[j + 1].low not in stop and toks[j + 1].low.isalpha()
                                   and not toks[j + 1].low.endswith("ly")):
                                j += 1
                            self.head_cue[toks[j].low] += 1


def _is_name_word(t: _Tok, b: _Batch, stop) -> bool:
    if t.acr:
        return True
    if not t.cap or t.text.isdigit():
        return False
    if t.initial:
        # sentence-initial: a name only if the batch capitalises it elsewhere too
        return b.cap_mid[t.low] > 0 and b.cap_mid[t.low] >= b.lower[t.low] and t.low not in stop
    return True


def _honorific(t: _Tok) -> bool:
    """"Dr", "Agent", "Agents" — written as a word, not as an acronym ("MS Windows")."""
    return not t.acr and (t.low in HONORIFICS or (t.low.endswith("s") and t.low[:-1] in HONORIFICS))


def _names(toks: list[_Tok], b: _Batch, stop) -> list[tuple[int, int, bool]]:
    """Spans (i, j) of name tokens in one sentence, and whether an honorific preceded them."""
    out, i, n = [], 0, len(toks)
    while i < n:
        t = toks[i]
        if not (t.cap and (t.acr or _is_name_word(t, b, stop) or t.low in HONORIFICS)):
            i += 1
            continue
        j = i + 1
        while j < n and not toks[j].brk:
            if toks[j].cap and not toks[j].text.isdigit():
                j += 1
                continue
            k = j  # connectors between capitalised words ("Bank of the West")
            while k < n and not toks[k].brk and toks[k].low in CONNECTORS and k - j < 2:
                k += 1
            if k > j and k < n and not toks[k].brk and toks[k].cap and toks[j].low != "the":
                j = k + 1
                continue
            break
        span = [i, j]
        while span[0] < span[1] and toks[span[0]].initial and not _is_name_word(toks[span[0]], b, stop):
            span[0] += 1  # drop a sentence-initial common word ("The", "When", "Focus")
        hon = False
        while (span[1] - span[0] > 1 and _honorific(toks[span[0]])
               and toks[span[0] + 1].low not in CONNECTORS):  # "King of the Belgians" stays whole
            span[0] += 1
            hon = True
        if span[1] - span[0] == 1 and _honorific(toks[span[0]]):
            span[0] += 1  # a bare honorific ("Agent", "Doctor") is not a name
        while span[1] - span[0] > 1 and toks[span[0]].low in stop and not toks[span[0]].acr:
            span[0] += 1  # "The R Graphics Package" → "R Graphics Package"
        while span[1] > span[0] and toks[span[1] - 1].low in CONNECTORS:
            span[1] -= 1
        s0, s1 = span
        words = [toks[k].low for k in range(s0, s1) if not toks[k].acr]
        if words and all(w in stop for w in words):
            s1 = s0
        if s1 - s0 == 1 and not toks[s0].acr:
            w = toks[s0].low
            if w in stop or w in LONE_GENERIC or w in HONORIFICS or len(w) < 2 or b.lower[w] > b.cap_mid[w]:
                s1 = s0
        if s1 > s0:
            out.append((s0, s1, hon))
        i = max(j, i + 1)
    return out


def _phrase_runs(toks: list[_Tok], taken: set[int], b: _Batch, stop) -> list[tuple[int, int]]:
    """Runs of lower-case content words: the raw material of key phrases (shallow parse)."""
    runs, i, n = [], 0, len(toks)

    def content(k):
        t = toks[k]
        return (k not in taken and (t.text.islower() or (t.initial and t.cap and not t.acr and b.lower[t.low] > 0))
                and t.low not in stop and len(t.low) > 2 and t.low.replace("-", "").isalpha()
                and not _adverb(t.low, b) and t.low not in IRREGULAR_PAST)

    while i < n:
        if not content(i):
            i += 1
            continue
        j = i + 1
        while j < n and not toks[j].brk and content(j):
            j += 1
        a, e = i, j
        prev = toks[a - 1].low if a and not toks[a].brk else ""
        if prev in SUBJECT_PRONOUNS - {"that", "which"} or prev in MODALS or prev in BE_VERBS:
            a += 1  # "he scanned …", "to fight …", "was unsettling": a verb or predicate, not a noun
        if e - a > 1 and toks[a].low.endswith("ing") and b.np_cue[toks[a].low] == 0:
            a += 1  # "detecting electronic anomalies": a gerund taking an object
        nxt = toks[e].low if e < n and not toks[e].brk else ""
        if nxt in DETERMINERS and e > a:
            e -= 1  # "monitors cast a …": the last word takes an object, so it is a verb
        while e > a and _not_a_head(toks[e - 1].low, b):
            e -= 1
        if e > a:
            runs.append((a, e))
        i = j
    return runs


# abstract nominalisations ("anticipation", "stillness", "gravity"): a key phrase on their
# own says little about what a text unit is about, so a one-word phrase must not be one
_ABSTRACT = ("tion", "sion", "ness", "ment", "ance", "ence", "ism", "ship", "hood", "dom")
_WINDOW = 8
_DEMONYM = ("an", "ish", "ese", "ern", "ic")
_ADJ_SUFFIX = ("ed", "ing", "ous", "ive", "ful", "less", "ic", "al", "able", "ible")


def _not_a_head(w: str, b: _Batch) -> bool:
    """A phrase's last word must be noun-ish: used as a verb more than as a noun, or an
    -ed/-ing/adjective-suffixed word the batch never puts after a determiner, is not."""
    return b.verb_cue[w] > b.np_cue[w] or (w.endswith(_ADJ_SUFFIX) and b.np_cue[w] == 0)


def _adverb(w: str, b: _Batch) -> bool:
    """-ly words are adverbs/adjectives unless the batch puts them after a determiner ("the anomaly")."""
    return w.endswith("ly") and len(w) > 4 and b.head_cue[w] == 0


def _type_of(words: list[str], cues: Counter, b: _Batch, is_name: bool, acronym: bool) -> str:
    """The type rules of the module docstring, in order (first match wins)."""
    last, first = words[-1].lower(), words[0].lower()
    if cues["hon"] and is_name and not acronym:
        return "PERSON"
    if last in ORG_WORDS and (is_name or len(words) > 1):
        return "ORGANIZATION"
    if first in EVENT_FIRST and len(words) > 1 or last in EVENT_WORDS and (is_name or len(words) > 1):
        return "EVENT"
    if last in GEO_WORDS and (is_name or len(words) > 1):
        return "GEO"
    if not is_name or acronym:
        return "ORGANIZATION" if acronym and cues["the"] else "CONCEPT"
    if cues["speech"]:
        return "PERSON"
    if cues["geo"] and cues["geo"] * 2 >= cues["n"]:
        return "GEO"
    if cues["n"] >= 2 and 2 <= len(words) <= 3 and all(b.lower[w.lower()] == 0 and not w.isupper() for w in words):
        return "PERSON"
    return "CONCEPT"


def _trim(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit - 1)
    return text[: cut if cut > limit // 2 else limit - 1].rstrip(",;: ") + "…"


def extract_units(units: list[tuple[str, str]], cfg: Config) -> list[dict]:
    """Entities and relationships of each (unit_id, text), GraphRAG's format, input order."""
    ecfg = cfg.extract
    cap = int(ecfg.max_entities_per_unit)
    max_phrases = int(ecfg.keyphrases_per_unit)
    desc_chars = int(ecfg.description_max_chars)
    stop = stop_words()
    b = _Batch(units, stop)

    # 1. mentions per unit: (sentence, key, surface, kind, token position) + type cues per key;
    #    phrase runs per unit: (sentence, words, token position)
    mentions: list[list[tuple[int, str, str, str, int]]] = []
    cues: dict[str, Counter] = defaultdict(Counter)
    runs_all: list[list[tuple[int, list[str], int]]] = []
    for u, tl in enumerate(b.toks):
        ms, rs = [], []
        for si, toks in enumerate(tl):
            taken: set[int] = set()
            for s0, s1, hon in _names(toks, b, stop):
                words = [t.text for t in toks[s0:s1]]
                acr = s1 - s0 == 1 and toks[s0].acr
                surface = words[0][:-1] if acr and words[0].endswith("s") and words[0][:-1].isupper() else " ".join(words)
                key = norm_key(surface)
                if not key:
                    continue
                ms.append((si, key, surface, "acronym" if acr else "name", s0))
                taken.update(range(s0, s1))
                c = cues[key]
                c["n"] += 1
                c["hon"] += hon
                prev = toks[s0 - 1].low if s0 and not toks[s0].brk else ""
                nxt = [t.low for t in toks[s1:s1 + 2] if not t.brk or t is toks[s1]]
                c["speech"] += prev in SPEECH_VERBS or any(w in SPEECH_VERBS for w in nxt)
                # "in Dulce", "the Dulce base": place cues (a following place noun counts double)
                c["geo"] += (prev in GEO_PREPS) + 2 * (s1 < len(toks) and not toks[s1].brk
                                                      and toks[s1].text.islower() and toks[s1].low in GEO_WORDS)
                c["the"] += prev == "the"
                c["attr"] += (s1 < len(toks) and not toks[s1].brk and toks[s1].text.islower()
                              and toks[s1].low not in stop)
            for a, e in _phrase_runs(toks, taken, b, stop):
                rs.append((si, [toks[k].low for k in range(a, e)], a))
        mentions.append(ms)
        runs_all.append(rs)

    # 2. key phrases: the longest suffix (≤ 3 words) of each run — the head noun ends an
    #    English noun phrase — shortened to a nested suffix the batch uses more often
    #    ("sterile briefing room" → "briefing room"), plural → singular when the batch has both
    suffix_freq = Counter()
    for rs in runs_all:
        for _, words, _ in rs:
            for k in range(1, min(3, len(words)) + 1):
                suffix_freq[" ".join(words[-k:])] += 1
    unit_phrases: list[Counter] = []
    phrase_sent: list[dict[str, list[tuple[int, int]]]] = []  # (sentence, token position)
    phrase_surf: dict[str, Counter] = defaultdict(Counter)
    for rs in runs_all:
        tf, where = Counter(), defaultdict(list)
        for si, words, pos in rs:
            w = words[-3:]
            while len(w) > 2 and suffix_freq[" ".join(w[1:])] > suffix_freq[" ".join(w)]:
                w = w[1:]
            if len(w) == 1 and (w[0] in stop or len(w[0]) < 4 or w[0].endswith(_ABSTRACT)
                                or not (b.head_cue[w[0]] or w[0].endswith("s"))):
                continue  # a one-word phrase must be a concrete-ish noun: seen after a determiner, or plural
            p = _singular(" ".join(w), suffix_freq)
            phrase_surf[p][" ".join(w)] += 1
            tf[p] += 1
            where[p].append((si, pos))
        unit_phrases.append(tf)
        phrase_sent.append(where)

    # 3. lone given names / surnames → the one person name of the batch they belong to
    person_names: dict[str, set[str]] = defaultdict(set)
    all_names = {k for ms in mentions for _, k, _, kind, _ in ms if kind == "name"}
    for k in all_names:
        parts = k.split()
        if len(parts) >= 2 and _type_of(parts, cues[k], b, True, False) == "PERSON":
            person_names[parts[0]].add(k)
            person_names[parts[-1]].add(k)
    alias = {k: next(iter(person_names[k])) for k in all_names
             if " " not in k and len(person_names.get(k, ())) == 1
             and _type_of([k], cues[k], b, True, False) in ("PERSON", "CONCEPT")}
    for k, full in alias.items():
        cues[full].update(cues[k])
    name_surf: dict[str, Counter] = defaultdict(Counter)
    for ms in mentions:
        for _, key, surface, _, _ in ms:
            if norm_key(surface) == alias.get(key, key):
                name_surf[key][surface] += 1
    name_keys = {alias.get(k, k) for ms in mentions for _, k, _, _, _ in ms}

    # 4. selection: TF-IDF over the batch × log(1 + batch count) (a phrase the batch repeats is
    #    more likely a term than a one-off) × length bonus (multi-word phrases are more specific)
    df = Counter(p for tf in unit_phrases for p in tf)
    cf = Counter()
    for tf in unit_phrases:
        cf.update(tf)
    n = max(1, len(units))
    score = {p: (math.log((1 + n) / (1 + df[p])) + 1) * math.log1p(cf[p]) * (1 + 0.5 * p.count(" ")) for p in cf}
    ranked = [sorted((p for p in tf if p not in name_keys), key=lambda p: (-tf[p] * score[p], p)) for tf in unit_phrases]
    vocab = {p for r in ranked for p in r[:max_phrases]}

    results = []
    for u, (_, text) in enumerate(units):
        spans = b.sents[u]
        sents_of: dict[str, list[tuple[int, int]]] = defaultdict(list)  # (sentence, position)
        kinds: dict[str, str] = {}
        for si, key, _, kind, pos in mentions[u]:
            key = alias.get(key, key)
            kinds.setdefault(key, kind)
            sents_of[key].append((si, pos))
        # a demonym only ever used before a noun ("British subjects") is an adjective, not a name
        keys = [k for k in kinds if not (kinds[k] == "name" and " " not in k and k.endswith(_DEMONYM)
                                         and cues[k]["attr"] == cues[k]["n"])][:cap]
        for p in ranked[u]:
            if len(keys) >= cap:
                break
            if p in vocab:
                keys.append(p)
                kinds[p] = "phrase"
                sents_of[p] = phrase_sent[u][p]
        records, title_of = [], {}
        for key in keys:
            kind, sids = kinds[key], sorted({si for si, _ in sents_of[key]})
            surf = name_surf.get(key) or phrase_surf.get(key)  # the most frequent surface form
            title = sorted(surf.items(), key=lambda x: (-x[1], x[0]))[0][0] if surf else key
            title_of[key] = title
            desc = " ".join(text[spans[s][0]:spans[s][1]] for s in sids[:2])
            records.append({"title": title, "description": _trim(desc, desc_chars),
                            "type": _type_of(title.split(), cues[key], b, kind != "phrase", kind == "acronym")})
        # 5. relationships: entities sharing a sentence; weight = number of such sentences
        by_sent: dict[int, dict[str, int]] = defaultdict(dict)  # sentence -> entity -> first position
        for key in keys:
            for si, pos in sents_of[key]:
                by_sent[si][key] = min(pos, by_sent[si].get(key, pos))
        pairs: dict[tuple[str, str], list[int]] = {}  # first-seen orientation -> sentences
        oriented: dict[tuple[str, str], tuple[str, str]] = {}
        for si in sorted(by_sent):
            ks = sorted(by_sent[si], key=lambda k: (by_sent[si][k], k))
            # a "sentence" naming more than _WINDOW entities is a list or a table row (PDF text
            # without punctuation): there each entity is linked to its next _WINDOW neighbours
            # in reading order instead of to all of them, so lists do not become huge cliques
            reach = len(ks) if len(ks) <= _WINDOW else _WINDOW
            for i in range(len(ks)):
                for j in range(i + 1, min(len(ks), i + 1 + reach)):
                    pair = oriented.setdefault((min(ks[i], ks[j]), max(ks[i], ks[j])), (ks[i], ks[j]))
                    pairs.setdefault(pair, []).append(si)
        rels = [{"source": title_of[a], "target": title_of[c], "weight": float(len(ss)),
                 "description": _trim(" ".join(text[spans[s][0]:spans[s][1]] for s in ss[:2]), desc_chars)}
                for (a, c), ss in pairs.items()]
        results.append({"entities": records, "relationships": rels})
    return results


def _singular(p: str, freq: Counter) -> str:
    """"protocols" → "protocol" when the batch also uses the singular (so both merge)."""
    for plural, single in (("ies", "y"), ("es", ""), ("s", "")):
        if p.endswith(plural) and not p.endswith("ss"):
            cand = p[: -len(plural)] + single
            if freq[cand] > 0:
                return cand
    return p


def summarize(title: str, descriptions: list[str], cfg: Config) -> str:
    """Extractive summary: the description sentences closest to their centroid, kept in first-seen
    order, up to [extract].description_max_chars.

    Descriptions are split into sentences and de-duplicated first (overlapping text units
    yield the same sentence twice). Centrality by shared content words (a bag-of-words
    centroid) is written by hand: inputs are a handful of sentences, where a vectorizer's
    set-up cost would dominate.
    """
    limit = int(cfg.extract.description_max_chars)
    stop = stop_words()
    seen, sents = set(), []
    for d in descriptions:
        d = " ".join(str(d or "").split())
        for a, b in sentences(d):
            sent = d[a:b].rstrip("…").strip()
            key = norm_key(sent)
            if key and key not in seen:
                seen.add(key)
                sents.append(sent)
    if not sents:
        return ""
    bags = [{w for w in re.findall(r"\w+", x.lower()) if w not in stop} for x in sents]
    dfreq = Counter(w for bag in bags for w in bag)
    score = [sum(dfreq[w] for w in bag) / math.sqrt(len(bag) or 1) for bag in bags]
    chosen, size = [], 0
    for i in sorted(range(len(sents)), key=lambda i: (-score[i], i)):
        if chosen and size + len(sents[i]) + 1 > limit:
            continue
        chosen.append(i)
        size += len(sents[i]) + 1
    return _trim(" ".join(sents[i] for i in sorted(chosen)), limit)
