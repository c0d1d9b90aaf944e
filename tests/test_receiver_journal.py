"""The receiver's journal: what a restart replays, and when segments go."""

from __future__ import annotations

import errno
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_prov.ingest.receiver._journal import (
    DONE,
    JSON,
    PROTOBUF,
    Journal,
    _encode,
    done_pairs,
    read_segment,
)
from tests.small_disk import fill, small_tmpfs

A, B = 0xA1, 0xB2


def segments(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.glob("segment-*"))


def replayed(directory: Path) -> list[tuple[bytes, set[int]]]:
    """(payload, traces done up to it) of each request record a restart would see, read
    from the files (the journal writing them may still be open)."""
    records = [r for path in sorted(directory.glob("segment-*")) for r in read_segment(path)]
    done: dict[int, int] = {}
    for record in records:
        if record.kind == DONE:
            for trace, upto in done_pairs(record.payload):
                done[trace] = max(done.get(trace, 0), upto)
    return [
        (r.payload, {t for t, upto in done.items() if upto >= r.sequence})
        for r in records
        if r.kind != DONE
    ]


def crash(directory: Path, work: Callable[[Journal], object], *, fsync: bool = False) -> None:
    """``work`` on a journal in a child process that then dies without closing it."""
    pid = os.fork()
    if pid == 0:
        try:
            work(Journal(directory, fsync=fsync))
        finally:
            os._exit(0)
    assert os.waitpid(pid, 0)[1] == 0


@pytest.mark.parametrize("fsync", [True, False])
def test_what_is_not_done_is_replayed_and_done_traces_are_marked(
    tmp_path: Path, fsync: bool
) -> None:
    def work(journal: Journal) -> None:
        first = journal.append(PROTOBUF, b"one", [A, B])
        journal.sync(first)
        second = journal.append(JSON, b"two", [A])
        journal.sync(second)
        journal.done([(A, first)])  # A's spans of the first request are stored, not the second's

    crash(tmp_path, work, fsync=fsync)
    done, replayed = Journal(tmp_path, fsync=fsync).replay()
    records = list(replayed)
    assert [(r.kind, r.payload) for r in records] == [(PROTOBUF, b"one"), (JSON, b"two")]
    assert done == {A: records[0].sequence}


def test_a_segment_goes_once_every_trace_in_it_is_done(tmp_path: Path) -> None:
    journal = Journal(tmp_path, fsync=True)
    sequence = journal.append(PROTOBUF, b"one", [A, B])
    journal.done([(A, sequence)])
    assert len(segments(tmp_path)) == 1
    later = journal.append(PROTOBUF, b"more of A", [A])
    journal.done([(B, sequence), (A, sequence)])  # A only up to the first request
    assert len(segments(tmp_path)) == 1 and replayed(tmp_path) == [
        (b"one", {A, B}),
        (b"more of A", set()),
    ]
    journal.done([(A, later)])
    assert segments(tmp_path) == [] and journal.size_bytes == 0


def test_segments_go_oldest_first_so_a_done_marker_outlives_the_spans_it_covers(
    tmp_path: Path,
) -> None:
    journal = Journal(tmp_path, fsync=False, segment_bytes=1)  # a segment per record
    old = journal.append(PROTOBUF, b"A, open for long", [A])
    new = journal.append(PROTOBUF, b"B", [B])
    journal.done([(B, new)])
    assert len(segments(tmp_path)) == 3  # B's segment and its marker stay behind A's
    assert replayed(tmp_path) == [(b"A, open for long", {B}), (b"B", {B})]  # A not done
    journal.done([(A, old)])
    assert segments(tmp_path) == []


def test_a_restart_holds_replayed_records_until_their_traces_are_done(tmp_path: Path) -> None:
    crash(tmp_path, lambda j: (j.append(PROTOBUF, b"one", [A]), j.append(PROTOBUF, b"two", [B])))
    restarted = Journal(tmp_path, fsync=False)
    numbers = {}
    done, records = restarted.replay()
    assert done == {}
    for record in records:
        restarted.hold(record.sequence, [A] if record.payload == b"one" else [B])
        numbers[record.payload] = record.sequence
    restarted.done([(A, numbers[b"one"])])
    assert len(segments(tmp_path)) == 2  # the old segment (B) and the new one (the marker)
    after = restarted.append(PROTOBUF, b"three", [A])
    assert after > max(numbers.values())  # numbering goes on across restarts
    restarted.done([(B, numbers[b"two"]), (A, after)])
    assert segments(tmp_path) == []


