"""Requests per second and latency of `provrag serve` against a CLI call, in one run (issue #19).

usage: python bench/serve_speed.py [--index INDEX] [--build INDEX] [--n 40] [--cli 6] [--clients 1,8]

The index: the ~9,500-unit bench corpus of bench/ask_speed.py (`--build DIR` makes it, minutes,
once). The server is started as a subprocess (`provrag serve --index … --port <free>`), as a user
runs it, and driven over real HTTP by 1 and 8 concurrent clients (threads, one httpx client each):
- `POST /v1/resolve` with answers the server wrote (citations of real asks);
- `POST /v1/ask` with SQuAD dev questions (the same for every configuration).
With `--before CMD` (a wrapper running the commit before, as the lead's provrag-before), instead:
/v1/ask at 1 and 8 clients and /v1/verify per claim of both versions in one run (`compare`), with
each server's RSS, on the questions and claims of eval/manuals by default.
Beside it, in the same run, the CLI's per-call wall time (`provrag resolve --json`, `provrag ask
--json`), which pays interpreter start-up, imports and index opening each time. Printed: requests/s,
p50 and p95 per endpoint and client count, and the CLI p50 ÷ server p50 (1 client) ratio. Writes
bench/results/serve_speed-<date>.json.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime as dt
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from ask_speed import EVAL_DEV, build, pct  # noqa: E402  (the same corpus and percentile)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(provrag: str, index: Path, env: dict, log: Path | None = None,
                 wait: float = 120) -> tuple[subprocess.Popen, str]:
    """`provrag serve` on a free port, once /v1/health answers: (process, base URL). `log`: its
    output goes to that file (a long run's stderr in a pipe nobody reads would fill and stall it)."""
    import httpx

    port = free_port()
    argv = [provrag, "serve", "--index", str(index), "--port", str(port)]
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT)
    else:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + wait
    while time.time() < deadline:
        if proc.poll() is not None:
            said = log.read_text(errors="replace") if log is not None else proc.stderr.read()
            raise SystemExit(f"server exited: {said[-500:]}")
        try:
            if httpx.get(f"{base}/v1/health", timeout=5).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            time.sleep(0.3)
    proc.kill()
    raise SystemExit(f"server did not answer /v1/health within {wait:.0f} s")


def drive(base: str, path: str, bodies: list[dict], clients: int, honour_busy: bool = False) -> dict:
    """Send every body once, `clients` at a time; latencies of the successful ones. With
    `honour_busy`, a 429 is waited out (its Retry-After, at most 5 s, as bench/soak.py's clients
    do) and sent again, the wait counted in the latency, the 429s in "busy_429"."""
    import httpx

    busy = []

    def one(body: dict, client: httpx.Client) -> float:
        t0 = time.perf_counter()
        while True:
            r = client.post(f"{base}{path}", json=body, timeout=300)
            if not (honour_busy and r.status_code == 429):
                break
            busy.append(1)
            time.sleep(min(5.0, float(r.headers.get("retry-after", "1"))))
        r.raise_for_status()
        return time.perf_counter() - t0

    http = [httpx.Client() for _ in range(clients)]
    t0 = time.perf_counter()
    with cf.ThreadPoolExecutor(clients) as pool:
        times = list(pool.map(lambda ib: one(ib[1], http[ib[0] % clients]), enumerate(bodies)))
    wall = time.perf_counter() - t0
    for c in http:
        c.close()
    return {"requests": len(times), "clients": clients, "per_s": len(times) / wall,
            "p50_s": statistics.median(times), "p95_s": pct(times, 0.95), "busy_429": len(busy)}


def cli_times(cmds: list[list[str]], env: dict) -> list[float]:
    out = []
    for cmd in cmds:
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        out.append(time.perf_counter() - t0)
        if p.returncode != 0:
            print(f"  CLI failed: {p.stderr.strip()[:200]}")
    return out


