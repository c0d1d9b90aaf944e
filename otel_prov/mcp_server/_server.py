"""The MCP server of ``otel-prov mcp``: its tools, with their JSON Schemas, its resources
and its prompt, on the official SDK's ``MCPServer``.

Each tool asks :class:`~otel_prov.mcp_server._tools.Tools` with the reader its request
may read (``reads``: the server's own confinement over stdio, the tenant of the
request's token over HTTP), after taking one of ``max_calls`` places: a call beyond them
is told to come back, not queued.  Whatever goes wrong is a tool error result whose text
says what (an unknown id, a bad argument, a refused query, a store that cannot be read,
a query past its time), never an exception out of the server and never another reader's
data.  Every tool is marked read-only and closed-world.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal, TypedDict

from mcp.server.mcpserver import Context, MCPServer, UserMessage
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import ToolAnnotations
from pydantic import ConfigDict, Field, with_config
from typing_extensions import NotRequired

from otel_prov._version import __version__
from otel_prov.exporters._reading import StoreUnavailableError
from otel_prov.mcp_server._tools import MOST_ROWS, Tools, account_uri
from otel_prov.read._confinement import Confinement
from otel_prov.view._timed_query import QueryTimeoutError

__all__ = ["INSTRUCTIONS", "TOOLS", "build_server"]

TOOLS = (
    "list_runs",
    "show_run",
    "why",
    "diff_runs",
    "summarize_run",
    "trace_spans",
    "verify",
    "sparql",
)

INSTRUCTIONS = (
    "otel-prov holds the W3C PROV-O provenance of AI agent runs: every step, tool call, "
    "model call, outcome and what each answer was derived from. Find runs with list_runs "
    "(filters: agent, service, status, time, text), read one with show_run, ask why it "
    "answered (or failed) with why and summarize_run, compare two with diff_runs, see the "
    "services of its trace with trace_spans, check it is unchanged with verify, and ask "
    "anything else with sparql (read only; prefixes prov:, oprov:, rdf:, rdfs:, xsd: "
    "predeclared). Ids: a run's IRI, its trace id (32 hex digits) or its conversation id. "
    "A result with next_cursor has more: pass it back as cursor."
)

_READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

_RESULT = ConfigDict(extra="allow")
"""A key a result gains is passed on, never dropped by the check of its schema."""

RunId = Annotated[
    str,
    Field(
        description="a run: its IRI (urn:otel-prov:...), its trace id (32 hex digits) or "
        "its conversation id; the newest run it names",
        max_length=2_000,
    ),
]
Cursor = Annotated[
    str | None,
    Field(description="next_cursor of the result before, for the page after it", max_length=2_000),
]
Filter = Annotated[str | None, Field(max_length=2_000)]


@with_config(_RESULT)
class ListRunsResult(TypedDict):
    runs: Annotated[
        list[dict[str, Any]],
        Field(description="newest first: id, start, agent, question, iterations, tool_calls, "
              "failed_calls, status, trace_id, tokens, cost, evaluations, service"),
    ]  # fmt: skip
    next_cursor: str | None
    cut: NotRequired[str]


@with_config(_RESULT)
class ShowRunResult(TypedDict):
    run: Annotated[
        dict[str, Any],
        Field(description="the run as otel-prov show --format json gives it: question, "
              "answer, status, error, tokens, cost, evaluations, plans, approvals, and "
              "iterations (this page's) with their thought, action, tool calls and "
              "observations, model calls, sub-sessions"),
    ]  # fmt: skip
    runs_named: Annotated[list[str], Field(description="every run the id names, oldest first")]
    steps_from: Annotated[int, Field(description="the position of this page's first step")]
    next_cursor: str | None
    account: Annotated[str, Field(description="resource: the run told in Markdown")]
    turtle: Annotated[str, Field(description="resource: the run's PROV-O triples")]
    cut: NotRequired[str]


@with_config(_RESULT)
class WhyResult(TypedDict):
    root: Annotated[str, Field(description="the answer (or entity) explained")]
    nodes: Annotated[
        list[dict[str, Any]],
        Field(description="id, type (Answer, Observation, ToolCall, Iteration, Question, "
              "Document...), label, and call_id, tool, status, error, part_of, service, "
              "supports_answer (false: a failed attempt)"),
    ]  # fmt: skip
    edges: Annotated[
        list[dict[str, Any]],
        Field(description='{"from", "to", "relation"}: PROV relations from this page\'s nodes'),
    ]
    next_cursor: str | None
    cut: NotRequired[str]


@with_config(_RESULT)
class DiffResult(TypedDict):
    a: str
    b: str
    compared: Annotated[list[str], Field(description="what was compared")]
    same: bool
    iterations: Annotated[dict[str, int], Field(description="how many steps each run took")]
    first_divergence: Annotated[
        dict[str, Any] | None,
        Field(description='{"iteration", "field", "a", "b"}: where the runs first differ'),
    ]
    differences: list[dict[str, Any]]
    thoughts_changed: list[dict[str, Any]]
    reasoning_changed: list[dict[str, Any]]
    tool_calls: Annotated[
        dict[str, list[dict[str, Any]]], Field(description="calls added in b, missing from b")
    ]
    arguments_changed: list[dict[str, Any]]
    status_changed: list[dict[str, Any]]
    answer_changed: dict[str, Any] | None
    cut: NotRequired[str]


@with_config(_RESULT)
class SummaryResult(TypedDict):
    session: str
    sentences: Annotated[
        list[dict[str, Any]],
        Field(description='{"text", "refs"}: each sentence and the why-node ids it speaks of'),
    ]
    cut: NotRequired[str]


@with_config(_RESULT)
class TraceSpansResult(TypedDict):
    trace_id: str
    services: list[str]
    runs: Annotated[list[str], Field(description="the runs (outermost sessions) in the trace")]
    spans: Annotated[
        list[dict[str, Any]],
        Field(description="earliest first: id, kind, name, parent, service, status, start, "
              "end, error"),
    ]  # fmt: skip
    next_cursor: str | None
    cut: NotRequired[str]


@with_config(_RESULT)
class VerifyResult(TypedDict):
    verified: int
    failed: int
    checks: Annotated[
        list[dict[str, Any]],
        Field(description="session, bundle, ok, gates, problems (what failed and why), "
              "warnings, revised, notes"),
    ]  # fmt: skip
    next_cursor: str | None
    note: NotRequired[str]
    cut: NotRequired[str]


@with_config(_RESULT)
class SparqlResult(TypedDict):
    kind: Literal["select", "ask", "graph"]
    variables: NotRequired[list[str]]
    rows: NotRequired[list[dict[str, Any]]]
    boolean: NotRequired[bool | None]
    triples: NotRequired[int]
    turtle: NotRequired[str]
    next_cursor: str | None
    cut: NotRequired[str]


def _first_line(exc: BaseException) -> str:
    """What an error says, in one line (a store's message can run on)."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def build_server(
    tools: Tools,
    reads: Callable[[Any], Confinement],
    *,
    max_calls: int = 4,
) -> MCPServer:
    """The server over ``tools``; ``reads`` gives what a call may read from the HTTP
    request that carried it (``None`` over stdio), raising ``PermissionError`` to refuse."""
    server: MCPServer = MCPServer(
        "otel-prov",
        title="otel-prov: the provenance of AI agent runs",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        warn_on_duplicate_tools=True,
    )
    places = threading.BoundedSemaphore(max_calls)

    @contextmanager
    def answering(ctx: Context, error: type[Exception] = ToolError) -> Iterator[Confinement]:
        """The reader of the call ``ctx`` is, while it holds a place; what goes wrong in
        it raised as ``error`` (the SDK's tool or resource error), its text saying what."""
        if not places.acquire(blocking=False):
            raise error(
                f"{max_calls} calls are running, the most this server runs at once; try "
                "again in a few seconds"
            )
        try:
            confined = reads(ctx.request_context.request)
            yield confined
        except (PermissionError, LookupError, ValueError, QueryTimeoutError) as exc:
            raise error(_first_line(exc)) from exc
        except StoreUnavailableError as exc:
            raise error(f"the store cannot be read: {_first_line(exc)}") from exc
        finally:
            places.release()

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def list_runs(
        ctx: Context,
        agent: Annotated[Filter, Field(description="runs of this agent (its name) only")] = None,
        service: Annotated[Filter, Field(description="runs of this service.name only")] = None,
        status: Annotated[
            Literal["ok", "error", "incomplete", "running"] | None,
            Field(description="runs that settled so (error: the run itself failed)"),
        ] = None,
        since: Annotated[
            Filter, Field(description="runs started at or after (2025-11-30T09:00, UTC)")
        ] = None,
        until: Annotated[Filter, Field(description="runs started before (as since)")] = None,
        text: Annotated[
            Filter, Field(description="runs whose question or answer holds this (any case)")
        ] = None,
        limit: Annotated[int, Field(ge=1, le=100, description="at most this many runs")] = 20,
        cursor: Cursor = None,
    ) -> ListRunsResult:
        """Agent runs, newest first, filtered: each with its id, trace id, question, status,
        steps, tool calls, failed calls, tokens, cost and evaluations."""
        with answering(ctx) as confined:
            return tools.list_runs(  # type: ignore[return-value]
                confined, agent=agent, service=service, status=status, since=since,
                until=until, text=text, limit=limit, cursor=cursor,
            )  # fmt: skip

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def show_run(ctx: Context, run: RunId, cursor: Cursor = None) -> ShowRunResult:
        """One run in full: its question, each step (thought, action, tool calls with
        arguments, outcomes and observations, model calls with tokens and cost), the
        sub-agents it started, evaluations, approvals, plans and its answer."""
        with answering(ctx) as confined:
            return tools.show_run(confined, run, cursor)  # type: ignore[return-value]

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def why(
        ctx: Context,
        id: Annotated[
            str,
            Field(
                description="a run (IRI, trace id or conversation id: why its answer), or "
                "any activity or entity IRI (why it is what it is)",
                max_length=2_000,
            ),
        ],
        cursor: Cursor = None,
    ) -> WhyResult:
        """Why a run answered what it did, or why any entity is what it is: the derivation
        graph back to its sources (observations, the tool calls behind them and their
        arguments, the steps that chose them, retrieved documents, the question, earlier
        turns); failed attempts carry their error and supports_answer false."""
        with answering(ctx) as confined:
            return tools.why(confined, id, cursor)  # type: ignore[return-value]

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def diff_runs(
        ctx: Context,
        a: Annotated[RunId, Field(description="the first run")],
        b: Annotated[RunId, Field(description="the run to compare it with")],
    ) -> DiffResult:
        """Two runs compared step by step: where they first diverge, tool calls added or
        missing, changed arguments, statuses, thoughts, decisions and answers."""
        with answering(ctx) as confined:
            return tools.diff_runs(confined, a, b)  # type: ignore[return-value]

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def summarize_run(ctx: Context, run: RunId) -> SummaryResult:
        """A run in plain sentences from its provenance alone: what was asked, each
        step's action and outcome, failures, what the answer rests on, time and tokens."""
        with answering(ctx) as confined:
            return tools.summarize_run(confined, run)  # type: ignore[return-value]

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def trace_spans(
        ctx: Context,
        id: Annotated[
            str,
            Field(description="a trace id (32 hex digits), or a run", max_length=2_000),
        ],
        cursor: Cursor = None,
    ) -> TraceSpansResult:
        """Every span of a run's trace, whichever service recorded it: the HTTP calls,
        databases and other services around the run, and the runs in the same trace."""
        with answering(ctx) as confined:
            return tools.trace_spans(confined, id, cursor)  # type: ignore[return-value]

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def verify(
        ctx: Context,
        run: Annotated[
            str | None,
            Field(description="one run (as show_run); none: every run", max_length=2_000),
        ] = None,
        only_failed: Annotated[bool, Field(description="list the failed checks only")] = False,
        cursor: Cursor = None,
    ) -> VerifyResult:
        """Whether runs are unchanged since they were sealed, and every writer's chain
        whole: each check with what failed and why."""
        with answering(ctx) as confined:
            return tools.verify(  # type: ignore[return-value]
                confined, run, only_failed=only_failed, cursor=cursor
            )

    @server.tool(annotations=_READ_ONLY, structured_output=True)
    def sparql(
        ctx: Context,
        query: Annotated[
            str,
            Field(
                description="a SPARQL 1.1 SELECT, ASK, CONSTRUCT or DESCRIBE (never an "
                "update); prefixes prov:, oprov:, rdf:, rdfs:, xsd: are predeclared",
                max_length=100_000,
            ),
        ],
        limit: Annotated[
            int, Field(ge=1, le=MOST_ROWS, description="rows (or triples) per page")
        ] = 100,
        cursor: Cursor = None,
    ) -> SparqlResult:
        """Ask the provenance graph anything in SPARQL, read only: SERVICE is refused
        unless allowed, the query stops at a time limit, and it reads this reader's
        graph only. Activities: oprov:AgentSession, oprov:Iteration, oprov:ToolCall,
        oprov:ModelCall; entities: oprov:Question, oprov:Thought, oprov:Observation,
        oprov:Answer (text in prov:value); oprov:traceId, oprov:status, oprov:toolName."""
        with answering(ctx) as confined:
            return tools.sparql(  # type: ignore[return-value]
                confined, query, limit=limit, cursor=cursor
            )

    @server.resource(
        "otel-prov://runs/{run}",
        name="run",
        title="A run, told in Markdown",
        description="a run's summary, its steps and its flow (Mermaid)",
        mime_type="text/markdown",
    )
    def run_account(run: str, ctx: Context) -> str:
        with answering(ctx, ResourceError) as confined:
            return tools.account(confined, run)

    @server.resource(
        "otel-prov://runs/{run}/turtle",
        name="run-turtle",
        title="A run's PROV-O triples",
        description="every triple about the run, its activities, entities and agents",
        mime_type="text/turtle",
    )
    def run_turtle(run: str, ctx: Context) -> str:
        with answering(ctx, ResourceError) as confined:
            return tools.turtle(confined, run)

    @server.prompt(
        name="explain_run",
        title="Explain this run",
        description="why a run did what it did, and what went wrong if anything did",
    )
    def explain_run(
        run: Annotated[str, Field(description="the run: its IRI, trace id or conversation id")],
        ctx: Context,
    ) -> list[UserMessage]:
        with answering(ctx) as confined:
            account = tools.account(confined, run)
        return [
            UserMessage(
                f"Explain the agent run below to me: what it was asked, what it did step by "
                "step, and why it answered as it did. If a step or the run failed, say "
                "which, why, and what the answer still rests on. Use the otel-prov tools "
                f"(why, show_run, trace_spans) for more; the run's resource is "
                f"{account_uri(run)}.\n\n{account}"
            )
        ]

    return server
