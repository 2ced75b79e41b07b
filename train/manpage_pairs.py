"""Option answer pairs from Debian's manual pages (train/prepare.py's "manpages" source).

Why: a manual answers "What does the -K option of dot do?" and many "how do I" questions with an
option's or a command's line: the option, then what it does, run together as a PDF's text flow
gives it ("−Klayout override the default layout engine implied by the command name."). The reader
learned answers from encyclopedia, news and reviews and reads that line at 0.06
(bench/results/definition-first-2026-12-01.md); all six option questions of a new user's session
over Graphviz's manual pages were answered wrong. A manual page's options are that register, and
the page labels itself:

- "What does the -a option of ls do?" (six wordings) → the option's line, its tag and the first
  sentence of its description; negatives: the page's other option lines (a line that names the
  asked option first: "with -l, print the author of each file"), its SYNOPSIS, its NAME line;
- "How do I <what the description says> with ls?", when the description opens with a verb that
  says what the option does → the same line; negatives: the other option lines that share the most
  words with the question;
- an option the page does not have ("What does the -j option of ls do?") → every candidate a
  negative: a page that discusses options is not an answer about another one.
Each line is shown as a PDF prints it half the time (groff's "−" for "-", the tag run into the
description), otherwise as provrag reads a definition ("-a, --all: do not ignore …"), and read
under the section's heading and the line before it. A package is one group, so its pages fall in
one of train / calib / test.

Sources: 40 packages of everyday command-line tools, pinned with the sha256 of their .deb
(bookworm, amd64), fetched with `apt-get download`. None is a program an evaluation set asks about:
no bash, gnuplot, GLPK, Octave, Maxima, R, MetaPost or TeX (eval/manuals, eval/texlive, the held-out
manuals), no Graphviz or SQLite (the new-user sessions that measure option questions), no Debian
packaging tool (eval/manuals' Debian manuals). A set asking about ls, grep, tar, gzip, find, ssh or
curl measures pages trained on (bench/results/train-manpages-2026-12-02.md says which figures). Pages are rendered with the system's groff
(`groff -man -Tutf8`), which every Debian system with man-db has.
"""
from __future__ import annotations

import gzip
import hashlib
import random
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

from docs_pairs import fetch_deb, sentences  # noqa: E402  (train/ is the script's folder)

