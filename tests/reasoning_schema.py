"""The reasoning schema of docs/decisions.md as Pydantic models, the way a user writes
them for a framework's structured output, and one answer in it that rests on the tool call
``call_1``."""

from __future__ import annotations

from pydantic import BaseModel


class Goal(BaseModel):
    id: str
    text: str
    parent: str | None = None


class Hypothesis(BaseModel):
    id: str
    text: str
    confidence: float | None = None
    goal: str | None = None


class Evidence(BaseModel):
    supports: str | None = None
    contradicts: str | None = None
    tool_call: str | None = None
    document: str | None = None
    hypothesis: str | None = None
    weight: float | None = None


class Decision(BaseModel):
    id: str
    text: str
    confidence: float | None = None
    adopts: list[str] = []
    goal: str | None = None


class RefundDecision(BaseModel):
    """What the model answers: its reasoning, and the reply to the customer (not read)."""

    goals: list[Goal]
    hypotheses: list[Hypothesis]
    evidence: list[Evidence]
    decision: Decision
    reply: str


ANSWER = RefundDecision(
    goals=[Goal(id="g1", text="Settle the refund request")],
    hypotheses=[
        Hypothesis(id="h1", text="The parcel was lost", confidence=0.3, goal="g1"),
        Hypothesis(id="h2", text="The parcel was delivered", confidence=0.7, goal="g1"),
    ],
    evidence=[
        Evidence(supports="h2", tool_call="call_1", weight=0.9),
        Evidence(contradicts="h1", tool_call="call_1", weight=0.9),
        Evidence(contradicts="d1", tool_call="call_9", weight=0.2),
    ],
    decision=Decision(id="d1", text="Refuse the refund", confidence=0.8, adopts=["h2"], goal="g1"),
    reply="We cannot refund the order: it was delivered.",
)
"""Evidence on ``call_1`` (a tool call the run made) and on ``call_9`` (none): kept as an
unresolved reference and reported."""
