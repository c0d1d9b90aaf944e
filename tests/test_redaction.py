"""A redacted secret never reaches the OTLP side, the store, the spool, the WAL or the logs."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph
import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov import _content

SECRET = "sk-live-4f9a8b7c6d5e"


@pytest.fixture(autouse=True)
def _no_redaction_after() -> Iterator[None]:
    yield
    _content.set_redaction(None, ())


def test_patterns_and_hook_clean_content_everywhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    handle = otel_prov.configure(
        store=tmp_path / "store",
        wal_dir=tmp_path / "wal",
        set_global=False,
        redact_patterns=[r"sk-live-[0-9a-f]+"],
        redact=lambda text: text.replace("alice@example.com", "<email>"),
    )
    otlp_side = InMemorySpanExporter()
    handle.tracer_provider.add_span_processor(SimpleSpanProcessor(otlp_side))
    tp = handle.tracer_provider
    with otel_prov.agent_session(
        "a", question=f"use key {SECRET} for alice@example.com", tracer_provider=tp
    ) as session:
        with (
            otel_prov.iteration(
                1, thought=f"the key is {SECRET}", action="call", tracer_provider=tp
            ),
            otel_prov.tool_call("call", arguments=f'{{"key": "{SECRET}"}}', tracer_provider=tp),
        ):
            (tmp_path / "wal-snapshot").write_text(
                "".join(p.read_text() for p in (tmp_path / "wal").glob("*.jsonl"))
            )
            otel_prov.set_observation(f"echo {SECRET}")
        otel_prov.set_answer(f"done with {SECRET}", span=session)
    handle.shutdown()

    for span in otlp_side.get_finished_spans():
        assert SECRET not in str(dict(span.attributes or {}))
    wal_text = (tmp_path / "wal-snapshot").read_text()
    assert "[REDACTED]" in wal_text and SECRET not in wal_text
    dump = (
        pyoxigraph.Store.read_only(str(tmp_path / "store"))
        .dump(format=pyoxigraph.RdfFormat.N_QUADS)
        .decode()
    )
    assert SECRET not in dump and "alice@example.com" not in dump
    assert "use key [REDACTED] for <email>" in dump
    assert all(SECRET not in record.getMessage() for record in caplog.records)


def test_a_bad_pattern_is_refused_with_its_reason() -> None:
    with pytest.raises(ValueError, match="invalid redaction pattern"):
        _content.set_redaction(None, ["(unclosed"])


def test_the_spool_holds_only_redacted_text(tmp_path: Path) -> None:
    handle = otel_prov.configure(
        sparql_update_endpoint="http://127.0.0.1:9/update",  # nothing listens: all is spooled
        spool_dir=tmp_path / "spool",
        wal_dir=tmp_path / "wal",
        set_global=False,
        redact_patterns=[r"sk-live-[0-9a-f]+"],
    )
    with otel_prov.agent_session(
        "a", question=f"key {SECRET}", tracer_provider=handle.tracer_provider
    ):
        pass
    handle.shutdown()
    spooled = "".join(p.read_text() for p in (tmp_path / "spool").glob("*.nq"))
    assert "key [REDACTED]" in spooled and SECRET not in spooled