# package: (version, sha256 of the .deb apt-get download leaves); man pages of sections 1 and 8
MANPAGE_DEBS = {
    "bind9-dnsutils": ("1:9.18.49-1~deb12u3", "b233212daebef9f7018c229d69c57973caf60318b92a19383835f651e0bd3944"),
    "bzip2": ("1.0.8-5+b1", "438871b3f5c5c7a357a9840951dab9dab8db7eb1ff760a563226fafa111b99e5"),
    "coreutils": ("9.1-1", "61038f857e346e8500adf53a2a0a20859f4d3a3b51570cc876b153a2d51a3091"),
    "cpio": ("2.13+dfsg-7.1", "73d4a22bdd7eb6be1e480d6884b103eb500cfd539cc20ae0f3e44dd8b0614798"),
    "curl": ("7.88.1-10+deb12u15", "0dd9b6bf7a0bd11af2d68a52ec44c2a223fa7c11f9104c36ce1047e1137d4a8f"),
    "diffutils": ("1:3.8-4", "8bdfedc14c1035e3750e9f055ac9c1ecd9b5d05d9e6dc6466c4e9237eef407dd"),
    "e2fsprogs": ("1.47.0-2+b2", "fedd424691c08ef0739729026be298e7be8236337bf8e031b3c7ec66794e6fc2"),
    "file": ("1:5.44-3", "2c57221bf8cc0ff5d2295ececb9215cc1b9ff9040dacb152c385bba3087ab1df"),
    "findutils": ("4.9.0-4", "5dd86bd0af4aa73f067dfd6b8339dd868f2dd84056aa79db29d1206d4fbc5e04"),
    "gawk": ("1:5.2.1-2", "9cd63c1b35ff082092c221a23dcb167f72c4d1c3de3a42e11f16181f42ab3b55"),
    "git-man": ("1:2.39.5-0+deb12u3", "904dbd8dbc3db34c6780fb0abfe35816d4a90a490126ef0a055a77a0c5dcab82"),
    "grep": ("3.8-5", "3264acea728df3c48a54f20e9291b965130e306b9d00adac76647049da7196df"),
    "gzip": ("1.12-1", "eabec1dde2834f72540d7b93fc5df2625f52611c06d93d61f5cdb12480e0e6a3"),
    "htop": ("3.2.2-2", "03f3b6ed16e96621add9577c92349d7000d13b2ae341faa28a3dfe7f7a0ff7d2"),
    "iproute2": ("6.1.0-3", "1204b29e916e836267096d0b9d778106752f821ebde0d281539008b4386d9070"),
    "iputils-ping": ("3:20221126-1+deb12u1", "5a206d74e2147990e08b89d09a4655e59a17222e0513a309a48e16ed2281589b"),
    "jq": ("1.6-2.1+deb12u3", "c25f3fda201207ed98b1d63686f2d81b9dfeb99f1ab2d1d35fb3f7b6a1c107dc"),
    "less": ("590-2.1~deb12u2", "3c4ee8ce5e0f625e1169da9584e309c375a8a68e22de5821461d14446825cc1a"),
    "make": ("4.3-4.1", "a1a83af8cbd854af887b72ad196b1f4af58387815e21ced1000253a116a46e2a"),
    "mutt": ("2.2.12-0.1~deb12u2", "93875f1b6bb2e6b5173317a426cb262e20f33e2a1fd3e9f10b0b540bcd6a289b"),
    "netcat-openbsd": ("1.219-1", "85adebc045f48eb9a91515202a49940a0a57eff790223402333253ff121dfbdd"),
    "nmap": ("7.93+dfsg1-1", "1ac65a0a1038ffa8de7ee13a146c4cbb9dac3180c7faef703f3efb3adad098b2"),
    "openssh-client": ("1:9.2p1-2+deb12u10", "42c250b8b9110382488c53c066a960bc564ddac2cb9e449f47b6cdbb5fc1cb60"),
    "openssl": ("3.0.22-1~deb12u2", "5cdf0b735b1c8a96ae0bf83ed328c83c2170f8320dedb035e98705b60b2d0cfe"),
    "patch": ("2.7.6-7+deb12u1", "5b2c69742e3c51ca724d8b499e4d9f80362106162d7ea0dffe8f3641a7879fb7"),
    "poppler-utils": ("22.12.0-2+deb12u3", "7e328919d626d9d988832eb1e4adff4ceed275abcdabcb61ec0b3bf2dc64260d"),
    "procps": ("2:4.0.2-3", "d9d0e75779cb79af869181f17b93c5c263a2b89cac6a0193c436160a4483ddc1"),
    "qpdf": ("11.3.0-1+deb12u1", "85679049865b2fa7b15e84d95452ee235ddc129fbd014958d11e99fb4b7fbc13"),
    "rsync": ("3.5.0+ds1-0+deb12u1", "26ea59ef1c3d05595e9637002ace6f4e00181638b438ecad0f1cf1659ebb67ed"),
    "screen": ("4.9.0-4", "c3b97223e12cb913b81f032e74322ea85456fa747b3cd9bc02eb17b2b990dfce"),
    "sed": ("4.9-1+deb12u1", "fd557efeee8aae4619c2cb7f68aadccb804322ad4a99ab048aaae5901d253885"),
    "socat": ("1.7.4.4-2", "2bf3094e16ce0aab245193eb6b7cb6b6e086f68d321b757e2090901b4cd7f826"),
    "sudo": ("1.9.13p3-1+deb12u4", "ea9987f92630be504998516e1ed9c821c483131d0576ff35a09d6e7f8deff10f"),
    "tar": ("1.34+dfsg-1.2+deb12u1", "24fb92e98c2969171f81a8b589263d705f6b1670f95d121cd74c810d4605acc3"),
    "tmux": ("3.3a-3", "6bd1558face5e145d66d72c9557cbc7ff5ad66701e94dcd568e6daf081269018"),
    "unzip": ("6.0-28+deb12u1", "1c27c879f4f7f056499c5393d422fd6c77ff6fbfa450c3f91f2f205ca788cc36"),
    "util-linux": ("2.38.1-5+deb12u3", "8eb241ff24b2e1ee9c0373f4fc9bc728b85bf5966c1496154df7da01c0e42f34"),
    "wget": ("1.21.3-1+deb12u1", "b389052d1d8a8cacec4f0380d9ee54e8082bfbebe374299be95b5286c9380f80"),
    "xz-utils": ("5.4.1-1+deb12u2", "f99fc3fe4b4e5baecf5fd8b53853a82e1e71cb5ec187b36b0ddcf227a8961c8f"),
    "zip": ("3.0-13+deb12u1", "07cf47ed2bc6ad02702c489543eddf4901b6939fcfa4ef76439dd94f4d2b7294"),
}
PAGES = ("usr/share/man/man1", "usr/share/man/man8")
PER_PAGE = 6          # option questions per page at most (git and openssl have hundreds of options)
MISSING_RATE = 0.25   # pages that also get a question about an option they do not have
WORDINGS = ("What does the {o} option of {p} do?", "What does {o} do in {p}?", "What is {p}'s {o} option for?",
            "What does {p} {o} do?", "What does the {o} flag do?", "What happens when I pass {o} to {p}?")
