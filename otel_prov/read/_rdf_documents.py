"""A session's triples as documents to download: Turtle and JSON-LD.

Both come from pyoxigraph and carry every value: a pyoxigraph term cannot hold a lone
surrogate (it refuses one), and both formats escape control characters.  ``otel-prov
show``, ``query`` and the downloads of ``otel-prov serve`` write them the same way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import pyoxigraph

from otel_prov.prov._rdf import PREFIXES

__all__ = ["render_jsonld", "render_turtle"]


def render_turtle(triples: Sequence[pyoxigraph.Triple]) -> str:
    """Turtle with the project's prefixes, so that it reads as the README's queries do."""
    data = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.TURTLE, prefixes=PREFIXES)
    return (data or b"").decode()


def render_jsonld(triples: Sequence[pyoxigraph.Triple]) -> str:
    """Expanded JSON-LD (full IRIs, no ``@context`` to fetch), indented for people."""
    data = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.JSON_LD)
    return json.dumps(json.loads(data or b"[]"), ensure_ascii=False, indent=2) + "\n"
