"""`provrag report`: a verified answer in, one self-contained HTML audit file out.

Stages, top to bottom:
  input    the verify result — a `provrag verify --json` file, or a stored trace: a verify
           trace carries its result in trace["verify"]; an ask trace is verified now
           (pipelines/verify.py)
  traces   the ask trace and the verify trace for the timelines (a verify trace names the ask
           trace it checked in its input stage), and the answer text they hold
  build    provrag/audit/report.build_report: claims, evidence, highlighted PDF pages
  write    temp file + rename, so a half-written report never replaces a good one
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from provrag.errors import UsageError
from provrag.config import Config

DEFAULT_MAX_PAGES = 8


class ReportError(UsageError):
    """Bad arguments or input (one-line message; the CLI exits 2)."""


def _is_verify_result(obj) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("claims"), list)


def read_verify_json(path: Path) -> dict:
    """A file written by `provrag verify --json` (optionally with "question"/"answer" keys)."""
    try:
        raw = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        raise ReportError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise ReportError(f"not a file: {path}") from None
    except OSError as e:
        raise ReportError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        obj = json.loads(raw)
    except ValueError as e:
        raise ReportError(f"{path} is not JSON ({e.msg} at line {e.lineno})") from None
    if not _is_verify_result(obj):
        raise ReportError(f"{path} is not `provrag verify --json` output (no \"claims\" list)")
    return obj


def stored_verify_result(t: dict) -> dict | None:
    """The verify result a verify trace stores (pipelines/verify.py writes it once, as
    trace["verify"]: the claims and summary of `verify --json`); None for any other trace."""
    found = t.get("verify")
    return found if _is_verify_result(found) else None


def _verify_now(t: dict, index_dir: Path, cfg: Config | None) -> tuple[dict, dict | None]:
    """Verify the answer of an ask trace now (stored as a verify trace, like `provrag verify`);
    returns (verify result, the verify trace)."""
    from provrag.pipelines.verify import run_verify

    if cfg is None:
        from provrag.config import load_config

        cfg = load_config(None)
    res = run_verify(index_dir, cfg, trace_id=t.get("trace_id"))
    return res.to_json(), res.trace


def _ask_trace_of(t: dict, index_dir: Path) -> dict | None:
    """The ask trace a verify run checked (its input stage names it), or None."""
    from provrag.store.traces import TraceNotFound, load_trace

    tid = None
    for s in t.get("stages") or []:
        if isinstance(s, dict) and s.get("name") == "input" and isinstance(s.get("data"), dict):
            tid = s["data"].get("trace_id")
    if not tid and isinstance(t.get("source"), dict):
        tid = t["source"].get("trace_id")
    if not isinstance(tid, str) or not tid or tid == t.get("trace_id"):
        return None
    try:
        found = load_trace(tid, index_dir)
    except TraceNotFound:
        return None
    return found if found.get("kind") != "verify" else None


def run_report(index_dir, out_path, *, trace_id: str | None = None, verify_json=None,
               max_pages: int = DEFAULT_MAX_PAGES, cfg: Config | None = None, docs_root=None) -> dict:
    """Write the report; returns {"out", "bytes", "claims", verdict counts, "page_images", "traces"}.

    --trace of an ask trace verifies its answer now (and stores that verify run, as `provrag
    verify --trace` would); --trace of a verify trace or --verify-json reuse the stored result.
    """
    from provrag.store.reader import IndexNotFound, open_index
    from provrag.audit.report import build_report

    if (trace_id is None) == (verify_json is None):
        raise ReportError("give exactly one of --trace ID or --verify-json FILE")
    if max_pages < 0:
        raise ReportError(f"--max-pages must be 0 or more (got {max_pages})")
    out_path = Path(out_path)
    if out_path.is_dir():
        raise ReportError(f"--out is a folder, not a file: {out_path}")
    if not out_path.parent.is_dir():
        raise ReportError(f"no such folder for --out: {out_path.parent}")
    index_dir = Path(index_dir)
    try:
        open_index(index_dir).close()
    except IndexNotFound as e:
        raise ReportError(str(e)) from None

    traces: list[dict] = []  # the ask trace, then the verify trace, as far as they are known
    if verify_json is not None:
        vj = read_verify_json(Path(verify_json))
        tid = vj.get("trace_id")
        if isinstance(tid, str) and tid:
            from provrag.store.traces import TraceNotFound, load_trace

            try:
                t = load_trace(tid, index_dir)
                traces = [x for x in (_ask_trace_of(t, index_dir), t) if x]
            except TraceNotFound:
                pass  # the timeline is optional; the verify result is the report
    else:
        from provrag.store.traces import TraceNotFound, load_trace

        try:
            t = load_trace(trace_id, index_dir)
        except TraceNotFound as e:
            raise ReportError(str(e)) from None
        vj = stored_verify_result(t)
        if vj is not None:
            traces = [x for x in (_ask_trace_of(t, index_dir), t) if x]
        else:
            vj, vt = _verify_now(t, index_dir, cfg)
            traces = [x for x in (t, vt) if x]
    # `verify --json` has no answer text: the traces have it (else the claims stand for it)
    question = vj.get("question") or next((x.get("question") for x in traces if x.get("question")), None)
    answer = vj.get("answer") if isinstance(vj.get("answer"), str) else next(
        (x["answer"] for x in reversed(traces) if isinstance(x.get("answer"), str)), None)
    ask_trace = next((x for x in traces if x.get("kind") == "ask"), None)
    if ask_trace is not None and answer and "index_changes" not in vj:
        from provrag.query.since import changes_since

        with open_index(index_dir) as reader:  # which cited ids changed since the answer was made
            vj = vj | {"index_changes": changes_since(reader, ask_trace.get("index_version"), answer)}
    html = build_report(vj, question=question, answer=answer, trace=traces, index_dir=index_dir,
                        docs_root=docs_root, max_pages=max_pages)
    tmp = out_path.with_name(f".{out_path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(html, encoding="utf-8")
        os.replace(tmp, out_path)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise ReportError(f"cannot write {out_path}: {e.strerror or e}") from None
    claims = [c for c in vj.get("claims") or [] if isinstance(c, dict)]
    verdicts = [str(c.get("verdict") or "unsupported").lower() for c in claims]
    return {"out": str(out_path), "bytes": len(html.encode("utf-8")), "claims": len(claims),
            **{v: verdicts.count(v) for v in ("supported", "contradicted", "unsupported")},
            "page_images": html.count('<figure class="page"'),
            "traces": [x.get("trace_id") for x in traces]}
