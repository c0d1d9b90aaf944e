"""The SPARQL recipes people start from: docs/sparql.md shows them and the web view's
query box offers them, both from here.

``scripts/sparql_recipes.py`` writes them into the page between its markers
(``tests/test_docs.py`` fails when the page is not what it would write), so the page and
the box cannot tell different queries; the correlation tests run them on a real trace
that crosses services.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RECIPES", "Recipe"]


@dataclass(frozen=True)
class Recipe:
    title: str
    """What it answers, in a line: the query's first comment, and its name in the list."""
    sparql: str
    """The whole query, prefixes declared, to paste into any store as it is."""

    @property
    def text(self) -> str:
        """The recipe as the page shows it and the box holds it: the title as a comment."""
        return f"# {self.title}\n{self.sparql}"


RECIPES = (
    Recipe(
        "Every failed tool call, with its trace id (paste it into Jaeger) and the request "
        "around it",
        """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?tool ?error ?message ?trace ?request WHERE {
  ?call a oprov:ToolCall ; oprov:toolName ?tool ; oprov:status "error" ;
        oprov:errorType ?error ; oprov:traceId ?trace ; oprov:partOf+ ?session .
  OPTIONAL { ?call oprov:errorMessage ?message }
  ?session a oprov:AgentSession .
  OPTIONAL { ?session oprov:partOf ?http . ?http a oprov:Span ; rdfs:label ?request }
}
""",
    ),
    Recipe(
        "All sessions served by one service, newest first",
        """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
SELECT ?session ?started ?trace WHERE {
  ?session a oprov:AgentSession ; prov:wasAssociatedWith ?service ;
           prov:startedAtTime ?started ; oprov:traceId ?trace .
  ?service a oprov:Service ; oprov:serviceName "agent-service" .
} ORDER BY DESC(?started)
""",
    ),
    Recipe(
        "Everything a tool call caused, in every service: HTTP client and server spans, "
        "database calls, the sessions they ran",
        """# For one call, begin WHERE with VALUES ?call { <its IRI, from show --format json> }
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?call ?caused ?name ?service ?status ?error ?started ?ended WHERE {
  ?call a oprov:ToolCall ; oprov:toolName "get_weather" .
  ?caused oprov:partOf+ ?call ; rdfs:label ?name ; oprov:status ?status ;
          prov:startedAtTime ?started .
  OPTIONAL { ?caused oprov:serviceName ?service }
  OPTIONAL { ?caused oprov:errorType ?error }
  OPTIONAL { ?caused prov:endedAtTime ?ended }
} ORDER BY ?started ?caused
""",
    ),
)
"""In the order the page shows them; the box starts with the first."""
