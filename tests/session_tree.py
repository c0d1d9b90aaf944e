"""A known agent session as span records: the input of the golden-file and validity tests.

An HTTP request (span 0x10) runs an agent session (0x20) of four iterations:
1. a tool call that fails (TimeoutError), 2. the same tool again, successfully,
3. two tools in parallel, 4. the final answer.  Each iteration starts with a model call.
"""

from __future__ import annotations

from otel_prov.prov._span_record import SpanEvent, SpanRecord
from tests.builders import make_span


def known_session() -> list[SpanRecord]:
    return [
        make_span(
            0x10,
            None,
            name="POST /ask",
            start_ms=0,
            end_ms=100,
            service="web",
            http__request__method="POST",
        ),
        make_span(
            0x20,
            0x10,
            name="invoke_agent weather",
            start_ms=1,
            end_ms=90,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name="weather",
            gen_ai__conversation__id="conv-1",
            otel_prov__question='Weather in "Paris"?\nAnd Lyon?',
            otel_prov__answer="Paris 18 °C, Lyon 20 °C",
        ),
        # iteration 1: failing tool
        make_span(
            0x21,
            0x20,
            name="iteration 1",
            start_ms=2,
            end_ms=20,
            otel_prov__iteration__number=1,
            otel_prov__thought="Look up Paris.",
            otel_prov__action="get_weather",
            otel_prov__arguments='{"city": "Paris"}',
        ),
        make_span(
            0x22,
            0x21,
            name="chat m",
            start_ms=2,
            end_ms=5,
            gen_ai__operation__name="chat",
            gen_ai__request__model="m",
            gen_ai__provider__name="p",
            gen_ai__usage__input_tokens=10,
            gen_ai__usage__output_tokens=3,
        ),
        make_span(
            0x23,
            0x21,
            name="execute_tool get_weather",
            start_ms=6,
            end_ms=19,
            status="error",
            message="timed out",
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="get_weather",
            gen_ai__tool__call__id="call_1",
            error__type="TimeoutError",
            events=(
                SpanEvent(
                    "exception",
                    0,
                    {"exception.type": "TimeoutError", "exception.message": "timed out"},
                ),
            ),
        ),
        # iteration 2: the same tool, successfully
        make_span(
            0x24,
            0x20,
            name="iteration 2",
            start_ms=21,
            end_ms=40,
            otel_prov__iteration__number=2,
            otel_prov__thought="Retry.",
            otel_prov__action="get_weather",
            otel_prov__arguments='{"city": "Paris"}',
        ),
        make_span(
            0x25,
            0x24,
            name="execute_tool get_weather",
            start_ms=25,
            end_ms=39,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="get_weather",
            gen_ai__tool__call__id="call_2",
            otel_prov__observation="18 °C",
        ),
        # iteration 3: two tools in parallel
        make_span(
            0x26,
            0x20,
            name="iteration 3",
            start_ms=41,
            end_ms=70,
            otel_prov__iteration__number=3,
            otel_prov__thought="Both cities at once.",
            otel_prov__action="get_weather",
        ),
        make_span(
            0x27,
            0x26,
            name="execute_tool get_weather",
            start_ms=45,
            end_ms=60,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="get_weather",
            gen_ai__tool__call__id="call_3",
            otel_prov__arguments='{"city": "Lyon"}',
            otel_prov__observation="20 °C",
        ),
        make_span(
            0x28,
            0x26,
            name="execute_tool get_time",
            start_ms=45,
            end_ms=50,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="get_time",
            gen_ai__tool__call__id="call_4",
            otel_prov__arguments="{}",
            otel_prov__observation="12:00",
        ),
        # iteration 4: the answer
        make_span(
            0x29,
            0x20,
            name="iteration 4",
            start_ms=71,
            end_ms=89,
            otel_prov__iteration__number=4,
            otel_prov__thought="Done.",
            otel_prov__action="final_answer",
        ),
    ]
