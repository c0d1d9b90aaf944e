"""A run told in plain language, from its provenance alone (no model writes it).

What was asked; each step's thought, the calls it made and how they ended (failures
included, said not to support the answer); each decision it reached, with the evidence
for and against it and what it did not consider (``_decisions``), and any reviewer's
revision of it; the answer and what it rests on (the calls
whose observations it derives from, the documents behind them and their sources); how
long it took and the tokens its model calls used.

Each sentence keeps the IRIs of the nodes it speaks of, all of them nodes that ``why``
lists for the same run, so a reader (or the web view) can point from a sentence to the
graph.  The same store always gives the same words: nothing here reads a clock or
samples.  Pure: it reads a :class:`~otel_prov.read.SessionView` and the run's
:class:`~otel_prov.read.WhyGraph`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from otel_prov.prov._rdf import instant
from otel_prov.read._decisions import decision_accounts, decision_sentence, revision_sentence
from otel_prov.read._views import IterationView, SessionView, ToolCallView, Usage
from otel_prov.read._why import WhyGraph, WhyNode

__all__ = ["RunSummary", "Sentence", "summarize"]

_QUOTE_WIDTH = 120

_Refs = Callable[..., tuple[str, ...]]
"""Keeps, of the IRIs it is given, those ``why`` lists."""


@dataclass(frozen=True)
class Sentence:
    text: str
    refs: tuple[str, ...]
    """IRIs of the nodes the sentence speaks of, each one ``why`` lists."""


@dataclass(frozen=True)
class RunSummary:
    session: str
    sentences: tuple[Sentence, ...]

    def text(self) -> str:
        """The sentences, one paragraph each."""
        return "\n".join(sentence.text for sentence in self.sentences) + "\n"

    def as_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "sentences": [{"text": s.text, "refs": list(s.refs)} for s in self.sentences],
        }


def _quoted(text: str | None) -> str:
    flat = " ".join((text or "").split())
    if len(flat) > _QUOTE_WIDTH:
        flat = flat[: _QUOTE_WIDTH - 1] + "…"
    return f"“{flat}”"


def _and(items: Sequence[str]) -> str:
    if len(items) < 2:
        return "".join(items)
    return ", ".join(items[:-1]) + f" and {items[-1]}"


def _call_name(call: ToolCallView | WhyNode) -> str:
    name = call.name if isinstance(call, ToolCallView) else (call.tool or call.label)
    return f"{name} [{call.call_id}]" if call.call_id else name


def summarize(view: SessionView, graph: WhyGraph) -> RunSummary:
    """The run ``view`` told in sentences whose references are nodes of ``graph``."""
    listed = {node.id for node in graph.nodes}

    def refs(*candidates: str | None) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c for c in candidates if c is not None and c in listed))

    question = _linked(graph, view.id, "used", "Question")
    sentences = [
        Sentence(
            f"{view.agent or 'The agent'} was asked {_quoted(view.question)}.",
            refs(view.id, question),
        )
    ]
    for step in view.iterations:
        sentences.append(_step(step, refs, graph))
    sentences.extend(
        Sentence(f"{_call_name(node)} was not run: {node.label}.", refs(node.id))
        for node in graph.nodes
        if node.type == "Approval" and not node.supports_answer  # rejected
    )
    sentences.extend(_decided(graph, refs))
    sentences.extend(_answer(view, graph, refs))
    sentences.append(_cost(view, refs))
    return RunSummary(view.id, tuple(sentences))


def _decided(graph: WhyGraph, refs: _Refs) -> list[Sentence]:
    """``Decided “X”; for: ...; against: ...; not considered: ...`` for each decision,
    then each reviewer's revision of it."""
    said = []
    for account in decision_accounts(graph):
        bases = [item.basis.id for item in account.evidence]
        said.append(Sentence(decision_sentence(graph, account), refs(account.decision.id, *bases)))
        said.extend(
            Sentence(revision_sentence(account, revision, reviewer), refs(revision.id))
            for revision, reviewer in account.revisions
        )
    return said


def _linked(graph: WhyGraph, source: str, relation: str, kind: str) -> str | None:
    if source not in {node.id for node in graph.nodes}:
        return None
    return next(
        (
            edge.target
            for edge in graph.outgoing(source)
            if edge.relation == relation and graph.node(edge.target).type == kind
        ),
        None,
    )


def _step(step: IterationView, refs: _Refs, graph: WhyGraph) -> Sentence:
    number = step.number if step.number is not None else "?"
    parts = [f"Step {number}"]
    if step.thought:
        parts.append(f" thought {_quoted(step.thought)}")
    outcomes = [_outcome(call, _decisions(graph, call.id)) for call in step.tool_calls]
    if outcomes:
        parts.append(f"{',' if step.thought else ''} then called {_and(outcomes)}")
    elif step.action == "final_answer" or step.action is None:
        parts.append(f"{',' if step.thought else ''} then answered")
    else:
        parts.append(f"{',' if step.thought else ''} then chose {step.action}")
        if step.observation is not None:
            parts.append(f", which gave {_quoted(step.observation)}")
    calls = [call.id for call in step.tool_calls]
    decisions = [node.id for call in step.tool_calls for node in _decisions(graph, call.id)]
    return Sentence("".join(parts) + ".", refs(step.id, *calls, *decisions))


