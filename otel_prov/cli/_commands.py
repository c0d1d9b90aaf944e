"""``otel-prov``: run the demo, list sessions, show one, query provenance with SPARQL,
import OTLP JSON trace files, receive OTLP, serve the web view.

Each command lives in a module of its own (or of its group), which declares it as a
:class:`~otel_prov.cli._parser.Command`: its flags, its example and its handler, which
parses, calls the pipeline and writes what the renderers (``_render*``) make of the
answer.  This module lists them in one table, each with its one-sentence help and its
module, and dispatches; the exit status is an :class:`~otel_prov.cli._exit.ExitCode`.
Errors are one line on stderr; data goes to stdout.

The table names modules, it does not import them: ``otel-prov --help`` loads none, and a
command loads its own module only (with the store, the web stack or the SPARQL parser it
needs), so that the answer comes at once (docs/design.md, "Start-up").
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from otel_prov._extras import MissingExtraError
from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._messages import log_one_line, say
from otel_prov.cli._parser import Command, Listed, Where, build_parser
from otel_prov.exporters._reading import StoreUnavailableError

__all__ = ["COMMANDS", "command", "main", "parser"]

_LISTED = (
    Listed(
        "demo",
        "run the demo agent, store its provenance and print its trace",
        "_demo",
    ),
    Listed(
        "sessions",
        "list agent runs (outermost sessions), newest first; ITER and TOOLS count the "
        "whole run, sub-agent sessions included",
        "_sessions",
    ),
    Listed(
        "show",
        "show one session: its question, iterations, tool calls, answer, and the "
        "sub-agent sessions it started, nested where they started",
        "_sessions",
    ),
    Listed(
        "why",
        "the derivation graph behind a run's answer, or behind any activity or entity: "
        "observations, the tool calls behind them (name, call id, arguments, status), the "
        "steps that chose them, retrieved chunks and their sources, the question and the "
        "conversation's earlier turns; failed attempts with their error",
        "_sessions",
    ),
    Listed(
        "diff",
        "compare two runs (question, agent, status), step by step (action, tool, "
        "arguments, status, observation, thought) and their answers: the first "
        "divergence, tool calls added or missing, changed arguments, statuses, thoughts "
        "and answers; exit 1 when anything differs",
        "_sessions",
    ),
    Listed(
        "summary",
        "a run in plain language, from its provenance alone (no model): what was asked, "
        "each step's action and outcome, failures included, what the answer rests on, "
        "time and tokens",
        "_sessions",
    ),
    Listed(
        "query",
        "run a SPARQL query: SELECT, ASK, CONSTRUCT or DESCRIBE, never an update (its "
        "default graph is the provenance graph; prefixes prov:, oprov:, rdf:, rdfs: and "
        "xsd: are predeclared)",
        "_query",
    ),
    Listed(
        "import",
        "OTLP JSON trace files (the Collector's file exporter: one export request per line, "
        "or one JSON document) into provenance; importing a file again adds nothing",
        "_import",
    ),
    Listed(
        "annotate",
        "add an evaluation to a stored run, sealed in a bundle of its own (the run's seal "
        "is untouched; verify checks both)",
        "_import",
    ),
    Listed(
        "review",
        "revise a goal, hypothesis or decision of a stored run as a person: the original "
        "stays, the revision is sealed in a bundle of its own",
        "_review",
    ),
    Listed(
        "receive",
        "an OTLP trace receiver (gRPC and HTTP) that maps whole traces, across services, "
        "into provenance; SIGTERM drains and exits",
        "_receive",
    ),
    Listed(
        "serve",
        "a read-only web view: sessions (filtered, paged), each session with its timeline "
        "and RDF downloads, two side by side, and a SPARQL box; prints its URL",
        "_serve",
    ),
    Listed(
        "mcp",
        "a Model Context Protocol server for LLM clients (Claude Desktop, Cursor, VS Code): "
        "tools list_runs, show_run, why, diff_runs, summarize_run, trace_spans, verify and "
        "sparql over the store, read only; stdio unless --http",
        "_mcp",
    ),
    Listed(
        "verify",
        "check that stored sessions are unchanged since export and every writer's chain is whole",
        "_verify",
    ),
    Listed(
        "keygen",
        "write an Ed25519 key pair (signing.key, signing.pub) for signing provenance",
        "_verify",
    ),
    Listed(
        "prune",
        "remove the runs that ended before a cutoff, leaving a signed tombstone per removed "
        "range of each writer's chain (verify reports the gap as pruned by policy)",
        "_prune",
    ),
    Listed(
        "audit-export",
        "write runs, their chain entries, signatures, checkpoints, tombstones and public "
        "keys into one file that verify --package checks with no store (its manifest "
        "signed with OTEL_PROV_SIGNING_KEY)",
        "_audit",
    ),
    Listed(
        "status",
        "delivery to the SPARQL store, from the spool directory the exporters write to: "
        "counters, spooled and dead-lettered batches (exit 1 when batches wait in the "
        "spool or were dead-lettered)",
        "_status",
    ),
    Listed(
        "flush",
        "store what waits on disk: batches parked beside the embedded store by processes "
        "that could not get it, or spooled for the SPARQL store (exit 1 when some still wait)",
        "_status",
    ),
)

COMMANDS: dict[str, Listed] = {entry.name: entry for entry in _LISTED}
"""Every command by name, in the order ``otel-prov --help`` lists them."""


def command(name: str) -> Command:
    """The command ``name`` as its module declares it (the module imported now)."""
    module = importlib.import_module(f"otel_prov.cli.{COMMANDS[name].module}")
    declared: tuple[Command, ...] = module.COMMANDS
    return next(each for each in declared if each.name == name)


def parser() -> argparse.ArgumentParser:
    """The parser of every command, each with its flags (every command module loaded)."""
    return build_parser(list(COMMANDS.values()), {name: command(name) for name in COMMANDS})


def _named(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names: its first word that is no option (``otel-prov`` itself
    takes only ``--help`` and ``--version``, which take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    named = _named(words)
    chosen = {named: command(named)} if named in COMMANDS else {}
    parsing = build_parser(list(COMMANDS.values()), chosen)
    args = parsing.parse_args(words)
    if args.command is None:
        parsing.print_help(sys.stderr)
        return ExitCode.USAGE_ERROR
    run = chosen[args.command]
    log = None if run.logs_itself else log_one_line()
    try:
        code = run.run(args)
        writes = run.where in (Where.WRITES, Where.STORE)
        if code is ExitCode.OK and writes and log is not None and log.errors:
            return ExitCode.STORE_ERROR  # the log above says what was not stored
        return code
    except (UsageError, MissingExtraError) as exc:
        say(str(exc))
        return ExitCode.USAGE_ERROR
    except StoreUnavailableError as exc:
        say(str(exc))
        return ExitCode.STORE_ERROR
    except BrokenPipeError:
        return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
