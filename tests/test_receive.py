"""``otel-prov receive`` in its own process, fed by the OpenTelemetry SDK's OTLP exporters
(gRPC and HTTP) in processes of their own, and by hand-made requests for the answers the
SDK never provokes.  The store is the embedded one, read back with the CLI."""

from __future__ import annotations

import gzip
import http.client
import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path

import grpc
import pyoxigraph
import pytest
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span

from otel_prov.prov._stream import STREAMED
from tests.builders import make_span
from tests.cli import run_cli
from tests.otlp_agent import spans_per_session
from tests.receiver import Receiver, Receivers, healthz, quads, run_agent
from tests.test_otlp_proto import GOOD, encode_request
from tests.waiting import until

EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
LIMIT = 32 << 20
"""The receiver's request size limit."""
SPANS = spans_per_session(3)
"""Spans of one run of ``tests.otlp_agent`` (3 steps, its default)."""


def request(*spans: Span) -> bytes:
    message = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=list(spans))])]
    )
    return message.SerializeToString()


def post(
    receiver: Receiver, body: bytes, content_type: str = "application/x-protobuf", **headers: str
) -> tuple[int, dict[str, str], bytes]:
    """POST /v1/traces: status, headers (names in lower case), body (error statuses too)."""
    sent = urllib.request.Request(
        f"{receiver.http}/v1/traces",
        data=body,
        headers={"Content-Type": content_type, **headers},
        method="POST",
    )
    try:
        with urllib.request.urlopen(sent, timeout=60) as response:
            return response.status, _lower(response.headers.items()), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, _lower(exc.headers.items()), exc.read()


def _lower(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    return {name.lower(): value for name, value in headers}


def grpc_export(
    receiver: Receiver, body: bytes, metadata: tuple[tuple[str, str], ...] = ()
) -> ExportTraceServiceResponse:
    with grpc.insecure_channel(receiver.grpc) as channel:
        call = channel.unary_unary(
            EXPORT, response_deserializer=ExportTraceServiceResponse.FromString
        )
        response: ExportTraceServiceResponse = call(body, metadata=metadata, timeout=60)
        return response


def sessions(store: Path) -> list[dict[str, str]]:
    listed = run_cli("sessions", "--store", str(store), "--format", "json", "--limit", "100")
    assert listed.returncode in (0, 1), listed.stderr
    return json.loads(listed.stdout) if listed.returncode == 0 else []


def bundles(store: Path) -> dict[str, int]:
    """Session IRI -> its bundles over its whole content (1: sealed once); a streamed
    run's entries over the steps it added while it ran are not counted (``_stream``)."""
    quads = list(pyoxigraph.Store.read_only(str(store)))
    streamed = {
        quad.subject.value
        for quad in quads
        if quad.predicate.value.endswith("#canonicalization") and quad.object.value == STREAMED
    }
    found: dict[str, int] = {}
    for quad in quads:
        if quad.predicate.value.endswith("#bundleOf") and quad.subject.value not in streamed:
            session = quad.object.value
            found[session] = found.get(session, 0) + 1
    return found


def test_sessions_sent_over_grpc_and_http_land_once_and_verify(
    receivers: Receivers, tmp_path: Path
) -> None:
    store, data = tmp_path / "store", tmp_path / "data"
    receiver = receivers.start(
        "--store", str(store), "--data-dir", str(data), "--trace-idle", "0.5"
    )
    assert healthz(receiver) == 200
    by_grpc = run_agent("--protocol", "grpc", "--endpoint", receiver.grpc, "--sessions", "2")
    by_http = run_agent(
        "--protocol", "http", "--endpoint", receiver.http, "--sessions", "2", "--service", "other"
    )
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 4)
    metrics = receiver.metrics()
    assert metrics["otel_prov_receiver_spans_received_total"] == 4 * SPANS
    assert metrics["otel_prov_receiver_spans_rejected_total"] == 0
    assert receiver.stop() == 0
    listed = sessions(store)
    assert sorted(row["trace_id"] for row in listed) == sorted(
        by_grpc["traces"] + by_http["traces"]
    )
    assert all(row["iterations"] == 3 and row["tool_calls"] == 2 for row in listed)
    assert bundles(store) == {row["id"]: 1 for row in listed}
    assert run_cli("verify", "--store", str(store)).returncode == 0
    assert list((data / "journal").glob("segment-*")) == []


