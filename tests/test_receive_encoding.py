"""The request bodies OTLP/HTTP senders compress, unpacked as ``gzip`` and ``zlib`` do."""

from __future__ import annotations

import gzip
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from otel_prov.ingest.receiver._http import _inflate, _TooLargeError

GZIP = 16 + zlib.MAX_WBITS


@given(st.lists(st.binary(max_size=300), min_size=1, max_size=5))
def test_any_series_of_gzip_members_unpacks_to_all_of_them(parts: list[bytes]) -> None:
    body = b"".join(gzip.compress(part) for part in parts)
    assert _inflate(body, GZIP, 10_000, members=True) == gzip.decompress(body) == b"".join(parts)


@given(st.lists(st.binary(min_size=1, max_size=300), min_size=1, max_size=5), st.data())
def test_the_limit_holds_over_all_members(parts: list[bytes], data: st.DataObject) -> None:
    total = sum(map(len, parts))
    limit = data.draw(st.integers(0, total - 1))
    with pytest.raises(_TooLargeError):
        _inflate(b"".join(gzip.compress(part) for part in parts), GZIP, limit, members=True)
    body = b"".join(gzip.compress(part) for part in parts)
    assert _inflate(body, GZIP, total, members=True) == b"".join(parts)


def test_a_member_cut_short_is_an_error() -> None:
    body = gzip.compress(b"first") + gzip.compress(b"second" * 100)[:-9]
    with pytest.raises(ValueError, match="cut short"):
        _inflate(body, GZIP, 10_000, members=True)
