"""`provrag verify`: an answer in, each claim's verdict with document + page evidence out.

Stages, top to bottom (each recorded in the trace, provrag/store/traces.py):
  input     where the answer came from (a stored ask trace, a file, an argument, stdin), the question
  claims    the answer split into claims, each with its own citations (provrag/verify/claims.py)
  evidence  per claim: cited and retrieved units, one verdict each (provrag/verify/check.py)
  summary   counts, citation recall/precision (ALCE), the judge used
then the run is stored as a trace of kind "verify" beside the index's ask traces, the result
in it once, as trace["verify"] (what `provrag report --trace` reads).
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import replace
from pathlib import Path

from provrag.config import Config
from provrag.errors import UsageError
from provrag.pipelines.ask import attach_index_cache, count_embedder
from provrag.query.trace import Trace
from provrag.results import VerifyResult
from provrag.store.traces import save_trace


class VerifyError(UsageError):
    """Bad input, index or trace (one-line message; the CLI exits 2)."""


MAX_ANSWER_CHARS = 200_000


def read_answer(answer: str | None, answer_file: Path | None, trace_id: str | None, stdin_text: str | None,
                index_path: Path) -> tuple[str, str | None, dict]:
    """(answer, question from the trace or None, description of the source). Exactly one source;
    an answer text given together with a trace id is that trace's answer (the trace is the link)."""
    if answer is not None and trace_id is not None and answer_file is None and stdin_text is None:
        return answer, None, {"from": "argument", "trace_id": trace_id}
    given = [x for x in (answer, answer_file, trace_id, stdin_text) if x is not None]
    if len(given) != 1:
        raise VerifyError("give exactly one answer: --trace ID, --answer-file F, --answer TEXT or - (stdin)")
    if trace_id is not None:
        from provrag.store.traces import TraceNotFound, load_trace

        try:
            t = load_trace(trace_id, index_path)
        except TraceNotFound as e:
            raise VerifyError(str(e)) from None
        if not isinstance(t.get("answer"), str) or not t["answer"].strip():
            raise VerifyError(f"trace {trace_id} holds no answer (kind {t.get('kind')})")
        return t["answer"], t.get("question"), {"from": "trace", "trace_id": t.get("trace_id"),
                                                 "index_version": t.get("index_version")}
    if answer_file is not None:
        p = Path(answer_file)
        if not p.is_file():
            raise VerifyError(f"no such file: {p}")
        try:
            raw = p.read_bytes()
        except OSError as e:
            raise VerifyError(f"cannot read {p}: {e.strerror}") from None
        if b"\x00" in raw[:4096]:
            raise VerifyError(f"{p} is not a text file")
        text = raw.decode("utf-8", errors="replace")
        if p.suffix.lower() == ".json":  # `ask --json` output: verify its answer, with its question
            from provrag.query.citations import answer_in_json

            found = answer_in_json(text)
            if found:
                return found[0], found[1], {"from": "file", "path": str(p)}
        return text, None, {"from": "file", "path": str(p)}
    if stdin_text is not None:
        return stdin_text, None, {"from": "stdin"}
    return answer, None, {"from": "argument"}


def run_verify(index_path, cfg: Config, *, answer: str | None = None, answer_file: Path | None = None,
               trace_id: str | None = None, stdin_text: str | None = None, question: str | None = None,
               save: bool = True, progress=None, reader=None) -> VerifyResult:
    """Each claim's verdict with evidence (`to_json()`: CONTRACT.md §5's verify --json), the
    source of the answer, and the run's trace (stored beside the index's ask traces when `save`).
    `reader`: the index already open (a server's; not closed here) instead of opening `index_path`."""
    from provrag.engines import get_engine
    from provrag.store.reader import reading
    from provrag.verify.check import verify_answer

    index_path = Path(index_path)
    opened_here = reader is None
    with reading(index_path, reader) as reader:
        text, trace_question, source = read_answer(answer, answer_file, trace_id, stdin_text, index_path)
        if len(text) > MAX_ANSWER_CHARS:
            raise VerifyError(f"answer too long ({len(text):,} characters; at most {MAX_ANSWER_CHARS:,})")
        if not text.strip():
            raise VerifyError("the answer is empty")
        question = question if question is not None and question.strip() else trace_question
        engine = get_engine(cfg)
        attach_index_cache(engine, index_path)
        # read once a run, parsed once per version of the file (store/manifest.py)
        manifest = reader.manifest()
        count_embedder(reader, engine, manifest)

        tr = Trace("verify", question=question, index=str(index_path.absolute()), index_kind=reader.kind)
        with tr.stage("input", "Input") as d:
            d.update(source)
            d["question"] = question
        # a one-shot verify loads the claim head while claims are split and evidence retrieved
        # (engines/offline/warm.py); a server's is loaded already
        with tr.stage("evidence", "Evidence and verdicts") as d, \
                engine.warming("verify") if opened_here else nullcontext():
            result = verify_answer(reader, text, cfg, question=question, engine=engine, progress=progress,
                                   retrievals=d.setdefault("retrievals", []))   # why each unit was retrieved
            d["claims"] = len(result.claims)
        with tr.stage("summary", "Summary") as d:
            d.update(result.summary)
        changes = None
        if source.get("from") == "trace":  # which of its cited ids changed since the trace's index version
            from provrag.query.since import changes_since

            changes = changes_since(reader, source.get("index_version"), text)
        if changes is not None:
            with tr.stage("index_changes", "Cited ids changed since the answer") as d:
                d.update(changes)

    claims = [c.to_json() for c in result.claims]
    tr["answer"] = text
    tr["method"] = result.method
    tr["engine"] = engine.name
    tr["model"] = None if engine.name == "offline" else engine.model
    tr["judged_by"] = judged_by = engine.judged_by()   # which judge and which weights gave the verdicts
    # the result, stored once: `provrag report --trace` reads it back from here
    tr["verify"] = {"claims": claims, "summary": result.summary}
    tr["sources"] = [e for c in claims for e in c["evidence"][:1]]   # the deciding evidence, for `trace`/`log`
    if engine.name != "offline":
        tr["llm"] = usage = engine.usage.to_dict()
        result = replace(result, llm=usage)  # by_model / fallback / failed verdicts, in --json too
    tr["index_version"] = manifest.get("index_version")
    result = replace(result, trace_id=tr.id, source=source, index_changes=changes, judged_by=judged_by,
                     trace=tr.finish())
    if save:
        try:
            result.trace_file = str(save_trace(result.trace, index_path))
        except OSError as e:  # storing is a record, not the result: say so, keep the verdicts
            result.trace_error = str(e)
    return result
