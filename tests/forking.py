"""An agent process that forks workers (os.fork, or multiprocessing's fork start method)
after configure(), each running sessions: what gunicorn --preload and Celery prefork do."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent("""
    import multiprocessing, os, sys
    import otel_prov

    how, children = sys.argv[1], int(sys.argv[2])
    handle = otel_prov.configure(set_global=False, otlp=False, service_name="forking")

    def session(name):
        tp = handle.tracer_provider
        with otel_prov.agent_session("worker", question=name, conversation_id=name,
                                     tracer_provider=tp) as s:
            with otel_prov.iteration(1, tracer_provider=tp):
                with otel_prov.tool_call("lookup", arguments="{}", call_id=name,
                                         tracer_provider=tp):
                    otel_prov.set_observation(f"seen by {os.getpid()}")
            otel_prov.set_answer(f"answer of {name}", span=s)

    def work(index):  # no flush here: the child's provenance must go out on its own
        session(f"child-{index}")

    session("parent-before")
    handle.force_flush()  # the parent has exported before forking, and holds the store
    if how == "os.fork":
        pids = []
        for index in range(children):
            pid = os.fork()
            if pid == 0:
                work(index)
                handle.shutdown()  # a forked child that exits through os._exit flushes first
                os._exit(0)
            pids.append(pid)
        for pid in pids:
            assert os.waitpid(pid, 0)[1] == 0
    else:
        context = multiprocessing.get_context("fork")
        workers = [context.Process(target=work, args=(i,)) for i in range(children)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
            assert worker.exitcode == 0
    session("parent-after")
    handle.shutdown()
    stats = handle.processor.statistics()
    print(stats.records_exported, stats.records_failed)
""")


def run_forking_agent(
    how: str, children: int, **environment: str
) -> subprocess.CompletedProcess[str]:
    """Run the script in its own interpreter (forking inside pytest would copy pytest)."""
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, how, str(children)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **environment},
    )