def _decisions(graph: WhyGraph, call: str) -> list[WhyNode]:
    """The people's decisions that allowed ``call`` (``why`` lists them behind it)."""
    if call not in {node.id for node in graph.nodes}:
        return []
    found = [graph.node(edge.target) for edge in graph.outgoing(call)]
    return [node for node in found if node.type == "Approval"]


def _outcome(call: ToolCallView, decisions: Sequence[WhyNode] = ()) -> str:
    called = f"{_call_name(call)} with {call.arguments}" if call.arguments else _call_name(call)
    if decisions:
        called += "".join(f", {node.label}" for node in decisions)
    if call.status == "error":
        error = ": ".join(p for p in (call.error_type, call.error_message) if p) or "an error"
        return f"{called}, which failed ({error}) and does not support the answer"
    if call.observation is not None:
        return f"{called}, which returned {_quoted(call.observation)}"
    return f"{called} ({call.status})"


def _answer(view: SessionView, graph: WhyGraph, refs: _Refs) -> list[Sentence]:
    if view.answer is None:
        return [Sentence("It gave no answer.", refs(view.id))]
    root = graph.node(graph.root)
    said = [Sentence(f"It answered {_quoted(view.answer)}.", refs(root.id))]
    calls, documents = _support(graph)
    grounds = [_call_name(call) for call in calls]
    grounds += [f"the document {_quoted(doc.label)}{_source(graph, doc)}" for doc in documents]
    if grounds:
        said.append(
            Sentence(
                f"The answer rests on {_and(grounds)}.",
                refs(root.id, *(node.id for node in [*calls, *documents])),
            )
        )
    return said


def _support(graph: WhyGraph) -> tuple[list[WhyNode], list[WhyNode]]:
    """The successful calls and the documents behind the root, in the graph's order:
    what its derivations reach through observations and the calls that made them."""
    reached: set[str] = set()
    todo = [graph.root]
    while todo:
        node = todo.pop()
        for edge in graph.outgoing(node):
            target = graph.node(edge.target)
            if edge.target in reached or not target.supports_answer:
                continue
            follow = edge.relation == "wasDerivedFrom" or (
                edge.relation == "wasGeneratedBy" and target.type in ("ToolCall", "Retrieval")
            )
            if follow:
                reached.add(edge.target)
                todo.append(edge.target)
    ordered = [node for node in graph.nodes if node.id in reached]
    calls = [node for node in ordered if node.type == "ToolCall"]
    return calls, [node for node in ordered if node.type == "Document"]


def _source(graph: WhyGraph, document: WhyNode) -> str:
    sources = [
        graph.node(edge.target).label
        for edge in graph.outgoing(document.id)
        if edge.relation in ("hadPrimarySource", "wasQuotedFrom")
    ]
    return f" (from {_and(sources)})" if sources else ""


def _cost(view: SessionView, refs: _Refs) -> Sentence:
    parts = [f"Its status is {view.status}"]
    if view.failed_calls:
        plural = "s" if view.failed_calls > 1 else ""
        parts.append(f" ({view.failed_calls} failed call{plural})")
    took = _duration(view.start, view.end)
    if took is not None:
        parts.append(f"; it took {took}")
    # Tokens and cost count the whole run, sub-agent sessions included, as the listing.
    subs = list(view.nested_sessions())
    own = sum(len(step.model_calls) for step in view.iterations)
    models = own + sum(len(step.model_calls) for sub in subs for step in sub.iterations)
    if models:
        plural = "s" if models > 1 else ""
        whole = " (sub-agent sessions included)" if models > own else ""
        parts.append(f"; its {models} model call{plural}{whole} {_tokens_used(view.usage)}")
    if view.usage.costs:  # currencies are never added
        each = [
            f"{format(c.amount.normalize(), 'f')} {c.currency or '(no currency)'}"
            for c in view.usage.costs
        ]
        mixed = " (different currencies, not added)" if len(each) > 1 else ""
        parts.append(f"; it cost {_and(each)}{mixed}")
    return Sentence("".join(parts) + ".", refs(view.id))


def _tokens_used(usage: Usage) -> str:
    """What the model calls used, of what they reported: a count nobody reported is not
    zero tokens."""
    given = [(kind, usage.tokens[kind]) for kind in ("input", "output") if kind in usage.tokens]
    if not given:
        return "reported no token usage"
    used = " and ".join(f"{count} {kind}" for kind, count in given)
    if len(given) == 2:
        return f"used {used} tokens"
    missing = "output" if given[0][0] == "input" else "input"
    return f"used {used} tokens (no {missing} tokens reported)"


def _duration(start: str, end: str | None) -> str | None:
    if end is None:
        return None
    seconds = (instant(end) - instant(start)).total_seconds()
    if seconds < 1:
        return f"{seconds * 1000:.1f} ms"
    return f"{seconds:.1f} s"
