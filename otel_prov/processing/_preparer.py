"""What a span record is made before the mapper sees it, on every write path alike."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from otel_prov._settings import env_int
from otel_prov.capture._content import capture_prov_content
from otel_prov.capture._redaction import redact_span_record
from otel_prov.environment_variables import OTEL_PROV_BLOB_THRESHOLD
from otel_prov.processing._blobs import DEFAULT_THRESHOLD, BlobStore, blob_directory, externalize
from otel_prov.prov._span_record import SpanRecord

__all__ = ["RecordPreparer"]


@dataclass(frozen=True)
class RecordPreparer:
    """Makes a span record what the mapper may see: redacted, then big values moved out,
    or, under a content policy that keeps content out, marked for the mapper to withhold.

    Redaction comes first because third-party attributes bypass the redaction our
    instrumentation applies where it sets content; only then are values over
    ``threshold`` bytes written to ``blobs`` (so a blob never holds a secret).  With
    ``content`` false, nothing is written to the blob store and the record is marked
    ``content_withheld``: the mapper keeps sizes and hashes, not text (other
    instrumentations set their content on the span whatever our switches say).  One
    definition for the processor, ``otel-prov import`` and ``otel-prov receive``, so that
    spans read from a file or received are stored exactly as the same spans recorded
    live would be, and the content policy holds on every path.
    """

    blobs: BlobStore
    threshold: int
    """Bytes (UTF-8) above which a value goes to the blob store."""
    content: bool = True
    """Store the content of spans (text of questions, arguments, results, answers)?"""

    @classmethod
    def from_settings(
        cls,
        *,
        blob_dir: str | os.PathLike[str] | None = None,
        blob_threshold: int | None = None,
        content: bool | None = None,
    ) -> RecordPreparer:
        """The arguments, else their ``OTEL_PROV_BLOB_*`` variables, else the defaults.
        ``content``: None follows the capture switches (``OTEL_PROV_CAPTURE_CONTENT``, the
        GenAI opt-in's ``NO_CONTENT``, ``configure(capture_content=...)``); False
        withholds whatever they say (``--no-content``)."""
        if content is None:
            content = capture_prov_content()
        return cls(
            BlobStore(blob_directory(blob_dir)),
            blob_threshold or env_int(OTEL_PROV_BLOB_THRESHOLD, DEFAULT_THRESHOLD),
            content,
        )

    def __call__(self, record: SpanRecord) -> SpanRecord:
        redacted = redact_span_record(record)
        if not self.content:
            return dataclasses.replace(redacted, content_withheld=True)
        return externalize(redacted, self.blobs, self.threshold)
