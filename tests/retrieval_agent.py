"""A ReAct agent whose tool searches a knowledge base: one retrieval, three documents."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider

import otel_prov

HOURS = "The Louvre is open from 9:00 to 18:00, closed on Tuesdays."
PRICES = "A ticket costs 22 euros."


def rag_agent(provider: TracerProvider) -> None:
    """A ReAct step whose tool searches a knowledge base, then the answer."""
    tp = provider
    with otel_prov.agent_session("guide", question="When is the Louvre open?", tracer_provider=tp):
        with (
            otel_prov.iteration(
                1, thought="Search the museum FAQ.", action="search", tracer_provider=tp
            ),
            otel_prov.tool_call("search", arguments={"q": "louvre hours"}, tracer_provider=tp),
        ):
            with otel_prov.retrieval(
                "louvre hours", data_source="museum-faq", tracer_provider=tp
            ) as found:
                found.add_document(
                    "faq#3",
                    content=HOURS,
                    score=0.91,
                    source="https://www.louvre.fr/en/visit/hours",
                    metadata={"page": 3},
                )
                found.add_document(
                    "faq#7",
                    content=PRICES,
                    score=0.42,
                    metadata={"url": "https://www.louvre.fr/en/tickets"},
                )
                found.add_document(7, content="x", metadata={"source": "guide book.pdf"})
            otel_prov.set_observation(HOURS)
        otel_prov.set_answer("9:00 to 18:00, closed on Tuesdays.")
