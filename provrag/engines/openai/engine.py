"""The `openai` engine: every model-backed step through any OpenAI-compatible server.

OpenAI, Azure OpenAI (v1 endpoint), vLLM, Ollama, llama.cpp's server and LM Studio all
speak the same API, so one engine covers them: `[llm] base_url`, `model`, and the NAME of
the environment variable holding the key. In this folder: the prompts (prompts.py,
index_prompts.py, query_prompts.py), the reply parsers (replies.py), the request layer —
retries, Retry-After, rate limit, concurrency, cache, accounting — (client.py), key and
endpoint resolution (endpoint.py) and the full-extraction cost estimate (cost.py). This
class only says what to ask for each step and what to return when an item fails — a safe
empty result, recorded in `usage`, never an exception.
"""
from __future__ import annotations

from provrag.config import Config
from provrag.engines.base import Engine, EngineAnswer
from provrag.engines.openai import index_prompts, query_prompts, replies
from provrag.engines.openai.client import LLMClient
from provrag.engines.openai.endpoint import LLMConfigError
from provrag.results import Verdict

CANNOT_ANSWER = ("I am sorry, but I could not answer this question from the community reports: "
                 "none of them holds relevant information.")
_JUDGE_BATCH = 8          # spans per judge request: one verdict each, far fewer calls than one per pair
_SPAN_CHARS = 4000        # a span longer than this is cut (judge input stays bounded)


