"""The spans of one trace, indexed for the mapper: parents, roles, the session and step
each span belongs to, and the steps inferred where a convention records none.

Pure: built from span records, read by the mapper, no I/O.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from otel_prov import semconv as sc
from otel_prov.prov._conventions import (
    AGENT_NAME_KEYS,
    ANSWER_TOOLS,
    RESULT_KEYS,
    RUN_NAME_KEYS,
    TOOL_CALL_ID_KEYS,
    TOOL_NAME_KEYS,
    Request,
    agent_name,
    calls_in,
    defined_tools,
    model_output,
    output_text,
    read_sent,
    tool_name_from_span_name,
)
from otel_prov.prov._iris import (
    STEP,
    activity_iri,
    entity_iri,
    span_hex,
)
from otel_prov.prov._messages import ASSISTANT, TOOL, EventLike, Message
from otel_prov.prov._retrieved import RetrievedDocument, retrieved_documents
from otel_prov.prov._span_record import Role, SpanRecord

__all__ = [
    "MessageCall",
    "SpanTree",
    "Step",
    "call_name",
    "digest_keys",
    "first_text",
    "is_plan",
    "iteration_number",
    "recorded",
    "run_name",
    "session_agent_key",
    "succeeded",
]
_TWIN_OF = {twin: key for key, twin in sc.GEN_AI_CONTENT_TWINS.items()}


def digest_keys(key: str) -> tuple[str, str]:
    """(size, hash) attributes describing the whole value of content attribute ``key``,
    set by our instrumentation when the value was left off or cut by a length limit."""
    return sc.content_digest_keys(_TWIN_OF.get(key, key)) or ("", "")


def recorded(attributes: Mapping[str, Any], key: str) -> bool:
    """Was a value recorded under ``key``: the value itself, or (content capture off) the
    hash our instrumentation records in its place.  The graph's shape must not depend on
    whether the text was captured."""
    return key in attributes or digest_keys(key)[1] in attributes


def first_text(attributes: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for key in keys:
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def run_name(span: SpanRecord) -> str | None:
    return first_text(span.attributes, RUN_NAME_KEYS)


def succeeded(span: SpanRecord) -> bool:
    return span.status != "error" and span.end_ns is not None


def iteration_number(span: SpanRecord) -> int | None:
    value = span.attributes.get(sc.OTEL_PROV_ITERATION_NUMBER)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    try:
        return int(str(value))
    except ValueError:
        return None


def is_plan(span: SpanRecord) -> bool:
    return (
        span.attributes.get(sc.GEN_AI_OPERATION_NAME) == sc.PLAN_OPERATION
        or sc.OTEL_PROV_PLAN_STEPS in span.attributes
    )


def session_agent_key(session: SpanRecord) -> str | None:
    """What names a session's AI agent (its IRI): the GenAI agent id, else its name."""
    attributes = session.attributes
    name = first_text(attributes, AGENT_NAME_KEYS) or agent_name(attributes, session.name)
    return first_text(attributes, (sc.GEN_AI_AGENT_ID,)) or name


def call_name(span: SpanRecord) -> str:
    """The tool a tool-call span ran: its tool name attribute, else its span name
    (:func:`~otel_prov.prov._conventions.tool_name_from_span_name`)."""
    return first_text(span.attributes, TOOL_NAME_KEYS) or tool_name_from_span_name(span.name)


@dataclasses.dataclass(frozen=True, slots=True)
class MessageCall:
    """A tool call known only from a model's output messages: the instrumentation records
    no span of the tool's run (OpenInference's Haystack spans).  Its arguments are the
    message's, its result the next request's tool message answering it (same call id, or
    in order where the messages carry none), and it ran (``answered``) if that request
    carries one."""

    step_iri: str
    number: int
    """1-based, in the order the model asked for its calls."""
    name: str
    arguments: str
    call_id: str | None
    result: str | None
    answered: bool
    start_ns: int
    end_ns: int | None

    @property
    def iri(self) -> str:
        return entity_iri(self.step_iri, f"call-{self.number}")


