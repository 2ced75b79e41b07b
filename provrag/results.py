"""The typed results provrag hands out: what `ask`, `resolve` and `verify` return, each with one
`to_json()` that gives CONTRACT.md §5's shape (the CLI's `--json`, a server's response body).

A Source is built in one place, `Source.of_unit`, from a text-unit row (provrag/store/units.py)
and a quote in its text: the resolver, retrieval and verify all name pages the same way.
Fields beyond the contract's are provenance a caller may use: `to_json()` always names the
unit and the quote's offsets in documents.text (null where unknown: a GraphRAG unit has no
offsets), and the citing sentence and a seam's two units where there are such.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the row type only; results are built without importing the store
    from provrag.store.units import UnitRow

VERDICTS = ("supported", "contradicted", "unsupported")
# the `via` of the passages ask lists that are not citations (pipelines/ask.py): an abstention's
# nearest ones, and the pages retrieval ranked next that an answer lists after its cited sources
CLOSEST_VIA = "closest passage (not an answer)"
FURTHER_VIA = "further passage (not cited)"


def listed_not_cited(source: Any) -> bool:
    """Whether a source (its to_json() dict) is a passage ask lists but no citation reached:
    the one test the log, the PROV export and the web app share."""
    return isinstance(source, dict) and source.get("via") in (CLOSEST_VIA, FURTHER_VIA)


def json_document(obj: Any) -> str:
    """A result's `to_json()` (or any JSON-able value) as the one text the CLI prints with
    `--json` and a server sends as a response body: one serializer, so the two never differ."""
    import json

    return json.dumps(obj, ensure_ascii=False, default=str)


def _known(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


@dataclass
class Source:
    """Where a statement stands: document, physical page(s) and quote, and how it was reached."""

    document: str
    path: str | None
    page_start: int | None
    page_end: int | None
    page_label: str | None
    text_unit_id: str
    quote: str
    via: str
    score: float
    # provenance beyond the contract's shape
    text_unit: int | None = None              # the unit's human_readable_id (its `Sources (n)`)
    char_start: int | None = None             # the quote, as offsets into documents.text
    char_end: int | None = None
    sentence_index: int | None = None         # the answer sentence whose citation reached it
    text_unit_ids: list[str] | None = None    # a quote across a page break: both units, in order
    ocr_pages: list[int] | None = None        # its pages whose text is OCR output (JSON: "ocr")

    @classmethod
    def of_unit(cls, unit: UnitRow, quote: str, start: int | None, end: int | None, *, via: str,
                score: float, **extra) -> "Source":
        """The one Source builder: `quote` is unit.text[start:end] (or a display form of it)."""
        cs = unit.char_start
        known = cs is not None and start is not None and end is not None
        return cls(document=unit.document, path=unit.path, page_start=unit.page_start, page_end=unit.page_end,
                   page_label=unit.page_label(unit.page_start), text_unit_id=unit.id, quote=quote, via=via,
                   score=score, text_unit=unit.human_readable_id,
                   char_start=cs + start if known else None, char_end=cs + end if known else None,
                   ocr_pages=list(unit.ocr_pages or []), **extra)

    def to_json(self) -> dict[str, Any]:
        return {"document": self.document, "path": self.path, "page_start": self.page_start,
                "page_end": self.page_end, "page_label": self.page_label, "text_unit_id": self.text_unit_id,
                "quote": self.quote, "via": self.via, "score": self.score, "text_unit": self.text_unit,
                "char_start": self.char_start, "char_end": self.char_end, "ocr": bool(self.ocr_pages)} \
            | _known({"sentence_index": self.sentence_index, "text_unit_ids": self.text_unit_ids})


@dataclass
class Citation:
    """One `[Data: Kind (ids)]` reference of an answer, with the sentence it backs."""

    kind: str
    ids: list[int]
    more: bool
    sentence: str
    sentence_index: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "ids": list(self.ids), "more": self.more, "sentence": self.sentence} \
            | _known({"sentence_index": self.sentence_index})


@dataclass
class Unresolved:
    """A cited id the index does not hold (reported, never dropped)."""

    kind: str
    id: int
    sentence_index: int | None = None
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id} | _known({"sentence_index": self.sentence_index,
                                                             "reason": self.reason})


@dataclass
class ResolveResult:
    """`provrag resolve`: every citation of an answer with its sources, best first per sentence."""

    answer: str
    citations: list[Citation]
    sources: list[Source]
    unresolved: list[Unresolved]
    dead_ends: list[dict]           # ids that exist but reach no text unit
    problems: list[dict]            # what the citation parser could not read
    index: dict                     # {"path", "kind", "has_pages"}
    index_changes: dict | None = None   # resolving a stored trace's answer: cited ids changed / retired since

    def to_json(self) -> dict[str, Any]:
        return {"answer": self.answer, "citations": [c.to_json() for c in self.citations],
                "sources": [s.to_json() for s in self.sources],
                "unresolved": [u.to_json() for u in self.unresolved], "dead_ends": self.dead_ends,
                "problems": self.problems, "index": self.index} | _known({"index_changes": self.index_changes})


@dataclass
class AskResult:
    """`provrag ask`: the answer, its citations, their sources by page, and the stored trace."""

    trace_id: str
    question: str
    method: str
    answer: str
    citations: list[Citation]
    sources: list[Source]
    unresolved: list[Unresolved]
    has_pages: bool = True                 # a provrag index (GraphRAG folders have no pages)
    abstained: bool = False                # nothing in the index answers: sources are the closest, not citations
    confidence: float | None = None        # how well the best evidence covers the question, 0–1
    abstained_by: str | None = None        # "coverage" (too little evidence) or "engine" (enough, but no answer in it)
    index_version: str | None = None       # the index's content version (manifest.json), when it has one
    trace: dict = field(default_factory=dict, repr=False)   # the whole trace, as stored
    trace_file: str | None = None
    trace_error: str | None = None         # why the trace could not be stored (the answer stands)
    error: str | None = None               # a model step that failed: why, and what stood in
    llm: dict | None = None                # a model engine's usage: requests, tokens, items by_model / fallback / failed
    # the answer check (issue 26): each sentence judged against the sources it cites before ask returns
    checked: bool = False                  # False: `ask --raw`, the answer as the engine gave it
    removed_sentences: list[dict] = field(default_factory=list)   # {"sentence", "citations", "verdict", "reason"}
    raw_answer: str | None = None          # the answer before the check
    route: str | None = None               # the route of the kept attempt (named, local, basic, wide, section; global)
    attempts: int = 1                      # routes tried (the first, and the wider retries)
    stopped: str | None = None             # why an abstention tried no wider route (query/escalate.py: "final")

    def to_json(self) -> dict[str, Any]:
        return {"trace_id": self.trace_id, "question": self.question, "method": self.method, "answer": self.answer,
                "abstained": self.abstained, "confidence": self.confidence, "index_version": self.index_version,
                "citations": [c.to_json() for c in self.citations], "sources": [s.to_json() for s in self.sources],
                "unresolved": [u.to_json() for u in self.unresolved], "error": self.error,
                "abstained_by": self.abstained_by, "checked": self.checked, "removed_sentences": self.removed_sentences,
                "raw_answer": self.raw_answer, "route": self.route, "attempts": self.attempts} | _known(
                    {"llm": self.llm, "stopped": self.stopped})


@dataclass
class Verdict:
    """The judge's word on one claim against one evidence text."""

    label: str                     # supported | contradicted | unsupported
    score: float                   # support score, 0..1
    reason: str
    span: tuple[int, int] | None   # the best-matching span of the evidence text (None: not named)

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "score": self.score, "reason": self.reason,
                "span": list(self.span) if self.span is not None else None}


