"""A token taken out of the tenants file stops working in a running ``receive`` and
``serve``: when the file changes (looked at once a second at most) and on SIGHUP, which
reloads and never stops either.  Real processes, real signals."""

from __future__ import annotations

import http.client
import json
import os
import signal
import time
import urllib.parse
from pathlib import Path

import pyoxigraph

from tests.receiver import Receivers
from tests.serving import Served, serving
from tests.test_receive import post, request
from tests.test_tenants import _session_span
from tests.waiting import until

KEPT, TAKEN, SWAPPED = "token-kept-aaaa", "token-gone-bbbb", "token-new--cccc"
assert len(TAKEN) == len(SWAPPED)


def write_tenants(path: Path, *tokens: str, keep_stamp: bool = False) -> None:
    """team-a with ``tokens``; ``keep_stamp``: written in place with the modification
    time it had, so that only SIGHUP can tell the change (the sizes must agree)."""
    before = path.stat() if keep_stamp else None
    text = json.dumps(
        {"tenants": {"team-a": {"tokens": list(tokens)}, "team-b": {"tokens": ["b" * 12]}}}
    )
    with path.open("r+" if keep_stamp else "w", encoding="utf-8") as out:
        out.write(text)
        out.truncate()
    if before is not None:
        assert path.stat().st_size == before.st_size
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_receive_refuses_a_token_taken_out_when_the_file_changes_and_on_sighup(
    receivers: Receivers, tmp_path: Path
) -> None:
    tenants = tmp_path / "tenants.json"
    write_tenants(tenants, KEPT, TAKEN)
    receiver = receivers.start(
        *("--tenants", str(tenants), "--data-dir", str(tmp_path / "data")),
        *("--store", str(tmp_path / "store"), "--trace-idle", "0.3"),
    )
    body = request(_session_span("q"))

    def status(token: str) -> int:
        return post(receiver, body, authorization=f"Bearer {token}")[0]

    assert (status(KEPT), status(TAKEN)) == (200, 200)
    write_tenants(tenants, KEPT, SWAPPED)  # a new modification time: read within a second
    until(lambda: status(TAKEN) == 401, "the token taken out is refused", timeout=5)
    assert (status(KEPT), status(SWAPPED)) == (200, 200)
    # A change only SIGHUP tells: same size, inode and modification time.
    write_tenants(tenants, KEPT, TAKEN, keep_stamp=True)
    time.sleep(1.5)
    assert status(TAKEN) == 401  # not read again: nothing told it changed
    receiver.process.send_signal(signal.SIGHUP)
    until(lambda: status(TAKEN) == 200, "read again on SIGHUP", timeout=5)
    assert status(SWAPPED) == 401 and receiver.process.poll() is None
    # A bad file is refused whole: the tenants read before stay.
    tenants.write_text('{"tenants": {"team-a": {"tokens": "not a list"}}}')
    receiver.process.send_signal(signal.SIGHUP)
    until(lambda: "keeping the tenants read before" in receiver.log_text(), "the refusal logged")
    assert (status(KEPT), status(TAKEN)) == (200, 200)
    assert receiver.stop() == 0  # SIGTERM still drains
    log = receiver.log_text()
    assert "Traceback" not in log
    assert not any(token in log for token in (KEPT, TAKEN, SWAPPED))


def _login(served: Served, token: str) -> str:
    """POST /login: the cookie it sets."""
    connection = http.client.HTTPConnection(urllib.parse.urlsplit(served.url).netloc, timeout=30)
    connection.request(
        "POST",
        "/login",
        body=urllib.parse.urlencode({"token": token, "next": "/"}),
        headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": served.url},
    )
    answer = connection.getresponse()
    answer.read()
    assert answer.status == 303, answer.status
    cookie = answer.getheader("set-cookie") or ""
    return cookie.split(";", 1)[0]


def _page(served: Served, *, cookie: str = "", token: str = "") -> int:
    connection = http.client.HTTPConnection(urllib.parse.urlsplit(served.url).netloc, timeout=30)
    headers = {"Accept": "text/html"}
    if cookie:
        headers["Cookie"] = cookie
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection.request("GET", "/", headers=headers)
    answer = connection.getresponse()
    answer.read()
    return answer.status


def test_serve_ends_the_logins_of_a_token_taken_out_and_reloads_on_sighup(
    tmp_path: Path,
) -> None:
    tenants = tmp_path / "tenants.json"
    write_tenants(tenants, KEPT, TAKEN)
    store = tmp_path / "store"
    pyoxigraph.Store(str(store)).flush()
    with serving("--store", str(store), "--tenants", str(tenants)) as served:
        kept, taken = _login(served, KEPT), _login(served, TAKEN)
        assert (_page(served, cookie=kept), _page(served, cookie=taken)) == (200, 200)
        write_tenants(tenants, KEPT, SWAPPED)
        until(lambda: _page(served, cookie=taken) == 303, "the login of the token taken out ends")
        assert _page(served, token=TAKEN) == 303  # sent to /login: no reader's token
        assert (_page(served, cookie=kept), _page(served, token=SWAPPED)) == (200, 200)
        # Putting the token back does not bring its old login back: it ended.
        write_tenants(tenants, KEPT, TAKEN, keep_stamp=True)
        served.process.send_signal(signal.SIGHUP)
        until(lambda: _page(served, token=TAKEN) == 200, "read again on SIGHUP", timeout=5)
        assert _page(served, cookie=taken) == 303
        assert served.process.poll() is None
        tenants.write_text("not json")
        served.process.send_signal(signal.SIGHUP)
        until(lambda: "keeping the tenants read before" in served.stderr(), "the refusal logged")
        assert _page(served, cookie=kept) == 200 and served.process.poll() is None
        log = served.stderr()
        assert "Traceback" not in log
        assert not any(token in log for token in (KEPT, TAKEN, SWAPPED))