def test_what_was_acknowledged_before_a_sigkill_is_stored_once_after_the_restart(
    receivers: Receivers, tmp_path: Path
) -> None:
    store, data = tmp_path / "store", tmp_path / "data"
    where = ("--store", str(store), "--data-dir", str(data))
    first = receivers.start(*where, "--trace-idle", "60")  # nothing is mapped before the kill
    sent = run_agent("--protocol", "grpc", "--endpoint", first.grpc, "--sessions", "2")["traces"]
    sent += run_agent("--protocol", "http", "--endpoint", first.http)["traces"]
    first.kill()
    assert sessions(store) == []
    second = receivers.start(*where, "--trace-idle", "0.5")
    second.wait_for("otel_prov_receiver_sessions_sealed_total", 3)
    assert "acknowledged before the last stop" in second.log_text()
    assert second.stop() == 0
    assert sorted(row["trace_id"] for row in sessions(store)) == sorted(sent)
    assert set(bundles(store).values()) == {1}
    assert run_cli("verify", "--store", str(store)).returncode == 0


def test_a_crash_between_storing_and_marking_done_seals_nothing_twice(
    receivers: Receivers, tmp_path: Path
) -> None:
    """The journal as it was before the traces were marked done (a copy taken after the
    acknowledgement, while no trace can go idle): the restart maps them again, reads back
    what the store holds, and adds nothing."""
    store, data = tmp_path / "store", tmp_path / "data"
    where = ("--store", str(store), "--data-dir", str(data))
    first = receivers.start(*where, "--trace-idle", "600")
    run_agent("--protocol", "grpc", "--endpoint", first.grpc, "--sessions", "2")
    shutil.copytree(data / "journal", tmp_path / "acknowledged")
    assert first.stop() == 0  # stores both and marks them done
    assert len(bundles(store)) == 2
    assert len(list((tmp_path / "acknowledged").glob("segment-*"))) == 1
    stored = quads(store)
    shutil.rmtree(data / "journal")
    shutil.copytree(tmp_path / "acknowledged", data / "journal")
    second = receivers.start(*where, "--trace-idle", "0.5")
    second.wait_for("otel_prov_receiver_traces_mapped_total", 2)
    metrics = second.metrics()
    assert metrics["otel_prov_receiver_sessions_sealed_total"] == 0
    assert metrics["otel_prov_receiver_sessions_revised_total"] == 0
    assert second.stop() == 0
    assert quads(store) == stored
    assert list((data / "journal").glob("segment-*")) == []


def test_sigterm_drains_what_is_buffered_into_the_store_and_exits_0(
    receivers: Receivers, tmp_path: Path
) -> None:
    store, data = tmp_path / "store", tmp_path / "data"
    receiver = receivers.start(
        "--store", str(store), "--data-dir", str(data), "--trace-idle", "600"
    )
    sent = run_agent("--protocol", "http", "--endpoint", receiver.http)["traces"]
    assert receiver.metrics()["otel_prov_receiver_open_traces"] == 1
    assert receiver.stop() == 0
    assert [row["trace_id"] for row in sessions(store)] == sent
    assert list((data / "journal").glob("segment-*")) == []