@dataclass
class Evidence(Source):
    """A Source judged for one claim: its verdict and the route that found it."""

    label: str = "unsupported"
    reason: str = ""
    route: str = "retrieved"       # cited | retrieved | both

    def to_json(self) -> dict[str, Any]:
        return super().to_json() | {"label": self.label, "reason": self.reason, "route": self.route}


@dataclass
class ClaimCheck:
    """One claim of an answer: its verdict, cited and retrieved evidence, per-citation support."""

    text: str
    verdict: str
    score: float
    method: str
    cited: list[Evidence]
    evidence: list[Evidence]
    cited_supports: bool
    citations: list[dict]          # {"kind", "id", "supports"} per cited id
    unresolved: list[dict]         # {"kind", "id", "sentence_index", "reason"} per cited id not in the index
    focus: str | None
    span: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "verdict": self.verdict, "score": self.score, "method": self.method,
                "cited": [e.to_json() for e in self.cited], "evidence": [e.to_json() for e in self.evidence],
                "cited_supports": self.cited_supports, "citations": self.citations, "unresolved": self.unresolved,
                "focus": self.focus, "span": list(self.span)}


@dataclass
class VerifyResult:
    """`provrag verify`: each claim's verdict with evidence by page, and the answer's metrics.

    provrag/verify/check.py fills the claims, summary and judge; the pipeline (pipelines/verify.py)
    adds where the answer came from and the stored trace."""

    method: str                    # the judge: "offline" or "<engine>:<model>"
    claims: list[ClaimCheck]
    summary: dict                  # counts, supported_ratio, citation_recall / _precision (ALCE)
    question: str | None = None
    trace_id: str | None = None
    source: dict = field(default_factory=dict)   # where the answer came from: {"from", "trace_id" | "path"}
    trace: dict = field(default_factory=dict, repr=False)
    trace_file: str | None = None
    trace_error: str | None = None
    index_changes: dict | None = None    # a trace's answer on a newer index: cited ids changed / retired since
    llm: dict | None = None              # a model judge's usage: requests, tokens, verdicts by_model / fallback / failed
    judged_by: dict | None = None        # which judge gave the verdicts, with its model's name and weights' digest

    @property
    def supported_ratio(self) -> float | None:
        return self.summary.get("supported_ratio")

    def to_json(self) -> dict[str, Any]:
        return {"trace_id": self.trace_id, "question": self.question, "method": self.method, "source": self.source,
                "claims": [c.to_json() for c in self.claims], "summary": self.summary} \
            | _known({"trace_file": self.trace_file, "trace_error": self.trace_error,
                      "index_changes": self.index_changes, "llm": self.llm, "judged_by": self.judged_by})


