"""Stage 1: turning what an agent does into spans.

The manual API, the span shapes every instrumentor shares, the content policy (the OTel
GenAI opt-in) and redaction.  Instrumentors import from here, never from each other.
"""
