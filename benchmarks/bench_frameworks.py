"""(f) What the framework instrumentors add to a real agent run, beside a peer's.

The 2-step scripted runs of ``tests/instrumentation`` (one tool call, then the answer),
offline: LangChain ``create_agent`` bare, with OpenInference's LangChainInstrumentor
(SimpleSpanProcessor into an InMemorySpanExporter) and with ours (our LangChainInstrumentor
plus ProvSpanProcessor writing to a real embedded Oxigraph store, in the same provider),
and our LangChainInstrumentor alone (spans, no processor: the floor under ours);
OpenAI Agents ``Runner.run_sync`` bare and with ours.  One more LangChain variant maps in
another process: our LangChainInstrumentor and ``configure()`` with
``OTEL_PROV_PROVENANCE=false`` (the SDK's ``BatchSpanProcessor`` and OTLP/HTTP exporter),
and ``otel-prov receive`` (embedded store) beside it, as an agent runs without a Collector
(README); its flush returns once the receiver has journaled the spans, and the receiver's
CPU is reported apart.  That variant is measured in rounds of its own, beside bare and
OpenInference runs, with the receiver done with each of its batches before the next
batch starts: the receiver maps in the background, and on a 2-core machine its work
would otherwise run beside (and slow) whichever worker came next.

Instrumentors patch process globals (LangChain's callback configuration, the Agents SDK's
trace processors), so every variant lives in its own worker subprocess, set up and warmed up
once, and nothing one variant patched or left behind can tax another. The parent drives the
workers in turns (the order reversed every turn, only one worker running at a time) and
compares the medians of all timed runs. A turn is one untimed batch, then five timed ones,
each flushed after its runs (timed apart), then a pause until the worker's background
threads are done: ours maps and stores its sessions on its processor's worker thread, beside
its own runs as an agent that keeps running has it, and never beside another worker's. The
LangChain agent is built once, as a service builds its graph, and its scripted model rewound
before each run. Built again for every run (outside the timed part), it left some 200
objects of cyclic garbage per run, and the collector freed them in whichever timed run
crossed its threshold: 38% of the bare runs, 50% of ours, though ours add no cyclic garbage
and allocate as many objects net, and at 50% the median of ours took in a whole collection
(0.3 ms). OpenInference's exporter works synchronously inside the run, ours in the
background, and the agent pays for both, so a second comparison counts each variant's
flushes in, and the CPU of every thread, between batches too.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any

from benchmarks.workload import report
from tests.receiver import Receivers

WARMUP = 30
TURNS = 12
BATCHES_PER_TURN = 5
ROUNDS = TURNS * BATCHES_PER_TURN
"""Timed batches per worker."""
RUNS_PER_BATCH = 15
SETTLE_S = 0.1
TARGET = 0.25  # ours may add at most a quarter of what OpenInference adds to a run
TARGET_FLUSHED = 0.5  # and half with our flush counted: the agent pays for it somewhere
PREFIX = "@@ "

LANGCHAIN = ("lc-bare", "lc-openinference", "lc-ours", "lc-ours-spans", "lc-ours-unstreamed")
"""``lc-ours``: streaming on, the default; ``lc-ours-unstreamed``: the same with streaming
off (``stream=False``), side by side; ``lc-ours-spans``: our instrumentor alone, its spans
ended into a provider without span processors: the floor under ``lc-ours``, what the spans
cost before any provenance."""
REMOTE = ("lc-bare", "lc-openinference", "lc-ours-receiver")
"""Measured apart, with ``otel-prov receive`` running: its mapping must not share the
machine with the in-process variants' runs, nor its sessions with other batches."""
RECEIVER_ENV = {"OTEL_PROV_PROVENANCE": "false", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}
"""The ``lc-ours-receiver`` worker's settings, beside ``OTEL_EXPORTER_OTLP_ENDPOINT``."""
AGENTS = ("oa-bare", "oa-ours")


