"""The triples of one span as the mapper writes them, with typed readers of its attributes
that report what they had to convert, and the content values (text, hash, size) of its
entities.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from typing import Any

from otel_prov.prov._conventions import (
    MESSAGE_LIST_KEYS,
    PLACEHOLDERS,
    WRAPPED_KEYS,
    holds_messages,
    is_run_record,
    json_typed,
    unwrapped,
)
from otel_prov.prov._iris import (
    span_hex,
)
from otel_prov.prov._rdf import (
    Triple,
    boolean,
    datetime_from_ns,
    integer,
    iri,
    literal,
)
from otel_prov.prov._span_record import BlobRef, SpanRecord
from otel_prov.prov._span_tree import (
    digest_keys,
)
from otel_prov.prov._vocab import RDF_TYPE, RDFS_LABEL, O, P

__all__ = ["Content", "SpanTriples", "as_text"]


_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")


@dataclasses.dataclass(frozen=True, slots=True)
class Content:
    """A content value and what describes it when the value itself is partial or absent."""

    text: str | None
    """What ``prov:value`` holds: the value, a preview, or None (capture was off)."""
    sha256: str | None
    size: int | None
    truncated: bool = False
    blob: BlobRef | None = None

    @classmethod
    def of(cls, text: str) -> Content:
        data = text.encode()
        return cls(text, "sha256:" + hashlib.sha256(data).hexdigest(), len(data))


class SpanTriples:
    """Triples of one span, plus typed attribute readers that report what they convert."""

    def __init__(self, span: SpanRecord, problems: list[str]) -> None:
        self.span = span
        self.triples: list[Triple] = []
        self.problems = problems
        self.add = self.triples.append

    def report(self, message: str) -> None:
        self.problems.append(f"span {span_hex(self.span.span_id)} ({self.span.name!r}): {message}")

    def text(self, *keys: str) -> str | None:
        """The first of ``keys`` present, as text (other types are converted and reported)."""
        for key in keys:
            value = self.span.attributes.get(key)
            if value is None or (isinstance(value, str) and value in PLACEHOLDERS):
                continue
            if isinstance(value, str):
                return value
            self.report(f"{key} is {type(value).__name__}, expected a string; stored as text")
            return as_text(value)
        return None

    def content(self, *keys: str, pick: str | None = None) -> Content | None:
        """The first content value among ``keys``, with its hash and size; or, when our
        instrumentation left the content off, the hash and size it recorded instead.
        ``pick`` (``question``, ``answer``, ``arguments``, ``result``): the text to take
        out of a third-party payload that wraps it (see ``_conventions.unwrapped``); a JSON
        string typed ``application/json`` is its text (``_conventions.json_typed``)."""
        attributes = self.span.attributes
        for key in keys:
            if attributes.get(key) is None:
                continue
            text = self.text(key)
            assert text is not None
            if pick is not None and is_run_record(text, pick):
                continue  # the session's steps say it instead (see _session)
            blob = self.span.blobs.get(key)
            if blob is not None:
                return Content(text, blob.sha256, blob.size, blob=blob)
            whole = self._declared(key)
            if whole is not None and whole.size is not None and whole.size > len(text.encode()):
                return dataclasses.replace(whole, text=text, truncated=True)
            if key in self.span.truncated:
                return Content(text, None, None, truncated=True)
            text = json_typed(attributes, key, text)
            if pick is not None and key in WRAPPED_KEYS:
                inner = unwrapped(text, pick)
                if inner is None and (key in MESSAGE_LIST_KEYS or holds_messages(text)):
                    continue  # messages without that text: the list itself is not it
                text = inner or text
            return Content.of(text)
        for key in keys:
            whole = self._declared(key)
            if whole is not None:
                return whole
        return None

    def _declared(self, key: str) -> Content | None:
        size_key, hash_key = digest_keys(key)
        digest = self.span.attributes.get(hash_key)
        if not isinstance(digest, str):
            return None
        if not _SHA256.fullmatch(digest):
            # A length limit under 71 characters cuts the hash too: claim no hash then.
            self.report(f"{hash_key} is not sha256:<64 hex digits>; left out")
            return Content(None, None, self.integer(size_key))
        return Content(None, digest, self.integer(size_key))

    def integer(self, *keys: str, digits: bool = False) -> int | None:
        """The first of ``keys`` present, as an int (other types converted and reported;
        ``digits``: a string of decimal digits is converted without a report, as some
        conventions' writers record token counts: Semantic Kernel, OpenInference's Agno
        and Haystack instrumentations)."""
        key = next((k for k in keys if self.span.attributes.get(k) is not None), keys[0])
        value = self.span.attributes.get(key)
        if value is None or (isinstance(value, int) and not isinstance(value, bool)):
            return value
        try:
            converted = int(str(value).strip())
        except ValueError:
            self.report(f"{key} is {value!r}, not an integer; left out")
            return None
        if not (digits and isinstance(value, str) and value.isascii() and value.isdigit()):
            self.report(f"{key} is {type(value).__name__}, expected an int; converted")
        return converted

    def entity(self, entity: str, cls: str, content: Content | None) -> None:
        add = self.add
        add((entity, RDF_TYPE, cls))
        add((entity, RDF_TYPE, P.Entity))
        if content is None:
            return
        if content.text is not None and not self.span.content_withheld:
            add((entity, P.value, literal(content.text)))
        if content.sha256 is not None:
            add((entity, O.contentHash, literal(content.sha256)))
        if content.size is not None:
            add((entity, O.byteSize, integer(content.size)))
        if content.truncated:
            add((entity, O.truncated, boolean(True)))
        if content.blob is not None:
            add((entity, O.mediaType, literal(content.blob.media_type)))
            add((entity, O.contentLocation, iri(content.blob.location)))

    def generated(self, entity: str, activity: str, at_ns: int | None) -> None:
        self.add((entity, P.wasGeneratedBy, activity))
        if at_ns is not None:
            self.add((entity, P.generatedAtTime, datetime_from_ns(at_ns)))

    def agent(self, iri: str, cls: str, label: str) -> None:
        self.add((iri, RDF_TYPE, cls))
        self.add((iri, RDF_TYPE, P.SoftwareAgent))
        self.add((iri, RDF_TYPE, P.Agent))
        self.add((iri, RDFS_LABEL, literal(label)))


def as_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return json.dumps(list(value), ensure_ascii=False, default=str)
    return str(value)