def test_a_record_cut_by_a_crash_is_left_out_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = Journal(tmp_path, fsync=False)
    journal.append(PROTOBUF, b"acknowledged", [A])
    journal.append(PROTOBUF, b"being written when the process died", [B])
    (path,) = tmp_path.glob("segment-*")
    path.write_bytes(path.read_bytes()[:-5])
    with caplog.at_level(logging.WARNING):
        assert replayed(tmp_path) == [(b"acknowledged", set())]
    assert "that are no intact record left out" in caplog.text


def test_replay_reads_past_a_torn_record_to_the_intact_ones_after_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A record torn in the middle of a segment (a write the disk refused halfway, by a
    journal that then went on appending) costs that record only: the ones after it were
    acknowledged."""
    journal = Journal(tmp_path, fsync=False)
    journal.append(PROTOBUF, b"before", [A])
    (path,) = tmp_path.glob("segment-*")
    with path.open("ab") as segment:
        segment.write(_encode(PROTOBUF, 99, b"refused halfway by a full disk")[:-7])
    journal.append(PROTOBUF, b"acknowledged after", [B])
    journal.append(JSON, b"and after that", [A])
    with caplog.at_level(logging.WARNING):
        assert [r.payload for r in read_segment(path)] == [
            b"before",
            b"acknowledged after",
            b"and after that",
        ]
    assert "left out" in caplog.text


def test_a_changed_byte_fails_the_checksum(tmp_path: Path) -> None:
    journal = Journal(tmp_path, fsync=False)
    journal.append(PROTOBUF, b"first", [A])
    journal.append(PROTOBUF, b"second", [B])
    (path,) = tmp_path.glob("segment-*")
    data = bytearray(path.read_bytes())
    data[-2] ^= 0x01
    path.write_bytes(bytes(data))
    assert [r.payload for r in read_segment(path)] == [b"first"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=8), st.data())
def test_any_cut_replays_a_prefix_of_what_was_written(
    payloads: list[bytes], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as name:
        directory = Path(name)
        journal = Journal(directory, fsync=False)
        for payload in payloads:
            journal.append(PROTOBUF, payload, [A])
        (path,) = directory.glob("segment-*")
        whole = path.read_bytes()
        path.write_bytes(whole[: data.draw(st.integers(0, len(whole)))])
        read = [record.payload for record in read_segment(path, report=False)]
        assert read == payloads[: len(read)]


def test_two_journals_cannot_share_a_directory(tmp_path: Path) -> None:
    first = Journal(tmp_path, fsync=False)
    with pytest.raises(OSError, match="in use by another receiver"):
        Journal(tmp_path, fsync=False)
    first.close()
    Journal(tmp_path, fsync=False).close()


def test_on_a_full_disk_an_append_fails_and_leaves_the_segment_as_it_was(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with small_tmpfs(tmp_path / "disk", "1m") as disk:
        journal = Journal(disk / "journal", fsync=True)
        journal.sync(journal.append(PROTOBUF, b"acknowledged", [A]))
        (path,) = (disk / "journal").glob("segment-*")
        before = path.read_bytes()
        filler = fill(disk)
        with pytest.raises(OSError) as refused:
            journal.append(PROTOBUF, bytes(64 << 10), [B])  # more than any page left
        assert refused.value.errno == errno.ENOSPC
        assert path.read_bytes() == before
        filler.unlink()
        journal.sync(journal.append(JSON, b"acknowledged once space was back", [B]))
        journal.close()
        with caplog.at_level(logging.WARNING):
            _, records = Journal(disk / "journal", fsync=True).replay()
            assert [r.payload for r in records] == [
                b"acknowledged",
                b"acknowledged once space was back",
            ]
        assert "left out" not in caplog.text


def test_on_a_full_disk_done_traces_still_free_their_segments(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A done marker the disk refuses is only a marker lost (its traces would be mapped
    again after a crash, which stores nothing twice): the segments go all the same, which
    is what gives the space back."""
    with small_tmpfs(tmp_path / "disk", "1m") as disk:
        journal = Journal(disk / "journal", fsync=True, segment_bytes=1)  # a segment a record
        first = journal.append(PROTOBUF, b"A", [A])
        second = journal.append(PROTOBUF, b"B", [B])
        fill(disk)
        with caplog.at_level(logging.WARNING):
            journal.done([(A, first)])
            journal.done([(B, second)])
        assert segments(disk / "journal") == []
        assert caplog.text.count("cannot write a done marker") == 1  # once, not per marker