# --- the workers ---------------------------------------------------------------------
def _langchain_run(*, built_once: bool = True) -> Callable[[], Any]:
    """The scripted create_agent run of tests/instrumentation/test_langchain.py: ``prepare()``
    gives the next run.  The agent is built once and its scripted model rewound for each
    run (as a service runs its graph), or, not ``built_once``, built again for each run."""
    from langchain.agents import create_agent
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    class ScriptedModel(FakeMessagesListChatModel):
        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools])

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"{city}: 18 °C"

    usage = {"input_tokens": 12, "output_tokens": 5, "total_tokens": 17}
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}
    question: Any = {"messages": [{"role": "user", "content": "Weather in Paris?"}]}

    def build() -> tuple[ScriptedModel, Any]:
        model = ScriptedModel(
            responses=[
                AIMessage(content="I need the weather.", tool_calls=[call], usage_metadata=usage),
                AIMessage(content="18 °C"),
            ]
        )
        return model, create_agent(model, [get_weather], name="weather")

    def prepare_new() -> Callable[[], Any]:
        agent = build()[1]
        return lambda: agent.invoke(question)

    if not built_once:
        return prepare_new
    model, agent = build()

    def prepare() -> Callable[[], Any]:
        model.i = 0  # rewound: the scripted answers start again
        return lambda: agent.invoke(question)

    return prepare


def _agents_run() -> Callable[[], Any]:
    """The scripted Runner.run_sync run of tests/instrumentation/test_openai_agents.py."""
    from agents import Agent, RunConfig, Runner, function_tool
    from openai.types.responses import (
        ResponseFunctionToolCall,
        ResponseOutputMessage,
        ResponseOutputText,
        ResponseReasoningItem,
    )
    from openai.types.responses.response_reasoning_item import Summary

    from tests.instrumentation.scripted_openai import ScriptedModel, ScriptedProvider

    @function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return f"18 °C and light rain in {city}"

    agent = Agent(name="weather", instructions="Answer with the weather.", tools=[get_weather])

    def steps() -> list[list[Any]]:
        thought = Summary(text="I need the weather in Paris first.", type="summary_text")
        text = ResponseOutputText(type="output_text", text="It is 18 °C.", annotations=[])
        return [
            [
                ResponseReasoningItem(id="rs_1", type="reasoning", summary=[thought]),
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id="call_1",
                    name="get_weather",
                    arguments='{"city": "Paris"}',
                ),
            ],
            [
                ResponseOutputMessage(
                    id="msg_1",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[text],
                )
            ],
        ]

    def prepare() -> Callable[[], Any]:
        config = RunConfig(model_provider=ScriptedProvider(ScriptedModel(steps())))
        return lambda: Runner.run_sync(agent, "Weather in Paris?", run_config=config)

    return prepare


