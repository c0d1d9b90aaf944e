"""``otel-prov mcp``: the provenance to any LLM client, through the Model Context Protocol.

A client (Claude Desktop, Cursor, VS Code, an agent framework) starts ``otel-prov mcp``
over stdio, or reaches ``otel-prov mcp --http HOST:PORT`` at ``/mcp`` (streamable HTTP),
and its model may then ask the store what agents did and why:

* tools ``list_runs``, ``show_run``, ``why``, ``diff_runs``, ``summarize_run``,
  ``trace_spans``, ``verify`` and ``sparql``, each with a JSON Schema for its arguments
  and its structured result, which is what ``otel-prov sessions``, ``show``, ``why``,
  ``diff``, ``summary``, ``verify`` and ``query`` print with ``--format json``;
* resources ``otel-prov://runs/{run}`` (the run told in Markdown) and
  ``otel-prov://runs/{run}/turtle`` (its PROV-O triples);
* the prompt ``explain_run``, which a client offers its user as "Explain this run".

Every tool is a shell over :mod:`otel_prov.read` (``_tools``); results stay within a
limit per tool, with a cursor to the rest (``_fit``); over HTTP each request passes the
checks of ``serve`` and reads as its token's tenant (``_http``).  Needs
``otel-prov[mcp]``.  docs/mcp.md has the clients' configuration.
"""
