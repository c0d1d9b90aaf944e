"""The read API as a web app: ``otel-prov serve`` and the page ``show --format html`` writes.

Pages are rendered on the server (Jinja2) and the graphs drawn there as SVG; the
browser needs no network and runs one small script (clicking a node of the why-graph
focuses it).  Everything is read-only: the app answers GET (and POST for the SPARQL
box), refuses every SPARQL update with 400, and stops a query that runs past its time.
Every value is escaped, and a Content-Security-Policy lets only the page's own style
and script run, so that text an agent recorded can never act as markup or script.
"""

from __future__ import annotations

from otel_prov.view._app import create_app
from otel_prov.view._pages import session_page

__all__ = ["create_app", "session_page"]
