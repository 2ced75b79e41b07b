"""Crash consistency of `provrag index` (tests/attack/crash.py says what a trial is and checks):
seeded kill -9 trials aimed at every stage of an update of a real corpus (../shared/corpora/small,
a file added, one changed, one removed), while `provrag serve` answers requests on the same index
folder: every request succeeds and names the index version it was made on (A's or B's).

Trials: 2 in the normal suite (load, chunk), 30 under `make fuzz` (each of the 9 windows
at least 3 times). PROVRAG_CRASH_SEED changes the moments."""
from __future__ import annotations

import json
import os
import shutil
import threading

import httpx
import pytest

from tests.attack import crash
from tests.attack.conftest import budget, record
from tests.serve.conftest import ServerProcess, provrag_command

TRIALS = budget(ci=2, full=30)
SEED = int(os.environ.get("PROVRAG_CRASH_SEED", "2929"))
REMOVED, CHANGED = "carroll-lookingglass.docx", "sotu-1863-lincoln.txt"


@pytest.fixture(scope="module")
def update(tmp_path_factory, small_corpus, serve_env, repo_root):
    """Version A of the index, the changed DOCS, version B (a reference update of a copy of A),
    and the measured timeline of that update."""
    w = tmp_path_factory.mktemp("crash")
    docs = w / "docs"
    docs.mkdir()
    for f in small_corpus.iterdir():
        if f.is_file():
            shutil.copyfile(f, docs / f.name)
    command = provrag_command()
    a = w / "A"
    built = crash.finish(*crash.start_index(command, docs, a, serve_env, repo_root))
    assert built.code == 0, "".join(built.stderr)[-1500:]
    (docs / REMOVED).unlink()
    with open(docs / CHANGED, "a") as f:
        f.write("\nA later note: the President's message was read aloud in the House on the second day.\n")
    (docs / "note.txt").write_text("The Halcyon plant's boiler runs at 40 bar. Morag Quillfeather keeps its log.\n")
    b = w / "B"
    shutil.copytree(a, b)
    reference = crash.finish(*crash.start_index(command, docs, b, serve_env, repo_root))
    assert reference.code == 0, "".join(reference.stderr)[-1500:]
    versions = {name: json.loads((w / name / "manifest.json").read_text())["index_version"] for name in ("A", "B")}
    assert versions["A"] != versions["B"]
    return {"w": w, "docs": docs, "A": a, "B": b, "files": {"A": crash.index_files(a), "B": crash.index_files(b)},
            "spans": crash.timeline(reference), "versions": versions, "command": command}


def keep_requesting(srv, versions: set[str], stop: threading.Event, seen: dict) -> None:
    """health, resolve and ask, one after another until `stop`: every failure and every version
    named are recorded (the assertions run in the test's thread)."""
    while not stop.is_set():
        for method, path, body in (("GET", "/v1/health", None),
                                   ("POST", "/v1/resolve", {"answer": "Lincoln spoke [Data: Sources (1, 2)]."}),
                                   ("POST", "/v1/ask", {"question": "What did Lincoln say about emancipation?"})):
            try:
                r = httpx.request(method, srv.url + path, json=body, timeout=300)
            except httpx.HTTPError as e:
                seen["failures"].append(f"{path}: {type(e).__name__}: {e}")
                continue
            seen["requests"] += 1
            version = r.headers.get("x-provrag-index-version")
            if r.status_code != 200 or version not in versions:
                seen["failures"].append(f"{path}: {r.status_code} version {version}: {r.text[:200]}")
            elif path == "/v1/ask" and r.json().get("index_version") != version:
                seen["failures"].append(f"ask: body names {r.json().get('index_version')}, header {version}")
            seen["versions"].add(version)


def test_kill_9_at_every_stage_of_an_update_leaves_a_or_b_while_serving(update, serve_env, repo_root):
    out = update["w"] / "served"
    crash.put_in_place(update["A"], out)
    outcomes = []
    seen = {"requests": 0, "failures": [], "versions": set()}
    stop = threading.Event()
    with ServerProcess(out, serve_env) as srv:
        client = threading.Thread(target=keep_requesting, args=(srv, set(update["versions"].values()), stop, seen))
        client.start()
        try:
            for window, fraction in crash.plan(TRIALS, SEED):
                killed, at = crash.kill_in_window(update["command"], update["docs"], out, serve_env, repo_root,
                                                  window, fraction, update["spans"])
                from provrag.store.reader import open_index

                with open_index(out) as reader:            # it opens
                    assert reader.count("text_units") > 0
                now = crash.index_files(out)
                state = next((name for name in ("A", "B") if not crash.same_index(now, update["files"][name])), None)
                rerun = crash.finish(*crash.start_index(update["command"], update["docs"], out, serve_env, repo_root))
                after = crash.same_index(crash.index_files(out), update["files"]["B"])
                outcomes.append({"window": window, "fraction": fraction, "killed": killed, "at_s": round(at, 2),
                                 "state": state, "rerun_exit": rerun.code, "rerun_differs": after,
                                 "leftovers": crash.leftovers(out)})
                crash.put_in_place(update["A"], out)
        finally:
            stop.set()
            client.join(timeout=600)
        server_log = srv.output()
    consistent = [o for o in outcomes if o["state"] and o["rerun_exit"] == 0 and not o["rerun_differs"]
                  and not o["leftovers"]]
    record({"test": "crash", "trials": len(outcomes), "consistent": len(consistent),
            "killed": sum(o["killed"] for o in outcomes), "windows": sorted({o["window"] for o in outcomes if o["killed"]}),
            "served_requests": seen["requests"], "served_failures": len(seen["failures"]), "outcomes": outcomes})
    assert len(consistent) == len(outcomes) == TRIALS, [o for o in outcomes if o not in consistent]
    # every stage window is hit while the run is in it (the commit window is short: a run may end first)
    assert all(o["killed"] for o in outcomes if o["window"] != "commit"), outcomes
    assert not seen["failures"], seen["failures"][:5]
    assert seen["requests"] >= TRIALS and seen["versions"] <= set(update["versions"].values())
    assert "Traceback" not in server_log
