"""The `openai` engine: every model-backed step through any OpenAI-compatible server.

OpenAI, Azure OpenAI (v1 endpoint), vLLM, Ollama, llama.cpp's server and LM Studio all
speak the same API, so one engine covers them: `[llm] base_url`, `model`, and the NAME of
the environment variable holding the key. In this folder: the prompts (prompts.py,
index_prompts.py, query_prompts.py), the reply parsers (replies.py, records.py), one item's
ask-parse-repair (validate.py), the request layer — retries, Retry-After, rate limit,
concurrency, cache, accounting — (client.py), the server's settings (endpoint.py) and the
full-extraction cost estimate (cost.py).

This class says what to ask for each step and what stands in when an item fails after its
retries and repair: the offline engine makes that item (a unit's graph, a summary, a report,
a map batch, an answer, a span's verdict), counted as `fallback` beside `by_model` in usage,
so a weak or misconfigured model degrades an index item by item instead of emptying it.
With `[llm] strict = true` nothing stands in: the item is `failed` and keeps a safe empty
result. Never an exception.
"""
from __future__ import annotations

from provrag.config import Config
from provrag.engines.base import Engine, EngineAnswer
from provrag.engines.openai import index_prompts, query_prompts, replies
from provrag.engines.openai.client import LLMClient
from provrag.engines.openai.endpoint import LLMConfigError, context_tokens, reply_budget
from provrag.engines.openai.records import parse_extraction
from provrag.engines.openai.validate import ItemFailed, validated
from provrag.results import Verdict

CANNOT_ANSWER = ("I am sorry, but I could not answer this question from the community reports: "
                 "none of them holds relevant information.")
_JUDGE_BATCH = 8          # spans per judge request: one verdict each, far fewer calls than one per pair
_SPAN_CHARS = 4000        # a span longer than this is cut (judge input stays bounded)
# prompts are measured in cl100k tokens; open models' tokenizers spend up to a quarter more on
# the same English text, so a prompt is packed to 80 % of the room the server's context leaves
TOKENIZER_ROOM = 0.8


def _empty_graph() -> dict:
    return {"entities": [], "relationships": []}