@dataclasses.dataclass(slots=True)
class Step:
    """An iteration inferred from a model call and the tool calls that followed it (or,
    in a session with no model-call span, from a tool call: ``model`` is then that call)."""

    model: SpanRecord
    number: int
    tools: list[SpanRecord] = dataclasses.field(default_factory=list)
    calls: list[MessageCall] = dataclasses.field(default_factory=list)
    """Its tool calls known only from the model's output messages (no tool span)."""
    output: tuple[Message, ...] = ()
    """What the model call received back (:func:`~otel_prov.prov._conventions.model_output`,
    the session's next model call as its ``following``), read once: the step's calls, its
    thought and the run's answer are all in it, and reading it is most of what mapping a
    third-party run costs more than ours (docs/design.md)."""
    end_ns: int | None = None
    """When its model call and its tool calls had all ended (None: one has not)."""
    decided_ns: int = 0
    """When it chose its action: its first tool call's start, else the end of its model
    call (within the step)."""

    @property
    def thought(self) -> str | None:
        """What the model answered with (:func:`output_text`): the step's thought, or the
        answer of a last step."""
        return output_text(self.output)

    @property
    def iri(self) -> str:
        return entity_iri(activity_iri(self.model.trace_id, self.model.span_id), STEP)

    def within(self, at_ns: int) -> int:
        at_ns = max(at_ns, self.model.start_ns)
        end = self.end_ns
        return min(at_ns, end) if end is not None else at_ns


def _ends_loop(step: Step) -> bool:
    """Did the step's model choose an answer tool (DSPy's ``finish``)?"""
    return any(name in ANSWER_TOOLS for name, _, _ in calls_in(step.output))


def _overlaps(step: Step, tool: SpanRecord) -> bool:
    """Did ``tool`` start before every call of ``step`` had ended (run beside them)?"""
    ends = [span.end_ns for span in step.tools]
    return None in ends or tool.start_ns < max(end for end in ends if end is not None)


def _ended(spans: Sequence[SpanRecord]) -> int | None:
    ends = [span.end_ns for span in spans]
    return None if None in ends else max(end for end in ends if end is not None)


