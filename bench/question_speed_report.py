"""bench/question_speed.py's result → the Markdown of issue #30's table and the stage profiles."""
from __future__ import annotations

import re


def _s(x) -> str:
    return "—" if x is None else f"{x:.2f} s"


def _ms(x) -> str:
    return "—" if x is None else f"{1000 * x:.0f} ms"


def _row(figure: str, base, new, shown, goal: str, met) -> str:
    ratio = f"{new / base:.2f}×" if isinstance(base, (int, float)) and isinstance(new, (int, float)) and base else "—"
    verdict = "—" if met is None else ("yes" if met else "**no**")
    return f"| {figure} | {shown(base)} | {shown(new)} | {ratio} | {goal} | {verdict} |"


def _table(result: dict, goals: dict, not_given: str) -> list[str]:
    rows, floor = result["rows"], result["rows"]["floor_s"]
    out = ["| figure | base | new | new ÷ base | goal | met |", "| --- | --- | --- | --- | --- | --- |",
           f"| floor: `python -c \"import duckdb, pyarrow\"` | {floor:.2f} s | (same) | — | — | — |"]
    cs = rows["cold_sample"]
    out.append(_row("`provrag ask` cold, sample index, median", cs["base"]["median_s"], cs["new"]["median_s"],
                    lambda x: f"{x:.2f} s = {x / floor:.1f}× floor", f"≤ {goals['cold_sample_x_floor']:.0f}× floor",
                    cs["new"]["median_s"] <= goals["cold_sample_x_floor"] * floor))
    out.append(_row("… its peak RSS", cs["base"]["rss_mb"], cs["new"]["rss_mb"], lambda x: f"{x:.0f} MB",
                    f"≤ {goals['cold_sample_rss_mb']} MB", cs["new"]["rss_mb"] <= goals["cold_sample_rss_mb"]))
    if "new_empty_cache" in cs:
        e = cs["new_empty_cache"]
        out.append(_row("… new with an empty user cache (the first ask after install)", cs["base"]["median_s"],
                        e["median_s"], lambda x: f"{x:.2f} s = {x / floor:.1f}× floor", "—", None))
        out.append(_row("… its peak RSS", cs["base"]["rss_mb"], e["rss_mb"], lambda x: f"{x:.0f} MB", "—", None))
    if "cold_bench" in rows:
        cb = rows["cold_bench"]
        out.append(_row("`provrag ask` cold, ~9,500 units, median", cb["base"]["median_s"], cb["new"]["median_s"], _s,
                        f"≤ {goals['cold_bench_s']} s", cb["new"]["median_s"] <= goals["cold_bench_s"]))
        out.append(_row("… its peak RSS", cb["base"]["rss_mb"], cb["new"]["rss_mb"], lambda x: f"{x:.0f} MB", "—", None))
    if "cold_texlive" in rows:
        ct = rows["cold_texlive"]
        out.append(_row("`provrag ask` cold, TeX Live", ct["base"]["median_s"], ct["new"]["median_s"], _s,
                        f"≤ {goals['cold_texlive_s']} s", ct["new"]["median_s"] <= goals["cold_texlive_s"]))
    else:
        out.append(f"| `provrag ask` cold, TeX Live (606 PDFs) | {not_given} | | | ≤ 2 s | — |")
    for key, label in (("server_texlive", "TeX Live"), ("server_bench", "~9,500 units")):
        if key not in rows:
            if key == "server_texlive":
                out.append(f"| `/v1/ask` on TeX Live, p50 1 client / p95 8 clients | {not_given} | | | ≤ 150 ms / ≤ 1 s | — |")
            continue
        sv, goal = rows[key], goals["texlive_ask_p50_s" if key == "server_texlive" else "ask_p50_s"]
        b, n = sv["base"], sv["new"]
        out.append(_row(f"`/v1/ask` {label}, 1 client p50", b["ask_1"]["p50_s"], n["ask_1"]["p50_s"], _ms,
                        f"≤ {goal * 1000:.0f} ms", n["ask_1"]["p50_s"] <= goal))
        out.append(_row("… 1 client p95", b["ask_1"]["p95_s"], n["ask_1"]["p95_s"], _ms, "≤ 300 ms",
                        n["ask_1"]["p95_s"] <= 0.3))
        out.append(_row("… 8 clients p95", b["ask_8"]["p95_s"], n["ask_8"]["p95_s"], _ms, "≤ 1 s (TeX Live)",
                        None))
        out.append(_row(f"`/v1/ask` {label}, requests/s 8 clients ÷ 1 client", b["clients8_over_1"],
                        n["clients8_over_1"], lambda x: f"{x:.2f}", f"≥ {goals['clients8_over_1']}",
                        n["clients8_over_1"] >= goals["clients8_over_1"]))
        out.append(_row(f"`/v1/verify` {label}, per claim p50", b["verify_claim_p50_s"], n["verify_claim_p50_s"],
                        _ms, "≤ 150 ms", None if n["verify_claim_p50_s"] is None
                        else n["verify_claim_p50_s"] <= goals["verify_claim_p50_s"]))
        if "verify_single_p50_s" in b and "verify_single_p50_s" in n:
            out.append(_row("… one claim a request (40 of eval/manuals' claims), p50", b["verify_single_p50_s"],
                            n["verify_single_p50_s"], _ms, "≤ 150 ms",
                            n["verify_single_p50_s"] <= goals["verify_claim_p50_s"]))
        out.append(f"| server RSS after warm-up → end ({label}) | {b['rss_warm_mb']:.0f} → {b['rss_end_mb']:.0f} MB | "
                   f"{n['rss_warm_mb']:.0f} → {n['rss_end_mb']:.0f} MB | — | flat over 10,000 mixed requests "
                   "(not run here: bench/soak.py) | — |")
    if "million" in rows:
        m = rows["million"]
        ratio = {t: m["1M"][t]["stages_ms"]["warm"]["total"] / m["10k"][t]["stages_ms"]["warm"]["total"]
                 for t in ("base", "new")}
        out.append(_row("ask warm at 1M units ÷ at ~10k", ratio["base"], ratio["new"], lambda x: f"{x:.2f}",
                        "≤ 2", ratio["new"] <= goals["million_over_10k"]))
    else:
        out.append(f"| ask p50 at 1M units ÷ at 10k | {not_given} | | | ≤ 2 | — |")
    return out


