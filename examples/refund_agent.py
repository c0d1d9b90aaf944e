"""A refund decision with its evidence: goals, hypotheses, evidence for and against, and
the decision, recorded as the agent weighs them (docs/decisions.md walks through it).

A customer says order 1042 never arrived.  The agent (its model is scripted here: no
API key) sets a goal, weighs three hypotheses, looks up the refund policy and the
parcel's tracking, decides to refuse the refund, and only then reads the customer's
messages, which speak against its decision: the record shows that this evidence came
too late to be considered.  Run it, then ask the store:

    python examples/refund_agent.py
    otel-prov why refund-1042
    otel-prov summary refund-1042

OTEL_PROV_STORE picks the store (default .otel-prov/store).
"""

from __future__ import annotations

import os

import otel_prov
from otel_prov.read import open_store

CONVERSATION = "refund-1042"
QUESTION = "Order 1042 never arrived. Please refund me."
POLICY = "Refunds are due when the carrier cannot confirm delivery within 14 days of shipping."


@otel_prov.tool_call("search_policy", call_id="call_policy")
def search_policy(topic: str) -> str:
    """The shop's policy on ``topic``, from its policy index (a retrieval)."""
    with otel_prov.retrieval(topic, data_source="policies") as found:
        found.add_document(
            "refund-policy#4", content=POLICY, score=0.92, source="https://shop.example/refunds"
        )
    return POLICY


@otel_prov.tool_call("track_parcel", call_id="call_track")
def track_parcel(order: str) -> str:
    return "Delivered on 2 May at 14:10, left at the front door, no signature."


@otel_prov.tool_call("get_messages", call_id="call_messages")
def get_messages(customer: str) -> str:
    return "3 May, customer: the box at my door had been opened and was empty."


def scripted_model(step: int) -> None:
    """What the scripted model says at each step: its reasoning, as the agent records it."""
    if step == 1:
        otel_prov.goal("Settle the refund request for order 1042", id="g1")
        otel_prov.hypothesis("The parcel was lost in transit", id="h1", confidence=0.5, goal="g1")
        otel_prov.hypothesis("The parcel was delivered", id="h2", confidence=0.4, goal="g1")
        otel_prov.hypothesis(
            "The parcel was stolen after delivery", id="h3", confidence=0.1, goal="g1"
        )
    elif step == 2:
        otel_prov.evidence(tool_call="call_track", supports="h2", weight=0.8)
        otel_prov.evidence(tool_call="call_track", contradicts="h1", weight=0.8)
        otel_prov.decision(
            "Refuse the refund: the carrier confirms delivery",
            id="d1",
            adopts=["h2"],
            confidence=0.7,
            goal="g1",
        )
        otel_prov.evidence(document="refund-policy#4", supports="d1", weight=0.6)
        otel_prov.evidence(hypothesis="h1", contradicts="d1", weight=0.3)
    else:
        otel_prov.evidence(tool_call="call_messages", contradicts="d1", weight=0.7)


def ask_model(step: int) -> None:
    """One call of the (scripted) model: what it reasons is recorded on the step."""
    with otel_prov.model_call("scripted-model", provider="example"):
        scripted_model(step)


def run_agent() -> None:
    """The agent loop: three steps, each a model call, the model's reasoning and its calls."""
    with otel_prov.agent_session(
        "refund-agent",
        question=QUESTION,
        conversation_id=CONVERSATION,
        tools=["search_policy", "track_parcel", "get_messages"],
    ) as session:
        with otel_prov.iteration(
            1, thought="First the refund policy and the parcel's tracking.", action="search_policy"
        ):
            ask_model(1)
            search_policy(topic="refunds for parcels that did not arrive")
            track_parcel(order="1042")
        with otel_prov.iteration(
            2, thought="The carrier confirms delivery; the policy refunds undelivered parcels."
        ):
            ask_model(2)
        with otel_prov.iteration(3, thought="Read the customer's messages for the reply."):
            get_messages(customer="C-88")
            ask_model(3)
        otel_prov.set_answer(
            "We cannot refund order 1042: the carrier confirms delivery on 2 May.", span=session
        )


if __name__ == "__main__":
    handle = otel_prov.configure(service_name="refund-agent")
    run_agent()
    handle.shutdown()
    # What the run decided, and on what evidence, as `otel-prov summary` tells it.
    summary = open_store(os.environ.get("OTEL_PROV_STORE", ".otel-prov/store")).summary(
        CONVERSATION
    )
    for sentence in summary.sentences:
        if sentence.text.startswith("Decided"):
            print(sentence.text)
