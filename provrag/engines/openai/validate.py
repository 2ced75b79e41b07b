"""One item's reply, read and checked: ask, parse, ask once more saying what was wrong, or give up.

A small local model's first reply is often almost right (a fence around the JSON, a label
spelt "supports"); the parsers in replies.py read those generously and reject what cannot be
used — a wrong shape, an id the prompt never showed. Then one repair request sends the reason
back. What is still unusable raises ItemFailed with the reason, and the engine decides what
stands in for the item (engine.py: the offline engine, or nothing under `[llm] strict`).

A reply cut at max_tokens (finish_reason "length", after the client's one retry with a
bigger budget) is read up to its last complete record or sentence; when that part is not
usable there is no repair request — asked again, a model that loops loops again. Why the
reply read is cut for good (client.Reply.loops) goes to the caller in `notes`: the answer step
passes it on, and ask's search ends there when the attempt abstains (engine.py, query/escalate.py).
"""
from __future__ import annotations

from provrag.engines.openai.prompts import repair_message
from provrag.engines.openai.replies import complete_part

CUT = "reply cut at max_tokens (finish_reason=length)"


NOT_ASKED = "not asked: the model failed the items before it in a row ([llm] give_up_after)"


class ItemFailed(Exception):
    """A model step that produced nothing usable for one item, after retries and repair; or, when
    `asked` is False, an item the model was not asked for because its step was given up on."""

    def __init__(self, reason: str, asked: bool = True):
        super().__init__(reason)
        self.reason = reason
        self.asked = asked


def _readable(reply) -> str:
    return complete_part(reply.text) if reply.finish_reason == "length" else reply.text


def validated(client, stage: str, label: str, messages: list[dict], parse, json_mode: bool = False,
              with_text: bool = False, notes: dict | None = None):
    """The parsed value of the model's reply (with the accepted text when `with_text`: gleaning
    continues the conversation), or ItemFailed. The accepted text is cached under the first
    request's key too, so a re-run over the same input asks nothing. `notes["loops"]`, when
    given: why the reply read was cut at max_tokens for good ("" when it was not), set before
    the value returns or ItemFailed is raised."""
    notes = {} if notes is None else notes
    if client.gave_up(stage):
        raise ItemFailed(NOT_ASKED, asked=False)
    reply, reason = client.chat(stage, messages, json_mode, label)
    if reply is None:
        raise ItemFailed(reason or "no reply")
    notes["loops"] = reply.loops
    text = _readable(reply)
    try:
        value = parse(text)
    except ValueError as e:
        if reply.finish_reason == "length":
            raise ItemFailed(f"{CUT}; its complete part is unusable: {e}") from None
        problem = str(e)
        convo = messages + [{"role": "assistant", "content": reply.text[:8000]}, repair_message(problem)]
        fixed, reason = client.chat(stage, convo, json_mode, label)
        if fixed is None:
            raise ItemFailed(f"invalid reply ({problem}); repair request failed: {reason}") from None
        notes["loops"] = fixed.loops
        text = _readable(fixed)
        try:
            value = parse(text)
        except ValueError as e2:
            cut = f"; {CUT}" if fixed.finish_reason == "length" else ""
            raise ItemFailed(f"invalid reply, still invalid after one repair: {e2}{cut}") from None
        if not fixed.cached:
            client.store(fixed.key, text, fixed.loops)
            client.record_note(stage, label, f"recovered by one repair request (first reply: {problem})")
        client.store(reply.key, text, fixed.loops)
        return (value, text) if with_text else value
    if not reply.cached:
        client.store(reply.key, text, reply.loops)
    return (value, text) if with_text else value
