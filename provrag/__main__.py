"""`python -m provrag`: the same command line as the `provrag` script."""
from provrag.cli import main

main()
