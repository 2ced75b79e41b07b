"""Answer pairs from technical documentation that ships in Debian packages (train/prepare.py's "docs" source).

Why: the reader's answer head learned from SQuADShifts and Natural Questions (encyclopedia, news,
reviews, factoid questions). On manuals it reads low: over the Python FAQ's own answers, the
sentence that opens an answer got a median P(answer) of 0.15 and reached 0.5 for 13 % of the
questions (bench/results/train-docs-2026-11-27.md). Manuals answer "what does X do", "what is X" and
"how do I / why" questions with a definition or an explanation, in their own register. These
pairs are that register, labelled by the documents' own structure:

- a FAQ's question heading → the first sentence of its answer;
- a glossary term ("What is a coroutine?") → the first sentence of its definition;
- a reference entry (a Python function, class or attribute; a PostgreSQL SQL command or program)
  → the first sentence of its description ("What does os.path.join do?");
negatives are near misses in the same document: the opening sentences of the *other* questions,
terms or entries of the same page, drawn the more often the more words they share with the
question (they are on topic and do not answer), and for a glossary term the rest of its own
definition (it elaborates; the question asks what the term is). Each sentence is read under its
entry's heading, as a manual prints it (numbered half the time).
Measured and not shipped: bench/results/train-docs-2026-11-27.md.

Sources: `python3.11-doc` (FAQ, glossary, library reference) and `postgresql-doc-15` (SQL
command and program reference, glossary), fetched with `apt-get download` and checked against
their sha256. None of the documents the evaluation sets ask about is among them (eval/manuals,
the TeX Live set and the held-out manuals are other packages' PDFs).

The HTML is Sphinx's and DocBook's generated markup, regular enough that a few patterns read it:
the train venv stays torch + ONNX tools only (no HTML parser dependency for ~100 lines of reading).
"""
from __future__ import annotations

import hashlib
import html
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from provrag.text.sentences import split_sentences  # noqa: E402

# Debian package, version, sha256 of the .deb (bookworm's; the file apt-get download leaves);
# vim-doc is train/howto_pairs.py's
DEBS = {
    "python3.11-doc": ("3.11.2-6+deb12u9", "5b3594189d6ef9a6963ce0347fd307a1cc67620ad697e144db366070e2e146be"),
    "postgresql-doc-15": ("15.20-0+deb12u1", "4c44bf2c599f208b3f46454a6cf7a72e25ec46ff74d37b59dd31ad76b00eebb7"),
    "vim-doc": ("2:9.0.1378-2+deb12u2", "6a7e9419d1e249ab5eabd4753bf600e807ccd564dbd9621d0fb90fa30d25e36d"),
}
PY_HTML = "usr/share/doc/python3.11/html"
PG_HTML = "usr/share/doc/postgresql-doc-15/html"
TAG = re.compile(r"<[^>]+>")
LIBRARY_CAP = 2000  # Python library entries kept (of ~7,300)
SKIP_OPENERS = ("changed in", "new in", "deprecated", "see ", "note:", "availability", "this is ", "for example")


def apt_download(package: str, version: str, work: Path) -> None:
    """`apt-get download PACKAGE=VERSION` into work/; when apt's lists predate the pinned version
    (a fresh machine whose lists were never updated: "Can't find a source to download version"),
    as root they are updated once and the download tried again."""
    cmd = ["apt-get", "download", "-qq", f"{package}={version}"]
    if subprocess.run(cmd, cwd=work).returncode == 0:
        return
    if os.geteuid() != 0:
        sys.exit(f"apt-get download {package}={version} failed: run `apt-get update` (as root), then again")
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(cmd, cwd=work, check=True)