class OpenAIEngine(Engine):
    name = "openai"

    def __init__(self, cfg: Config):
        super().__init__(cfg)
        self.client = LLMClient(cfg, self.usage, "llm")  # raises LLMConfigError without a needed key
        self.budget = cfg.llm.max_context_tokens

    def __repr__(self) -> str:
        return f"OpenAIEngine(model={self.model!r}, base_url={self.client.base_url!r})"

    @property
    def model(self) -> str:
        return self.cfg.llm.model

    def attach_cache(self, cache) -> None:
        self.cache = cache
        self.client.cache = cache

    @staticmethod
    def _tokens(text: str) -> int:
        from provrag.text.tokens import count_tokens

        return count_tokens(text)

    # ------------------------------------------------------------ extraction

    def _extract_one(self, unit: tuple[str, str]) -> dict:
        unit_id, text = unit
        empty = {"entities": [], "relationships": []}
        if not (text or "").strip():
            return empty
        messages = index_prompts.extract_messages(text, self.cfg.extract.entity_types)
        result, first = self.client.validated("extract", f"unit {unit_id}", messages, replies.parse_extraction,
                                              with_text=True)
        if result is None:
            return empty
        # gleaning: GraphRAG's "anything missed?" rounds, each re-sending the conversation
        convo = messages + [{"role": "assistant", "content": first}]
        for _ in range(self.cfg.extract.gleanings):
            convo = convo + [index_prompts.glean_message()]
            more, reason = self.client.chat("extract", convo, label=f"unit {unit_id}")
            if more is None:
                self.client.record_note("extract", f"unit {unit_id}", f"gleaning stopped: {reason}")
                break
            if not more.cached:  # kept even when it is not records: that answer ends the loop on a re-run too
                self.client.store(more.key, more.text)
            try:
                extra = replies.parse_extraction(more.text)
            except ValueError:
                break  # a gleaning round that is not records adds nothing; the first round stands
            if not self._merge(result, extra):
                break
            convo = convo + [{"role": "assistant", "content": more.text}]
        return result

    @staticmethod
    def _merge(into: dict, extra: dict) -> bool:
        """Add gleaned records not already there; True when something was new."""
        titles = {e["title"] for e in into["entities"]}
        rels = {(r["source"], r["target"], r["description"]) for r in into["relationships"]}
        new = False
        for e in extra["entities"]:
            if e["title"] not in titles:
                into["entities"].append(e)
                titles.add(e["title"])
                new = True
        for r in extra["relationships"]:
            k = (r["source"], r["target"], r["description"])
            if k not in rels:
                into["relationships"].append(r)
                rels.add(k)
                new = True
        return new

    def extract_graph(self, units):
        if not self.cfg.extract.entity_types:  # the prompt would ask for no type at all
            raise LLMConfigError("extract.entity_types is empty: list the entity types the model should look for "
                                 "(config.toml has GraphRAG's defaults)")
        return self.client.map(self._extract_one, list(units))

    # ------------------------------------------------------------ descriptions

    def summarize_descriptions(self, title, descriptions):
        # sorted: the prompt (and its cache key) must not depend on the order units were merged in
        uniq = sorted(set(d.strip() for d in descriptions if d and d.strip()))
        if len(uniq) <= 1:
            return uniq[0] if uniq else ""
        kept, used = [], 200
        for d in uniq:  # stay within the context budget, keeping the first descriptions seen
            cost = self._tokens(d) + 2
            if used + cost > self.budget and kept:
                break
            kept.append(d)
            used += cost
        text = self.client.validated("summarize", f"'{title}'", index_prompts.summarize_messages(title, kept),
                                     replies.parse_text)
        return text if text is not None else "\n".join(uniq)  # failed: keep every description

    # ------------------------------------------------------------ reports

    def community_report(self, context):
        rcfg = self.cfg.reports
        max_findings = rcfg.max_findings
        budget = min(self.budget, rcfg.max_input_tokens)
        messages = index_prompts.report_messages(context, max_findings, self._tokens, budget)
        report = self.client.validated("report", f"community {context.get('community')}", messages,
                                       lambda t: replies.parse_report(t, max_findings), json_mode=True)
        if report is None:
            return {"title": f"Community {context.get('community')}", "summary": "", "rating": 0.0,
                    "rating_explanation": "", "findings": []}
        return report

    # ------------------------------------------------------------ global search

    def _pack(self, items: list, render, fixed: int) -> list[list]:
        """Split items into batches whose rendered text fits the context budget."""
        batches, cur, used = [], [], fixed
        for it in items:
            cost = self._tokens(render(it)) + 8
            if cur and used + cost > self.budget:
                batches.append(cur)
                cur, used = [], fixed
            cur.append(it)
            used += cost
        if cur:
            batches.append(cur)
        return batches

    def map_points(self, question, reports, terms=None):  # the model reads the question itself
        reports = list(reports)
        if not reports:
            return []
        batches = self._pack(reports, lambda r: r.get("full_content") or r.get("summary") or "",
                             600 + self._tokens(question))

        def one(batch):
            ids = ",".join(str(r.get("community")) for r in batch)
            return self.client.validated("map", f"reports {ids[:60]}", query_prompts.map_messages(question, batch),
                                         replies.parse_map, json_mode=True) or []

        return [p for pts in self.client.map(one, batches) for p in pts]

    def reduce_answer(self, question, points, terms=None):
        useful = sorted((p for p in points if float(p.get("score", 0) or 0) > 0),
                        key=lambda p: -float(p.get("score", 0)))
        if not useful:
            return CANNOT_ANSWER  # GraphRAG's rule: no point scored above 0 → no model call
        kept = self._pack(useful, lambda p: p.get("description", ""), 600 + self._tokens(question))[0]
        text = self.client.validated("reduce", "answer", query_prompts.reduce_messages(question, kept),
                                     replies.parse_text)
        return text or ""

    # ------------------------------------------------------------ local / basic

    def answer(self, question, context, terms=None):
        records = list(context)
        if records:
            records = self._pack(records, lambda r: f"{r.get('citation', '')} {r.get('text', '')}",
                                 500 + self._tokens(question))[0]
        text = self.client.validated("answer", "answer", query_prompts.answer_messages(question, records),
                                     replies.parse_text)
        return EngineAnswer(text or "")

    # ------------------------------------------------------------ verify

    def judge(self, claim, evidence, focus=None):
        spans = [(s or "")[:_SPAN_CHARS] for s in evidence]
        batches = [spans[i:i + _JUDGE_BATCH] for i in range(0, len(spans), _JUDGE_BATCH)]

        def one(batch):
            verdicts = self.client.validated("judge", f"claim '{claim[:60]}'",
                                             query_prompts.judge_messages(claim, batch),
                                             lambda t: replies.parse_judge(t, len(batch)), json_mode=True)
            if verdicts is None:
                return [{"label": "unsupported", "score": 0.0, "reason": "judge request failed"} for _ in batch]
            return verdicts

        # a model names no span: verify finds the best one (span None)
        return [Verdict(v["label"], float(v.get("score", 0.0) or 0.0), str(v.get("reason", "")), None)
                for vs in self.client.map(one, batches) for v in vs]

