"""Stage 3, the functional core: span records in, PROV-O quads and sealed bundles out.

Nothing here does I/O, reads a clock or keeps global state.  The same spans give the
same quads and the same IRIs, which is what makes replays and re-imports idempotent.
``SpanRecord`` (our own frozen copy of a span, with third-party conventions read in
:mod:`._conventions`) goes in; ``ProvRecord`` (quads of one session, sealed) comes out.
"""
