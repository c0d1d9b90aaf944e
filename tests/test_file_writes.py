"""Files written where a user names them (issue 38 point 11): ``audit-export --out`` and
``keygen`` write atomically, replace nothing without ``--force`` (``keygen`` never), never
write through a symbolic link, and give what they write the mode its content deserves;
a signing key others can read is used with a warning.  Real files, links and modes, the
commands run as a user runs them."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import otel_prov
from otel_prov._signing import KeySigner
from otel_prov.demo import run_demo_agent
from tests.cli import CLI, run_cli


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Keys and a store of one run signed with them."""
    root = tmp_path_factory.mktemp("writes")
    assert run_cli("keygen", "--out", str(root / "keys")).returncode == 0
    handle = otel_prov.configure(
        store=root / "store",
        set_global=False,
        wal_dir=root / "wal",
        signing_key=root / "keys" / "signing.key",
    )
    run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id="c0")
    handle.shutdown()
    return root


def _export(root: Path, out: Path, *extra: str, key: Path | None = None) -> tuple[int, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_PROV_")}
    environment["OTEL_PROV_SIGNING_KEY"] = str(key or root / "keys" / "signing.key")
    done = subprocess.run(
        [*CLI, "audit-export", "--all", "--store", str(root / "store"), "--out", str(out), *extra],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
    )
    return done.returncode, done.stdout + done.stderr


def _leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".tmp"))


def test_out_onto_the_signing_key_is_refused_and_the_key_kept(written: Path) -> None:
    key = written / "keys" / "signing.key"
    before = key.read_bytes()
    code, out = _export(written, key)
    assert code == 2, out
    assert out.strip().splitlines() == [f"otel-prov: {key} exists: give --force to replace it"]
    assert key.read_bytes() == before
    assert _leftovers(key.parent) == []


def test_a_new_package_is_the_owners_alone_and_force_replaces_a_file(
    written: Path, tmp_path: Path
) -> None:
    out = tmp_path / "audit.zip"
    code, said = _export(written, out)
    assert code == 0, said
    assert _mode(out) == 0o600  # the runs' content: prompts, answers, arguments
    out.write_bytes(b"an old report")
    out.chmod(0o644)
    code, said = _export(written, out)
    assert code == 2 and "exists: give --force" in said, said
    assert out.read_bytes() == b"an old report"
    code, said = _export(written, out, "--force")
    assert code == 0, said
    assert _mode(out) == 0o600 and out.read_bytes()[:2] == b"PK"
    checked = run_cli("verify", "--package", str(out))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("force", [False, True])
def test_a_symbolic_link_is_never_written_through(
    written: Path, tmp_path: Path, force: bool
) -> None:
    target = tmp_path / "precious.txt"
    target.write_bytes(b"keep me")
    link = tmp_path / "audit.zip"
    link.symlink_to(target)
    dangling = tmp_path / "dangling.zip"
    dangling.symlink_to(tmp_path / "nowhere" / "created.zip")
    for path in (link, dangling):
        code, said = _export(written, path, *(("--force",) if force else ()))
        assert code == 2, said
        assert "symbolic link" in said.strip().splitlines()[-1], said
        assert path.is_symlink()
    assert target.read_bytes() == b"keep me"
    assert not (tmp_path / "nowhere").exists()
    assert _leftovers(tmp_path) == []


def test_a_directory_is_refused_with_one_line(written: Path, tmp_path: Path) -> None:
    code, said = _export(written, tmp_path, "--force")
    assert code == 2, said
    assert said.strip().splitlines() == [
        f"otel-prov: cannot write {tmp_path}: it is not a regular file"
    ]


def test_keygen_replaces_nothing_and_writes_through_no_link(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    assert run_cli("keygen", "--out", str(keys)).returncode == 0
    assert _mode(keys / "signing.key") == 0o600 and _mode(keys / "signing.pub") == 0o644
    key = (keys / "signing.key").read_bytes()
    again = run_cli("keygen", "--out", str(keys))
    assert again.returncode == 2 and "keygen never replaces a key" in again.stderr
    assert (keys / "signing.key").read_bytes() == key
    other = tmp_path / "other"
    other.mkdir()
    target = tmp_path / "authorized.txt"
    target.write_bytes(b"keep me")
    (other / "signing.pub").symlink_to(target)
    linked = run_cli("keygen", "--out", str(other))
    assert linked.returncode == 2, linked.stderr
    assert "symbolic link" in linked.stderr and len(linked.stderr.strip().splitlines()) == 1
    assert target.read_bytes() == b"keep me"
    assert not (other / "signing.key").exists()  # nothing half written either


def test_a_key_others_can_read_is_used_with_one_warning(
    written: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    key = tmp_path / "shared.key"
    key.write_bytes((written / "keys" / "signing.key").read_bytes())
    key.chmod(0o640)
    with caplog.at_level(logging.WARNING, logger="otel_prov._signing"):
        KeySigner(key)
        KeySigner(key)
    warned = [r.getMessage() for r in caplog.records if "can be read by others" in r.getMessage()]
    assert warned == [
        f"the signing key {key} can be read by others (mode 0640): anyone who reads it can "
        f"sign as this writer; make it the owner's alone: chmod 600 {key}"
    ]
    caplog.clear()
    private = tmp_path / "private.key"
    private.write_bytes(key.read_bytes())
    private.chmod(0o600)
    with caplog.at_level(logging.WARNING, logger="otel_prov._signing"):
        KeySigner(private)
    assert not caplog.records
    code, said = _export(written, tmp_path / "audit.zip", key=key)  # still signs: a warning
    assert code == 0, said
    assert said.count("can be read by others") == 1, said


def test_a_write_that_fails_half_way_leaves_the_old_file_whole(tmp_path: Path) -> None:
    """A real failed write: a process whose file size limit (``RLIMIT_FSIZE``) stops the
    new file at 100 bytes, as a full disk would.  The old file stays as it was, and no
    temporary file is left."""
    path = tmp_path / "report.zip"
    path.write_bytes(b"old")
    script = (
        "import resource, signal, sys\n"
        "from pathlib import Path\n"
        "from otel_prov._files import write_file\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))\n"
        "try:\n"
        "    write_file(Path(sys.argv[1]), b'x' * 100_000, mode=0o600, replace=True)\n"
        "except OSError as exc:\n"
        "    print('failed:', exc.strerror)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "failed: File too large", done.stdout + done.stderr
    assert path.read_bytes() == b"old"
    assert _leftovers(tmp_path) == []
