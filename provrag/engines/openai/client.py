"""The request layer of the `openai` engine: one place that talks to the server.

Why not just the `openai` client's own retries: provrag must count every request it sends
(manifest.json `llm.calls` has to match what the provider bills), honour Retry-After exactly,
stop hammering a server that is down, and keep the API key out of every message it records.
So the client is built with `max_retries=0` and this module owns the loop:

- retries with exponential backoff on 429 (waiting what Retry-After says), 5xx, 408/409,
  timeouts, connection errors and unreadable response bodies; a reply cut at its
  `max_tokens` (finish_reason "length") is asked once more with twice the budget, and if it
  is cut again the complete part is what the parser reads (a looping model loops again);
- every request bounded: max_tokens per step, a timeout per request, both from endpoint.py;
- a requests-per-minute limit and a cap on requests in flight, shared by all threads;
- the content-addressed reply cache (provrag.store.cache.Cache, key = model + messages +
  parameters); a reply is stored only once the caller has validated it, so a failed item is
  asked again on the next run while a re-run over unchanged input makes zero calls;
- accounting in engines.base.Usage per stage: `calls` counts requests a server received
  (every attempt, failed ones included; a refused connection reached nobody and is not
  counted), `cached`, input/output tokens as the server reports them (counted with cl100k
  when it reports none), and per item how it was made: by_model / fallback / failed
  (engines/usage.py; the engine decides which, count_item records it).
Which server and which key are decided in endpoint.py, before the first request. An item's
reply is parsed, repaired once and given up on in validate.py; the engine then falls back.
"""
from __future__ import annotations

import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from provrag.config import Config
from provrag.engines.openai.endpoint import (RequestTimer, concurrency_for, rejects_json_mode, reply_budget, resolve_key,
                                             retry_after_seconds)
from provrag.engines.openai.replies import looping
from provrag.store.cache import key_of

_KEYISH = re.compile(r"\b(sk-[A-Za-z0-9_\-*.]{4,}|Bearer\s+\S+)")


@dataclass
class Reply:
    text: str
    key: str
    cached: bool = False
    finish_reason: str = "stop"
    # why this model would be cut again if asked again ("" when nothing says so): its reply was cut at
    # max_tokens twice, or repeats itself. Kept with the cached reply, so a re-run knows it too.
    loops: str = ""


class _Retry(Exception):
    """One failed attempt that may succeed if tried again."""

    def __init__(self, reason: str, counted: bool, wait: float | None = None, kind: str = "other"):
        super().__init__(reason)
        self.reason, self.counted, self.wait, self.kind = reason, counted, wait, kind


class _GiveUp(Exception):
    """A failure retrying cannot fix (400, 401, 404 …)."""