def _worker(variant: str) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_prov import ProvSpanProcessor
    from otel_prov.exporters import OxigraphStoreExporter

    provider = TracerProvider()
    memory: InMemorySpanExporter | None = None
    processor: ProvSpanProcessor | None = None
    store: OxigraphStoreExporter | None = None
    root = Path(tempfile.mkdtemp(prefix="bench-frameworks-"))
    if variant.endswith("-receiver"):
        # As the README runs an agent without a Collector: OTLP/HTTP to the receiver
        # (OTEL_EXPORTER_OTLP_ENDPOINT), no provenance mapped here (OTEL_PROV_PROVENANCE).
        import otel_prov

        provider = otel_prov.configure(set_global=False).tracer_provider
    elif variant.endswith("-openinference"):
        from openinference.instrumentation.langchain import (
            LangChainInstrumentor as OpenInferenceInstrumentor,
        )

        memory = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(memory))
        OpenInferenceInstrumentor().instrument(tracer_provider=provider)
    elif variant.endswith(("-ours", "-unstreamed")):
        store = OxigraphStoreExporter(root / "store")
        processor = ProvSpanProcessor(store, stream=not variant.endswith("-unstreamed"))
        provider.add_span_processor(processor)
    if variant.startswith("lc-"):
        if variant.startswith("lc-ours"):
            from otel_prov.instrumentation.langchain import LangChainInstrumentor

            LangChainInstrumentor().instrument(tracer_provider=provider)
        prepare = _langchain_run()
    else:
        from agents.tracing import set_trace_processors

        set_trace_processors([])  # nothing may try to upload to OpenAI
        if variant == "oa-ours":
            from otel_prov.instrumentation.openai_agents import OpenAIAgentsInstrumentor

            instrumentor = OpenAIAgentsInstrumentor()
            instrumentor.instrument(tracer_provider=provider)
            set_trace_processors([instrumentor.processor])  # type: ignore[list-item]
        prepare = _agents_run()

    spans = 0
    ended = 0.0
    """CPU time when the last batch ended: what threads use between batches is counted too."""

    def batch(runs: int) -> dict[str, Any]:
        """The runs' times, then the flush's (timed apart), and the CPU of the runs and the
        flush (every thread's) with what background threads used since the previous batch
        ended: in a turn, each timed batch counts the background work of exactly one
        flush, the one before it."""
        nonlocal spans, ended
        times, cpu = [], time.process_time() - ended
        for _ in range(runs):
            run = prepare()
            start, cpu_start = time.perf_counter(), time.process_time()
            run()
            times.append(time.perf_counter() - start)
            cpu += time.process_time() - cpu_start
        start, cpu_start = time.perf_counter(), time.process_time()
        provider.force_flush()
        flush = time.perf_counter() - start
        ended = time.process_time()
        cpu += ended - cpu_start
        if memory is not None:
            spans += len(memory.get_finished_spans())
            memory.clear()
        return {"times": times, "flush": flush, "cpu": cpu}

    def settle() -> None:
        """Until the store has loaded what the last flush parked, then a pause (for every
        variant): the next worker's runs share the machine with nothing of this one's."""
        while store is not None and store.waiting():
            time.sleep(0.005)
        time.sleep(SETTLE_S)

    def send(payload: object) -> None:
        print(PREFIX + json.dumps(payload), flush=True)

    batch(WARMUP)  # counted in the span and session totals too
    send("ready")
    for line in sys.stdin:
        if line.strip() == "quit":
            break
        if line.strip() == "settle":
            settle()
            send("settled")
            continue
        send(batch(int(line)))
    provider.shutdown()
    stats = processor.statistics() if processor is not None else None
    send(
        {
            "spans": stats.spans_received if stats else spans,
            "sessions": stats.records_exported if stats else 0,
            "dropped": stats.spans_dropped if stats else 0,
        }
    )
    shutil.rmtree(root, ignore_errors=True)


