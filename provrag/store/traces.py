"""Where query traces live: stored per `ask` (and `verify`) run, found by id, listed for `log`.

What a trace holds, stage by stage, is provrag/query/trace.py; this module only stores them.

Storage: one small parquet file per trace in INDEX/queries/, not a DuckDB database file.
- A DuckDB file takes a process-wide write lock: two `provrag ask` running at once on one
  index (a notebook and a shell, a batch of CLI calls) would fail or serialise on it, while
  one new file per query needs no lock at all and is written atomically (temp file + rename).
- The log is then just more parquet beside GraphRAG's tables: `provrag log` (and any
  notebook) reads `queries/*.parquet` through DuckDB's `read_parquet` glob, with filters.
- Re-indexing keeps the folder (store.writer.KEEP_ACROSS_RUNS), so the history survives rebuilds.
Each file has flat columns for listing and filtering (id, time, kind, question, method,
answer, counts) and the whole trace as one JSON column (`trace_json`) so its nested shape
can grow without a schema migration.

An index provrag did not build (a Microsoft GraphRAG output folder, any folder without
provrag's manifest.json) is never written to, whatever its permission bits, and neither is a
read-only one: their traces go to $XDG_DATA_HOME/provrag/traces/<sha256 of the index path, 16 hex>/ (default
~/.local/share/...). Every folder a trace was written to is remembered in
$XDG_DATA_HOME/provrag/trace_dirs.json, so `provrag trace ID` and `provrag log` work without
--index too.

Whose a trace is: each records how it was made (`via`: "cli" for a user's own process — the
command line or the library —, "server" for `provrag serve` and `provrag mcp`) and by which
OS user. `last` is the newest ask made the same way by the same user: `provrag verify --trace
last` after `provrag ask` checks that ask, not one a server answered for someone else meanwhile.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import threading
import uuid
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from provrag.results import listed_not_cited
from provrag.store.provenance import write_tables
from provrag.store.writer import may_write

from provrag.errors import UsageError

QUERIES_DIR = "queries"
_ID_RE = re.compile(r"^[0-9a-f]{4,32}$")

# how the traces of this context are made: "cli" unless a server says otherwise (made_via)
_VIA: ContextVar[str] = ContextVar("provrag_trace_via", default="cli")


class TraceNotFound(UsageError):
    """No stored trace has that id (or the id prefix is ambiguous); the message is one line."""


@contextmanager
def made_via(via: str):
    """Traces saved (and `last` looked up) inside this block are `via`'s ("server" in IndexService)."""
    token = _VIA.set(via)
    try:
        yield
    finally:
        _VIA.reset(token)


def origin() -> dict[str, str]:
    """{"via", "os_user"} of the traces made here: the door they came through and the OS user
    (none for a server's: its requests are not its OS user's, and its clients need not learn it)."""
    import getpass

    if _VIA.get() != "cli":
        return {"via": _VIA.get(), "os_user": None}
    try:
        user = getpass.getuser()
    except (OSError, KeyError):  # no login name in the environment nor in the password database
        user = f"uid {os.getuid()}"
    return {"via": _VIA.get(), "os_user": user}


def now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def new_id() -> str:
    return uuid.uuid4().hex[:12]


# ---- where traces live --------------------------------------------------------------------------

def _data_home() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "provrag"


def user_dir(index_path) -> Path:
    """The fallback folder of an index's traces (read-only index folders)."""
    key = hashlib.sha256(str(Path(index_path).absolute()).encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return _data_home() / "traces" / key


def trace_dirs(index_path=None) -> list[Path]:
    """Folders that may hold traces: an index's own and its fallback, or every remembered one."""
    if index_path is not None:
        return [Path(index_path).absolute() / QUERIES_DIR, user_dir(index_path)]
    dirs = []
    reg = _data_home() / "trace_dirs.json"
    try:
        dirs = [Path(p) for p in json.loads(reg.read_text())]
    except (OSError, ValueError, TypeError):
        dirs = []
    return dirs


# the registry is read, changed and written back whole: a server's threads storing traces at once
# each wrote back its own copy, and folders remembered by one were lost under another's
_REMEMBERING = threading.Lock()


def _remember(folder: Path) -> None:
    with _REMEMBERING:
        _remember_now(folder)


def _remember_now(folder: Path) -> None:
    reg = _data_home() / "trace_dirs.json"
    try:
        known = json.loads(reg.read_text()) if reg.exists() else []
        if not isinstance(known, list):
            known = []
    except (OSError, ValueError):
        known = []
    f = str(folder)
    if f in known:
        return
    known = [k for k in known if isinstance(k, str) and Path(k).is_dir()]  # forget deleted indexes
    known.append(f)
    try:
        reg.parent.mkdir(parents=True, exist_ok=True)
        tmp = reg.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(known[-500:], indent=0))
        os.replace(tmp, reg)
    except OSError:
        pass  # remembering is a convenience; the trace itself is already stored


