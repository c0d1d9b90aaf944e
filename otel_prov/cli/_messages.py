"""What the commands say on stderr: one line each, their own messages and the pipeline's
log alike (data goes to stdout).  Light, for ``otel-prov --help`` loads it."""

from __future__ import annotations

import logging
import sys

__all__ = ["OneLineLog", "log_one_line", "no_session", "say"]


def say(message: str) -> None:
    """One line on stderr: an error, a warning, or what the data on stdout leaves out."""
    print(f"otel-prov: {message}", file=sys.stderr)


def no_session(ident: str) -> str:
    return f"no session with id, trace id or conversation id {ident!r}"


class OneLineLog(logging.Handler):
    """A record of the pipeline's log as one line: its first, and the last of a traceback
    (the exception's type and message).  Counts the errors, for a command that writes
    fails when the pipeline could not store something, even where no result says so
    (writing the memtables out at shutdown)."""

    errors = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.errors += 1
        lines = record.getMessage().splitlines() or [""]
        if record.exc_info is not None and record.exc_info[1] is not None:
            error = record.exc_info[1]
            lines.append(f"{type(error).__name__}: {error}".splitlines()[0])
        say(lines[0] if len(lines) == 1 else f"{lines[0]} ({lines[-1].strip()})")


def log_one_line() -> OneLineLog:
    """The pipeline's warnings and errors on stderr, one line each, as the command's own
    messages are: a traceback tells the user of a command nothing a line would not."""
    handler = OneLineLog(logging.WARNING)
    logging.getLogger("otel_prov").addHandler(handler)
    return handler
