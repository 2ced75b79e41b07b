"""What a connection's views answer the same way for as long as the connection lives, asked once.

A connection reads one version of an index: the CLI opens one per command, and a server opens new
cursors when `provrag index` replaces the folder (serve/opened.py), each kept for the requests of
that version. A served question asked the same things of its cursor every time: whether a table has
rows (~1.5 ms, six to eight times), every document's name (13 ms over 5,544 documents, twice), and
the documents of the units it fetched, joined again at each fetch (~7 ms, three or four times;
issue 30). Kept per connection, the answers go when it does.
"""
from __future__ import annotations

import threading
import weakref
from typing import Callable

_facts: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def remembered(con, key, compute: Callable[[], object]):
    """compute()'s value, computed once per connection and key. Shared with every later caller:
    read it, never change it. A compute that raises is not remembered."""
    with _lock:
        facts = _facts.get(con)
        if facts is None:
            facts = _facts[con] = {}
        if key in facts:
            return facts[key]
    value = compute()
    with _lock:
        return facts.setdefault(key, value)


def documents_of(con, ids) -> dict[str, tuple]:
    """{document id: (title, path, page_labels, title_shared, running_heads)} for those of `ids` that the
    documents table holds. title_shared: another document has the same title (then a source
    names its file too). Each document is read once per connection."""
    known: dict = remembered(con, "documents", dict)
    wanted = {i for i in ids if i is not None}
    with _lock:
        missing = [i for i in wanted if i not in known]
    if missing:
        shared = remembered(con, "shared titles", lambda: {r[0] for r in con.execute(
            "SELECT title FROM documents WHERE title IS NOT NULL GROUP BY title HAVING count(*) > 1").fetchall()})
        rows = con.execute("SELECT id, title, path, page_labels, running_heads FROM documents "
                           "WHERE id IN (SELECT unnest(?::VARCHAR[]))", [missing]).fetchall()
        with _lock:
            for i, title, path, labels, heads in rows:
                known[i] = (title, path, labels, title in shared, heads)
    with _lock:
        return {i: known[i] for i in wanted if i in known}
