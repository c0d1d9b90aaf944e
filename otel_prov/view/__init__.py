"""The read API as a web app: ``otel-prov serve`` and the page ``show --format html`` writes.

Pages are rendered on the server (Jinja2) and the graphs drawn there as SVG; the
browser needs no network and runs one small script (clicking a node of the why-graph
focuses it).  Everything is read-only: the app answers GET and runs a query only when
its own SPARQL page posts it, two at once at most and never one calling SERVICE on an
endpoint not allowed; it refuses every SPARQL update with 400, stops a query that runs
past its time, and answers only requests whose Host header names it (no DNS
rebinding).  Every value is escaped, and a Content-Security-Policy lets only the page's
own style and script run, so that text an agent recorded can never act as markup or
script.

The app (``_app.create_app``) and the pages (``_pages.session_page``) need the web stack
of ``otel-prov[serve]``; this package imports neither, so that the terminal's own
renderer can share ``_labels`` on the core install.
"""