def fetch_deb(package: str, cache: Path, downloads: list[Path], pins: dict | None = None) -> Path:
    """The package unpacked under cache/debs/<package>/ (apt-get download, dpkg -x; a .deb of the
    pinned version already in a downloads folder is used first). pins: {package: (version, sha256)},
    DEBS unless another generator pins its own."""
    root = cache / "debs" / package
    if (root / ".unpacked").is_file():
        return root
    version, want = (pins or DEBS)[package]
    work = cache / "debs" / "downloads"
    work.mkdir(parents=True, exist_ok=True)
    # an epoch's colon is %3a in the file name; the manual pages' packages are amd64's, the docs "all"
    pattern = f"{package}_{version.replace(':', '%3a')}_*.deb"
    found = [p for folder in [work, *downloads] for p in sorted(folder.glob(pattern))]
    if not found:
        apt_download(package, version, work)
        found = sorted(work.glob(pattern))
    if not found:
        sys.exit(f"apt-get download {package} did not leave a .deb in {work}")
    deb = found[-1]
    digest = hashlib.sha256(deb.read_bytes()).hexdigest()
    if digest != want:
        sys.exit(f"{deb.name}: sha256 {digest} is not the expected {want}")
    shutil.rmtree(root, ignore_errors=True)
    subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    (root / ".unpacked").write_text(f"{deb.name} {digest}\n")
    return root


def clean(fragment: str) -> str:
    return " ".join(html.unescape(TAG.sub("", fragment)).split())


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def opener(paragraphs: list[str]) -> str | None:
    """The first sentence of a description, when it can stand as an answer."""
    first = (sentences(paragraphs[0]) or [""])[0] if paragraphs else ""
    if len(first.split()) >= 3 and not first.lower().startswith(SKIP_OPENERS):
        return first
    return None


def python_faq(root: Path) -> list[tuple[str, str, str, str, list[str]]]:
    """(page, question, opener, the answer's sentences) per FAQ question."""
    out = []
    for page in sorted((root / PY_HTML / "faq").glob("*.html")):
        parts = re.split(r'<h[23]>(.*?)<a class="headerlink"[^>]*>.*?</h[23]>', page.read_text(encoding="utf-8"))
        for i in range(1, len(parts) - 1, 2):
            question = clean(parts[i])
            paras = [clean(p) for p in re.findall(r"<p>(.*?)</p>", parts[i + 1], re.S)]
            first = opener([p for p in paras if p])
            if question.endswith("?") and first:
                out.append((f"python-faq/{page.stem}", question, question, first, []))
    return out


def python_glossary(root: Path) -> list[tuple[str, str, str, str, list[str]]]:
    text = (root / PY_HTML / "glossary.html").read_text(encoding="utf-8")
    out = []
    for term, body in re.findall(r'<dt id="term-[^"]*">(.*?)<a class="headerlink".*?</dt>\s*<dd>(.*?)</dd>', text, re.S):
        term = clean(term)
        paras = [clean(p) for p in re.findall(r"<p>(.*?)</p>", body, re.S)]
        first = opener(paras)
        if term and first and term[0].isalpha():
            out.append(("python-glossary", term, definition_question(term), first, sentences(paras[0])[1:]))
    return out


def python_reference(root: Path, rng: random.Random) -> list[tuple[str, str, str, str, list[str]]]:
    out = []
    entry = re.compile(r'<dl class="py (function|method|class|data|attribute|exception)">\s*<dt[^>]* id="([^"]+)">'
                       r'.*?</dt>\s*<dd>(.*?)</dd>', re.S)
    for page in sorted((root / PY_HTML / "library").glob("*.html")):
        for kind, name, body in entry.findall(page.read_text(encoding="utf-8")):
            first = opener([clean(p) for p in re.findall(r"<p>(.*?)</p>", body, re.S)])
            if first:
                heading = name + ("()" if kind in ("function", "method") else "")
                out.append((f"python-library/{page.stem}", heading, reference_question(kind, name, rng), first, []))
    return out


