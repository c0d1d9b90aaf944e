"""The documents a retrieval span records, in every convention that records them.

Where each convention puts them is its :class:`~otel_prov.prov._conventions.Convention`'s
``documents`` (one attribute per field, by pattern) and ``document_lists`` (one JSON
list); this module reads those into :class:`RetrievedDocument` values, for the span tree
(``_span_tree``) and the mapper.  Pure functions of attributes.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from otel_prov.prov._conventions import CONVENTIONS

__all__ = ["RetrievedDocument", "retrieved_documents"]


@dataclasses.dataclass(frozen=True, slots=True)
class RetrievedDocument:
    """One document (or chunk) a retrieval returned, as its convention recorded it."""

    index: int
    """Its 0-based position in the result."""
    fields: Mapping[str, Any]
    """``id``, ``score``, ``source``, ``metadata`` (JSON text), ``content`` as recorded."""
    keys: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Field -> the attribute it was read from (none for a document of a JSON list)."""
    content_key: str | None = None
    """The attribute holding its text, or that would have held it when only its size and
    hash were kept (None: the text, if any, is in ``fields``), so that the mapper reads it
    as any content attribute: blob, truncation, size and hash."""

    @property
    def source(self) -> str | None:
        """The document it was taken from: its ``source`` field, else its metadata's
        ``source`` or ``url`` (LangChain loaders and OpenInference put it there)."""
        source = self.fields.get("source")
        if isinstance(source, str) and source:
            return source
        metadata = self.fields.get("metadata")
        try:
            parsed = json.loads(metadata) if isinstance(metadata, str) else None
        except (ValueError, RecursionError):  # not JSON, or nested too deep to parse
            return None
        for key in ("source", "url"):
            value = parsed.get(key) if isinstance(parsed, dict) else None
            if isinstance(value, str) and value:
                return value
        return None


def retrieved_documents(attributes: Mapping[str, Any]) -> list[RetrievedDocument]:
    """The documents a retrieval span records, in the order of the result, from the first
    convention that records any: flattened per-field attributes, else a JSON list."""
    for convention in CONVENTIONS:
        found: dict[int, dict[str, Any]] = {}
        keys: dict[int, dict[str, str]] = {}
        content_keys: dict[int, str] = {}
        for key, value in attributes.items():
            for pattern in convention.documents:
                match = pattern.fullmatch(key)
                if match is None:
                    continue
                index, field = int(match["index"]), match["field"]
                found.setdefault(index, {})[field] = value
                keys.setdefault(index, {})[field] = key
                if field in ("content", "size", "sha256"):
                    # The content's own key, also when only its size and hash were kept.
                    start, end = match.span("field")
                    content_keys[index] = f"{key[:start]}content{key[end:]}"
        if found:
            return [
                RetrievedDocument(index, found[index], keys[index], content_keys.get(index))
                for index in sorted(found)
            ]
        for key in convention.document_lists:
            documents = _document_list(attributes.get(key))
            if documents:
                return documents
    return []


def _document_list(value: Any) -> list[RetrievedDocument]:
    """GenAI's ``gen_ai.retrieval.documents``, a JSON list of ``{"id", "score", ...}``, or
    OpenLLMetry's ``{"documents": [{"page_content", "metadata"}, ...]}``."""
    try:
        parsed = json.loads(value) if isinstance(value, str) else None
    except (ValueError, RecursionError):
        return []
    if isinstance(parsed, dict):
        parsed = parsed.get("documents")
    documents = []
    for index, item in enumerate(parsed if isinstance(parsed, list) else []):
        if not isinstance(item, dict):
            continue
        fields = {k: item[k] for k in ("id", "score", "source", "content") if k in item}
        if "content" not in fields and "page_content" in item:
            fields["content"] = item["page_content"]
        metadata = item.get("metadata")
        if isinstance(metadata, dict):
            fields["metadata"] = json.dumps(metadata, ensure_ascii=False, sort_keys=True)
        documents.append(RetrievedDocument(index, fields))
    return documents
