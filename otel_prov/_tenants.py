"""Tenants: who sends and reads which runs, from a tenants file (``--tenants FILE`` of
``receive`` and ``serve``, ``OTEL_PROV_TENANTS``).

Each tenant's runs go to a named graph of its own (:func:`tenant_graph`).  The file is
JSON, an object per tenant::

    {"tenants": {
      "team-a": {"tokens": ["<a bearer token>"], "users": ["alice@example.org"],
                 "subjects": ["CN=team-a,O=Example"], "reads": ["team-a", "shared"]},
      "shared": {"tokens": ["<another>"]}}}

``tokens`` send as the tenant (``receive``) and read (``serve``); ``subjects`` are the
subjects of client certificates that do the same under mutual TLS (``--client-ca``),
without a token (a token sent decides); ``users`` are names an authenticating proxy
gives ``serve``; ``reads`` are the tenants these may read (default: itself).
A reader that must read several teams and write none is a tenant of its own with
``reads`` naming them.  Tokens are compared by their SHA-256, and never shown.

**Changes.**  The file is read again when it changes (its modification time, size or
inode, looked at no more than once a second, on a request) and on :meth:`Tenants.reload`
(``SIGHUP``): a token taken out stops working within a second, everywhere it was asked
about.  A new file that is not valid is refused whole, logged, and the tenants read
before stay.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from otel_prov._tls import canonical_subject
from otel_prov._tokens import token_digest

__all__ = ["Tenant", "Tenants", "tenant_graph"]

_logger = logging.getLogger(__name__)

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
_CHECK_INTERVAL_S = 1.0
"""How often a request may look at the file for a change."""


def tenant_graph(base: str, tenant: str) -> str:
    """The named graph (an IRI) of ``tenant``'s runs, under the graph ``base``."""
    return f"{base}/tenants/{check_name(tenant)}"


def check_name(tenant: str) -> str:
    """``tenant`` when it is a tenant's name (lower case letters, digits, ``-``, ``_``),
    else ``ValueError``: it goes into an IRI."""
    if not _NAME.fullmatch(tenant):
        raise ValueError(
            f"a tenant's name is lower case letters, digits, '-' and '_' (at most 63), "
            f"not {tenant!r}"
        )
    return tenant


@dataclass(frozen=True)
class Tenant:
    name: str
    reads: tuple[str, ...]
    """The tenants it may read, itself first when it is among them."""


@dataclass(frozen=True)
class _Table:
    """What one version of the file says."""

    tenants: Mapping[str, Tenant]
    by_token: Mapping[bytes, str]
    by_user: Mapping[str, str]
    by_subject: Mapping[str, str]


def _stamp(path: Path) -> tuple[int, int, int, int] | None:
    """What tells a change of the file (None: it cannot be looked at)."""
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size, found.st_ino, found.st_dev


def _read(path: Path) -> _Table:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"cannot read the tenants file {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ValueError(f"the tenants file {path} is not JSON: {exc}") from exc
    try:
        return _table(data.get("tenants") if isinstance(data, dict) else None)
    except ValueError as exc:
        raise ValueError(f"the tenants file {path}: {exc}") from exc


