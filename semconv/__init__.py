"""otel-prov semantic conventions: attribute names, the ``oprov`` ontology and SHACL shapes.

The attribute registry (``registry/otel_prov.yaml``, Weaver v2 syntax) is the source of
truth; the constants below mirror it and a test keeps the two in step.  The official
``gen_ai.*`` names we rely on are listed too, so that the rest of the code refers to one
place and a test can check them against the OpenTelemetry semantic-conventions package.
"""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "APPROVAL_DECISIONS",
    "APPROVAL_EVENT",
    "CONTENT_DIGEST_KEYS",
    "DECISION_EVENT",
    "ERROR_TYPE",
    "EVIDENCE_EVENT",
    "GEN_AI_AGENT_ID",
    "GEN_AI_AGENT_NAME",
    "GEN_AI_CONTENT_TWINS",
    "GEN_AI_CONVERSATION_ID",
    "GEN_AI_DATA_SOURCE_ID",
    "GEN_AI_EVALUATION_EXPLANATION",
    "GEN_AI_EVALUATION_NAME",
    "GEN_AI_EVALUATION_RESULT",
    "GEN_AI_EVALUATION_SCORE_LABEL",
    "GEN_AI_EVALUATION_SCORE_VALUE",
    "GEN_AI_INPUT_MESSAGES",
    "GEN_AI_OPERATION_NAME",
    "GEN_AI_OUTPUT_MESSAGES",
    "GEN_AI_PROVIDER_NAME",
    "GEN_AI_REQUEST_MODEL",
    "GEN_AI_RESPONSE_ID",
    "GEN_AI_RESPONSE_MODEL",
    "GEN_AI_RETRIEVAL_DOCUMENTS",
    "GEN_AI_RETRIEVAL_QUERY_TEXT",
    "GEN_AI_TOOL_CALL_ARGUMENTS",
    "GEN_AI_TOOL_CALL_ID",
    "GEN_AI_TOOL_CALL_RESULT",
    "GEN_AI_TOOL_NAME",
    "GEN_AI_TOOL_TYPE",
    "GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS",
    "GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS",
    "GEN_AI_USAGE_COST_AMOUNT",
    "GEN_AI_USAGE_COST_CURRENCY",
    "GEN_AI_USAGE_COST_SOURCE",
    "GEN_AI_USAGE_INPUT_TOKENS",
    "GEN_AI_USAGE_OUTPUT_TOKENS",
    "GEN_AI_USAGE_REASONING_OUTPUT_TOKENS",
    "GOAL_EVENT",
    "HYPOTHESIS_EVENT",
    "MCP_METHOD_NAME",
    "MCP_PROTOCOL_VERSION",
    "MCP_SESSION_ID",
    "NOT_YET_UPSTREAM",
    "ONTOLOGY_PATH",
    "OTEL_PROV_ACTION",
    "OTEL_PROV_AGENT_TOOLS",
    "OTEL_PROV_ANSWER",
    "OTEL_PROV_APPROVAL_APPROVER_ID",
    "OTEL_PROV_APPROVAL_APPROVER_NAME",
    "OTEL_PROV_APPROVAL_DECISION",
    "OTEL_PROV_APPROVAL_PENDING",
    "OTEL_PROV_APPROVAL_REASON",
    "OTEL_PROV_APPROVAL_REQUIRED",
    "OTEL_PROV_APPROVAL_WAIT",
    "OTEL_PROV_ARGUMENTS",
    "OTEL_PROV_CONTENT_ANSWER_SHA256",
    "OTEL_PROV_CONTENT_ANSWER_SIZE",
    "OTEL_PROV_CONTENT_ARGUMENTS_SHA256",
    "OTEL_PROV_CONTENT_ARGUMENTS_SIZE",
    "OTEL_PROV_CONTENT_OBSERVATION_SHA256",
    "OTEL_PROV_CONTENT_OBSERVATION_SIZE",
    "OTEL_PROV_CONTENT_QUERY_SHA256",
    "OTEL_PROV_CONTENT_QUERY_SIZE",
    "OTEL_PROV_CONTENT_QUESTION_SHA256",
    "OTEL_PROV_CONTENT_QUESTION_SIZE",
    "OTEL_PROV_CONTENT_REASONING_SHA256",
    "OTEL_PROV_CONTENT_REASONING_SIZE",
    "OTEL_PROV_CONTENT_THOUGHT_SHA256",
    "OTEL_PROV_CONTENT_THOUGHT_SIZE",
    "OTEL_PROV_DECISION_ADOPTS",
    "OTEL_PROV_EVALUATION_EVALUATOR",
    "OTEL_PROV_EVIDENCE_CONTRADICTS",
    "OTEL_PROV_EVIDENCE_DOCUMENT_ID",
    "OTEL_PROV_EVIDENCE_HYPOTHESIS_ID",
    "OTEL_PROV_EVIDENCE_SUPPORTS",
    "OTEL_PROV_EVIDENCE_TOOL_CALL_ID",
    "OTEL_PROV_EVIDENCE_WEIGHT",
    "OTEL_PROV_ITERATION_NUMBER",
    "OTEL_PROV_OBSERVATION",
    "OTEL_PROV_PLAN_ID",
    "OTEL_PROV_PLAN_STEP",
    "OTEL_PROV_PLAN_STEPS",
    "OTEL_PROV_PLAN_STEP_OUTCOME",
    "OTEL_PROV_POSTCONDITION_DETAIL",
    "OTEL_PROV_POSTCONDITION_NAME",
    "OTEL_PROV_POSTCONDITION_OK",
    "OTEL_PROV_QUESTION",
    "OTEL_PROV_REASONING_CONFIDENCE",
    "OTEL_PROV_REASONING_GOAL",
    "OTEL_PROV_REASONING_ID",
    "OTEL_PROV_REASONING_TEXT",
    "OTEL_PROV_RETRIEVAL_DOCUMENT_CONTENT",
    "OTEL_PROV_RETRIEVAL_DOCUMENT_ID",
    "OTEL_PROV_RETRIEVAL_DOCUMENT_METADATA",
    "OTEL_PROV_RETRIEVAL_DOCUMENT_SCORE",
    "OTEL_PROV_RETRIEVAL_DOCUMENT_SHA256",
    "OTEL_PROV_RETRIEVAL_DOCUMENT_SIZE",
    "OTEL_PROV_RETRIEVAL_DOCUMENT_SOURCE",
    "OTEL_PROV_RETRIEVAL_QUERY",
    "OTEL_PROV_THOUGHT",
    "PLAN_OPERATION",
    "POSTCONDITION_EVENT",
    "REASONING_EVENTS",
    "REGISTRY_DIR",
    "SERVICE_NAME",
    "SHAPES_PATH",
    "STEP_OUTCOMES",
    "STEP_OUTCOME_EVENT",
    "USER_ID",
    "content_digest_keys",
    "document_key",
]

