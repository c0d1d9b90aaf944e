"""``/metrics`` of a receiver with tenants names them, so it needs a token: the metrics
token (``--metrics-token-file``, every tenant's samples), or a tenant's own (its samples
only).  Without a tenants file it stays open unless a metrics token is given."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

from tests.receiver import Receiver, Receivers


def _metrics(receiver: Receiver, token: str | None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    sent = urllib.request.Request(f"{receiver.http}/metrics", headers=headers)
    try:
        with urllib.request.urlopen(sent, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_metrics_of_tenants_need_a_token_and_show_a_tenant_its_own(
    receivers: Receivers, tmp_path: Path
) -> None:
    tenants = tmp_path / "tenants.json"
    tenants.write_text(
        json.dumps({"tenants": {"team-a": {"tokens": ["ta"]}, "team-b": {"tokens": ["tb"]}}})
    )
    (tmp_path / "metrics-token").write_text("scraper\n")
    receiver = receivers.start(
        "--store", str(tmp_path / "store"), "--tenants", str(tenants),
        "--metrics-token-file", str(tmp_path / "metrics-token"),
    )  # fmt: skip
    status, text = _metrics(receiver, None)
    assert status == 401 and "team-" not in text
    assert _metrics(receiver, "wrong")[0] == 401
    status, text = _metrics(receiver, "scraper")
    assert status == 200 and 'tenant="team-a"' in text and 'tenant="team-b"' in text
    status, text = _metrics(receiver, "ta")
    assert status == 200 and 'tenant="team-a"' in text and "team-b" not in text
    assert receiver.stop() == 0
    assert "scraper" not in receiver.log_text()


def test_metrics_without_tenants_are_open_unless_a_metrics_token_is_given(
    receivers: Receivers, tmp_path: Path
) -> None:
    plain = receivers.start("--store", str(tmp_path / "one"))
    assert _metrics(plain, None)[0] == 200
    (tmp_path / "metrics-token").write_text("scraper")
    guarded = receivers.start(
        "--store", str(tmp_path / "two"), "--data-dir", str(tmp_path / "two-journal"),
        env={"OTEL_PROV_RECEIVER_METRICS_TOKEN": "scraper"},
    )  # fmt: skip
    assert _metrics(guarded, None)[0] == 401
    assert _metrics(guarded, "scraper")[0] == 200