def _uncited(answer: str) -> str:
    return re.sub(r"\[Data:[^\]]*\]", "[Data]", answer or "")


def _profile(name: str, prof: dict) -> list[str]:
    b, n = prof["base"]["stages_ms"], prof["new"]["stages_ms"]
    out = [f"### Stage profile, {name} (one child per tree: a question cold, then another warm; ms)", "",
           "| stage | base cold | new cold | base warm | new warm |", "| --- | ---: | ---: | ---: | ---: |"]
    for stage in b["cold"]:
        out.append(f"| {stage} | {b['cold'][stage]:.0f} | {n['cold'][stage]:.0f} | {b['warm'][stage]:.0f} | "
                   f"{n['warm'][stage]:.0f} |")
    hb, hn = prof["base"].get("hwm_mb") or {}, prof["new"].get("hwm_mb") or {}
    if hb.get("imports") and hn.get("imports"):
        out.append(f"| RSS high-water after imports | "
                   f"{hb['imports']:.0f} MB | {hn['imports']:.0f} MB | | |")
        out.append(f"| RSS high-water after the question (cold / warm columns) | {hb['cold']:.0f} MB | {hn['cold']:.0f} MB | {hb['warm']:.0f} MB | "
                   f"{hn['warm']:.0f} MB |")
    out.append(f"| peak RSS of the child | {prof['base']['peak_rss_mb']:.0f} MB | {prof['new']['peak_rss_mb']:.0f} MB | | |")
    same = prof["base"]["answers"] == prof["new"]["answers"]
    same_text = [_uncited(a) for a in prof["base"]["answers"]] == [_uncited(a) for a in prof["new"]["answers"]]
    out += ["", f"Same answers from both trees (both questions): {'yes' if same else '**no**'}; the same text "
            f"with citations aside: {'yes' if same_text else '**no**'}. (The ~9,500-unit corpus holds each "
            "document 6 times: where copies tie, which copy is cited can differ from one run of the same tree "
            "to the next.)", ""]
    return out


def report(result: dict, goals: dict, not_given: str) -> str:
    lines = [f"# question_speed: this tree vs {result['base_ref']} (one run, interleaved)", "",
             f"Machine: {result['machine']}, {result['cpus']} CPUs; load average before "
             f"{result['load_before'][0]:.1f}, after {result['load_after'][0]:.1f} (shared: trust the ratios). "
             + ("Bytecode cached (as an installed wheel has it)." if result.get("bytecode")
                else "No bytecode: every import compiles its source (PYTHONDONTWRITEBYTECODE)."), ""]
    lines += _table(result, goals, not_given) + [""]
    for key, name in (("profile_sample", "sample index"), ("profile_bench", "~9,500 units")):
        if key in result["rows"]:
            lines += _profile(name, result["rows"][key])
    return "\n".join(lines) + "\n"