HOW_WORDINGS = ("How do I {v} with {p}?", "How can I make {p} {v}?", "Which option of {p} lets me {v}?")
# a description that opens with one of these says what the option does ("print", "prints", "Forces")
VERBS = set("""add allow append ask assume change check compare compress copy create decompress delete
disable display do enable exclude exit follow force generate give ignore include keep limit list make
mark omit output override preserve print produce prompt read remove replace report request run save
search select send set show skip sort specify start stop suppress treat try update use verify wait
write""".split())
TAG_LINE = re.compile(r"^( {1,12})(-{1,2}[A-Za-z0-9?@][^\s]*(?:,? [^\s]+){0,4}?)(?: {2,}(\S.*))?$")
OPTION = re.compile(r"(?:^|[\s,\[|])(--?[A-Za-z0-9?@][A-Za-z0-9_-]*)")
HEADING = re.compile(r"^([A-Z][A-Z0-9 ]{2,40})$")
MINUS = "\u2212"
DASHES = re.compile(r"(?<![\w-])--?(?=[A-Za-z0-9?@])")


def render(page: Path) -> str:
    """The page as `man` shows it, one unwrapped line per paragraph line (wide, no overstrikes)."""
    raw = gzip.decompress(page.read_bytes()) if page.suffix == ".gz" else page.read_bytes()
    if raw.startswith(b".so "):
        return ""   # a link to another page, read under its own name
    out = subprocess.run(["groff", "-man", "-Tutf8", "-P-cbou", "-rLL=250n", "-rHY=0"], input=raw,
                         capture_output=True, timeout=60)
    return out.stdout.decode("utf-8", "replace")


def parse(text: str) -> tuple[str, str, list[dict]]:
    """(NAME line, SYNOPSIS line, option entries): each entry {tag, options, description (its first
    sentence), section, line (tag and description as one line), before (the entry above it in the
    same section, or None)}."""
    lines = text.splitlines()
    name = synopsis = section = ""
    entries: list[dict] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if (h := HEADING.match(line)):
            section = h.group(1).strip()
            nxt = next((x.strip() for x in lines[i + 1:i + 4] if x.strip()), "")
            if section == "NAME":
                name = nxt
            elif section == "SYNOPSIS":
                synopsis = " ".join(nxt.split())
            i += 1
            continue
        m = TAG_LINE.match(line)
        if not m or len(m.group(2)) > 60:
            i += 1
            continue
        indent, tag, inline = len(m.group(1)), m.group(2), m.group(3)
        body, j = ([inline] if inline else []), i + 1
        while j < len(lines) and lines[j].strip() and len(lines[j]) - len(lines[j].lstrip()) > indent:
            body.append(lines[j].strip())
            j += 1
        if body:
            description = " ".join(" ".join(body).split())
            first = (sentences(description) or [""])[0]
            options = [o for o in OPTION.findall(tag) if len(o.strip("-")) >= 1]
            if len(first.split()) >= 3 and options:
                before = entries[-1] if entries and entries[-1]["section"] == section else None
                entries.append({"tag": tag, "options": options, "description": first, "section": section,
                                "before": before, "line": f"{tag} {first}"})
        i = max(j, i + 1)
    return name, synopsis, entries


def shown(entry_line: str, tag: str, pdf: bool) -> str:
    """The line as a groff-printed PDF flows it (U+2212 for a hyphen, the tag run into the description)
    or as provrag reads a definition's sentence under its term ("tag: description")."""
    if pdf:
        return as_printed(entry_line)
    return f"{tag}: {entry_line[len(tag) + 1:]}"


def as_printed(text: str) -> str:
    """An option's dashes as groff prints them in a PDF (U+2212); a word's hyphen ("non-zero") stays."""
    return DASHES.sub(lambda m: MINUS * len(m.group()), text)


def how_phrase(description: str) -> str | None:
    """What the option does as a question's verb phrase ("print the author of each file"), or None."""
    clause = re.split(r"[;:(]|, | - ", description.rstrip("."), maxsplit=1)[0].strip()
    words = clause.split()
    if not 3 <= len(words) <= 12:
        return None
    first = words[0].lower()
    verb = first if first in VERBS else first[:-1] if first.endswith("s") and first[:-1] in VERBS \
        else first[:-2] if first.endswith("es") and first[:-2] in VERBS else None
    if verb is None:
        return None
    return " ".join([verb] + words[1:])


def program(page: Path, name_line: str) -> str:
    """The command as a user types it: git-commit(1) is "git commit", ip-route(8) "ip route"."""
    stem = page.name.split(".")[0]
    for tool in ("git", "ip"):
        if stem.startswith(tool + "-"):
            return f"{tool} {stem[len(tool) + 1:]}"
    return name_line.split()[0].rstrip(",") if name_line else stem