_HERE = Path(__file__).resolve().parent
REGISTRY_DIR = _HERE / "registry"
"""The Weaver v2 registry of the ``otel_prov.*`` attributes."""
ONTOLOGY_PATH = _HERE / "ontology.ttl"
"""The ``oprov`` ontology (Turtle); every class and object property refines PROV-O."""
SHAPES_PATH = _HERE / "shapes.ttl"
"""SHACL shapes for the graphs the mapper writes."""

# --- otel_prov.* (this project's registry) ---------------------------------------
OTEL_PROV_QUESTION = "otel_prov.question"
"""The user's question or task, on the agent session span."""
OTEL_PROV_ANSWER = "otel_prov.answer"
"""The final answer, on the agent session span."""
OTEL_PROV_ITERATION_NUMBER = "otel_prov.iteration.number"
"""1-based number of a reason-act step; its presence marks an iteration span."""
OTEL_PROV_THOUGHT = "otel_prov.thought"
"""The model's reasoning for this step."""
OTEL_PROV_ACTION = "otel_prov.action"
"""The tool the step chose, or ``final_answer``."""
OTEL_PROV_ARGUMENTS = "otel_prov.arguments"
"""The exact JSON arguments chosen, on an iteration or a tool-call span."""
OTEL_PROV_OBSERVATION = "otel_prov.observation"
"""What the action returned, on an iteration or a tool-call span."""
OTEL_PROV_CONTENT_QUESTION_SIZE = "otel_prov.content.question.size"
OTEL_PROV_CONTENT_QUESTION_SHA256 = "otel_prov.content.question.sha256"
OTEL_PROV_CONTENT_ANSWER_SIZE = "otel_prov.content.answer.size"
OTEL_PROV_CONTENT_ANSWER_SHA256 = "otel_prov.content.answer.sha256"
OTEL_PROV_CONTENT_THOUGHT_SIZE = "otel_prov.content.thought.size"
OTEL_PROV_CONTENT_THOUGHT_SHA256 = "otel_prov.content.thought.sha256"
OTEL_PROV_CONTENT_ARGUMENTS_SIZE = "otel_prov.content.arguments.size"
OTEL_PROV_CONTENT_ARGUMENTS_SHA256 = "otel_prov.content.arguments.sha256"
OTEL_PROV_CONTENT_OBSERVATION_SIZE = "otel_prov.content.observation.size"
OTEL_PROV_CONTENT_OBSERVATION_SHA256 = "otel_prov.content.observation.sha256"
"""Sizes and hashes of content left off or cut by an attribute limit (see the registry)."""
OTEL_PROV_AGENT_TOOLS = "otel_prov.agent.tools"
"""The names of the tools the agent was given, on the agent session span."""
OTEL_PROV_RETRIEVAL_QUERY = "otel_prov.retrieval.query"
"""The query a retrieval searched with, on the retrieval span (content)."""
OTEL_PROV_CONTENT_QUERY_SIZE = "otel_prov.content.query.size"
OTEL_PROV_CONTENT_QUERY_SHA256 = "otel_prov.content.query.sha256"
# Retrieved documents, one attribute per field and document: the key is the template's
# name, a dot and the document's 0-based position in the result (see :func:`document_key`).
OTEL_PROV_RETRIEVAL_DOCUMENT_ID = "otel_prov.retrieval.document.id"
"""Template: the id of the document (or chunk) the retriever returned at a position."""
OTEL_PROV_RETRIEVAL_DOCUMENT_CONTENT = "otel_prov.retrieval.document.content"
"""Template: its text (content)."""
OTEL_PROV_RETRIEVAL_DOCUMENT_SCORE = "otel_prov.retrieval.document.score"
"""Template: the relevance score the retriever gave it (its own scale)."""
OTEL_PROV_RETRIEVAL_DOCUMENT_SOURCE = "otel_prov.retrieval.document.source"
"""Template: the IRI (or name) of the document it was taken from."""
OTEL_PROV_RETRIEVAL_DOCUMENT_METADATA = "otel_prov.retrieval.document.metadata"
"""Template: its metadata, a JSON object."""
OTEL_PROV_RETRIEVAL_DOCUMENT_SIZE = "otel_prov.retrieval.document.size"
OTEL_PROV_RETRIEVAL_DOCUMENT_SHA256 = "otel_prov.retrieval.document.sha256"
"""Template: size and hash of its whole text, when the text was left off or cut."""
OTEL_PROV_EVALUATION_EVALUATOR = "otel_prov.evaluation.evaluator"
"""Who made an evaluation, on a ``gen_ai.evaluation.result`` event."""
OTEL_PROV_PLAN_STEPS = "otel_prov.plan.steps"
"""The ordered steps of a plan, on the span that made it (``gen_ai.operation.name`` plan)."""
OTEL_PROV_PLAN_ID = "otel_prov.plan.id"
"""The span id (16 hex digits) of the plan a step belongs to, on the activity run for
that step and on a step outcome event."""
OTEL_PROV_PLAN_STEP = "otel_prov.plan.step"
"""The 1-based number of the plan's step (with ``otel_prov.plan.id``)."""
OTEL_PROV_PLAN_STEP_OUTCOME = "otel_prov.plan.step.outcome"
"""``executed``, ``failed``, ``skipped`` or ``rolled_back``, on a step outcome event."""
OTEL_PROV_POSTCONDITION_NAME = "otel_prov.postcondition.name"
OTEL_PROV_POSTCONDITION_OK = "otel_prov.postcondition.ok"
OTEL_PROV_POSTCONDITION_DETAIL = "otel_prov.postcondition.detail"
"""A postcondition checked: its name, whether it held and what was found."""
PLAN_OPERATION = "plan"
"""The GenAI ``gen_ai.operation.name`` of an agent making a plan."""
STEP_OUTCOME_EVENT = "otel_prov.plan.step_outcome"
"""Event: a step of a plan was executed, failed, skipped or rolled back."""
POSTCONDITION_EVENT = "otel_prov.postcondition"
"""Event: a postcondition was checked, on the span current then."""
STEP_OUTCOMES = ("executed", "failed", "skipped", "rolled_back")
OTEL_PROV_APPROVAL_DECISION = "otel_prov.approval.decision"
"""``approved``, ``rejected`` or ``modified`` (approved with changed arguments)."""
OTEL_PROV_APPROVAL_APPROVER_ID = "otel_prov.approval.approver.id"
"""Who decided (the person's id): kept with content, else its ``sha256:`` pseudonym."""
OTEL_PROV_APPROVAL_APPROVER_NAME = "otel_prov.approval.approver.name"
"""The person's name, as the framework knows it: content, left off without it."""
OTEL_PROV_APPROVAL_REASON = "otel_prov.approval.reason"
"""Why the person decided so (a rejection's message): content."""
OTEL_PROV_APPROVAL_WAIT = "otel_prov.approval.wait"
"""Seconds the run waited for the decision."""
OTEL_PROV_APPROVAL_REQUIRED = "otel_prov.approval.required"
"""On a tool-call span: the call needed a person's approval before it could run."""
OTEL_PROV_APPROVAL_PENDING = "otel_prov.approval.pending"
"""On a tool-call span: the call stopped there to wait for a decision and did not run."""
APPROVAL_EVENT = "otel_prov.approval"
"""Event: a person decided on a tool call, at the event's time (on the call's span, or
on the span current then, naming the call by ``gen_ai.tool.call.id``)."""
APPROVAL_DECISIONS = ("approved", "rejected", "modified")
OTEL_PROV_REASONING_ID = "otel_prov.reasoning.id"
"""The id of a goal, hypothesis or decision in its run (a later one with the same id
and kind revises it)."""
OTEL_PROV_REASONING_TEXT = "otel_prov.reasoning.text"
"""What a goal, hypothesis or decision says (content)."""
OTEL_PROV_CONTENT_REASONING_SIZE = "otel_prov.content.reasoning.size"
OTEL_PROV_CONTENT_REASONING_SHA256 = "otel_prov.content.reasoning.sha256"
OTEL_PROV_REASONING_CONFIDENCE = "otel_prov.reasoning.confidence"
"""How sure the agent is of a hypothesis or decision, 0 to 1."""
OTEL_PROV_REASONING_GOAL = "otel_prov.reasoning.goal"
"""The goal a hypothesis or decision serves (on a goal: its parent goal)."""
OTEL_PROV_DECISION_ADOPTS = "otel_prov.decision.adopts"
"""The hypotheses a decision adopts (their ids)."""
OTEL_PROV_EVIDENCE_SUPPORTS = "otel_prov.evidence.supports"
OTEL_PROV_EVIDENCE_CONTRADICTS = "otel_prov.evidence.contradicts"
"""The hypothesis or decision a piece of evidence speaks for, or against (its id)."""
OTEL_PROV_EVIDENCE_WEIGHT = "otel_prov.evidence.weight"
"""How much the evidence weighs, 0 to 1."""
OTEL_PROV_EVIDENCE_TOOL_CALL_ID = "otel_prov.evidence.tool_call.id"
OTEL_PROV_EVIDENCE_DOCUMENT_ID = "otel_prov.evidence.document.id"
OTEL_PROV_EVIDENCE_HYPOTHESIS_ID = "otel_prov.evidence.hypothesis.id"
"""What the evidence rests on: a tool call's result (its call id), a retrieved document
(its id), an earlier hypothesis (its id)."""
GOAL_EVENT = "otel_prov.goal"
HYPOTHESIS_EVENT = "otel_prov.hypothesis"
EVIDENCE_EVENT = "otel_prov.evidence"
DECISION_EVENT = "otel_prov.decision"
"""Events: a goal set, a hypothesis weighed, a piece of evidence for or against one (or
a decision), a decision reached, on the span current then (the step that formed it)."""
REASONING_EVENTS = (GOAL_EVENT, HYPOTHESIS_EVENT, EVIDENCE_EVENT, DECISION_EVENT)
CONTENT_DIGEST_KEYS = {
    OTEL_PROV_QUESTION: (OTEL_PROV_CONTENT_QUESTION_SIZE, OTEL_PROV_CONTENT_QUESTION_SHA256),
    OTEL_PROV_ANSWER: (OTEL_PROV_CONTENT_ANSWER_SIZE, OTEL_PROV_CONTENT_ANSWER_SHA256),
    OTEL_PROV_THOUGHT: (OTEL_PROV_CONTENT_THOUGHT_SIZE, OTEL_PROV_CONTENT_THOUGHT_SHA256),
    OTEL_PROV_ARGUMENTS: (OTEL_PROV_CONTENT_ARGUMENTS_SIZE, OTEL_PROV_CONTENT_ARGUMENTS_SHA256),
    OTEL_PROV_OBSERVATION: (
        OTEL_PROV_CONTENT_OBSERVATION_SIZE,
        OTEL_PROV_CONTENT_OBSERVATION_SHA256,
    ),
    OTEL_PROV_RETRIEVAL_QUERY: (OTEL_PROV_CONTENT_QUERY_SIZE, OTEL_PROV_CONTENT_QUERY_SHA256),
    OTEL_PROV_REASONING_TEXT: (
        OTEL_PROV_CONTENT_REASONING_SIZE,
        OTEL_PROV_CONTENT_REASONING_SHA256,
    ),
}
"""Content attribute -> (its size attribute, its hash attribute)."""


