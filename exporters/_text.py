"""The text a batch is written in, shared by the backends that write text: N-Quads with
its retracted quads marked, and the update that removes runs.

Apart from the interface (``_base``), so that importing the interface loads none of the
RDF term code these need.
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_prov.prov._rdf import nquad_lines, to_nquads
from otel_prov.prov._record import ProvRecord

__all__ = ["REMOVE_BATCH", "RETRACTED", "records_text", "remove_text", "text_parts"]


RETRACTED = b"#- "
"""The mark of a retracted quad in the N-Quads text of a batch (``records_text``): a
comment to any N-Quads parser, so that a batch with none is plain N-Quads."""


def records_text(records: Sequence[ProvRecord], graph: str) -> bytes:
    """The N-Quads of ``records`` (each in its graph, else ``graph``), each record's
    retracted triples first, as ``RETRACTED`` lines, so that a writer takes them back in
    order (:func:`text_parts`): an entry of a run may add what a later one takes back."""
    parts: list[str] = []
    for record in records:
        where = record.graph or graph
        if record.retracted:
            mark = RETRACTED.decode()
            parts.extend(mark + line for line in nquad_lines(record.retracted, where))
        parts.append(to_nquads(record.triples, where))
    return "".join(parts).encode()


def text_parts(data: bytes) -> list[tuple[bool, bytes]]:
    """(retracted, N-Quads) parts of a batch's text, in order; one part when nothing in
    it is retracted (the usual case, told by one search)."""
    if RETRACTED not in data:
        return [(False, data)]
    parts: list[tuple[bool, list[bytes]]] = []
    for line in data.splitlines(keepends=True):
        retracted = line.startswith(RETRACTED)
        if not parts or parts[-1][0] != retracted:
            parts.append((retracted, []))
        parts[-1][1].append(line[len(RETRACTED) :] if retracted else line)
    return [(retracted, b"".join(lines)) for retracted, lines in parts]


REMOVE_BATCH = 200
"""Subjects a removal names per update: a few thousand triples, which Virtuoso takes in one
update (it refuses much larger ones, see ``_sparql_client``)."""


def remove_text(graph: str, subjects: Sequence[str]) -> str:
    """The SPARQL 1.1 update that removes every triple of ``subjects`` (plain IRIs) in
    ``graph`` (an IRI term), for every store alike."""
    listed = " ".join(f"<{subject}>" for subject in subjects)
    return (
        f"DELETE {{ GRAPH {graph} {{ ?x ?p ?o }} }}\n"
        f"WHERE {{ GRAPH {graph} {{ VALUES ?x {{ {listed} }} ?x ?p ?o }} }}"
    )
