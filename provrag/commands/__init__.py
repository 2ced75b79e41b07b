"""The `provrag` command's parts beyond cli.py: the helpers every command shares (common.py)
and the commands that serve an index to other programs (serving.py: serve, mcp, sql).
cli.py registers them; each is a thin wrapper over a library call."""
