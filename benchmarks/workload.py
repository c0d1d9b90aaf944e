"""Synthetic agent sessions for the benchmarks: realistic shape, unique ids per session."""

from __future__ import annotations

import json
import random
import statistics
import time
from collections.abc import Callable

from otel_prov.prov._span_record import SpanRecord, classify

T0 = 1_764_460_800_000_000_000


def session_spans(index: int, iterations: int = 5) -> list[SpanRecord]:
    """One session: per iteration a model call and a tool call (every fourth one fails).

    Times are laid out as a real run's are: steps one after another, each step's model
    call before its tool call, everything inside its parent.
    """
    rng = random.Random(index)
    trace = rng.getrandbits(128) | 1
    ids = iter(range(1, 10_000))
    spans: list[SpanRecord] = []
    base = T0 + index * 1_000_000_000
    ms = 1_000_000

    def add(
        parent: int | None,
        name: str,
        start: float,
        end: float,
        status: str = "unset",
        **attributes: object,
    ) -> int:
        span_id = next(ids)
        attrs = {key.replace("__", "."): value for key, value in attributes.items()}
        spans.append(
            SpanRecord(
                trace,
                span_id,
                parent,
                name,
                base + int(start * ms),
                base + int(end * ms),
                status,
                None,
                attrs,
                service_name="bench",
                role=classify(attrs),
            )
        )
        return span_id

    session = add(
        None,
        "invoke_agent bench",
        0,
        10 * iterations + 1,
        gen_ai__operation__name="invoke_agent",
        gen_ai__agent__name="bench",
        gen_ai__conversation__id=f"c{index}",
        otel_prov__question=f'Question number {index} with some "quotes"\n',
        otel_prov__answer="The answer, after all that work: 42.",
    )
    for n in range(1, iterations + 1):
        at = 10 * (n - 1) + 0.5
        arguments = json.dumps({"query": f"step {n} of {index}", "limit": n})
        step = add(
            session,
            f"iteration {n}",
            at,
            at + 9,
            otel_prov__iteration__number=n,
            otel_prov__thought=f"I should look up step {n}.",
            otel_prov__action="search",
            otel_prov__arguments=arguments,
        )
        add(
            step,
            "chat model",
            at + 0.1,
            at + 3,
            gen_ai__operation__name="chat",
            gen_ai__request__model="m",
            gen_ai__usage__input_tokens=100 + n,
            gen_ai__usage__output_tokens=20,
        )
        failed = n % 4 == 0
        add(
            step,
            "execute_tool search",
            at + 3.5,
            at + 8.5,
            "error" if failed else "unset",
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="search",
            gen_ai__tool__call__id=f"call_{n}",
            otel_prov__arguments=arguments,
            **(
                {"error__type": "TimeoutError"}
                if failed
                else {"otel_prov__observation": f"result {n}: " + "lorem ipsum " * 8}
            ),
        )
    return spans


def median_seconds(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(name: str, ratio: float, target: str, ok: bool, details: str) -> None:
    verdict = "meets" if ok else "MISSES"
    print(f"{name}: ratio {ratio:.2f}x ({verdict} target {target}); {details}")
