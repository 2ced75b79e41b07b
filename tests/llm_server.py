"""A scripted OpenAI-compatible server for tests and for trying the `openai` engine by hand.

    python -m tests.llm_server --port 8089      # serves http://127.0.0.1:8089/v1 until killed

It is a "model" without weights: it recognises each provrag prompt by its marker line
(`[provrag-prompt:KIND vN]`, provrag/engines/openai/prompts.py) and answers in the format that prompt asks
for, DERIVED FROM THE INPUT — extraction lists the capitalised names of the passage (the
first six, the rest only when a gleaning round asks), a report is built from the entities
and relationships it was given, map points cite the reports that share words with the
question, answers cite the records they quote, the judge compares words and negations.
Embeddings hash word tokens into a fixed-size vector (deterministic, similar texts are close).

Endpoints: POST /v1/chat/completions, POST /v1/embeddings, GET /v1/models,
GET /stats (requests and tokens seen), POST /control, POST /reset.
Faults: POST /control {"fail_next": [429, 500, 503, "timeout", "malformed", "truncated",
"badbody", "401echo"], "retry_after": 0.2, "timeout_sleep": 2, "delay": 0} — each entry fails the next
request (an entry {"fault": 500, "kind": "report"} waits for a request of that prompt kind).
{"always": {"extract": "table", "judge": "synonyms", "*": "loop"}} makes every request of a prompt
kind (its repair requests included) misbehave as a real small model does (tests/llm_faults.py:
loop, table, json, placeholder, synonyms, keyed, badspan, invented, uncited, overlong, 400json,
or any fail_next fault); {"context": 2048} answers a longer prompt with llama.cpp's HTTP 400.
Replies honour max_tokens (cut there, finish_reason "length").
Only 127.0.0.1 is bound. stdlib only (http.server) so it runs anywhere the tests run.
"""
from __future__ import annotations

import argparse
import base64
import csv
import hashlib
import io
import itertools
import json
import re
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from provrag.text.tokens import count_tokens, encoding
from tests.llm_faults import CHAT_FAULTS, STATUS_FAULTS, misbehave, overlong_error

MARKER_RE = re.compile(r"\[provrag-prompt:(\w+) v\d+\]")
TUPLE, RECORD, COMPLETE = "<|>", "##", "<|COMPLETE|>"
FIRST_ROUND = 6          # names reported by the first extraction round; gleaning finds the rest
EMBED_DIM = 64
STOP = set("""a an the and or but if then so of in on at to for from by with as is are was were be been
it its this that these those he she they we you i his her their our your my me him them us there here
what which who whom whose when where why how not no nor all any each every some such than too very can
will would shall should may might must do does did have has had into onto over under about after before
between through during without within also only just more most other same own both few many much
another however while since although though yet one two three first last new""".split())
ORG = {"inc", "corp", "company", "university", "society", "committee", "foundation", "project", "team",
       "association", "party", "congress", "department", "ministry", "bank", "institute", "church", "army",
       "navy", "government", "group", "council", "court", "college", "school", "board", "agency", "union"}
GEO = {"river", "mountain", "mountains", "city", "county", "state", "states", "island", "sea", "lake",
       "street", "ocean", "valley", "kingdom", "republic", "america", "england", "france", "europe"}
EVENT = {"war", "battle", "conference", "act", "treaty", "revolution", "election", "festival", "meeting"}
NEG = {"not", "no", "never", "none", "neither", "nor", "cannot", "without"}
NAME_RE = re.compile(r"\b[A-Z][A-Za-z'\-]*(?:\s+(?:of\s+|de\s+|the\s+)?[A-Z][A-Za-z'\-]*){0,3}")


# ------------------------------------------------------------------ text helpers

def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def content_words(text: str) -> set[str]:
    return {w for w in words(text) if len(w) > 2 and w not in STOP}


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n{2,}", text) if s.strip()]


def names_in(text: str) -> list[str]:
    """Capitalised names in order of first appearance (upper-cased, unique)."""
    lower_words = set(re.findall(r"\b[a-z][a-z'\-]*\b", text))
    out: dict[str, None] = {}
    for m in NAME_RE.finditer(text):
        name = m.group(0).strip()
        parts = name.split()
        if len(parts) == 1:
            w = parts[0]
            if len(w) < 3 or w.lower() in STOP or w.lower() in lower_words:
                continue  # a capitalised ordinary word (sentence start), not a name
        out.setdefault(name.upper(), None)
    return list(out)


