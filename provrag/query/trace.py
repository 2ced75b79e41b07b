"""Building a query trace: what one `ask` (or `verify`) did, stage by stage, and its W3C PROV form.

A trace follows TrustGraph's explainability chain — Question → Exploration → Focus →
Synthesis → Citations — with Agentic-Graph-RAG's PipelineTrace bookkeeping per stage (start,
duration, what went in and came out). Storing and finding traces is provrag/store/traces.py.

A trace is a record, written as the run goes and never read back by the run that writes it:
results travel as return values (provrag/query/search.py's SearchResult, provrag/results.py),
so the trace can change shape without changing an answer. `version` (TRACE_VERSION) says which
shape a stored trace has; it is set once, when the trace is created.
"""
from __future__ import annotations

import json
import time
from contextlib import contextmanager

from provrag.results import listed_not_cited
from provrag.store.traces import new_id, now_iso

PROV_CONTEXT = "https://openprovenance.org/prov-jsonld/context.jsonld"
PROVRAG_NS = "https://github.com/provrag/provrag/ns#"

TRACE_VERSION = 1   # the shape of a stored trace; raise it when a reader of old traces must tell them apart

STAGES = (("question", "Question"), ("exploration", "Exploration"), ("focus", "Focus"), ("answerability", "Answerability"),
          ("synthesis", "Synthesis"),
          ("citations", "Citations"))


class Trace:
    """Builds one trace: `with t.stage("exploration") as data: data["candidates"] = …`, and
    `t["answer"] = …` for its top-level fields. Write-only: nothing reads a value back from it."""

    _FIXED = ("trace_id", "version")   # set at creation, never changed

    def __init__(self, kind: str, question: str | None = None, **meta):
        self.data: dict = {"trace_id": new_id(), "version": TRACE_VERSION, "kind": kind, "created": now_iso(),
                           "question": question, **meta, "stages": []}
        self._t0 = time.perf_counter()

    @property
    def id(self) -> str:
        return self.data["trace_id"]

    def __setitem__(self, key, value) -> None:
        if key in self._FIXED:
            raise KeyError(f"a trace's {key} is set when it is created")
        self.data[key] = value

    @contextmanager
    def stage(self, name: str, label: str | None = None):
        rec = {"name": name, "label": label or dict(STAGES).get(name, name.title()), "started": now_iso(),
               "ended": None, "ms": None, "data": {}}
        self.data["stages"].append(rec)
        t0 = time.perf_counter()
        try:
            yield rec["data"]
        finally:
            rec["ms"] = round((time.perf_counter() - t0) * 1000, 2)
            rec["ended"] = now_iso()

    def finish(self) -> dict:
        self.data["total_ms"] = round((time.perf_counter() - self._t0) * 1000, 2)
        self.data["ended"] = now_iso()
        return self.data


# ---- W3C PROV ------------------------------------------------------------------------------------

def to_prov(trace: dict) -> dict:
    """The trace as W3C PROV (PROV-JSONLD serialisation): entities, activities, agents, relations.

    Question → [Exploration] → candidates → [Focus] → selected units → [Synthesis] → answer;
    each stage is a prov:Activity with its times, associated with the engine (prov:SoftwareAgent);
    the answer wasDerivedFrom the selected units and the question; each selected unit names
    its document and pages.
    """
    tid = trace.get("trace_id", "unknown")
    base = f"provrag:trace/{tid}"
    graph: list[dict] = []
    engine_id = f"provrag:engine/{trace.get('engine') or 'unknown'}/{trace.get('model') or ''}".rstrip("/")
    graph.append({"@type": "prov:SoftwareAgent", "@id": engine_id, "prov:label": f"{trace.get('engine')} engine",
                  "provrag:model": trace.get("model")})
    q_id = f"{base}/question"
    graph.append({"@type": "prov:Entity", "@id": q_id, "prov:label": "question",
                  "prov:value": trace.get("question"), "provrag:method": trace.get("method"),
                  "provrag:method_why": trace.get("method_why")})
    stages = {s["name"]: s for s in trace.get("stages") or []}
    previous = [q_id]
    selected_ids: list[str] = []
    for name, label in STAGES:
        s = stages.get(name)
        if s is None:
            continue
        act = f"{base}/activity/{name}"
        graph.append({"@type": "prov:Activity", "@id": act, "prov:label": label,
                      "startTime": s.get("started"), "endTime": s.get("ended"), "provrag:ms": s.get("ms")})
        graph.append({"@type": "prov:Association", "activity": act, "agent": engine_id})
        for e in previous:
            graph.append({"@type": "prov:Usage", "activity": act, "entity": e})
        made = []
        if name == "question":
            out = f"{base}/query-terms"
            graph.append({"@type": "prov:Entity", "@id": out, "prov:label": "interpreted question",
                          "prov:value": json.dumps(s["data"].get("terms") or {}, ensure_ascii=False)})
            made.append(out)
        elif name == "exploration":
            out = f"{base}/candidates"
            graph.append({"@type": "prov:Collection", "@id": out, "prov:label": "retrieval candidates",
                          "provrag:count": len(s["data"].get("candidates") or [])})
            made.append(out)
        elif name == "focus":
            for u in s["data"].get("selected") or []:
                uid = f"provrag:text_unit/{u.get('text_unit_id') or u.get('id') or u.get('key')}"
                ent = {"@type": "prov:Entity", "@id": uid, "prov:label": u.get("label") or "selected context",
                       "provrag:kind": u.get("kind"), "provrag:document": u.get("document"),
                       "provrag:path": u.get("path"), "provrag:page_start": u.get("page_start"),
                       "provrag:page_end": u.get("page_end"), "provrag:score": u.get("score")}
                graph.append({k: v for k, v in ent.items() if v is not None})
                made.append(uid)
                selected_ids.append(uid)
        elif name == "synthesis":
            out = f"{base}/answer"
            graph.append({"@type": "prov:Entity", "@id": out, "prov:label": "answer",
                          "prov:value": trace.get("answer")})
            made.append(out)
            for u in selected_ids:
                graph.append({"@type": "prov:Derivation", "generatedEntity": out, "usedEntity": u})
            graph.append({"@type": "prov:Derivation", "generatedEntity": out, "usedEntity": q_id})
        elif name == "citations":
            out = f"{base}/answer"
            for i, src in enumerate(trace.get("sources") or []):
                sid = f"{base}/source/{i}"
                # an abstention's closest passages and an answer's further ones are listed, not cited
                cited = not listed_not_cited(src)
                ent = {"@type": "prov:Entity", "@id": sid, "prov:label": "cited source" if cited else "passage listed, not cited",
                       "provrag:document": src.get("document"), "provrag:path": src.get("path"),
                       "provrag:page_start": src.get("page_start"), "provrag:page_end": src.get("page_end"),
                       "provrag:quote": src.get("quote"), "provrag:via": src.get("via"),
                       "provrag:text_unit": src.get("text_unit_id")}
                graph.append({k: v for k, v in ent.items() if v is not None})
                graph.append({"@type": "prov:Generation", "entity": sid, "activity": act})
                graph.append({"@type": "prov:Derivation", "generatedEntity": out, "usedEntity": sid,
                              "provrag:role": "citation" if cited else "listed"})
            previous = [out]
            continue
        for e in made:
            graph.append({"@type": "prov:Generation", "entity": e, "activity": act})
        previous = made or previous
    return {"@context": [PROV_CONTEXT, {"provrag": PROVRAG_NS}],
            "@id": base, "provrag:created": trace.get("created"), "provrag:index": trace.get("index"),
            "@graph": graph}