class Tenants:
    """The tenants of a file, and which token, certificate subject or proxy user stands
    for which; read again when the file changes (see the module documentation)."""

    def __init__(self, table: _Table, path: Path | None = None) -> None:
        self._table = table
        self._path = path
        self._stamp = None if path is None else _stamp(path)
        self._checked = time.monotonic()
        self._lock = threading.Lock()

    @classmethod
    def read(cls, path: Path) -> Tenants:
        """``ValueError`` naming the file and what is wrong with it."""
        stamp = _stamp(path)
        tenants = cls(_read(path), path)
        tenants._stamp = stamp  # a change while it was read is read at the next look
        return tenants

    @classmethod
    def of(cls, table: object) -> Tenants:
        return cls(_table(table))

    def reload(self) -> bool:
        """Read the file again now (``SIGHUP``); ``False`` when the new one is refused
        (logged) and the tenants read before stay."""
        if self._path is None:
            return True
        with self._lock:
            return self._reload(self._path, _stamp(self._path))

    def _current(self) -> _Table:
        """The table, after a look at the file when the last one is a second old."""
        if self._path is not None and time.monotonic() - self._checked >= _CHECK_INTERVAL_S:
            with self._lock:
                if time.monotonic() - self._checked >= _CHECK_INTERVAL_S:
                    stamp = _stamp(self._path)
                    if stamp != self._stamp:
                        self._reload(self._path, stamp)
        return self._table

    def _reload(self, path: Path, stamp: tuple[int, int, int, int] | None) -> bool:
        """Under the lock."""
        self._checked, self._stamp = time.monotonic(), stamp
        try:
            table = _read(path)
        except ValueError as exc:
            _logger.error("%s; keeping the tenants read before", exc)
            return False
        before = self._table
        self._table = table
        _logger.warning(
            "the tenants file %s is read again: %d tenant(s) (%s), %d token(s) taken out, %d new",
            path,
            len(table.tenants),
            ", ".join(table.tenants),
            len(before.by_token.keys() - table.by_token.keys()),
            len(table.by_token.keys() - before.by_token.keys()),
        )
        return True

    @property
    def tenants(self) -> Mapping[str, Tenant]:
        return self._current().tenants

    def by_token(self, token: str) -> Tenant | None:
        """The tenant ``token`` stands for (None: none)."""
        table = self._current()
        name = table.by_token.get(token_digest(token)) if token.strip() else None
        return None if name is None else table.tenants[name]

    def by_user(self, user: str) -> Tenant | None:
        table = self._current()
        name = table.by_user.get(user)
        return None if name is None else table.tenants[name]

    def by_subject(self, subject: str) -> Tenant | None:
        """The tenant a client certificate of ``subject`` (as :func:`canonical_subject`
        spells it) stands for (None: none)."""
        table = self._current()
        name = table.by_subject.get(subject)
        return None if name is None else table.tenants[name]

    @property
    def has_subjects(self) -> bool:
        """Does a client certificate stand for any tenant?"""
        return bool(self._current().by_subject)

    def subjects(self) -> dict[str, str]:
        """Each subject (:func:`canonical_subject`): its tenant."""
        return dict(self._current().by_subject)

    def tokens(self) -> dict[bytes, str]:
        """SHA-256 of each token: its tenant."""
        return dict(self._current().by_token)

    def __repr__(self) -> str:
        return f"Tenants({', '.join(self.tenants)})"


def _table(table: object) -> _Table:
    if not isinstance(table, dict) or not table:
        raise ValueError('it needs {"tenants": {"NAME": {...}, ...}}, an object per tenant')
    tenants: dict[str, Tenant] = {}
    by_token: dict[bytes, str] = {}
    by_user: dict[str, str] = {}
    by_subject: dict[str, str] = {}
    for name, entry in table.items():
        check_name(name)
        if not isinstance(entry, dict):
            raise ValueError(f"tenants.{name} must be an object")
        tokens, users = _strings(entry, name, "tokens"), _strings(entry, name, "users")
        reads = _strings(entry, name, "reads") if "reads" in entry else [name]
        for token in tokens:
            if not token.strip() or any(c.isspace() for c in token.strip()):
                raise ValueError(f"tenants.{name}: a token must be one word, not empty")
            if by_token.setdefault(token_digest(token), name) != name:
                raise ValueError(f"tenants.{name}: a token of another tenant too")
        for user in users:
            if by_user.setdefault(user, name) != name:
                raise ValueError(f"tenants.{name}: user {user!r} is another tenant's too")
        for subject in _strings(entry, name, "subjects"):
            try:
                canonical = canonical_subject(subject)
            except ValueError as exc:
                raise ValueError(f"tenants.{name}.subjects: {exc}") from exc
            if by_subject.setdefault(canonical, name) != name:
                raise ValueError(f"tenants.{name}: subject {subject!r} is another tenant's too")
        ordered = sorted(set(reads), key=lambda t: (t != name, t))
        tenants[name] = Tenant(name, tuple(ordered))
    for tenant in tenants.values():
        unknown = [t for t in tenant.reads if t not in tenants]
        if unknown:
            raise ValueError(f"tenants.{tenant.name} reads {unknown[0]!r}, no tenant here")
    return _Table(tenants, by_token, by_user, by_subject)


def _strings(entry: Mapping[str, object], name: str, key: str) -> list[str]:
    value = entry.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"tenants.{name}.{key} must be a list of strings")
    return list(value)
