"""The commands that write provenance: ``import`` maps OTLP trace files, ``annotate``
adds an evaluation to a stored run."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from otel_prov.capture import _content
from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._messages import no_session, say
from otel_prov.cli._parser import Command, Where, add_format, finite
from otel_prov.cli._receive import add_no_content_argument, content_policy
from otel_prov.cli._render_report import render_import
from otel_prov.cli._shared import chain_writer, destination, graph
from otel_prov.exporters._stored import StoreReads
from otel_prov.ingest._annotate import annotate_run
from otel_prov.ingest._import import import_spans
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.prov._otlp_json import parse_otlp_json
from otel_prov.read._reader import ProvenanceReader

__all__ = ["COMMANDS"]


def _import_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("files", metavar="FILE", nargs="+", help="a trace file, or - for stdin")
    add_no_content_argument(sub)
    add_format(sub, text="one line of counts", json="the counts and the parts skipped")


def _import(args: argparse.Namespace) -> ExitCode:
    """Read every file first (a missing one is a usage error and nothing is imported), then
    import what parsed; a part that did not is one line on stderr and a usage error."""
    named = graph(args)
    try:
        patterns = _content.patterns_from_environment()
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if patterns:  # as the zero-code configurator does: the files may hold secrets too
        _content.set_redaction(None, patterns)
    parsed = [parse_otlp_json(_read_text(name), name) for name in args.files]
    problems = [problem for result in parsed for problem in result.problems]
    for problem in problems:
        say(problem)
    opened = destination(args)
    exporter = opened.exporter
    pipeline = WritePipeline.from_settings(
        exporter, chain=chain_writer(), graph=named, stream=False, content=content_policy(args)
    )
    try:
        summary = import_spans(
            (span for result in parsed for span in result.spans),
            pipeline=pipeline,
            stored=StoreReads(opened.reader, named),
            now_ns=time.time_ns(),
        )
        delivered = pipeline.store([], time.time_ns())  # the chain's head, and a flush
    finally:
        exporter.shutdown()
    for warning in summary.warnings:
        say(f"warning: {warning}")
    sys.stdout.write(render_import(summary, problems, args.files, args.format))
    if summary.not_stored or not delivered:
        kept = (
            f"what was not waits in the spool {opened.spool} (otel-prov status)"
            if opened.spool is not None
            else "see the log above"
        )
        say(f"not all provenance was stored; {kept}")
        return ExitCode.STORE_ERROR
    if not summary.traces:
        say("no agent session in the spans read: nothing imported")
    if problems:
        return ExitCode.USAGE_ERROR
    return ExitCode.OK if summary.traces else ExitCode.NOTHING_FOUND


def _read_text(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"{name} is not UTF-8 text (byte {exc.start})") from exc


def _annotate_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("id", metavar="ID", help="the run (session IRI, trace or conversation id)")
    sub.add_argument("--name", required=True, help="what is judged (e.g. relevance)")
    sub.add_argument("--score", type=finite, metavar="X", help="a number")
    sub.add_argument("--label", metavar="L", help="the verdict in words (e.g. pass)")
    sub.add_argument("--explanation", metavar="T", help="why")
    sub.add_argument(
        "--evaluator",
        default="otel-prov annotate",
        metavar="NAME",
        help="who judged (default: otel-prov annotate)",
    )
    add_format(sub, text="one line", json="the run, the annotation and its evaluation")


def _annotate(args: argparse.Namespace) -> ExitCode:
    """One evaluation of one run, written where ``configure()`` would write, the entry of
    a chain of its own (signed with ``OTEL_PROV_SIGNING_KEY``)."""
    if not args.name.strip():
        raise UsageError("--name must name what is judged (e.g. relevance)")
    chain = chain_writer()  # an unusable signing key is said first, before any lookup
    opened = destination(args)
    try:
        reader = ProvenanceReader(opened.reader, graph=graph(args)[1:-1])
        matches = reader.find(args.id)
        if not matches:
            say(no_session(args.id))
            return ExitCode.NOTHING_FOUND
        if len(matches) > 1:
            raise UsageError(
                f"{args.id!r} names {len(matches)} runs; give one session IRI: "
                + ", ".join(matches)
            )
        view = reader.session(matches[0])
        pipeline = WritePipeline.from_settings(
            opened.exporter, chain=chain, graph=graph(args), stream=False
        )
        annotated = annotate_run(
            view.id,
            answer=f"{view.answered_by or view.id}:answer" if view.answer is not None else None,
            name=args.name,
            score=args.score,
            label=args.label,
            explanation=args.explanation,
            evaluator=args.evaluator,
            pipeline=pipeline,
            now_ns=time.time_ns(),
        )
    finally:
        opened.exporter.shutdown()
    if not annotated.stored:
        say("the annotation was not stored (see the log above)")
        return ExitCode.STORE_ERROR
    if args.format == "json":
        print(
            json.dumps(
                {
                    "session": annotated.session,
                    "annotation": annotated.annotation,
                    "name": args.name,
                }
            )
        )
    else:
        print(f"annotated {annotated.session} with {args.name} ({annotated.annotation})")
    return ExitCode.OK


COMMANDS = (
    Command(
        "import",
        "otel-prov import traces.jsonl",
        _import,
        _import_arguments,
        where=Where.WRITES,
    ),
    Command(
        "annotate",
        "otel-prov annotate demo-conversation --name correctness --score 1 --label pass",
        _annotate,
        _annotate_arguments,
        where=Where.WRITES,
    ),
)