# ---- what the web app browses (provrag/serve/catalog.py builds them) ----------------------------

@dataclass
class DocumentInfo:
    """One row of the documents table as a reader needs it: status and why, pages, units, OCR."""

    id: str
    human_readable_id: int | None
    name: str                      # the title, with the file where another document shares it (UnitRow.document)
    title: str | None
    path: str | None
    mime_type: str | None
    status: str                    # ok | failed | skipped
    error: str | None              # why it failed or was skipped
    n_pages: int | None            # null for page-less formats
    n_units: int
    ocr_pages: list[int] = field(default_factory=list)     # physical pages whose text is Tesseract's reading
    page_labels: list[str] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "human_readable_id": self.human_readable_id, "name": self.name, "title": self.title,
                "path": self.path, "mime_type": self.mime_type, "status": self.status, "error": self.error,
                "n_pages": self.n_pages, "n_units": self.n_units, "ocr_pages": list(self.ocr_pages),
                "page_labels": self.page_labels}


@dataclass
class IndexOverview:
    """The documents of an index and its counts: what `provrag index` summarised when it ran."""

    kind: str                      # provrag | graphrag-v1 | …
    index_version: str | None
    documents: list[DocumentInfo]
    counts: dict                   # rows per table

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "index_version": self.index_version,
                "documents": [d.to_json() for d in self.documents], "counts": self.counts}


@dataclass
class CommunityReport:
    """One community report: title, summary, rank, findings (each cites the units it stands on)."""

    community: int
    level: int | None
    title: str | None
    summary: str | None
    rank: float | None
    size: int | None
    findings: list[dict]           # {"summary", "explanation"} as the table holds them
    parent: int | None = None
    children: list[int] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"community": self.community, "level": self.level, "title": self.title, "summary": self.summary,
                "rank": self.rank, "size": self.size, "findings": self.findings, "parent": self.parent,
                "children": list(self.children)}


@dataclass
class UnitText:
    """One text unit's text and where it sits, for showing evidence of a page-less format."""

    text_unit_id: str
    text_unit: int | None
    text: str
    document: DocumentInfo
    page_start: int | None
    page_end: int | None

    def to_json(self) -> dict[str, Any]:
        return {"text_unit_id": self.text_unit_id, "text_unit": self.text_unit, "text": self.text,
                "document": self.document.to_json(), "page_start": self.page_start, "page_end": self.page_end}
