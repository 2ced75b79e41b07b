"""The static parts of the audit report: its CSS and script, the verdict vocabulary, and the
small helpers every other part writes HTML with.

Why one module: the report's safety rests on two rules that must hold in every part — all
input text goes through `esc`, and the only inline style and script are the ones whose
sha256 the Content-Security-Policy allows (`csp_hash` of `CSS` and `JS`). Keeping them here
means a part cannot bring its own variant of either.

The input is a verify JSON file a user may have hand-edited or got from elsewhere, so the
coercions (`as_text`, `as_float`, `verdict_of`) accept anything and never raise.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json

VERDICTS = ("supported", "contradicted", "unsupported")
VERDICT_MARK = {"supported": "✓", "contradicted": "✗", "unsupported": "!"}
COLOURS = {"supported": "#1a7f37", "contradicted": "#cf222e", "unsupported": "#9a6700"}


def esc(value) -> str:
    """Escaped text for HTML content and attribute values (quotes included)."""
    return html.escape("" if value is None else str(value), quote=True)


def number(x, nd=2) -> str:
    """A score as text: floats to `nd` decimals, booleans lower case, None as a dash."""
    if isinstance(x, bool) or x is None:
        return "—" if x is None else str(x).lower()
    if isinstance(x, float):
        return f"{x:.{nd}f}"
    return esc(x)


def as_text(x) -> str:
    """A value from the input as text ("" for None): verify JSON may be hand-edited or foreign."""
    return "" if x is None else x if isinstance(x, str) else str(x)


def as_float(x) -> float:
    """A number from the input, 0.0 where it is none."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def percent(x) -> str:
    """A share (0..1) as "87 %", a dash where it is not a number."""
    return "—" if not isinstance(x, (int, float)) else f"{100 * float(x):.0f} %"


def shorten(v, n=160) -> str:
    """Any value as text of at most n characters ("…" where cut); non-strings as JSON."""
    s = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)
    return s if len(s) <= n else s[:n - 1] + "…"


def verdict_of(claim: dict) -> str:
    """The claim's verdict, one of VERDICTS: anything unknown counts as unsupported."""
    v = str(claim.get("verdict") or "").lower()
    return v if v in VERDICTS else "unsupported"


def csp_hash(s: str) -> str:
    """The Content-Security-Policy source that allows exactly this inline style or script."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(s.encode("utf-8")).digest()).decode("ascii") + "'"


CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;margin:0;background:#f6f8fa}
main{max-width:1180px;margin:0 auto;padding:20px 28px 60px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 10px}h3{font-size:16px;margin:0 0 6px;font-weight:600}
.sub{color:#57606a;font-size:13px}.box{background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:14px 18px;margin:10px 0}
.question{font-size:17px;font-weight:600}.answer{white-space:pre-wrap}
a.claim{color:inherit;text-decoration:none;border-radius:3px;padding:1px 2px}
a.claim sup{font-weight:700;margin-left:2px}
.v-supported.claim{background:#dafbe1;border-bottom:2px solid #1a7f37}
.v-contradicted.claim{background:#ffebe9;border-bottom:2px solid #cf222e}
.v-unsupported.claim{background:#fff8c5;border-bottom:2px solid #9a6700}
.cite{font-size:12px;color:#0550ae;background:#ddf4ff;border-radius:10px;padding:0 6px;white-space:nowrap}
.unplaced{display:block;margin-top:8px;font-size:13px}
.card{background:#fff;border:1px solid #d0d7de;border-left:6px solid #9a6700;border-radius:6px;padding:12px 16px;margin:14px 0}
.card.v-supported{border-left-color:#1a7f37}.card.v-contradicted{border-left-color:#cf222e}
.num{display:inline-block;min-width:22px;text-align:center;background:#eaeef2;border-radius:11px;font-size:13px}
.badge{font-weight:700;border-radius:4px;padding:1px 6px;color:#fff}
.badge.v-supported{background:#1a7f37}.badge.v-contradicted{background:#cf222e}.badge.v-unsupported{background:#9a6700}
.head{font-size:13px;color:#57606a;margin-bottom:6px}
ol.evidence{padding-left:20px;margin:6px 0}
li.ev{margin:10px 0;padding-top:8px;border-top:1px solid #eaeef2}
.meta{font-size:13px}.doc{font-weight:600}.route{font-size:12px;border:1px solid #afb8c1;border-radius:8px;padding:0 5px}
.via{font-size:12px;color:#57606a}.label{font-size:12px;font-weight:600}.label.v-supported{color:#1a7f37}
.label.v-contradicted{color:#cf222e}.label.v-unsupported{color:#9a6700}.cit{font-size:12px;border-radius:8px;padding:0 5px}
.cit.ok{background:#dafbe1}.cit.no{background:#ffebe9}details.more-ev>summary{font-size:13px;font-weight:400;color:#0969da}.warn{font-size:13px;color:#9a6700;background:#fff8c5;border-radius:4px;padding:2px 6px}
blockquote.quote,p.para{margin:6px 0;padding:6px 10px;background:#f6f8fa;border-left:3px solid #d0d7de;white-space:pre-wrap;font-size:14px}
mark{background:#ffe58f}
figure.page{margin:8px 0 0}figure.page svg{display:block;max-width:100%;height:auto;border:1px solid #d0d7de;background:#fff}
details.whole summary{font-size:12px;font-weight:400;color:#0969da;margin:4px 0}
rect.hl{fill:none;stroke:#e07000;stroke-width:2}
figcaption{font-size:12px;color:#57606a;margin-top:4px}
.filters{margin:8px 0}.filters button{font:inherit;font-size:13px;margin-right:6px;padding:2px 10px;border:1px solid #d0d7de;border-radius:12px;background:#fff;cursor:pointer}
.filters button[aria-pressed=true]{background:#0969da;color:#fff;border-color:#0969da}
body[data-filter=supported] .card:not(.v-supported),body[data-filter=contradicted] .card:not(.v-contradicted),
body[data-filter=unsupported] .card:not(.v-unsupported){display:none}
.summary,.timeline{max-width:100%;height:auto}
table{border-collapse:collapse;font-size:12px;margin:4px 0}td,th{border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top}
dl{margin:4px 0;display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;font-size:13px}dt{color:#57606a}dd{margin:0}
details.stage{margin:6px 0;background:#fff;border:1px solid #d0d7de;border-radius:6px;padding:4px 10px}
summary{cursor:pointer;font-weight:600}dl.facts{grid-template-columns:repeat(3,max-content minmax(0,1fr))}.notes li{color:#9a6700}
"""

JS = """
(function(){var f=document.querySelector('.filters');if(!f)return;f.hidden=false;
f.addEventListener('click',function(e){var b=e.target.closest('button');if(!b)return;
document.body.setAttribute('data-filter',b.getAttribute('data-v'));
f.querySelectorAll('button').forEach(function(x){x.setAttribute('aria-pressed',String(x===b));});});})();
"""
