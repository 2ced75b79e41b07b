"""Page images drawn by several threads at once (a server answering page requests side by side)
are the images one thread draws, and the process lives: pdfium is not thread-safe, and two
drawings at a time crashed a server in libpdfium (SIGSEGV) under `make fuzz`'s soak. Run in a
child process, so a crash fails this test instead of ending the test session."""
from __future__ import annotations

import subprocess
import sys

DRAW_IN_THREADS = r"""
import hashlib, sys, threading
from provrag.audit.pages import render_page

pdfs = sys.argv[1:]
jobs = [(pdf, page) for pdf in pdfs for page in (1, 2, 3)]
alone = {job: hashlib.sha256(render_page(job[0], job[1], "the")["png"]).hexdigest() for job in jobs}
seen, errors = {}, []

def work(k):
    try:
        for _ in range(6):
            for job in (jobs if k % 2 else jobs[::-1]):
                digest = hashlib.sha256(render_page(job[0], job[1], "the")["png"]).hexdigest()
                seen.setdefault(job, set()).add(digest)
    except Exception as e:
        errors.append(repr(e))

threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
assert all(seen[job] == {alone[job]} for job in jobs), "a drawing differed from the one made alone"
print("ok", len(jobs))
"""


def test_pages_drawn_by_threads_at_once_are_the_pages_drawn_alone(shared):
    small = shared / "corpora" / "small"
    pdfs = [str(small / name) for name in ("R-FAQ.pdf", "asymptote-CAD.pdf", "asymptote-asy-latex.pdf")]
    done = subprocess.run([sys.executable, "-c", DRAW_IN_THREADS, *pdfs], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, (done.returncode, done.stderr[-1500:])
    assert done.stdout.split() == ["ok", "9"]
