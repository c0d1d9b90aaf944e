"""One HTTP conversation with a SPARQL store: send a batch, say what became of it.

The client builds the update text (``INSERT DATA { GRAPH <g> { ... } }`` from N-Triples
statements, whose terms are already escaped), posts it on a persistent connection and sorts
the answer into four outcomes the exporter acts on.  It never raises for an HTTP or
network failure and never puts a header, a password, a URL's user info or the value of a
secret-looking query parameter (``?access_token=``) in a message.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

import requests
from requests.auth import AuthBase

from otel_prov.exporters.sparql._settings import redact_url

__all__ = [
    "Answer",
    "Outcome",
    "SparqlUpdateClient",
    "by_graph",
    "delete_text",
    "to_nquad_lines",
    "update_text",
]

Statements = Mapping[str, Sequence[str]]
"""N-Triples statements (``s p o .``) by graph IRI term."""

# Stores say "too large" in their own words; Virtuoso answers 400 with SP031 (generated
# SQL too long) or SP030 "memory exhausted" above about 1,000 triples per update.
_TOO_LARGE = re.compile(
    r"SP031|memory exhausted|too large|exceeded .*lines|Request Entity Too Large", re.IGNORECASE
)
_RETRY_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})
_AUTH_STATUSES = frozenset({401, 403})


class Outcome(enum.Enum):
    DELIVERED = "delivered"
    RETRY = "retry"
    """Not now (network, timeout, 5xx, 408/429, or credentials refused): keep and retry."""
    TOO_LARGE = "too_large"
    REFUSED = "refused"
    """A 4xx that retrying cannot fix: dead-letter it with the reason."""


@dataclass(frozen=True)
class Answer:
    outcome: Outcome
    reason: str
    status: int | None = None
    retry_after: float | None = None
    auth_failed: bool = False


def by_graph(lines: Sequence[str]) -> dict[str, list[str]]:
    """N-Quads lines (``s p o g .``) as statements by graph; a graph IRI holds no space.

    Raises ``ValueError`` naming the line for one that is not ``... <graph> .``: a spooled
    batch that cannot be read must be set aside, not sent as a malformed update.
    """
    one = _one_graph(lines)
    if one is not None:
        return one
    graphs: dict[str, list[str]] = {}
    for number, line in enumerate(lines, 1):
        body, _, graph = line.removesuffix("\n").removesuffix(" .").rpartition(" ")
        if not (body and graph.startswith("<") and graph.endswith(">")):
            raise ValueError(f"line {number} is not an N-Quads statement: {line[:120]!r}")
        graphs.setdefault(graph, []).append(f"{body} .")
    return graphs


def _one_graph(lines: Sequence[str]) -> dict[str, list[str]] | None:
    """:func:`by_graph` of lines that all end in the first line's graph, by whole-text
    operations (a spooled batch is one graph's; reading it line by line in Python cost
    the receiver a third of its sending CPU); ``None`` when they do not, or may not.

    Every line ends with its only ``"\n"``, so the suffix ``" <g> .\n"`` occurs at most
    once per line, at its end: as many occurrences as lines means every line has it.
    """
    graph = lines[0].removesuffix("\n").removesuffix(" .").rpartition(" ")[2] if lines else ""
    if not (graph.startswith("<") and graph.endswith(">")):
        return None
    text, suffix = "".join(lines), f" {graph} .\n"
    if text.count(suffix) != len(lines) or text.startswith(suffix) or f"\n{suffix}" in text:
        return None  # a line of another graph, or one with nothing before the graph
    return {graph: text.replace(suffix, " .\n").split("\n")[:-1]}


def to_nquad_lines(statements: Statements) -> list[str]:
    """The inverse of :func:`by_graph`, for the spool (which keeps each line's graph)."""
    return [f"{s[:-2]} {graph} .\n" for graph, group in statements.items() for s in group]


def update_text(statements: Statements, operation: str = "INSERT DATA") -> str:
    """The SPARQL 1.1 update that inserts these statements into their graphs (or does
    ``operation`` with them)."""
    blocks = (f"GRAPH {graph} {{\n{chr(10).join(group)}\n}}" for graph, group in statements.items())
    return f"{operation} {{\n" + "\n".join(blocks) + "\n}"


def delete_text(statements: Statements) -> str:
    """The SPARQL 1.1 update that takes these statements out of their graphs."""
    return update_text(statements, "DELETE DATA")


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


class SparqlUpdateClient:
    """Posts batches to a SPARQL 1.1 Update endpoint (or a Graph Store) over one session."""

    def __init__(
        self,
        update_endpoint: str,
        *,
        headers: Mapping[str, str],
        auth: AuthBase | None,
        timeout: tuple[float, float],
        verify: bool | str,
        graph_store_endpoint: str | None = None,
    ) -> None:
        self._endpoint = update_endpoint
        self._graph_store = graph_store_endpoint
        self._timeout = timeout
        self._session = requests.Session()
        self._session.headers.update(headers)
        self._session.auth = auth
        self._verify = verify
        """Sent with each request, not set on the session: requests takes
        ``REQUESTS_CA_BUNDLE`` (or ``CURL_CA_BUNDLE``) over a session's CA, never over a
        request's (psf/requests#3829), and the CA a user gives is the one to trust."""
        self.where = redact_url(graph_store_endpoint or update_endpoint)
        """The endpoint as it may be logged."""

    def send(self, statements: Statements) -> Answer:
        if self._graph_store is None:
            return self.update(update_text(statements))
        answer = Answer(Outcome.DELIVERED, "")
        for graph, group in statements.items():
            url = self._graph_store.replace("{graph}", quote(graph[1:-1], safe=""))
            answer = self._post(url, "\n".join(group).encode(), "application/n-triples")
            if answer.outcome is not Outcome.DELIVERED:
                return answer
        return answer

    def update(self, text: str) -> Answer:
        """Post one SPARQL 1.1 update to the update endpoint (with a Graph Store too)."""
        return self._post(self._endpoint, text.encode(), "application/sparql-update; charset=utf-8")

    def _post(self, url: str, body: bytes, content_type: str) -> Answer:
        try:
            response = self._session.post(
                url,
                data=body,
                headers={"Content-Type": content_type},
                timeout=self._timeout,
                verify=self._verify,
            )
        except requests.Timeout:
            return Answer(Outcome.RETRY, f"no answer from {self.where} within the timeout")
        except requests.RequestException as exc:
            return Answer(Outcome.RETRY, f"cannot reach {self.where}: {type(exc).__name__}")
        status = response.status_code
        if 200 <= status < 300:
            return Answer(Outcome.DELIVERED, "", status)
        text = response.text[:2000].strip()
        reason = f"HTTP {status} from {self.where}: {text[:500]}" if text else f"HTTP {status}"
        if status == 413 or (status in (400, 500) and _TOO_LARGE.search(text)):
            return Answer(Outcome.TOO_LARGE, reason, status)
        if status in _AUTH_STATUSES:
            return Answer(
                Outcome.RETRY,
                f"{self.where} refused the credentials (HTTP {status}); check "
                "OTEL_PROV_SPARQL_HEADERS or the exporter's auth; batches stay spooled",
                status,
                auth_failed=True,
            )
        if status in _RETRY_STATUSES or status >= 500:
            return Answer(
                Outcome.RETRY, reason, status, _retry_after(response.headers.get("Retry-After"))
            )
        return Answer(Outcome.REFUSED, reason, status)

    def close(self) -> None:
        self._session.close()
