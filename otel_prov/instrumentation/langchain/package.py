"""The distributions this instrumentation supports (checked by ``BaseInstrumentor``)."""

_instruments = ("langchain-core >= 1.0",)
