"""Spans that were recorded elsewhere, into provenance: OTLP files (``otel-prov import``)
and OTLP requests (``otel-prov receive``, :mod:`otel_prov.ingest.receiver`).  Each trace
is mapped whole, sealed once and exported, with what the destination already holds read
back so that nothing is sealed twice.  Evaluations added to a stored run afterwards
(``otel-prov annotate``) are sealed and exported here too."""
