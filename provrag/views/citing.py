"""How an answer's citation blocks are shown to a reader, in the terminal and in the web app.

An extractive answer often cites one unit after each of its sentences ("… [Data: Sources (124)]
… [Data: Sources (124)] … [Data: Sources (124)]"): correct, since every sentence must say where it
stands, but a reader sees the same marker five times and reads five sources. A run of consecutive
blocks that cite exactly the same ids is shown once, after the run's last sentence. Only the
display changes: `--json`, traces and verify keep the answer as it was written.
"""
from __future__ import annotations


def block_key(block) -> tuple:
    """What a block cites, as a comparable value: its (kind, ids, +more) references, sorted."""
    return tuple(sorted((r.kind, tuple(sorted(r.ids)), bool(r.more)) for r in block.refs))


def repeated_blocks(blocks: list) -> set[int]:
    """Positions of the blocks (parse order) that the next block repeats: they are not shown."""
    return {i for i in range(len(blocks) - 1) if block_key(blocks[i]) == block_key(blocks[i + 1])}


def collapse_repeats(answer: str) -> str:
    """The answer with every repeated citation block removed (and the spaces before it), so a
    run of sentences citing the same ids carries the block once, at its end."""
    from provrag.query.citations import parse_citations

    blocks = parse_citations(answer or "").blocks
    hidden = repeated_blocks(blocks)
    if not hidden:
        return answer
    out, pos = [], 0
    for i, b in enumerate(blocks):
        if i not in hidden:
            continue
        a, e = b.span
        out.append(answer[pos:a].rstrip(" \t"))
        pos = e
    out.append(answer[pos:])
    return "".join(out)