class LLMClient:
    """Chat completions and embeddings against one OpenAI-compatible endpoint."""

    def __init__(self, cfg: Config, usage, section: str = "llm"):
        llm = cfg.llm
        s = getattr(cfg, section)  # [llm] or [embeddings]: model, base_url, api_key_env
        self.section = section
        self.model = s.model
        self.base_url = (s.base_url or (llm.base_url if section != "llm" else "") or "").strip()
        self._key = resolve_key(s.api_key_env, self.base_url, section, "" if section == "llm" else llm.api_key_env)
        self.timer = RequestTimer(llm.timeout, self.base_url)
        self.max_retries = max(0, llm.max_retries)
        self.backoff = float(llm.backoff_seconds)
        self.max_backoff = float(llm.max_backoff_seconds)
        self.concurrency = concurrency_for(llm.concurrency, self.base_url)
        rpm = float(llm.requests_per_minute)
        self._interval = 60.0 / rpm if rpm > 0 else 0.0
        self.temperature = llm.temperature
        self.seed = llm.seed
        self.llm = llm
        self.json_mode = llm.json_mode
        self.usage = usage
        self.cache = None
        self._lock = threading.Lock()
        self._sem = threading.BoundedSemaphore(self.concurrency)
        self._next_slot = 0.0
        self._unreachable = False  # set after an item failed on connection errors only
        self._bigger: dict[str, list[int]] = {}  # per stage: cut replies asked again with twice the budget, and how many came back whole
        self.give_up_after = max(0, llm.give_up_after)
        self._failed_in_a_row: dict[str, int] = {}  # per stage: items that failed since the last one the model made
        self._client = None

    def __repr__(self) -> str:  # never the key
        return f"LLMClient(section={self.section!r}, model={self.model!r}, base_url={self.base_url!r})"

    # ------------------------------------------------------------ helpers

    def scrub(self, text: str) -> str:
        """Remove the key (and anything shaped like one) from a message we are about to keep."""
        text = str(text)
        if self._key:
            text = text.replace(self._key, "[key]")
        return _KEYISH.sub("[key]", text)

    def _openai(self):
        timeout = self.timeout_for(0)  # each request passes its own; this one covers anything else
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(
                    api_key=self._key or "no-key-needed", base_url=self.base_url or None,
                    timeout=timeout, max_retries=0)
            return self._client

    def _add(self, stage: str, **counts) -> None:
        with self._lock:
            st = self.usage.stage(stage)
            for k, v in counts.items():
                setattr(st, k, getattr(st, k) + v)

    def timeout_for(self, reply_tokens: int):
        """An httpx timeout for one request whose reply may take `reply_tokens` (endpoint.RequestTimer)."""
        import openai

        with self._lock:
            seconds = self.timer.seconds(reply_tokens)
        return openai.Timeout(seconds, connect=min(10.0, seconds))

    def count_item(self, stage: str, how: str, label: str = "", reason: str = "", n: int = 1,
                   asked: bool = True) -> None:
        """`n` items of `stage` made `how` ("by_model", "fallback" or "failed"); a reason is kept
        (scrubbed) in usage.errors and, for the stage's warning line, in usage.reasons. An item
        not `asked` (the step was given up on) is counted in `not_asked` too, without a reason
        of its own: the note saying why was written once, when the step was given up."""
        with self._lock:
            st = self.usage.stage(stage)
            setattr(st, how, getattr(st, how) + n)
            streak = 0 if how == "by_model" else self._failed_in_a_row.get(stage, 0) + n
            self._failed_in_a_row[stage] = streak
            if not asked:
                st.not_asked += n
                return
            if self.give_up_after and streak >= self.give_up_after and streak - n < self.give_up_after:
                self.usage.errors.append(f"{stage}: the model failed {streak} items of this step in a row; its "
                                         f"remaining items are not asked for ([llm] give_up_after = {self.give_up_after})")
            if reason:
                what = {"fallback": "; the offline engine made it", "failed": "; left without a result"}.get(how, "")
                self.usage.errors.append(self.scrub(f"{stage} {label}: {reason}{what}")[:500])
                self.usage.reasons.setdefault(stage, []).append(self.scrub(reason)[:300])

    def gave_up(self, stage: str) -> bool:
        """True once `give_up_after` items of `stage` failed in a row (none made by the model since):
        a model that failed that many reports running will fail the next, and on a small local server
        each costs minutes. Items already asked for in other threads still count."""
        with self._lock:
            return bool(self.give_up_after) and self._failed_in_a_row.get(stage, 0) >= self.give_up_after

    def record_failure(self, stage: str, label: str, reason: str) -> None:
        """An item given up on with no result to show (e.g. an embedding batch)."""
        self.count_item(stage, "failed", label, reason)

    def record_note(self, stage: str, label: str, reason: str) -> None:
        """An error worth reporting that did not fail the item (e.g. a gleaning round lost)."""
        with self._lock:
            self.usage.errors.append(self.scrub(f"{stage} {label}: {reason}")[:500])

    def _throttle(self) -> None:
        if not self._interval:
            return
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next_slot)
            self._next_slot = slot + self._interval
        if slot > now:
            time.sleep(slot - now)

    def _wait(self, attempt: int, asked: float | None) -> float:
        if asked is not None:
            return min(asked, self.max_backoff)
        return min(self.max_backoff, self.backoff * (2 ** attempt)) * (0.75 + random.random() * 0.5)

    def _attempts(self, stage: str, send, label: str = "", timeout=None) -> tuple[object | None, str | None]:
        """Run send(attempt) until it works, retrying what may pass; (result, None) or (None, reason).
        `timeout`: the httpx timeout send() uses, named in a timed-out reason.

        A fault survived is noted in usage.errors as "recovered", so a run says what happened
        even when nothing failed.
        """
        import openai

        tries = 1 if self._unreachable else self.max_retries + 1
        reason, kinds, seen = "no attempt made", set(), []
        for attempt in range(tries):
            if attempt and self._unreachable and kinds == {"connection"}:
                break  # another item has just given up on this server: stop backing off too
            self._throttle()
            try:
                with self._sem:
                    try:
                        result = send(attempt)
                        self._add(stage, calls=1)
                    except openai.RateLimitError as e:
                        raise _Retry("HTTP 429 rate limited", True, retry_after_seconds(e.response.headers)) from None
                    except openai.APITimeoutError:
                        seconds = getattr(timeout, "read", None) or self.timer.seconds()
                        raise _Retry(f"timed out after {seconds:g}s", True, kind="timeout") from None
                    except openai.APIConnectionError as e:
                        raise _Retry(f"connection failed ({type(e.__cause__ or e).__name__})", False,
                                     kind="connection") from None
                    except openai.APIStatusError as e:
                        code = e.status_code
                        detail = e.body.get("message") if isinstance(e.body, dict) else None
                        msg = f"HTTP {code}: {detail or e.message}"[:300]
                        if code >= 500 or code in (408, 409):
                            raise _Retry(msg, True, retry_after_seconds(e.response.headers)) from None
                        self._add(stage, calls=1)
                        raise _GiveUp(msg) from None
                    except openai.APIResponseValidationError:
                        raise _Retry("unreadable response body", True) from None
                    except (ValueError, TypeError, AttributeError, IndexError, KeyError) as e:
                        raise _Retry(f"malformed response ({type(e).__name__})", True) from None
            except _Retry as r:
                if r.counted:
                    self._add(stage, calls=1)
                reason = r.reason
                kinds.add(r.kind)
                seen.append(r.reason)
                if r.kind == "timeout" and kinds == {"timeout"} and len(seen) >= 2:
                    break  # twice too slow: a third wait behind a busy server only delays every other item
                if attempt + 1 < tries:
                    time.sleep(self._wait(attempt, r.wait))
                continue
            except _GiveUp as g:
                return None, self.scrub(str(g))
            self._unreachable = False
            if seen:
                self.record_note(stage, label, f"recovered after {len(seen)} retr{'y' if len(seen) == 1 else 'ies'} "
                                               f"({'; '.join(dict.fromkeys(seen))})")
            return result, None
        if kinds == {"connection"}:
            self._unreachable = True  # later items try once instead of backing off again and again
        n = len(seen)
        return None, self.scrub(f"{reason} (after {n} attempt{'s' if n != 1 else ''})")

    # ------------------------------------------------------------ chat

    def params(self, step: str, json_mode: bool = False) -> dict:
        """A request's parameters for `step` (part of its cache key): every reply has a max_tokens budget."""
        p = {"temperature": self.temperature, "max_tokens": reply_budget(self.llm, step)}
        if self.seed is not None:
            p["seed"] = self.seed
        if json_mode and self.json_mode:
            p["response_format"] = {"type": "json_object"}
        return p

    def chat(self, stage: str, messages: list[dict], json_mode: bool = False,
             label: str = "") -> tuple[Reply | None, str | None]:
        """One completion: from the cache when it holds this exact request, else from the server.

        A reply cut at max_tokens is asked once more with twice the budget; cut again, it is
        returned with finish_reason "length" and the caller reads its complete part. Cut again, or
        repeating itself, its `loops` says so: the engine's answer step stops ask's wider routes,
        which would ask the same looping model (engine.py)."""
        params = self.params(stage, json_mode)
        key = key_of(self.model, messages, params)
        if self.cache is not None:
            hit = self.cache.get(key)
            if isinstance(hit, dict) and isinstance(hit.get("text"), str):
                self._add(stage, cached=1)
                return Reply(hit["text"], key, cached=True, loops=str(hit.get("loops") or "")), None
        reply, reason = self._complete(stage, messages, params, key, label)
        cut = reply is not None and reply.finish_reason == "length"
        repeats = cut and looping(reply.text)
        if cut and (repeats or self._bigger_never_helped(stage)):
            reply.loops = ("cut at max_tokens (finish_reason=length) and repeats itself" if repeats else
                           "cut at max_tokens (finish_reason=length) at a step where twice the budget has not helped")
            self.record_note(stage, label, "reply cut at max_tokens (finish_reason=length) "
                             + ("repeats itself" if repeats else "(asking again with a bigger budget "
                                "has not helped this step)") + ": not asked again; its complete part is read")
        elif cut:
            bigger = {**params, "max_tokens": params["max_tokens"] * 2}
            again, why = self._complete(stage, messages, bigger, key, label)
            if again is not None:
                reply = again
            with self._lock:  # [tried, helped]: a step whose bigger budgets never help stops asking for them
                tally = self._bigger.setdefault(stage, [0, 0])
                tally[0] += 1
                tally[1] += reply.finish_reason != "length"
            asked = f"max_tokens={bigger['max_tokens']}"
            if again is not None and reply.finish_reason == "length":
                reply.loops = f"cut at max_tokens twice (finish_reason=length; the second time with {asked})"
            self.record_note(stage, label, f"reply cut at max_tokens (finish_reason=length); asking with {asked} "
                                           f"failed ({why}): its complete part is read" if why else
                             f"reply cut at max_tokens (finish_reason=length), and again with {asked}: its complete "
                             "part is read" if reply.finish_reason == "length" else
                             f"recovered a reply cut at max_tokens (finish_reason=length) by asking with {asked}")
        if reply is None and "response_format" in params and rejects_json_mode(reason):
            # this server does not take response_format: ask without it from now on
            self.json_mode = False
            self.record_note(stage, label, f"server rejected response_format ({reason}); json_mode turned off")
            return self.chat(stage, messages, json_mode, label)
        return reply, reason

    def _bigger_never_helped(self, stage: str) -> bool:
        """Twice asked with twice the budget, twice cut again: this model loops at this step."""
        tried, helped = self._bigger.get(stage, (0, 0))
        return tried >= 2 and not helped

    def _complete(self, stage: str, messages: list[dict], params: dict, key: str,
                  label: str) -> tuple[Reply | None, str | None]:
        """One request with its retries; the reply's tokens counted and its speed timed."""
        from provrag.text.tokens import count_tokens

        timeout = self.timeout_for(params["max_tokens"])

        def send(attempt: int):
            t0 = time.monotonic()
            resp = self._openai().chat.completions.create(model=self.model, messages=messages, timeout=timeout,
                                                          **params)
            choice = resp.choices[0]
            text = choice.message.content or ""
            u = getattr(resp, "usage", None)
            tin = getattr(u, "prompt_tokens", None) if u else None
            tout = getattr(u, "completion_tokens", None) if u else None
            if tin is None:
                tin = sum(count_tokens(str(m.get("content", ""))) for m in messages)
            if tout is None:
                tout = count_tokens(text)
            self._add(stage, input_tokens=int(tin), output_tokens=int(tout))
            with self._lock:
                self.timer.record(int(tout), time.monotonic() - t0)
            return Reply(self.scrub(text) if self._key and self._key in text else text, key,
                         finish_reason=choice.finish_reason or "stop")

        return self._attempts(stage, send, label, timeout)

    def store(self, key: str, text: str, loops: str = "") -> None:
        """Keep a validated reply for this request key (with Reply.loops: a re-run asking the
        same question knows the model looped on it, and stops where the first run stopped)."""
        if self.cache is not None:
            self.cache.put(key, {"text": text, **({"loops": loops} if loops else {})})

    # ------------------------------------------------------------ embeddings

    def embed(self, stage: str, texts: list[str], dimensions: int = 0,
              label: str = "") -> tuple[list[list[float]] | None, str | None]:
        """One /v1/embeddings request for a batch (no cache here: the embedder caches per text)."""
        from provrag.text.tokens import count_tokens

        inputs = [t if t.strip() else " " for t in texts]  # the API rejects empty strings
        extra = {"dimensions": dimensions} if dimensions else {}

        timeout = self.timeout_for(0)

        def send(attempt: int):
            resp = self._openai().embeddings.create(model=self.model, input=inputs, encoding_format="float",
                                                    timeout=timeout, **extra)
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(inputs):
                raise ValueError("wrong number of embeddings")
            u = getattr(resp, "usage", None)
            tin = getattr(u, "prompt_tokens", None) if u else None
            if tin is None:
                tin = sum(count_tokens(t) for t in inputs)
            self._add(stage, input_tokens=int(tin))
            return [list(d.embedding) for d in data]

        return self._attempts(stage, send, label, timeout)

    # ------------------------------------------------------------ concurrency

    def map(self, fn, items: list) -> list:
        """fn over items with `concurrency` requests in flight; results in input order."""
        if len(items) <= 1 or self.concurrency == 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(fn, items))
