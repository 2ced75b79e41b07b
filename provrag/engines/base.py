"""The engine interface and its shared bookkeeping.

Shapes (plain dicts, GraphRAG's formats):
- extraction of one unit: {"entities": [{"title", "type", "description"}],
  "relationships": [{"source", "target", "description", "weight"}]}
- community report: {"title", "summary", "rating", "rating_explanation",
  "findings": [{"summary", "explanation"}]} — findings cite the index (`[Data: Sources (…)]` offline,
  `[Data: Entities (…); Relationships (…)]` as GraphRAG's models write them)
- global-search map point: {"description": "… [Data: Reports (…)]", "score": 0-100}
- answer (local/basic search): an EngineAnswer — the text citing its context records, and
  which records it quotes (the pipeline orders the answer's sources by them)
- judge verdict: provrag.results.Verdict, one per evidence text

The offline engine needs more of the question than its words to rank sentences: the index
terms retrieval matched and their idf. They travel through this interface (QueryTerms), so
the pipelines call both engines the same way, step by step.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import nullcontext
from dataclasses import dataclass, field

from provrag.config import Config
from provrag.engines.usage import StageUsage, Usage
from provrag.results import Verdict

__all__ = ["Engine", "EngineAnswer", "QueryTerms", "StageUsage", "Usage"]


@dataclass(frozen=True)
class QueryTerms:
    """The question as retrieval read it: its index terms (spelling fixed) and their BM25 idf."""

    terms: list[str]
    idf: dict[str, float]
    # the best retrieved passage's share of the question's idf-weighted terms (query/answerable.py,
    # lexical only; a term the index never saw weighs as the rarest): a reading engine weighs it
    coverage: float | None = None
    # the question's terms the index holds nowhere, after spelling fixes ("klingon" over TeX manuals):
    # retrieval drops them, a reader of a specific fact must not (answer/reading.py)
    unseen: list[str] = field(default_factory=list)


@dataclass
class EngineAnswer:
    """A local/basic answer: its text (citing `[Data: …]`), the context records it quotes whole,
    best first (indices into the context), and what the engine did (for the trace)."""

    text: str
    records_used: list[int] = field(default_factory=list)
    details: dict = field(default_factory=dict)
    abstained: bool = False   # the engine found nothing in the context that answers the question
    # the engine's own calibrated probability that its answer answers (a reading model's); None:
    # the engine does not read, and the pipeline measures the evidence's coverage instead
    confidence: float | None = None
    # context records best first by the engine's reading of their relevance (None: retrieval's order)
    passage_order: list[int] | None = None


class Engine(ABC):
    """One model-backed implementation of every step provrag needs."""

    name: str = "base"

    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.usage = Usage()
        self.cache = None  # a provrag.store.cache.Cache; set by the pipeline that owns the index folder

    def attach_cache(self, cache) -> None:
        """Model replies are cached by content (model + prompt + parameters) in the index."""
        self.cache = cache

    @property
    def model(self) -> str:
        return self.name

    @property
    def reads(self) -> bool:
        """Whether answer() reads the candidate sentences with a model that decides what answers
        and says how confident it is (EngineAnswer.confidence): then no coverage gate stands in
        front of it. False for an engine that writes whatever the context allows."""
        return False

    def warming(self, task: str):
        """A context manager: load what `task` ("ask", "verify") will read while the block runs
        (the offline engine's models, engines/offline/warm.py). An engine that reads with nothing
        loaded here (a server's model) has nothing to load."""
        return nullcontext()

    @abstractmethod
    def extract_graph(self, units: list[tuple[str, str]]) -> list[dict]:
        """Entities and relationships of each (unit_id, text), in input order."""

    @abstractmethod
    def summarize_descriptions(self, title: str, descriptions: list[str]) -> str:
        """One description for an entity or relationship seen with several."""

    @abstractmethod
    def community_report(self, context: dict) -> dict:
        """A GraphRAG report for one community.

        context: {"community": int, "level": int,
                  "entities": [{"human_readable_id", "title", "type", "description", "degree"}],
                  "relationships": [{"human_readable_id", "source", "target", "description", "weight"}],
                  "text_units": [{"id", "human_readable_id", "text"}]}
        """

    @abstractmethod
    def map_points(self, question: str, reports: list[dict], terms: QueryTerms | None = None) -> list[dict]:
        """Global search map: points answering the question from a batch of reports
        ({"community", "title", "summary", "full_content", "findings", "rank", "score"}), each
        citing its reports; `terms` as for answer()."""

    @abstractmethod
    def reduce_answer(self, question: str, points: list[dict], terms: QueryTerms | None = None) -> str:
        """Global search reduce: one answer from the best points, keeping their references;
        `terms` as for answer()."""

    @abstractmethod
    def answer(self, question: str, context: list[dict], terms: QueryTerms | None = None) -> EngineAnswer:
        """Local/basic search: an answer from context records
        ({"citation": "[Data: Sources (12)]", "text": ...}), citing them."""

    def judged_by(self) -> dict:
        """What judges claims, as the verify trace records it (the auditor's "which model said
        so?"): the engine and its model."""
        return {"engine": self.name, "model": self.model}

    @abstractmethod
    def judge(self, claim: str, evidence: list[str], focus: str | None = None) -> list[Verdict]:
        """Verify: one verdict per evidence text for the claim (never one joined premise).
        `focus`: for a claim made from a question and a short answer, the answer's own words,
        which the evidence must state."""