def rss_mb(proc: subprocess.Popen) -> float:
    """The server process's resident memory now (Linux /proc), in MB."""
    for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def questions_of(path: Path) -> list[str]:
    """The `question` of each line of a JSONL file (an eval set's questions.jsonl)."""
    return [json.loads(x)["question"] for x in path.read_text().splitlines() if x.strip()]


def claims_of(path: Path) -> list[str]:
    return [json.loads(x)["claim"] for x in path.read_text().splitlines() if x.strip()]


def compare(commands: dict[str, str], index: Path, questions: list[str], claims: list[str], n: int,
            clients: list[int], env: dict, log_dir: Path | None = None) -> dict:
    """/v1/ask at each client count and /v1/verify (one claim per request, 1 client) of each
    `provrag` command ({"before": wrapper of the commit before, "after": this tree}) on `index`,
    in one run: every server started first (idle, they cost nothing), then each measurement run
    on one server after the other, so load that comes and goes on a shared machine falls on both
    alike. Both servers get the same `n` questions at a client count, other ones at the next;
    every server is warmed with the same two.
    Returns {name: {"ask": rows, "verify": row, "rss_mb": [at start, after the runs]}}."""
    servers = {}
    try:
        for name, cmd in commands.items():
            proc, base = start_server(cmd, index, env, log=(log_dir / f"{name}.log") if log_dir else None)
            servers[name] = (proc, base)
        out = {name: {"ask": [], "rss_mb": [rss_mb(proc)]} for name, (proc, _) in servers.items()}
        for name, (_, base) in servers.items():
            drive(base, "/v1/ask", [{"question": q} for q in questions[-2:]], 1)      # warm
        for row, c in enumerate(clients):
            # other questions at each client count: a question asked before would find its
            # sentences' MiniLM vectors and its units kept (embeddings/remembered.py, KeptUnits)
            bodies = [{"question": questions[(row * n + i) % len(questions)]} for i in range(n)]
            # which goes first alternates: load that rises or falls during the run favours neither
            for name, (_, base) in (list(servers.items()) if row % 2 == 0 else list(servers.items())[::-1]):
                r = drive(base, "/v1/ask", bodies, c, honour_busy=True)
                out[name]["ask"].append(r)
                print(f"{name:7} /v1/ask {c:2d} client(s): {r['per_s']:6.2f} req/s  p50 {r['p50_s']:.3f} s  "
                      f"p95 {r['p95_s']:.3f} s  ({r['busy_429']} answered 429 first)", flush=True)
        for name, (proc, base) in servers.items():
            if claims:
                r = drive(base, "/v1/verify", [{"answer": c} for c in claims], 1, honour_busy=True)
                out[name]["verify"] = r
                print(f"{name:7} /v1/verify per claim: p50 {r['p50_s']:.3f} s  p95 {r['p95_s']:.3f} s", flush=True)
            out[name]["rss_mb"].append(rss_mb(proc))
    finally:
        for proc, _ in servers.values():
            proc.terminate()
            proc.wait(timeout=30)
    for name, rows in out.items():
        one, most = rows["ask"][0], rows["ask"][-1]
        rows["clients_over_one"] = most["per_s"] / one["per_s"]
        print(f"{name:7} {most['clients']} clients do {rows['clients_over_one']:.2f}x the requests/s of "
              f"{one['clients']}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path)
    ap.add_argument("--build", type=Path, help="index the bench corpus into this folder first")
    ap.add_argument("--n", type=int, default=40, help="requests per endpoint and client count")
    ap.add_argument("--cli", type=int, default=6, help="CLI calls per command")
    ap.add_argument("--clients", default="1,8")
    ap.add_argument("--before", help="a `provrag` command running the commit before (a wrapper script): "
                    "/v1/ask and /v1/verify of both, in one run, instead of the CLI comparison")
    ap.add_argument("--questions", type=Path, help="JSONL of questions for --before (default: eval/manuals)")
    ap.add_argument("--claims", type=Path, help="JSONL of claims for --before's /v1/verify (default: eval/manuals)")
    args = ap.parse_args()
    if args.before:
        if not args.index:
            ap.error("give --index with --before")
        env = dict(os.environ, XDG_DATA_HOME=tempfile.mkdtemp())
        qs = questions_of(args.questions or ROOT / "eval" / "manuals" / "questions.jsonl")
        claims = claims_of(args.claims or ROOT / "eval" / "manuals" / "claims.jsonl")[: args.n]
        found = compare({"before": args.before, "after": str(Path(sys.executable).parent / "provrag")}, args.index,
                        qs, claims, args.n, [int(c) for c in args.clients.split(",")], env)
        out = ROOT / "bench" / "results" / f"serve_speed-compare-{args.index.name}-{dt.date.today()}.json"
        out.write_text(json.dumps({"index": str(args.index), "n": args.n, "found": found, "cpus": os.cpu_count(),
                                   "load_avg": os.getloadavg(), "machine": platform.platform()}, indent=1))
        print(f"wrote {out}")
        return
    if args.build:
        build(args.build)
        args.index = args.index or args.build
    if not args.index:
        ap.error("give --index (or --build)")
    import httpx

    env = dict(os.environ, XDG_DATA_HOME=tempfile.mkdtemp())  # bench traces stay out of the user's registry
    provrag = str(Path(sys.executable).parent / "provrag")
    qs = [json.loads(x)["question"] for x in (EVAL_DEV / "squad" / "questions.jsonl").read_text().splitlines()
          if x.strip()]
    clients = [int(c) for c in args.clients.split(",")]
    proc, base = start_server(provrag, args.index, env)
    try:
        health = httpx.get(f"{base}/v1/health", timeout=30).json()
        # answers with real citations, written by the server itself (not timed)
        answers = []
        for q in qs[: max(8, args.n // 4)]:
            a = httpx.post(f"{base}/v1/ask", json={"question": q}, timeout=300).json()
            if "[Data:" in (a.get("answer") or ""):
                answers.append(a["answer"])
        if not answers:
            raise SystemExit("no ask produced a cited answer to resolve")
        rows = []
        for path, make in (("/v1/resolve", lambda i: {"answer": answers[i % len(answers)]}),
                           ("/v1/ask", lambda i: {"question": qs[40 + i % (len(qs) - 40)]})):
            drive(base, path, [make(i) for i in range(2)], 1)  # warm
            for c in clients:
                r = drive(base, path, [make(i) for i in range(args.n)], c)
                rows.append({"endpoint": path, **r})
                print(f"{path:12} {c:2d} client(s): {r['per_s']:6.2f} req/s  p50 {r['p50_s']:.3f} s  "
                      f"p95 {r['p95_s']:.3f} s", flush=True)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    with tempfile.TemporaryDirectory() as tmp:
        files = []
        for i, a in enumerate(answers[: args.cli]):
            f = Path(tmp) / f"a{i}.md"
            f.write_text(a)
            files.append(f)
        cli = {
            "/v1/resolve": cli_times([[provrag, "resolve", "--answer-file", str(f), "--index", str(args.index),
                                       "--json"] for f in files], env),
            "/v1/ask": cli_times([[provrag, "ask", q, "--index", str(args.index), "--json"]
                                  for q in qs[20: 20 + args.cli]], env),
        }
    ratios = {}
    for path, times in cli.items():
        served = next(r for r in rows if r["endpoint"] == path and r["clients"] == 1)
        ratios[path] = statistics.median(times) / served["p50_s"]
        print(f"{path:12} CLI call p50 {statistics.median(times):.2f} s (p95 {pct(times, 0.95):.2f} s): "
              f"the server is {ratios[path]:.1f}× faster per request", flush=True)
    out = ROOT / "bench" / "results" / f"serve_speed-{dt.date.today()}.json"
    out.write_text(json.dumps({"index": str(args.index), "health": health, "served": rows,
                               "cli_s": cli, "cli_over_server_p50": ratios, "cpus": os.cpu_count(),
                               "machine": platform.platform()}, indent=1, default=str))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
