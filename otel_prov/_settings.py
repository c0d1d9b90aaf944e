"""Reading settings the SDK way: keyword argument, else environment variable, else default.

A malformed variable is logged (naming the variable and the value expected) and the
default is used: configuration mistakes never crash the host application.
"""

from __future__ import annotations

import ipaddress
import logging
import os
from collections.abc import Callable
from typing import TypeVar

from otel_prov.environment_variables import OTEL_PROV_WAL_FSYNC

__all__ = [
    "env_bool",
    "env_choice",
    "env_float",
    "env_int",
    "env_str",
    "fsync_always",
    "is_loopback",
]

_logger = logging.getLogger(__name__)

T = TypeVar("T", int, float)

_TRUE = frozenset({"true", "1", "yes", "on"})
_FALSE = frozenset({"false", "0", "no", "off"})


def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or default


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    _logger.warning("%s=%r is not a boolean (true/false); using %s", name, value, default)
    return default


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """One of ``choices`` (case-insensitive); anything else is logged and the default used."""
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in choices:
        return value
    _logger.warning("%s=%r is not one of %s; using %s", name, value, "/".join(choices), default)
    return default


def _env_positive(name: str, default: T, parse: Callable[[str], T], kind: str) -> T:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = parse(value)
    except ValueError:
        number = None
    if number is None or number <= 0:
        _logger.warning("%s=%r is not a positive %s; using %s", name, value, kind, default)
        return default
    return number


def env_float(name: str, default: float) -> float:
    return _env_positive(name, default, float, "number")


def env_int(name: str, default: int) -> int:
    return _env_positive(name, default, int, "integer")


def fsync_always() -> bool:
    """``OTEL_PROV_WAL_FSYNC=always``: what is kept on disk for later is also fsync'd."""
    return env_choice(OTEL_PROV_WAL_FSYNC, ("always", "never"), "never") == "always"


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach ``host`` (``localhost``, 127.0.0.0/8, ::1): a
    server listening anywhere else (``0.0.0.0``, a network address, a host name) without
    a credential warns, whether it serves the web view or receives spans."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
