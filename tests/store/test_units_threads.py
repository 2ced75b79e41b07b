"""Text-unit rows read by several threads at once (a server answers requests side by side, each
retrieval reading its units with store/units.read_rows) are the rows one thread reads.

One pyarrow ParquetFile shared by every thread (kept per process to parse the footer once) failed
under 8 threads: "ReadRangeCache did not find matching cache entry", wrong rows, and the process
killed by SIGSEGV, "double free or corruption" or std::bad_alloc. The hammering runs in a child process,
so that a crash fails this test rather than the whole run."""
from __future__ import annotations

import subprocess
import sys
import textwrap

HAMMER = textwrap.dedent("""
    import random, sys, threading
    from pathlib import Path

    import pyarrow.parquet as pq

    from provrag.store.units import read_rows

    index = Path(sys.argv[1])
    rows = pq.ParquetFile(index / "text_units.parquet").metadata.num_rows
    wanted = [sorted(random.Random(i).sample(range(rows), min(rows, 1 + i % 6))) for i in range(60)]
    alone = [read_rows(index, w).to_pylist() for w in wanted]
    wrong = []

    def work(k, start):
        start.wait()
        for i in random.Random(k).sample(range(len(wanted)), len(wanted)):
            try:
                if read_rows(index, wanted[i]).to_pylist() != alone[i]:
                    wrong.append(f"thread {k}: other rows for {wanted[i]}")
            except Exception as e:
                wrong.append(f"thread {k}: {e!r}"[:200])

    for _ in range(6):
        start = threading.Barrier(8)
        threads = [threading.Thread(target=work, args=(k, start)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print(len(wrong), *wrong[:3], sep="\\n")
""")


def test_threads_reading_unit_rows_at_once_get_the_rows_one_thread_reads(squad_subset_index):
    done = subprocess.run([sys.executable, "-c", HAMMER, str(squad_subset_index)], capture_output=True, text=True,
                          timeout=120)
    said = (done.stdout + done.stderr)[-1500:]
    assert done.returncode == 0, f"the reading process died ({done.returncode}): {said}"
    assert done.stdout.splitlines()[0] == "0", said
