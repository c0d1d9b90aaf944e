"""A disk that fills and empties under a running agent: the agent never sees it, the log
says it a few times (not once per tool call), what could not be written is counted, and
once space is back the same process stores its sessions again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pyoxigraph

from tests.small_disk import small_tmpfs

ROOT = Path(__file__).resolve().parents[1]
FULL_SESSIONS = 200

AGENT = textwrap.dedent("""
    import dataclasses, json, os, sys
    from pathlib import Path
    import otel_prov
    from tests.small_disk import fill

    disk, full_sessions = Path(sys.argv[1]), int(sys.argv[2])
    handle = otel_prov.configure(set_global=False, otlp=False, service_name="full-disk")
    tp = handle.tracer_provider

    def sessions(prefix, count):
        for number in range(count):
            name = f"{prefix}-{number}"
            with otel_prov.agent_session("agent", question=name, conversation_id=name,
                                         tracer_provider=tp) as s:
                with otel_prov.iteration(1, tracer_provider=tp):
                    with otel_prov.tool_call("lookup", arguments="{}", call_id=name,
                                             tracer_provider=tp):
                        otel_prov.set_observation(name)
                otel_prov.set_answer(f"answer of {name}", span=s)

    sessions("before", 5)
    assert handle.force_flush()
    fill(disk)
    sessions("full", full_sessions)
    handle.force_flush()  # may say False; must not raise
    (disk / "filler").unlink()
    sessions("after", 5)
    assert handle.force_flush()
    fill(disk)  # full again as the agent exits
    handle.shutdown()
    print(json.dumps(dataclasses.asdict(handle.processor.statistics())))
""")


def _stored_sessions(store: Path) -> set[str]:
    rows = pyoxigraph.Store.read_only(str(store)).query(
        """PREFIX oprov: <https://w3id.org/otel-prov/ns#>
        SELECT ?id WHERE { ?s a oprov:AgentSession ; oprov:sessionId ?id }""",
        use_default_graph_as_union=True,
    )
    return {row["id"].value for row in rows}  # type: ignore[index, union-attr]


def test_a_disk_that_fills_and_empties_never_breaks_the_agent(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "disk", "48m") as disk:
        environment = {
            **os.environ,
            "OTEL_PROV_STORE": str(disk / "store"),
            "OTEL_PROV_WAL_DIR": str(disk / "wal"),
            "OTEL_PROV_BLOB_DIR": str(disk / "blobs"),
            "PYTHONPATH": str(ROOT),
        }
        run = subprocess.run(
            [sys.executable, "-c", AGENT, str(disk), str(FULL_SESSIONS)],
            cwd=disk,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env=environment,
        )
        assert run.returncode == 0, run.stderr[-5000:]
        # The first failure of each kind with its traceback, then counts: not one a call.
        assert run.stderr.count("Traceback") <= 6, run.stderr[-5000:]
        statistics = json.loads(run.stdout)
        assert statistics["intents_failed"] > 0  # tool calls the full log could not take
        (disk / "filler").unlink()
        stored = _stored_sessions(disk / "store")
        assert {f"before-{n}" for n in range(5)} | {f"after-{n}" for n in range(5)} <= stored
        full = {name for name in stored if name.startswith("full-")}
        # Every session of the full disk is stored, or counted as not stored.
        assert len(full) + statistics["records_failed"] >= FULL_SESSIONS, statistics
