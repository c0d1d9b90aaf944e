"""Pure parts of SPARQL delivery: update text, header parsing, URL redaction, the spool."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path
from urllib.parse import quote, quote_plus

import pyoxigraph
import pytest
from hypothesis import given
from hypothesis import strategies as st

from otel_prov.exporters.sparql._client import by_graph, to_nquad_lines, update_text
from otel_prov.exporters.sparql._settings import default_query_endpoint, redact_url, sparql_headers
from otel_prov.exporters.sparql._spool import Spool, SpoolFullError
from otel_prov.prov._rdf import literal


@given(
    st.lists(st.text(alphabet=st.characters(exclude_categories=("Cs",))), min_size=1, max_size=5)
)
def test_update_text_inserts_exactly_the_lines(values: list[str]) -> None:
    lines = [f"<urn:s:{i}> <urn:p> {literal(v)} <urn:g:{i % 2}> .\n" for i, v in enumerate(values)]
    store = pyoxigraph.Store()
    store.update(update_text(by_graph(lines)))
    assert to_nquad_lines(by_graph(lines)) == sorted(
        lines, key=lambda line: line.endswith("1> .\n")
    )
    found = {
        (q.subject.value, q.object.value, q.graph_name.value)
        for q in store.quads_for_pattern(None, None, None)
    }
    assert found == {(f"urn:s:{i}", v, f"urn:g:{i % 2}") for i, v in enumerate(values)}


def test_headers_parse_like_otlp_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_PROV_SPARQL_HEADERS", "Authorization=Bearer%20abc,x-tenant=t1")
    assert sparql_headers() == {"authorization": "Bearer abc", "x-tenant": "t1"}
    assert sparql_headers("") == {}


def test_urls_lose_their_user_info_before_any_message() -> None:
    assert (
        redact_url("https://bob:hunter2@db.example:8443/sparql") == "https://db.example:8443/sparql"
    )
    assert redact_url("http://db/sparql") == "http://db/sparql"


def test_urls_lose_the_values_of_secret_looking_query_parameters() -> None:
    assert (
        redact_url("https://db.example/sparql?access_token=abc&graph=g&X-Api-Key=k#sig=s")
        == "https://db.example/sparql?access_token=REDACTED&graph=g&X-Api-Key=REDACTED"
        "#sig=REDACTED"
    )
    assert redact_url("http://db/q?a=1;Password=p&b") == "http://db/q?a=1;Password=REDACTED&b"
    assert redact_url("http://db/q?access%5Ftoken=t") == "http://db/q?access%5Ftoken=REDACTED"
    assert redact_url("http://db/q?graph=g&limit=3") == "http://db/q?graph=g&limit=3"


SECRET_WORDS = [
    "token", "access_token", "api_key", "apikey", "key", "secret", "password", "passwd",
    "pwd", "auth", "authorization", "signature", "sig", "credential", "credentials",
    "session", "X-Amz-Security-Token", "x-api-key", "client_secret", "jwt",
]  # fmt: skip
ANY_CHARACTER = st.characters(exclude_categories=())  # lone surrogates too


@st.composite
def secret_parameter_names(draw: st.DrawFn) -> str:
    """A secret-looking name in any case, inside a longer name, percent-encoded or not."""
    word = "".join(
        char.upper() if draw(st.booleans()) else char.lower()
        for char in draw(st.sampled_from(SECRET_WORDS))
    )
    name = draw(st.sampled_from(["", "x-", "my_", "oauth."])) + word
    name += draw(st.sampled_from(["", "_1", "-id"]))
    return quote(name, safe="") if draw(st.booleans()) else name


def _encodings(value: str) -> set[str]:
    """``value`` as it may stand in a URL: raw, and percent-encoded in the usual ways."""
    forms = {value}
    for errors in ("strict", "surrogatepass", "surrogateescape", "replace"):
        try:
            forms |= {quote(value, safe="", errors=errors), quote_plus(value, errors=errors)}
            forms.add(quote(value, safe="/:@!$'()*,", errors=errors))
        except UnicodeEncodeError:
            continue
    return forms


@given(
    st.sampled_from(["http://db:7878/update", "https://u:p@db.example/sparql/", "http://h/q"]),
    st.lists(st.sampled_from(["graph=urn:g", "limit=10", "flag", "a=b=c"]), max_size=3),
    secret_parameter_names(),
    st.text(alphabet=ANY_CHARACTER, min_size=1),
    st.sampled_from(["raw", "quote", "quote_plus"]),
    st.booleans(),
    st.sampled_from(["&", ";"]),
)
def test_no_form_of_a_secret_parameter_value_survives_redaction(
    base: str,
    others: list[str],
    name: str,
    value: str,
    spelling: str,
    in_fragment: bool,
    separator: str,
) -> None:
    written = {
        "raw": value.translate({ord(c): None for c in "&;#"}),
        "quote": quote(value, safe="", errors="surrogatepass"),
        "quote_plus": quote_plus(value, errors="surrogatepass"),
    }[spelling]
    parameters = separator.join([*others, f"{name}={written}"])
    url = f"{base}#{parameters}" if in_fragment else f"{base}?{parameters}"
    redacted = redact_url(url)
    skeleton = redact_url(url.replace(f"{name}={written}", f"{name}="))  # the rest of the URL
    for form in _encodings(value) | {written}:
        if form and form not in skeleton:  # a value the rest of the URL spells is no leak
            assert form not in redacted, (url, redacted)
    assert f"{name}=REDACTED" in redacted


def test_query_endpoint_defaults_beside_the_update_endpoint() -> None:
    assert default_query_endpoint("http://h:7878/update") == "http://h:7878/query"
    assert default_query_endpoint("http://h:8890/sparql") == "http://h:8890/sparql"
    # The last /update of the path, as a whole segment; never the host's or a parameter's.
    assert default_query_endpoint("http://h/ds/update/") == "http://h/ds/query/"
    assert default_query_endpoint("http://h/update/x/update?a=1") == "http://h/update/x/query?a=1"
    assert (
        default_query_endpoint("http://update.example/updates") == "http://update.example/updates"
    )
    assert default_query_endpoint("http://u:p@h/update?k=/update") == "http://u:p@h/query?k=/update"


def test_spool_keeps_order_splits_and_dead_letters(tmp_path: Path) -> None:
    spool = Spool(tmp_path, max_bytes=10_000)
    first = spool.write(["a .\n", "b .\n", "c .\n"])
    spool.write(["d .\n"])
    assert len(spool) == 2 and spool.size_bytes == 16
    oldest = spool.oldest()
    assert (
        oldest is not None and oldest.path == first and oldest.lines == ["a .\n", "b .\n", "c .\n"]
    )
    spool.split(oldest)
    halves = [spool.oldest()]
    assert halves[0] is not None and halves[0].lines == ["a .\n"]
    spool.remove(halves[0])
    second = spool.oldest()
    assert second is not None and second.lines == ["b .\n", "c .\n"]
    letter = spool.set_aside(second.path, "HTTP 400: bad")
    last = spool.oldest()
    assert last is not None and last.lines == ["d .\n"] and spool.size_bytes == 4
    assert letter.path.read_text() == "b .\nc .\n"
    assert letter.path.with_suffix(".reason").read_text() == "HTTP 400: bad"
    assert not list(tmp_path.glob(".*.tmp"))
    with pytest.raises(SpoolFullError, match="is full"):
        spool.write(["x" * 10_000])
    spool.close()


@pytest.mark.parametrize("fsync", [False, True])
def test_the_spool_syncs_only_as_the_fsync_policy_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fsync: bool
) -> None:
    """OTEL_PROV_WAL_FSYNC=never writes, splits and removes batches without one fsync (a
    removal lost in a machine crash only sends a batch again); always syncs each step."""
    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        synced.append(fd)
        real_fsync(fd)

    spool = Spool(tmp_path, max_bytes=1 << 20)
    monkeypatch.setattr(os, "fsync", counting_fsync)
    spool.write(["a .\n", "b .\n"], fsync=fsync)
    batch = spool.oldest()
    assert batch is not None
    spool.split(batch, fsync=fsync)
    for _ in range(2):
        half = spool.oldest()
        assert half is not None
        spool.remove(half, fsync=fsync)
    assert len(spool) == 0 and spool.empty()
    assert bool(synced) is fsync
    spool.close()


def test_the_spool_counts_its_batches_without_listing_them(tmp_path: Path) -> None:
    """A flush asks for the count after every batch sent: it is kept, not listed; a
    file put or deleted by hand is noticed when the count says none is left."""
    spool = Spool(tmp_path, max_bytes=1 << 20)
    first = spool.write(["a .\n"], fsync=False)
    spool.write(["b .\n"], fsync=False)
    assert len(spool) == 2
    batch = spool.oldest()
    assert batch is not None and batch.path == first
    spool.remove(batch, fsync=False)
    spool.remove(batch, fsync=False)  # twice: counted once
    assert len(spool) == 1
    for path in tmp_path.glob("*.nq"):
        path.unlink()
    assert len(spool) == 1 and spool.oldest() is None and len(spool) == 0 and spool.empty()
    (tmp_path / "by-hand.nq").write_text("c .\n")
    assert len(spool) == 0 and not spool.empty() and len(spool) == 1
    spool.close()
    assert len(Spool(tmp_path, max_bytes=1 << 20)) == 1  # a new process lists them


def test_a_second_process_spools_apart_and_is_adopted_later(tmp_path: Path) -> None:
    owner = Spool(tmp_path, max_bytes=1 << 20)
    script = textwrap.dedent(f"""
        from pathlib import Path
        from otel_prov.exporters.sparql._spool import Spool
        spool = Spool(Path({str(tmp_path)!r}), max_bytes=1 << 20)
        print(spool.directory)
        spool.write(["from the other process .\\n"])
    """)
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    ).stdout.strip()
    assert Path(out).parent == tmp_path and Path(out).name.startswith("pid-")
    owner.close()
    adopter = Spool(tmp_path, max_bytes=1 << 20)  # the other process is gone: its batch is ours
    batch = adopter.oldest()
    assert batch is not None and batch.lines == ["from the other process .\n"]
    assert not list(tmp_path.glob("pid-*"))
    adopter.close()


def _left_by_a_dead_process(root: Path, files: dict[str, str]) -> Path:
    """``pid-<n>/`` as a process that shared the spool leaves it: its lock free."""
    sub = root / "pid-4242"
    sub.mkdir(parents=True)
    (sub / ".lock").touch()
    for name, text in files.items():
        (sub / name).write_text(text)
    return sub


def test_a_spool_takes_in_the_batches_of_a_process_that_shared_it(tmp_path: Path) -> None:
    _left_by_a_dead_process(
        tmp_path,
        {
            "1-4242-000001.nq": "their batch .\n",
            ".1-4242-000002.nq.tmp": "a write cut by its death",
        },
    )
    spool = Spool(tmp_path, max_bytes=1 << 20)
    assert not list(tmp_path.glob("pid-*"))
    batch = spool.oldest()
    assert batch is not None and batch.lines == ["their batch .\n"]
    spool.close()


def test_what_a_shared_spool_left_that_cannot_be_taken_in_is_logged_and_left(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    sub = _left_by_a_dead_process(
        tmp_path, {"1-4242-000001.nq": "b .\n", "chain-heads.json": "{}", "notes.txt": "mine"}
    )
    (sub / "more").mkdir()
    for _ in range(2):  # and again at the next start: no error, the same warning
        spool = Spool(tmp_path, max_bytes=1 << 20)
        assert len(spool) == 1 and spool.directory == tmp_path
        spool.close()
    assert sorted(path.name for path in sub.iterdir()) == [
        ".lock",
        "chain-heads.json",
        "more",
        "notes.txt",
    ]
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "chain-heads.json, more, notes.txt" in warnings[-1] and str(sub) in warnings[-1]


def test_exporter_needs_an_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from otel_prov.exporters import SparqlUpdateExporter

    monkeypatch.delenv("OTEL_PROV_SPARQL_UPDATE_ENDPOINT", raising=False)
    with pytest.raises(ValueError, match="OTEL_PROV_SPARQL_UPDATE_ENDPOINT"):
        SparqlUpdateExporter(spool_dir=tmp_path)
    with pytest.raises(ValueError, match="http"):
        SparqlUpdateExporter("ftp://x", spool_dir=tmp_path)


# Every code point str.splitlines breaks at, besides "\n": none may split a spooled line.
LINE_BREAKERS = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
# Any code point but lone surrogates (issue 11 point 1), the line breakers drawn often.
TEXT_WITH_LINE_BREAKERS = st.one_of(
    st.sampled_from(LINE_BREAKERS), st.characters(exclude_categories=("Cs",))
)


def _spooled_round_trip(tmp_path: Path, values: list[str]) -> list[str]:
    """Values written through the spool as the exporter writes them, read back from a store."""
    lines = [f"<urn:s:{i}> <urn:p> {literal(v)} <urn:g> .\n" for i, v in enumerate(values)]
    spool = Spool(tmp_path, max_bytes=1 << 20)
    spool.write(lines)
    batch = spool.oldest()
    spool.close()
    assert batch is not None and batch.lines == lines
    store = pyoxigraph.Store()
    store.update(update_text(by_graph(batch.lines)))
    found = {q.subject.value: q.object.value for q in store.quads_for_pattern(None, None, None)}
    return [found[f"urn:s:{i}"] for i in range(len(values))]


def test_every_line_breaking_code_point_survives_the_spool(tmp_path: Path) -> None:
    values = [f"before{char}after" for char in LINE_BREAKERS]
    assert _spooled_round_trip(tmp_path, values) == values


@given(st.lists(st.text(alphabet=TEXT_WITH_LINE_BREAKERS), max_size=5))
def test_any_text_survives_the_spool(values: list[str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        assert _spooled_round_trip(Path(directory), values) == values


@given(st.lists(st.text(alphabet=TEXT_WITH_LINE_BREAKERS), min_size=1, max_size=5))
def test_a_batch_of_one_graph_reads_back_as_written(values: list[str]) -> None:
    """The whole-text reading of a one-graph batch gives its lines back, whatever the
    literals hold (the graph's own IRI and " ." among them)."""
    lines = [
        f"<urn:s:{i}> <urn:p> {literal(v + ' <urn:g> .')} <urn:g> .\n" for i, v in enumerate(values)
    ]
    assert to_nquad_lines(by_graph(lines)) == lines


def test_a_spooled_line_that_is_not_a_quad_says_which(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="line 2"):
        by_graph(["<urn:s> <urn:p> <urn:o> <urn:g> .\n", "garbage\n"])


def test_the_graph_store_endpoint_comes_from_its_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from otel_prov.exporters import SparqlUpdateExporter

    monkeypatch.setenv(
        "OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT", "http://user:pw@db:7878/store?graph={graph}"
    )
    exporter = SparqlUpdateExporter("http://db:7878/update", spool_dir=tmp_path / "spool")
    try:
        assert exporter.graph_store_endpoint == "http://user:pw@db:7878/store?graph={graph}"
        assert exporter.batch_size == 10_000  # a store's bulk path takes larger batches
        assert repr(exporter) == "SparqlUpdateExporter('http://db:7878/store?graph={graph}')"
    finally:
        exporter.shutdown(0)
    unset = SparqlUpdateExporter(
        "http://db:7878/update", spool_dir=tmp_path / "spool2", graph_store_endpoint=""
    )
    try:
        assert unset.graph_store_endpoint is None  # an empty keyword: SPARQL Update
        assert unset.batch_size == 1000
    finally:
        unset.shutdown(0)