def test_a_gzip_body_of_several_members_is_read_whole(receivers: Receivers, tmp_path: Path) -> None:
    """RFC 1952: a gzip file is a series of members, and what it holds is all of them
    (``gzip.decompress`` and ``zcat`` read them all; a sender that compresses as it
    streams writes several).  The receiver read the first and dropped the rest with a
    200, and a protobuf body cut at a member's end is still a valid request."""
    receiver = receivers.start("--store", str(tmp_path / "store"), "--trace-idle", "600")
    second = Span()
    second.CopyFrom(GOOD)
    second.span_id = bytes.fromhex("00f067aa0ba902b8")
    body = gzip.compress(request(GOOD)) + gzip.compress(request(second))
    assert gzip.decompress(body) == request(GOOD) + request(second)
    status, _, answer = post(receiver, body, **{"Content-Encoding": "gzip"})
    assert status == 200, answer
    assert receiver.metrics()["otel_prov_receiver_spans_received_total"] == 2
    # Each member counts against the limit, together.
    bomb = gzip.compress(bytes(LIMIT // 2)) + gzip.compress(bytes(LIMIT // 2 + 1))
    assert post(receiver, bomb, **{"Content-Encoding": "gzip"})[0] == 413


def test_answers_follow_the_otlp_specification(receivers: Receivers, tmp_path: Path) -> None:
    receiver = receivers.start("--store", str(tmp_path / "store"), "--trace-idle", "600")
    # Spans that break the rules: the rest is taken, the bad ones counted and explained.
    bad = Span()
    bad.CopyFrom(GOOD)
    bad.span_id = bytes(8)
    status, headers, body = post(receiver, request(GOOD, bad))
    answer = ExportTraceServiceResponse.FromString(body)
    assert status == 200 and headers["content-type"] == "application/x-protobuf"
    assert answer.partial_success.rejected_spans == 1
    assert "all-zero span_id" in answer.partial_success.error_message
    document = {
        "resourceSpans": [
            {"scopeSpans": [{"spans": [{"traceId": "0af7651916cd43dd8448eb211c80319c"}]}]}
        ]
    }
    status, _, body = post(receiver, json.dumps(document).encode(), "application/json")
    partial = json.loads(body)["partialSuccess"]
    assert status == 200 and partial["rejectedSpans"] == "1"  # an int64: a string in JSON
    assert "has no spanId" in partial["errorMessage"]
    # gzip, and an answer without partial_success when all went in.
    status, _, body = post(receiver, gzip.compress(request(GOOD)), **{"Content-Encoding": "gzip"})
    assert (status, ExportTraceServiceResponse.FromString(body).HasField("partial_success")) == (
        200,
        False,
    )
    # What cannot be decoded: 400 with a google.rpc.Status; another content type: 415.
    for content_type, garbage in (
        ("application/x-protobuf", b"\xff\xff"),
        ("application/json", b"{"),
    ):
        status, _, body = post(receiver, garbage, content_type)
        assert status == 400, body
    assert (
        Status.FromString(post(receiver, b"\xff\xff")[2]).code
        == grpc.StatusCode.INVALID_ARGUMENT.value[0]
    )
    assert post(receiver, b"x", "text/plain")[0] == 415
    # Over the size limit, as declared (answered before the body is read) or once unpacked.
    connection = http.client.HTTPConnection(receiver.http.removeprefix("http://"), timeout=60)
    connection.putrequest("POST", "/v1/traces")
    connection.putheader("Content-Type", "application/x-protobuf")
    connection.putheader("Content-Length", str(LIMIT + 1))
    connection.endheaders()
    assert connection.getresponse().status == 413
    connection.close()
    bomb = gzip.compress(bytes(LIMIT + 1))
    assert post(receiver, bomb, **{"Content-Encoding": "gzip"})[0] == 413
    # gRPC: the same rules.
    assert grpc_export(receiver, request(GOOD, bad)).partial_success.rejected_spans == 1
    with pytest.raises(grpc.RpcError) as invalid:
        grpc_export(receiver, b"\xff\xff")
    assert invalid.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as too_large:
        grpc_export(receiver, bytes(LIMIT + 1))
    assert too_large.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    metrics = receiver.metrics()
    assert metrics["otel_prov_receiver_spans_rejected_total"] == 3
    assert metrics["otel_prov_receiver_spans_received_total"] == 3


def test_a_full_queue_is_refused_with_a_retry_delay_and_the_sdk_retries(
    receivers: Receivers, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    receiver = receivers.start(
        "--store", str(store), "--trace-idle", "6", env={"OTEL_PROV_MAX_PENDING_SPANS": "5"}
    )
    assert post(receiver, request(*[_span(i) for i in range(1, 7)]))[0] == 200
    status, headers, _ = post(receiver, request(GOOD))
    assert status == 429 and headers["retry-after"] == "2"
    with pytest.raises(grpc.RpcError) as refused:
        grpc_export(receiver, request(GOOD))
    assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
    trailing = dict(refused.value.trailing_metadata())  # type: ignore[attr-defined]
    assert RetryInfo.FromString(trailing["google.rpc.retryinfo-bin"]).retry_delay.seconds == 2
    details = Status.FromString(trailing["grpc-status-details-bin"]).details[0]
    assert details.Is(RetryInfo.DESCRIPTOR)
    # An SDK exporter refused the same way waits as told and sends again: nothing lost.
    sent = run_agent(
        "--protocol", "grpc", "--endpoint", receiver.grpc, env={"OTEL_EXPORTER_OTLP_TIMEOUT": "60"}
    )
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 1)
    # Refused: our two requests above, and the agent's at least once.
    assert receiver.metrics()["otel_prov_receiver_spans_refused_total"] >= 1 + 1 + SPANS
    assert receiver.stop() == 0
    assert [row["trace_id"] for row in sessions(store)] == sent["traces"]


def _span(number: int) -> Span:
    span = Span()
    span.CopyFrom(GOOD)
    span.span_id = number.to_bytes(8, "big")
    return span


def test_the_bearer_token_is_required_and_never_logged(
    receivers: Receivers, tmp_path: Path
) -> None:
    secret = "s3cr3t-token-value"
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    receiver = receivers.start("--store", str(tmp_path / "store"), "--token-file", str(token_file))
    assert post(receiver, request(GOOD))[0] == 401
    assert post(receiver, request(GOOD), Authorization="Bearer wrong")[0] == 401
    assert post(receiver, request(GOOD), Authorization=f"Bearer {secret}")[0] == 200
    with pytest.raises(grpc.RpcError) as refused:
        grpc_export(receiver, request(GOOD))
    assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED
    assert grpc_export(receiver, request(GOOD), (("authorization", f"Bearer {secret}"),))
    run_agent(
        "--protocol",
        "http",
        "--endpoint",
        receiver.http,
        env={"OTEL_EXPORTER_OTLP_HEADERS": f"authorization=Bearer%20{secret}"},
    )
    receiver.wait_for("otel_prov_receiver_spans_received_total", 2 + SPANS)
    assert healthz(receiver) == 200  # no token needed to ask
    assert receiver.stop() == 0
    assert secret not in receiver.log_text()


def test_a_retried_request_lets_the_journal_go_once_its_trace_is_stored(
    receivers: Receivers, tmp_path: Path
) -> None:
    """An exporter that timed out sends the same request again: the receiver journals it a
    second time, and that record too must be released once the trace is stored, whether
    the retry came before the trace was mapped or after (else it holds every later
    segment, and past the journal limit every request is refused)."""
    data = tmp_path / "data"
    receiver = receivers.start(
        "--store", str(tmp_path / "store"), "--data-dir", str(data), "--trace-idle", "0.5"
    )
    session = Span()
    session.CopyFrom(GOOD)
    session.attributes.add(key="gen_ai.operation.name").value.string_value = "invoke_agent"
    body = request(session)
    for mapped in (1, 2):
        assert post(receiver, body)[0] == 200
        assert post(receiver, body)[0] == 200  # the retry
        receiver.wait_for("otel_prov_receiver_traces_mapped_total", mapped)
        until(
            lambda: receiver.metrics()["otel_prov_receiver_journal_bytes"] == 0,
            "every record of the trace released",
            timeout=15,
        )
        assert list((data / "journal").glob("segment-*")) == []
    assert receiver.stop() == 0


def test_hostile_json_is_answered_400_or_partial_success_and_the_valid_spans_kept(
    receivers: Receivers, tmp_path: Path
) -> None:
    """Past Python's limits (int() of more than 4,300 digits, nesting past the recursion
    limit): the receiver names the problem, keeps what is valid, and stays up."""
    receiver = receivers.start("--store", str(tmp_path / "store"), "--trace-idle", "600")
    good = {
        "traceId": GOOD.trace_id.hex(),
        "spanId": GOOD.span_id.hex(),
        "name": "invoke_agent a",
        "startTimeUnixNano": "1000",
    }
    huge = {"key": "n", "value": {"intValue": "9" * 5000}}
    spans = [{**good, "attributes": [huge]}, {**good, "spanId": "1" * 16, "startTimeUnixNano": 0}]
    body = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    body = body.replace('"startTimeUnixNano": 0', '"startTimeUnixNano": ' + "1" * 5000)
    status, _, answer = post(receiver, body.encode(), "application/json")
    partial = json.loads(answer)["partialSuccess"]
    assert status == 200 and partial["rejectedSpans"] == "1"
    assert (
        "attribute 'n' has intValue of 5000 digits, out of the 64-bit range"
        in (partial["errorMessage"])
    )
    assert "startTimeUnixNano of 5000 digits" in partial["errorMessage"]
    status, _, answer = post(receiver, b"[" * 100_000 + b"]" * 100_000, "application/json")
    assert status == 400 and "nested too deep" in json.loads(answer)["message"]
    metrics = receiver.metrics()
    assert metrics["otel_prov_receiver_spans_received_total"] == 1
    assert metrics["otel_prov_receiver_spans_rejected_total"] == 1
    assert receiver.stop() == 0
    assert "Traceback" not in receiver.log_text()


def test_listening_beyond_this_machine_without_a_token_or_tls_is_warned_about(
    receivers: Receivers, tmp_path: Path
) -> None:
    """Anyone who can reach such a port can have forged sessions sealed (and they verify),
    and without TLS anyone on the path reads the spans and the token, as ``serve`` warns
    for the same reason; on the loopback, or with a token and TLS, nothing."""
    from tests.certificates import Authority

    store = ("--store", str(tmp_path / "store"))
    token_file = tmp_path / "token"
    token_file.write_text("s3cr3t\n")
    server = Authority(tmp_path / "ca").server()
    tls = ("--tls-cert", str(server.cert), "--tls-key", str(server.key))
    wide = receivers.start(*store, "--http", "0.0.0.0:0", "--data-dir", str(tmp_path / "a"))
    assert wide.stop() == 0
    token, plaintext = [line for line in wide.log_text().splitlines() if "WARNING" in line]
    assert "OTLP/HTTP listens on 0.0.0.0, beyond this machine, without a token" in token
    assert "--token-file" in token
    assert "OTLP/HTTP listens on 0.0.0.0, beyond this machine, without TLS" in plaintext
    assert "--tls-cert and --tls-key" in plaintext
    for args in (
        ("--grpc", "0.0.0.0:0", "--token-file", str(token_file), *tls),
        (),  # the loopback
    ):
        quiet = receivers.start(*store, *args, "--data-dir", str(tmp_path / f"d{len(args)}"))
        assert quiet.stop() == 0
        assert "WARNING" not in quiet.log_text()


_HOLD_A_PORT = """
import socket, sys, time
held = socket.socket()
held.bind((sys.argv[1], 0))
held.listen()
print(held.getsockname()[1], flush=True)
time.sleep(120)
"""
"""Another program on the port, as a Collector or Phoenix on 4317 and 4318 (Phoenix's
gRPC receiver binds every interface)."""


@pytest.mark.parametrize("held_on", ["127.0.0.1", "0.0.0.0"])
@pytest.mark.parametrize("transport", ["grpc", "http"])
def test_a_port_another_process_holds_is_one_line_naming_it_and_what_to_do(
    transport: str, held_on: str, tmp_path: Path
) -> None:
    """Not grpcio's ``RuntimeError`` traceback: the same clear line for both transports,
    with the reason, exit 2, and nothing journaled or stored."""
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_A_PORT, held_on], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None
        port = int(holder.stdout.readline())
        other = "http" if transport == "grpc" else "grpc"
        done = run_cli(
            "receive",
            f"--{transport}",
            f"127.0.0.1:{port}",
            f"--{other}",
            "off",
            "--data-dir",
            str(tmp_path / "data"),
            "--store",
            str(tmp_path / "store"),
        )
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    name = "OTLP/gRPC" if transport == "grpc" else "OTLP/HTTP"
    assert last.startswith(f"otel-prov: {name} cannot listen on 127.0.0.1:{port}: "), last
    assert "address already in use" in last.lower()
    assert f"--{transport} HOST:PORT" in last and f"--{transport} off" in last


@pytest.mark.parametrize("protocol", ["grpc", "http"])
def test_a_value_nested_too_deep_to_parse_costs_no_run_of_its_request(
    receivers: Receivers, tmp_path: Path, protocol: str
) -> None:
    """A tool result over the blob threshold nested deeper than Python parses JSON (a page
    fetched from a hostile site): the request is taken, both its runs are stored, and the
    value kept whole as a text blob.  Before, the blob store's JSON check raised: HTTP 500,
    gRPC UNKNOWN (which OTLP senders do not retry), and every run of the request lost."""
    store = tmp_path / "store"
    receiver = receivers.start("--store", str(store), "--trace-idle", "0.3")
    deep = "[" * 40_000 + "]" * 40_000
    runs = []
    for trace in (0xD1, 0xD2):
        result = deep if trace == 0xD1 else "fine"
        runs += [
            make_span(
                1, trace_id=trace, name="invoke_agent a", gen_ai__operation__name="invoke_agent"
            ),
            make_span(
                2,
                1,
                trace_id=trace,
                name="execute_tool fetch",
                gen_ai__operation__name="execute_tool",
                gen_ai__tool__name="fetch",
                gen_ai__tool__call__result=result,
            ),
        ]
    body = encode_request(runs).SerializeToString()
    if protocol == "grpc":
        assert not grpc_export(receiver, body).HasField("partial_success")
    else:
        assert post(receiver, body)[0] == 200
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 2)
    assert receiver.stop() == 0
    assert sorted((row["trace_id"], row["tool_calls"]) for row in sessions(store)) == [
        (f"{0xD1:032x}", 1),
        (f"{0xD2:032x}", 1),
    ]
    found = run_cli(
        "query",
        "--store",
        str(store),
        "--format",
        "json",
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
        "SELECT ?type ?size WHERE { ?o oprov:mediaType ?type ; oprov:byteSize ?size }",
    )
    assert json.loads(found.stdout) == [{"type": "text/plain; charset=utf-8", "size": len(deep)}]
    assert "Traceback" not in receiver.log_text()
