"""The one root of every error provrag reports to a user, and the exit status each means.

A library caller catches `ProvragError`; the command line (cli.py) turns one into a single
line on stderr and its `exit_code` (CONTRACT.md §5: 2 bad usage or input, 1 a check failed),
in one place. `provrag --debug …` shows the traceback instead.
"""
from __future__ import annotations


class ProvragError(Exception):
    """An error with a one-line message meant for the user."""

    exit_code = 2


class UsageError(ProvragError):
    """Bad arguments, settings or input: the user can fix it (exit 2)."""

    exit_code = 2


class CheckFailed(ProvragError):
    """A check the user asked for did not hold, e.g. `verify --fail-under` (exit 1)."""

    exit_code = 1