def manpage_pairs(rng: random.Random, counts: Counter, cache: Path, downloads: list[Path], split_of, pick_hard,
                  packages: dict = MANPAGE_DEBS) -> list[dict]:
    """Answer rows (the schema of prepare.squad_shifts'): per question one positive (none for an
    option the page lacks) and up to five negatives. packages: a part of MANPAGE_DEBS (tests)."""
    if shutil.which("groff") is None:
        raise SystemExit("the manpages pairs need groff (Debian: apt-get install groff-base)")
    rows: list[dict] = []
    for package in sorted(packages):
        root = fetch_deb(package, cache, downloads, packages)
        group = f"manpages/{package}"
        split = split_of(group)
        pages = sorted(p for folder in PAGES for p in (root / folder).glob("*") if p.is_file() and not p.is_symlink())
        for page in pages:
            name, synopsis, entries = parse(render(page))
            if len(entries) < 3:
                continue
            counts[f"manpages pages {split}"] += 1
            prog = program(page, name)
            picked = rng.sample(entries, min(PER_PAGE, len(entries)))
            for entry in picked:
                rows += _questions(rng, counts, base_of(group, split, page), prog, entry, entries, name, synopsis, pick_hard)
            if rng.random() < MISSING_RATE:
                rows += _missing_option(rng, counts, base_of(group, split, page), prog, entries, pick_hard)
    return rows


def base_of(group: str, split: str, page: Path) -> dict:
    return {"task": "answer", "group": group, "source": "manpages", "split": split, "page": page.name}


def _row(base: dict, question: str, text: str, context: str, label: int, kind: str) -> dict:
    qid = f"manpages-{base['page']}-" + hashlib.sha256(question.encode()).hexdigest()[:12]
    out = {k: v for k, v in base.items() if k != "page"}
    return {**out, "qid": qid, "a": question, "b": text, "c": context, "label": label, "kind": kind}


def _questions(rng, counts, base, prog, entry, entries, name, synopsis, pick_hard) -> list[dict]:
    pdf = rng.random() < 0.5
    heading = f"{prog.upper()}(1) {entry['section'].title()}".strip()
    option = rng.choice(entry["options"])
    others = [e for e in entries if e is not entry and not set(e["options"]) & set(entry["options"])]
    out = []
    phrase = how_phrase(entry["description"])
    asks = [("option", rng.choice(WORDINGS).format(o=option, p=prog))]
    if phrase and rng.random() < 0.6:
        asks.append(("how", rng.choice(HOW_WORDINGS).format(v=phrase, p=prog)))
    for kind, question in asks:
        counts[f"manpages {kind} questions {base['split']}"] += 1
        out.append(_row(base, question, shown(entry["line"], entry["tag"], pdf), _context(heading, entry, pdf), 1,
                        f"the {kind}'s line"))
        naming = [e for e in others if option in OPTION.findall(" " + e["description"])]
        rest = [e for e in others if e not in naming]
        hard = set(pick_hard(rng, question, [x["line"] for x in rest], 4 - min(2, len(naming))))
        negs = naming[:2] + [e for e in rest if e["line"] in hard][:4 - min(2, len(naming))]
        for e in negs:
            out.append(_row(base, question, shown(e["line"], e["tag"], pdf), _context(heading, e, pdf), 0,
                            "another option's line"))
        if kind == "option" and synopsis and rng.random() < 0.5:
            out.append(_row(base, question, as_printed(synopsis) if pdf else synopsis, f"{prog.upper()}(1) Synopsis",
                            0, "the synopsis"))
        elif kind == "option" and name and rng.random() < 0.5:
            out.append(_row(base, question, name, f"{prog.upper()}(1) Name", 0, "the name line"))
    return out


def _context(heading: str, entry: dict, pdf: bool) -> str:
    """What a line is read under: the page's heading and section, and the entry above it."""
    before = entry["before"]
    return f"{heading} {shown(before['line'], before['tag'], pdf) if before else ''}".strip()


def _missing_option(rng, counts, base, prog, entries, pick_hard) -> list[dict]:
    """A question about a one-letter option the page does not have: every line is a negative."""
    have = {o for e in entries for o in e["options"]}
    letters = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if f"-{c}" not in have]
    if not letters:
        return []
    option = f"-{rng.choice(letters)}"
    question = rng.choice(WORDINGS).format(o=option, p=prog)
    counts[f"manpages missing-option questions {base['split']}"] += 1
    pdf = rng.random() < 0.5
    heading = f"{prog.upper()}(1)"
    lines = pick_hard(rng, question, [e["line"] for e in entries], 5)
    by_line = {e["line"]: e for e in entries}
    return [_row(base, question, shown(x, by_line[x]["tag"], pdf), heading, 0, "a line of a page without the option")
            for x in lines]