class SpanTree:
    """Index of the spans: parents, roles, and the session/iteration each span belongs to."""

    def __init__(
        self, spans: Iterable[SpanRecord], *, step_numbers: Mapping[int, int] | None = None
    ) -> None:
        """``step_numbers``: the numbers of inferred steps known from a mapping of the whole
        run so far, by the span id of the model call that opens each: a window of a run
        (``_stream_window``) holds only some of its steps, and a step it holds counts on
        from the one before it, not from 1."""
        self._step_numbers = step_numbers or {}
        self.spans: Sequence[SpanRecord] = sorted(spans, key=lambda s: (s.start_ns, s.span_id))
        self.by_id = {span.span_id: span for span in self.spans}
        self._wrappers: dict[int, SpanRecord] = {}
        self._merge_wrapper_sessions()
        self._tools: dict[int, list[SpanRecord]] = {}
        for span in self.spans:
            if span.role is Role.TOOL_CALL:
                iteration = self.enclosing(span, Role.ITERATION)
                if iteration is not None:
                    self._tools.setdefault(iteration.span_id, []).append(span)
        self._documents: dict[int, list[RetrievedDocument]] = {}
        self._chunks: dict[int, list[str]] = {}
        self._loose: dict[int, list[tuple[int, list[str]]]] = {}
        for span in self.spans:
            if span.role is Role.RETRIEVAL:
                self._index_retrieval(span)
        self.by_response_id = {
            span.attributes[sc.GEN_AI_RESPONSE_ID]: span
            for span in self.spans
            if isinstance(span.attributes.get(sc.GEN_AI_RESPONSE_ID), str)
        }
        """Spans by the GenAI response id they produced: an evaluation may name one."""
        self._sent: dict[int, tuple[Message, ...]] = {}
        self._steps: dict[int, list[Step]] = {}
        self._step_of: dict[int, Step] = {}
        self._requested: dict[int, tuple[str | None, str | None]] = {}
        self._answered: dict[int, str | None] = {}
        for span in self.spans:
            if span.role is Role.SESSION and not self.iterations(span):
                self._infer_steps(span)
        self._memo: dict[str, Any] = {}

    def memo(self, key: str, build: Callable[[SpanTree], Any]) -> Any:
        """What ``build`` makes of this tree, made once: an index a per-span mapping
        needs of the whole trace (the reasoning events, ``_decision_triples``)."""
        if key not in self._memo:
            self._memo[key] = build(self)
        return self._memo[key]

    def _index_retrieval(self, span: SpanRecord) -> None:
        """Where a retrieval's documents go, as an observation's would: to the tool call it
        ran in, else to its iteration and, with its end time, to what its session decided
        after it (its next thought, its answer)."""
        self._documents[span.span_id] = retrieved_documents(span.attributes)
        if not succeeded(span) or span.end_ns is None:
            return  # a failed retrieval returned nothing anything could rest on
        chunks = self.chunks(span)
        owner = self.enclosing(span, Role.TOOL_CALL) or self.enclosing(span, Role.ITERATION)
        if owner is not None:
            self._chunks.setdefault(owner.span_id, []).extend(chunks)
        session = self.enclosing(span, Role.SESSION)
        if session is not None and (owner is None or owner.role is Role.ITERATION):
            self._loose.setdefault(session.span_id, []).append((span.end_ns, chunks))

    def documents(self, retrieval: SpanRecord) -> list[RetrievedDocument]:
        return self._documents.get(retrieval.span_id, [])

    def chunks(self, retrieval: SpanRecord) -> list[str]:
        """IRIs of the Documents a retrieval generated, by rank (none if it failed)."""
        if not succeeded(retrieval):
            return []
        activity = activity_iri(retrieval.trace_id, retrieval.span_id)
        return [
            entity_iri(activity, f"document-{rank}")
            for rank in range(1, len(self.documents(retrieval)) + 1)
        ]

    def retrieved_in(self, span: SpanRecord) -> list[str]:
        """Documents retrieved inside a tool call or (outside its tool calls) an iteration."""
        return self._chunks.get(span.span_id, [])

    def retrieved_before(self, session: SpanRecord) -> list[tuple[int, list[str]]]:
        """(end time, documents) of the session's retrievals that ran outside tool calls."""
        return self._loose.get(session.span_id, [])

    def _merge_wrapper_sessions(self) -> None:
        """Spans that record one thing twice become plain spans, the one with the content
        stays:

        * a session whose direct child is a session of the same agent (OpenLLMetry wraps
          LangGraph's ``workflow`` span in an ``invoke_agent`` one): the outer one;
        * a session that names no agent around exactly one session, with only plain spans
          between them (the "Agent workflow"
          of OpenInference's openai-agents, OpenLLMetry's ``workflow``): the wrapper, so
          that the run is the agent's, named, with its question and its failed calls;
        * a model call whose direct child is a model call of the same name (LlamaIndex's
          OpenAILike): the outer one, so that one request is one model call.
        """
        wrappers: set[int] = set()
        inner: dict[int, list[SpanRecord]] = {}
        for span in self.spans:
            parent = self.parent(span)
            if span.role is Role.SESSION:
                # Only plain spans between (a tool call that starts an agent is no wrapper).
                outer = self.starter(span)
                if outer is not None and outer.role is Role.SESSION:
                    inner.setdefault(outer.span_id, []).append(span)
            if parent is None or parent.role is not span.role:
                continue
            same_request = span.role is Role.MODEL_CALL and span.name == parent.name
            same_run = span.role is Role.SESSION and run_name(span) is not None
            if same_request or (same_run and run_name(span) == run_name(parent)):
                wrappers.add(parent.span_id)
        for span_id, sessions in inner.items():
            wrapper = self.by_id[span_id]
            if (
                len(sessions) == 1
                and session_agent_key(wrapper) is None
                and run_name(wrapper) is None
            ):
                wrappers.add(span_id)
                self._wrappers[sessions[0].span_id] = wrapper
        if wrappers:
            self.spans = [
                dataclasses.replace(span, role=Role.SPAN) if span.span_id in wrappers else span
                for span in self.spans
            ]
            self.by_id = {span.span_id: span for span in self.spans}

    def _number(self, opener: SpanRecord, steps: Sequence[Step]) -> int:
        """The number of the step ``opener`` opens after ``steps``: the one known for it
        (``step_numbers``), else one more than the last's."""
        known = self._step_numbers.get(opener.span_id)
        if known is not None:
            return known
        return steps[-1].number + 1 if steps else 1

    def _infer_steps(self, session: SpanRecord) -> None:
        """Iterations of a session that has no iteration spans: each model call opens a step
        that takes the tool calls after it, up to the next model call.  Calls made inside a
        tool call (a tool that asks a model) belong to that tool, not to the loop, and a
        model call inside a model call (LlamaIndex's ``achat`` -> ``chat``) is the same call.
        A model call after a step that chose an answer tool (DSPy's ``finish``) extracts
        the answer within that step.  With no model-call span at all (AutoGen's own
        spans), each tool call with a call id (a model chose it) opens a step, calls that
        overlap it joining it."""
        spans = [
            span
            for span in self.spans
            if span.role in (Role.MODEL_CALL, Role.TOOL_CALL)
            and self.enclosing(span, Role.SESSION) is session
            and self.enclosing(span, Role.TOOL_CALL) is None
            and self.enclosing(span, Role.MODEL_CALL) is None
        ]
        models = any(span.role is Role.MODEL_CALL for span in spans)
        steps: list[Step] = []
        for span in spans:
            if span.role is Role.MODEL_CALL:
                own = model_output(span.attributes, span.events)
                if steps and steps[-1].model.role is Role.MODEL_CALL and _ends_loop(steps[-1]):
                    continue  # the answer extracted, within the step that ended the loop
                steps.append(Step(span, self._number(span, steps), output=own))
                continue
            if not models:
                # A call id says a model chose the call: a run's step.  A call without one
                # (a plan's step, run by hand) stays where it was recorded, in the session.
                if first_text(span.attributes, TOOL_CALL_ID_KEYS) is None:
                    continue
                if not steps or not _overlaps(steps[-1], span):
                    steps.append(Step(span, self._number(span, steps)))
            if steps:
                steps[-1].tools.append(span)
                self._step_of[span.span_id] = steps[-1]
        if steps:
            self._steps[session.span_id] = steps
        tools = any(span.role is Role.TOOL_CALL for span in spans)
        for step, following in itertools.zip_longest(steps, steps[1:]):
            model = step.model
            step.end_ns = _ended([model, *step.tools])
            started = [tool.start_ns for tool in step.tools]
            step.decided_ns = step.within(min(started, default=model.end_ns or model.start_ns))
            if model.role is not Role.MODEL_CALL:
                continue
            after: Request | None = None
            if following is not None:
                after = (following.model.attributes, following.model.events)
                if not step.output:  # what it answered, from the next request
                    step.output = model_output(model.attributes, model.events, after, self.sent)
            requests = calls_in(step.output)
            for tool in step.tools:
                name = call_name(tool)
                for index, (requested, arguments, call_id) in enumerate(requests):
                    if requested == name:
                        self._requested[tool.span_id] = (arguments, call_id)
                        del requests[index]
                        break
            # Results no span holds are read from the next request (its input is parsed
            # only then: reading it is most of what mapping such a run costs).
            unanswered = [
                tool
                for tool in step.tools
                if succeeded(tool) and not any(recorded(tool.attributes, k) for k in RESULT_KEYS)
            ]
            asked = [] if tools else [r for r in requests if r[0] not in ANSWER_TOOLS]
            answers = {}
            if following is not None and (unanswered or asked):
                answers = self._answers(following)
            for tool in unanswered:
                call_id = first_text(tool.attributes, TOOL_CALL_ID_KEYS)
                call_id = call_id or self._requested.get(tool.span_id, (None, None))[1]
                if call_id in answers:
                    self._answered[tool.span_id] = answers[call_id][0]
            if asked:
                step.calls = self._message_calls(step, asked, following, answers)

    def _answers(self, following: Step) -> dict[str | None, tuple[str | None, int]]:
        """The tool messages a step's request sent back after the previous step's calls:
        call id (None: it names none) -> (its text, its place among them)."""
        if following.model.role is not Role.MODEL_CALL:
            return {}
        sent = self.sent(following.model.attributes, following.model.events)
        last = max((i for i, m in enumerate(sent) if m.role == ASSISTANT), default=-1)
        found: dict[str | None, tuple[str | None, int]] = {}
        for message in sent:
            if message.role == TOOL and message.call_id is not None:
                found.setdefault(message.call_id, (message.text, -1))
        trailing = [m for m in sent[last + 1 :] if m.role == TOOL]
        for place, message in enumerate(trailing):
            found.setdefault(f"#{place}", (message.text, place))
        return found

    def _message_calls(
        self,
        step: Step,
        asked: list[tuple[str, str, str | None]],
        following: Step | None,
        answers: dict[str | None, tuple[str | None, int]],
    ) -> list[MessageCall]:
        """The calls a step's model asked for when the session records no tool span."""
        model = step.model
        start = model.end_ns if model.end_ns is not None else model.start_ns
        end = following.model.start_ns if following is not None else None
        calls = []
        for number, (name, arguments, call_id) in enumerate(asked, start=1):
            answer = answers.get(call_id) if call_id is not None else None
            answer = answer or answers.get(f"#{number - 1}")
            calls.append(
                MessageCall(
                    step.iri,
                    number,
                    name,
                    arguments,
                    call_id,
                    answer[0] if answer else None,
                    answer is not None,
                    start,
                    max(end, start) if end is not None and answer is not None else None,
                )
            )
        if calls and step.end_ns is not None and calls[-1].end_ns is not None:
            step.end_ns = max(step.end_ns, calls[-1].end_ns)
        return calls

    def answered(self, tool: SpanRecord) -> str | None:
        """A tool call's result that its span does not hold: the text of the tool message
        with its call id in the next model request (OpenLLMetry's record of AutoGen's calls)."""
        return self._answered.get(tool.span_id)

    def sent(
        self, attributes: Mapping[str, Any], events: Iterable[EventLike]
    ) -> tuple[Message, ...]:
        """What a span of this tree was sent (:data:`~otel_prov.prov._conventions.Read`),
        read once per span: a model call's input is read for what the call before it
        answered, for its own, and for the run's question, and reading it three times cost
        an OpenLLMetry run a tenth of its mapping (docs/design.md).  Keyed by the
        attributes' identity: each span of the tree holds its own, as long as the tree."""
        found = self._sent.get(id(attributes))
        if found is None:
            found = self._sent[id(attributes)] = read_sent(attributes, events)
        return found

    def wrapper(self, session: SpanRecord) -> SpanRecord | None:
        """The workflow span folded into ``session``'s run (see ``_merge_wrapper_sessions``),
        which may hold what the run was asked (CrewAI's kickoff lists its tasks)."""
        return self._wrappers.get(session.span_id)

    def steps(self, session: SpanRecord) -> list[Step]:
        return self._steps.get(session.span_id, [])

    def plan(self, attributes: Mapping[str, Any]) -> str | None:
        """The IRI of the plan that an activity run for a step (or an event) names, if it
        is in this trace."""
        plan_id = attributes.get(sc.OTEL_PROV_PLAN_ID)
        try:
            planner = self.by_id.get(int(str(plan_id), 16))
        except ValueError:
            return None
        if planner is None or not is_plan(planner):
            return None
        return entity_iri(activity_iri(planner.trace_id, planner.span_id), "plan")

    def step_outcomes(self, planner: SpanRecord) -> dict[int, str]:
        """Step number -> what became of it: the latest outcome event, else ``failed`` when
        an activity run for it failed, ``executed`` when all succeeded."""
        plan_id = span_hex(planner.span_id)
        run: dict[int, list[bool]] = {}
        marked: dict[int, tuple[int, str]] = {}
        for span in self.spans:
            if span.attributes.get(sc.OTEL_PROV_PLAN_ID) == plan_id:
                number = span.attributes.get(sc.OTEL_PROV_PLAN_STEP)
                if isinstance(number, int):
                    run.setdefault(number, []).append(succeeded(span))
            for event in span.events:
                attributes = event.attributes
                if (
                    event.name == sc.STEP_OUTCOME_EVENT
                    and attributes.get(sc.OTEL_PROV_PLAN_ID) == plan_id
                    and isinstance(number := attributes.get(sc.OTEL_PROV_PLAN_STEP), int)
                    and attributes.get(sc.OTEL_PROV_PLAN_STEP_OUTCOME) in sc.STEP_OUTCOMES
                    and (number not in marked or marked[number][0] <= event.time_ns)
                ):
                    outcome = str(attributes[sc.OTEL_PROV_PLAN_STEP_OUTCOME])
                    marked[number] = (event.time_ns, outcome)
        derived = {n: "executed" if all(ok) else "failed" for n, ok in run.items()}
        return {**derived, **{n: outcome for n, (_, outcome) in marked.items()}}

    def opened_step(self, model: SpanRecord) -> Step | None:
        """The inferred step ``model`` opened, if it opened one."""
        return next(
            (step for steps in self._steps.values() for step in steps if step.model is model),
            None,
        )

    def step_of(self, tool: SpanRecord) -> Step | None:
        return self._step_of.get(tool.span_id)

    def requested(self, tool: SpanRecord) -> tuple[str | None, str | None]:
        """(arguments, call id) the model asked for this tool call, in an inferred step."""
        return self._requested.get(tool.span_id, (None, None))

    @property
    def root(self) -> SpanRecord | None:
        for span in self.spans:
            if span.role is Role.SESSION and self.enclosing(span, Role.SESSION) is None:
                return span
        return self.spans[0] if self.spans else None

    def parent(self, span: SpanRecord) -> SpanRecord | None:
        return self.by_id.get(span.parent_id) if span.parent_id is not None else None

    def enclosing(self, span: SpanRecord, role: Role) -> SpanRecord | None:
        """The nearest ancestor with ``role``, not crossing a session boundary."""
        seen = {span.span_id}
        current = self.parent(span)
        while current is not None and current.span_id not in seen:
            if current.role is role:
                return current
            if current.role is Role.SESSION:
                return None
            seen.add(current.span_id)
            current = self.parent(current)
        return None

    def starter(self, session: SpanRecord) -> SpanRecord | None:
        """The activity that started a sub-session: its nearest ancestor that is more than
        a plain span.  A session in another service hangs below the HTTP client and
        server spans of the request that reached it; the tool call that sent the
        request started it, and ``partOf`` keeps the chain through the HTTP spans."""
        seen = {session.span_id}
        current = self.parent(session)
        while current is not None and current.role is Role.SPAN and current.span_id not in seen:
            seen.add(current.span_id)
            current = self.parent(current)
        return current

    def tool_calls(self, iteration: SpanRecord) -> list[SpanRecord]:
        return self._tools.get(iteration.span_id, [])

    def iterations(self, session: SpanRecord) -> list[SpanRecord]:
        found = [
            span
            for span in self.spans
            if span.role is Role.ITERATION and self.enclosing(span, Role.SESSION) is session
        ]
        return sorted(found, key=lambda s: (iteration_number(s) or 1 << 62, s.start_ns))

    def observations(self, iteration: SpanRecord) -> list[str]:
        """IRIs of the Observations an iteration produced (one per successful tool call)."""
        tools = self.tool_calls(iteration)
        activity = activity_iri(iteration.trace_id, iteration.span_id)
        if not tools:
            present = recorded(iteration.attributes, sc.OTEL_PROV_OBSERVATION)
            return [entity_iri(activity, "observation")] if present else []
        return [
            entity_iri(activity_iri(tool.trace_id, tool.span_id), "observation")
            for tool in tools
            if succeeded(tool)
        ]

    def failed_calls(self, session: SpanRecord) -> int:
        """Tool and model calls of the session that failed.  One that has not ended is
        not counted: it may yet succeed (a late span), or its process died with it, which
        its own ``incomplete`` status and the session's say."""
        return sum(
            1
            for span in self.spans
            if span.role in (Role.TOOL_CALL, Role.MODEL_CALL)
            and span.status == "error"
            and self.enclosing(span, Role.SESSION) is session
        )

    def declared_tools(self, session: SpanRecord) -> list[str]:
        """Names of the tools the agent was given: ``otel_prov.agent.tools`` on the session,
        else ``gen_ai.tool.definitions`` (or OpenInference's ``llm.tools``) on the session or
        its model calls."""
        names = session.attributes.get(sc.OTEL_PROV_AGENT_TOOLS)
        if isinstance(names, (list, tuple)):
            return sorted({str(name) for name in names if name})
        found: set[str] = set()
        read: set[str] = set()
        for span in self.spans:
            if span is session or (
                span.role is Role.MODEL_CALL and self.enclosing(span, Role.SESSION) is session
            ):
                found.update(defined_tools(span.attributes, read))
        return sorted(found)

    def thought(self, iteration: SpanRecord) -> str | None:
        if not recorded(iteration.attributes, sc.OTEL_PROV_THOUGHT):
            return None
        return entity_iri(activity_iri(iteration.trace_id, iteration.span_id), "thought")
