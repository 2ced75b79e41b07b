"""The server rows of bench/question_speed.py: `provrag serve` of each tree, driven over HTTP.

Started with bench/serve_speed.py's start_server (as a user runs it) and driven with its drive()
(threads, one httpx client each). Per tree, one after the other on the same index and questions:
/v1/ask p50 and p95 with 1 client, requests/s with 8 clients ÷ with 1, /v1/verify latency per claim
(each verified answer is one the same server wrote; and 40 of eval/manuals' claims, one a request), and the
server's RSS after warm-up and at the end.
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path

from serve_speed import drive, start_server


SINGLE_CLAIMS = 40


def manuals_claims() -> list[str]:
    """eval/manuals' claims, in their order (the claims bench/serve_speed.py verifies too)."""
    import json

    path = Path(__file__).resolve().parents[1] / "eval" / "manuals" / "claims.jsonl"
    return [json.loads(x)["claim"] for x in path.read_text().splitlines() if x.strip()]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _verify_per_claim(base: str, asked: list[tuple[str, str]]) -> list[float]:
    """Seconds per claim of each /v1/verify of an answer the server gave."""
    import httpx

    out = []
    with httpx.Client() as http:
        for question, answer in asked:
            t0 = time.perf_counter()
            r = http.post(f"{base}/v1/verify", json={"answer": answer, "question": question}, timeout=300)
            r.raise_for_status()
            out.append((time.perf_counter() - t0) / max(1, len(r.json().get("claims") or [])))
    return out


def one_server(cli: Path, index: Path, questions: list[str], n: int, env: dict, log: Path) -> dict:
    import httpx

    proc, base = start_server(str(cli), index, env, log=log, wait=300)
    try:
        asked = []
        for q in questions[:4]:   # warm-up: the models load, the answers to verify
            a = httpx.post(f"{base}/v1/ask", json={"question": q}, timeout=300).json()
            if "[Data:" in (a.get("answer") or ""):
                asked.append((q, a["answer"]))
        rss_warm = _rss_mb(proc.pid)
        bodies = [{"question": questions[4 + i % (len(questions) - 4)]} for i in range(n)]
        one = drive(base, "/v1/ask", bodies, 1)
        eight = drive(base, "/v1/ask", bodies, 8)
        per_claim = _verify_per_claim(base, asked)
        # a steadier verify figure than the ≤ 4 answers above: claims alone, one a request
        single = drive(base, "/v1/verify", [{"answer": c} for c in manuals_claims()[:SINGLE_CLAIMS]], 1)
        return {"ask_1": one, "ask_8": eight, "clients8_over_1": eight["per_s"] / one["per_s"],
                "verify_claim_p50_s": statistics.median(per_claim) if per_claim else None,
                "verify_single_p50_s": single["p50_s"],
                "verified_answers": len(per_claim), "rss_warm_mb": rss_warm, "rss_end_mb": _rss_mb(proc.pid)}
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def server_rows(clis: dict, index: Path, questions: list[str], n: int, env: dict, work: Path) -> dict:
    out = {}
    for name, cli in clis.items():
        out[name] = one_server(cli, index, questions, n, env, work / f"serve-{name}-{index.name}.log")
        r = out[name]
        print(f"server {name}: /v1/ask p50 {r['ask_1']['p50_s']:.3f} s, 8 clients {r['ask_8']['per_s']:.2f}/s "
              f"vs 1 {r['ask_1']['per_s']:.2f}/s, verify per claim {r['verify_claim_p50_s']}", flush=True)
    return out
