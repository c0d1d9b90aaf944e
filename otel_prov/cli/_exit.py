"""What ``otel-prov`` exits with, one name per meaning, so that scripts can branch on it.

Three values only, as the README and the product contract promise: 0 when the command did
what was asked (and found something, for a lookup), 1 when it ran but found nothing or a
check failed, 2 when it could not run (bad usage, unreadable input, a store that cannot be
read or written).  Several names share a value because callers state why they exit, and
readers of a handler should not have to decode a bare number.
"""

from __future__ import annotations

import enum

__all__ = ["ExitCode", "UsageError"]


class ExitCode(enum.IntEnum):
    OK = 0
    """Done; for a lookup, something was found."""
    NOTHING_FOUND = 1
    """No session, no row, a false ASK: nothing wrong with the question."""
    CHECK_FAILED = 1
    """A check ran and said no: a session failed ``verify``, batches wait in the spool."""
    USAGE_ERROR = 2
    """Bad flags or arguments, or input that cannot be read (a missing file, a bad line)."""
    STORE_ERROR = 2
    """The store cannot be opened, reached, read or written."""


class UsageError(Exception):
    """The command cannot run as asked; the message is one line, for stderr."""
