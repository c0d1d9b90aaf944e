"""Triples as RDF and PROV documents: what ``show --format turtle|jsonld|prov-json|provn``
and a CONSTRUCT query print.

Turtle and JSON-LD come from :mod:`otel_prov.read._rdf_documents`.
PROV-JSON and PROV-N come from the W3C ``prov`` package (the ``prov`` extra), which reads
the PROV-O triples into a PROV document.  A PROV document is checked before it is
written: written back as RDF by ``prov`` it must give the same graph, so no triple is lost
on the way.  PROV-N has no escape for most control characters (its ``ECHAR`` covers only
``\\t \\b \\n \\r \\f \\" \\' \\\\``, and ``prov`` writes the others raw), so a value with a
character outside XML's ``Char`` production (the ProvToolbox reads PROV-N through
PROV-XML) cannot be written; such a value is refused with its place named, and nothing
is written.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pyoxigraph

from otel_prov.cli._exit import UsageError
from otel_prov.prov._rdf import PREFIXES
from otel_prov.read._rdf_documents import render_jsonld, render_turtle

if TYPE_CHECKING:
    import rdflib
    from prov.model import ProvDocument

__all__ = [
    "GRAPH_FORMATS",
    "prov_document",
    "render_graphs",
    "unwritable_in_provn",
]

GRAPH_FORMATS = ("turtle", "jsonld", "prov-json", "provn")
"""The ``show`` formats that print a session's triples."""

_NAMESPACES = {
    # The IRI families the mapper mints (prov/_iris.py), so that every IRI splits into a
    # prefix and a local name, however odd the agent or tool name in it.
    "agent": "urn:otel-prov:agent:",
    "tool": "urn:otel-prov:tool:",
    "model": "urn:otel-prov:model:",
    "service": "urn:otel-prov:service:",
    "otel-prov": "urn:otel-prov:",
}

_NOT_XML_CHAR = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render_graphs(graphs: Sequence[Sequence[pyoxigraph.Triple]], fmt: str) -> str:
    """``show`` output for one of :data:`GRAPH_FORMATS`.

    Turtle is a document per session, a blank line between them; the other formats are
    one document of every session's triples, since JSON documents do not concatenate.
    Raises :class:`UsageError` when the format cannot carry a value, or ``prov`` is missing.
    """
    if fmt == "turtle":
        return "\n\n".join(render_turtle(triples).rstrip("\n") for triples in graphs) + "\n"
    merged = list(dict.fromkeys(triple for triples in graphs for triple in triples))
    if fmt == "jsonld":
        return render_jsonld(merged)
    if fmt == "provn":
        problem = unwritable_in_provn(merged)
        if problem:
            raise UsageError(f"PROV-N cannot carry {problem}; use --format prov-json or turtle")
    document = prov_document(merged)
    if fmt == "provn":
        return document.get_provn() + "\n"
    return str(document.serialize(format="json", indent=2)) + "\n"


def unwritable_in_provn(triples: Sequence[pyoxigraph.Triple]) -> str | None:
    """The first value PROV-N cannot carry, named by its subject, predicate and character."""
    for triple in triples:
        for term in (triple.subject, triple.predicate, triple.object):
            found = _NOT_XML_CHAR.search(_text(term))
            if found:
                return (
                    f"the value of <{_text(triple.predicate)}> of <{_text(triple.subject)}>: "
                    f"it holds U+{ord(found.group()):04X} at character {found.start()}"
                )
    return None


def _text(term: object) -> str:
    if isinstance(term, (pyoxigraph.NamedNode, pyoxigraph.BlankNode, pyoxigraph.Literal)):
        return term.value
    return str(term)


def prov_document(triples: Sequence[pyoxigraph.Triple]) -> ProvDocument:
    """``triples`` (PROV-O) as a ``prov`` document, checked to carry every one of them."""
    try:
        from prov.model import ProvDocument
        from prov.serializers.provrdf import ProvRDFSerializer
    except ImportError as exc:
        raise UsageError(
            "PROV-JSON and PROV-N need the W3C prov package: pip install 'otel-prov[prov]'"
        ) from exc
    graph = _rdflib_graph(triples)
    document = ProvDocument()
    rdf = ProvRDFSerializer(document)
    try:
        rdf.decode_document(graph, document)  # type: ignore[arg-type] # a Graph is decoded whole
    except ValueError as exc:  # an IRI it cannot split into a prefix and a name, say
        raise UsageError(f"the prov package cannot read this graph: {exc}") from exc
    lost = _lost(graph, rdf.encode_document(document))
    if lost:
        raise UsageError(f"the prov package cannot carry {lost}; use --format turtle or jsonld")
    return document


def _rdflib_graph(triples: Sequence[pyoxigraph.Triple]) -> rdflib.Graph:
    import rdflib

    graph = rdflib.Graph(bind_namespaces="core")
    for prefix, namespace in {**PREFIXES, **_NAMESPACES}.items():
        graph.bind(prefix, namespace)
    ntriples = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.N_TRIPLES)
    graph.parse(data=(ntriples or b"").decode(), format="nt")
    return graph


def _lost(graph: rdflib.Graph, written: rdflib.Dataset) -> str | None:
    """The first triple of ``graph`` that ``written`` (a PROV document as RDF) lacks, if any."""
    import rdflib
    from rdflib.compare import graph_diff, isomorphic, to_isomorphic

    back = rdflib.Graph()
    for part in written.graphs():
        back += part
    if isomorphic(graph, back):
        return None
    missing = sorted(graph_diff(to_isomorphic(graph), to_isomorphic(back))[1])
    if not missing:  # the document states more than the graph: also not the same triples
        return "the graph as it is stored (it would add statements)"
    subject, predicate, _ = missing[0]
    return f"the value of <{predicate}> of <{subject}>"