def postgres_reference(root: Path, rng: random.Random) -> list[tuple[str, str, str, str, list[str]]]:
    out = []
    for page in sorted((root / PG_HTML).glob("*.html")):
        if not page.name.startswith(("sql-", "app-")):
            continue
        text = page.read_text(encoding="utf-8")
        title = re.search(r'<span class="refentrytitle">(.*?)</span>', text, re.S)
        desc = re.search(r"<h2>Description</h2>(.*?)</div>", text, re.S)
        if not title or not desc:
            continue
        first = opener([clean(p) for p in re.findall(r"<p>(.*?)</p>", desc.group(1), re.S)])
        if first:
            kind = "command" if page.name.startswith("sql-") else "program"
            name = clean(title.group(1))
            out.append(("postgres-reference", name, reference_question(kind, name, rng), first, []))
    text = (root / PG_HTML / "glossary.html").read_text(encoding="utf-8")
    for term, body in re.findall(r'<dt id="GLOSSARY-[^"]*"><span class="glossterm">(.*?)</span></dt>'
                                 r'<dd class="glossdef">(.*?)</dd>', text, re.S):
        paras = [clean(p) for p in re.findall(r"<p>(.*?)</p>", body, re.S)]
        first = opener(paras)
        term = re.sub(r"\s*\(.*?\)$", "", clean(term))
        if first and term:
            out.append(("postgres-glossary", term, definition_question(term), first, sentences(paras[0])[1:]))
    return out


def definition_question(term: str) -> str:
    """A proper name or acronym as it stands ("What is ACID?"), a common noun with its article."""
    if term[:1].isupper():
        return f"What is {term}?"
    return f"What is {'an' if term[0] in 'aeiou' else 'a'} {term}?"


def reference_question(kind: str, name: str, rng: random.Random) -> str:
    short = name.rsplit(".", 1)[-1] if kind in ("method", "attribute") else name
    if kind in ("function", "method"):
        forms = ("What does {}() do?", "What is {}() used for?", "What is the purpose of {}()?")
    elif kind in ("command", "program"):
        forms = ("What does {} do?", "What is {} used for?", "What is {}?")
    else:
        forms = ("What is {}?", "What does {} represent?", "What is {} for?")
    return rng.choice(forms).format(short)


def doc_pairs(rng: random.Random, counts: Counter, cache: Path, downloads: list[Path], split_of, pick_hard) -> list[dict]:
    """Answer rows (the schema of prepare.squad_shifts'): one positive and up to three near misses per question."""
    py, pg = fetch_deb("python3.11-doc", cache, downloads), fetch_deb("postgresql-doc-15", cache, downloads)
    library = python_reference(py, rng)
    # ~7,300 library entries would drown the ~600 FAQ, glossary and PostgreSQL questions
    library = rng.sample(library, min(LIBRARY_CAP, len(library)))
    items = python_faq(py) + python_glossary(py) + library + postgres_reference(pg, rng)
    # a manual prints the entry's heading (its term, name or question, often numbered) just before
    # the opener, and the reader sees it as the sentence's context: a positive with the asked
    # name in its heading, a near miss with its own entry's heading
    def heading_of(name: str) -> str:
        return f"{rng.randint(1, 12)}.{rng.randint(1, 20)} {name} " if rng.random() < 0.5 else f"{name} "

    by_page: dict[str, list[tuple[str, str]]] = {}
    for page, heading, _, first, _ in items:
        by_page.setdefault(page, []).append((first, heading))
    rows = []
    for n, (page, heading, question, first, rest) in enumerate(items):
        # a FAQ or library page is one group (its entries share a subject); a glossary term or a
        # PostgreSQL command is its own (one page holds them all)
        group = f"docs/{page}" + (f"/{question}" if page.startswith(("python-glossary", "postgres")) else "")
        split = split_of(group)
        kind = page.split("/")[0]
        counts[f"docs {kind} questions {split}"] += 1
        qid = f"docs-{n}-" + hashlib.sha256(question.encode()).hexdigest()[:12]
        base = {"task": "answer", "group": group, "source": "docs", "split": split, "qid": qid, "a": question}
        rows.append({**base, "b": first, "c": heading_of(heading), "label": 1, "kind": f"{kind} opener"})
        others = {text: their for text, their in by_page[page] if text != first}
        for text in pick_hard(rng, question, list(others), 2):
            rows.append({**base, "b": text, "c": heading_of(others[text]), "label": 0, "kind": "another entry's opener"})
        if rest:
            text = rng.choice(rest)
            rows.append({**base, "b": text, "c": heading_of(heading) + first, "label": 0,
                         "kind": "the definition's elaboration"})
    return rows
