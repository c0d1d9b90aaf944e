"""Manual instrumentation of a retrieval (RAG): the query, and what came back.

::

    with otel_prov.retrieval("opening hours of the Louvre", data_source="museums") as found:
        for hit in index.search(found.query):
            found.add_document(hit.id, content=hit.text, score=hit.score, source=hit.url)

The span is a GenAI ``retrieval`` span; in the provenance it is an ``oprov:Retrieval``
that used the query and generated one ``oprov:Document`` per document added, each
``prov:hadPrimarySource`` its ``source`` (or its metadata's ``source`` or ``url``).  What
the agent did next (the tool call's observation, the next thought, the answer) derives
from those documents.  Their text is content, kept as the capture switches allow; with
capture off, its size and hash are.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from opentelemetry.trace import Span, TracerProvider

from otel_prov.capture._also_async import AlsoAsync
from otel_prov.capture._api import _SpanScope
from otel_prov.capture._shapes import put_document, retrieval_shape

__all__ = ["Retrieval", "retrieval"]


class Retrieval:
    """A retrieval in progress: add each document it returned, in the order of the result."""

    def __init__(self, span: Span, query: Any) -> None:
        self.span = span
        """The OpenTelemetry span of the retrieval."""
        self.query = query
        """The query, as given to :func:`retrieval`."""
        self._count = 0
        self._ended = False
        self._lock = threading.Lock()

    def add_document(
        self,
        id: str | int | None = None,
        *,
        content: Any = None,
        score: float | None = None,
        source: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        """One more document (or chunk), ranked after those added before it.

        ``score``: the retriever's relevance score, on its own scale.  ``source``: the IRI
        (or name) of the document it was taken from.  ``metadata``: any mapping; kept as
        a JSON object.  A score that is no number or metadata that is no mapping raises
        ``TypeError`` and adds nothing; so does a document added once the retrieval ended
        (``RuntimeError``), which its span could no longer record.
        """
        with self._lock:
            if self._ended:
                raise RuntimeError(
                    f"retrieval {self.query!r} has ended: add its documents inside its with block"
                )
            index = self._count
            put_document(
                self.span,
                index,
                document_id=id,
                content=content,
                score=score,
                source=source,
                metadata=metadata,
            )
            self._count += 1

    def _end(self) -> None:
        """Its span is about to end: nothing can be added from now on."""
        with self._lock:
            self._ended = True


class _RetrievalScope(AlsoAsync[Retrieval]):
    """The retrieval's span scope, handing out a :class:`Retrieval` instead of the span."""

    def __init__(self, scope: _SpanScope, query: Any) -> None:
        self._scope = scope
        self._query = query
        self._handle: Retrieval | None = None

    def __enter__(self) -> Retrieval:
        self._handle = Retrieval(self._scope.__enter__(), self._query)
        return self._handle

    def _close(self, exc: BaseException | None) -> None:
        if self._handle is not None:
            self._handle._end()
        self._scope._close(exc)


def retrieval(
    query: Any = None,
    *,
    data_source: str | None = None,
    tracer_provider: TracerProvider | None = None,
) -> _RetrievalScope:
    """A retrieval of documents for ``query`` (``with`` or ``async with``), yielding a
    :class:`Retrieval` to add the documents to.  ``data_source``: the index, vector
    store or knowledge base searched."""
    return _RetrievalScope(
        _SpanScope(
            retrieval_shape(data_source=data_source, query=query),
            tracer_provider=tracer_provider,
        ),
        query,
    )