def entity_type(name: str) -> str:
    ws = set(name.lower().split())
    if ws & ORG:
        return "ORGANIZATION"
    if ws & GEO:
        return "GEO"
    if ws & EVENT:
        return "EVENT"
    return "PERSON" if len(ws) >= 2 else "ORGANIZATION"


def section(text: str, start: str, end: str | None) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    i += len(start)
    j = text.find(end, i) if end else -1
    return text[i:j if j >= 0 else None].strip()


def clip(s: str, n: int = 200) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[:n - 1] + "…"


# ------------------------------------------------------------------ the scripted "model"

def extraction(text: str, skip: set[str], limit: int | None) -> str:
    names = [n for n in names_in(text) if n not in skip]
    if limit is not None:
        names = names[:limit]
    if not names:
        return COMPLETE
    sents = sentences(text)
    recs, pairs = [], {}
    for n in names:
        first = next((s for s in sents if n in s.upper()), "")
        recs.append(f'("entity"{TUPLE}{n}{TUPLE}{entity_type(n)}{TUPLE}{clip(first) or n.title()})')
    allowed = set(names) | skip
    for s in sents:
        present = [n for n in allowed if n in s.upper()]
        for a, b in itertools.combinations(sorted(present), 2):
            if a in names or b in names:
                pairs.setdefault((a, b), [0, s])[0] += 1
    for (a, b), (count, s) in list(pairs.items())[:12]:
        recs.append(f'("relationship"{TUPLE}{a}{TUPLE}{b}{TUPLE}{clip(s)}{TUPLE}{min(10, count + 1)})')
    return f"\n{RECORD}\n".join(recs) + f"\n{COMPLETE}"


def read_csv(block: str) -> list[dict]:
    if not block.strip():
        return []
    return list(csv.DictReader(io.StringIO(block)))


def report(user: str) -> str:
    ents = read_csv(section(user, "-----Entities-----", "-----Relationships-----"))
    rels = read_csv(section(user, "-----Relationships-----", "-----Excerpts-----"))
    m = re.search(r"between 1 and (\d+) findings", user)
    max_f = int(m.group(1)) if m else 5
    ents.sort(key=lambda e: -float(e.get("degree") or 0))
    top = [e.get("entity", "") for e in ents[:3]]
    title = " and ".join(t for t in top if t) or "Unnamed community"
    rel_desc = rels[0]["description"] if rels else ""
    findings = []
    for e in ents[:max_f]:
        rids = [r["id"] for r in rels if e.get("entity") in (r.get("source"), r.get("target"))]
        ref = f"Entities ({e.get('id')})"
        if rids:
            ref += f"; Relationships ({', '.join(rids[:5])}{', +more' if len(rids) > 5 else ''})"
        findings.append({"summary": f"{e.get('entity')} ({e.get('type') or 'entity'})",
                         "explanation": f"{clip(e.get('description') or e.get('entity', ''), 300)} [Data: {ref}]"})
    rating = min(10.0, 1.0 + len(ents) / 2 + len(rels) / 4)
    return json.dumps({
        "title": title,
        "summary": f"This community links {len(ents)} entities, chiefly {title}. {clip(rel_desc, 240)}".strip(),
        "rating": round(rating, 1),
        "rating_explanation": f"{len(ents)} entities and {len(rels)} relationships are involved.",
        "findings": findings})


def question_of(user: str) -> str:
    m = re.search(r"^(?:Question|Claim): (.*)$", user, re.M)
    return m.group(1).strip() if m else ""


def blocks(user: str, label: str) -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2).strip()) for m in
            re.finditer(rf"-----{label} (\S+)-----\n(.*?)(?=\n\n-----{label} |\Z)", user, re.S)]


def map_reply(user: str) -> str:
    q = content_words(question_of(user))
    points = []
    for rid, body in blocks(user, "Report"):
        overlap = q & content_words(body)
        if not overlap:
            continue
        text = re.sub(r"^(title|rank): .*$", "", body, flags=re.M).strip()
        best = max(sentences(text) or [text], key=lambda s: len(q & content_words(s)))
        points.append({"description": f"{clip(best, 300)} [Data: Reports ({rid})]",
                       "score": min(100, 20 * len(overlap))})
    if not points:
        points = [{"description": "No relevant information.", "score": 0}]
    return json.dumps({"points": points})