def document_key(template: str, index: int) -> str:
    """The attribute of one retrieved document's field: ``template`` (an
    ``OTEL_PROV_RETRIEVAL_DOCUMENT_*`` name) and the document's 0-based position."""
    return f"{template}.{index}"


def content_digest_keys(key: str) -> tuple[str, str] | None:
    """(size attribute, hash attribute) describing the whole value of content attribute
    ``key`` when it was left off or cut; None for an attribute that is not content."""
    if key in CONTENT_DIGEST_KEYS:
        return CONTENT_DIGEST_KEYS[key]
    index = key.removeprefix(OTEL_PROV_RETRIEVAL_DOCUMENT_CONTENT + ".")
    if index != key and index.isascii() and index.isdigit():
        return (
            document_key(OTEL_PROV_RETRIEVAL_DOCUMENT_SIZE, int(index)),
            document_key(OTEL_PROV_RETRIEVAL_DOCUMENT_SHA256, int(index)),
        )
    return None


# --- official OpenTelemetry conventions we build on ---------------------------------
GEN_AI_OPERATION_NAME = "gen_ai.operation.name"
GEN_AI_AGENT_NAME = "gen_ai.agent.name"
GEN_AI_AGENT_ID = "gen_ai.agent.id"
GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id"
GEN_AI_DATA_SOURCE_ID = "gen_ai.data_source.id"
GEN_AI_RETRIEVAL_QUERY_TEXT = "gen_ai.retrieval.query.text"
GEN_AI_RETRIEVAL_DOCUMENTS = "gen_ai.retrieval.documents"
GEN_AI_TOOL_NAME = "gen_ai.tool.name"
GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GEN_AI_TOOL_TYPE = "gen_ai.tool.type"
GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT = "gen_ai.tool.call.result"
GEN_AI_INPUT_MESSAGES = "gen_ai.input.messages"
GEN_AI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GEN_AI_REQUEST_MODEL = "gen_ai.request.model"
GEN_AI_RESPONSE_MODEL = "gen_ai.response.model"
GEN_AI_RESPONSE_ID = "gen_ai.response.id"
GEN_AI_EVALUATION_NAME = "gen_ai.evaluation.name"
GEN_AI_EVALUATION_SCORE_VALUE = "gen_ai.evaluation.score.value"
GEN_AI_EVALUATION_SCORE_LABEL = "gen_ai.evaluation.score.label"
GEN_AI_EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"
GEN_AI_PROVIDER_NAME = "gen_ai.provider.name"
GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens"
GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS = "gen_ai.usage.cache_creation.input_tokens"
GEN_AI_USAGE_REASONING_OUTPUT_TOKENS = "gen_ai.usage.reasoning.output_tokens"
GEN_AI_USAGE_COST_AMOUNT = "gen_ai.usage.cost.amount"
"""What a model call cost, a number in ``gen_ai.usage.cost.currency`` (ISO 4217 code)."""
GEN_AI_USAGE_COST_CURRENCY = "gen_ai.usage.cost.currency"
GEN_AI_USAGE_COST_SOURCE = "gen_ai.usage.cost.source"
"""Who priced the call: ``provider`` (the API reported it), or ``local`` (a price table)."""
GEN_AI_EVALUATION_RESULT = "gen_ai.evaluation.result"
"""The GenAI event of an evaluation, on the span evaluated (or naming its response id)."""
NOT_YET_UPSTREAM = frozenset(
    {
        GEN_AI_USAGE_COST_AMOUNT,
        GEN_AI_USAGE_COST_CURRENCY,
        GEN_AI_USAGE_COST_SOURCE,
        GEN_AI_EVALUATION_RESULT,
    }
)
"""``gen_ai.*`` names not among the attributes of the semantic-conventions package we
pin: attributes the product contract uses before the GenAI conventions define them, and
the evaluation event's name (the package lists no events).  A test fails once one is
there, so that the upstream definition gets checked."""
ERROR_TYPE = "error.type"
USER_ID = "user.id"
"""The OTel user id: on an agent session span, the user the agent acts on behalf of."""
SERVICE_NAME = "service.name"
MCP_METHOD_NAME = "mcp.method.name"
MCP_SESSION_ID = "mcp.session.id"
MCP_PROTOCOL_VERSION = "mcp.protocol.version"

GEN_AI_CONTENT_TWINS = {
    OTEL_PROV_ARGUMENTS: GEN_AI_TOOL_CALL_ARGUMENTS,
    OTEL_PROV_OBSERVATION: GEN_AI_TOOL_CALL_RESULT,
    OTEL_PROV_RETRIEVAL_QUERY: GEN_AI_RETRIEVAL_QUERY_TEXT,
    OTEL_PROV_QUESTION: GEN_AI_INPUT_MESSAGES,
    OTEL_PROV_ANSWER: GEN_AI_OUTPUT_MESSAGES,
}
"""Content attribute -> the opt-in GenAI attribute that also gets it on a tool call span
(arguments, result), a retrieval span (query) or an agent span (the question as its
input message, the answer as its output message), when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` allows; both are described by the
same size and hash attributes (``CONTENT_DIGEST_KEYS``)."""