# --- the parent ------------------------------------------------------------------------
def _cpu_seconds(pid: int) -> float:
    """User and system CPU a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Worker:
    def __init__(self, variant: str, env: dict[str, str] | None = None) -> None:
        self.variant = variant
        self.times: list[float] = []
        self.flush = 0.0
        self.cpu = 0.0
        """Seconds of flushing, and of CPU (runs and flushes), over all timed batches."""
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.bench_frameworks", "--worker", variant],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            env={**os.environ, **(env or {})},
        )

    def receive(self) -> Any:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(PREFIX):
                return json.loads(line[len(PREFIX) :])
        raise RuntimeError(f"worker {self.variant} ended (exit {self.proc.wait()})")

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def batch(self, runs: int, *, timed: bool = True) -> None:
        self.send(str(runs))
        answer: dict[str, Any] = self.receive()
        if timed:
            self.times += answer["times"]
            self.flush += answer["flush"]
            self.cpu += answer["cpu"]

    def settle(self) -> None:
        self.send("settle")
        assert self.receive() == "settled"

    def finish(self) -> dict[str, int]:
        self.send("quit")
        stats: dict[str, int] = self.receive()
        self.proc.wait()
        return stats

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times) * 1000

    @property
    def flushed_ms(self) -> float:
        """Mean time of a run with its share of the flushes."""
        return (sum(self.times) + self.flush) / len(self.times) * 1000

    @property
    def flush_ms(self) -> float:
        """Mean flushing time per run: the background work the runs left for the flush."""
        return self.flush / len(self.times) * 1000

    @property
    def cpu_ms(self) -> float:
        """Mean CPU of a run with its share of the flushes and of the background work they
        left (every thread's)."""
        return self.cpu / len(self.times) * 1000


def _measure(
    variants: Sequence[str],
    env: dict[str, str] | None = None,
    settle: Callable[[int], None] | None = None,
) -> tuple[dict[str, Worker], dict[str, dict[str, int]]]:
    """Workers of ``variants`` in turns, the order reversed every turn.  A turn is one
    batch untimed, then BATCHES_PER_TURN timed ones: each timed batch runs while what the
    worker's previous flush left to background threads goes on, as in an agent that keeps
    running, and nothing of another worker's.  Then the worker settles.  ``settle(sessions)``:
    after the receiver variant's warm-up and each of its batches, wait until the receiver
    has stored that many sessions (as if it ran on another host)."""
    workers = {
        variant: Worker(variant, env if variant.endswith("-receiver") else None)
        for variant in variants
    }
    try:
        for worker in workers.values():  # set up and warmed up, in parallel
            assert worker.receive() == "ready"
        sessions = WARMUP
        if settle is not None:
            settle(sessions)
        order = list(workers.values())
        for turn in range(TURNS):
            for worker in order if turn % 2 else reversed(order):
                for timed in (False, *[True] * BATCHES_PER_TURN):
                    worker.batch(RUNS_PER_BATCH, timed=timed)
                    if settle is not None and worker.variant.endswith("-receiver"):
                        sessions += RUNS_PER_BATCH
                        settle(sessions)
                worker.settle()
        stats = {variant: worker.finish() for variant, worker in workers.items()}
    finally:
        for worker in workers.values():
            if worker.proc.poll() is None:
                worker.proc.kill()
    return workers, stats


MEDIAN, FLUSHED, CPU = (attrgetter(name) for name in ("median_ms", "flushed_ms", "cpu_ms"))
"""A worker's median run, mean run with its flushes, and mean CPU per run (ms)."""


def _added(
    side: Worker, bare: Worker, peer: Worker, of: Callable[[Worker], float]
) -> tuple[float, float]:
    """What ``side`` adds to the bare run by the measure ``of`` (ms), and that as a share
    of what ``peer`` adds."""
    added = of(side) - of(bare)
    return added, added / (of(peer) - of(bare))


def _added_summary(side: Worker, bare: Worker, peer: Worker) -> str:
    """What ``side`` adds to a run, with its flushes and in CPU, beside ``peer``'s."""
    per_run, per_run_ratio = _added(side, bare, peer, MEDIAN)
    flushed, flushed_ratio = _added(side, bare, peer, FLUSHED)
    return (
        f"per run +{per_run:.2f} ms ({per_run_ratio:.2f}x of OpenInference's), with the "
        f"flushes +{flushed:.2f} ms ({flushed_ratio:.2f}x), flush alone {side.flush_ms:.2f} ms "
        f"per run, added CPU in the agent +{_added(side, bare, peer, CPU)[0]:.2f} ms"
    )


def _halves(ratio: Callable[[Callable[[Worker], float]], float]) -> str:
    """The ratio over the first and the second half of the rounds: how stable it is."""
    half = ROUNDS // 2 * RUNS_PER_BATCH

    def first(worker: Worker) -> float:
        return statistics.median(worker.times[:half]) * 1000

    def second(worker: Worker) -> float:
        return statistics.median(worker.times[half:]) * 1000

    return f"first/second half of the rounds {ratio(first):.2f}x / {ratio(second):.2f}x"


def main() -> None:
    started = time.perf_counter()
    runs = ROUNDS * RUNS_PER_BATCH
    # Span and session counts include the warm-up runs and the untimed batches.
    total = WARMUP + TURNS * (BATCHES_PER_TURN + 1) * RUNS_PER_BATCH

    lc, lc_stats = _measure(LANGCHAIN)
    root = Path(tempfile.mkdtemp(prefix="bench-frameworks-receiver-"))
    receivers = Receivers(root)
    try:
        receiver = receivers.start(
            "--store", str(root / "store"), "--data-dir", str(root / "r"), "--trace-idle", "0.1"
        )
        env = {**RECEIVER_ENV, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.http}

        def stored(sessions: int) -> None:
            receiver.wait_for("otel_prov_receiver_sessions_sealed_total", sessions, timeout=300)

        apart, _ = _measure(REMOTE, env, stored)
        receiver_cpu = _cpu_seconds(receiver.process.pid)
        receiver.stop()
    finally:
        receivers.close()
        shutil.rmtree(root, ignore_errors=True)
    bare, oi, ours, spans, unstreamed = (lc[v] for v in LANGCHAIN)
    oi_added = oi.median_ms - bare.median_ms
    ours_added, ratio = _added(ours, bare, oi, MEDIAN)
    ok = ratio <= TARGET
    verdict = "meets" if ok else "MISSES"
    print(
        f"langchain: bare {bare.median_ms:.1f} ms, OpenInference +{oi_added:.1f} ms, "
        f"ours +{ours_added:.1f} ms -> ours/OpenInference added = {ratio:.2f}x "
        f"({verdict} target <= {TARGET}x)"
    )
    report(
        "langchain added time, ours vs OpenInference",
        ratio,
        f"<= {TARGET}x",
        ok,
        f"medians of {runs} runs each: bare {bare.median_ms:.2f} ms, OpenInference "
        f"{oi.median_ms:.2f} ms ({lc_stats['lc-openinference']['spans'] / total:.1f} spans/run), "
        f"ours {ours.median_ms:.2f} ms ({lc_stats['lc-ours']['spans'] / total:.1f} spans/run, "
        f"{lc_stats['lc-ours']['sessions']} sessions stored of {total} runs, "
        f"{lc_stats['lc-ours']['dropped']} dropped); "
        + _halves(lambda ms: _added(ours, bare, oi, ms)[1]),
    )

    ours_flushed, flushed = _added(ours, bare, oi, FLUSHED)
    ours_cpu, cpu = _added(ours, bare, oi, CPU)
    oi_flushed, oi_cpu = oi.flushed_ms - bare.flushed_ms, oi.cpu_ms - bare.cpu_ms
    print(
        "langchain added per run, flushes included (same turns): "
        f"wall OpenInference +{oi_flushed:.2f} ms, ours +{ours_flushed:.2f} ms "
        f"({flushed:.2f}x); CPU OpenInference +{oi_cpu:.2f} ms, ours +{ours_cpu:.2f} ms "
        f"({cpu:.2f}x); "
        f"flush alone per run: OpenInference {oi.flush_ms:.2f} ms, ours {ours.flush_ms:.2f} ms"
    )
    report(
        "langchain added time with the flush, ours vs OpenInference",
        flushed,
        f"<= {TARGET_FLUSHED}x",
        flushed <= TARGET_FLUSHED,
        f"means per run incl. its share of the flushes: bare {bare.flushed_ms:.2f} ms, "
        f"OpenInference {oi.flushed_ms:.2f} ms, ours {ours.flushed_ms:.2f} ms; added CPU "
        f"per run (every thread, flushes included): OpenInference +{oi_cpu:.2f} ms, ours "
        f"+{ours_cpu:.2f} ms ({cpu:.2f}x)",
    )

    print(
        "langchain, our spans alone (our instrumentor, no span processor; the floor under "
        f"ours): {_added_summary(spans, bare, oi)}"
    )
    print(
        "langchain, ours with streaming off (stream=False, beside ours with it on, the "
        f"default): {_added_summary(unstreamed, bare, oi)}"
    )

    bare, oi, remote = (apart[v] for v in REMOTE)
    print(
        "langchain, ours mapping in otel-prov receive (our instrumentor, BatchSpanProcessor, "
        f"OTLP/HTTP; its own rounds beside bare and OpenInference runs, the receiver done "
        f"with each batch before the next): {_added_summary(remote, bare, oi)}; the "
        f"receiver: {receiver_cpu / total * 1000:.2f} ms of CPU per run in its own process, "
        f"{total} sessions stored of {total} runs"
    )

    oa, oa_stats = _measure(AGENTS)
    bare, ours = (oa[v] for v in AGENTS)
    ours_added = ours.median_ms - bare.median_ms
    ratio = ours.median_ms / bare.median_ms
    print(
        f"openai-agents: bare {bare.median_ms:.1f} ms, ours +{ours_added:.1f} ms "
        f"-> ours/bare = {ratio:.2f}x"
    )
    print(
        f"openai-agents details: medians of {runs} runs each: bare {bare.median_ms:.2f} ms, "
        f"ours {ours.median_ms:.2f} ms ({oa_stats['oa-ours']['spans'] / total:.1f} spans/run, "
        f"{oa_stats['oa-ours']['sessions']} sessions stored of {total} runs, "
        f"{oa_stats['oa-ours']['dropped']} dropped); " + _halves(lambda ms: ms(ours) / ms(bare))
    )
    print(f"(benchmark took {time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        _worker(sys.argv[2])
    else:
        main()