# ---- save / load --------------------------------------------------------------------------------

def _row(trace: dict) -> dict:
    return {
        "trace_id": str(trace.get("trace_id")),
        "kind": str(trace.get("kind") or "ask"),
        "created": str(trace.get("created") or now_iso()),
        "question": trace.get("question"),
        "method": trace.get("method"),
        "engine": trace.get("engine"),
        "model": trace.get("model"),
        "answer": trace.get("answer"),
        "n_citations": len(trace.get("citations") or []),
        # the sources an answer's citations reached: not the passages listed beside them (an
        # abstention's closest, an answer's further ones), which the log would count as support
        "n_sources": sum(1 for s in trace.get("sources") or [] if not listed_not_cited(s)),
        "n_unresolved": len(trace.get("unresolved") or []),
        "total_ms": float(trace.get("total_ms") or 0.0),
        "index": str(trace.get("index") or ""),
        "via": trace.get("via"),
        "os_user": trace.get("os_user"),
        "trace_json": json.dumps(trace, ensure_ascii=False, default=str),
    }


def trace_schema():
    """The Arrow schema of a stored trace file (flat columns, and the whole trace as JSON)."""
    import pyarrow as pa

    return pa.schema([
        ("trace_id", pa.string()), ("kind", pa.string()), ("created", pa.string()), ("question", pa.string()),
        ("method", pa.string()), ("engine", pa.string()), ("model", pa.string()), ("answer", pa.string()),
        ("n_citations", pa.int64()), ("n_sources", pa.int64()), ("n_unresolved", pa.int64()),
        ("total_ms", pa.float64()), ("index", pa.string()), ("via", pa.string()), ("os_user", pa.string()),
        ("trace_json", pa.string())])


def save_trace(trace: dict, index_path) -> Path:
    """Store a trace (a dict with at least trace_id and kind) for an index; returns its file.

    Writes INDEX/queries/<time>-<id>.parquet, or the user fallback folder when the index
    folder cannot be written, and the trace's rows of the provenance tables in that folder's
    retrievals/ and citations/ (store/provenance.py). Never half-written: temp file, then rename.
    """
    import pyarrow.parquet as pq

    from provrag.store.rows import table_from_rows

    if not trace.get("trace_id"):
        trace["trace_id"] = new_id()
    for key, value in origin().items():  # whose it is: what `last` means (load_trace)
        trace.setdefault(key, value)
    folder = Path(index_path).absolute() / QUERIES_DIR
    if not may_write(folder):
        folder = user_dir(index_path)
        folder.mkdir(parents=True, exist_ok=True)
    trace.setdefault("stored_in", str(folder))
    row = _row(trace)
    stamp = re.sub(r"[^0-9]", "", row["created"])[:17]
    path = folder / f"{stamp}-{row['trace_id']}.parquet"
    # its retrievals and citations first, so a trace that can be listed has its rows beside it
    write_tables(trace, folder, path.name)
    table = table_from_rows([row], trace_schema())
    tmp = folder / f".{path.name}.{os.getpid()}.tmp"
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)
    _remember(folder)
    return path


def _files(dirs: list[Path]) -> list[Path]:
    out = []
    for d in dirs:
        if d.is_dir():
            out.extend(p for p in d.glob("*.parquet") if not p.name.startswith("."))
    return out


def stored_files(index_path, table: str | None = None) -> list[Path]:
    """The stored trace files of an index (its folder and its user fallback), or with `table`
    ("retrievals", "citations") that provenance table's files."""
    return _files([d / table if table else d for d in trace_dirs(index_path)])


def load_trace(trace_id: str, index_path=None) -> dict:
    """The stored trace with this id (a unique prefix of ≥ 4 characters is enough).

    `last` names the most recent ask trace made the same way by the same user (origin()), so
    scripts can chain `ask` then `verify --trace last` while a server answers others.
    """
    tid = (trace_id or "").strip().lower()
    if tid == "last":
        tid = last_ask(index_path)
    if not _ID_RE.match(tid):
        raise TraceNotFound(f"not a trace id: {trace_id!r} (ids are hex, as printed by ask)")
    files = [f for f in _files(trace_dirs(index_path)) if f.stem.rsplit("-", 1)[-1].startswith(tid)]
    ids = sorted({f.stem.rsplit("-", 1)[-1] for f in files})
    if not ids:
        where = f" for index {index_path}" if index_path is not None else ""
        raise TraceNotFound(f"no trace {trace_id}{where}")
    if len(ids) > 1:
        raise TraceNotFound(f"trace id {trace_id} is ambiguous ({', '.join(ids[:5])}); give more characters")
    import pyarrow.parquet as pq

    try:
        row = pq.read_table(files[0], columns=["trace_json"]).column(0)[0].as_py()
        return json.loads(row)
    except Exception as e:  # a damaged file: say which one
        raise TraceNotFound(f"trace file {files[0]} is unreadable: {str(e).splitlines()[0][:120]}") from None