def reduce_reply(user: str) -> str:
    pts = [body.split("\n", 1)[-1] for _, body in blocks(user, "Analyst")]
    if not pts:
        return "The analysts' points do not answer the question."
    return "Based on the community reports:\n\n" + "\n\n".join(f"- {p}" for p in pts[:5])


def answer_reply(user: str) -> str:
    q = content_words(question_of(user))
    scored = []
    for _, body in blocks(user, "Record"):
        cite, _, text = body.partition("\n")
        cite = cite.replace("citation:", "").strip()
        best = max(sentences(text) or [text], key=lambda s: len(q & content_words(s)))
        scored.append((len(q & content_words(text)), clip(best, 300), cite))
    scored = [s for s in sorted(scored, key=lambda x: -x[0]) if s[0] > 0][:3]
    if not scored:
        return "The records do not answer this question."
    return " ".join(f"{s.rstrip('.')}. {c}" for _, s, c in scored)


def judge_reply(user: str) -> str:
    claim = question_of(user)
    cw, cneg = content_words(claim), bool(NEG & set(words(claim)))
    out = []
    for sid, span in blocks(user, "Span"):
        best = max(sentences(span) or [span], key=lambda x: len(cw & content_words(x)))
        ratio = len(cw & content_words(best)) / max(1, len(cw))
        sneg = bool(NEG & set(words(best)))  # negation of the sentence that matches, not of the whole span
        if ratio >= 0.5 and cneg != sneg:
            label = "contradicted"
        elif ratio >= 0.6:
            label = "supported"
        else:
            label = "unsupported"
        out.append({"span": int(sid), "label": label, "score": round(ratio, 3),
                    "reason": f"{round(ratio * 100)}% of the claim's content words appear in the span"})
    return json.dumps({"verdicts": out})


def summarize_reply(user: str) -> str:
    items = [ln[2:].strip() for ln in section(user, "Descriptions:", "Write one description").splitlines()
             if ln.startswith("- ")]
    return " ".join(dict.fromkeys(items)) or "No description."


def kind_of(messages: list[dict]) -> tuple[str, str]:
    """(kind asked now, kind of the original request) from the prompt markers."""
    base = ""
    for m in messages:
        if m.get("role") == "system":
            found = MARKER_RE.search(str(m.get("content", "")))
            if found:
                base = found.group(1)
                break
    last_user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    found = MARKER_RE.search(str(last_user.get("content", "")))
    return (found.group(1) if found else base or "unknown"), base or "unknown"


def respond(messages: list[dict]) -> tuple[str, str]:
    """(reply text, kind) for a chat request."""
    kind, base = kind_of(messages)
    first_user = next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")
    if kind == "glean":
        text = section(first_user, "-----TEXT-----", "-----END TEXT-----")
        said = " ".join(str(m.get("content", "")) for m in messages if m.get("role") == "assistant")
        skip = {n for n in names_in(text) if n in said}
        return extraction(text, skip, None), kind
    if kind == "extract" or (kind == "repair" and base == "extract"):
        return extraction(section(first_user, "-----TEXT-----", "-----END TEXT-----"), set(), FIRST_ROUND), kind
    table = {"report": report, "map": map_reply, "reduce": reduce_reply, "answer": answer_reply,
             "judge": judge_reply, "summarize": summarize_reply}
    fn = table.get(base if kind == "repair" else kind)
    return (fn(first_user) if fn else "OK"), kind


def hashed_embedding(text: str, dim: int) -> list[float]:
    v = [0.0] * dim
    for w in words(text):
        h = hashlib.blake2b(w.encode(), digest_size=8).digest()
        v[int.from_bytes(h[:4], "little") % dim] += 1.0 if h[4] & 1 else -1.0
    n = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / n for x in v]


# ------------------------------------------------------------------ HTTP

