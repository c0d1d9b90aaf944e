"""Hostile audit packages (issue 38 point 10): ``verify --package`` of a file made to hurt
the checker exits 2 with one line naming what is wrong, and never holds what a zip bomb
inflates to.  Before, a deeply nested ``manifest.json`` gave a ``RecursionError``
traceback, a damaged deflate stream a ``zlib.error`` one (both exit 1), and a 1 MiB zip
bomb took 2 GiB of memory."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from otel_prov.read import _package_zip
from otel_prov.read._package import PACKAGE_FORM, PackageError, check_package
from otel_prov.read._package_zip import MAX_JSON_DEPTH, json_depth, load_json
from tests.cli import CLI, run_cli

PEAK_BOUND_KB = 200_000
"""What ``verify --package`` of the bomb may take at its peak (the interpreter and its
imports take about 80 MB of it)."""


def _zip(members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", method) as package:
        for name, data in members.items():
            package.writestr(name, data)
    return out.getvalue()


def _manifest(**extra: object) -> bytes:
    fields: dict[str, object] = {
        "package": PACKAGE_FORM,
        "runs": [],
        "entries": [],
        "checkpoints": [],
        "tombstones": [],
        "files": {},
    }
    return json.dumps({**fields, **extra}).encode()


def _verify(path: Path) -> tuple[int, list[str], str]:
    done = run_cli("verify", "--package", str(path))
    return done.returncode, done.stderr.strip().splitlines(), done.stdout


def _bomb(path: Path, inflated: int = 1 << 30) -> Path:
    """A zip of about 1 MiB whose one member inflates to ``inflated`` bytes of zeros,
    written in pieces (never held whole here either)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package:
        package.writestr("manifest.json", _manifest())
        with package.open("runs/1.nt", "w", force_zip64=True) as member:
            zeros = bytes(1 << 20)
            for _ in range(inflated >> 20):
                member.write(zeros)
    return path


def test_a_manifest_nested_a_million_deep_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "deep.zip"
    nested = b"[" * 1_000_000 + b"]" * 1_000_000  # stored: deflated, it is a zip bomb
    path.write_bytes(_zip({"manifest.json": nested}, zipfile.ZIP_STORED))
    code, errors, _ = _verify(path)
    assert code == 2
    assert errors == [
        f"otel-prov: {path}: not an audit package: its manifest is unreadable (JSON nested "
        f"1,000,000 deep, more than {MAX_JSON_DEPTH})"
    ]


def test_a_damaged_deflate_stream_is_one_line(tmp_path: Path) -> None:
    data = bytearray(_zip({"manifest.json": _manifest() + b" " * 5000}))
    start = data.index(b"manifest.json") + len("manifest.json")  # the local header's name
    for offset in range(start + 4, start + 40):
        data[offset] ^= 0xFF
    path = tmp_path / "damaged.zip"
    path.write_bytes(bytes(data))
    code, errors, _ = _verify(path)
    assert code == 2, errors
    assert len(errors) == 1 and errors[0].startswith(
        f"otel-prov: {path}: not an audit package (a zip file): "
    ), errors
    assert "Traceback" not in "\n".join(errors)


def test_a_zip_bomb_is_refused_in_little_memory(tmp_path: Path) -> None:
    """A 1 MiB zip inflating to 1 GiB, checked in a process of its own whose peak memory
    (``ru_maxrss`` of the command, read by its parent) stays under the bound."""
    bomb = _bomb(tmp_path / "bomb.zip")
    assert bomb.stat().st_size < 1_200_000
    measure = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(done.returncode, peak, done.stderr.strip(), sep='\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", measure, *CLI, "verify", "--package", str(bomb)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    code, peak, *errors = done.stdout.strip().splitlines()
    assert int(code) == 2, errors
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"otel-prov: {bomb}: not an audit package: runs/1.nt inflates ")
    assert errors[0].endswith("bytes to 1,073,741,824), more than 200 (a zip bomb)"), errors
    assert int(peak) < PEAK_BOUND_KB, f"peak {int(peak) / 1024:.0f} MiB"


def test_a_bomb_that_lies_about_its_size_is_stopped_as_it_inflates() -> None:
    """A member that declares 100 bytes and inflates to 64 MiB: read in chunks and
    stopped at what it declared (the zip's own check of its size and CRC then fails)."""
    data = bytearray(_zip({"manifest.json": _manifest(), "runs/1.nt": bytes(64 << 20)}))
    # The central directory entry of runs/1.nt (the last): its uncompressed size field.
    entry = data.rindex(b"PK\x01\x02")
    assert data[entry + 46 : entry + 55] == b"runs/1.nt"
    data[entry + 24 : entry + 28] = (100).to_bytes(4, "little")
    with pytest.raises(PackageError, match="not an audit package"):
        check_package(bytes(data))


