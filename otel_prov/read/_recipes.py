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
    Recipe(
        "Decisions taken against some evidence: what spoke against each, its weight, and "
        "whether it was there when the decision was made",
        """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
SELECT ?decision ?decided ?against ?weight ?considered WHERE {
  ?decision a oprov:Decision ; prov:wasGeneratedBy ?step .
  OPTIONAL { ?decision prov:value ?decided }
  { ?decision prov:qualifiedDerivation ?evidence . BIND(true AS ?considered) }
  UNION { ?decision prov:qualifiedInfluence ?evidence . BIND(false AS ?considered) }
  ?evidence a oprov:ContradictingEvidence .
  OPTIONAL { ?evidence prov:entity ?against }
  OPTIONAL { ?evidence oprov:unresolvedReference ?against }
  OPTIONAL { ?evidence oprov:weight ?weight }
} ORDER BY ?decision DESC(?considered) DESC(?weight)
""",
    ),
    Recipe(
        "Hypotheses never tested by a tool call: no evidence for or against them rests on "
        "what a tool returned",
        """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
SELECT ?run ?hypothesis ?id ?stated WHERE {
  ?hypothesis a oprov:Hypothesis ; oprov:reasoningId ?id ; prov:wasGeneratedBy ?step .
  OPTIONAL { ?hypothesis prov:value ?stated }
  ?step oprov:partOf* ?run . ?run oprov:runStartedAt ?started .
  FILTER NOT EXISTS { ?newer prov:wasRevisionOf ?hypothesis }
  FILTER NOT EXISTS {
    ?hypothesis prov:qualifiedDerivation|prov:qualifiedInfluence ?evidence .
    ?evidence prov:entity ?observation .
    ?observation a oprov:Observation ; prov:wasGeneratedBy ?call . ?call a oprov:ToolCall .
  }
} ORDER BY DESC(?started) ?id
""",
    ),
    Recipe(
        "Decisions a reviewer later revised: the decision, the revision, who made it and why",
        """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?decision ?decided ?revised ?reviewer ?reason ?at WHERE {
  ?revision prov:wasRevisionOf ?decision ; prov:wasAttributedTo ?person ;
            prov:wasGeneratedBy ?review ; prov:generatedAtTime ?at .
  ?decision a oprov:Decision .
  ?review a oprov:Review .
  ?person a prov:Person ; rdfs:label ?reviewer .
  OPTIONAL { ?decision prov:value ?decided }
  OPTIONAL { ?revision prov:value ?revised }
  OPTIONAL { ?review oprov:reason ?reason }
} ORDER BY DESC(?at)
""",
    ),
)
"""In the order the page shows them; the box starts with the first."""
