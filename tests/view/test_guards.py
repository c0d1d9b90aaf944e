"""The Host header as :mod:`otel_prov.view._guards` reads it: one spelling per host."""

from __future__ import annotations

import pytest

from otel_prov.view._guards import host_name, host_policy


@pytest.mark.parametrize(
    ("header", "host"),
    [
        ("127.0.0.1:8080", "127.0.0.1"),
        ("LocalHost.", "localhost"),
        ("[::1]:8080", "::1"),
        ("[0:0::1]", "::1"),
        ("prov.example.org:80", "prov.example.org"),
        ("::1", None),  # an IPv6 address needs brackets
        ("[::1", None),
        ("[::1]x", None),
        ("example.org:", None),
        ("example.org:80:80", None),
        (":80", None),
    ],
)
def test_a_host_header_is_read_without_its_port(header: str, host: str | None) -> None:
    assert host_name(header) == host


def test_the_policy_follows_the_address_it_is_bound_to() -> None:
    loopback = host_policy("127.0.0.1")
    assert all(loopback.allows(h) for h in ("127.0.0.1:1", "localhost", "[::1]:2"))
    assert not loopback.allows("10.0.0.1") and not loopback.allows("attacker.example")
    one = host_policy("192.0.2.7", ["Prov.Example.org"])
    assert one.allows("192.0.2.7:80") and one.allows("prov.example.org")
    assert not one.allows("localhost") and not one.allows("192.0.2.8")
    every = host_policy("::")
    assert every.allows("[2001:db8::1]") and every.allows("192.0.2.8") and every.allows("localhost")
    assert not every.allows("attacker.example")