@pytest.mark.parametrize("zip64", [False, True])
def test_too_many_members_are_refused_before_the_zip_is_read(
    monkeypatch: pytest.MonkeyPatch, zip64: bool
) -> None:
    """From the count the zip's end record declares (zip64's too), before ``zipfile``
    makes an object of each entry."""
    monkeypatch.setattr(_package_zip, "MAX_MEMBERS", 3)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        for index in range(5):
            package.writestr(f"runs/{index}.nt", b"x")
    data = out.getvalue()
    if zip64:  # the same directory, declared through a zip64 end record
        end = data.rindex(b"PK\x05\x06")
        count, size, offset = 5, int.from_bytes(data[end + 12 : end + 16], "little"), end
        start = int.from_bytes(data[end + 16 : end + 20], "little")
        record = (
            b"PK\x06\x06" + (44).to_bytes(8, "little") + bytes(4) + bytes(8)
            + count.to_bytes(8, "little") * 2 + size.to_bytes(8, "little")
            + start.to_bytes(8, "little")
        )  # fmt: skip
        locator = (
            b"PK\x06\x07" + bytes(4) + offset.to_bytes(8, "little") + (1).to_bytes(4, "little")
        )
        tail = b"PK\x05\x06" + bytes(4) + b"\xff\xff" * 2 + b"\xff" * 8 + bytes(2)
        data = data[:end] + record + locator + tail
    with pytest.raises(PackageError, match="it holds 5 files, more than 3"):
        check_package(data)


def test_too_many_members_or_one_twice_are_refused() -> None:
    twice = io.BytesIO()
    with zipfile.ZipFile(twice, "w") as package:
        package.writestr("manifest.json", _manifest())
        with pytest.warns(UserWarning, match="Duplicate name"):
            package.writestr("manifest.json", _manifest(runs=[{"run": "x"}]))
    with pytest.raises(PackageError, match=r"manifest\.json is in it twice"):
        check_package(twice.getvalue())


@pytest.mark.parametrize("name", ["chains/c/1.json", "tombstones/c/1.json"])
def test_a_deeply_nested_entry_or_tombstone_is_a_finding_not_a_traceback(name: str) -> None:
    deep = b"{" + b'"a":[' * 100_000 + b"1" + b"]" * 100_000 + b"}"
    manifest = _manifest(
        entries=[{"file": "chains/c/1.json"}],
        tombstones=[{"tombstone": "urn:t", "content": "tombstones/c/1.json"}],
    )
    checked = check_package(_zip({"manifest.json": manifest, name: deep}, zipfile.ZIP_STORED))
    assert not all(check.ok for check in checked.checks)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
_PARTS = st.fixed_dictionaries(
    {
        "package": st.sampled_from([PACKAGE_FORM, "x"]),
        "runs": _JSON,
        "entries": _JSON,
        "checkpoints": _JSON,
        "tombstones": _JSON,
        "files": _JSON,
        "key": _JSON,
    }
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    manifest=_PARTS | _JSON,
    members=st.dictionaries(
        st.sampled_from(["chains/c/1.json", "chains/c/1.sig", "runs/1.nt", "manifest.sig", "x"]),
        st.binary(max_size=64) | _JSON.map(lambda v: json.dumps(v).encode()),
        max_size=4,
    ),
)
def test_any_manifest_and_members_are_checked_or_refused_never_raised(
    manifest: object, members: dict[str, bytes]
) -> None:
    try:
        check_package(_zip({"manifest.json": json.dumps(manifest).encode(), **members}))
    except PackageError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=400), flips=st.lists(st.integers(0, 10_000), max_size=8))
def test_any_bytes_or_damaged_zip_are_refused_with_one_line(data: bytes, flips: list[int]) -> None:
    damaged = bytearray(_zip({"manifest.json": _manifest(), "runs/1.nt": data}))
    for flip in flips:
        damaged[flip % len(damaged)] ^= 0x5A
    for candidate in (bytes(damaged), data):
        try:
            check_package(candidate)
        except PackageError as exc:
            assert "\n" not in str(exc)


@given(value=_JSON, strings=st.text(alphabet='[]{}"\\ab', max_size=30))
def test_json_depth_counts_what_the_parser_would_recurse(value: object, strings: str) -> None:
    """Brackets inside strings (escaped quotes too) are no nesting."""
    text = json.dumps({"s": strings, "v": value}).encode()

    def depth(item: object) -> int:
        if isinstance(item, list):
            return 1 + max((depth(i) for i in item), default=0)
        if isinstance(item, dict):
            return 1 + max((depth(i) for i in item.values()), default=0)
        return 0

    assert json_depth(text) == 1 + depth(value)
    assert load_json(text) == json.loads(text)