class State:
    def __init__(self, delay: float = 0.0):
        self.lock = threading.Lock()
        self.delay = delay
        self.reset()

    def reset(self) -> None:
        with self.lock:
            self.faults: list = []
            self.always: dict[str, str] = {}   # prompt kind (or "*") → a fault every such request gets
            self.context = 0                   # tokens a prompt may have; 0 = no limit
            self.retry_after = 1.0
            self.timeout_sleep = 2.0
            self.stats = {"requests": 0, "chat": 0, "embeddings": 0, "prompt_tokens": 0, "completion_tokens": 0,
                          "by_kind": {}, "faults": [], "authorized": 0, "max_tokens": {}, "response_format": 0,
                          "in_flight": 0, "max_in_flight": 0}  # requests being answered at once (concurrency)

    def take_fault(self, kind: str, base: str = ""):
        with self.lock:
            for i, f in enumerate(self.faults):
                want = f.get("kind") if isinstance(f, dict) else None
                if want is None or want == kind:
                    self.faults.pop(i)
                    name = str(f.get("fault") if isinstance(f, dict) else f)
                    self.stats["faults"].append(name)
                    return name
            name = self.always.get(base or kind) or self.always.get(kind) or self.always.get("*")
            if name:
                self.stats["faults"].append(name)
            return name


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "provrag-scripted-llm/1"

    def log_message(self, *args):  # quiet: tests and users read stats, not access logs
        pass

    @property
    def state(self) -> State:
        return self.server.state  # type: ignore[attr-defined]

    def _send(self, code: int, body, headers: dict | None = None) -> None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout fault): nothing to do

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return {}

    def do_GET(self):
        if self.path.rstrip("/") == "/stats":
            with self.state.lock:
                self._send(200, json.loads(json.dumps(self.state.stats)))
        elif self.path.rstrip("/") == "/v1/models":
            self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "provrag"}]})
        else:
            self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

    def do_POST(self):
        path = self.path.split("?")[0].rstrip("/")
        body = self._body()
        if path == "/control":
            with self.state.lock:
                self.state.faults.extend(body.get("fail_next", []))
                self.state.always.update(body.get("always") or {})
                self.state.context = int(body.get("context", self.state.context))
                for k in ("retry_after", "timeout_sleep", "delay"):
                    if k in body:
                        setattr(self.state, k, float(body[k]))
            return self._send(200, {"ok": True})
        if path == "/reset":
            self.state.reset()
            return self._send(200, {"ok": True})
        if path not in ("/v1/chat/completions", "/v1/embeddings"):
            return self._send(404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}})
        with self.state.lock:
            st = self.state.stats
            st["in_flight"] += 1
            st["max_in_flight"] = max(st["max_in_flight"], st["in_flight"])
        try:
            self._model(path, body)
        finally:
            with self.state.lock:
                self.state.stats["in_flight"] = max(0, self.state.stats["in_flight"] - 1)  # 0 after a reset

    def _model(self, path: str, body: dict) -> None:
        """A chat completion or an embedding request, with the fault scripted for it."""
        chat = path.endswith("completions")
        kind, base = kind_of(body.get("messages") or []) if chat else ("embedding", "embedding")
        with self.state.lock:
            st = self.state.stats
            st["requests"] += 1
            st["chat" if chat else "embeddings"] += 1
            st["by_kind"][kind] = st["by_kind"].get(kind, 0) + 1
            if chat:  # what the request asked of the reply: its budget by prompt kind, JSON mode
                st["max_tokens"][kind] = body.get("max_tokens")
                st["response_format"] += "response_format" in body
            if (self.headers.get("Authorization") or "").startswith("Bearer "):
                st["authorized"] += 1
        if self.state.delay:
            time.sleep(self.state.delay)
        fault = self.state.take_fault(kind, base)
        prompt = sum(count_tokens(str(m.get("content", ""))) for m in body.get("messages") or []) if chat else 0
        status = STATUS_FAULTS.get(fault) or (overlong_error(prompt, self.state.context)
                                              if chat and 0 < self.state.context < prompt else None)
        if status:
            return self._send(status[0], {"error": {"message": status[1], "type": "invalid_request_error"}})
        if fault in ("429",):
            return self._send(429, {"error": {"message": "Rate limit reached (scripted)", "type": "rate_limit_error"}},
                              {"Retry-After": f"{self.state.retry_after:g}"})
        if fault == "401echo":  # a provider that quotes the credentials back: provrag must scrub them
            auth = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            return self._send(401, {"error": {"message": f"Incorrect API key provided: {auth}",
                                              "type": "invalid_request_error"}})
        if fault and fault.isdigit():
            return self._send(int(fault), {"error": {"message": f"scripted HTTP {fault}", "type": "server_error"}})
        if fault == "badbody":
            return self._send(200, b"<html>this is not JSON</html>")
        if fault == "timeout":
            time.sleep(self.state.timeout_sleep)  # longer than the client's timeout: it has gone
        if chat:
            return self._chat(body, fault)
        return self._embeddings(body, fault)

    def _chat(self, body: dict, fault: str | None) -> None:
        messages = body.get("messages") or []
        text, kind = respond(messages)
        finish = "stop"
        if fault == "malformed":
            text = "" if kind in ("summarize", "reduce", "answer") else "Sure! Here is {what you asked for"
        elif fault == "truncated":
            text, finish = text[: max(1, len(text) // 2)], "length"
        elif fault in CHAT_FAULTS:
            text, finish = misbehave(fault, kind_of(messages)[1] if kind == "repair" else kind, text, messages)
        budget = body.get("max_tokens")
        if isinstance(budget, int) and budget > 0 and count_tokens(text) > budget:  # as a real server cuts a reply
            text, finish = encoding().decode(encoding().encode_ordinary(text)[:budget]), "length"
        tin = sum(count_tokens(str(m.get("content", ""))) for m in messages)
        tout = count_tokens(text)
        if fault != "timeout":  # a reply nobody receives is not billed
            with self.state.lock:
                self.state.stats["prompt_tokens"] += tin
                self.state.stats["completion_tokens"] += tout
        self._send(200, {
            "id": f"chatcmpl-scripted-{time.monotonic_ns()}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "scripted"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout}})

    def _embeddings(self, body: dict, fault: str | None) -> None:
        inputs = body.get("input", [])
        inputs = [inputs] if isinstance(inputs, str) else [str(x) for x in inputs]
        dim = int(body.get("dimensions") or EMBED_DIM)
        tin = sum(count_tokens(t) for t in inputs)
        if fault != "timeout":
            with self.state.lock:
                self.state.stats["prompt_tokens"] += tin
        data = []
        for i, t in enumerate(inputs):
            v = hashed_embedding(t, dim)
            if body.get("encoding_format") == "base64":
                v = base64.b64encode(struct.pack(f"<{dim}f", *v)).decode()
            data.append({"object": "embedding", "index": i, "embedding": v})
        self._send(200, {"object": "list", "data": data, "model": body.get("model", "scripted"),
                         "usage": {"prompt_tokens": tin, "total_tokens": tin}})


class ScriptedLLMServer:
    """In-process use: `with ScriptedLLMServer() as srv: cfg base_url = srv.url`."""

    def __init__(self, port: int = 0, delay: float = 0.0):
        count_tokens("warm up")  # load the BPE table now, not inside the first request (it takes a second)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.state = State(delay)  # type: ignore[attr-defined]
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="scripted-llm", daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def state(self) -> State:
        return self.httpd.state  # type: ignore[attr-defined]

    def stats(self) -> dict:
        with self.state.lock:
            return json.loads(json.dumps(self.state.stats))

    def fail_next(self, *faults, retry_after: float | None = None, timeout_sleep: float | None = None) -> None:
        with self.state.lock:
            self.state.faults.extend(faults)
            if retry_after is not None:
                self.state.retry_after = retry_after
            if timeout_sleep is not None:
                self.state.timeout_sleep = timeout_sleep

    def reset(self) -> None:
        self.state.reset()

    def start(self) -> "ScriptedLLMServer":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "ScriptedLLMServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m tests.llm_server",
                                 description="Scripted OpenAI-compatible server on 127.0.0.1 (for provrag's openai engine).")
    ap.add_argument("--port", type=int, default=8089)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds every reply waits (latency)")
    args = ap.parse_args(argv)
    try:
        srv = ScriptedLLMServer(args.port, args.delay)
    except OSError as e:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {e.strerror}", file=sys.stderr)
        raise SystemExit(2)
    print(f"scripted OpenAI-compatible server on {srv.url} (GET /stats, POST /control); Ctrl-C stops it",
          file=sys.stderr, flush=True)
    try:
        srv.httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        srv.httpd.server_close()


if __name__ == "__main__":
    main()
