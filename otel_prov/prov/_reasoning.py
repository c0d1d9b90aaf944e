"""Reasoning a model gave as structured output: its goals, hypotheses, evidence, decision.

A model asked for a structured answer (LangChain's ``with_structured_output`` or
``create_agent(response_format=...)``, the OpenAI Agents SDK's ``output_type``, Pydantic
AI's ``output_type``) returns an object.  When that object has the fields of this schema,
its reasoning is recorded as the events :func:`otel_prov.decision` and its siblings
record (``docs/decisions.md`` documents the schema for users)::

    {
      "goals":      [{"id": str, "text": str, "parent": str | null}],
      "hypotheses": [{"id": str, "text": str, "confidence": float | null,
                      "goal": str | null}],
      "evidence":   [{"supports": str | null, "contradicts": str | null,
                      "tool_call": str | null, "document": str | null,
                      "hypothesis": str | null, "weight": float | null}],
      "decision":   {"id": str, "text": str, "confidence": float | null,
                     "adopts": [str], "goal": str | null}  (or only its text)
    }

It is one when it is an object (or the JSON text of one) with a ``decision`` or a
``hypotheses`` list; every other field of it (a reply to the customer, say) is left
alone.  Nothing is guessed from free text: an answer that is not such an object has no
reasoning.  An item missing its id gets one from its place (``h2``: the second
hypothesis, ``decision``); a hypothesis or goal given as a plain string is its text.
A value of the wrong type is passed on as it is, for the mapper to report.

Pure: shared by the capture API (``otel_prov.record_reasoning``, the instrumentors) and
the mapper (a self-traced framework's final result), so the schema is read in one place.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

from otel_prov import semconv as sc

__all__ = ["REASONING_FIELDS", "Stated", "name_of", "number_of", "structured_reasoning"]

REASONING_FIELDS = ("goals", "hypotheses", "evidence", "decision")
"""The fields of the schema, in the order their items are recorded."""

_PLACE_PREFIX = {"goals": "g", "hypotheses": "h"}
"""How an item without an id is named from its place: ``g1``, ``h2``."""


@dataclasses.dataclass(frozen=True, slots=True)
class Stated:
    """One goal, hypothesis, piece of evidence or decision, as its event records it:
    the event's name and its ``otel_prov.*`` attributes (the text, which is content,
    under ``otel_prov.reasoning.text``; ``None`` values left off)."""

    event: str
    attributes: Mapping[str, Any]


def structured_reasoning(value: Any) -> list[Stated] | None:
    """The reasoning in ``value`` (a mapping, or the JSON text of an object) when it is a
    structured output of the schema above, in the order goals, hypotheses, evidence,
    decision; ``None`` when it is not one."""
    if isinstance(value, (str, bytes)):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            return None
    if not isinstance(value, Mapping):
        return None
    hypotheses = value.get("hypotheses")
    decision = value.get("decision")
    if not (_items(hypotheses) is not None or isinstance(decision, (Mapping, str))):
        return None
    stated: list[Stated] = []
    for number, item in enumerate(_items(value.get("goals")) or [], start=1):
        fields = _fields(item)
        stated.append(
            _stated(
                sc.GOAL_EVENT,
                {
                    sc.OTEL_PROV_REASONING_ID: _id(fields, f"g{number}"),
                    sc.OTEL_PROV_REASONING_TEXT: fields.get("text"),
                    sc.OTEL_PROV_REASONING_GOAL: name_of(fields.get("parent")),
                },
            )
        )
    for number, item in enumerate(_items(hypotheses) or [], start=1):
        fields = _fields(item)
        stated.append(
            _stated(
                sc.HYPOTHESIS_EVENT,
                {
                    sc.OTEL_PROV_REASONING_ID: _id(fields, f"h{number}"),
                    sc.OTEL_PROV_REASONING_TEXT: fields.get("text"),
                    sc.OTEL_PROV_REASONING_CONFIDENCE: number_of(fields.get("confidence")),
                    sc.OTEL_PROV_REASONING_GOAL: name_of(fields.get("goal")),
                },
            )
        )
    for item in _items(value.get("evidence")) or []:
        fields = _fields(item)
        stated.append(
            _stated(
                sc.EVIDENCE_EVENT,
                {
                    sc.OTEL_PROV_EVIDENCE_SUPPORTS: name_of(fields.get("supports")),
                    sc.OTEL_PROV_EVIDENCE_CONTRADICTS: name_of(fields.get("contradicts")),
                    sc.OTEL_PROV_EVIDENCE_TOOL_CALL_ID: name_of(fields.get("tool_call")),
                    sc.OTEL_PROV_EVIDENCE_DOCUMENT_ID: name_of(fields.get("document")),
                    sc.OTEL_PROV_EVIDENCE_HYPOTHESIS_ID: name_of(fields.get("hypothesis")),
                    sc.OTEL_PROV_EVIDENCE_WEIGHT: number_of(fields.get("weight")),
                },
            )
        )
    if isinstance(decision, (Mapping, str)):
        fields = _fields(decision)
        adopts = fields.get("adopts")
        adopted = [adopts] if isinstance(adopts, str) else _items(adopts) or []
        stated.append(
            _stated(
                sc.DECISION_EVENT,
                {
                    sc.OTEL_PROV_REASONING_ID: _id(fields, "decision"),
                    sc.OTEL_PROV_REASONING_TEXT: fields.get("text"),
                    sc.OTEL_PROV_REASONING_CONFIDENCE: number_of(fields.get("confidence")),
                    sc.OTEL_PROV_DECISION_ADOPTS: [str(name) for name in adopted] or None,
                    sc.OTEL_PROV_REASONING_GOAL: name_of(fields.get("goal")),
                },
            )
        )
    return stated


def _stated(event: str, attributes: Mapping[str, Any]) -> Stated:
    return Stated(event, {key: value for key, value in attributes.items() if value is not None})


def _items(value: Any) -> list[Any] | None:
    """A list field's items; ``None`` when it is no list (text is no list of letters)."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    return None


def _fields(item: Any) -> Mapping[str, Any]:
    """An item's fields: an object's, or a plain value as the item's text."""
    if isinstance(item, Mapping):
        return item
    return {"text": item} if item is not None else {}


def _id(fields: Mapping[str, Any], place: str) -> str:
    name = name_of(fields.get("id"))
    return name if name else place


def name_of(value: Any) -> str | None:
    """An id as text (``None``, and an empty one, are none)."""
    if value is None or isinstance(value, bool):
        return None
    text = str(value)
    return text or None


def number_of(value: Any) -> float | str | None:
    """A confidence or weight as recorded: a number as a float, anything else as its text
    (the mapper reports what is not a number from 0 to 1: what was given is not lost)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return value if value is None or isinstance(value, str) else str(value)