class OpenAIEngine(Engine):
    name = "openai"

    def __init__(self, cfg: Config):
        super().__init__(cfg)
        self.client = LLMClient(cfg, self.usage, "llm")  # raises LLMConfigError without a needed key
        self.strict = bool(cfg.llm.strict)
        self._offline = None

    def __repr__(self) -> str:
        return f"OpenAIEngine(model={self.model!r}, base_url={self.client.base_url!r})"

    @property
    def model(self) -> str:
        return self.cfg.llm.model

    @property
    def offline(self):
        """The offline engine, which makes the items the model failed on (built when first needed)."""
        if self._offline is None:
            from provrag.engines.offline import OfflineEngine

            self._offline = OfflineEngine(self.cfg)
        return self._offline

    def attach_cache(self, cache) -> None:
        self.cache = cache
        self.client.cache = cache

    @staticmethod
    def _tokens(text: str) -> int:
        from provrag.text.tokens import count_tokens

        return count_tokens(text)

    def budget(self, step: str) -> int:
        """Prompt tokens a request of `step` may hold: the server's context less the reply's budget."""
        llm = self.cfg.llm
        room = context_tokens(llm.max_context_tokens, self.client.base_url) - reply_budget(llm, step)
        return max(256, int(room * TOKENIZER_ROOM))

    def _item(self, stage: str, label: str, ask, instead, n: int = 1):
        """ask() the model for one item (n items: a judge batch's spans); when it fails,
        instead(reason) makes it — or, under strict, nothing does and None is returned."""
        try:
            value = ask()
        except ItemFailed as e:
            self.client.count_item(stage, "failed" if self.strict else "fallback", label, e.reason, n, e.asked)
            return None if self.strict else instead(e.reason)
        self.client.count_item(stage, "by_model", n=n)
        return value

    # ------------------------------------------------------------ extraction

    def _extract_one(self, unit: tuple[str, str]):
        """The model's graph of one unit, or the ItemFailed the batch decides about."""
        unit_id, text = unit
        if not (text or "").strip():
            return _empty_graph()
        label = f"unit {unit_id}"
        messages = index_prompts.extract_messages(text, self.cfg.extract.entity_types)
        try:
            result, first = validated(self.client, "extract", label, messages, lambda t: parse_extraction(t, text),
                                      with_text=True)
        except ItemFailed as e:  # counted now (the failures-in-a-row count is live); made by extract_graph
            self.client.count_item("extract", "failed" if self.strict else "fallback", label, e.reason, asked=e.asked)
            return e
        self.client.count_item("extract", "by_model")
        # gleaning: GraphRAG's "anything missed?" rounds, each re-sending the conversation
        convo = messages + [{"role": "assistant", "content": first}]
        for _ in range(self.cfg.extract.gleanings):
            convo = convo + [index_prompts.glean_message()]
            more, reason = self.client.chat("extract", convo, label=label)
            if more is None:
                self.client.record_note("extract", label, f"gleaning stopped: {reason}")
                break
            said = replies.complete_part(more.text) if more.finish_reason == "length" else more.text
            if not more.cached:  # kept even when it is not records: that answer ends the loop on a re-run too
                self.client.store(more.key, said)
            try:
                extra = parse_extraction(said, text)
            except ValueError:
                break  # a gleaning round that is not records adds nothing; the first round stands
            if not self._merge(result, extra):
                break
            convo = convo + [{"role": "assistant", "content": said}]
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
        units = list(units)
        graphs = self.client.map(self._extract_one, units)
        lost = [i for i, g in enumerate(graphs) if isinstance(g, ItemFailed)]
        if lost:
            # the offline extractor weighs words across its batch: it reads the whole batch, as offline indexing does
            instead = None if self.strict else self.offline.extract_graph(units)
            for i in lost:
                graphs[i] = instead[i] if instead is not None else _empty_graph()
        return graphs

    # ------------------------------------------------------------ descriptions

    def summarize_descriptions(self, title, descriptions):
        # sorted: the prompt (and its cache key) must not depend on the order units were merged in
        uniq = sorted(set(d.strip() for d in descriptions if d and d.strip()))
        if len(uniq) <= 1:
            return uniq[0] if uniq else ""
        kept, used, budget = [], 200, self.budget("summarize")
        for d in uniq:  # stay within the context budget, keeping the first descriptions seen
            cost = self._tokens(d) + 2
            if used + cost > budget and kept:
                break
            kept.append(d)
            used += cost
        label = f"'{title}'"
        messages = index_prompts.summarize_messages(title, kept)
        text = self._item("summarize", label,
                          lambda: validated(self.client, "summarize", label, messages,
                                            lambda t: replies.parse_summary(t, [title] + kept)),
                          lambda _: self.offline.summarize_descriptions(title, descriptions))
        return text if text is not None else "\n".join(uniq)  # strict: every description, as the model wrote them

    # ------------------------------------------------------------ reports

    def community_report(self, context):
        max_findings = self.cfg.reports.max_findings
        budget = min(self.budget("report"), self.cfg.reports.max_input_tokens)
        shown: dict = {}
        messages = index_prompts.report_messages(context, max_findings, self._tokens, budget, shown)
        label = f"community {context.get('community')}"
        report = self._item("report", label,
                            lambda: validated(self.client, "report", label, messages,
                                              lambda t: replies.parse_report(t, max_findings, shown), json_mode=True),
                            lambda _: self.offline.community_report(context))
        if report is None:
            return {"title": f"Community {context.get('community')}", "summary": "", "rating": 0.0,
                    "rating_explanation": "", "findings": []}
        return report

    # ------------------------------------------------------------ global search

    def _pack(self, items: list, render, fixed: int, budget: int, most: int = 0) -> list[list]:
        """Split items into batches whose rendered text fits `budget` tokens (and `most` items, if set)."""
        batches, cur, used = [], [], fixed
        for it in items:
            cost = self._tokens(render(it)) + 8
            if cur and (used + cost > budget or (most and len(cur) >= most)):
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
                             600 + self._tokens(question), self.budget("map"))

        def one(batch):
            numbers = {int(r["community"]) for r in batch if str(r.get("community")).isdigit()}
            label = f"reports {','.join(str(r.get('community')) for r in batch)[:60]}"
            messages = query_prompts.map_messages(question, batch)
            return self._item("map", label,
                              lambda: validated(self.client, "map", label, messages,
                                                lambda t: replies.parse_map(t, numbers), json_mode=True),
                              lambda _: self.offline.map_points(question, batch, terms)) or []

        return [p for pts in self.client.map(one, batches) for p in pts]

    def reduce_answer(self, question, points, terms=None):
        useful = sorted((p for p in points if float(p.get("score", 0) or 0) > 0),
                        key=lambda p: -float(p.get("score", 0)))
        if not useful:
            return CANNOT_ANSWER  # GraphRAG's rule: no point scored above 0 → no model call
        kept = self._pack(useful, lambda p: p.get("description", ""), 600 + self._tokens(question),
                          self.budget("reduce"))[0]
        allowed = replies.shown_ids(p.get("description") for p in kept)

        def parse(reply: str) -> str:
            text = replies.parse_text(reply)
            if not replies.check_citations(text, allowed, "the analysts' points"):
                raise ValueError("the answer cites no report: keep the [Data: Reports (…)] references of the "
                                 "points you use")
            return text

        messages = query_prompts.reduce_messages(question, kept)
        text = self._item("reduce", "answer", lambda: validated(self.client, "reduce", "answer", messages, parse),
                          lambda _: self.offline.reduce_answer(question, points, terms))
        return text or ""

    # ------------------------------------------------------------ local / basic

    def answer(self, question, context, terms=None):
        """The model's answer citing only the records it was shown. One that cites none is the
        model saying the records do not answer (the prompt asks it to cite nothing then): an
        abstention, never an uncited answer shown as if it had sources.

        A reply cut at max_tokens for good (cut again with twice the budget, or repeating itself:
        client.Reply.loops) is said in details["cut"], whatever stands in for it: when the attempt
        abstains, ask's search ends there (query/escalate.py), since each wider route would ask the
        same looping model again — a minute a route on a small CPU server."""
        records = list(context)
        sources = [r for r in records if r.get("kind", "source") == "source"]  # what the offline engine quotes
        if records:
            records = self._pack(records, lambda r: f"{r.get('citation', '')} {r.get('text', '')}",
                                 500 + self._tokens(question), self.budget("answer"))[0]
        allowed = replies.shown_ids(r.get("citation") for r in records)

        def parse(reply: str) -> tuple[str, int]:
            text = replies.parse_text(reply)
            return text, replies.check_citations(text, allowed, "the records")

        def instead(reason: str) -> EngineAnswer:
            ans = self.offline.answer(question, sources, terms)
            ans.details = {**ans.details, "fallback": f"the model's answer failed ({reason}); the offline engine's"}
            return ans

        messages = query_prompts.answer_messages(question, records)
        notes: dict = {}
        got = self._item("answer", "answer",
                         lambda: validated(self.client, "answer", "answer", messages, parse, notes=notes), instead)
        cut = {"cut": f"the model's answer was {notes['loops']}: a wider route would ask the same looping model "
                      "again"} if notes.get("loops") else {}
        if got is None:
            return EngineAnswer("", details=cut)
        if isinstance(got, EngineAnswer):
            got.details = {**got.details, **cut}
            return got
        text, cited = got
        if not cited:
            return EngineAnswer(text, details={"model_reply": text, "why": "the model's answer cites none of the "
                                               "records: it found nothing there that answers", **cut}, abstained=True)
        return EngineAnswer(text, details=cut)

    # ------------------------------------------------------------ verify

    def judge(self, claim, evidence, focus=None):
        fixed = 400 + self._tokens(claim)
        budget = self.budget("judge")
        cut = max(400, min(_SPAN_CHARS, 3 * (budget - fixed)))  # about 3 characters a token, on the short side
        spans = [(s or "")[:cut] for s in evidence]
        batches = self._pack(list(range(len(spans))), lambda i: spans[i], fixed, budget, most=_JUDGE_BATCH)
        label = f"claim '{claim[:60]}'"

        def one(batch: list[int]) -> list[Verdict]:
            texts = [spans[i] for i in batch]
            messages = query_prompts.judge_messages(claim, texts)
            got = self._item("judge", label,
                             lambda: [Verdict(v["label"], float(v.get("score", 0.0) or 0.0), str(v.get("reason", "")),
                                              None)  # a model names no span: verify finds the best one
                                      for v in validated(self.client, "judge", label, messages,
                                                         lambda t: replies.parse_judge(t, len(texts)), json_mode=True)],
                             lambda reason: [Verdict(v.label, v.score, f"offline judge (the model's failed): {v.reason}",
                                                     v.span)
                                             for v in self.offline.judge(claim, [evidence[i] for i in batch], focus)],
                             n=len(batch))
            if got is None:
                return [Verdict("unsupported", 0.0, "judge request failed", None) for _ in batch]
            return got

        return [v for vs in self.client.map(one, batches) for v in vs]

