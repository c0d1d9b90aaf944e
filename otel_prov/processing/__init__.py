"""Stage 2: the span processor and what runs behind it.

The processor records intents in the write-ahead log as spans start, assembles finished
spans into session trees, prepares them (redaction, blob externalisation), hands them to
the pure mapper and sealer in :mod:`otel_prov.prov`, and delivers the records to a
:class:`~otel_prov.exporters.ProvExporter` from one worker thread.
"""