def last_ask(index_path=None) -> str:
    """The id of this user's newest ask made the same way (origin()); when there is none, the
    error says whose the newest ask is, rather than taking someone else's."""
    me = origin()
    mine = list_traces(index_path, n=1, kind="ask", made_by=me)
    if mine:
        return mine[0]["trace_id"]
    where = f" for index {index_path}" if index_path is not None else ""
    anyone = list_traces(index_path, n=1, kind="ask")
    if not anyone:
        raise TraceNotFound(f"no stored ask trace{where}")
    t = load_trace(anyone[0]["trace_id"], index_path)
    raise TraceNotFound(f"no ask {whose(me)} is stored{where}; the newest ask, {t['trace_id']}, was made "
                        f"{whose(t)} at {t.get('created', '?')}: give its id to use it")


def whose(trace_or_origin: dict) -> str:
    """'by alice via cli', 'via server' (a trace stored before traces said: 'via ?')."""
    user, via = trace_or_origin.get("os_user"), trace_or_origin.get("via") or "?"
    return f"by {user} via {via}" if user else f"via {via}"


def list_traces(index_path=None, n: int = 20, text: str | None = None, kind: str | None = None,
                made_by: dict | None = None) -> list[dict]:
    """Most recent traces first (flat columns, no trace_json), optionally filtered by text/kind,
    and by origin ({"via", "os_user"}: a trace stored before traces said whose they were matches any)."""
    import duckdb

    files = _files(trace_dirs(index_path))
    if not files:
        return []
    con = duckdb.connect()
    try:
        for some in newest_first(files, n):
            if len(some) == len(files):
                return _listed(con, some, n, text, kind, made_by)
            try:
                rows = _listed(con, some, n, text, kind, made_by)
            except duckdb.Error:      # e.g. a column only older files have: take a larger set
                continue
            if len(rows) >= n:
                return rows
        return []
    finally:
        con.close()


STAMPED = re.compile(r"^(\d{17})-")


def newest_first(files: list[Path], n: int):
    """Ever larger sets of the newest trace files, the last one all of them.

    A file is named <created, 17 digits>-<id>.parquet (save_trace), so the newest n traces are
    in the newest n files: a server lists the newest 20 of thousands per request, and reading
    every file each time made a call's time and memory grow with every trace stored (the soak:
    ~100 MB and ~1 s a call at 900 traces). A set never splits one millisecond's files, and files
    named otherwise are in every set, so the query over a set gives the rows the query over all
    files would."""
    stamped = sorted((f for f in files if STAMPED.match(f.name)), key=lambda f: f.name, reverse=True)
    others = [f for f in files if not STAMPED.match(f.name)]
    size = max(64, 2 * int(n))
    while True:
        end = min(size, len(stamped))
        while 0 < end < len(stamped) and stamped[end].name[:17] == stamped[end - 1].name[:17]:
            end += 1
        yield stamped[:end] + others
        if end >= len(stamped):
            return
        size *= 4


def _listed(con, files: list[Path], n: int, text: str | None, kind: str | None, made_by: dict | None) -> list[dict]:
    """The query of list_traces over `files`."""
    where, params = [], []
    if text:
        where.append("(question ILIKE ? OR answer ILIKE ? OR method ILIKE ? OR trace_id ILIKE ?)")
        params += [f"%{text}%"] * 4
    if kind:
        where.append("kind = ?")
        params.append(kind)
    if made_by:
        where.append("(json_extract_string(trace_json, '$.via') IS NULL OR "
                     "(json_extract_string(trace_json, '$.via') = ? AND coalesce(json_extract_string(trace_json, '$.os_user'), '') = ?))")
        params += [made_by["via"], made_by["os_user"] or ""]
    sql = f"""
        SELECT trace_id, kind, created, question, method, engine, model, answer, n_citations,
               n_sources, n_unresolved, total_ms, index
        FROM read_parquet(?, union_by_name = true)
        {('WHERE ' + ' AND '.join(where)) if where else ''}
        ORDER BY created DESC, trace_id LIMIT {max(0, int(n))}
    """
    cur = con.execute(sql, [[str(f) for f in files]] + params)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]
