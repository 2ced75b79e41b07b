"""What a run's model steps cost and how each item was made: the `llm` object of manifest.json,
of `index --json`, of ask/verify traces and results.

Two kinds of count, per stage (extract, summarize, report, map, reduce, answer, judge, embed):
- requests: `calls` the server received (every attempt), `cached` replies, tokens in and out;
- items (a unit's extraction, a description summary, a community report, a map batch, an
  answer, a judged span): `by_model` (the model's reply was used), `fallback` (the model
  failed after its retries and repair, and the offline engine made the item instead) and
  `failed` (nothing made it: `[llm] strict = true`, or an item with no offline form).
A user has to be able to tell a model-built index from one the offline engine quietly
rebuilt, so the item counts sit beside the bill, and a stage where most items fell back gets
one warning line naming the likely cause (`warnings`).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

ITEM_COUNTS = ("by_model", "fallback", "failed")  # every item is exactly one of these
REQUEST_COUNTS = ("calls", "cached", "input_tokens", "output_tokens")

# why a model step fails, from the reason recorded with it → what to tell the user. Checked in
# order: a reply cut at max_tokens is also "invalid", a 400 naming the context is not JSON mode.
CAUSES = (
    ("cut", ("finish_reason=length",),
     "replies cut at max_tokens (finish_reason=length): raise [llm.max_tokens_by_step] {stage}, or the model loops"),
    ("context", ("context", "too long", "maximum", "exceed"),
     "context too short: the server refused overlong prompts (HTTP 400); set [llm] max_context_tokens to the "
     "server's context size, or start the server with a larger one"),
    ("timeout", ("timed out",),
     "timeouts: the server answers too slowly for [llm] timeout; raise it (0 = sized from the measured speed) "
     "or lower [llm] concurrency"),
    ("connection", ("connection failed",), "the server could not be reached ([llm] base_url)"),
    ("invalid", ("invalid reply",),
     "model too small: its replies were not in the required format even after a repair request"),
)


def likely_cause(reasons: list[str], stage: str) -> str:
    """The commonest cause among a stage's failure reasons, in words a user can act on."""
    found = Counter()
    for reason in reasons:
        low = reason.lower()
        for kind, needles, _ in CAUSES:
            if (kind != "context" or "http 400" in low) and any(n in low for n in needles):
                found[kind] += 1
                break
    if not found:
        return "the server returned errors (see llm.errors)"
    kind = found.most_common(1)[0][0]
    return next(text for k, _, text in CAUSES if k == kind).format(stage=stage)


@dataclass
class StageUsage:
    calls: int = 0          # requests actually sent
    cached: int = 0         # answered from the cache
    failed: int = 0         # items nothing made (strict mode, or no offline form of the item)
    input_tokens: int = 0
    output_tokens: int = 0
    by_model: int = 0       # items the model's reply made
    fallback: int = 0       # items the offline engine made after the model failed
    not_asked: int = 0      # of those fallback/failed items: not asked for, the step given up on ([llm] give_up_after)

    def add(self, other: "StageUsage") -> None:
        for k in REQUEST_COUNTS + ITEM_COUNTS + ("not_asked",):
            setattr(self, k, getattr(self, k) + getattr(other, k))

    @property
    def items(self) -> int:
        return self.by_model + self.fallback + self.failed


@dataclass
class Usage:
    """LLM accounting, totals and per stage: what manifest.json and traces carry as `llm`."""

    by_stage: dict[str, StageUsage] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    reasons: dict[str, list[str]] = field(default_factory=dict)   # per stage: why its items failed

    def stage(self, name: str) -> StageUsage:
        return self.by_stage.setdefault(name, StageUsage())

    def total(self) -> StageUsage:
        t = StageUsage()
        for s in self.by_stage.values():
            t.add(s)
        return t

    def not_by_model(self, stage: str) -> int:
        """Items of `stage` so far that the model did not make (a caller compares before and after)."""
        s = self.by_stage.get(stage)
        return (s.fallback + s.failed) if s else 0

    def failure_note(self, stages: tuple[str, ...]) -> str | None:
        """One line for a result one of whose model steps failed: the step, why, and what stood in."""
        for name in stages:
            s, reasons = self.by_stage.get(name), self.reasons.get(name)
            if s and reasons:
                stood = "the offline engine did that part instead" if s.fallback else "nothing stood in ([llm] strict)"
                return f"the model failed at the {name} step ({reasons[-1]}); {stood}"
        return None

    def stages(self) -> dict[str, dict]:
        """Item counts of every stage that had items: {stage: {by_model, fallback, failed}}."""
        return {k: {c: getattr(v, c) for c in ITEM_COUNTS} for k, v in self.by_stage.items() if v.items}

    def warnings(self) -> list[str]:
        """One line per stage where more than half the items fell back (or failed), with the likely cause."""
        out = []
        for name, s in self.by_stage.items():
            lost = s.fallback + s.failed
            if s.items and lost * 2 > s.items:
                how = "fell back to the offline engine" if s.fallback >= s.failed else "failed"
                skipped = (f" ({s.not_asked} not asked: the model failed the ones before in a row, "
                           "[llm] give_up_after)") if s.not_asked else ""
                out.append(f"{name}: {lost} of {s.items} items {how}{skipped}; likely cause: "
                           f"{likely_cause(self.reasons.get(name, []), name)}")
        return out

    def to_dict(self) -> dict:
        t = self.total()
        return {**{k: getattr(t, k) for k in ("calls", "cached", "failed", "input_tokens", "output_tokens",
                                              "by_model", "fallback")},
                "by_stage": {k: v.__dict__.copy() for k, v in self.by_stage.items()},
                "stages": self.stages(), "warnings": self.warnings(), "errors": self.errors[:50]}
