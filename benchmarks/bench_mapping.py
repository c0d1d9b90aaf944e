"""(b) Mapping throughput: our mapper vs. building the same triples in an rdflib Graph.

Both sides produce the same triples for the same sessions; the rdflib side starts from
the terms' plain values (prepared outside the timing) and builds URIRef/Literal terms
into a Graph, the usual way to write RDF in Python.  Target: ratio >= 5x.
"""

from __future__ import annotations

import rdflib

from benchmarks.workload import median_seconds, report, session_spans
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import parse_literal

SESSIONS = [session_spans(i, iterations=8) for i in range(200)]


def _plain(term: str) -> tuple[str, str | None]:
    if term.startswith("<"):
        return term[1:-1], None
    datatype = term.rsplit("^^", 1)[1][1:-1] if "^^<" in term else None
    return parse_literal(term), datatype


def main() -> None:
    records = [map_spans(spans) for spans in SESSIONS]
    triple_count = sum(len(record.triples) for record in records)
    plain = [
        [tuple(_plain(term) for term in triple) for triple in record.triples] for record in records
    ]

    def ours() -> None:
        for spans in SESSIONS:
            map_spans(spans)

    def with_rdflib() -> None:
        for triples in plain:
            graph = rdflib.Graph()
            for (s, _), (p, _), (o, datatype) in triples:
                obj = (
                    rdflib.URIRef(o)
                    if datatype is None and o.startswith("urn:")
                    else (
                        rdflib.Literal(o, datatype=rdflib.URIRef(datatype))
                        if datatype
                        else rdflib.Literal(o)
                    )
                )
                graph.add((rdflib.URIRef(s), rdflib.URIRef(p), obj))

    for _ in range(2):  # warm up
        ours()
    ours_s = median_seconds(ours, 7)
    rdflib_s = median_seconds(with_rdflib, 3)
    ratio = rdflib_s / ours_s
    report(
        "mapping throughput vs rdflib Graph",
        ratio,
        ">= 5x",
        ratio >= 5,
        f"ours {triple_count / ours_s:,.0f} triples/s, rdflib {triple_count / rdflib_s:,.0f}"
        f" triples/s ({triple_count:,} triples, {len(SESSIONS)} sessions)",
    )


if __name__ == "__main__":
    main()
