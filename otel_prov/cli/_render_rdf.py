"""Triples as RDF documents: what ``show --format turtle`` and a CONSTRUCT query print."""

from __future__ import annotations

from collections.abc import Sequence

import pyoxigraph

from otel_prov.prov._rdf import PREFIXES

__all__ = ["GRAPH_FORMATS", "render_graphs", "render_turtle"]

GRAPH_FORMATS = ("turtle",)
"""The ``show`` formats that print a session's triples."""


def render_turtle(triples: Sequence[pyoxigraph.Triple]) -> str:
    """Turtle with the project's prefixes, so that it reads as the README's queries do."""
    data = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.TURTLE, prefixes=PREFIXES)
    return (data or b"").decode()


def render_graphs(graphs: Sequence[Sequence[pyoxigraph.Triple]], fmt: str) -> str:
    """``show`` output for one of :data:`GRAPH_FORMATS`: a document per session's triples."""
    return "\n\n".join(render_turtle(triples).rstrip("\n") for triples in graphs) + "\n"
